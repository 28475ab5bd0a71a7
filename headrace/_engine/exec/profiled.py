"""The worker side of profiling: a stage program that also reports when and how long it ran.

:class:`ProfiledProgram` wraps a ``stage.StageProgram`` while a profiler records the run (it is
never built otherwise, so an unprofiled stage runs exactly the code it always ran). Its ``run``
returns the program's ``(rows, error)`` plus a third item, the task's timing::

    (start, end, cpu_seconds, worker, op_seconds, demand_seconds)

``start`` / ``end`` are ``time.perf_counter()`` readings (CLOCK_MONOTONIC on Linux: one clock
for every process of the machine, so a worker process's readings line up with the main
process's), ``cpu_seconds`` the running thread's CPU time over the task (measured on one task in
``CPU_EVERY``, and on every task that times its ops; -1.0 on the others: a thread's CPU clock is a
system call, 1.4 us a reading here), ``worker`` is ``(pid, thread id)``. A task costs two or
four clock readings (a task is a batch, or a chunk of rows). The split of a task's time between the
stage's ops needs a reading per op per row and runs
the ops through their general path (W1's trivial map: 1.6x the time of its fast loop), so a task
runs the timed loop (:func:`run_timed`) and reports ``op_seconds`` (one float per member: source,
maps, filter, batch, in that order) only when ``interval`` seconds have passed since the last
timed task of this program (per worker process; shared by a stage's threads); the others report
None. Cheap tasks are then timed rarely (W1: about one task in 100), costly ones, where a clock
reading per row is nothing, nearly all. A timed task also reports ``demand_seconds``: the thread's
time on a CPU plus its time waiting in the run queue for one (so do tasks every
``SCHED_INTERVAL`` seconds between them, with their CPU time) (``/proc/thread-self/schedstat``;
-1.0 where missing), which tells a thread that computes on a crowded machine (high demand, low
CPU) from one that sleeps or waits for I/O or a lock such as the GIL (both low); others report
-1.0.
The timed loop runs the ops row by row in the same order as ``StageProgram.run`` and keys each op's
randomness the same way, so its rows are the same rows.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any

from headrace._util.errors import PipelineError, format_traceback

_clock = time.perf_counter
_cpu = time.thread_time
_ident = threading.get_ident
CPU_EVERY = 4
SCHED_INTERVAL = 0.01  # seconds between tasks (per program) that read the scheduler's counters
_pid = [os.getpid()]  # this process's pid without a system call per task
os.register_at_fork(after_in_child=lambda: _pid.__setitem__(0, os.getpid()))


class ProfiledProgram:
    """``program`` with per-task timing; picklable like the program it wraps."""

    __slots__ = ("program", "interval", "next_timed", "next_sched", "count")

    def __init__(self, program: Any, interval: float) -> None:
        self.program = program
        self.interval = float(interval)
        self.next_timed = 0.0
        self.next_sched = 0.0
        self.count = 0

    def parts(self) -> list[tuple[str, Any]]:
        return self.program.parts()

    @property
    def name(self) -> str:
        return self.program.name

    def run(self, task: tuple) -> tuple[list, PipelineError | None, tuple]:
        t0 = _clock()
        n = self.count  # threads share these two: a race only measures one more task
        self.count = n + 1
        demand = -1.0
        timed = t0 >= self.next_timed
        if timed or t0 >= self.next_sched:
            if timed:
                self.next_timed = t0 + 3600.0
            self.next_sched = t0 + 3600.0
            s0 = _sched()
            c0 = _cpu()
            if timed:
                rows, err, ops = run_timed(self.program, task)
            else:
                rows, err = self.program.run(task)
                ops = None
            t1 = _clock()
            cpu = _cpu() - c0
            s1 = _sched()
            if s0 >= 0.0 and s1 >= 0.0:
                demand = s1 - s0
            self.next_sched = t1 + SCHED_INTERVAL
            if timed:
                self.next_timed = t1 + self.interval
        elif n % CPU_EVERY == 0:
            c0 = _cpu()
            rows, err = self.program.run(task)
            t1 = _clock()
            cpu = _cpu() - c0
            ops = None
        else:
            rows, err = self.program.run(task)
            t1 = _clock()
            cpu = -1.0
            ops = None
        return rows, err, (t0, t1, cpu, (_pid[0], _ident()), ops, demand)


def _sched() -> float:
    """Seconds this thread has run on a CPU plus waited in the run queue for one; -1.0 if unknown."""
    try:
        with open("/proc/thread-self/schedstat", "rb") as f:
            on_cpu, queued = f.read().split()[:2]
        return (int(on_cpu) + int(queued)) * 1e-9
    except (OSError, ValueError):
        return -1.0


def run_timed(program: Any, task: tuple) -> tuple[list, PipelineError | None, list[float]]:
    """``program.run(task)`` with the seconds spent in each member op (see the module doc)."""
    seed, p, start, items, num = task
    read, maps, filt, batch = program.read, program.maps, program.filter, program.batch
    n_ops = (read is not None) + len(maps) + (filt is not None) + (batch is not None)
    acc = [0.0] * n_ops
    first_map = 1 if read is not None else 0
    at_filter = first_map + len(maps)
    out: list = []
    if type(items) is not list and type(items) is not range:
        items = items.tolist()
    clock = _clock
    try:
        pos = start
        keyed = read is not None and read.globals is not None
        for item in items:
            t = clock()
            if read is not None:
                row = read.keyed(item, seed, p, pos) if keyed else read(item)
                t2 = clock()
                acc[0] += t2 - t
                t = t2
            else:
                row = item
            k = first_map
            for m in maps:
                row = m(row, seed, p, pos)
                t2 = clock()
                acc[k] += t2 - t
                t = t2
                k += 1
            if filt is None:
                out.append(row)
            else:
                keep = filt(row, seed, p, pos)
                acc[at_filter] += clock() - t
                if keep:
                    out.append(row)
            pos += 1
        if batch is not None:
            t = clock()
            made = [batch(out, seed, p, num)]
            acc[-1] += clock() - t
            return made, None, acc
    except PipelineError as e:
        return ([] if batch is not None else out), e, acc
    except Exception as e:  # noqa: BLE001 - reported as StageProgram.run reports it
        err = PipelineError(program.name, f"{type(e).__name__}: {e}", python_stack=format_traceback(e))
        err.__cause__ = e
        return ([] if batch is not None else out), err, acc
    return out, None, acc
