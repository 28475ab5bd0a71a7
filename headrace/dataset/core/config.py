"""Global pipeline settings (``ds.config``), MindSpore's getters and setters over one options object.

Pipelines read the settings when an iterator is created (a snapshot), so changing a setting
affects iterators created afterwards.
"""
from __future__ import annotations

import dataclasses
import enum
import json
import os
import random
import warnings

import numpy as np

from headrace._engine import options as _options
from headrace._engine.exec import forkserver as _forkserver
from headrace._util import rng as _rng
from headrace._util import wording as _wording
from headrace._util.checks import INT32_MAX, UINT32_MAX, check_int, max_workers, too_many_workers
from headrace.dataset.debug import _state as _debug
from headrace.dataset.debug._hooks import DebugHook, PrintMetaDataHook

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

DEFAULT_SEED = 5489  # what get_seed() reports before set_seed (mt19937's default seed)


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


def _set(**changes) -> None:
    global _ms
    _ms = dataclasses.replace(_ms, **changes)


def _reset() -> None:
    """Back to defaults: the engine's options and these settings (tests use this)."""
    global _ms
    _ms = _MindSporeSettings()
    _options.reset()
    _debug.reset()
    _forkserver.set_idle_timeout(_forkserver.DEFAULT_IDLE_TIMEOUT)


class ErrorSamplesMode(enum.IntEnum):
    RETURN = 0
    REPLACE = 1
    SKIP = 2


def _bool(value, what="enable"):
    if not isinstance(value, bool):
        raise TypeError(f"{what} must be of type bool.")
    return value


def _positive(value, what, name):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} isn't of type int.")
    if not 0 < value <= INT32_MAX:
        raise ValueError(f"{what} is not within the required range (0, INT32_MAX({INT32_MAX})].")
    return value


def set_seed(seed):
    """Seeds shuffles and random operations of pipelines created from now on.

    Like MindSpore, this also seeds Python's ``random`` and NumPy's global generator, which user
    functions in ``map`` may use. Setting 5489 (mt19937's default) means "unseeded", as in MindSpore.

    Args:
        seed (int): A value in [0, 4294967295].
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError("seed isn't of type int.")
    if not 0 <= seed <= UINT32_MAX:
        raise ValueError(f"seed given is not within the required range [0, UINT32_MAX({UINT32_MAX})].")
    _options.update(seed=None if seed == DEFAULT_SEED else seed)
    _rng.seed_eager(None if seed == DEFAULT_SEED else seed)
    random.seed(seed)
    np.random.seed(seed)


def get_seed():
    seed = _options.snapshot().seed
    return DEFAULT_SEED if seed is None else seed


def set_num_parallel_workers(num):
    """Default worker count of ops that take ``num_parallel_workers``. More than the CPU count warns;
    more than ``max(64, 4 x CPUs)`` is refused (``ValueError``)."""
    if isinstance(num, bool) or not isinstance(num, int):
        raise TypeError("num isn't of type int.")
    if not 0 < num <= INT32_MAX:
        raise ValueError(f"Number of parallel workers given is not within the required range "
                         f"(0, INT32_MAX({INT32_MAX})].")
    if num > max_workers():
        raise too_many_workers(num)
    cpus = os.cpu_count() or 1
    if num > cpus:
        warnings.warn(f"num_parallel_workers {num} exceeds the number of CPUs ({cpus}); "
                      "workers will share cores.", stacklevel=2)
    _options.update(num_parallel_workers=num)


def get_num_parallel_workers():
    return _options.snapshot().num_parallel_workers


def set_prefetch_size(size):
    _options.update(prefetch_size=_positive(size, "size", "size"))


def get_prefetch_size():
    return _options.snapshot().prefetch_size


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
    _set(monitor_sampling_interval=_positive(interval, "Interval given", "interval"))


def get_monitor_sampling_interval():
    """The profile timeline's step in milliseconds (``set_monitor_sampling_interval``)."""
    return _ms.monitor_sampling_interval


def set_callback_timeout(timeout):
    if isinstance(timeout, bool) or not isinstance(timeout, int):
        raise TypeError("timeout isn't of type int.")
    if not 0 < timeout <= INT32_MAX:
        raise ValueError("Timeout given is not within the required range.")
    _set(callback_timeout=timeout)


def get_callback_timeout():
    return _ms.callback_timeout


