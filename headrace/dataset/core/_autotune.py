"""Autotune and the profiler's step: what the engine measures and what it changes from it."""
from __future__ import annotations

import os
import warnings

from headrace._engine import options as _options
from headrace._util.checks import INT32_MAX
from headrace.dataset.core import _store


def set_enable_autotune(enable, filepath_prefix=None):
    """Turns dataset autotune on or off for iterators created from now on.

    While an autotuned iterator runs, headrace measures every stage of its pipeline (the
    profiler's counters) and, at each decision point (see ``set_autotune_interval``), raises the
    ``num_parallel_workers`` of the op that limits it, moves a Python function that holds the GIL
    from threads to worker processes (``python_multiprocessing``) and deepens the prefetch, within
    the CPUs this process may use and half the machine's RAM. Each decision is logged on the
    ``headrace.autotune`` logger (INFO: op, old -> new, and the measurements behind it). The rows
    are those of the untuned pipeline. Debug mode (``set_debug_mode``) ignores autotune.

    Args:
        enable (bool): Whether to autotune.
        filepath_prefix (str, optional): Where to write the tuned pipeline: ``<prefix>_<rank>.json``
            (rank: the ``RANK_ID`` environment variable, 0 without it), MindSpore's layout (the
            pipeline as ``ds.serialize`` writes it under ``"tree"``, with the tuned worker counts
            and modes), written at the end of each epoch that changed something and when the
            iterator stops; ``ds.deserialize`` rebuilds it. Its directory must exist. Default: None
            (nothing written).

    Raises:
        TypeError: If `enable` is not a bool or `filepath_prefix` not a str.
        RuntimeError: If `filepath_prefix` is empty, a directory, or in a directory that does not exist.

    Examples:
        >>> import headrace.dataset as ds
        >>> ds.config.set_enable_autotune(True)
        >>> ds.config.get_enable_autotune()
        True
        >>> ds.config.set_enable_autotune(False)
    """
    if not isinstance(enable, bool):
        raise TypeError("enable must be of type bool.")
    if filepath_prefix is not None and not isinstance(filepath_prefix, str):
        raise TypeError(f"json_filepath must be a str value but was: {filepath_prefix}.")
    if enable and filepath_prefix == "":
        raise RuntimeError("The value of json_filepath cannot be the empty string.")
    if not enable:
        if filepath_prefix is not None:
            warnings.warn("The value of json_filepath is ignored when enable is False.", UserWarning, stacklevel=2)
        filepath_prefix = None
    if filepath_prefix is not None:
        if os.path.isdir(filepath_prefix) or filepath_prefix.endswith(os.sep):
            raise RuntimeError(f"Invalid json_filepath parameter. <{filepath_prefix}> is a directory, not a file "
                               "name prefix.")
        folder = os.path.dirname(os.path.abspath(filepath_prefix))
        if not os.path.isdir(folder):
            raise RuntimeError(f"Invalid json_filepath parameter. Directory <{os.path.dirname(filepath_prefix)}> "
                               "does not exist.")
    _store.update(autotune_filepath=filepath_prefix)
    _options.update(autotune=enable)


def get_enable_autotune():
    """Whether autotune is on (``set_enable_autotune``)."""
    return _options.snapshot().autotune


def _autotune_filepath():
    """The prefix of the tuned pipeline's file (``set_enable_autotune``), or None (not public: MindSpore has no getter)."""
    return _store.current().autotune_filepath


def set_autotune_interval(interval):
    """How often autotune decides: every `interval` steps (rows handed out by the iterator, i.e.
    batches after a batch), or at the end of each epoch with 0.

    Args:
        interval (int): Steps between decisions, in [0, 2147483647]; 0: at each epoch's end. Default
            setting: 0.

    Raises:
        TypeError: If `interval` is not an int.
        ValueError: If `interval` is negative or over 2147483647.
    """
    if isinstance(interval, bool) or not isinstance(interval, int):
        raise TypeError("interval must be of type int.")
    if not 0 <= interval <= INT32_MAX:
        raise ValueError(f"Interval given is not within the required range [0, INT32_MAX({INT32_MAX})].")
    _options.update(autotune_interval=interval)


def get_autotune_interval():
    """Steps between autotune's decisions (0: at the end of each epoch)."""
    return _options.snapshot().autotune_interval


def set_monitor_sampling_interval(interval):
    """The step, in milliseconds, of the series a profile records (``ds.profile``): each run's
    ``timeline`` in profile.json gives per op the share of its workers' time busy, per stage its
    output queue's length and the consumer's waiting, per interval. Read when a profile starts.

    Args:
        interval (int): Milliseconds, in (0, INT32_MAX]. Default setting: 1000.

    Raises:
        TypeError: If `interval` is not an int.
        ValueError: If `interval` is not in (0, INT32_MAX].
    """
    _store.update(monitor_sampling_interval=_store.check_positive(interval, "Interval given", "interval"))


def get_monitor_sampling_interval():
    """The profile timeline's step in milliseconds (``set_monitor_sampling_interval``)."""
    return _store.current().monitor_sampling_interval

