"""The device queue: a background thread that reads batches, moves them towards the device and
keeps at most ``depth`` of them ready (MindSpore's sink-mode queue, on the host side). Used by
the framework adapters (through ``headrace._feed``) and by ``headrace.dataset.dataloader`` (its
``timeout``).

NOTE [ device queue ]
    consumer thread                         feeder thread (daemon, one per epoch)
    Feeder.get() <- Handoff(depth) <-       pull() -> transfer(batch) -> put
The thread puts ``("batch", value, state)`` per batch, ``("end", None, state)`` after the last
one of the epoch, or ``("error", exc, None)`` when ``pull`` or ``transfer`` raised (it then
ends). ``state`` is the reader's checkpoint taken right after that batch was read, so a consumer
checkpoints what it has *received*, not what the thread has read ahead. Every wait has a timeout
and rechecks: the consumer notices a thread that ended without a word, the thread notices
``stop()``. ``stop()`` sets the flag, drains the queue (a blocked ``put`` returns), and joins.
An owner that will not read on first calls ``request_stop()`` (the flag and the drain), then
closes the reader, which wakes a thread waiting inside ``pull`` for a worker, then joins. The
thread holds only the reader, the queue and the flag, never the loader, so a dropped loader is
collected and its finalizer stops the thread; nor does it keep a batch it has handed over.

The queue is a :class:`Handoff`, not a ``queue.Queue``: a training step returns to ``get`` with
the queue full and the feeder waiting for room, and ``queue.Queue`` then runs its condition
machinery (several lock operations and a ``notify`` in Python) on the training thread, cold after
the step: about 45 us a batch on the 2-core VM, against 5 us for a bare call. The hand-off pops
from a deque and wakes a waiting side by releasing a lock of its own (one C call).
"""
from __future__ import annotations

import _thread
import atexit
import collections
import queue
import threading
import time
import weakref
from typing import Any, Callable
from headrace._util.errors import add_note

POLL_S = 0.1
JOIN_S = 10.0
EXIT_JOIN_S = 2.0  # at interpreter exit, the longest wait for the feeder threads still running
HISTORY = 10  # push times and queue sizes kept for the status report
_clock = time.perf_counter
LOOP_STEP_S = 1e-3  # a loop away this long from its last batch steps between batches (see Ahead)


class Handoff:
    """A bounded FIFO from one producer thread to one consumer thread.

    ``get`` is a deque pop when an item is ready; a side that must wait announces it in a flag,
    checks again, and sleeps on a lock that the other side releases after its next append or pop.
    A wake-up may be stale (the sleeper had found its answer before sleeping) and waits end at a
    timeout, so both sides loop and recheck; the flags are read and written under the GIL.
    """

    def __init__(self, depth: int) -> None:
        self.depth = max(1, depth)
        self._dq: collections.deque = collections.deque()
        self._room = _thread.allocate_lock()   # released by get() for a producer waiting for room
        self._ready = _thread.allocate_lock()  # released by put() for a consumer waiting for an item
        self._room.acquire()
        self._ready.acquire()
        self._producer_waits = False
        self._consumer_waits = False

    def qsize(self) -> int:
        return len(self._dq)

    def put(self, item: Any, timeout: float) -> bool:
        """Appends ``item`` once there is room; False if ``timeout`` seconds (about) passed without."""
        dq = self._dq
        if len(dq) >= self.depth:
            self._producer_waits = True
            if len(dq) >= self.depth:
                self._room.acquire(True, timeout)
            self._producer_waits = False
            if len(dq) >= self.depth:
                return False
        dq.append(item)
        if self._consumer_waits:
            _wake(self._ready)
        return True

    def get(self, timeout: float) -> Any:
        """The oldest item; ``queue.Empty`` if none came within ``timeout`` seconds (about)."""
        dq = self._dq
        try:
            item = dq.popleft()
        except IndexError:
            self._consumer_waits = True
            if not dq:
                self._ready.acquire(True, timeout)
            self._consumer_waits = False
            try:
                item = dq.popleft()
            except IndexError:
                raise queue.Empty from None
        if self._producer_waits:
            _wake(self._room)
        return item

    def clear(self) -> None:
        self._dq.clear()
        _wake(self._room)


def _wake(lock: Any) -> None:
    try:
        lock.release()
    except RuntimeError:  # released already: an earlier wake-up not taken yet
        pass


class FeederStats:
    """What the feeder thread did, for the status report (written by the thread only)."""

    def __init__(self) -> None:
        self.have_sent = 0
        self.first_push: tuple[float, float] | None = None
        self.pushes: collections.deque = collections.deque(maxlen=HISTORY)  # (start, end) of a transfer
        self.queue_sizes: collections.deque = collections.deque(maxlen=HISTORY)  # ready batches after a put