def set_enable_shared_mem(enable):
    _options.update(enable_shared_mem=_bool(enable))


def get_enable_shared_mem():
    return _options.snapshot().enable_shared_mem


def set_auto_num_workers(enable):
    """Whether iterators created from now on choose each op's ``num_parallel_workers`` themselves,
    in place of the user's and the default (``set_num_parallel_workers``).

    The ops that compute (maps, filters, batches with a ``per_batch_map``; consecutive ones of the
    same mode count as one stage, since they run together) share the CPUs this process may use
    equally, divided by the job's processes on this host (the ``LOCAL_WORLD_SIZE`` environment
    variable); a random-access source right under one of them gets its count (its reads then run
    in those workers), other sources 1. Each change is logged (INFO, ``headrace.auto_num_workers``
    logger). The rows are the same as without it. Ignored in debug mode; autotune starts from
    these counts.

    Args:
        enable (bool): Whether to choose the worker counts automatically. Default setting: False.

    Raises:
        TypeError: If `enable` is not a bool.
    """
    _options.update(auto_num_workers=_bool(enable))


def get_auto_num_workers():
    """Whether worker counts are chosen automatically (``set_auto_num_workers``)."""
    return _options.snapshot().auto_num_workers


def set_multiprocessing_timeout_interval(interval):
    """Seconds a worker task (thread or process) may run before a ``WorkerStallWarning`` names
    its op, column, sample index, pid and Python stack; repeated at 2x, 4x, ... (default 300).

    Tasks of a stage with one worker, run in the thread that reads the pipeline, are watched too
    (a map over a streamed source with no batch after it, which runs row by row, is not). Debug
    mode watches nothing. ``set_worker_timeout`` turns a call that long into an error."""
    if isinstance(interval, bool) or not isinstance(interval, int):
        raise TypeError("interval isn't of type int.")
    if not 0 < interval <= INT32_MAX:  # INT32_MAX itself is accepted (as in MindSpore)
        raise ValueError(f"Interval given is not within the required range (0, INT32_MAX({INT32_MAX})).")
    _options.update(multiprocessing_timeout_interval=interval)


def get_multiprocessing_timeout_interval():
    return _options.snapshot().multiprocessing_timeout_interval


def set_worker_timeout(timeout):
    """headrace's own setting (MindSpore has none): how long one call of a user function in a
    worker may run before the pipeline fails.

    A map, filter, source read or ``per_batch_map`` whose task (one sample, or one batch when the
    batch is computed in the same workers) runs ``timeout`` seconds in a thread or process worker
    makes the iterator raise ``WorkerTimeoutError`` (a ``RuntimeError``) naming the op, column,
    sample index, worker pid and thread and the stuck call's Python stack. A stuck process worker
    is then stopped; a stuck thread cannot be, and stays blocked in the call (its result is
    dropped). Before that, ``set_multiprocessing_timeout_interval`` seconds bring a warning with
    the same details, repeated at 2x, 4x, ... that time.

    Args:
        timeout (int, float): Seconds, in (0, INT32_MAX], or 0 to turn the timeout off (the default).
    """
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout isn't of type int or float, but got {type(timeout).__name__}.")
    if not 0 <= timeout <= INT32_MAX:  # also refuses NaN
        raise ValueError(f"timeout must be 0 (no timeout) or a number of seconds in (0, "
                         f"INT32_MAX({INT32_MAX})], but got {timeout}.")
    _options.update(worker_timeout=timeout)


def get_worker_timeout():
    """Seconds a user function call in a worker may run before an error; 0: no timeout."""
    return _options.snapshot().worker_timeout


