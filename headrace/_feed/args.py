"""Argument checks the framework adapters share (``headrace.torch``, ``headrace.jax``)."""
from __future__ import annotations

from typing import Any


def check_bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, but got {value!r} of type {type(value).__name__}.")
    return value


def check_source(dataset: Any, columns: Any, as_dict: Any, shard: Any) -> list[str] | None:
    """Checks what every adapter takes first; returns ``columns`` as a list (or None: all)."""
    from headrace.dataset import Dataset  # noqa: PLC0415 - keeps the adapters light to import

    if not isinstance(dataset, Dataset):
        raise TypeError(f"dataset must be a headrace dataset (headrace.dataset.Dataset), but got "
                        f"{type(dataset).__name__}.")
    if columns is not None:
        if isinstance(columns, str):
            columns = [columns]
        if not isinstance(columns, (list, tuple)) or not all(isinstance(c, str) for c in columns):
            raise TypeError(f"columns must be a list of column names (str) or None, but got {columns!r}.")
        columns = list(columns)
    check_bool(as_dict, "as_dict")
    check_bool(shard, "shard")
    return columns


MAX_DEPTH = 1024  # batches a loader's queue or buffer may hold


def check_depth(value: Any, name: str) -> int:
    """A queue's or buffer's depth in batches: an int in [1, MAX_DEPTH]."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, but got {value!r}.")
    if not 1 <= value <= MAX_DEPTH:
        raise ValueError(f"{name} must be in [1, {MAX_DEPTH}], but got {value}.")
    return value


def check_epoch(epoch: Any) -> int:
    if isinstance(epoch, bool) or not isinstance(epoch, int):
        raise TypeError(f"epoch must be an int, but got {epoch!r}.")
    if epoch < 0:
        raise ValueError(f"epoch must be >= 0, but got {epoch}.")
    return epoch
