"""Turning the values user code produces into the NumPy arrays a pipeline carries, and allocating
the large ones a pipeline makes (batches) where frameworks can use them without a copy."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

_ndarray = np.ndarray
ALIGN = 64            # bytes: the alignment XLA's CPU client needs to use host memory as it is
ALIGN_FROM = 1 << 20  # arrays of at least this many bytes are allocated aligned


def empty_aligned(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """``np.empty(shape, dtype)``, starting on an ``ALIGN``-byte boundary when it holds at least
    ``ALIGN_FROM`` bytes (smaller ones are plain ``np.empty``).

    NumPy's large arrays start 16 bytes into a page (the allocator's header). ``jax.device_put`` on
    a CPU device uses a 64-byte aligned array as it is and copies any other: W2's 77 MB batch took
    3 ms aligned against 70 ms unaligned (2026-11-27). The array is a view of a slightly larger
    buffer (``base``); it is writeable and C-contiguous.
    """
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize  # (math.prod: np.prod costs 6 us a call)
    if nbytes < ALIGN_FROM:
        return np.empty(shape, dtype)
    buf = np.empty(nbytes + ALIGN, np.uint8)
    start = -buf.ctypes.data % ALIGN
    return buf[start:start + nbytes].view(dtype).reshape(shape)


def to_array(value: Any) -> np.ndarray | dict:
    """Converts one column value with MindSpore's rules (as under NumPy 1).

    int -> int64, float -> float64, bool -> bool, str -> '<U', bytes -> '|S', list/tuple -> array,
    NumPy scalar -> 0-d array of its dtype, PIL image -> HWC uint8 array, ndarray -> itself,
    dict -> itself (a Python object column).
    """
    if type(value) is _ndarray:
        return value
    if isinstance(value, _ndarray):  # subclasses (our Tensor) become plain arrays
        return value.view(_ndarray)
    if isinstance(value, bool):
        return np.array(value, dtype=np.bool_)
    if isinstance(value, int):
        return np.array(value, dtype=np.int64)
    if isinstance(value, float):
        return np.array(value, dtype=np.float64)
    if isinstance(value, (str, bytes, np.generic)):
        return np.array(value)
    if isinstance(value, dict):
        return value  # a dict travels as one Python object column (map functions read it)
    if hasattr(value, "asnumpy"):
        return np.asarray(value.asnumpy())
    if hasattr(value, "getbands") and hasattr(value, "mode"):  # PIL image, without importing PIL
        return np.asarray(value)
    if isinstance(value, (list, tuple)):
        arr = np.array(value)
        if arr.dtype == np.int32 and _all_python_ints(value):
            arr = arr.astype(np.int64)  # NumPy 1 on Windows-like platforms picks int32; keep int64
        return arr
    arr = np.asarray(value)
    if arr.dtype == object:
        raise TypeError(f"cannot convert a value of type {type(value).__name__} to a NumPy array of "
                        "numbers, strings or bytes")
    return arr


def _all_python_ints(value: Any) -> bool:
    return all(isinstance(v, int) or (isinstance(v, (list, tuple)) and _all_python_ints(v)) for v in value)