def set_helper_idle_timeout(timeout):
    """headrace's own setting (MindSpore has none): how long the helper processes of worker
    processes stay once no pipeline uses them.

    Worker processes are forked by a helper process (the fork server), which also keeps up to 8
    idle spare workers ready for the next pipeline. Once the helper has had no worker running and
    no request for ``timeout`` seconds, the spares and the helper exit; the next pipeline with
    worker processes starts it again (paying its start once more, a fraction of a second). A
    pipeline whose iterator is still open keeps its workers, and so its helper. Applies to the
    helper running now as well as later ones.

    Args:
        timeout (int, float): Seconds in [0, INT32_MAX]; 0 makes them exit as soon as the last
            worker has exited (a helper that has not started a worker yet, e.g. one started
            while a pipeline is built, waits at least 10 s). Default: 60.

    Raises:
        TypeError: ``timeout`` is not an int or a float.
        ValueError: ``timeout`` is negative, NaN or above INT32_MAX.

    Examples:
        >>> import headrace.dataset as ds
        >>> ds.config.set_helper_idle_timeout(5)
        >>> ds.config.get_helper_idle_timeout()
        5.0
        >>> ds.config.set_helper_idle_timeout(60)
    """
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout isn't of type int or float, but got {type(timeout).__name__}.")
    if not 0 <= timeout <= INT32_MAX:  # also refuses NaN
        raise ValueError(f"timeout must be a number of seconds in [0, INT32_MAX({INT32_MAX})], but got {timeout}.")
    _forkserver.set_idle_timeout(timeout)


def get_helper_idle_timeout():
    """Seconds the helper process of worker processes and its spares stay once idle (a float;
    ``set_helper_idle_timeout``)."""
    return _forkserver.idle_timeout()


def set_multiprocessing_start_method(start_method="fork"):
    """How worker processes (``python_multiprocessing=True``) start: 'fork' (default) or 'spawn'.

    'fork': forked without pickling the operations when this process has a single thread;
    otherwise (the usual case: NumPy's BLAS alone starts threads) forked by a clean
    single-threaded helper process, because a fork of a process with threads can deadlock. The
    operations are then pickled with cloudpickle, as for 'spawn' (lambdas and closures work);
    operations that cannot be pickled get a warning and are forked from this process after all.
    'spawn': every worker is a new interpreter; operations that cannot be pickled are an error
    naming the operation when the pipeline starts.
    """
    if not isinstance(start_method, str):
        raise TypeError("start_method isn't of type str.")
    if start_method not in ("fork", "spawn"):
        raise ValueError("Input start_method is not within the valid set of ['fork', 'spawn'].")
    _options.update(multiprocessing_start_method=start_method)


def get_multiprocessing_start_method():
    return _options.snapshot().multiprocessing_start_method


_POLICIES = ("raise", "replace", "skip")  # the engine's error policy per ErrorSamplesMode


def set_error_samples_mode(error_samples_mode):
    """What a row whose source read or map operation fails does to iterators created from now on.

    * ``ErrorSamplesMode.RETURN`` (default): the pipeline raises the error.
    * ``ErrorSamplesMode.REPLACE``: another row takes its place, so every epoch keeps its number of
      rows: the next row that did not fail (the previous one at the end of an epoch). When a batch
      follows the map directly (it is then made in the same stage), the replacement comes from the
      same batch. The choice depends only on which rows fail: the same with any number of workers
      and after ``set_state``. An epoch in which no row can be read raises "All data is garbage
      and cannot be replaced.".
    * ``ErrorSamplesMode.SKIP``: the row is left out. When a batch follows the map directly the
      batch is one row short (a batch all of whose rows fail is replaced by the next batch), so
      every shard of a sharded pipeline keeps its number of batches.

    Every replaced or skipped row is named (op, position in the epoch, source row, file, error)
    in an ``ErrorSamplesWarning`` at the end of its epoch, and by the iterator's
    ``error_samples()``. Errors of ``per_batch_map``, ``batch`` itself and streamed sources
    (``GeneratorDataset`` over an iterable) still raise. Ignored in debug mode. With RETURN nothing
    in the pipeline's per-row path changes; REPLACE and SKIP run rows through a guarded loop and
    re-read an epoch up to a restored checkpoint's position (``set_state``).

    Args:
        error_samples_mode (ErrorSamplesMode): RETURN, REPLACE or SKIP.
    """
    if not isinstance(error_samples_mode, ErrorSamplesMode):
        raise TypeError("error_samples_mode isn't of type ErrorSamplesMode.")
    _options.update(error_policy=_POLICIES[int(error_samples_mode)])


def get_error_samples_mode():
    """The mode of ``set_error_samples_mode``."""
    return ErrorSamplesMode(_POLICIES.index(_options.snapshot().error_policy))


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


