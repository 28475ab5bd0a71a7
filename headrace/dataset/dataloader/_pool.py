"""DataLoader workers: ``num_workers`` processes, batches assigned to them round-robin, results
delivered in order or as they come, at most ``num_workers * prefetch_factor`` batches ahead.

Each DataLoader worker is a *lane*: a one-process engine pool (``ProcessPool``; it starts the
process by fork, through headrace's fork server, or by spawn, carries results through shared
memory and reports a dead worker, see NOTE [ worker shutdown ] in
``headrace/_engine/exec/process_pool.py``) and a thread that sends the pool the tasks assigned
to that worker, oldest first and one at a time, and posts each result to one queue::

    caller: __next__ -> assign(task) -> lane w: deque -> pool w (one process, WorkerProgram)
            results queue <- (w, epoch, order, rows, error) <- lane w's thread

One pool per worker (not one pool of ``num_workers``) because an engine pool returns results in
submission order only; with one per worker the caller can take whichever worker finished first
(``in_order=False``). One task at a time because an engine worker that has its next task queued
holds a quick result back to send it with the next one (``process_worker.py``): a quick batch
would wait for a slow one.

Flow control: the caller assigns ``num_workers * prefetch_factor`` tasks when an epoch starts and
one more each time it delivers a batch (or a worker reports the end of its iterator or an
error), so at most that many batches are fetched ahead of what the caller took. With
``in_order=True`` tasks go to the workers in turn (skipping workers whose iterator ended) and
batches are delivered in task order; with ``in_order=False`` a task goes to the next worker in
turn with fewer than its share of the tasks in flight, and a batch is delivered when it arrives.

Shutdown (``close()``, idempotent; a finalizer calls it when the iterator is dropped): the lanes'
threads are told to stop, each pool is closed (EOF to its worker, join, SIGTERM, SIGKILL) which
also wakes a thread waiting on it, then the threads are joined with a timeout.
"""
from __future__ import annotations

import collections
import queue
import threading
import time
import weakref
from typing import Any, Callable

from headrace._engine.exec.ordered import POLL, PoolClosed
from headrace._engine.exec.process_pool import ProcessPool
from headrace._util.errors import PipelineError, add_note
from headrace.dataset.dataloader._worker import FETCH, INIT, NEXT, WorkerProgram

JOIN_TIMEOUT = 2.0
_SKIP = object()  # an order that delivers no batch (its worker's iterator had ended)


