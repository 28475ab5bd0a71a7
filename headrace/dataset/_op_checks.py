"""Argument checks of the operation datasets whose checks run long (map, batch,
bucket_batch_by_length), worded as MindSpore words them; ``_datasets.py`` builds the plan nodes."""
from __future__ import annotations

from typing import Any

from headrace._util.checks import INT32_MAX, check_columns, check_int, check_range, check_type


def check_map_operations(operations: Any, input_columns: Any, output_columns: Any) -> list:
    """``map``'s operations as a non-empty list of callables (and its column arguments' types)."""
    ops = list(operations) if isinstance(operations, (list, tuple)) else [operations]
    if not ops:
        raise ValueError("operations can not be empty.")
    for op in ops:
        if isinstance(op, type):  # HWC2CHW rather than HWC2CHW(): MindSpore refuses any class
            raise ValueError(f"Parameter operations's element of method map should be a dataset processing "
                             f"operation instance, but got: {op}. It may be missing parentheses for "
                             "instantiation.")
        if not callable(op):
            raise ValueError(f"Parameter operations's element of method map should be a python function "
                             f"or class method which should be callable, but got: {op!r}. It doesn't need "
                             "parentheses for python function or class method.")
    for name in ("input_columns", "output_columns"):
        value = input_columns if name == "input_columns" else output_columns
        if value is not None and not isinstance(value, (str, list)):
            raise TypeError(f"Argument {name} with value {value!r} is not of type [list, str], "
                            f"but got {type(value)}.")
    return ops


def check_batch_size(batch_size: Any, plain_batch: bool) -> Any:
    """``batch_size``: an int in [1, INT32_MAX] or a callable; -1 passes for a plain ``batch``
    (a batch sampler's, which fails when run without one)."""
    if not (isinstance(batch_size, int) or callable(batch_size)):
        raise TypeError("batch_size should either be an int or a callable.")
    if isinstance(batch_size, int):  # True counts as 1, as in MindSpore
        batch_size = int(batch_size)
        if batch_size != -1 or not plain_batch:
            check_range(batch_size, (1, INT32_MAX), "batch_size")
    return batch_size


def check_bucket_args(column_names: Any, bucket_boundaries: Any, bucket_batch_sizes: Any,
                      element_length_function: Any, pad_to_bucket_boundary: Any, drop_remainder: Any) -> list:
    """``bucket_batch_by_length``'s arguments; returns the checked column names."""
    column_names = check_columns(column_names, "column_names", allow_none=False)
    check_type(bucket_boundaries, list, "bucket_boundaries")
    check_type(bucket_batch_sizes, list, "bucket_batch_sizes")
    if not bucket_boundaries:
        raise ValueError("bucket_boundaries cannot be empty.")
    for i, b in enumerate(bucket_boundaries):
        check_int(b, f"bucket_boundaries[{i}]")
        if b <= 0:
            raise ValueError(f"bucket_boundaries must only contain positive numbers, but got {b}.")
    if any(b2 <= b1 for b1, b2 in zip(bucket_boundaries, bucket_boundaries[1:])):
        raise ValueError("bucket_boundaries should be strictly increasing.")
    if len(bucket_batch_sizes) != len(bucket_boundaries) + 1:
        raise ValueError("bucket_batch_sizes must contain one element more than bucket_boundaries.")
    for i, b in enumerate(bucket_batch_sizes):
        check_int(b, f"bucket_batch_sizes[{i}]")
        if b <= 0:
            raise ValueError(f"bucket_batch_sizes must only contain positive numbers, but got {b}.")
    if element_length_function is None and len(column_names) != 1:
        raise ValueError("when element_length_function is None, column_names must name exactly one column.")
    if element_length_function is not None and not callable(element_length_function):
        raise TypeError("element_length_function is not callable.")
    for name, flag in (("pad_to_bucket_boundary", pad_to_bucket_boundary), ("drop_remainder", drop_remainder)):
        check_type(flag, bool, name)
    return column_names
