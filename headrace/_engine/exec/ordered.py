"""Ordered pools: tasks go in, results come out in submission order.

Three pools share one small interface (``submit``, ``get``, ``pending``, ``capacity``,
``discard``, ``close``) so a stage does not care where its tasks run:

* :class:`InlinePool` runs a task in the caller's thread when its result is asked for (serial).
* :class:`ThreadPool` runs tasks on daemon threads, for work that releases the GIL.
* ``workers.ProcessPool`` runs them in worker processes (see NOTE [ worker shutdown ] there).

``last_seconds`` is how long the task behind the last ``get()`` ran (stages size their tasks by
it). ``discard()`` forgets everything in flight without waiting for it (a reset or a skip); the pool
stays usable. Every wait is bounded and re-checks whether the pool was closed: a closed pool makes
waiters raise :class:`PoolClosed`, which the prefetch thread treats as "stop".
"""
from __future__ import annotations

import collections
import threading
import time
from typing import Any, Callable

from headrace._engine.exec.native_threads import hold_one_blas_thread, release_blas_threads
from headrace._engine.machine import bind_thread

_clock = time.perf_counter
_get_ident = threading.get_ident

POLL = 0.1  # seconds between liveness checks while waiting


def thread_name(ident: int) -> str:
    """The name of the live thread ``ident`` (for messages), or ``thread <ident>``."""
    for t in threading.enumerate():
        if t.ident == ident:
            return t.name
    return f"thread {ident}"


class PoolClosed(Exception):
    """The pool was closed while a caller was waiting on it."""


class _Watched:
    """A pool the watchdog looks at while it is open (``watch``: op name, seconds before a stall
    warning, timeout or 0; None: not watched). ``_running`` maps a thread id to what it runs."""

    watch: tuple[str, float, float] | None

    def _watch_start(self) -> None:
        if self.watch is not None:
            from headrace._engine.exec import watchdog  # noqa: PLC0415 - watchdog imports stage
            watchdog.watch_thread_pool(self)

    def _watch_stop(self) -> None:
        if self.watch is not None:
            from headrace._engine.exec import watchdog  # noqa: PLC0415 - watchdog imports stage
            watchdog.unwatch_thread_pool(self)


class _InlineEntry:
    """What the watchdog reads of a task run in the reading thread (see ``_Entry``)."""

    __slots__ = ("started", "reports", "timed_out")

    def __init__(self, started: float) -> None:
        self.started = started
        self.reports = 0
        self.timed_out = None


class InlinePool(_Watched):
    """Runs each task in the calling thread, lazily: ``get()`` runs the oldest submitted task."""

    def __init__(self, run: Callable[[Any], Any], capacity: int = 1,
                 watch: tuple[str, float, float] | None = None) -> None:
        self._run = run
        self._tasks: collections.deque = collections.deque()
        self.capacity = capacity
        self.num_workers = 1
        self.last_seconds = 0.0
        # watch: (op name, seconds before a stall warning, 0): the watchdog reports a task that
        # runs too long in the reading thread too (it cannot fail it: that thread is the one stuck)
        self.watch = watch
        self._running: dict[int, _InlineEntry] = {}
        self._watch_start()

    @property
    def pending(self) -> int:
        return len(self._tasks)

    def submit(self, task: Any) -> None:
        self._tasks.append(task)

    def get(self) -> Any:
        t = _clock()
        if self.watch is None:
            try:
                return self._run(self._tasks.popleft())
            finally:
                self.last_seconds = _clock() - t
        entry = _InlineEntry(t)
        ident = _get_ident()
        self._running[ident] = entry
        try:
            return self._run(self._tasks.popleft())
        finally:
            del self._running[ident]
            self.last_seconds = _clock() - t

    def discard(self) -> None:
        self._tasks.clear()

    def close(self) -> None:
        self._tasks.clear()
        self._watch_stop()