class _Lane:
    """DataLoader worker ``index``: its one-process pool, and the thread that sends the pool the
    tasks assigned to the worker, one at a time, and posts each result."""

    def __init__(self, index: int, pool: ProcessPool, results: queue.Queue) -> None:
        self.index = index
        self.pool = pool
        self._results = results
        self._todo: collections.deque = collections.deque()  # (epoch, order, payload) not yet sent
        self._cond = threading.Condition()
        self._stop = False
        self._thread = threading.Thread(target=self._run, name=f"headrace-dataloader-worker-{index}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def assign(self, epoch: int, order: int, payload: tuple) -> None:
        with self._cond:
            self._todo.append((epoch, order, payload))
            self._cond.notify()

    def forget(self) -> None:
        """Drops the tasks not yet sent to the worker (an epoch left early)."""
        with self._cond:
            self._todo.clear()

    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify()

    def join(self, timeout: float) -> None:
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        try:
            while True:
                with self._cond:
                    while not (self._stop or self._todo):
                        self._cond.wait(POLL)
                    if self._stop:
                        return
                    epoch, order, payload = self._todo.popleft()
                self.pool.submit((0, epoch, order, (payload,), 0))
                rows, err = self.pool.get()
                self._results.put((self.index, epoch, order, rows, err))
                rows = err = None  # the caller may raise err: this frame must not keep it (and its traceback)
        except PoolClosed:
            return
        except BaseException as e:  # noqa: BLE001 - the worker died or the pool failed: tell the caller
            self._results.put((self.index, None, None, None, e))


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has exited (no longer exists, or is a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def _close_lanes(lanes: list[_Lane]) -> None:
    for lane in lanes:
        lane.stop()
    for lane in lanes:
        lane.pool.close()
    deadline = time.monotonic() + JOIN_TIMEOUT
    for lane in lanes:
        lane.join(max(0.0, deadline - time.monotonic()))


def start_lanes(programs: list[WorkerProgram], options: Any, results: queue.Queue) -> list[_Lane]:
    """One lane per program; every pool is started before any lane's thread, so that all workers
    start the same way (a process with threads forks its workers through the fork server)."""
    pools: list[ProcessPool] = []
    try:
        for p in programs:
            pools.append(ProcessPool(p, 1, f"DataLoader worker {p.worker_id}", options, depth=1))
    except BaseException:
        for pool in pools:
            pool.close()
        raise
    lanes = [_Lane(i, pool, results) for i, pool in enumerate(pools)]
    for lane in lanes:
        lane.assign(-1, -1, (INIT, None))
        lane.start()
    return lanes


class WorkerIter:
    """The iterator of a DataLoader with workers (see the module notes): one worker per program;
    ``sampler`` gives the tasks of a map-style dataset (None: iterable, each worker reads its own
    iterator); ``length`` is the loader's length. It holds no reference to the loader, which holds
    it when its workers persist."""

    def __init__(self, programs: list[WorkerProgram], sampler: Any, *, persistent: bool, in_order: bool,
                 timeout: float, prefetch_factor: int, options: Any, length: Callable[[], int]) -> None:
        self._sampler = sampler
        self._iterable = sampler is None
        self._persistent = persistent
        self._in_order = in_order
        self._timeout = timeout
        self._length = length
        n = self._n = len(programs)
        self._limit = n * prefetch_factor
        self._results: queue.Queue = queue.Queue()
        self._lanes = start_lanes(programs, options, self._results)
        self._finalizer = weakref.finalize(self, _close_lanes, self._lanes)
        self._closed = False
        self._epoch = -1
        self.reset()

    def reset(self) -> None:
        """Starts an epoch (persistent workers: on the same workers)."""
        self._epoch += 1
        for lane in self._lanes:
            lane.forget()
        self._indices = None if self._iterable else iter(self._sampler)
        self._active = [True] * self._n   # False once a worker's iterator has ended
        self._in_flight = [0] * self._n   # tasks per worker whose result has not arrived
        self._ready: dict[int, Any] = {}  # order -> batch, error or _SKIP (arrived, not delivered)
        self._next = 0                     # the order to deliver next (in order)
        self._assigned = 0                 # tasks assigned this epoch
        self._last = -1                    # the worker the last task went to
        for _ in range(self._limit):
            if not self._assign():
                break

    def _assign(self) -> bool:
        """Assigns the next task to a worker; False when there is none (sampler or workers done)."""
        if self._closed:
            return False
        active = sum(self._active)
        if not active:
            return False
        if self._iterable:
            payload: tuple = (NEXT, None)
        else:
            try:
                payload = (FETCH, next(self._indices))  # type: ignore[arg-type]
            except StopIteration:
                return False
        share = sum(self._in_flight) // active + 1
        for k in range(1, self._n + 1):
            w = (self._last + k) % self._n
            if self._active[w] and (self._in_order or self._in_flight[w] < share):
                break
        self._lanes[w].assign(self._epoch, self._assigned, payload)
        self._in_flight[w] += 1
        self._assigned += 1
        self._last = w
        return True

    def __iter__(self) -> "WorkerIter":
        return self

    def __len__(self) -> int:
        return self._length()

    def __next__(self) -> Any:
        got = self._take()
        if isinstance(got, BaseException):  # a worker's error, in its batch's place
            try:
                raise got
            finally:
                got = None  # this frame is in the traceback: holding the error there would be a cycle
        return got

    def _take(self) -> Any:
        """The next batch, or the error a worker raised in its place."""
        while True:
            if self._in_order:
                while self._next in self._ready:
                    got = self._ready.pop(self._next)
                    self._next += 1
                    self._assign()
                    if got is not _SKIP:
                        return got
                done = self._next >= self._assigned
            else:
                done = not sum(self._in_flight)
            if done or self._closed:
                self._end()
                raise StopIteration
            w, epoch, order, rows, err = self._wait()
            if epoch is None:  # the lane failed: its worker died, or its pool broke
                lost = self._lost(w, err)
                self.close()
                raise lost
            if epoch != self._epoch and order != -1:
                continue  # a result of an epoch left early
            if order == -1:  # a worker's set-up
                if err is not None:
                    self.close()
                    raise self._error(err)
                continue
            self._in_flight[w] -= 1
            got = self._error(err) if err is not None else rows[0][0] if rows else _SKIP
            if got is _SKIP:
                self._active[w] = False
            if self._in_order:
                self._ready[order] = got
            else:
                self._assign()
                if got is not _SKIP:
                    return got

    def _wait(self) -> tuple:
        deadline = time.monotonic() + self._timeout if self._timeout else None
        while True:
            wait = POLL if deadline is None else min(POLL, max(0.0, deadline - time.monotonic()))
            try:
                return self._results.get(timeout=wait)
            except queue.Empty:
                pass
            if deadline is not None and time.monotonic() >= deadline:
                raise RuntimeError(f"DataLoader timed out waiting for data after {self._timeout} seconds.")
            for lane in self._lanes:
                if not lane.alive() and self._results.empty():
                    self.close()
                    raise RuntimeError(f"DataLoader worker {lane.index} stopped without a reason.")

    @staticmethod
    def _error(err: BaseException) -> BaseException:
        """A worker's report as the caller sees it: without the engine pool's note, which names the
        process by its index in its one-process pool."""
        if type(err) is not RuntimeError:
            return err  # the engine's own (e.g. a batch that could not be pickled)
        out = type(err)(*err.args)
        out.__cause__ = err.__cause__
        for note in getattr(err, "__notes__", [])[:-1]:  # the pool's note comes last
            add_note(out, note)
        return out

    def _lost(self, w: int, err: BaseException) -> BaseException:
        """The error for a lane that failed: MindSpore's words for a worker that is gone (the
        engine's report, with its exit code or signal, as the cause), else the engine's error."""
        pids = self._lanes[w].pool.pids
        if not isinstance(err, PipelineError) or not pids or not _gone(pids[0]):
            return err
        out = RuntimeError(f"DataLoader worker (pid(s): {pids[0]}) exited unexpectedly.")
        out.__cause__ = err
        return out

    def _end(self) -> None:
        if not self._persistent:
            self.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Stops the workers. Idempotent."""
        self._closed = True
        self._finalizer()
