"""Worker processes for stages that run Python functions (``python_multiprocessing=True``).

A :class:`ProcessPool` runs one stage program (``stage_program.StageProgram``: read by index -> maps ->
filter / batch) in ``num_workers`` processes and returns the results in submission order. It
has the same small interface as the in-process pools in ``ordered.py``.

NOTE [ worker shutdown ]
~~~~~~~~~~~~~~~~~~~~~~~~
Queues, for one iterator (arrows are the direction data moves)::

    consumer thread  <- prefetch deque <- prefetch thread: tree.__next__ -> StageIter
                                                               |  submit(task)   ^ get() in order
                                                               v                 |
    main process, per worker w:   task pipe  (seq, pickle head, segment ref, spans) -----> worker w
                                  result pipe <----- ("ready", pid, page) | (seq, head, ref, spans)
    shared memory:  task slots (written by main, read by w), result slots and progress page (written
                    by w, read by main)

    worker w:  main thread:    task pipe -> program.run(task) -> result pipe
               watcher thread: waits for the task pipe's hang-up only (EOF or a new parent pid:
               unlink own segment names and leave at once, even while a task is running)
               reader thread:  only once a result would not fit in the result pipe: task pipe ->
               inbox deque -> main thread (so the worker keeps reading tasks while it is blocked
               sending, and the main process, blocked writing a task, gets to read results)

Starting. A process with threads must not fork: a lock another thread holds at that moment
(OpenCV's pool, BLAS, a busy pipeline's threads, JAX) stays held forever in the child. So:

* ``'fork'`` (MindSpore's default; MindSpore accepts only 'fork' and 'spawn'): when
  ``/proc/self/task`` shows a single thread, this process forks the workers itself (the program
  is inherited, nothing is pickled). Otherwise, the usual case (NumPy's OpenBLAS alone starts
  threads), the per-process fork server (``forkserver.py``: a clean single-threaded process
  started from ``sys.executable`` on first use, preloading NumPy, OpenCV and headrace) forks
  them: the program goes as a cloudpickle blob (``launch.py``; lambdas and closures travel;
  large buffers are shared copy-on-write through one anonymous file), the pipe ends as
  ``SCM_RIGHTS``. Functions of importable modules travel by reference, so a worker sees those
  modules' globals as a fresh import leaves them (as with spawn). A program that cannot be
  pickled is named in a RuntimeWarning and its workers are forked from this process after all
  (it worked before, and MindSpore forks too), with the deadlock risk the warning states. The
  same for a program whose data (out-of-band buffers: an in-memory source) exceeds a quarter of
  the memory left: one copy of it could exhaust memory, a fork shares it.
* ``'spawn'``: each worker is a new interpreter reading the same blob; a program that cannot be
  pickled is a TypeError naming the op, when the pipeline starts.

The server reaps its workers and reports each exit status to this process (which cannot
waitpid a grandchild), and signals them on request (only it can tell a reused pid from its
worker). A worker leaving on SIGTERM dies of the signal again after cleaning up, so any death
by signal is reported as "killed by signal N (NAME)", never as "exited with code 0".

Invariants:

1. Order. Task ``seq`` goes to worker ``seq % n``; results are read in ``seq`` order, so output
   order is input order. A discarded task (reset, skip) is still read, and dropped.
2. Flow control. At most ``depth`` tasks per worker are in flight (``capacity = n * depth``;
   ``depth`` adapts to the result size: 2 for big batches, up to 16 for small ones, about
   ``DEPTH_BYTES`` per worker). Each task carries the index of a slot that is free in both
   directions (the main process picks the lowest free one and frees it when the result has been
   copied out), so a worker never uses more slots than tasks it has in flight. A worker holds
   the results of quick tasks back while its next task is already queued, and writes them with a
   later one's (one wake-up of the main process per few cheap tasks): at most ``MAX_HELD``
   results, from tasks that took under ``HOLD_SECONDS`` in all; errors and large messages are
   never held. Each worker writes the task it runs into its progress page (a shared page the main
   process maps when the worker is ready), so a death or a stall names that task exactly.
3. Payloads. Rows of plain arrays (results, and rows sent to map workers) go to the sender's
   slot as raw frames described by (dtype, shape, offset); any other payload is pickled with
   buffers of at least ``shm.THRESHOLD`` bytes out of band in the slot. Only the header and the
   slot's reference go through the pipe; the receiver copies out at once. A slot is an
   anonymous memfd that its writer keeps open and its reader opens as ``/proc/<writer>/fd/<n>``:
   nothing is ever named, so no SIGKILL (of one process or the whole group) can leave a segment
   behind. Without memfd, a slot is a ``/dev/shm`` name with the pool's prefix that the receiver
   unlinks the first time it maps it. Slots reserve their pages: no room (``ShmFull``: a full
   ``/dev/shm``, or too little memory for an anonymous one) or ``enable_shared_mem=False`` sends
   the payload through the pipe instead: slower, never a SIGBUS.
4. Waiting. Every wait in the main process polls with a short timeout and re-checks: pool closed
   (-> ``PoolClosed``), worker exited (-> a ``PipelineError`` naming pid, exit code or signal and
   the stage). Workers poll for their parent's death the same way.
5. Shutdown, in this order (``close()``, idempotent; the iterator's finalizer and an atexit hook
   call it as back-ups): mark closed (waiters leave within one poll); close our task-pipe ends
   (EOF = "exit now"); join all workers against one 2 s deadline; SIGTERM the stragglers, join
   0.5 s; SIGKILL what is left; close result pipes; close mappings and their fds; unlink every
   segment name with the pool's prefix (named fallback only). Nothing in flight survives a close.
   The fork server outlives pools (one per process); at exit, after the pools, it is told to go.
6. No orphans. A worker's task pipe has one write end, in the main process, so the main
   process's death is EOF for every worker, wherever it was forked (self-forked children close
   every parent-side pipe end of every live pool). Workers also poll their parent's pid and ask
   for SIGTERM when their parent dies (``PR_SET_PDEATHSIG``, from a single-threaded parent only:
   the signal follows the creating *thread*; the fork server always qualifies). The fork server
   leaves on EOF on its socket (only the main process holds the other end; a process forked from
   it closes its copy) and takes its remaining workers along (SIGTERM, then SIGKILL). A worker
   leaving unlinks every name with the pool's prefix (named fallback), so a main process killed
   outright leaves no worker, server or segment behind.
7. Threads inside workers. Spawned and fork-server workers start with OMP/OpenBLAS/MKL/numba/
   OpenCV thread counts set to 1 in their environment (before NumPy loads); all workers call the
   libraries' own setters (OpenCV, numba, and BLAS/OpenMP found among the loaded shared objects),
   so N workers do not each start a pool of all cores (``native_threads.py``).

Modules: ``forkserver.py`` (the parent's handle on the server), ``forkserver_proc.py`` (the
server's own loop and its spare workers), ``launch.py`` (the program blob and its cache, the thread
check, handles on started workers), ``process_start.py`` (starting the workers; the handle on
each), ``native_threads.py`` (invariant 7), ``shm.py`` (slots), ``process_wire.py`` (framing,
depth), ``process_worker.py`` (the worker's main loop), this file (the pool: tasks in, results
out in order, failures, shutdown).
"""
from __future__ import annotations

