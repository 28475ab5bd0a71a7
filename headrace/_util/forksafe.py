"""Locks that a forked child gets back unlocked.

A fork copies only the thread that called it. A lock that another thread held at that moment
stays locked in the child, and nothing there will release it: the child's first ``with lock``
waits forever. headrace's own threads (a loader's read-ahead, a pipeline's prefetch and map
threads) take module locks while they run, so a user's fork at any moment (torch DataLoader
workers over ``as_iterable_dataset``, a ``multiprocessing`` pool) could inherit one held: a
DataLoader worker hung in the BLAS thread lock that way, 1 run in 50-60 of a test that forks
right after reading a ``headrace.torch.Loader``.

A lock made by :func:`fork_safe` is reset to unlocked in every forked child, before the child's
own code runs (``os.register_at_fork``); an ``RLock`` that the forking thread itself holds is
left as it is, since that thread, the child's only one, will release it. A plain ``Lock`` has no
owner to ask: the locks registered are ones whose holders never fork inside them. A module whose
lock guards state that must be reset with it (a count of holders) registers its own hook for
that state.
"""
from __future__ import annotations

import os
import weakref
from typing import TypeVar

L = TypeVar("L")

_locks: weakref.WeakSet = weakref.WeakSet()


def fork_safe(lock: L) -> L:
    """``lock`` (a ``threading.Lock`` or ``RLock``), registered to be unlocked in forked children.

    Examples:
        >>> import threading
        >>> lock = fork_safe(threading.Lock())
        >>> lock.acquire()
        True
        >>> _after_fork_in_child()   # what a child forked now runs
        >>> lock.locked()
        False
        >>> mine = fork_safe(threading.RLock())
        >>> with mine:              # held by the thread that forks: kept, that thread releases it
        ...     _after_fork_in_child()
        ...     mine._is_owned()
        True
    """
    _locks.add(lock)
    return lock


def _after_fork_in_child() -> None:
    for lock in list(_locks):
        owned = getattr(lock, "_is_owned", None)  # (an RLock's: held by this thread)
        if owned is None or not owned():
            # (CPython's own reset of a lock in a forked child, which threading and logging use
            # for theirs; the child is single-threaded here, so nothing else can hold it)
            lock._at_fork_reinit()


os.register_at_fork(after_in_child=_after_fork_in_child)