def set_enable_watchdog(enable):
    """Whether iterators created from now on watch their workers for calls that do not return.

    With the watchdog on (the default), a user function, source read or batch that runs longer
    than ``set_multiprocessing_timeout_interval`` seconds in a worker thread or process is reported
    (op, column, sample index, worker pid, the stuck call's Python stack), and
    ``set_worker_timeout`` can make it an error. With it off, no watchdog thread runs in this
    process and no stack-reporting thread in worker processes: nothing is reported, and a pipeline
    created with a worker timeout set is refused (``ValueError``). Worker processes still end with
    the process that started them, either way.

    Args:
        enable (bool): Whether to watch.

    Raises:
        TypeError: If `enable` is not a bool.
    """
    _options.update(watchdog=_bool(enable))


def get_enable_watchdog():
    """Whether the watchdog is on (``set_enable_watchdog``)."""
    return _options.snapshot().watchdog


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
    _set(autotune_filepath=filepath_prefix)
    _options.update(autotune=enable)


def get_enable_autotune():
    """Whether autotune is on (``set_enable_autotune``)."""
    return _options.snapshot().autotune


def _autotune_filepath():
    """The prefix of the tuned pipeline's file (``set_enable_autotune``), or None (not public: MindSpore has no getter)."""
    return _ms.autotune_filepath


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


def set_numa_enable(numa_enable):
    """Whether iterators created from now on run their worker threads, worker processes and
    prefetch thread on the CPUs of one NUMA node.

    The node is chosen by rank: the ``RANK_ID`` environment variable (MindSpore's), else
    ``LOCAL_RANK`` (torchrun's), else 0, modulo the number of nodes (read from
    ``/sys/devices/system/node``; only the CPUs this process may use count). A machine with one
    node, or none the kernel reports, changes nothing. Work that the thread reading the iterator
    does itself (cheap rows, inline stages) stays on that thread's CPUs. No NUMA library is needed.

    Args:
        numa_enable (bool): Whether to bind. Default setting: False.

    Raises:
        TypeError: If `numa_enable` is not a bool.
    """
    _options.update(numa_enable=_bool(numa_enable, "numa_enable"))


def get_numa_enable():
    """Whether the pipeline binds to a NUMA node (``set_numa_enable``)."""
    return _options.snapshot().numa_enable


def set_fast_recovery(fast_recovery):
    """MindSpore's choice between a fast resume, whose random augmentations may differ from the run
    that was interrupted (True, the default), and an exact one that replays them (False).

    headrace's resume (``set_state``, ``set_init_step``) is both: every random operation, and
    Python's and NumPy's generators inside user functions under a seed, draw from generators keyed
    by (seed, op, epoch, sample), so a resumed run gives the rows of the uninterrupted run without
    replaying the rows before it. Either value therefore gets what it asks for; the getter reports it.

    Args:
        fast_recovery (bool): Whether a resume may change random augmentations (never needed here).

    Raises:
        TypeError: If `fast_recovery` is not a bool.
    """
    _set(fast_recovery=_bool(fast_recovery, "fast_recovery"))


def get_fast_recovery():
    """The value of ``set_fast_recovery``."""
    return _ms.fast_recovery


def set_dynamic_shape(is_dynamic):
    """MindSpore's flag telling its graph compiler (sink mode) that batch shapes vary.

    headrace compiles no graph: its iterators, the device queue (``device_que``) and the
    ``headrace.torch`` / ``headrace.jax`` loaders pass on whatever shapes the batches have, which
    is what True asks for; False (the default) makes MindSpore take the shapes from the data, which
    headrace also does. The getter reports the value for code that reads it back.

    Args:
        is_dynamic (bool): Whether the dataset's shapes vary.

    Raises:
        TypeError: If `is_dynamic` is not a bool.
    """
    _set(dynamic_shape=_bool(is_dynamic, "is_dynamic"))


def get_dynamic_shape():
    """The value of ``set_dynamic_shape``."""
    return _ms.dynamic_shape


def set_auto_offload(offload):
    """MindSpore's automatic offload of dataset operations to the device (GPU or Ascend).

    headrace runs every dataset operation on the host; offload is refused rather than ignored.
    Put device-side augmentation in the training step (e.g. after ``headrace.torch.Loader`` moved
    the batch to the GPU).

    Args:
        offload (bool): Only False is accepted.

    Raises:
        TypeError: If `offload` is not a bool.
        ValueError: If `offload` is True.
    """
    if _bool(offload, "offload"):
        raise ValueError("set_auto_offload(True) is not supported: headrace runs dataset operations on the host "
                         "and has no device to offload them to. Leave offload False, and run device-side "
                         "augmentation in the training step (e.g. on the batches headrace.torch.Loader moved to "
                         "the GPU).")


