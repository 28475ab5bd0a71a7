"""Stuck user functions explain themselves: which op, column, sample, worker and Python stack.

A task (one sample, or one batch when a batch sits in the same stage; rows per task shrink to one
for slow functions) that runs ``interval`` seconds (the ``multiprocessing_timeout_interval`` setting,
300 by default) gets a :class:`~headrace._util.errors.WorkerStallWarning` in the main process, then
another one at 2x, 4x, 8x ... that time while it still runs. With a ``worker_timeout`` of ``s``
seconds (0, off, by default) a task that runs ``s`` seconds fails the pipeline with
:class:`~headrace._util.errors.WorkerTimeoutError` instead.

NOTE [ finding the stuck sample ]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Nothing is recorded per row: the engine's own frames already hold the op and the sample index
(``MapFn.apply``'s ``self`` and ``index``, ``_one_map``'s ``m`` and ``pos``, ...). :func:`locate`
walks the stuck thread's stack (``sys._current_frames()``) from the innermost frame outwards to
the first engine frame it knows and reads them there; the frames inside it are the user's stuck
call. Reading another thread's stack needs the GIL, which a call blocked in ``time.sleep``, a
lock or I/O has released, and a pure-Python loop hands over every few milliseconds.

* Thread workers: one watchdog thread per process (started with the first watched pool, ticking
  at most once a second) looks at every busy task of every live :class:`ThreadPool`; each task
  records its thread and start time (two stores per task, none per row).
* Worker processes: each worker runs a "doctor" thread waiting for SIGUSR1 (blocked in the
  worker's other threads, so it never interrupts the user's call). The main process, waiting for
  a worker's result (``ProcessPool._receive``), sends the signal when a report is due; the doctor
  locates the worker's main thread and writes ``("stall", info)`` to the result pipe under the
  pipe's write lock. A worker whose main thread holds the GIL in native code cannot answer: after
  ``ANSWER_WAIT`` seconds the report goes out without the stack, and says why.

NOTE [ the timeout counts the worker's time on the task ]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The main process starts a task's clock when it starts waiting for the result, which on a busy
machine can be well before the worker runs the task: a worker process still starting (fork or
spawn, imports) has not received it, and a worker between tasks has not begun it. A timeout
reported then would blame "the call" with a stack of the worker's own loop, and no user code in
it. So the clock restarts when the worker becomes ready, and when the worker's answer to the
timeout's request says it is not inside an op (its result is then on the way, or the task not
begun); a second such answer a full timeout later fails the task, saying the worker never began
it. Thread workers stamp a task when a thread begins it, so there the clock is the task's own.
"""
from __future__ import annotations

import _thread
import dis
import os
import pickle
import select
import signal
import sys
import threading
import time
import traceback
import warnings
import weakref
from typing import Any, Callable

from headrace._engine.exec import stage_program as _program
from headrace._engine.ops import batch as _batch, map as _map, source as _source
from headrace._util.errors import NO_STACK, WorkerStallWarning, WorkerTimeoutError, stall_report

ANSWER_WAIT = 2.0   # seconds the main process waits for a worker's stack before reporting without it
# ... before failing a task that timed out without it: the error is final and its stack what the
# user needs, and on a busy machine a worker's answer can take more than ANSWER_WAIT
TIMEOUT_ANSWER_WAIT = 6.0
MAX_TICK = 1.0      # the thread watchdog looks at busy tasks at least this often
_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


# ---- locating the stuck sample (NOTE [ finding the stuck sample ]) ---------------------------

NOT_ENTERED = ("(no Python frame of the op's function under the op's own: the function is not written in "
               "Python, or the call had not begun)")

_table: dict | None = None
_read_lines: frozenset = frozenset()
_c_lines: frozenset = frozenset()


