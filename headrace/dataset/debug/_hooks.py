"""Debug hooks: objects a map in debug mode calls before its first operation and after each
operation, with the data flowing between them (MindSpore's ``mindspore.dataset.debug``)."""
from __future__ import annotations

import abc
import collections.abc
import copy
import types
from typing import Any, Sequence

import numpy as np

__all__ = ["DebugHook", "PrintDataHook", "PrintMetaDataHook", "insert_hooks", "op_name"]


class DebugHook(abc.ABC):
    """Base of debug hooks. A subclass defines ``compute``; put a breakpoint there (debug mode
    runs the pipeline in the thread that reads it, so ``pdb`` works) or print what you need.

    ``ds.config.set_debug_mode(True, debug_hook_list=[MyHook()])`` puts a copy of each hook before a
    map's first operation and after each of its operations; a hook may also be written into a
    map's operations by hand (debug mode only). A hook passes the data on unchanged.

    Args:
        prev_op_name (str, optional): the operation whose input or output the hook sees; the
            pipeline sets it. Default: None.

    Examples:
        >>> import headrace.dataset as ds
        >>> from headrace.dataset import debug
        >>> class Shapes(debug.DebugHook):
        ...     def compute(self, *args):
        ...         print([getattr(c, "shape", None) for c in args[0]])
        ...         return args
    """

    def __init__(self, prev_op_name: str | None = None) -> None:
        self.prev_op_name = prev_op_name
        self.is_first_op: bool | None = None

    def __call__(self, *args: Any) -> tuple:
        if self.prev_op_name:
            side = "INPUT" if self.is_first_op else "OUTPUT"
            print(f"[Dataset debugger] Print the [{side}] of the operation [{self.prev_op_name}].", flush=True)
        self.compute(args)
        return args

    @abc.abstractmethod
    def compute(self, *args: Any) -> Any:
        """What the hook does; ``args[0]`` is the tuple of columns (the data between two operations)."""
        raise RuntimeError("compute() is not overridden in subclass of class DebugHook.")

    def set_previous_op_name(self, prev_op_name: str | None) -> None:
        self.prev_op_name = prev_op_name

    def set_is_first(self, is_first_op: bool) -> None:
        self.is_first_op = is_first_op


def _pil_image(col: Any) -> bool:
    return type(col).__module__.startswith("PIL.") and hasattr(col, "size") and hasattr(col, "mode")


class PrintMetaDataHook(DebugHook):
    """Prints each column's dtype and shape (arrays), type and size (PIL images, sized objects).
    The default hook of debug mode."""

    def compute(self, *args: Any) -> Any:
        for i, col in enumerate(args[0]):
            text = f"Column {i}. "
            if isinstance(col, np.ndarray):
                text += f"The dtype is [{col.dtype}]. The shape is [{col.shape}]."
            elif _pil_image(col):
                text += f"The type is [{type(col)}]. The shape is [{col.size}]."
            elif isinstance(col, collections.abc.Sized):
                text += f"The type is [{type(col)}]. The size is [{len(col)}]."
            print(text, flush=True)
        return args


class PrintDataHook(DebugHook):
    """Prints each column's data (a PIL image as its array)."""

    def compute(self, *args: Any) -> Any:
        for i, col in enumerate(args[0]):
            data = np.asarray(col) if _pil_image(col) else col
            print(f"Column {i}. The data is [{data}].", flush=True)
        return args


def op_name(op: Any) -> str:
    """The name a hook prints for ``op``: a function's name (``<lambda>``), else its class name."""
    if isinstance(op, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return op.__name__
    return type(op).__name__


def _copies(hooks: Sequence[DebugHook], prev: str, first: bool) -> list[DebugHook]:
    out = []
    for hook in hooks:
        h = copy.deepcopy(hook)  # each point gets its own copy: a hook may keep state per point
        h.set_previous_op_name(prev)
        h.set_is_first(first)
        out.append(h)
    return out


def insert_hooks(operations: Sequence[Any], hooks: Sequence[DebugHook]) -> list[Any]:
    """``operations`` with copies of ``hooks`` before the first and after each operation; a hook
    the user wrote into the operations learns the name of the operation before it."""
    prev: Any = None
    for op in operations:
        if isinstance(op, DebugHook):
            if prev is not None:
                op.set_previous_op_name(op_name(prev))
        else:
            prev = op
    out = _copies(hooks, op_name(operations[0]), True)
    for op in operations:
        out.append(op)
        out += _copies(hooks, op_name(op), False)
    return out
