"""The worker side of profiling: a stage program that also reports when and how long it ran.

:class:`ProfiledProgram` wraps a ``stage_program.StageProgram`` while a profiler records the run (it is
never built otherwise, so an unprofiled stage runs exactly the code it always ran). Its ``run``
returns the program's ``(rows, error)`` plus a third item, the task's timing::

    (start, end, cpu_seconds, worker, op_seconds, switches, op_cpu_seconds)

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
None. Cheap tasks are then timed rarely (W1, 0.2 s: about one task in 350), costly ones, where a clock
reading per row is nothing, nearly all. A timed task, and a task expected to take over
``WATCH_TASK_S`` (from the rows' cost in the last timed one), also reports ``switches``: how many times
its thread blocked (voluntary context switches, ``getrusage(RUSAGE_THREAD)``: ~1 us a reading
here, without letting go of the GIL; -1 where missing or not timed). Reading them from
``/proc/thread-self/status`` took 50 us, as file I/O that lets go of the GIL, which a thread of a
GIL-bound stage then waits to take back: with W1's 2 threads, whose tasks all passed
``WATCH_TASK_S`` that way, 15% of a profiled run's samples (py-spy) were in that reading.
Threads that compute but take turns on the GIL block about every switch interval (5 ms: measured
95-112 a second each), threads computing in native code
that releases it rarely (14 a second), sleeping ones at every sleep but with almost no CPU time.
Where the last timed task's rows took over ``CPU_PER_OP_ROW_S`` each, a timed task also reads the
thread's CPU clock per op per row (``op_cpu_seconds``; None otherwise): with threads, an op's wall
time includes waits for the GIL held by another thread (a cheap op looked 10x costlier with 2
threads than with 1), its CPU time does not.
The timed loop runs the ops row by row in the same order as ``StageProgram.run`` and keys each op's
randomness the same way, so its rows are the same rows.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any

from headrace._util.errors import PipelineError, format_traceback

try:
    import resource as _resource
except ImportError:  # pragma: no cover - Windows
    _resource = None  # type: ignore[assignment]
_RUSAGE_THREAD: int | None = getattr(_resource, "RUSAGE_THREAD", None)  # Linux only

_clock = time.perf_counter
_cpu = time.thread_time
_ident = threading.get_ident
CPU_EVERY = 4
WATCH_TASK_S = 0.01      # tasks expected to take longer read the thread's blocks (see the module doc)
CPU_PER_OP_ROW_S = 50e-6  # rows costlier than this (in the last timed task) get CPU time per op too
_pid = [os.getpid()]  # this process's pid without a system call per task
os.register_at_fork(after_in_child=lambda: _pid.__setitem__(0, os.getpid()))


class ProfiledProgram:
    """``program`` with per-task timing; picklable like the program it wraps."""

    __slots__ = ("program", "interval", "next_timed", "count", "row_seconds")

    def __init__(self, program: Any, interval: float) -> None:
        self.program = program
        self.interval = float(interval)
        self.next_timed = 0.0
        self.count = 0
        self.row_seconds = 0.0  # per row, in the last timed task

    def parts(self) -> list[tuple[str, Any]]:
        return self.program.parts()

    @property
    def name(self) -> str:
        return self.program.name

    def run(self, task: tuple) -> tuple[list, PipelineError | None, tuple]:
        t0 = _clock()
        n = self.count  # threads share these two: a race only measures one more task
        self.count = n + 1
        switches = -1
        ops: list[float] | None
        op_cpu: list[float] | None
        timed = t0 >= self.next_timed
        # the thread's blocks are read on timed tasks and on tasks long enough for their two
        # readings to be nothing next to them
        watch = timed or self.row_seconds * len(task[3]) >= WATCH_TASK_S
        if timed or watch or n % CPU_EVERY == 0:
            if timed:
                self.next_timed = t0 + 3600.0
            s0 = _switches() if watch else -1
            c0 = _cpu()
            if timed:
                rows, err, ops, op_cpu = run_timed(self.program, task, self.row_seconds > CPU_PER_OP_ROW_S)
            else:
                rows, err = self.program.run(task)
                ops = op_cpu = None
            t1 = _clock()
            cpu = _cpu() - c0
            if s0 >= 0:
                s1 = _switches()
                if s1 >= 0:
                    switches = s1 - s0
            if timed:
                self.next_timed = t1 + self.interval
                self.row_seconds = (t1 - t0) / max(1, len(task[3]))
        else:
            rows, err = self.program.run(task)
            t1 = _clock()
            cpu = -1.0
            ops = op_cpu = None
        return rows, err, (t0, t1, cpu, (_pid[0], _ident()), ops, switches, op_cpu)


def _switches() -> int:
    """This thread's voluntary context switches so far; -1 if unknown."""
    if _RUSAGE_THREAD is None:
        return -1
    try:
        return _resource.getrusage(_RUSAGE_THREAD).ru_nvcsw
    except OSError:
        return -1


def run_timed(program: Any, task: tuple, cpu: bool = False) -> tuple[list, PipelineError | None, list[float],
                                                                      list[float] | None]:
    """``program.run(task)`` with the seconds spent in each member op (see the module doc), and,
    when ``cpu``, the thread's CPU seconds in each (a system call per op per row: for costly rows)."""
    seed, p, start, items, num = task
    read, maps, filt, batch = program.read, program.maps, program.filter, program.batch
    n_ops = (read is not None) + len(maps) + (filt is not None) + (batch is not None)
    acc = [0.0] * n_ops
    cacc = [0.0] * n_ops if cpu else None
    out: list = []
    if type(items) is not list and type(items) is not range:
        items = items.tolist()
    k0 = 1 if read is not None else 0  # the first map's index
    clock, cclock = _clock, _cpu
    try:
        pos = start
        for item in items:
            t = clock()
            c = cclock() if cacc is not None else 0.0
            row = item
            if read is not None:
                row = read.keyed(item, seed, p, pos) if read.globals is not None else read(item)
                t2 = clock()
                acc[0] += t2 - t
                t = t2
                if cacc is not None:
                    c2 = cclock()
                    cacc[0] += c2 - c
                    c = c2
            k = k0
            for m in maps:
                row = m(row, seed, p, pos)
                t2 = clock()
                acc[k] += t2 - t
                t = t2
                if cacc is not None:
                    c2 = cclock()
                    cacc[k] += c2 - c
                    c = c2
                k += 1
            if filt is None or filt(row, seed, p, pos):
                out.append(row)
            if filt is not None:
                acc[k] += clock() - t
                if cacc is not None:
                    cacc[k] += cclock() - c
            pos += 1
        if batch is not None:
            t = clock()
            c = cclock() if cacc is not None else 0.0
            made = [batch(out, seed, p, num)]
            acc[-1] += clock() - t
            if cacc is not None:
                cacc[-1] += cclock() - c
            return made, None, acc, cacc
    except PipelineError as e:
        return ([] if batch is not None else out), e, acc, cacc
    except Exception as e:  # noqa: BLE001 - reported as StageProgram.run reports it
        err = PipelineError(program.name, f"{type(e).__name__}: {e}", python_stack=format_traceback(e))
        err.__cause__ = e
        return ([] if batch is not None else out), err, acc, cacc
    return out, None, acc, cacc