def _locators() -> dict:
    global _table, _read_lines, _c_lines
    if _table is None:
        one_map = _program._one_map.__code__
        # _one_map calls the source's read directly: the lines that do tell a read from a map call.
        _read_lines = frozenset(ins.positions.lineno for ins in dis.get_instructions(one_map)  # type: ignore[union-attr]
                                if ins.opname.startswith("LOAD") and ins.argval == "rd")
        # ... and the lines that call its C loop (headrace/_native/_rows.c), which says in ``phase``
        # whether it reads or maps row len(out)
        _c_lines = frozenset(ins.positions.lineno for ins in dis.get_instructions(one_map)  # type: ignore[union-attr]
                             if ins.opname.startswith("LOAD") and ins.argval == "read_map")
        t: dict = {one_map: _at_one_map}
        for fn in (_map.MapFn.__call__, _map.MapFn.apply, _map.MapFn.finish, _map.FilterFn.apply):
            t[fn.__code__] = _at_map
        for fn in (_batch.BatchFn.__call__, _batch.BatchFn._make):  # type: ignore[assignment]
            t[fn.__code__] = _at_batch
        t[_source.ReadFn.__call__.__code__] = _at_read
        _table = t
    return _table


def _at_map(loc: dict) -> tuple:
    me = loc["self"]
    return me.name, me.in_names, loc.get("index"), None


def _at_batch(loc: dict) -> tuple:
    me = loc["self"]
    op = "batch operation: [per_batch_map]" if me.pbm is not None else "batch operation"
    return op, loc.get("names"), loc.get("num"), None


def _file_of(source: Any, index: Any) -> str | None:
    try:
        return getattr(source, "file_of", lambda i: None)(index)
    except Exception:  # noqa: BLE001 - a report must not fail
        return None


def _at_read(loc: dict) -> tuple:
    me = loc["self"]
    return me.name, None, loc.get("index"), _file_of(me.source, loc.get("index"))


def _at_one_map(loc: dict, lineno: int | None = None) -> tuple:
    if lineno in _c_lines:  # in the C loop: row len(out) of the task, being read or mapped
        k = len(loc["out"])
        if not loc["phase"][0]:
            read, item = loc["read"], loc["items"][k]
            return read.name, None, item, _file_of(read.source, item)
        m = loc["m"]
        return m.name, m.in_names, loc["pos"] + k, None
    if lineno in _read_lines:
        read, item = loc["read"], loc.get("item")
        return read.name, None, item, _file_of(read.source, item)
    m = loc["m"]
    return m.name, m.in_names, loc.get("pos"), None


def locate(frame: Any, fallback_op: str) -> dict:
    """What the thread whose innermost frame is ``frame`` is stuck in.

    Returns ``op``, ``columns``, ``index``, ``file`` (None where unknown), ``stack``: the
    formatted frames of the stuck call (most recent call last), or None without a frame, and
    ``in_op``: whether the thread is inside an op at all.
    """
    info = {"op": fallback_op, "columns": None, "index": None, "file": None, "stack": None, "in_op": False}
    if frame is None:
        return info
    frames = []
    f = frame
    while f is not None:
        frames.append(f)
        f = f.f_back
    frames.reverse()  # outermost first
    table = _locators()
    start = None
    for k in range(len(frames) - 1, -1, -1):
        at = table.get(frames[k].f_code)
        if at is None:
            continue
        try:
            loc = frames[k].f_locals
            got = _at_one_map(loc, frames[k].f_lineno) if at is _at_one_map else at(loc)
            op, cols, index, file = got
            info.update(op=op, columns=list(cols) if cols else None, file=file,  # type: ignore[arg-type]
                        index=int(index) if index is not None else None)  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001 - a frame without the expected locals: keep the fallback
            pass
        start = k + 1 if k + 1 < len(frames) else k
        info["in_op"] = True
        break
    if start is None:  # no engine frame: the frames after the last of headrace's own
        start = 0
        for k, fr in enumerate(frames):
            if os.path.abspath(fr.f_code.co_filename).startswith(_PACKAGE):
                start = k + 1
        start = min(start, len(frames) - 1)
    summary = traceback.StackSummary.extract(((fr, fr.f_lineno) for fr in frames[start:]), lookup_lines=True)
    stack = "".join(summary.format()).rstrip("\n")
    if info["in_op"] and start == len(frames) - 1 and table.get(frames[start].f_code) is not None:
        stack += "\n" + NOT_ENTERED  # the op's own frame is the innermost: no user frame in it
    info["stack"] = stack
    return info


