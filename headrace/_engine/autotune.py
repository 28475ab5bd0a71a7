"""Autotune: a run that changes its own worker counts, worker kind and prefetch depth as it goes.

A tuned run is a profiled run (``profile.py``; its own recorder when no profiler records), so
the tuner reads the counters the profiler keeps and measures nothing itself: per stage, the
seconds its tasks ran (busy), their CPU seconds and how often their threads blocked; for the
consumer, its waits for data and its time away. At each safe point (every ``interval`` rows
handed to the consumer, once a window holds ``MIN_WINDOW_S`` seconds and ``MIN_WINDOW_ROWS`` rows;
0: the end of each epoch) it looks at what those counters gained since the last decision (a
window) and makes at most one change, so that the next window judges it alone:

1. The consumer waited for data under ``CONSUMER_WAIT`` of the window: the pipeline keeps up;
   nothing changes.
2. The busiest stage (busy seconds over its workers and the window) is the bottleneck once it is
   over ``SATURATED`` busy:

   * on threads, computing, yet its threads take turns on the GIL (they use about one core
     between them while the machine's cores are idle), or its Python functions run
     under the lock that keys the global random generators (a seed is set): it moves to
     processes (``threads -> processes``; a source read in the stage moves with it);
   * waiting (CPU under ``WAITING_CPU`` of its busy time: sleep, I/O, a lock): twice the workers,
     up to ``WAITING_OVERSUBSCRIBE`` x the cores;
   * computing: one more worker while the projected CPU use of all stages (each stage's cores
     per worker times its workers) stays within the cores.
3. Otherwise, the consumer waited and the prefetch (rows made ahead by the prefetch thread) is shallower than
   twice the workers of the stage that feeds it (at least ``MIN_PREFETCH``): it is deepened to that.

Budgets: the cores are ``os.sched_getaffinity`` (or ``Options.autotune_cores``); the memory is half
the machine's RAM (or ``Options.autotune_ram``). A change that adds memory is made only when the
process tree's resident memory (this process plus the stage's worker processes seen so far) plus
what the change adds (a worker process: the largest worker's resident size; a thread: its tasks'
results; prefetch: rows of the last row's size) stays within the budget; it is logged as kept
otherwise. More workers, or another mode, whose window delivered rows less than ``MIN_GAIN``
faster than the window before it are undone, as is a deeper prefetch whose window was more than
``REGRESSION`` slower; the undone value is not tried again. A thread added to a computing stage
and undone is replaced by worker processes in the same step.

A change is applied by ``PipelineRun.retune``: the plan is rewritten with the new settings (plan
nodes are values: the user's pipeline is untouched), the tree rebuilt and brought to where the run
was as a checkpoint restore does. Worker counts and modes are not part of a plan's fingerprint
and every random draw is keyed by (seed, op, pass, row), so the rows are the rows of an untuned
run. Mid-epoch, only when getting there is cheap (stages that read a source by index, whose skip
moves counters); otherwise the change waits for the end of the epoch.

Every decision is logged (``logging.getLogger("headrace.autotune")``, INFO) as one line naming
the stage, the setting, old -> new and the measurements behind it, and kept in ``Tuner.decisions``.
"""
from __future__ import annotations

import bisect
import dataclasses
import logging
import os
import time
import types
import weakref
from typing import Any, Callable


from headrace._engine import plan as P
from headrace._engine.machine import cpu_budget, cpu_times, ram_budget, row_bytes, rss

log = logging.getLogger("headrace.autotune")
_clock = time.perf_counter

