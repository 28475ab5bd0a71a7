"""The settings MindSpore has that the engine never reads, and the argument checks the setters share.

The engine's own settings live in ``headrace/_engine/options.py``; these are read by the dataset
layer (the profiler, callbacks, iterators, the device queue, autotune's file). The public setters
and getters are in the modules of ``headrace/dataset/core/`` grouped by concern;
``headrace.dataset.core.config`` gathers them.
"""
from __future__ import annotations

import dataclasses

from headrace._util.checks import INT32_MAX


@dataclasses.dataclass(frozen=True)
class _MindSporeSettings:
    """Settings the dataset layer reads (the profiler, callbacks, iterators, the device queue,
    autotune's file) rather than the engine, and the two that headrace meets whatever their value
    (``fast_recovery``, ``dynamic_shape``: see their setters)."""

    monitor_sampling_interval: int = 1000
    callback_timeout: int = 60
    autotune_filepath: str | None = None  # set_enable_autotune's filepath_prefix (dataset/_autotune_file.py)
    fast_recovery: bool = True
    dynamic_shape: bool = False
    iterator_do_copy: bool = False
    iterator_parallel_convert: bool = False
    sending_batches: int = 0


_ms = _MindSporeSettings()


def current() -> _MindSporeSettings:
    """The settings now (a frozen value: a setter replaces it)."""
    return _ms


def update(**changes) -> None:
    """Replaces the named settings."""
    global _ms
    _ms = dataclasses.replace(_ms, **changes)


def reset() -> None:
    """Back to the defaults."""
    global _ms
    _ms = _MindSporeSettings()


def check_bool(value, what="enable"):
    """``value`` if it is a bool; otherwise TypeError naming ``what`` (MindSpore's wording)."""
    if not isinstance(value, bool):
        raise TypeError(f"{what} must be of type bool.")
    return value


def check_int_type(value, name) -> None:
    """TypeError "<name> isn't of type int." unless ``value`` is an int (a bool is not)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} isn't of type int.")


def check_seconds_type(value, name) -> None:
    """TypeError unless ``value`` is an int or a float (a bool is not), naming its type."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} isn't of type int or float, but got {type(value).__name__}.")


def check_positive(value, what, name):
    """``value`` if it is an int in (0, INT32_MAX]; TypeError naming ``name``, ValueError naming ``what``."""
    check_int_type(value, name)
    if not 0 < value <= INT32_MAX:
        raise ValueError(f"{what} is not within the required range (0, INT32_MAX({INT32_MAX})].")
    return value