def _feed(pull: Callable[[], tuple[Any, Any]], transfer: Callable[[Any], Any], q: Handoff,
          stop: threading.Event, stats: FeederStats) -> None:
    def put(item: tuple) -> bool:
        while not stop.is_set():
            if q.put(item, POLL_S):
                return True
        return False

    clock = time.time
    while not stop.is_set():
        try:
            batch, state = pull()
        except StopIteration as end:
            put(("end", None, end.value))
            return
        except BaseException as e:  # noqa: BLE001 - every failure goes to the consumer
            put(("error", e, None))
            return
        if stop.is_set():
            return
        try:
            start = clock()
            value = transfer(batch)
            finish = clock()
        except BaseException as e:  # noqa: BLE001
            put(("error", e, None))
            return
        stats.pushes.append((start, finish))
        if stats.first_push is None:
            stats.first_push = (start, finish)
        stats.have_sent += 1
        if not put(("batch", value, state)):
            return
        batch = value = None  # handed over: the consumer alone decides when the batch is freed
        stats.queue_sizes.append(q.qsize())


class Feeder:
    """Runs one epoch of ``pull`` (returns ``(batch, state)``, raises ``StopIteration(state)`` at
    the end) through ``transfer`` on a daemon thread, ``depth`` batches ahead.

    ``get()`` returns ``("batch", value, state)`` or ``("end", None, state)`` and raises what the
    thread raised.
    """

    def __init__(self, pull: Callable[[], tuple[Any, Any]], transfer: Callable[[Any], Any], depth: int,
                 name: str) -> None:
        self._q = Handoff(depth)
        self._stop = threading.Event()
        self.stats = FeederStats()
        self._thread = threading.Thread(target=_feed, args=(pull, transfer, self._q, self._stop, self.stats),
                                        name=name, daemon=True)
        self._thread.start()
        _live.add(self)

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    def ready(self) -> int:
        """Batches waiting in the queue."""
        return self._q.qsize()

    def get(self, timeout: float | None = None) -> tuple[str, Any, Any] | None:
        """The next item; None if ``timeout`` seconds pass without one (None: wait as long as the
        thread lives)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                kind, value, state = self._q.get(POLL_S)
            except queue.Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    return None
                if not self._thread.is_alive() and not self._q.qsize():
                    if self._stop.is_set():
                        raise RuntimeError("The device queue was stopped; start a new epoch to read again.") from None
                    raise RuntimeError("The device queue thread ended without delivering the rest of the "
                                       "epoch or an error.") from None
                continue
            if kind == "error":
                add_note(value, f"(raised in headrace's device queue thread {self._thread.name!r})")
                raise value
            return kind, value, state

    def request_stop(self) -> None:
        """Tells the thread to leave at its next check, without waiting for it."""
        self._stop.set()
        self._drain()

    def stop(self, timeout: float = JOIN_S) -> bool:
        """Stops the thread (it leaves at its next check); True once it has ended."""
        self.request_stop()
        self._thread.join(timeout)
        self._drain()
        return not self._thread.is_alive()

    def _drain(self) -> None:
        self._q.clear()


class Made:
    """A batch transferred ahead, in the pipeline's prefetch thread (see ``Direct``); ``pending``:
    converted there, but left for the loop's thread to transfer."""

    __slots__ = ("value", "start", "finish", "error", "pending")

    def __init__(self, value: Any, start: float, finish: float, error: BaseException | None,
                 pending: bool = False) -> None:
        self.value, self.start, self.finish, self.error, self.pending = value, start, finish, error, pending


class Ahead:
    """``Direct``'s transfer as the pipeline's prefetch thread runs it on the rows it makes (it
    holds the transfer only: nothing that keeps the pipeline alive).

    A transfer marked ``lets_go_of_gil`` (JAX's put) is left to the loop's thread (the prefetch
    thread only converts the row) when the loop is waiting for the row as it is done, or when the
    loop does not step between batches (``loop_steps``, which ``Direct`` keeps: the loop spent
    less than ``LOOP_STEP_S`` away from its last batch). A put in the prefetch thread must take
    the GIL back from the other running threads, which holds up the next row, and JAX arrays made
    in one thread and freed in another wait on a lock of JAX's in their destructor (~2% of the
    loop's time in a profile of W1 over worker processes). A loop that steps, though, finds its
    batches put: with every put in the loop's thread, the feed workload's loop waited ~130 us
    more per 10 ms step, while a put costs ~4 us an array in a loop that takes batches back to
    back.

    Measured 2026-11-28 (2-core VM; variants back to back; W1 with 2 workers through headrace.jax,
    rows/s against NumPy output, ``benchmarks/adapter_cost.py --step jax``; the feed workload, the
    share of its 10 ms steps the loop waits):
    - this rule: W1 over worker processes 0.960 (60 pairs); feed 0.49% and 0.55%;
    - every batch put in the loop's thread: W1 over processes 0.973 and 0.959 (40 and 60 pairs),
      over threads 0.924 (30); feed 1.84% and 1.94%;
    - put ahead unless the loop waits (before): W1 over processes 0.928 and 0.933, over threads
      0.925; feed 0.51%;
    - (earlier) every batch put ahead: W1 over threads 0.893."""

    def __init__(self, transfer: Callable[[Any], Any], convert: Callable[[Any], Any] | None) -> None:
        self._transfer = transfer
        self._convert = convert  # the iterator's conversion of an engine row, or None
        self._defer = bool(getattr(transfer, "lets_go_of_gil", False))
        # the loop steps between batches (set by Direct.get; until it has seen one, so that the
        # first batches are put before the loop asks for them)
        self.loop_steps = True

    def __call__(self, row: Any, loop_waiting: bool = False) -> Made:
        if type(row) is Made:  # made ahead already (a released thread's row, handed on)
            return row
        start = time.time()
        try:
            if self._convert is not None:
                row = self._convert(row)
            if self._defer and (loop_waiting or not self.loop_steps):
                return Made(row, start, start, None, pending=True)
            value, error = self._transfer(row), None
        except Exception as e:  # noqa: BLE001 - raised by Direct.get, in the loop's thread
            value, error = None, e
        return Made(value, start, time.time(), error)