def _warn(text: str) -> None:
    """Issues a :class:`WorkerStallWarning` (from the watchdog thread or the pool's wait, so no
    caller's line is meaningful: the location printed is ``<headrace watchdog>``)."""
    warnings.warn_explicit(text, WorkerStallWarning, "<headrace watchdog>", 0, module="headrace.watchdog")


def _thread_names() -> dict[int, str]:
    return {t.ident: t.name for t in threading.enumerate() if t.ident is not None}


def describe_thread(ident: int, fallback_op: str) -> dict:
    """:func:`locate` for the thread ``ident`` of this process, with its name."""
    info = locate(sys._current_frames().get(ident), fallback_op)
    info["thread"] = _thread_names().get(ident, f"thread {ident}")
    return info


# ---- thread workers ---------------------------------------------------------------------------

class _ThreadWatch:
    """The watchdog thread of this process over the busy tasks of every watched thread pool;
    it runs while some pool is watched.

    A pool is watched when it has ``watch = (name, interval, timeout)`` and a ``_running`` dict
    (thread id -> entry with ``started``, ``reports``, ``timed_out`` and ``done``).
    """

    def __init__(self) -> None:
        self._pools: "weakref.WeakSet[Any]" = weakref.WeakSet()
        self._cond = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        # The thread waits on this pipe between ticks; a byte written wakes it (a write takes no lock).
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._waiter = select.poll()  # (poll, not select: a process can hold fds past select's 1024)
        self._waiter.register(self._wake_r, select.POLLIN)

    def add(self, pool: Any) -> None:
        with self._cond:
            pool.watched = True
            self._pools.add(pool)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="headrace-watchdog", daemon=True)
                self._thread.start()
        self.poke()

    def poke(self) -> None:
        """Wakes the thread (to look at a new pool, or to leave when none is watched)."""
        try:
            os.write(self._wake_w, b"!")
        except OSError:  # the pipe is full (a wake-up is pending anyway) or closed
            pass

    def discard(self, pool: Any) -> None:
        # Takes no lock: pools are closed by run finalizers, which the garbage collector runs in
        # whatever thread allocates at the time, this watchdog's own included while it holds the
        # lock (a lock here deadlocked it). The watchdog wakes, drops the pool and, when it was
        # the last, ends: a thread left behind for its next tick (up to a second) made a fork
        # right after a pipeline warn on Python 3.12 ("This process is multi-threaded").
        pool.watched = False
        self.poke()

    def close_pipe(self) -> None:
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:  # pragma: no cover
                pass

    def _live(self) -> list[Any]:
        """The watched pools, dropping the closed ones (called with the lock held)."""
        live: list[Any] = []
        closed: list[Any] = []
        for p in list(self._pools):
            (live if p.watched else closed).append(p)
        for p in closed:
            self._pools.discard(p)
        return live

    def _run(self) -> None:
        while True:
            with self._cond:
                live = self._live()
                if not live:  # the last watched pool closed: leave (add() starts another)
                    self._thread = None
                    return
                tick = min(_tick(p.watch[1]) for p in live)
                live = []  # no reference kept while waiting
            if self._waiter.poll(tick * 1000):
                os.read(self._wake_r, 4096)
            with self._cond:
                pools = self._live()
            now = time.perf_counter()  # the clock ordered.ThreadPool stamps tasks with
            for pool in pools:
                try:
                    check_thread_pool(pool, now)
                except Exception:  # noqa: BLE001 - the watchdog must outlive a bad report
                    pass
            pools = pool = None  # type: ignore[assignment] # no reference kept while waiting: a dropped pool can be collected


def _tick(interval: float) -> float:
    return max(0.05, min(MAX_TICK, interval / 4))


