"""Workers and processes: how many, chosen how, started how, bound where, and the helper
process that forks them."""
from __future__ import annotations

import os
import warnings

from headrace._engine import options as _options
from headrace._engine.exec import forkserver as _forkserver
from headrace._util.checks import INT32_MAX, max_workers, too_many_workers
from headrace.dataset.core import _store


def set_num_parallel_workers(num):
    """Default worker count of ops that take ``num_parallel_workers``. More than the CPU count warns;
    more than ``max(64, 4 x CPUs)`` is refused (``ValueError``)."""
    _store.check_int_type(num, "num")
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
    _options.update(auto_num_workers=_store.check_bool(enable))


def get_auto_num_workers():
    """Whether worker counts are chosen automatically (``set_auto_num_workers``)."""
    return _options.snapshot().auto_num_workers


def set_enable_shared_mem(enable):
    _options.update(enable_shared_mem=_store.check_bool(enable))


def get_enable_shared_mem():
    return _options.snapshot().enable_shared_mem


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
    _options.update(numa_enable=_store.check_bool(numa_enable, "numa_enable"))


def get_numa_enable():
    """Whether the pipeline binds to a NUMA node (``set_numa_enable``)."""
    return _options.snapshot().numa_enable


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
    _store.check_seconds_type(timeout, "timeout")
    if not 0 <= timeout <= INT32_MAX:  # also refuses NaN
        raise ValueError(f"timeout must be a number of seconds in [0, INT32_MAX({INT32_MAX})], but got {timeout}.")
    _forkserver.set_idle_timeout(timeout)


def get_helper_idle_timeout():
    """Seconds the helper process of worker processes and its spares stay once idle (a float;
    ``set_helper_idle_timeout``)."""
    return _forkserver.idle_timeout()

