"""Argument checks of the audio filters and effects, worded as MindSpore words them."""
from __future__ import annotations

from typing import Any

from headrace._util.checks import INT32_MAX, check_range, check_type

__all__ = ["FLOAT_MAX", "INT32_MIN", "check_coeffs", "check_enum", "check_float", "check_int",
           "check_nonzero_rate", "check_rate", "check_bool"]

FLOAT_MAX = 16777216  # 2 ** 24: MindSpore's bound on float arguments of the audio ops
INT32_MIN = -2**31
_FI = (float, int)


def check_float(value: Any, name: str, lo: float = -FLOAT_MAX, hi: float = FLOAT_MAX, *,
                left_open: bool = False, types: tuple[type, ...] = _FI) -> float:
    """A float or int (never a bool) in [lo, hi] (``(lo, hi]`` with ``left_open``); NaN passes the
    range, as in MindSpore. Returns it as a float."""
    check_type(value, types, name)
    check_range(value, (lo, hi), name, left_open=left_open)
    return float(value)


def check_int(value: Any, name: str, lo: int = 0, hi: int = INT32_MAX) -> int:
    """A Python int (never a bool, nor a NumPy integer) in [lo, hi]."""
    check_type(value, int, name)
    check_range(value, (lo, hi), name)
    return int(value)


def check_nonzero_rate(value: Any, name: str = "sample_rate") -> int:
    """A non-zero int32 (MindSpore's sample-rate check of the biquad filters)."""
    check_type(value, int, name)
    if value == 0 or not INT32_MIN <= value <= INT32_MAX:
        raise ValueError(f"Input {name} is not within the required interval of [{INT32_MIN}, 0) and "
                         f"(0, {INT32_MAX}].")
    return int(value)


def check_rate(value: Any, name: str = "sample_rate") -> int:
    """A positive int32 sample rate."""
    return check_int(value, name, 1, INT32_MAX)


def check_bool(value: Any, name: str) -> bool:
    check_type(value, bool, name)
    return bool(value)


def check_enum(value: Any, enum_type: type, name: str) -> Any:
    check_type(value, enum_type, name)
    return value


def check_coeffs(a_coeffs: Any, b_coeffs: Any) -> tuple[list[float], list[float]]:
    """LFilter's and Filtfilt's coefficient lists: lists or tuples of floats within MindSpore's
    bound, of one length."""
    out = []
    for name, coeffs in (("a_coeffs", a_coeffs), ("b_coeffs", b_coeffs)):
        check_type(coeffs, (list, tuple), name)
        out.append([check_float(c, f"{name}[{i}]") for i, c in enumerate(coeffs)])
    if len(out[0]) != len(out[1]):
        raise ValueError("The size of a_coeffs should be the same as that of b_coeffs.")
    return out[0], out[1]
