"""Argument checks with the messages MindSpore's transforms give (same words, same order of checks).

Type errors come from ``headrace._util.checks.check_type``, the one place that words them for the
whole API (for example ``Argument prob with value a is not of type [<class 'float'>, <class 'int'>],
but got <class 'str'>.``). Constructors call these once; nothing here runs per sample.
"""
from __future__ import annotations

from typing import Any, Sequence

from headrace._util.checks import check_range, check_type as type_check

UINT8_MAX = 255
INT32_MIN, INT32_MAX = -2**31, 2**31 - 1
INT64_MAX = 2**63 - 1
UINT32_MAX = 2**32 - 1
FLOAT_MAX_INTEGER = 16777216
FLOAT_MIN_INTEGER = -16777216


def type_check_list(values: Any, types: tuple, name: str) -> None:
    """Checks that ``values`` is a list/tuple whose items are all of ``types`` (``name[i]``)."""
    type_check(values, (list, tuple), name)
    for i, v in enumerate(values):
        type_check(v, types, f"{name}[{i}]")


def check_ordered_range(values: Sequence[Any], bounds: Sequence[Any], name: str = "") -> None:
    """ValueError unless ``bounds[0] <= values[0] <= values[1] <= bounds[1]``."""
    if not bounds[0] <= values[0] <= values[1] <= bounds[1]:
        label = f"{name} " if name else ""
        raise ValueError(f"Input {label}is not within the required interval of [{bounds[0]}, {bounds[1]}].")


def check_positive(value: Any, name: str = "") -> None:
    if value <= 0:
        label = f"{name} " if name else ""
        raise ValueError(f"Input {label}must be greater than 0.")


def check_uint8(value: Any, name: str = "") -> None:
    type_check(value, (int,), name)
    check_range(value, (0, UINT8_MAX), name)


def check_float32(value: Any, name: str = "") -> None:
    type_check(value, (float, int), name)
    check_range(value, (FLOAT_MIN_INTEGER, FLOAT_MAX_INTEGER), name)


def check_non_negative_float32(value: Any, name: str = "") -> None:
    type_check(value, (float, int), name)
    check_range(value, (0, FLOAT_MAX_INTEGER), name)


def check_pos_float32(value: Any, name: str = "") -> None:
    type_check(value, (float, int), name)
    check_range(value, (0, FLOAT_MAX_INTEGER), name, left_open=True)


def check_prob(prob: Any, name: str = "prob") -> float:
    """A probability in [0, 1] (int or float), MindSpore's wording; returns it as a float."""
    type_check(prob, (float, int), name)
    check_range(prob, (0.0, 1.0), name)
    return float(prob)


def check_2tuple(value: Any, name: str) -> None:
    if not (isinstance(value, tuple) and len(value) == 2):
        raise ValueError(f"Value {name} needs to be a 2-tuple.")

