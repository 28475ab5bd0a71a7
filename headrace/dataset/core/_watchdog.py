"""Timeouts and the watchdog: when a slow worker task is reported, when it is an error, and how
long a callback is waited for."""
from __future__ import annotations

from headrace._engine import options as _options
from headrace._util.checks import INT32_MAX
from headrace.dataset.core import _store


def set_multiprocessing_timeout_interval(interval):
    """Seconds a worker task (thread or process) may run before a ``WorkerStallWarning`` names
    its op, column, sample index, pid and Python stack; repeated at 2x, 4x, ... (default 300).

    Tasks of a stage with one worker, run in the thread that reads the pipeline, are watched too
    (a map over a streamed source with no batch after it, which runs row by row, is not). Debug
    mode watches nothing. ``set_worker_timeout`` turns a call that long into an error."""
    _store.check_int_type(interval, "interval")
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
    _store.check_seconds_type(timeout, "timeout")
    if not 0 <= timeout <= INT32_MAX:  # also refuses NaN
        raise ValueError(f"timeout must be 0 (no timeout) or a number of seconds in (0, "
                         f"INT32_MAX({INT32_MAX})], but got {timeout}.")
    _options.update(worker_timeout=timeout)


def get_worker_timeout():
    """Seconds a user function call in a worker may run before an error; 0: no timeout."""
    return _options.snapshot().worker_timeout


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
    _options.update(watchdog=_store.check_bool(enable))


def get_enable_watchdog():
    """Whether the watchdog is on (``set_enable_watchdog``)."""
    return _options.snapshot().watchdog


def set_callback_timeout(timeout):
    _store.check_int_type(timeout, "timeout")
    if not 0 < timeout <= INT32_MAX:
        raise ValueError("Timeout given is not within the required range.")
    _store.update(callback_timeout=timeout)


def get_callback_timeout():
    return _store.current().callback_timeout

