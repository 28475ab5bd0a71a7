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