class _Entry:
    __slots__ = ("task", "result", "exc", "done", "dropped", "taken", "seconds", "started", "reports",
                 "timed_out", "ident")

    def __init__(self, task: Any) -> None:
        self.task = task
        self.result = None
        self.exc: BaseException | None = None
        self.done = threading.Event()
        self.dropped = False
        self.taken = False  # a thread (a worker, or the reader itself) runs it
        self.seconds = 0.0
        self.started = 0.0  # when a thread began running it (the watchdog reads these three)
        self.reports = 0    # stall warnings issued about it
        self.timed_out: BaseException | None = None
        self.ident = 0      # the thread that ran it


class ThreadPool(_Watched):
    """``num_workers`` daemon threads taking tasks in order; results are read in order.

    A reader whose next result no worker has started yet runs that task itself instead of
    waiting: with GIL-bound work this saves two thread switches per task and never slows down
    work that releases the GIL.
    """

    def __init__(self, run: Callable[[Any], Any], num_workers: int, name: str = "headrace",
                 capacity: int | None = None, watch: tuple[str, float, float] | None = None,
                 cpus: str = "") -> None:
        self._run = run
        self._cpus = cpus  # a CPU list the threads run on (numa_enable), or ""
        self.num_workers = num_workers
        self.capacity = capacity or num_workers * 2
        self._queue: collections.deque[_Entry] = collections.deque()   # waiting for a thread
        self._inflight: collections.deque[_Entry] = collections.deque()  # in submission order
        self._cond = threading.Condition()
        self._closed = False
        self.last_seconds = 0.0
        self.last_thread = 0  # id of the thread that ran the task behind the last get()
        # watch: (op name, seconds before a stall warning, timeout or 0); see watchdog.py.
        self.watch = watch
        self._running: dict[int, _Entry] = {}  # thread id -> the task it runs
        # With a timeout the reader never runs a task itself: it must stay free to raise.
        self._reader_runs = not (watch and watch[2])
        self._threads: list[threading.Thread] = []
        hold_one_blas_thread()  # NOTE [ BLAS in map threads ] (released by close)
        try:
            for i in range(num_workers):
                t = threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True)
                t.start()
                self._threads.append(t)
        except BaseException:
            self.close()  # the threads started so far leave; none is left behind
            raise
        self._watch_start()

    @property
    def pending(self) -> int:
        return len(self._inflight)

    def submit(self, task: Any) -> None:
        if self._closed:
            raise PoolClosed
        entry = _Entry(task)
        self._inflight.append(entry)
        with self._cond:
            self._queue.append(entry)
            self._cond.notify()

    def _work(self) -> None:
        bind_thread(self._cpus)
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                entry = self._queue.popleft()
                if entry.dropped or entry.taken:
                    continue
                entry.taken = True
            self._execute(entry)

    def _execute(self, entry: _Entry) -> None:
        t = entry.started = _clock()
        ident = entry.ident = _get_ident()
        self._running[ident] = entry
        try:
            entry.result = self._run(entry.task)
        except BaseException as e:  # noqa: BLE001 - handed to the reader in order
            entry.exc = e
        del self._running[ident]
        entry.seconds = _clock() - t
        entry.task = None
        entry.done.set()

    def get(self) -> Any:
        entry = self._inflight.popleft()
        if not entry.taken and self._reader_runs:
            with self._cond:
                mine = not entry.taken
                entry.taken = True
            if mine:
                self._execute(entry)
        while not entry.done.wait(POLL):
            if self._closed:
                raise PoolClosed
        if entry.timed_out is not None:
            raise entry.timed_out
        self.last_seconds = entry.seconds
        self.last_thread = entry.ident
        if entry.exc is not None:
            try:
                raise entry.exc
            finally:  # the exception will hold this frame: neither may hold it (no cycle)
                entry.exc = entry = None  # type: ignore[assignment]
        try:
            return entry.result
        finally:  # nor may the entry, which _execute's frame holds (nor a local here)
            entry.result = None

    def discard(self) -> None:
        for e in self._inflight:
            e.dropped = True
        self._inflight.clear()
        with self._cond:
            self._queue.clear()

    def close(self) -> None:
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._queue.clear()
            self._cond.notify_all()
        release_blas_threads()
        self._inflight.clear()
        self._watch_stop()
        deadline = time.monotonic() + 2.0
        me = threading.current_thread()
        for t in self._threads:
            if t is not me:
                t.join(max(0.0, deadline - time.monotonic()))
