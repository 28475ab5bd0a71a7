"""Docstring lines that several source classes share word for word.

A class docstring writes the marker line ``{sampling_args}`` in its ``Args:`` where the lines of
the common sampling, sharding and cache arguments go, and the class decorator
``with_sampling_args`` puts them there when the class is defined, indented as the marker:
``help()``, ``inspect.getdoc`` and doctests read the full text. ``with_args`` makes such a
decorator for other shared lines (a module's own, under a marker of its own).
"""
from __future__ import annotations

from typing import Callable, Sequence, TypeVar

__all__ = ["SAMPLING_ARGS", "with_args", "with_sampling_args"]

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


def with_args(name: str, args: Sequence[str]) -> Callable[[_T], _T]:
    """A class decorator: the class with the ``{name}`` line of its docstring replaced by the
    lines ``args``, each indented as that line.

    The decorator raises ValueError when the docstring has no such line, or more than one (its
    Args would lack the shared arguments); a class without a docstring (``python -OO``) is
    returned as it is.
    """
    wanted = "{" + name + "}"

    def put(cls: _T) -> _T:
        doc = cls.__doc__
        if doc is None:
            return cls
        lines = doc.split("\n")
        at = [i for i, line in enumerate(lines) if line.strip() == wanted]
        if len(at) != 1:
            raise ValueError(f"the docstring of {cls.__name__} needs one line {wanted}, it has {len(at)}")
        marker = lines[at[0]]
        indent = marker[:len(marker) - len(marker.lstrip())]
        lines[at[0]:at[0] + 1] = [indent + arg for arg in args]
        cls.__doc__ = "\n".join(lines)
        return cls

    return put


def with_sampling_args(cls: _T) -> _T:
    """``cls`` with the ``{sampling_args}`` line of its docstring replaced by ``SAMPLING_ARGS``
    (see ``with_args``)."""
    return with_args("sampling_args", SAMPLING_ARGS)(cls)