import atexit
import itertools
import math
import multiprocessing
import multiprocessing.connection as mpc
import os
import pickle
import signal
import threading
import time
from typing import Any

from headrace._engine import options as _options
from headrace._engine.exec import process_start, shm, watchdog, worker_warnings
from headrace._engine.exec.ordered import POLL, PoolClosed
from headrace._engine.exec.process_start import WorkerStarts, _Worker, _warn_once
from headrace._engine.exec.process_wire import _LIVE, _PARENT_FDS, DEPTH_BYTES, MAX_DEPTH, running_task
from headrace._util.errors import PipelineError, add_note, detached
from headrace._util.wording import setting

JOIN_TIMEOUT = 2.0

_POOL_IDS = itertools.count()
_atexit_done = False
_warned = process_start._warned  # the warnings given once per process (tests reset them here)


def _close_all_at_exit() -> None:
    for pool in list(_LIVE):
        pool.close()


class ProcessPool(WorkerStarts):
    """``num_workers`` processes running ``program.run(task)``; results in submission order.
    ``columns``: the columns its tasks work on, named when a worker dies (None: not one op's)."""

    def __init__(self, program: Any, num_workers: int, name: str, options: Any, depth: int | None = None,
                 columns: tuple[str, ...] | None = None) -> None:
        global _atexit_done
        self.name = name
        self.columns = columns
        self.num_workers = num_workers
        self._fixed_depth = None if depth is None else max(1, min(MAX_DEPTH, depth))  # None: adapt
        self._avg_bytes = 0.0
        self._closed = False
        self._broken: BaseException | None = None  # raised (a detached copy) by every later call
        self._lock = threading.RLock()  # guards pipe use against a concurrent close()
        self._close_lock = threading.Lock()
        self._submitted = 0
        self._received = 0
        self._dropped: set[int] = set()
        self._prefix = f"hr{os.getpid():x}_{next(_POOL_IDS)}_"
        self._timeout = float(getattr(options, "multiprocessing_timeout_interval", 300))
        self._worker_timeout = float(getattr(options, "worker_timeout", 0))
        if not getattr(options, "watchdog", True):  # no stall reports; the run refused a timeout
            self._timeout, self._worker_timeout = math.inf, 0.0
        self._options = options if isinstance(options, _options.Options) else _options.snapshot()
        method = getattr(options, "multiprocessing_start_method", "fork")
        if method == "fork" and "fork" not in multiprocessing.get_all_start_methods():
            method = "spawn"  # pragma: no cover - platforms without fork
        self.start_method = method
        self.use_shm = bool(getattr(options, "enable_shared_mem", True)) and self._shm_usable()
        self._reader = shm.Reader()
        self._task_slots = [[shm.Slot(f"{self._prefix}w{w}t{k}") for k in range(MAX_DEPTH)]
                            for w in range(num_workers)]
        self._free = [list(range(MAX_DEPTH)) for _ in range(num_workers)]  # slot indices per worker
        self._slot_of: dict[int, int] = {}
        self._span_of: dict[int, tuple[int, int, int]] = {}  # seq -> (pass, first sample, rows)
        self.last_seconds = 0.0
        self._workers: list[_Worker] = []
        if not _atexit_done:
            _atexit_done = True
            atexit.register(_close_all_at_exit)
        _LIVE.add(self)
        try:
            self._start(program)
        except BaseException:
            self.close()
            raise

    # ---- the pool interface -----------------------------------------------------------------
    @property
    def pending(self) -> int:
        return self._submitted - self._received - len(self._dropped)

    @property
    def depth(self) -> int:
        """Tasks in flight per worker: about DEPTH_BYTES of results, between 2 and MAX_DEPTH."""
        if self._fixed_depth is not None:
            return self._fixed_depth
        if not self._avg_bytes:
            return 2
        return max(2, min(MAX_DEPTH, int(DEPTH_BYTES // self._avg_bytes)))

    @property
    def capacity(self) -> int:
        return self.num_workers * self.depth

    def submit(self, task: Any) -> None:
        # Tasks dropped by discard() keep their slot until their result is read: free the slot
        # this task needs by reading (and throwing away) the oldest dropped results.
        while not self._free[self._submitted % self.num_workers]:
            if not self._receive_dropped():
                raise RuntimeError(f"{self.name}: no free task slot for worker "
                                   f"{self._submitted % self.num_workers} (more tasks in flight than capacity)")
        with self._lock:
            self._check()
            seq = self._submitted
            n = self.num_workers
            worker = self._workers[seq % n]
            free = self._free[seq % n]
            k = min(free)
            slot = self._task_slots[seq % n][k] if self.use_shm else None
            seed, p, start, items, num = task
            head: Any
            name: str | None
            spans: Any
            if type(items) is list:  # rows for the workers' maps: as frames where they can be
                head, name, spans = shm.pack_rows((seed, p, start, num), items, slot, on_full=_warn_shm_full)
            elif type(items) is range and items.step == 1:  # consecutive source indices: two ints
                head, name, spans = (seed, p, start, num, items.start, items.stop), None, None
            else:  # source indices (an int64 array): small, in band, in this message's pickle
                head, name, spans = ((seed, p, start, num), items), None, None
            try:
                worker.task.send_bytes(pickle.dumps((seq, k, head, name, spans), protocol=5))
            except (OSError, ValueError):
                # The worker is gone, but results it sent before may still wait in its pipe: the
                # task counts as sent, and reading reaches the first result it never sent, where
                # _receive reports the death with the task it died on.
                self._check()
            free.remove(k)
            self._slot_of[seq] = k
            self._span_of[seq] = (p, start, len(items))
            self._submitted = seq + 1

    def _receive_dropped(self) -> bool:
        """Reads and throws away the oldest result if its task was dropped; False if it was not."""
        with self._lock:
            self._check()
            seq = self._received
            if seq >= self._submitted or seq not in self._dropped:
                return False
        self._take(seq)
        return True

    def _take(self, seq: int) -> tuple | None:
        """Receives result ``seq`` (the oldest) and frees its slot; None if its task was dropped."""
        worker = self._workers[seq % self.num_workers]
        msg = self._receive(worker, seq)
        with self._lock:
            self._received = seq + 1
            _, head, name, spans, shm_full = msg
            if shm_full:
                _warn_shm_full()
            k = self._slot_of.pop(seq)
            self._span_of.pop(seq, None)
            key = (worker.index, k)
            size = shm.payload_bytes(head, spans)
            self._avg_bytes = size if not self._avg_bytes else 0.8 * self._avg_bytes + 0.2 * size
            try:
                if seq in self._dropped:
                    self._dropped.discard(seq)
                    if name is not None and not name.startswith("/proc/"):
                        self._reader.get(key, name)  # map (and unlink) it; the data is not wanted
                    return None
                return shm.unpack_rows(head, name, spans, self._reader, key)
            except OSError as e:  # an anonymous segment is opened through its writer's /proc entry
                # A writer killed just after sending is gone from /proc before its exit status
                # arrives (the fork server reports it): wait for that status, up to JOIN_TIMEOUT.
                if worker.exitcode(JOIN_TIMEOUT) is not None:
                    # it died in a task after the last result it sent (whose data died with it)
                    raise self._died(worker, self._last_sent(worker, seq) + self.num_workers) from None
                self._broken = PipelineError(self.name, f"the shared memory of worker process {worker.pid} "
                                             f"(worker {worker.index}) could not be opened: {e}")
                add_note(self._broken, f"{setting('enable_shared_mem', 'False')} sends the data through pipes.")
                raise self._broken from e
            finally:
                self._free[worker.index].append(k)  # copied out: the slot may carry the next task

    def get(self) -> Any:
        while True:
            with self._lock:
                self._check()
                seq = self._received
                if seq >= self._submitted:
                    raise RuntimeError("get() on a pool with nothing in flight")
            got = self._take(seq)
            if got is None:
                continue
            head, rows = got
            err, cause, self.last_seconds = head[0], head[1], head[2]
            worker = self._workers[seq % self.num_workers]
            if len(head) > 4 and head[4]:  # warnings raised in the worker (worker_warnings.py)
                worker_warnings.reissue(head[4])
            if err is not None:
                if cause is not None:
                    err.__cause__ = cause
                add_note(err, f"in worker {worker.index} (pid {worker.pid}) of {self.name}")
            if len(head) > 3 and head[3] is not None:  # a profiled program's timing
                return rows, err, head[3]
            return rows, err

    def discard(self) -> None:
        with self._lock:
            self._dropped.update(range(self._received, self._submitted))

    def _check(self) -> None:
        if self._broken is not None:
            raise detached(self._broken)  # a copy: the pool must not hold what holds its frames
        if self._closed:
            raise PoolClosed

    def _receive(self, worker: "_Worker", seq: int) -> tuple:
        wait = None  # made after the first empty poll (not per result: this is the hot path)
        while True:
            with self._lock:
                self._check()
                try:
                    ready = worker.readable(POLL)
                    data = worker.result.recv_bytes() if ready else None
                except (EOFError, OSError):
                    self._check()
                    raise self._died(worker, seq) from None
            if data is not None:
                msg = pickle.loads(data)
                if msg[0] == "ready":
                    worker.pid = msg[1]
                    worker.ready = True
                    if len(msg) > 2 and msg[2] is not None:
                        try:
                            worker.progress = shm.attach(msg[2])
                        except OSError:  # (gone already: its death is read next)
                            pass
                    continue
                if msg[0] == "stall":  # the worker's answer to a report request (watchdog.py)
                    if wait is not None:
                        self._stalled(wait.answer(msg[1]))
                    continue
                if msg[0] == "fatal":
                    self._broken = PipelineError(self.name, f"worker process {worker.pid} (worker {worker.index}) "
                                                 "failed to start.", python_stack=msg[1])
                    raise detached(self._broken)
                return msg
            if not worker.alive():
                with self._lock:
                    if worker.readable(0):
                        continue  # it wrote something before exiting; read that first
                    raise self._died(worker, seq)
            if wait is None:
                wait = watchdog.ProcessWait(self.name, worker, self._timeout, self._worker_timeout, POLL,
                                            task=lambda: self._task_of(seq), columns=self.columns)
            self._stalled(wait.poll())

    def _stalled(self, err: PipelineError | None) -> None:
        if err is not None:  # the worker timeout ran out: the pool cannot go on, and the stuck
            self._broken = err  # worker is stopped now (close: EOF, then SIGTERM, then SIGKILL)
            self.close()
            raise err

    def _died(self, worker: "_Worker", seq: int | None = None) -> PipelineError:
        """The error for a worker that is gone; ``seq``: the task whose result it never sent."""
        code = worker.exitcode(wait=1.0)
        hint = None
        if code is None:
            how = "closed its pipe"
        elif code < 0:
            sig = -code
            try:
                sname = signal.Signals(sig).name
            except ValueError:
                sname = f"signal {sig}"
            how = f"was killed by signal {sig} ({sname})"
            if sig == signal.SIGKILL:
                hint = ("SIGKILL without a reason is often the out-of-memory killer: use fewer "
                        "num_parallel_workers, a smaller batch or a smaller prefetch.")
        else:
            how = f"exited with code {code}"
        index, at = self._task_of(seq)
        err = PipelineError(self.name, f"worker process {worker.pid} (worker {worker.index}) {how} while "
                            f"the pipeline was running{at}.", columns=self.columns, index=index)
        if hint:
            add_note(err, hint)
        self._broken = detached(err)
        return err

    @staticmethod
    def _last_sent(worker: "_Worker", seq: int) -> int:
        """The task of the last result a dead worker sent (``seq`` or a later one still in its pipe)."""
        try:
            while worker.readable(0):
                msg = pickle.loads(worker.result.recv_bytes())
                if type(msg[0]) is int:
                    seq = msg[0]
        except (EOFError, OSError, pickle.UnpicklingError):
            pass
        return seq

    def _task_of(self, seq: int | None) -> tuple[int | None, str]:
        """``(sample index, text)`` naming what a worker that is dead or stuck was running, where
        ``seq`` is the first task whose result it has not sent. Its progress page names the task it
        is in (a later one when it held results back: process_wire.MAX_HELD); without one (no shared
        memory), task ``seq`` or the next, since such a worker holds one result back. The index is
        given when that leaves one sample."""
        if seq is None or seq in self._dropped:
            return None, ""
        worker = self._workers[seq % self.num_workers]
        running = None if worker.progress is None else running_task(worker.progress)
        if running is not None and running >= seq and running in self._span_of:
            tasks: tuple[int, ...] = (running,)
        else:
            tasks = (seq, seq + self.num_workers)
        spans = [sp for sp in (self._span_of.get(s) for s in tasks) if sp is not None]
        if not spans:
            return None, ""
        p = spans[0][0]
        names = [f"{first}" if rows == 1 else f"{first} to {first + rows - 1}" for _, first, rows in spans]
        if len(spans) == 1 and spans[0][2] == 1:
            return spans[0][1], f", running sample {names[0]} of pass {p}"
        return None, f", running samples {' or '.join(names)} of pass {p}"

    # ---- shutdown (see NOTE [ worker shutdown ]) --------------------------------------------
    def close(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        # A sender blocked on a full task pipe holds the lock; then the workers are stopped
        # first (which breaks its pipe) and the pipes closed after.
        if self._lock.acquire(timeout=0.5):
            try:
                self._close_task_pipes()
            finally:
                self._lock.release()
        deadline = time.monotonic() + JOIN_TIMEOUT
        for wk in self._workers:
            wk.join(max(0.0, deadline - time.monotonic()))
        stragglers = [wk for wk in self._workers if wk.alive()]
        for wk in stragglers:
            wk.signal(signal.SIGTERM)
        for wk in stragglers:
            wk.join(0.5)
        for wk in stragglers:
            if wk.alive():
                wk.signal(signal.SIGKILL)
                wk.join(1.0)
        with self._lock:
            self._close_task_pipes()
            for wk in self._workers:
                _PARENT_FDS.discard(wk.result_fd)
                _close_conn(wk.result)
                wk.release()
            self._reader.close()
            for slots in self._task_slots:
                for s in slots:
                    s.close()
            if self.use_shm and not shm.memfd_usable():
                shm.unlink_prefix(self._prefix)
        _LIVE.discard(self)

    def _close_task_pipes(self) -> None:
        for wk in self._workers:  # EOF on its task pipe tells a worker to exit now
            _PARENT_FDS.discard(wk.task_fd)
            _close_conn(wk.task)

    @property
    def pids(self) -> list[int]:
        return [wk.pid for wk in self._workers]


def _close_conn(conn: mpc.Connection) -> None:
    try:
        conn.close()
    except OSError:
        pass


def _warn_shm_full() -> None:
    _warn_once("shm-full", "/dev/shm is full; payloads that do not fit travel through pipes instead "
               "(slower). Give the container more shared memory (docker run --shm-size=...).")
