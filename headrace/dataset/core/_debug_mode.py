"""Debug mode (``ds.config.set_debug_mode``): pipelines run in the thread that reads them, with hooks."""
from __future__ import annotations

import warnings

from headrace._engine import options as _options
from headrace.dataset.core._seed import set_seed
from headrace.dataset.debug import _state as _debug
from headrace.dataset.debug._hooks import DebugHook, PrintMetaDataHook


def set_debug_mode(debug_mode_flag, debug_hook_list=None):
    """Debug mode: every iterator created from now on runs its pipeline in the thread that reads it.

    In debug mode no worker thread, worker process or prefetch thread is started, so a breakpoint
    in a source's ``__getitem__``, a map's function or a hook stops the program where ``pdb``
    can see it. ``num_parallel_workers``, ``python_multiprocessing`` (map, batch, sources),
    ``set_auto_num_workers``, ``set_enable_autotune`` and ``set_error_samples_mode`` are ignored
    (one warning when the mode is turned on). An iterator created while no seed is set sets seed 1
    (``set_seed(1)``), so debug runs repeat. Rows are the same as outside debug mode under the same seed.

    Each map calls copies of the hooks in ``debug_hook_list`` before its first operation and after
    each operation with the data (``DebugHook.compute``); a ``DebugHook`` may also be written into
    a map's operations by hand (an error outside debug mode).

    Args:
        debug_mode_flag (bool): Whether debug mode is on.
        debug_hook_list (list[DebugHook], optional): The hooks. Default: None, which means
            ``[debug.PrintMetaDataHook()]`` (prints each column's dtype and shape around every
            operation). An empty list keeps the hooks of the previous call.

    Raises:
        TypeError: If `debug_mode_flag` is not a bool, `debug_hook_list` not a list, or one of its
            items not a ``DebugHook``.
    """
    if not isinstance(debug_mode_flag, bool):
        raise TypeError("debug_mode_flag isn't of type boolean.")
    if debug_hook_list is None:
        debug_hook_list = [PrintMetaDataHook()]
    if not isinstance(debug_hook_list, list):
        raise TypeError("debug_hook_list is not a list.")
    for hook in debug_hook_list:
        if not isinstance(hook, DebugHook):
            raise TypeError("All items in debug_hook_list must be of type DebugHook.")
    if debug_mode_flag and not _debug.enabled:
        warnings.warn("Dataset pipeline debug mode is enabled: pipelines run in a single thread, the one that "
                      "reads them; num_parallel_workers, auto_num_workers, python_multiprocessing, autotune and the "
                      "error samples mode are ignored, and seed 1 is used while no seed is set. Performance will be "
                      "impacted.",
                      stacklevel=2)
    _debug.configure(debug_mode_flag, debug_hook_list or _debug.hooks)
    _options.update(serial=debug_mode_flag)


def get_debug_mode():
    """Whether debug mode is on (``set_debug_mode``)."""
    return _debug.enabled


def _debug_before_run() -> None:
    """Called when an iterator is created: in debug mode, seed 1 when no seed is set."""
    if _debug.enabled and _options.snapshot().seed is None:
        warnings.warn("Debug mode is enabled. Set seed to ensure deterministic results. Seed value: 1.", stacklevel=3)
        set_seed(1)

