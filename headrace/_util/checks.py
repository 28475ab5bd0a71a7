"""Argument checks for the public surface.

Every check raises ``TypeError`` for a value of the wrong kind and ``ValueError`` for a bad
value, and names the parameter and what it accepts, in the wording MindSpore users know.
"""
from __future__ import annotations

import numbers
import os
from typing import Any, Sequence

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
UINT32_MAX = 2**32 - 1


def shown(value: Any) -> Any:
    """A value as MindSpore prints it in argument errors (its str; the empty string as "")."""
    return '""' if isinstance(value, str) and value == "" else value


def check_type(value: Any, types: type | tuple[type, ...], name: str) -> None:
    """Raises TypeError unless ``value`` is an instance of ``types``; a bool never passes as an int.

    The text is MindSpore's: ``Argument x with value 1 is not of type [<class 'str'>], but got
    <class 'int'>.`` (a bool refused as an int shows the accepted types as a tuple, as there).
    """
    types = types if isinstance(types, tuple) else (types,)
    if isinstance(value, bool) and int in types and bool not in types:
        raise TypeError(f"Argument {name} with value {shown(value)} is not of type {types}, "
                        f"but got {type(value)}.")
    if not isinstance(value, types):
        raise TypeError(f"Argument {name} with value {shown(value)} is not of type {list(types)}, "
                        f"but got {type(value)}.")