CONSUMER_WAIT = 0.30      # below: the consumer is the limit
SATURATED = 0.40          # a stage busier than this is a bottleneck
WAITING_CPU = 0.10        # CPU over busy time below this: the stage waits rather than computes
# Threads that take turns on the GIL use about one core between them, however many they are:
# within their tasks (W1's Python map on 2 threads computed 67% of their busy time: 1.34 at most), or
# task by task when a task is shorter than the switch interval (2 threads each 43% busy, computing
# all of it: 0.86 cores). Threads in native code that lets go of the GIL use their cores (W2's OpenCV
# chain: 1.6-1.7 of 2), and worker processes then only add copies (20-27% slower).
GIL_TURNS_CORES = 1.5          # threads using at most this many cores between them take turns...
IDLE_TO_GAIN = 0.15            # ...when the machine's cores are idle this share of the time
SLEEPER_BLOCKS_PER_CPU_S = 3000.0  # threads that sleep or wait for I/O block far more often...
SLEEPER_CORES = 0.5       # ...and use under half a core between them: twice as many (what waiting work
# is given) would still use under the one core that threads taking turns on the GIL share. Measured on
# 2 cores, a map on 2-8 threads: time.sleep(2 ms) 0.016-0.058 cores, 45,000-70,000 blocks per CPU
# second; uncached disk reads (O_DIRECT) 0.20-0.32 cores (0.42 and 0.50 in two runs of 0.24 s),
# 42,000-91,000. Threads that hand the GIL back and forth block as often but compute: the speech
# chain's NumPy calls (MelSpectrogram ... FrequencyMasking) on 2 threads used 0.99-1.53 cores and
# blocked 11,500-17,900 times per CPU second with idle cores (0.57-1.11 cores and 630-12,000 blocks on
# a machine busy with other work), and ran 3,550-5,000 clips/s against 5,700-6,000 on 1 thread and
# 8,750-9,470 in 2 worker processes.
WAITING_OVERSUBSCRIBE = 4  # workers per core for a stage that mostly waits
MIN_PREFETCH = 4
MAX_PREFETCH = 64
MIN_WINDOW_S = 2.0        # a window shorter than this is extended (rows/s over a few rows is noise)...
MIN_WINDOW_ROWS = 8       # ...and one with fewer rows
MIN_TASKS = 2             # tasks a stage must have finished in a window to be judged
REGRESSION = 0.15         # a change whose window is this much slower than the one before is undone
MIN_GAIN = 0.05           # ...and more workers or another mode that are not this much faster
PROCESS_WORKER_FLOOR = 32 << 20  # a worker process's size before one has been seen

INLINE, THREADS, PROCESSES = "inline", "threads", "processes"


def _must_gain(decisions: list["Decision"]) -> bool:
    """Whether a change stays only if it is faster: more workers, or another mode. Worker
    processes cost memory and copies: W2's decode chain (OpenCV, which lets go of the GIL often, so
    its threads block often) was moved to processes, which ran 20-27% slower in the grid, and the
    15% allowed to a change for noise kept that move in one run of three. A deeper prefetch only
    must not cost (``REGRESSION``)."""
    return any(d.setting in ("workers", "mode") for d in decisions)


def sleeps(blocks_per_cpu_s: float | None, cores: float) -> bool:
    """Whether threads that blocked ``blocks_per_cpu_s`` times per CPU second (None: not counted)
    while using ``cores`` between them sleep or wait for I/O, rather than take turns on the GIL."""
    return blocks_per_cpu_s is not None and blocks_per_cpu_s >= SLEEPER_BLOCKS_PER_CPU_S and cores < SLEEPER_CORES


def gil_cores(blocks_per_cpu_s: float | None, cores: float) -> bool:
    """Whether threads using ``cores`` between them can be taking turns on the GIL: at most
    ``GIL_TURNS_CORES``, or more while they block as often as sleeping threads (each hand-over of the
    GIL costs CPU: the speech chain's 2 threads used up to 1.53 cores and ran slower than 1 thread)."""
    return cores <= GIL_TURNS_CORES or (blocks_per_cpu_s is not None and blocks_per_cpu_s >= SLEEPER_BLOCKS_PER_CPU_S)


@dataclasses.dataclass(frozen=True)
class Decision:
    """One change the tuner made or undid: ``setting`` is "workers", "mode", "prefetch" (or
    "workers/mode" for an undo)."""
    epoch: int
    step: int
    op: str
    setting: str
    old: Any
    new: Any
    why: str

    def line(self) -> str:
        return f"autotune: {self.op}: {self.setting} {self.old} -> {self.new} ({self.why})"


@dataclasses.dataclass
class _Window:
    """What a stage's counters gained over a window."""
    tasks: int
    busy: float
    cpu: float
    switches: int
    switch_cpu: float
    wall: float

    def util(self, workers: int) -> float:
        return self.busy / (max(1, workers) * self.wall) if self.wall > 0 else 0.0

    def cpu_ratio(self) -> float:
        return self.cpu / self.busy if self.busy > 0 else 0.0

    def blocks_per_cpu(self) -> float | None:
        return self.switches / self.switch_cpu if self.switch_cpu > 0 else None

    def waits(self) -> bool:
        """Whether the stage mostly waited (sleep, I/O, a lock) rather than computed."""
        cores = self.cpu / self.wall if self.wall > 0 else 0.0
        return sleeps(self.blocks_per_cpu(), cores) or self.cpu_ratio() < WAITING_CPU


