"""A map's operations as one picklable callable: fused where ops allow it (``fuse_ops``), then
chained so that a tuple result feeds the next op as arguments and a failure names the op."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from headrace._util.errors import PipelineError, user_error
from headrace.dataset.transforms._device_split import DeviceSplit, has_gpu_ops
from headrace.dataset.transforms._fusion import fuse_ops

__all__ = ["compose_operations", "op_display_name", "run_chain"]


def compose_operations(operations: Sequence[Callable]) -> tuple[Callable, str]:
    """One callable running ``operations`` in order (a tuple result feeds the next as arguments)."""
    if has_gpu_ops(operations):  # split: the workers draw, the GPU stage decodes (_device_split.py)
        return DeviceSplit(operations, run_chain), "map operation: [" + ", ".join(
            op_display_name(op) for op in operations) + "]"
    # Exact fusions only (e.g. Normalize+HWC2CHW, Decode+RandomResizedCrop at full scale): the output
    # equals the unfused chain's. RandomCropDecodeResize is the op that decodes at reduced scale.
    ops = tuple(fuse_ops(operations, reduced_decode=False))
    names = [op_display_name(op) for op in ops]
    return run_chain(ops, names), "map operation: [" + ", ".join(op_display_name(op) for op in operations) + "]"


def op_display_name(op: Any) -> str:
    if hasattr(op, "__self__") or type(op).__name__ in ("function", "builtin_function_or_method", "partial"):
        return "PyFunc"
    return type(op).__name__


def run_chain(ops: tuple[Callable, ...], names: list[str]) -> Callable:
    """One callable applying ``ops`` in order; a tuple result feeds the next op as arguments.

    A failure names the op of the chain that raised (the map op adds columns and index).
    """
    if len(ops) == 1:
        return ops[0]
    return _Chain(tuple(ops), tuple(names))


class _Chain:
    """Picklable (with cloudpickle where the ops need it) sequence of operations."""

    __slots__ = ("ops", "names")

    def __init__(self, ops: tuple[Callable, ...], names: tuple[str, ...]) -> None:
        self.ops = ops
        self.names = names

    @property
    def chained_ops(self) -> tuple[Callable, ...]:
        """The operations, for the engine (which asks whether any of them runs user code)."""
        return self.ops

    @property
    def write_into(self) -> Callable[..., Any] | None:
        """The chain with its last op writing into ``out`` (``write_into(*args, out=array)``, for
        the engine's batch), when that op can (it has a ``write_into`` of its own); else None."""
        return self._write_into if getattr(self.ops[-1], "write_into", None) is not None else None

    def __call__(self, *args: Any) -> Any:
        return self._apply(args, None)

    def _write_into(self, *args: Any, out: Any) -> Any:
        return self._apply(args, out)

    def _apply(self, args: tuple, into: Any) -> Any:
        last = len(self.ops) - 1
        for i, (op, name) in enumerate(zip(self.ops, self.names)):
            try:
                out = op(*args) if into is None or i < last else op.write_into(*args, out=into)
            except PipelineError:
                raise
            except Exception as e:
                raise user_error(f"map operation: [{name}]", e) from e
            args = out if type(out) is tuple else (out,)
        return args if len(args) != 1 else args[0]
