"""A map with ops marked ``.device("GPU")``: the part its workers run.

``compose_operations`` gives such a map a :class:`DeviceSplit` instead of a plain chain. In the
worker, per sample and under the sample's RNG key, it runs the CPU ops before the first GPU op,
then asks each GPU op for its device steps (``op._device_plan(shape)``, or for the decoding ops
``op._device_decode_plan(height, width)`` from the JPEG header): each op draws its random
parameters there with the same calls, in the same order, as its CPU kernel would, so the crop
windows and flips equal the CPU path's. The result is a ``DeviceWork`` (``headrace/_image/device.py``)
that the engine's GPU stage (``headrace/_engine/device_stage.py``) decodes and transforms per batch.

An input a device decoder does not take (PNG, progressive JPEG, ...; see ``device.jpeg_kind``) runs
the same ops on the CPU in the worker, from the same point of the sample's random stream, and
travels as a finished image with the reason of its fallback.

The ops after the first GPU op must all run on the GPU (or be layout ops the GPU stage applies:
``HWC2CHW``), since the stage runs after them.
"""
from __future__ import annotations

import copy
from typing import Any, Callable, Sequence

import numpy as np

from headrace._image import decode as dec
from headrace._image import device
from headrace._util.errors import PipelineError, user_error
from headrace._util.rng import get_sample_key
from headrace.dataset.transforms._fusion import fuse_ops

__all__ = ["DeviceSplit", "has_gpu_ops"]


def has_gpu_ops(operations: Sequence[Any]) -> bool:
    """Whether any of a map's operations (or of a ``Compose`` among them) is marked ``.device("GPU")``."""
    for op in operations:
        if getattr(op, "device_target", None) == "GPU":
            return True
        inner = getattr(op, "transforms", None)
        if isinstance(inner, (list, tuple)) and has_gpu_ops(inner):
            return True
    return False


def _name(op: Any) -> str:
    return type(op).__name__


class DeviceSplit:
    """The worker side of a map with GPU ops: ``(*columns) -> 0-d object array holding a DeviceWork``.

    Attributes:
        device_ops: the names of the ops the GPU stage runs (the engine's mark of a split map).
        chained_ops: every op of the map (the engine asks whether any runs user code).
    """

    def __init__(self, operations: Sequence[Any], chain: Callable[[tuple, list[str]], Callable]) -> None:
        ops = list(fuse_ops(operations, reduced_decode=False))
        first = next(i for i, op in enumerate(ops) if getattr(op, "device_target", None) == "GPU")
        gpu = ops[first:]
        for op in gpu:
            if getattr(op, "device_target", None) != "GPU" and not getattr(op, "device_follows", False):
                raise ValueError(
                    f"map: {_name(op)} follows {_name(gpu[0])}, which runs on the GPU, but does not run on "
                    f"the GPU itself; mark it .device('GPU') too, or move it to a map of its own after the "
                    f"batch (the GPU stage runs after the map's other ops).")
        decoders = [op for op in gpu if hasattr(op, "_device_decode_plan")]
        if decoders and decoders[0] is not gpu[0]:
            raise ValueError(f"map: {_name(decoders[0])} on the GPU must be the map's first GPU op, but "
                             f"{_name(gpu[0])} comes before it.")
        self.cpu = chain(tuple(ops[:first]), [_name(op) for op in ops[:first]]) if first else None
        self.gpu = tuple(gpu)
        self.names = tuple(_name(op) for op in gpu)
        self.device_ops = tuple(n for op, n in zip(gpu, self.names) if getattr(op, "device_target", None) == "GPU")
        twins = []
        for op in gpu:  # the same ops on the CPU, for the inputs a device decoder refuses
            twin = copy.copy(op)
            if getattr(twin, "device_target", None) == "GPU":
                twin.device_target = "CPU"
            twins.append(twin)
        twins = list(fuse_ops(twins, reduced_decode=False))
        self.fallback = chain(tuple(twins), [_name(op) for op in twins])
        self.chained_ops = tuple(operations)

    def __call__(self, *args: Any) -> np.ndarray:
        x: Any = self.cpu(*args) if self.cpu is not None else (args[0] if len(args) == 1 else args)
        if type(x) is tuple:
            raise PipelineError(f"map operation: [{self.names[0]}]",
                                f"the GPU ops take one image, but the map gives them {len(x)} inputs.")
        key = get_sample_key()
        index = key[3] if key is not None and len(key) > 3 else None
        out = np.empty((), dtype=object)
        out[()] = self._plan(x, index)
        return out

    def _plan(self, x: Any, index: int | None) -> device.DeviceWork:
        steps: list[tuple] = []
        ops = self.gpu
        i = 0
        try:
            if hasattr(ops[0], "_device_decode_plan"):
                buf = dec.encoded_bytes(x, self.names[0])
                kind, size = device.jpeg_kind(buf)
                if size is None:
                    return device.DeviceWork(None, (), result=self.fallback(x), fallback=kind, index=index)
                first, shape = ops[0]._device_decode_plan(*size)
                steps.extend(first)
                source: Any = bytes(buf)
                i = 1
            else:
                source = np.ascontiguousarray(x) if isinstance(x, np.ndarray) else np.asarray(x)
                shape = source.shape
            for i in range(i, len(ops)):
                more, shape = ops[i]._device_plan(shape)
                steps.extend(more)
        except PipelineError:
            raise
        except Exception as e:
            raise user_error(f"map operation: [{self.names[i]}]", e) from e
        return device.DeviceWork(source, tuple(steps), index=index)

    def __repr__(self) -> str:
        return f"DeviceSplit({', '.join(self.names)})"