class Tuner:
    """Tunes one run (``PipelineRun``); the run calls ``after_row`` and ``after_epoch``."""

    def __init__(self, run: Any, interval: int, cores: int | None = None, ram: int | None = None) -> None:
        # The run holds the tuner; the tuner holds the run weakly (a cycle would keep a dropped run's
        # workers alive until a garbage collection), and the plan and prefetch it tuned itself.
        self._run = weakref.ref(run)
        self._plan = run.plan
        self._prefetch = run.prefetch_size
        self.interval = interval
        self.cores = cores or cpu_budget()
        self.ram = ram or ram_budget()
        self.decisions: list[Decision] = []
        self.writer: Callable[["Tuner"], None] | None = None  # writes the tuned settings (dataset layer)
        self._written = -1
        self._since = 0
        self._marks: dict[int, tuple] = {}
        self._consumer = (0.0, 0.0)
        self._t0 = _clock()
        self._row_bytes = 0
        self._pending: dict[int, tuple[int, bool]] = {}
        self._pending_prefetch: int | None = None
        self._pending_why: list[Decision] = []
        self._pending_rate = 0.0
        # the last change: the settings before it, the prefetch before it, rows/s in the window before it
        self._trial: tuple[dict[int, tuple[int, bool]], int, float, bool] | None = None
        self._prefetching = False  # whether the run's prefetch thread has run (else its depth is moot)
        self._bad: set[tuple[int, int, bool]] = set()
        self._bad_prefetch: set[int] = set()
        # where each current plan node came from in the user's plan (rewrites make new nodes)
        self._origin: dict[int, P.Node] = {}
        self._mark()

    # ---- hooks called by the run ----------------------------------------------------------------
    def after_row(self, row: Any) -> None:
        if self.interval < 0:  # stopped: nothing is measured any more
            return
        now = _clock()
        self._times.append(now)
        if not self._prefetching and self.run.prefetching:
            self._prefetching = True
        if len(self._times) == 2:  # a row of the window (its first may be an epoch's first)
            self._row_bytes = row_bytes(row)
        if self.interval > 0:
            self._since += 1
            if self._since >= self.interval and now - self._t0 >= MIN_WINDOW_S and len(self._times) >= MIN_WINDOW_ROWS:
                self._since = 0
                self._tick(mid_epoch=True)

    def after_epoch(self) -> None:
        if self.interval == 0:
            self._tick(mid_epoch=False)
        elif self._pending or self._pending_prefetch is not None:
            self._apply(self._pending_why, self._pending_rate)
        self._write()

    def close(self) -> None:
        self._write()

    def stop(self) -> None:
        """Tunes no more: the settings stay as they are (a change waiting for the end of the epoch
        is dropped, and the last one is not judged)."""
        self.interval = -1
        self._pending.clear()
        self._pending_prefetch = None
        self._pending_why = []
        self._trial = None

    @property
    def run(self) -> Any:
        run = self._run()
        if run is None:
            raise RuntimeError("autotune: the run this tuner tuned is gone.")
        return run

    # ---- settings ----------------------------------------------------------------------------
    def settings(self) -> tuple[list[tuple[P.Node, int, bool]], int]:
        """The tuned settings: (node of the user's plan, workers, processes) for every stage op the
        tuner changed, and the prefetch depth."""
        out = []
        for node in P.all_nodes(self._plan):
            orig = self._origin.get(id(node))
            if orig is not None and type(node) in _TUNED_KINDS:
                out.append((orig, node.num_workers, bool(getattr(node, "processes", False))))  # type: ignore[attr-defined]
        return out, self._prefetch

    def _write(self) -> None:
        if self.writer is not None and self._written != len(self.decisions):
            self._written = len(self.decisions)
            try:
                self.writer(self)
            except Exception as e:  # noqa: BLE001 - a file that cannot be written does not stop the run
                log.warning("autotune: could not write the tuned configuration: %s: %s", type(e).__name__, e)

    # ---- one decision --------------------------------------------------------------------------
    def _tick(self, mid_epoch: bool) -> None:
        run = self._run()
        if run is None or run.failed or run.closed:
            return
        try:
            self._decide(mid_epoch)
        except Exception as e:  # noqa: BLE001 - tuning never breaks the run it tunes
            log.warning("autotune: stopped tuning this run after an error: %s: %s", type(e).__name__, e)
            self.stop()

    def _decide(self, mid_epoch: bool) -> None:
        if self._judge_trial():
            return
        windows = self._windows()
        wait, away = self._consumer_delta()
        waited = wait / (wait + away) if wait + away > 0 else 0.0
        decisions: list[Decision] = []
        stages = self._stages()
        if waited >= CONSUMER_WAIT and self._times:
            # one change at a time, so that the next window judges it alone
            decisions += self._stage_decision(stages, windows, waited) or self._prefetch_decision(stages, waited)
        rate = self._rate(next(iter(self._pending), None)) if decisions else 0.0  # this window's, to judge by
        self._mark()
        if not decisions:
            return
        if mid_epoch and not _cheap_restore(self.run.tree):
            self._pending_why += decisions
            self._pending_rate = rate
            log.info("autotune: the changes wait for the end of the epoch (this pipeline cannot resume mid-epoch "
                     "without making its rows again)")
            return
        self._apply(decisions, rate)

    def _rate(self, sid: int | None) -> float:
        """Rows per second handed to the consumer in the window, from when stage ``sid`` (the
        one a change is about; None: the window's start) started its first task in it: the start
        of new workers is not counted against them."""
        start = self._t0
        if sid is not None:
            rec = self.run.profile_record.stages.get(sid)
            mark = self._marks.get(sid)
            if rec is not None and mark is not None:
                starts = [t[3] for t in rec.tasks[mark[6]:] if t[3] >= self._t0]
                if starts:
                    start = max(start, min(starts))
        times = self._times
        n = len(times) - bisect.bisect_left(times, start)
        if n < 2 or times[-1] <= start:
            return 0.0
        return n / (times[-1] - start)

    def _judge_trial(self) -> bool:
        """Undoes the last change when the window after it was slower than the one before; True
        if it did."""
        trial, self._trial = self._trial, None
        if trial is None:
            return False
        before, prefetch_before, rate_before, more = trial
        rate = self._rate(next(iter(before), None))
        # more workers and another mode must pay for themselves; a deeper prefetch must not cost
        floor = (1.0 + MIN_GAIN) if more else (1.0 - REGRESSION)
        log.debug("autotune: judging the last change: %.1f rows/s after it, %.1f before", rate, rate_before)
        if rate_before <= 0 or rate <= 0 or rate >= floor * rate_before:
            return False
        why = (f"undone: {'no faster' if more else 'slower'} after the change, {rate:.1f} rows/s against "
               f"{rate_before:.1f} before")
        undo: list[Decision] = []
        stages = self._stages()
        for sid, (w, procs) in before.items():
            st = stages.get(sid)
            if st is None:
                continue
            self._bad.add((sid, st.workers, st.mode == PROCESSES))
            self._pending[sid] = (w, procs)
            undo.append(self._note(st.name, "workers/mode", _desc(st.workers, st.mode == PROCESSES),
                                   _desc(w, procs), why))
        if prefetch_before != self.run.prefetch_size:
            self._bad_prefetch.add(self.run.prefetch_size)
            self._pending_prefetch = prefetch_before
            undo.append(self._note("prefetch", "prefetch", self.run.prefetch_size, prefetch_before, why))
        if not undo:
            return False
        swap = self._processes_instead(before, stages, rate, rate_before)
        if swap:  # judged against the rate before the threads, as if they had not been tried
            self._apply(undo + swap, rate_before, before)
        else:
            self._apply(undo, -1.0)
        return True

    def _processes_instead(self, before: dict[int, tuple[int, bool]], stages: dict[int, Any], rate: float,
                           rate_before: float) -> list[Decision]:
        """When the change undone gave a computing stage one more thread: the stage goes to
        worker processes at once (its threads hold the GIL), rather than back to its threads for a
        window that would only measure them again (W1: 2 s of 10). Empty otherwise."""
        if len(before) != 1:
            return []
        (sid, (w, procs)), = before.items()
        st = stages.get(sid)
        win = self._windows().get(sid)
        if (st is None or win is None or procs or st.mode != THREADS or st.workers <= w or _has_hooks(st)
                or (sid, max(2, w), True) in self._bad):
            return []
        if win.waits():
            return []  # processes would wait as well
        ratio = win.cpu_ratio()
        self._pending.pop(sid, None)
        was = types.SimpleNamespace(name=st.name, op_id=sid, workers=w, mode=INLINE if w == 1 else THREADS)
        got = self._propose(was, max(2, w), True, f"{st.workers} threads were no faster than {w} ({rate:.1f} rows/s "
                            f"against {rate_before:.1f}) while computing (CPU {ratio:.0%} of their busy time): "
                            "they hold the GIL")
        if not got:
            self._pending[sid] = (w, procs)
        return got

    def _stage_decision(self, stages: dict[int, Any], windows: dict[int, _Window], waited: float) -> list[Decision]:
        judged = [(windows[sid].util(st.workers), sid) for sid, st in stages.items()
                  if sid in windows and windows[sid].tasks >= MIN_TASKS]
        if not judged:
            return []
        util, sid = max(judged)
        if util < SATURATED:
            return []
        if _has_hooks(stages[sid]):  # its hooks (callbacks) would see the rebuild: left as it is
            return []
        st, win = stages[sid], windows[sid]
        w, procs = st.workers, st.mode == PROCESSES
        ratio = win.cpu_ratio()
        per_cpu = win.blocks_per_cpu()
        head = (f"{min(util, 1.0):.0%} busy with {w} {'worker' if w == 1 else 'workers'} ({st.mode}), "
                f"consumer waited {waited:.0%}")
        used = sum(windows[s].cpu / windows[s].wall for s in windows if windows[s].wall > 0)
        waits = win.waits()
        to_procs = max(2, w) if w < 2 else w
        can_procs = not procs and (sid, to_procs, True) not in self._bad
        if can_procs and _locked(st):
            return self._propose(st, to_procs, True, f"{head}; its Python functions run under the lock that keys "
                                 "the global random generators per sample (a seed is set): threads run them one at "
                                 "a time")
        if can_procs and st.mode == THREADS and w >= 2 and not waits:
            # Only with idle cores: processes gain by using them. On a machine busy with other work,
            # threads are given little CPU whatever they run (W2's OpenCV threads, while another
            # pipeline's workers filled its prefetch, used 0.86 cores; processes ran 4x slower).
            cores = win.cpu / win.wall
            if gil_cores(per_cpu, cores) and self._idle() >= IDLE_TO_GAIN:
                seen = "" if per_cpu is None else f", {per_cpu:.0f} blocks per CPU second"
                return self._propose(st, w, True, f"{head}; its threads used {cores:.2f} cores between them "
                                     f"(CPU {ratio:.0%} of their busy time{seen}) while cores were idle: they take "
                                     "turns on the GIL")
        if waits:
            new = min(2 * w, WAITING_OVERSUBSCRIBE * self.cores)
            why = f"{head}; it waits (CPU {ratio:.0%} of its busy time)"
        else:
            new = w + 1
            per_worker = ratio * min(1.0, util)
            if used + per_worker > self.cores + 0.25 or new > self.cores:
                log.info("autotune: %s: workers %d kept (%s; the stages use %.1f of the %d cores budgeted)",
                         st.name, w, head, used, self.cores)
                return []
            why = f"{head}; it computes (CPU {ratio:.0%} of its busy time, {used:.1f} of {self.cores} cores used)"
        if new <= w:
            return []
        if (sid, new, procs) in self._bad:
            # More threads did not help (undone): a computing stage then holds the GIL, and worker
            # processes might. A 1-worker stage runs inline, so it gets the 2 processes it tried as threads.
            if can_procs and st.mode in (THREADS, INLINE) and not waits:
                return self._propose(st, to_procs, True, f"{head}; more threads made it no faster")
            return []
        return self._propose(st, new, procs, why)

    def _propose(self, st: Any, workers: int, procs: bool, why: str) -> list[Decision]:
        extra = self._memory_for(st, workers, procs)
        used = self._memory_now()
        if extra > 0 and used + extra > self.ram:
            log.info("autotune: %s: %s kept (%s; it would need %d MiB more, with %d MiB in use of the %d MiB "
                     "RAM budget)", st.name, _desc(st.workers, st.mode == PROCESSES), why, extra >> 20,
                     used >> 20, self.ram >> 20)
            return []
        self._pending[st.op_id] = (workers, procs)
        if procs != (st.mode == PROCESSES):
            return [self._note(st.name, "mode", f"{st.mode} x{st.workers}", f"{PROCESSES} x{workers}", why)]
        return [self._note(st.name, "workers", st.workers, workers, why)]

    def _prefetch_decision(self, stages: dict[int, Any], waited: float) -> list[Decision]:
        run = self.run
        depth = run.prefetch_size
        if depth <= 0 or not self._prefetching:
            return []
        top = run.tree
        feeding = stages.get(getattr(top, "op_id", -1))
        workers = self._pending.get(feeding.op_id, (feeding.workers, False))[0] if feeding is not None else 1
        target = min(MAX_PREFETCH, max(MIN_PREFETCH, 2 * workers))
        if depth >= target or target in self._bad_prefetch:
            return []
        extra = (target - depth) * self._row_bytes
        used = self._memory_now()
        why = (f"the consumer waited {waited:.0%} of the time and the prefetch holds fewer rows than twice the "
               f"{workers} workers feeding it")
        if used + extra > self.ram:
            log.info("autotune: prefetch %d kept (%s; %d MiB more would pass the %d MiB RAM budget)", depth, why,
                     extra >> 20, self.ram >> 20)
            return []
        self._pending_prefetch = target
        return [self._note("prefetch", "prefetch", depth, target, why)]

    def _note(self, op: str, setting: str, old: Any, new: Any, why: str) -> Decision:
        return Decision(self.run.epoch, self.run.step, op, setting, old, new, why)

    # ---- applying ------------------------------------------------------------------------------
    def _apply(self, decisions: list[Decision], rate: float = 0.0,
               before: dict[int, tuple[int, bool]] | None = None) -> None:
        """Rebuilds the run with the pending settings; ``rate``: rows/s before them (-1: an undo,
        which is not judged again); ``before``: the settings an undo of them returns to (default:
        the current ones)."""
        stages = self._stages()
        if before is None:
            before = {sid: (st.workers, st.mode == PROCESSES) for sid, st in stages.items() if sid in self._pending}
        prefetch_before = self.run.prefetch_size
        swaps: dict[int, P.Node] = {}
        for sid, (w, procs) in self._pending.items():
            st = stages.get(sid)
            if st is None:
                continue
            for m in st.members:
                node = m.node
                swaps[id(node)] = _retuned(node, self._origin.get(id(node), node), w, procs)
        prefetch = self._pending_prefetch if self._pending_prefetch is not None else prefetch_before
        self._pending = {}
        self._pending_prefetch = None
        self._pending_why = []
        plan = P.rewrite(self.run.plan, swaps, self._origin) if swaps else self.run.plan
        for d in decisions:
            log.info("%s", d.line())
        self.decisions += decisions
        self.run.retune(plan, prefetch)
        self._plan, self._prefetch = plan, prefetch
        prof = self.run.profile_record
        if prof.last_return is not None:  # the rebuild is not the consumer's time away
            prof.last_return = _clock()
        self._trial = (before, prefetch_before, rate, _must_gain(decisions)) if rate >= 0 else None
        self._mark()

    # ---- measuring -----------------------------------------------------------------------------
    def _stages(self) -> dict[int, Any]:
        """The run's stages by op id (the id of the op a stage tops stays the same across rebuilds)."""
        out: dict[int, Any] = {}
        todo = [self.run.tree]
        while todo:
            op = todo.pop()
            op = getattr(op, "op", op)  # a timed wrapper
            if getattr(op, "members", None) is not None:
                out[op.op_id] = op
            todo.extend(getattr(op, "parents", ()))
        return out

    def _windows(self) -> dict[int, _Window]:
        prof = self.run.profile_record
        now = _clock()
        out = {}
        for sid, rec in prof.stages.items():
            mark = self._marks.get(sid)
            if mark is None:
                continue
            count, busy, cpu_m, cpu_b, sw, sw_cpu, ntasks = mark
            tasks = rec.count - count
            if tasks <= 0:
                continue
            dbusy = rec.busy - busy
            dcpu_b = rec.cpu_busy - cpu_b
            cpu = (rec.cpu_measured - cpu_m) * dbusy / dcpu_b if dcpu_b > 0 else 0.0
            start = rec.tasks[ntasks][3] if len(rec.tasks) > ntasks else self._t0
            out[sid] = _Window(tasks, dbusy, cpu, rec.switches - sw, rec.switch_cpu - sw_cpu,
                               max(now - max(start, self._t0), 1e-9))
        return out

    def _idle(self) -> float:
        """The share of the machine's CPU time that was idle in the window (1.0 where unknown)."""
        idle, total = cpu_times()
        d_total = total - self._cpu_mark[1]
        return (idle - self._cpu_mark[0]) / d_total if d_total > 0 else 1.0

    def _consumer_delta(self) -> tuple[float, float]:
        prof = self.run.profile_record
        w0, a0 = self._consumer
        return prof.wait - w0, prof.away - a0

    def _mark(self) -> None:
        prof = self.run.profile_record
        self._marks = {sid: (r.count, r.busy, r.cpu_measured, r.cpu_busy, r.switches, r.switch_cpu, len(r.tasks))
                       for sid, r in prof.stages.items()}
        self._consumer = (prof.wait, prof.away)
        self._cpu_mark = cpu_times()
        self._t0 = _clock()
        self._times: list[float] = []  # when the window's rows were handed over

    def _memory_now(self) -> int:
        """Resident bytes of this process and the worker processes its stages ran tasks in."""
        return rss(os.getpid()) + sum(rss(p) for p in self._worker_pids())

    def _worker_pids(self) -> set[int]:
        me = os.getpid()
        pids = set()
        for rec in self.run.profile_record.stages.values():
            for t in rec.tasks[-64:]:
                pid = t[7][0] if isinstance(t[7], tuple) else None
                if pid is not None and pid != me:
                    pids.add(pid)
        return pids

    def _memory_for(self, st: Any, workers: int, procs: bool) -> int:
        """Bytes a stage with ``workers`` workers of that kind would add to what it holds now."""
        pids = self._worker_pids()
        per_process = max([rss(p) for p in pids] + [PROCESS_WORKER_FLOOR])
        task_bytes = self._row_bytes * 2  # results in flight per thread worker
        if procs:
            now = st.workers if st.mode == PROCESSES else 0
            return max(0, workers - now) * per_process
        return max(0, workers - st.workers) * task_bytes


