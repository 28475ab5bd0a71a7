"""The thread-pool watchdog: closing a pool never waits for the watchdog's lock.

A run dropped without ``stop()`` is closed by its finalizer, which the garbage collector runs in
whatever thread allocates at the time, the watchdog's own included while it holds its lock. When
closing a pool took that lock, the watchdog deadlocked with itself, and the next pipeline built
in the process hung for good (seen in the suite, in tests/dataset/test_mindspore_checks.py)."""
import threading

from headrace._engine.exec import watchdog


class _Pool:
    """What the watchdog reads of a thread pool."""

    def __init__(self):
        self.watch = ("map[f]", 60.0, 0)
        self._running = {}


def _pool():
    return _Pool()


def test_a_pool_closed_while_the_watchdog_lock_is_held_does_not_wait():
    pool = _pool()
    watchdog.watch_thread_pool(pool)
    done = threading.Event()

    def close_under_the_lock():  # what a finalizer run by the GC inside the watchdog thread does
        with watchdog._threads._cond:
            watchdog.unwatch_thread_pool(pool)
        done.set()

    threading.Thread(target=close_under_the_lock, daemon=True).start()
    assert done.wait(30)
    assert pool.watched is False


def test_the_watchdog_drops_closed_pools_and_leaves_when_none_is_left():
    a, b = _pool(), _pool()
    watchdog.watch_thread_pool(a)
    watchdog.watch_thread_pool(b)
    watchdog.unwatch_thread_pool(a)
    with watchdog._threads._cond:
        assert watchdog._threads._live() == [b]
        assert list(watchdog._threads._pools) == [b]
    watchdog.unwatch_thread_pool(b)
    thread = watchdog._threads._thread
    if thread is not None:
        thread.join(30)       # it notices at its next tick (at most MAX_TICK seconds)
        assert not thread.is_alive()
    assert list(watchdog._threads._pools) == []


def test_the_watchdog_thread_ends_when_its_last_pool_closes_not_at_its_next_tick(monkeypatch):
    # A thread left behind makes the fork of a process that ran a pipeline warn on Python 3.12
    # ("This process is multi-threaded"), as torch's DataLoader forks its workers.
    import numpy as np

    import headrace.dataset as ds
    monkeypatch.setattr(watchdog, "MAX_TICK", 3600.0)  # its next tick would be an hour away
    data = ds.NumpySlicesDataset({"x": np.arange(12)}, shuffle=False).map(lambda x: x + 1, num_parallel_workers=2)
    assert [int(r[0]) for r in data.create_tuple_iterator(num_epochs=1, output_numpy=True)] == list(range(1, 13))
    thread = watchdog._threads._thread  # the finished iterator was dropped: its run closed its pools
    assert thread is not None or not [t for t in threading.enumerate() if t.name == "headrace-watchdog"]
    if thread is not None:
        thread.join(60)
        assert not thread.is_alive()
    assert not [t for t in threading.enumerate() if t.name == "headrace-watchdog"]


def test_a_forked_child_gets_a_watchdog_of_its_own():
    import os
    pool = _pool()
    watchdog.watch_thread_pool(pool)
    parent = watchdog._threads
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        ok = watchdog._threads is not parent and watchdog._threads._thread is None
        child_pool = _pool()
        watchdog.watch_thread_pool(child_pool)
        thread = watchdog._threads._thread
        ok = ok and thread is not None and thread.is_alive()
        watchdog.unwatch_thread_pool(child_pool)
        thread.join(60)
        ok = ok and not thread.is_alive()
        os.write(w, b"1" if ok else b"0")
        os._exit(0)
    os.close(w)
    assert os.read(r, 1) == b"1"
    os.close(r)
    os.waitpid(pid, 0)
    thread = parent._thread
    assert thread is not None and thread.is_alive()  # the parent's still watches its pool
    watchdog.unwatch_thread_pool(pool)
    thread.join(60)
    assert not thread.is_alive()


def test_the_watchdog_works_when_its_pipe_is_numbered_past_1024(monkeypatch):
    # select() refuses descriptors from 1024 up; a process with many files open gets such numbers
    import os
    import resource
    failures = []
    monkeypatch.setattr(threading, "excepthook", lambda args: failures.append(args.exc_value))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1100:
        import pytest
        pytest.skip(f"the hard limit on open files is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1100), hard))
    base_r, base_w = os.pipe()
    high = [base_r, base_w]
    try:
        while high[-1] < 1030:  # the next descriptors made are numbered past 1024
            high.append(os.dup(base_r))
        watch = watchdog._ThreadWatch()
        assert watch._wake_r > 1024
        pool = _pool()
        watch.add(pool)
        thread = watch._thread
        watch.discard(pool)
        thread.join(60)
        assert not thread.is_alive() and failures == []  # it ended by leaving, not by an error
        watch.close_pipe()
    finally:
        for fd in high:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