def check_thread_pool(pool: Any, now: float) -> None:
    """Warns about (or, past the timeout, fails) each task of ``pool`` that runs too long."""
    name, interval, timeout = pool.watch
    for ident, entry in pool._running.copy().items():
        if entry.timed_out is not None:
            continue
        waited = now - entry.started
        if timeout and waited >= timeout:
            info = describe_thread(ident, name)
            if pool._running.get(ident) is not entry:
                continue  # it returned meanwhile
            err = WorkerTimeoutError(info["op"], timeout, columns=info["columns"], index=info["index"],
                                     file=info["file"], pid=os.getpid(), thread=info["thread"],
                                     python_stack=info["stack"])
            entry.timed_out = err
            entry.done.set()
        elif waited >= interval * (1 << entry.reports):
            info = describe_thread(ident, name)
            if pool._running.get(ident) is not entry:
                continue  # it returned meanwhile
            entry.reports += 1
            _warn(stall_report(info["op"], waited, columns=info["columns"], index=info["index"],
                               file=info["file"], pid=os.getpid(), thread=info["thread"],
                               python_stack=info["stack"], next_report=interval * (1 << entry.reports)))


_threads = _ThreadWatch()


def watch_thread_pool(pool: Any) -> None:
    _threads.add(pool)


def unwatch_thread_pool(pool: Any) -> None:
    _threads.discard(pool)


def _after_fork_in_child() -> None:
    global _threads
    _threads.close_pipe()  # the parent's; its watchdog thread did not come along
    _threads = _ThreadWatch()


os.register_at_fork(after_in_child=_after_fork_in_child)


# ---- worker processes: the worker's side -------------------------------------------------------

ASK = signal.SIGUSR1


def start_doctor(send: Callable[[bytes], None], fallback_op: str) -> None:
    """Answers the main process's SIGUSR1 with ``("stall", info)`` about this process's main thread.

    Call it from the worker's main thread before it starts any other thread: the threads started
    after it inherit SIGUSR1 blocked, so the signal only ever wakes the doctor. ``send`` writes one
    message to the result pipe (holding the lock the main thread writes results under).
    """
    main = _thread.get_ident()
    asked = threading.Event()
    # Threads that existed before (a spawned worker's imports may start some) do not block the
    # signal: there it lands in this handler instead of killing the process.
    signal.signal(ASK, lambda *_: asked.set())
    signal.pthread_sigmask(signal.SIG_BLOCK, {ASK})

    def doctor() -> None:
        while True:
            if signal.sigtimedwait({ASK}, MAX_TICK) is None and not asked.is_set():
                continue
            asked.clear()
            try:
                info = locate(sys._current_frames().get(main), fallback_op)
                send(pickle.dumps(("stall", info), protocol=5))
            except OSError:
                return  # the pipe is gone: the worker is leaving
            except Exception:  # noqa: BLE001 - the main process reports without the stack
                pass

    _thread.start_new_thread(doctor, ())


# ---- worker processes: the main process's side ------------------------------------------------

_STOPPED = "(no stack: the worker process is stopped, by SIGSTOP or a debugger, and cannot answer)"
_NOT_BEGUN = ("(no stack: the worker process had not begun the task; twice, a full timeout apart, it was "
              "outside every op)")


