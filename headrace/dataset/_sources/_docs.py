"""Docstring lines that several source classes share word for word.

A class docstring writes the marker line ``{sampling_args}`` in its ``Args:`` where the lines of
the common sampling, sharding and cache arguments go, and the class decorator
``with_sampling_args`` puts them there when the class is defined, indented as the marker:
``help()``, ``inspect.getdoc`` and doctests read the full text.
"""
from __future__ import annotations

from typing import TypeVar

__all__ = ["SAMPLING_ARGS", "with_sampling_args"]

_T = TypeVar("_T", bound=type)

# The Args lines of the arguments every source read by index takes after its own.
SAMPLING_ARGS = (
    "num_samples (int, optional): Rows to read. Default: None, all.",
    "num_parallel_workers (int, optional): Worker threads. Default: None, the configured number.",
    "shuffle (bool, optional): Shuffle the rows. Default: None (shuffled unless a sampler is given).",
    "sampler (Sampler, optional): Which rows to read. Default: None.",
    "num_shards (int, optional): Split the rows into this many shards. Default: None.",
    "shard_id (int, optional): The shard to read. Default: None.",
    "cache (DatasetCache, optional): Cache the rows (``headrace.dataset.cache``). Default: None.",
)

_MARKER = "{sampling_args}"


def with_sampling_args(cls: _T) -> _T:
    """``cls`` with the ``{sampling_args}`` line of its docstring replaced by ``SAMPLING_ARGS``.

    Raises:
        ValueError: the docstring has no such line (its Args would lack the common arguments). A
            class without a docstring (``python -OO``) is returned as it is.
    """
    doc = cls.__doc__
    if doc is None:
        return cls
    lines = doc.split("\n")
    at = [i for i, line in enumerate(lines) if line.strip() == _MARKER]
    if len(at) != 1:
        raise ValueError(f"the docstring of {cls.__name__} needs one line {_MARKER}, it has {len(at)}")
    marker = lines[at[0]]
    indent = marker[:len(marker) - len(marker.lstrip())]
    lines[at[0]:at[0] + 1] = [indent + arg for arg in SAMPLING_ARGS]
    cls.__doc__ = "\n".join(lines)
    return cls