def get_auto_offload():
    """Always False: headrace runs dataset operations on the host (``set_auto_offload``)."""
    return False


def set_iterator_mode(do_copy=False, parallel_convert=False):
    """How iterators created from now on hand out rows.

    Args:
        do_copy (bool): The ``do_copy`` of ``create_tuple_iterator`` and ``create_dict_iterator``
            when they are not given one: True makes each Tensor (``output_numpy=False``) a copy
            with memory of its own; False (default) makes it share the pipeline's array.
        parallel_convert (bool): True: every iterator converts its rows (column selection,
            Tensors, dict values, copies) in its prefetch thread, which then always runs, ahead of
            the consumer; False (default): in the thread that reads the iterator. The rows, and
            ``get_state``, are the same either way.

    Raises:
        TypeError: If `do_copy` or `parallel_convert` is not a bool.
    """
    _set(iterator_do_copy=_bool(do_copy, "do_copy"),
         iterator_parallel_convert=_bool(parallel_convert, "parallel_convert"))


def get_iterator_mode():
    """``{"do_copy": bool, "parallel_convert": bool}`` of ``set_iterator_mode``."""
    return {"do_copy": _ms.iterator_do_copy, "parallel_convert": _ms.iterator_parallel_convert}


def set_sending_batches(batch_num):
    check_int(batch_num, "batch_num")
    _set(sending_batches=batch_num)


def _sending_batches() -> int:
    """The cap of ``set_sending_batches`` (0: none), for the device queue (MindSpore has no getter)."""
    return _ms.sending_batches


# ---- headrace only: image decoding -------------------------------------------------------------
# MindSpore has neither setting. Decoders read them when they decode (worker processes get the
# values of the iterator that started them); set them before creating iterators.

DEFAULT_MAX_IMAGE_PIXELS = _options.Options.max_image_pixels
_MAX_PIXELS_LIMIT = 1 << 40


def set_max_image_pixels(max_pixels):
    """Largest image (height x width, from its header) that decoding accepts (headrace only).

    An image whose header claims more pixels is refused before anything is allocated, with an
    error naming its size: a 'decompression bomb', or a damaged header claiming 65500 x 65500,
    would otherwise allocate gigabytes. Applies to every decoder (Decode, RandomCropDecodeResize,
    the fused decode ops, ``decode=True`` sources, ``read_image``; JPEG, PNG and what Pillow
    identifies). Default: 89,478,485, Pillow's ``MAX_IMAGE_PIXELS`` (about 268 MiB decoded).
    Pillow's own limit still applies to images Pillow decodes (``Decode(to_pil=True)``).

    Args:
        max_pixels (Union[int, None]): A limit in [1, 2**40], or None for no limit.
    """
    if max_pixels is not None:
        if isinstance(max_pixels, bool) or not isinstance(max_pixels, int):
            raise TypeError(f"max_pixels must be an int or None, but got {type(max_pixels).__name__}.")
        if not 1 <= max_pixels <= _MAX_PIXELS_LIMIT:
            raise ValueError(f"max_pixels must be in [1, 2**40] (or None for no limit), but got {max_pixels}.")
    _options.update(max_image_pixels=max_pixels)


def get_max_image_pixels():
    """The pixel limit of ``set_max_image_pixels`` (None: no limit)."""
    return _options.snapshot().max_image_pixels


def set_strict_decode(strict):
    """How a JPEG whose data ends early is reported (headrace only).

    A JPEG cut short (libjpeg's "premature end of data segment" / "Premature end of JPEG file",
    e.g. a truncated download, with or without an EOI marker appended) decodes with a grey tail.
    By default headrace returns that image and emits an ``ImageDataWarning`` naming the op and the
    sample index or file; with ``strict`` True it is an error. In strict mode the ops that decode
    only a window of a JPEG (RandomCropDecodeResize, the fused Decode + RandomResizedCrop) check
    the whole file, which makes them slower (about 13% more decode time in one measurement);
    by default they warn only when the missing part lies inside the window they decode.

    Args:
        strict (bool): True to make such JPEGs an error.
    """
    _options.update(strict_decode=_bool(strict, "strict"))


def get_strict_decode():
    """Whether a JPEG whose data ends early is an error (``set_strict_decode``)."""
    return _options.snapshot().strict_decode


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
