"""Value casts with the results MindSpore's C++ kernels give (x86-64, GCC).

NumPy leaves float-to-integer casts of out-of-range values undefined (and warns); MindSpore's
kernels do what ``static_cast`` compiles to on x86-64: truncate toward zero, with targets up to 32
bits going through a 32-bit conversion and the rest through a 64-bit one, where an out-of-range or
NaN value becomes the "integer indefinite" (the minimum int). The result is then wrapped to the
target width. ``TypeCast``, ``Fill``, ``Mask`` and ``PadEnd`` cast through :func:`c_cast` so they
agree with MindSpore bit for bit.
"""
from __future__ import annotations

import numpy as np

_I32_MIN, _I32_MAX = -2.0**31, 2.0**31 - 1
_I64_LIM = 2.0**63
_NARROW = {np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32)}


def type_name(dtype: np.dtype) -> str:
    """MindSpore's name of a dtype in messages: int32, float64, bool, string, bytes."""
    if dtype.kind == "U":
        return "string"
    if dtype.kind == "S":
        return "bytes"
    if dtype.kind == "b":
        return "bool"
    return dtype.name


def _trunc_to_int64(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    t = np.trunc(x)
    valid = (t >= lo) & (t <= hi)
    return np.where(valid, t, lo).astype(np.int64)


def c_cast(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Casts a numeric or bool array to a numeric or bool ``dtype`` as MindSpore's kernels do."""
    if a.dtype == dtype:
        return a
    if a.dtype.kind != "f" or dtype.kind not in "iu":
        with np.errstate(over="ignore", invalid="ignore"):
            return a.astype(dtype)
    x = a.astype(np.float64)
    if dtype in _NARROW:
        return _trunc_to_int64(x, _I32_MIN, _I32_MAX).astype(dtype)
    if dtype != np.uint64:  # int64, uint32: the 64-bit conversion
        return _trunc_to_int64(x, -_I64_LIM, _I64_LIM - 1024).astype(dtype)
    big = x >= _I64_LIM
    low = _trunc_to_int64(np.where(big, 0.0, x), -_I64_LIM, _I64_LIM - 1024)
    high = _trunc_to_int64(np.where(big, x - _I64_LIM, 0.0), -_I64_LIM, _I64_LIM - 1024) ^ np.int64(-2**63)
    return np.where(big, high, low).view(np.uint64)