class Direct:
    """A :class:`Feeder` without its thread, for a transfer that costs microseconds (torch tensors
    on the CPU, nothing to pin: ``torch.from_numpy``): the pipeline's own prefetch thread is the
    queue (``ready``: its rows made ahead) and transfers the rows it makes (``ahead``, which the
    owner gives the run); ``get`` transfers, in the caller's thread, the rows made there.

    So a batch crosses one thread boundary when the loop works between batches (a training
    step; the transfer is done by then: ``torch.from_numpy`` right after a 10 ms sleep took
    ~170 us against ~5 us warm on the 2-core VM), and none when the loop takes batches as fast
    as they come and the run has let its prefetch thread go. A feeder thread is a second
    hand-off, whose wake-ups and switches of the GIL cost the main process ~150 us of CPU a batch
    on W1 with worker processes (0.27 cores against 0.13 for NumPy output: CPU taken from the
    workers). ``get`` raises what ``pull`` or ``transfer`` raised."""

    def __init__(self, pull: Callable[[], tuple[Any, Any]], transfer: Callable[[Any], Any],
                 ready: Callable[[], int], convert: Callable[[Any], Any] | None = None,
                 transferred: Callable[[], None] | None = None) -> None:
        self._pull = pull
        self._transfer = transfer
        self._ready = ready
        self._transferred = transferred  # told when get() has transferred a row in the caller's thread
        self.ahead = Ahead(transfer, convert)  # for rows the prefetch thread makes: converted first
        self._returned = 0.0  # when get() last returned a batch (0.0: not yet)
        self.stats = FeederStats()

    def get(self, timeout: float | None = None) -> tuple[str, Any, Any]:
        asked = _clock()
        if self._returned:
            self.ahead.loop_steps = asked - self._returned >= LOOP_STEP_S
        try:
            batch, state = self._pull()
        except StopIteration as end:
            return "end", None, end.value
        if type(batch) is Made:
            error = batch.error
            if error is not None:
                add_note(error, "(raised converting the batch in the pipeline's prefetch thread)")
                try:
                    raise error
                finally:  # the exception will hold this frame: the frame must not hold it
                    error = batch = None
            if batch.pending:  # converted ahead, transferred below (see Ahead)
                batch = batch.value
            else:
                value, start, finish = batch.value, batch.start, batch.finish
                batch = None
        if batch is not None:  # transferred here, in the caller's thread
            start = time.time()
            value = self._transfer(batch)
            finish = time.time()
            batch = None
            if self._transferred is not None:
                self._transferred()
        stats = self.stats
        stats.pushes.append((start, finish))
        if stats.first_push is None:
            stats.first_push = (start, finish)
        stats.have_sent += 1
        stats.queue_sizes.append(self._ready())
        self._returned = _clock()
        return "batch", value, state

    def request_stop(self) -> None:
        pass

    def stop(self, timeout: float = JOIN_S) -> bool:
        return True


_live: "weakref.WeakSet[Feeder]" = weakref.WeakSet()


@atexit.register
def _stop_at_exit() -> None:
    """Ends the feeder threads still running at interpreter exit (an epoch's generator left
    suspended, a loader never closed), so that none is torn down by the finalizing interpreter
    while inside a framework's native code. That aborted the process when a closed
    ``headrace.jax.Loader`` left its device thread running ("terminate called ... FATAL: exception
    not rethrown", 3 exits in 14; ``close`` now ends that thread). A thread waiting inside its
    pipeline ends when the pipeline's own exit handler closes it."""
    feeders = list(_live)
    for f in feeders:
        f.request_stop()
    deadline = time.monotonic() + EXIT_JOIN_S
    for f in feeders:
        f.thread.join(max(0.0, deadline - time.monotonic()))
