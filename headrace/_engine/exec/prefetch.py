"""The prefetch thread at the top of a pipeline: the pass runs while the consumer works.

One :class:`Prefetcher` serves one pass: a daemon thread calls ``produce()`` (the tree's
``__next__``) and appends rows to a deque of at most ``capacity`` rows; the consumer pops them.
The end of the pass and an error travel through the deque in order, after the rows before them.
The consumer counts what it took, so a checkpoint is "rows delivered", whatever is prefetched.

Handing a row over costs a deque append and pop; the condition variable is only touched when a
side finds the deque empty (consumer) or full (producer) and says it is waiting. Every wait is
bounded and re-checks that the other side is still there.
"""
from __future__ import annotations

import collections
import threading
import time
from typing import Any, Callable

from headrace._engine.exec.native_threads import hold_one_blas_thread, release_blas_threads
from headrace._engine.exec.ordered import POLL, PoolClosed
from headrace._engine.machine import bind_thread

_END = object()
_clock = time.perf_counter


class _Failure:
    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


class Prefetcher:
    def __init__(self, produce: Callable[[], Any], capacity: int, name: str = "headrace-prefetch",
                 cpus: str = "", timed: bool = False) -> None:
        self._produce = produce
        self._cpus = cpus  # a CPU list to run on (numa_enable), or ""
        self._capacity = max(1, int(capacity))
        self._dq: collections.deque = collections.deque()
        self._cond = threading.Condition(threading.Lock())
        self._consumer_waiting = False
        self._producer_waiting = False
        self._stop = False
        self._release = False  # release(): end after the current row, keeping what was made
        self._timed = timed  # keep make_s (two clock reads a row: only for a run judging this thread)
        self.make_s = 0.0  # moving average: seconds a row took to make
        self._done = False
        # The thread makes no row before start() has returned. Thread.start() waits for the new
        # thread to run; a thread that went on to make rows at once (GIL-bound map workers woken)
        # kept the starting thread from the GIL: a headrace.torch loader made anew each epoch of W1
        # over threads spent 7-12 ms starting this thread, and its epochs ~12 ms longer than with
        # no prefetch thread started ahead; with this wait, none longer (2026-11-28).
        self._go = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._blas_held = True
        hold_one_blas_thread()  # the pass runs ops on this thread: NOTE [ BLAS in map threads ]
        try:
            self._thread.start()
        except BaseException:
            self._let_blas_go()
            raise
        self._go.set()

    def _let_blas_go(self) -> None:
        """Ends this thread's BLAS hold, once: when the pass has made its last row (before the
        consumer can see its end) or the thread ends."""
        if self._blas_held:
            self._blas_held = False
            release_blas_threads()

    # ---- producer side ------------------------------------------------------------------------
    def _run(self) -> None:
        self._go.wait()
        bind_thread(self._cpus)
        dq, cap, produce = self._dq, self._capacity, self._produce
        clock, timed = _clock, self._timed
        try:
            while not (self._stop or self._release):
                if len(dq) >= cap and not self._wait_for_room():
                    return
                try:
                    if timed:
                        start = clock()
                        item = produce()
                        self.make_s += 0.2 * ((clock() - start) - self.make_s)
                    else:
                        item = produce()
                except StopIteration:
                    item = _END
                except PoolClosed:
                    return
                except BaseException as e:  # noqa: BLE001 - handed to the consumer in order
                    if self._stop:
                        return
                    item = _Failure(e)
                if item is _END or type(item) is _Failure:
                    self._let_blas_go()
                dq.append(item)
                if self._consumer_waiting:
                    with self._cond:
                        self._cond.notify()
                if item is _END or type(item) is _Failure:
                    item = None  # the failure's frames hold this frame: no cycle through a local
                    return
                item = None  # handed over: while the next row is made, this frame must not keep this one
        finally:
            self._let_blas_go()
            self._done = True
            with self._cond:
                self._cond.notify_all()

    def _wait_for_room(self) -> bool:
        with self._cond:
            self._producer_waiting = True
            try:
                while len(self._dq) >= self._capacity and not (self._stop or self._release):
                    self._cond.wait(POLL)
            finally:
                self._producer_waiting = False
        return not (self._stop or self._release)

    # ---- consumer side ------------------------------------------------------------------------
    def get(self) -> Any:
        """The next row; raises StopIteration at the end of the pass, or the pipeline's error."""
        dq = self._dq
        try:
            item = dq.popleft()
        except IndexError:
            item = self._wait_for_item()
        if self._producer_waiting:
            with self._cond:
                self._cond.notify()
        if item is _END:
            raise StopIteration
        if type(item) is _Failure:
            try:
                raise item.exc
            finally:  # the exception will hold this frame: the frame must not hold it (no cycle)
                item = None
        return item

    def _wait_for_item(self) -> Any:
        dq = self._dq
        with self._cond:
            self._consumer_waiting = True
            try:
                while not dq:
                    if self._done or self._stop:
                        if dq:
                            break
                        raise RuntimeError("the pipeline's prefetch thread stopped without finishing the pass.")
                    self._cond.wait(POLL)
            finally:
                self._consumer_waiting = False
            return dq.popleft()

    def stop(self, timeout: float = 5.0) -> bool:
        """Stops the thread (after the call it is in, if any) and drops what was prefetched.

        Returns whether the thread has ended (it may still be inside a slow call).
        """
        self._stop = True
        with self._cond:
            self._cond.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)
        self._dq.clear()
        return not self._thread.is_alive()

    def release(self) -> None:
        """Ends the thread once the call it is in (if any) returns, keeping what it made: ``get``
        then hands out those rows, and the end of the pass or an error among them, in order, while
        ``pending()``; after that the caller reads the tree itself. Waits for the thread, as ``get``
        would wait for its row."""
        if self._release and not self._thread.is_alive():
            return
        self._release = True
        with self._cond:
            self._cond.notify_all()
        while self._thread.is_alive():
            self._thread.join(POLL)

    def pending(self) -> bool:
        """Whether rows (or the pass's end, or an error) made before ``release`` are left."""
        return bool(self._dq)

    @property
    def consumer_waiting(self) -> bool:
        """Whether the consumer is waiting for a row now (the queue was empty when it asked)."""
        return self._consumer_waiting

    def size(self) -> int:
        """Rows made and not yet taken (the pass's end, or an error, made last, is not a row)."""
        dq = self._dq
        n = len(dq)
        if n:
            try:
                last = dq[-1]
            except IndexError:  # taken meanwhile
                return 0
            if last is _END or type(last) is _Failure:
                n -= 1
        return n

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()
