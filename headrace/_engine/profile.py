"""What the profiler records while a pipeline runs (nothing unless a :class:`Recorder` is active).

The engine only records; ``headrace.dataset.profiling`` turns the records into metrics, the
bottleneck verdict and the output files. While no recorder is active no run, stage or op holds
anything of this module and no hot path runs any of its code: ``PipelineRun`` and ``StageIter``
check once, when they are built, and only a profiled run gets the timed variants (a timed
``next_row``, a ``ProfiledProgram`` in the stage's workers, a :class:`TimedIter` around each op).

What is recorded, per run (one iterator), in ``time.perf_counter()`` seconds:

* the consumer: each ``next_row`` call (call, return), so its wait for data and its time away;
* per op iterator (a stage, or an op that runs alone: shuffle, zip, a streaming source, ...): the
  time its caller spent inside its ``__next__`` (calls, seconds, the first ``MAX_EVENTS`` spans);
* per stage task: submitted, asked for, taken (main process), started, ended, CPU seconds,
  worker, rows out, the pool's capacity, and, for a task every ``interval`` seconds, seconds per member op
  (see ``exec/profiled.py``);
* per GPU stage (``device_stage.py``): its backend's name, samples, batches and CPU fallbacks by reason.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any

from headrace._util.forksafe import fork_safe

_clock = time.perf_counter
MAX_EVENTS = 200_000  # spans kept per series (totals are always complete)

_active: "Recorder | None" = None
_lock = fork_safe(threading.Lock())


def active() -> "Recorder | None":
    """The recorder new runs report to, or None (profiling off)."""
    return _active


def start(interval: float = 0.2) -> "Recorder":
    """Makes a new recorder active; runs created from now on report to it. ``interval``: seconds
    between tasks that time their ops one by one (see ``exec/profiled.py``)."""
    global _active
    with _lock:
        if _active is not None:
            raise RuntimeError("a profiler is already recording: profiles cannot be nested (a script run by "
                               "`headrace profile` is profiled already).")
        _active = Recorder(interval)
        return _active


def stop(rec: "Recorder") -> None:
    """Ends ``rec``'s recording: runs created afterwards are not profiled (those already running
    keep adding to ``rec`` until they end)."""
    global _active
    with _lock:
        if _active is rec:
            _active = None
    rec.ended = _clock()


class Recorder:
    def __init__(self, interval: float) -> None:
        if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not interval >= 0:
            raise ValueError(f"interval must be a number of seconds >= 0, got {interval!r}.")
        self.interval = float(interval)
        self.started = _clock()
        self.ended: float | None = None
        self.cores = os.cpu_count() or 1
        self.runs: list[RunRecord] = []
        self._lock = threading.Lock()

    def new_run(self) -> "RunRecord":
        with self._lock:
            r = RunRecord(self, len(self.runs))
            self.runs.append(r)
        return r


class RunRecord:
    """One iterator's records: the consumer, each op iterator, each stage."""

    def __init__(self, recorder: Recorder, index: int) -> None:
        self.recorder = recorder
        self.interval = recorder.interval
        self.index = index
        self.created = _clock()
        self.closed: float | None = None
        self.first_row: float | None = None
        self.last_return: float | None = None
        self.rows = 0
        self.wait = 0.0
        self.away = 0.0
        self.calls: list[tuple[float, float]] = []
        self.callers: dict[int, OpRecord] = {}
        self.stages: dict[int, StageRecord] = {}
        self.nodes: dict[int, dict] = {}  # op id -> {name, kind, mode, workers, children, stage}
        self.devices: dict[int, dict] = {}  # GPU stage op id -> {backend, samples, batches, fallbacks}
        self.top: int | None = None
        self.top_rec: OpRecord | None = None  # the top op's record, kept by the consumer's timing

    # ---- the consumer -------------------------------------------------------------------------
    def consumer(self, called: float, returned: float, got_row: bool) -> None:
        top = self.top_rec
        if top is not None:
            top.add(called, returned, 1 if got_row else 0)
        if got_row:
            self.rows += 1
            if self.first_row is None:
                self.first_row = returned
        self.wait += returned - called
        if self.last_return is not None:
            self.away += called - self.last_return
        self.last_return = returned
        if len(self.calls) < MAX_EVENTS:
            self.calls.append((called, returned))

    # ---- building ---------------------------------------------------------------------------
    def wrap(self, op: Any) -> "TimedIter":
        rec = self.callers.get(op.op_id)
        if rec is None:
            rec = self.callers[op.op_id] = OpRecord()
        return TimedIter(op, rec)

    def stage(self, stage: Any) -> "StageRecord":
        rec = self.stages.get(stage.op_id)
        if rec is None:
            rec = self.stages[stage.op_id] = StageRecord(stage.op_id)
        rec.mode, rec.workers = stage.mode, stage.workers
        rec.members = [m.op_id for m in stage.members]
        return rec

    def describe(self, tree: Any) -> Any:
        """Notes the tree's ops: names, kinds, modes, worker counts, which feeds which; returns the
        tree, without the top op's timer when the top is a stage that runs tasks (its tasks are
        timed; the consumer's timing, ``consumer``, stands for its caller's: one call less per row).
        Other tops keep theirs: with a prefetch thread, the consumer's wait is not their time."""
        top = _real(tree)
        self.top = top.op_id
        if type(tree) is TimedIter and getattr(top, "members", None) is not None and not top._per_row:
            self.top_rec = tree.rec
            tree = top
        todo = [tree]
        while todo:
            op = _real(todo.pop())
            children = [_real(p).op_id for p in op.parents]
            members = getattr(op, "members", None)
            if members is not None:  # a stage: its members, bottom (source) first
                below = children
                for m in members:
                    self.nodes[m.op_id] = {"name": m.name, "kind": type(m).__name__, "mode": op.mode,
                                           "workers": op.workers, "children": below, "stage": op.op_id,
                                           "functions": _functions(_fn_of(m))}
                    below = [m.op_id]
            else:
                self.nodes[op.op_id] = {"name": op.name, "kind": type(op).__name__, "mode": "caller",
                                        "workers": 1, "children": children, "stage": None, "functions": []}
            todo.extend(op.parents)
        return tree


