"""Global pipeline settings (``ds.config``), MindSpore's getters and setters over one options object.

Pipelines read the settings when an iterator is created (a snapshot), so changing a setting
affects iterators created afterwards.
"""
# The settings are written by concern in the modules beside this one: seeds (_seed.py), workers
# and processes (_workers.py), timeouts and the watchdog (_watchdog.py), rows that fail
# (_error_samples.py), debug mode (_debug_mode.py), autotune and the profiler's step
# (_autotune.py), iterators and the device queue (_iteration.py), image decoding (_decode.py); the
# settings the engine never reads and the setters' shared checks (_store.py). This module gathers
# them under MindSpore's names (the names imported "as" themselves are importable from here but not
# in __all__, as before), and holds what spans them: reset and loading a config file.
from __future__ import annotations

import json
import os

from headrace._engine import options as _options
from headrace._engine.exec import forkserver as _forkserver
from headrace._util import wording as _wording
from headrace.dataset.core import _store
from headrace.dataset.core._autotune import _autotune_filepath as _autotune_filepath
from headrace.dataset.core._autotune import (
    get_autotune_interval, get_enable_autotune, get_monitor_sampling_interval, set_autotune_interval,
    set_enable_autotune, set_monitor_sampling_interval,
)
from headrace.dataset.core._debug_mode import _debug_before_run as _debug_before_run
from headrace.dataset.core._debug_mode import get_debug_mode, set_debug_mode
from headrace.dataset.core._decode import DEFAULT_MAX_IMAGE_PIXELS as DEFAULT_MAX_IMAGE_PIXELS
from headrace.dataset.core._decode import (
    get_max_image_pixels, get_strict_decode, set_max_image_pixels, set_strict_decode,
)
from headrace.dataset.core._error_samples import ErrorSamplesMode, get_error_samples_mode, set_error_samples_mode
from headrace.dataset.core._iteration import _sending_batches as _sending_batches
from headrace.dataset.core._iteration import (
    get_auto_offload, get_dynamic_shape, get_fast_recovery, get_iterator_mode, get_prefetch_size, set_auto_offload,
    set_dynamic_shape, set_fast_recovery, set_iterator_mode, set_prefetch_size, set_sending_batches,
)
from headrace.dataset.core._seed import DEFAULT_SEED as DEFAULT_SEED
from headrace.dataset.core._seed import get_seed, set_seed
from headrace.dataset.core._watchdog import (
    get_callback_timeout, get_enable_watchdog, get_multiprocessing_timeout_interval, get_worker_timeout,
    set_callback_timeout, set_enable_watchdog, set_multiprocessing_timeout_interval, set_worker_timeout,
)
from headrace.dataset.core._workers import (
    get_auto_num_workers, get_enable_shared_mem, get_helper_idle_timeout, get_multiprocessing_start_method,
    get_num_parallel_workers, get_numa_enable, set_auto_num_workers, set_enable_shared_mem, set_helper_idle_timeout,
    set_multiprocessing_start_method, set_num_parallel_workers, set_numa_enable,
)
from headrace.dataset.debug import _state as _debug

__all__ = [
    "ErrorSamplesMode", "get_auto_num_workers", "get_auto_offload", "get_autotune_interval",
    "get_callback_timeout", "get_debug_mode", "get_dynamic_shape", "get_enable_autotune",
    "get_enable_shared_mem", "get_enable_watchdog", "get_error_samples_mode", "get_fast_recovery",
    "get_helper_idle_timeout", "get_iterator_mode", "get_max_image_pixels", "get_monitor_sampling_interval",
    "get_multiprocessing_start_method", "get_multiprocessing_timeout_interval",
    "get_num_parallel_workers", "get_numa_enable", "get_prefetch_size", "get_seed",
    "get_strict_decode", "get_worker_timeout", "load", "set_auto_num_workers",
    "set_auto_offload", "set_autotune_interval", "set_callback_timeout", "set_debug_mode",
    "set_dynamic_shape", "set_enable_autotune", "set_enable_shared_mem", "set_enable_watchdog",
    "set_error_samples_mode", "set_fast_recovery", "set_helper_idle_timeout", "set_iterator_mode", "set_max_image_pixels",
    "set_monitor_sampling_interval", "set_multiprocessing_start_method",
    "set_multiprocessing_timeout_interval", "set_num_parallel_workers", "set_numa_enable",
    "set_prefetch_size", "set_seed", "set_sending_batches", "set_strict_decode",
    "set_worker_timeout",
]

# How users change the engine's settings, for the engine's messages (``_util/wording.py``). Data
# registered on import, unlike the "nothing at import time" rule's hooks and threads: an engine
# message may come before any call into this module, and must name the call all the same.
_wording.name_settings({**{name: f"ds.config.set_{name}({{}})" for name in (
    "enable_shared_mem", "multiprocessing_start_method", "multiprocessing_timeout_interval", "worker_timeout")},
    "watchdog": "ds.config.set_enable_watchdog({})"})


def _reset() -> None:
    """Back to defaults: the engine's options and these settings (tests use this)."""
    _store.reset()
    _options.reset()
    _debug.reset()
    _forkserver.set_idle_timeout(_forkserver.DEFAULT_IDLE_TIMEOUT)


_LOADABLE = {
    "seed": set_seed, "numParallelWorkers": set_num_parallel_workers, "opConnectorSize": set_prefetch_size,
    "monitorSamplingInterval": set_monitor_sampling_interval, "callbackTimeout": set_callback_timeout,
}


def load(file):
    """Reads settings from a JSON file with MindSpore's config keys (seed, numParallelWorkers, ...)."""
    if not isinstance(file, (str, os.PathLike)):
        raise TypeError(f"file isn't of type str, but got {type(file)}.")
    try:
        with open(file, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise RuntimeError(f"Failed to load config file {file}: {e}") from e
    for key, setter in _LOADABLE.items():
        if key in data:
            setter(data[key])