def _desc(workers: int, procs: bool) -> str:
    return f"{workers} {'processes' if procs else 'threads'}"


def _locked(stage: Any) -> bool:
    """Whether a stage's ops key Python's and NumPy's global generators per sample (a seed is set
    and they run user code): a process-wide lock then runs them one at a time on threads."""
    return any(getattr(getattr(m, "spec", None), "globals", None) is not None for m in stage.members)


def _has_hooks(stage: Any) -> bool:
    """Whether a stage runs a map with row hooks (dataset callbacks), which a rebuild would call
    again: such a stage is not tuned."""
    return any(getattr(m.node, "hooks", None) is not None for m in stage.members)


def _retuned(node: Any, orig: Any, workers: int, procs: bool) -> P.Node:
    """``node`` (standing for the user's ``orig``) with a stage's new settings."""
    kind = type(node)
    if kind is P.RandomAccessNode:
        # A source read in the stage's workers moves with them to processes (else the stage would
        # split and the source be read in the main thread); back on threads it is as it was made.
        return dataclasses.replace(node, num_workers=workers, processes=True if procs else orig.processes)
    if kind in (P.MapNode, P.BatchNode):
        return dataclasses.replace(node, num_workers=workers, processes=procs)
    if kind is P.FilterNode:
        return dataclasses.replace(node, num_workers=workers)
    return node


_TUNED_KINDS = (P.RandomAccessNode, P.MapNode, P.BatchNode, P.FilterNode)
_CHEAP_SKIP = {"RepeatIter", "SelectIter", "TakeIter", "SkipIter"}


def _cheap_restore(tree: Any) -> bool:
    """Whether a rebuilt tree gets back to the current row without making rows again: only stages
    that read a source by index (their skip moves counters) and ops that pass a skip down."""
    todo = [tree]
    while todo:
        op = todo.pop()
        op = getattr(op, "op", op)
        if getattr(op, "members", None) is not None:
            if op.source is None or getattr(op, "_sorter", None) is not None:
                return False
        elif type(op).__name__ not in _CHEAP_SKIP:
            return False
        todo.extend(getattr(op, "parents", ()))
    return True