def _fn_of(op: Any) -> Any:
    """The user-facing callable of a stage member: a map's function, a filter's predicate."""
    spec = getattr(op, "spec", None)
    fn = getattr(spec, "fn", None)
    return fn if fn is not None else getattr(spec, "pred", None)


def _functions(fn: Any) -> list[str]:
    """Names of the callables a map runs: its chained ops, a wrapped function's own name."""
    if fn is None:
        return []
    chained = getattr(fn, "chained_ops", None)
    out = []
    for f in (chained if type(chained) is tuple else (fn,)):
        inner = getattr(f, "transform", None)
        f = inner if callable(inner) and not isinstance(inner, type) else f
        name = getattr(f, "__name__", None)
        if not isinstance(name, str):
            name = type(f).__name__
        out.append("lambda" if name == "<lambda>" else name)
    return out


def _real(op: Any) -> Any:
    return op.op if type(op) is TimedIter else op


class OpRecord:
    """The time callers spent in one op iterator's ``__next__``."""

    __slots__ = ("calls", "rows", "seconds", "spans")

    def __init__(self) -> None:
        self.calls = 0
        self.rows = 0
        self.seconds = 0.0
        self.spans: list[tuple[float, float]] = []

    def add(self, t0: float, t1: float, rows: int) -> None:
        self.calls += 1
        self.rows += rows
        self.seconds += t1 - t0
        if len(self.spans) < MAX_EVENTS:
            self.spans.append((t0, t1))


class TimedIter:
    """An op iterator whose ``__next__`` is timed; everything else goes to the op itself."""

    __slots__ = ("op", "rec")

    def __init__(self, op: Any, rec: OpRecord) -> None:
        self.op = op
        self.rec = rec

    def __iter__(self) -> "TimedIter":
        return self

    def __next__(self) -> Any:
        t = _clock()
        try:
            row = self.op.__next__()
        except BaseException:  # the end of a pass, or a failure: time spent, no row
            self.rec.add(t, _clock(), 0)
            raise
        self.rec.add(t, _clock(), 1)
        return row

    def __getattr__(self, name: str) -> Any:
        return getattr(self.op, name)

    def __str__(self) -> str:
        return str(self.op)


class StageRecord:
    """The tasks of one stage (see the module doc for the fields)."""

    def __init__(self, op_id: int) -> None:
        self.op_id = op_id
        self.mode = ""
        self.workers = 1
        self.members: list[int] = []
        # (submitted, asked, taken, started, ended, cpu (-1.0: not measured), rows out, worker, capacity, rows in)
        self.tasks: list[tuple] = []
        self.count = 0
        self.busy = 0.0
        self.cpu_measured = 0.0  # CPU seconds of the tasks that measured theirs...
        self.cpu_busy = 0.0      # ...and their wall seconds
        self.rows = 0
        self.items = 0                     # rows in (source indices or rows pulled from the parent)
        self.op_seconds: list[float] = []  # summed over the timed tasks
        self.timed_busy = 0.0              # the timed tasks' own seconds
        self.op_cpu: list[float] = []      # CPU seconds per member op, summed over the tasks that measured it
        self.timed_tasks = 0
        self.switches = 0        # timed tasks: times their threads blocked (see exec/profiled.py)
        self.switch_busy = 0.0   # ...and their wall seconds
        self.switch_cpu = 0.0    # ...and their CPU seconds
        self.op_spans: list[tuple] = []  # timed tasks: (start, end, seconds per op, worker)

    @property
    def cpu(self) -> float:
        """CPU seconds of all tasks, from those that measured theirs (in proportion to wall time)."""
        return self.cpu_measured * self.busy / self.cpu_busy if self.cpu_busy > 0 else 0.0

    def task(self, got: tuple, submitted: float, asked: float, taken: float, capacity: int,
             items: int) -> None:
        stats = got[2] if len(got) > 2 else None
        n = len(got[0])
        self.count += 1
        self.rows += n
        self.items += items
        if stats is None:  # the worker could not report (a result it could not send)
            return
        t0, t1, cpu, worker, ops, switches, op_cpu = stats
        if op_cpu is not None:
            if len(self.op_cpu) != len(op_cpu):
                self.op_cpu = [0.0] * len(op_cpu)
            for i, s in enumerate(op_cpu):
                self.op_cpu[i] += s
        self.busy += t1 - t0
        if switches >= 0:
            self.switches += switches
            self.switch_busy += t1 - t0
            self.switch_cpu += cpu
        if cpu >= 0.0:
            self.cpu_measured += cpu
            self.cpu_busy += t1 - t0
        if len(self.tasks) < MAX_EVENTS:
            self.tasks.append((submitted, asked, taken, t0, t1, cpu, n, worker, capacity, items))
        if ops is not None:
            if len(self.op_seconds) != len(ops):
                self.op_seconds = [0.0] * len(ops)
            acc = self.op_seconds
            for i, s in enumerate(ops):
                acc[i] += s
            self.timed_busy += t1 - t0
            self.timed_tasks += 1
            if len(self.op_spans) < MAX_EVENTS:
                self.op_spans.append((t0, t1, list(ops), worker))