def _stopped(pid: int | None) -> bool:
    """Whether process ``pid`` is stopped (state T or t in /proc; False where that cannot be read)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except (OSError, TypeError):
        return False
    state = stat[stat.rfind(b")") + 2:][:1]  # the field after the command name, which may hold spaces
    return state in (b"T", b"t")


class ProcessWait:
    """The main process waiting for one result of one worker: asks for reports when due.

    ``poll()`` after each empty poll of the result pipe and ``answer(info)`` for a ``"stall"``
    message; both return a :class:`WorkerTimeoutError` when the timeout ran out (the caller raises
    it), else None. ``task``: a function giving ``(sample index or None, text)``, what the worker runs
    by what the main process knows when a report is due (``ProcessPool._task_of``), and ``columns``
    those of its op, for reports the worker cannot give itself (stopped, or holding the GIL in native
    code).
    """

    __slots__ = ("name", "worker", "interval", "timeout", "start", "reports", "asked", "asked_at", "task",
                 "columns", "ready", "idle_answers")

    def __init__(self, name: str, worker: Any, interval: float, timeout: float, waited: float = 0.0,
                 task: Callable[[], tuple[int | None, str]] | None = None, columns: Any = None) -> None:
        self.name, self.worker, self.interval, self.timeout = name, worker, interval, timeout
        self.task, self.columns = task, list(columns) if columns else None
        self.start = time.monotonic() - waited  # ``waited``: seconds the caller has waited already
        self.reports = 0
        self.asked: str | None = None   # "report" or "timeout" while an answer is awaited
        self.asked_at = 0.0
        self.ready = bool(getattr(worker, "ready", False))  # whether the worker had started, last seen
        self.idle_answers = 0  # answers to a timeout's request that found the worker outside any op

    def _restart(self) -> None:
        """Starts the task's clock again, from now (NOTE [ the timeout counts the worker's time on the task ])."""
        self.start = time.monotonic()
        self.reports = 0

    def poll(self) -> WorkerTimeoutError | None:
        if not self.ready and getattr(self.worker, "ready", False):
            self.ready = True  # it has just started: it could not run the task before
            self._restart()
        waited = time.monotonic() - self.start
        if self.asked is not None:
            if waited - self.asked_at >= (TIMEOUT_ANSWER_WAIT if self.asked == "timeout" else ANSWER_WAIT):
                return self._finish(None)
            return None
        if self.timeout and waited >= self.timeout:
            return self._ask("timeout", waited)
        if waited >= self.interval * (1 << self.reports):
            return self._ask("report", waited)
        return None

    def _ask(self, what: str, waited: float) -> WorkerTimeoutError | None:
        self.asked, self.asked_at = what, waited
        if not getattr(self.worker, "ready", False):  # no doctor to ask yet
            return self._finish(None, "(no stack: the worker process has not finished starting)")
        try:
            os.kill(self.worker.pid, ASK)
        except OSError:
            return self._finish(None, "(no stack: the worker process is gone)")
        return None

    def answer(self, info: dict) -> WorkerTimeoutError | None:
        if self.asked is None:
            return None  # a late answer: reported already
        if not info.get("in_op"):
            # The worker is between tasks: its result is on the way, or it has not begun the task.
            if self.asked == "report":  # no report; the next request comes at the next report time
                self.asked = None
                self.reports += 1
                return None
            self.idle_answers += 1
            # a timeout counts from now (NOTE [ the timeout counts the worker's time on the task ])
            if self.idle_answers == 1:
                self.asked = None
                self._restart()
                return None
            return self._finish(None, _NOT_BEGUN)
        return self._finish(info)

    def _finish(self, info: dict | None, why: str | None = None) -> WorkerTimeoutError | None:
        """Reports (or returns the timeout error) with the worker's answer ``info``, or without
        one: then ``why`` stands in for the stack (None: the worker did not answer in time)."""
        what, waited = self.asked, self.asked_at
        self.asked = None
        if info is None:
            index, sent = self.task() if self.task is not None else (None, "")
            stack = why or (_STOPPED if _stopped(self.worker.pid) else NO_STACK)
            if sent:  # what the main process sent it, e.g. ", running samples 4 to 7 of pass 0"
                stack = f"{stack}; the worker was{sent[1:]}"
            # The error carries the sample and columns as attributes; the warning's text names them.
            timeout = what == "timeout"
            info = {"op": self.name, "columns": self.columns if timeout else None, "index": index if timeout else None,
                    "file": None, "stack": stack}
        pid = self.worker.pid
        if what == "timeout":
            return WorkerTimeoutError(info["op"], self.timeout, columns=info["columns"], index=info["index"],
                                      file=info["file"], pid=pid, python_stack=info["stack"])
        self.reports += 1
        _warn(stall_report(info["op"], waited, columns=info["columns"], index=info["index"],
                           file=info["file"], pid=pid, python_stack=info["stack"],
                           next_report=self.interval * (1 << self.reports)))
        return None