def check_int(value: Any, name: str) -> int:
    """Checks that ``value`` is an integer (NumPy integers too, never a bool); returns a Python int."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        check_type(value, int, name)
    return int(value)


def check_range(value: Any, bounds: Sequence[float], name: str = "", *, left_open: bool = False,
                right_open: bool = False) -> None:
    """Raises ValueError unless ``bounds[0] <= value <= bounds[1]`` (ends open as asked).

    Example:
        >>> check_range(0, (1, 5), "count")
        Traceback (most recent call last):
            ...
        ValueError: Input count is not within the required interval of [1, 5].
    """
    lo, hi = bounds[0], bounds[1]
    bad = value < lo or value > hi or (left_open and value == lo) or (right_open and value == hi)
    if bad:
        left, right = "(" if left_open else "[", ")" if right_open else "]"
        label = f"{name} " if name else ""
        raise ValueError(f"Input {label}is not within the required interval of {left}{lo}, {hi}{right}.")


def check_pos_int32(value: Any, name: str = "", *, allow_zero: bool = False, exact_int: bool = False) -> int:
    """Checks a positive (or, with ``allow_zero``, non-negative) int32; returns it as a Python int.

    ``exact_int`` accepts only Python ints, as MindSpore's transforms do (the dataset API also takes
    NumPy integers).
    """
    if exact_int:
        check_type(value, int, name)
    value = check_int(value, name)
    check_range(value, (0 if allow_zero else 1, INT32_MAX), name)
    return value


WORKERS_PER_CPU = 4   # more workers than CPUs is allowed (with a warning) up to this many per CPU,
MIN_WORKER_LIMIT = 64  # and up to this many on any machine


def max_workers() -> int:
    """The most workers one op may ask for here: ``max(64, 4 x CPUs)``.

    MindSpore refuses more workers than CPUs; headrace allows more (code written for a bigger
    machine runs) but not so many that starting them exhausts the process's threads or memory.
    """
    return max(MIN_WORKER_LIMIT, WORKERS_PER_CPU * (os.cpu_count() or 1))


def too_many_workers(value: int, name: str = "num_parallel_workers") -> ValueError:
    """The error for a worker count above :func:`max_workers`: the parameter, the limit, the fix."""
    limit, cpus = max_workers(), os.cpu_count() or 1
    return ValueError(f"{name} exceeds the boundary between 1 and {limit}: got {value}. headrace starts "
                      f"at most {limit} workers per op on this machine ({WORKERS_PER_CPU} per CPU, "
                      f"{cpus} CPUs, at least {MIN_WORKER_LIMIT}); use a value between 1 and {limit} - "
                      f"the number of CPUs ({cpus}) is usually the fastest.")


def check_num_parallel_workers(value: Any, name: str = "num_parallel_workers") -> int | None:
    """Validates a worker count: 1 to :func:`max_workers`. More workers than CPUs is allowed (the
    engine warns once)."""
    if value is None:
        return None
    value = check_int(value, name)
    if value < 1:  # MindSpore's sentence (its bound is the number of CPUs), then headrace's own
        cpus = os.cpu_count() or 1
        raise ValueError(f"{name} exceeds the boundary between 1 and {cpus}! Got {value}: use a value between 1 "
                         f"and the number of CPUs ({cpus}); headrace takes up to {max_workers()}.")
    if value > max_workers():
        raise too_many_workers(value, name)
    return value


def check_num_samples(value: Any) -> int | None:
    """A source's ``num_samples``: None, or an int in [0, INT64_MAX], refused in MindSpore's words.

    Example:
        >>> check_num_samples(-1)
        Traceback (most recent call last):
            ...
        ValueError: num_samples exceeds the boundary between 0 and 9223372036854775807(INT64_MAX)!
    """
    if value is None:
        return None
    value = check_int(value, "num_samples")
    if not 0 <= value <= INT64_MAX:
        raise ValueError(f"num_samples exceeds the boundary between 0 and {INT64_MAX}(INT64_MAX)!")
    return value


def check_bool(value: Any, name: str) -> bool:
    check_type(value, bool, name)
    return value


def check_columns(columns: Any, name: str, *, allow_none: bool = True, distinct: bool = True) -> list[str] | None:
    """Normalises a column argument (a str or a list of str) to a list; None passes through.
    ``distinct=False`` leaves empty and repeated names to the caller (a source that MindSpore
    checks for them only when the pipeline is built)."""
    if columns is None:
        if allow_none:
            return None
        raise TypeError(f"{name} should not be None.")
    if isinstance(columns, str):
        columns = [columns]
    if not isinstance(columns, tuple):  # accepted, though MindSpore's message names list and str
        check_type(columns, (list, str), name)
    if not columns:
        raise ValueError(f"{name} should not be empty.")
    for i, col in enumerate(columns):
        check_type(col, str, f"{name}[{i}]")
        if not col and distinct:
            raise ValueError(f"{name}[{i}] should not be empty.")
    if distinct and len(set(columns)) != len(columns):
        dup = next(c for c in columns if list(columns).count(c) > 1)
        raise ValueError(f"{name} has a duplicate column name: {dup!r}. Column names must be unique.")
    return list(columns)


def check_max_rowsize(value: Any, pair: bool = True) -> None:
    """MindSpore's check of ``max_rowsize`` (MB of shared memory per row; -1 or 0: sized as needed):
    None, an int in [-1, INT32_MAX] or, where ``pair``, a list [in_rowsize, out_rowsize] of two.

    Example:
        >>> check_max_rowsize([16, -2])
        Traceback (most recent call last):
            ...
        ValueError: Input max_rowsize[1] is not within the required interval of [-1, 2147483647].
    """
    if value is None:
        return
    check_type(value, (int, list) if pair else int, "max_rowsize")
    if isinstance(value, list):
        if len(value) != 2:
            raise TypeError("max_rowsize should be a single integer or a list[in_rowsize, out_rowsize] of length 2.")
        for i, v in enumerate(value):
            check_type(v, int, f"max_rowsize[{i}]")
            check_range(v, (-1, INT32_MAX), f"max_rowsize[{i}]")
    else:
        check_range(value, (-1, INT32_MAX), "max_rowsize")


def check_shard(num_shards: Any, shard_id: Any) -> tuple[int | None, int | None]:
    """Validates the num_shards/shard_id pair as MindSpore does."""
    if num_shards is None and shard_id is None:
        return None, None
    if num_shards is None:
        raise RuntimeError("num_shards is not specified but shard_id is.")
    if shard_id is None:
        raise RuntimeError("shard_id is not specified but num_shards is.")
    num_shards = check_int(num_shards, "num_shards")
    check_range(num_shards, (1, INT32_MAX), "num_shards")
    shard_id = check_int(shard_id, "shard_id")
    check_range(shard_id, (0, num_shards - 1), "shard_id")
    return num_shards, shard_id

