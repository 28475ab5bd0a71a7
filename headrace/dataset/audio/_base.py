"""Base of the audio operations.

An audio op subclasses :class:`AudioTensorOperation`: MindSpore's eager input rule (a NumPy array
only, anything else is a ``TypeError``; exactly one input), and the input checks its C++ kernels
share, worded as MindSpore words them (:func:`require_float`, :func:`require_rank`). Failures while
running raise ``RuntimeError("<op>: <detail>")`` (:func:`op_error`); the engine's ``map`` adds the
op, column and sample around it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from headrace._util.errors import kernel_error
from headrace.dataset.transforms._base import Implementation, TensorOperation, returns_contiguous
from headrace.dataset.transforms._cast import type_name

__all__ = ["AudioTensorOperation", "as_float", "op_error", "require_float", "require_numeric", "require_rank"]

_ONE_TO_ONE = "The op is OneToOne, can only accept one tensor as input."
_NO_DATA = "Input Tensor has no data."


def op_error(op: str, detail: str) -> RuntimeError:
    """``RuntimeError("<op>: <detail>")`` for an input an op refuses; a map reports it as MindSpore
    reports its C++ ops' failures ("map operation: [Op] failed. <op>: <detail>")."""
    return kernel_error(f"{op}: {detail}")


def require_float(x: np.ndarray, op: str) -> None:
    """Raises ``op_error`` unless ``x`` holds floats (float16, float32 or float64)."""
    if x.dtype.kind != "f":
        raise op_error(op, "the data type of input tensor does not match the requirement of operator. "
                           f"Expecting tensor in type of [float, double]. But got type {type_name(x.dtype)}.")


def require_rank(x: np.ndarray, op: str, rank: int = 1, layout: str = "<..., time>") -> None:
    """Raises ``op_error`` unless ``x`` has at least ``rank`` dimensions."""
    if x.ndim < rank:
        raise op_error(op, f"the shape of input tensor does not match the requirement of operator. "
                           f"Expecting tensor in shape of {layout}. But got tensor with dimension {x.ndim}.")


class AudioTensorOperation(TensorOperation):
    """Base of audio ops: one NumPy array in, one out; ``_run(x)`` does the work.

    An empty array is refused before ``_run`` (MindSpore: "Input Tensor has no data."), and so is
    a 0-d one (MindSpore's rank error, naming the op and ``layout``).
    """

    implementation = Implementation.C
    layout = "<..., time>"  # the input shape named in the rank error

    @returns_contiguous  # TensorOperation.__call__ makes the array contiguous
    def __call__(self, *args: Any) -> Any:
        for a in args:
            if not isinstance(a, np.ndarray):
                raise TypeError(f"Input should be NumPy audio, got {type(a)}.")
        if len(args) > 1:
            raise RuntimeError(_ONE_TO_ONE)
        if args and args[0].size == 0:
            raise RuntimeError(_NO_DATA)
        if args and args[0].ndim == 0:
            require_rank(args[0], self.op_name, 1, self.layout)
        return TensorOperation.__call__(self, *args)


def require_numeric(x: np.ndarray, op: str) -> None:
    """Raises ``op_error`` unless ``x`` holds numbers (bools, ints or floats; no strings)."""
    if x.dtype.kind not in "biuf":
        raise op_error(op, "the data type of input tensor does not match the requirement of operator. "
                           f"Expecting tensor in type of [int, float, double]. But got type {type_name(x.dtype)}.")


def as_float(x: np.ndarray) -> np.ndarray:
    """``x`` as MindSpore's sample-wise audio ops compute it: float64 stays, anything else
    (integers, float16) becomes float32."""
    return x if x.dtype == np.float64 or x.dtype == np.float32 else x.astype(np.float32)
