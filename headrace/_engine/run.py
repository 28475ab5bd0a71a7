"""One iterator's run of a plan: epochs, the step counter, checkpoints, prefetch, shutdown."""
from __future__ import annotations

import dataclasses
import sys
import threading
import time
import warnings
import weakref
from typing import Any, Callable

from headrace._engine import auto_workers, machine
from headrace._engine import options as _options
from headrace._engine import profile as _profile
from headrace._engine.autotune import Tuner
from headrace._engine.build import build
from headrace._engine.ops.base import BuildContext, OpIter
from headrace._engine.exec.prefetch import Prefetcher
from headrace._engine.exec.stage import PoolRegistry
from headrace._engine.state import STATE_VERSION, check_state, fingerprint, ops_by_path, upgrade_v1
from headrace._util import rng
from headrace._engine.exec.error_rows import error_summary
from headrace._util.errors import EPOCHS_EXHAUSTED, ErrorSamplesWarning, PipelineError, detached
from headrace._util.types import Row
from headrace._util.wording import setting

_clock = time.perf_counter
# The prefetch thread starts once rows are heavy to make (batches of decoded images: measured
# 13-18% faster on W2 with it; not when the rows come straight from worker processes, which run
# ahead on their own) or once the consumer spends time away from the iterator (training, say). For
# cheap rows read by a consumer that does nothing else, a thread hand-off per row costs
# more than it overlaps (W3 reads 7.2 vs 9.8 GB/s, W1 about 9% slower), so they are made inline.
HEAVY_ROW_S = 1e-3
HEAVY_AFTER = 3  # rows timed before rows count as heavy
BUSY_CONSUMER = 0.25
MIN_AWAY_S = 50e-6  # ...and at least this long: loop bookkeeping is not work worth overlapping
PRESTART_TRIAL = 8  # a prestarted prefetch thread is judged (kept or released) every this many rows
TUNE_TIMING_S = 0.2  # an autotuned run's stages time their ops one by one every this many seconds


class RunContext(BuildContext):
    """The build context of a run: also carries the run's process pools across rebuilds."""

    def __init__(self, seed: int, options: Any, pools: PoolRegistry, seed_globals: bool,
                 profile: Any = None) -> None:
        super().__init__(seed, options, seed_globals)
        self.pools = pools
        self.profile = profile  # the run's profiler record (engine/profile.py), or None


class PipelineRun:
    """Runs a plan for ``num_epochs`` epochs (-1: unlimited).

    ``next_row()`` returns the next row, raises ``StopIteration`` once at the end of each epoch,
    and raises the MindSpore "beyond the specified number of epochs" error after the last one.
    A prefetch thread (``prefetch`` rows deep; default: the options' prefetch_size, 0 = none)
    runs the epoch ahead of the consumer once rows are seen to be heavy to make or the consumer to
    spend time between rows; cheap rows for a consumer that only reads are made in its own thread
    (see ``HEAVY_ROW_S``). The checkpoint is (seed, epoch, rows delivered to the
    consumer in the epoch, plus the few ops that keep a per-pass stream state), with the plan's
    fingerprint; restoring checks it all (``state.check_state``), then rebuilds the tree (keeping
    the worker processes), resets it to the epoch and skips.
    A failure releases the run's threads, worker processes and shared memory at once; after it
    the run keeps raising copies of that failure (until ``set_state`` rebuilds it).

    Nothing in a run refers back to it or to its owner: a run (and the iterator holding it)
    dropped without ``close()`` is freed by reference counting, and its finalizer, which holds
    only the resources, closes them. Keep it so: an object that keeps an exception raised through
    its own frames, or a cycle between ops, would hold everything until a garbage collection.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> "PipelineRun":
        # While a profiler records, and under autotune, runs are ProfiledRuns (the unprofiled
        # next_row stays as it is).
        options = kwargs.get("options", args[2] if len(args) > 2 else None)
        if cls is PipelineRun and (_profile.active() is not None or _tuned(options)):
            cls = ProfiledRun
        return object.__new__(cls)

    def __init__(self, plan: Any, num_epochs: int = -1, options: _options.Options | None = None,
                 prefetch: int | None = None, finish: Callable[[Row], Any] | None = None) -> None:
        self.options = options or _options.snapshot()
        # finish: applied to every row before it is handed out, in the prefetch thread (started
        # with the first row) when the run has one; it must not refer to the run's owner
        self._finish = finish
        if not self.options.watchdog and self.options.worker_timeout:
            raise ValueError(f"{setting('worker_timeout', repr(self.options.worker_timeout))} needs the watchdog, which "
                             f"{setting('watchdog', 'False')} turned off; turn the watchdog on, or the timeout "
                             f"off with {setting('worker_timeout', '0')}.")
        self.seed = self.options.seed if self.options.seed is not None else rng.new_seed()
        # With a seed set by the user, user functions draw from np.random / random seeded per sample.
        self.seed_globals = self.options.seed is not None
        self.num_epochs = num_epochs
        if self.options.auto_num_workers and not self.options.serial:
            plan = auto_workers.assign(plan)
        if self.options.numa_enable and not self.options.bind_cpus:
            cpus = machine.numa_cpus(machine.rank_on_host())
            if cpus is not None:
                self.options = dataclasses.replace(self.options, bind_cpus=machine.format_cpulist(cpus))
        self._plan = plan
        self._prefetch_size = self.options.prefetch_size if prefetch is None else prefetch
        if self.options.serial:
            self._prefetch_size = 0  # everything in the reading thread
        self._pools = PoolRegistry()
        self._prefetcher: Prefetcher | None = None
        self._draining: Prefetcher | None = None  # a released prefetcher whose rows are handed out first
        self._trial = 0  # rows read through a prestarted prefetch thread, while it is on trial (0: none)
        # ahead(row, consumer_waiting): applied by the prefetch thread to the rows it makes (after
        # finish; with whether the consumer waits for a row as this one is done), not to rows made
        # in the consumer's thread; it must not refer to the run (a framework loader's transfer)
        self.ahead: Callable[[Row, bool], Any] | None = None
        self._failed: BaseException | None = None
        self._closed = False
        self._lock = threading.Lock()
        self.epoch = 0
        self.step = 0
        self._started = False
        self._away = 0.0   # moving average: seconds the consumer spends between rows
        self._make = 0.0   # moving average: seconds the pipeline takes to make a row
        self._made = 0     # rows timed (a pass's first row is not)
        self._heavy = False
        self._handed: float | None = None  # when the last row was handed over (no prefetch)
        self._res = _Resources(self._pools)
        self._error_log: list = []  # rows that failed under an error policy (exec/error_rows.py)
        self._reported = 0          # how many of them an epoch-end report has covered
        self.tuner: Tuner | None = None
        rec = _profile.active() if type(self) is ProfiledRun else None
        tuned = type(self) is ProfiledRun and _tuned(self.options)
        if rec is None and tuned:  # autotune reads the profiler's counters: a recorder of its own
            rec = _profile.Recorder(TUNE_TIMING_S)
        self._profile = rec.new_run() if rec is not None else None
        self._build()
        self.tuner = Tuner(self, self.options.autotune_interval, self.options.autotune_cores,
                           self.options.autotune_ram) if tuned else None
        # A back-up for runs dropped without close(); it holds the resources, not the run.
        self._finalizer = weakref.finalize(self, self._res.close)

    def _build(self) -> None:
        self.ctx = RunContext(self.seed, self.options, self._pools, self.seed_globals, self._profile)
        self.ctx.error_log = self._error_log  # type: ignore[attr-defined]
        self.tree: OpIter = build(self._plan, self.ctx)
        if self._profile is not None:
            self.tree = self._profile.describe(self.tree)
        self._res.tree = self.tree
        # Rows made by worker processes are made ahead already (each worker holds several tasks):
        # the time to make one here is mostly waiting, which a prefetch thread would only move.
        self._ahead = getattr(self.tree, "mode", None) == "processes"

    def next_row(self) -> Row:
        saved = rng.save_key()  # ops run in this thread key their samples; the caller's key stays
        try:
            return self._next_row()
        finally:
            rng.restore_key(saved)

    def _next_row(self) -> Row:
        if self._closed:
            raise RuntimeError("The iterator has been stopped; create a new iterator to read again.")
        if self._failed is not None:
            raise detached(self._failed)
        if not self._started:
            if self.num_epochs != -1 and self.epoch >= self.num_epochs:
                raise PipelineError("iterator", EPOCHS_EXHAUSTED)
            self.tree.reset(self.epoch)
            self._started = True
            self._handed = None  # the gap between epochs is not the consumer's per-row work
            first = True  # nor is a pass's first row the pipeline's (worker start-up, cold caches)
        else:
            first = False
        pf = self._prefetcher
        now = _clock()
        if pf is None and self._finish is not None and self._prefetch_size > 0:
            pf = self._start_prefetch()
        elif pf is None and self._handed is not None:
            self._away += 0.2 * ((now - self._handed) - self._away)
            if self._prefetch_size > 0 and (self._heavy
                                            or self._away > max(BUSY_CONSUMER * self._make, MIN_AWAY_S)):
                pf = self._start_prefetch()
        try:
            if pf is not None and self._trial and self._judge_prestart(pf, now):
                pf = None  # released (before taking a row: an interrupted wait loses none)
            if pf is not None:
                row = pf.get()
                if self._trial:
                    self._handed = _clock()
            else:
                row = next(self.tree) if self._draining is None else self._drain()
                if self._finish is not None:
                    row = self._finish(row)
                if not first:
                    made = _clock() - now
                    self._make = made if self._make == 0.0 else self._make + 0.2 * (made - self._make)
                    self._made += 1
                    # Heavy: the average and the latest row, once a few rows have been seen (the
                    # first rows of a run wait for worker processes to start and caches to warm).
                    self._heavy = (self._made >= HEAVY_AFTER and made > HEAVY_ROW_S and self._make > HEAVY_ROW_S
                                   and not self._ahead)
                self._handed = _clock()
        except StopIteration:
            self._end_pass()
            if len(self._error_log) > self._reported:
                self._report_errors()
            cache = sys.modules.get("headrace._engine.cache_store")
            if cache is not None:  # rows cached in this process are committed at each epoch's end
                cache.flush_all(wait=True)
            self.epoch += 1
            self.step = 0
            self._started = False
            raise
        except BaseException as e:
            if not isinstance(e, (KeyboardInterrupt, SystemExit)):
                self._fail(e)
            raise
        self.step += 1
        return row

    def consumer_starts(self) -> None:
        """The consumer's own work (what a prefetch thread would overlap) starts now: the time
        since ``next_row`` handed the row over went on making it (a framework loader's transfer,
        which a prefetch thread would do as well), not away. A headrace.jax loader over worker
        processes, whose puts counted as time away, had a prefetch thread started again in most
        epochs (cProfile: 1,614 of W1's 2,349 batches over 3 epochs came through it), a hand-off
        per batch that only moved the puts."""
        if self._handed is not None:
            self._handed = _clock()

    def prestart(self) -> None:
        """Starts the pass the next ``next_row`` reads in a prefetch thread, so that its first rows
        are made before they are asked for (a framework loader calls it ahead of an epoch). The
        thread is on trial: every ``PRESTART_TRIAL`` rows it is judged, and released where
        ``next_row`` would not have started it (rows are not heavy, and the consumer spends little
        time between them compared with making one: a hand-off per row then costs more than it
        overlaps); the rows it made are handed out first. Does nothing once the pass has started,
        without prefetch (``prefetch_size`` 0) and after the last epoch."""
        if (self._started or self._closed or self._failed is not None or self._prefetch_size <= 0
                or (self.num_epochs != -1 and self.epoch >= self.num_epochs)):
            return
        self.tree.reset(self.epoch)
        self._started = True
        self._handed = None
        # on trial, unless rows are finished in the prefetch thread (next_row would start it again)
        self._trial = 1 if self._finish is None else 0
        self._start_prefetch(timed=bool(self._trial))

    def _judge_prestart(self, pf: Prefetcher, now: float) -> bool:
        """Counts a row asked of a prestarted prefetch thread; True if it released the thread."""
        if self._handed is not None:
            self._away += 0.2 * ((now - self._handed) - self._away)
        self._trial += 1
        if self._trial % PRESTART_TRIAL == 1:  # every PRESTART_TRIAL rows (it starts at 1)
            make = pf.make_s
            heavy = make > HEAVY_ROW_S and not self._ahead
            if not heavy and self._away <= max(BUSY_CONSUMER * make, MIN_AWAY_S):
                # (set before the wait, which a KeyboardInterrupt can cut short: _drain waits again;
                # _res keeps the thread until its rows are out, so close() still stops it)
                self._prefetcher, self._draining = None, pf
                self._make = make  # next_row judges whether to start one again against it
                self._trial = 0
                self._handed = None  # (the wait for the thread is not the consumer's)
                pf.release()
                return True
        return False

    def _drain(self) -> Row:
        """The next row made by a released prefetch thread, then the tree's."""
        d = self._draining
        if d is not None:
            d.release()  # at once: the thread has ended (unless a KeyboardInterrupt cut the wait short)
            if d.pending():
                return d.get()
            self._draining = self._res.prefetcher = None
        return next(self.tree)

    def _start_prefetch(self, timed: bool = False) -> Prefetcher:
        produce = self.tree.__next__
        if self._finish is not None:
            finish, made = self._finish, produce  # the thread refers to these, not to the run

            def produce() -> Any:
                return finish(made())
        waiting: list = []  # the prefetcher, weakly (its thread's produce must not keep it alive)
        if self.ahead is not None:
            ahead, unmade = self.ahead, produce

            def produce() -> Any:
                row = unmade()
                pf = waiting[0]() if waiting else None
                return ahead(row, pf is not None and pf.consumer_waiting)
        d, self._draining = self._draining, None
        if d is not None:
            d.release()  # (ended already, unless a KeyboardInterrupt cut its release short)
        if d is not None and d.pending():  # the rows a released thread made come first
            made_next = produce

            def produce() -> Any:
                return d.get() if d.pending() else made_next()
        pf = self._prefetcher = self._res.prefetcher = Prefetcher(produce, self._prefetch_size,
                                                                  cpus=self.options.bind_cpus, timed=timed)
        waiting.append(weakref.ref(pf))
        return pf

    def error_rows(self) -> list:
        """The rows that failed and were replaced or skipped, oldest first (``ErrorRow``s)."""
        return list(self._error_log)

    def _report_errors(self) -> None:
        """The epoch-end summary of the rows that failed in it (an ``ErrorSamplesWarning``)."""
        new = self._error_log[self._reported:]
        self._reported = len(self._error_log)
        for r in new:
            r.epoch = self.epoch
        warnings.warn(error_summary(new, self.epoch), ErrorSamplesWarning, stacklevel=3)

    def _fail(self, e: BaseException) -> None:
        """Keeps a copy of ``e`` to raise again (see ``detached``: ``e`` itself will hold the
        caller's frames) and releases the workers, threads and shared memory at once: a failed run
        makes no more rows, and whoever keeps ``e`` (a log, an interactive shell's last error)
        keeps this run alive through its frames. ``set_state`` rebuilds what it needs."""
        self._failed = detached(e)
        self._prefetcher = self._draining = None
        self._res.close()

    def _end_pass(self) -> bool:
        """Stops the pass's prefetch thread; False if it is still inside a (slow) call."""
        pf = self._prefetcher or self._draining
        self._prefetcher = self._res.prefetcher = self._draining = None
        self._trial = 0
        return pf.stop() if pf is not None else True

    def start_at(self, epoch: int, step: int) -> None:
        """Before the first row: continue as an uninterrupted run would from row ``step`` of
        epoch ``epoch`` (the epochs before count as read)."""
        if self._started or self.epoch or self.step:
            raise RuntimeError("start_at: the run has already started.")
        if self.num_epochs != -1 and (epoch > self.num_epochs or (epoch == self.num_epochs and step)):
            raise ValueError(f"start_at: epoch {epoch}, step {step} is past the end of the iterator's "
                             f"{self.num_epochs} epochs.")
        self.epoch, self.step = epoch, step
        if step:
            self.tree.reset(epoch)
            self._started = True
            skipped = self.tree.skip(step)
            if skipped != step:
                raise ValueError(f"The initial step is past the end of epoch {epoch}, which has {skipped} rows.")

    def get_state(self) -> dict:
        # every op that keeps a pass state, at every step (also between epochs: a stream op says
        # where its next pass starts)
        ops = {path: op.pass_state() for path, op in ops_by_path(self._plan, self.ctx.ops).items()}
        return {"version": STATE_VERSION, "fingerprint": fingerprint(self._plan), "seed": self.seed,
                "seed_globals": self.seed_globals, "epoch": self.epoch, "step": self.step, "ops": ops}

    def set_state(self, state: dict, *, seed_setting: str = "the seed") -> None:
        # Every field is checked (against this pipeline too) before anything changes: a refused
        # state leaves the run as it was.
        by_path = ops_by_path(self._plan, self.ctx.ops)
        if isinstance(state, dict) and state.get("version") == 1:
            state = upgrade_v1(state, self.ctx.ops, by_path)
        st = check_state(state, fingerprint(self._plan), self.num_epochs, by_path, self._plan, seed_setting)
        if st["epoch"] == self.num_epochs and st["step"]:
            raise ValueError(f"set_state: state['epoch'] is {st['epoch']}, the iterator's num_epochs (every epoch "
                             f"read), so state['step'] must be 0, but got {st['step']}: the state comes from an "
                             "iterator with more epochs, or was edited.")
        saved = rng.save_key()  # skipping to the step may run ops in this thread
        try:
            self._restore(st)
        finally:
            rng.restore_key(saved)

    def _restore(self, st: dict) -> None:
        """Rebuilds the tree and brings it to the checked state ``st``."""
        # The new tree takes over this run's worker processes, unless the old prefetch thread is
        # still waiting on one of them: then they are closed (which wakes it) and restarted.
        self._pools.keep = self._end_pass()
        try:
            self.tree.close()
            self.seed, self.seed_globals = st["seed"], st["seed_globals"]
            self._build()
        finally:
            self._pools.keep = False
            self._pools.close_idle()
        self._failed = None
        for path, op in ops_by_path(self._plan, self.ctx.ops).items():
            op.restore_pass_state(st["ops"][path])
        self.epoch, self.step = st["epoch"], st["step"]
        self._started = False
        if self.step:
            self.tree.reset(self.epoch)
            self._started = True
            skipped = self.tree.skip(self.step)
            if skipped != self.step:
                raise ValueError(f"set_state: state['step'] is {self.step}, past the end of epoch {self.epoch} "
                                 f"({skipped} rows): the state comes from a different pipeline.")

    # ---- what autotune (engine/autotune.py) reads and changes -----------------------------------
    @property
    def plan(self) -> Any:
        return self._plan

    @property
    def prefetch_size(self) -> int:
        return self._prefetch_size

    @prefetch_size.setter
    def prefetch_size(self, rows: int) -> None:
        """Rows the prefetch threads of passes started from now on hold ready (0: none; always 0
        in debug mode, where everything runs in the reading thread)."""
        self._prefetch_size = 0 if self.options.serial else rows

    def prefetched(self) -> int:
        """Rows the prefetch thread has made and the consumer not yet taken."""
        pf = self._prefetcher or self._draining
        return pf.size() if pf is not None else 0

    @property
    def prefetching(self) -> bool:
        return self._prefetcher is not None

    @property
    def failed(self) -> bool:
        return self._failed is not None

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def profile_record(self) -> Any:
        return self._profile

    def retune(self, plan: Any, prefetch: int) -> None:
        """Continues with ``plan`` (this run's plan with other worker counts or modes) and a prefetch
        ``prefetch`` rows deep, from where the run is, as a checkpoint restore would: the rows are
        those the run would have made."""
        st = self.get_state()
        self._plan = plan
        self._prefetch_size = prefetch
        self._restore(st)

    def close(self) -> None:
        """Stops the prefetch thread and every worker; frees shared memory. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self.tuner is not None:
            self.tuner.close()
        self._prefetcher = self._draining = None
        if self._profile is not None:
            self._profile.closed = _clock()
        self._finalizer()


class ProfiledRun(PipelineRun):
    """A run made while a profiler records: the consumer's waits and times away are recorded."""

    def next_row(self) -> Row:
        prof = self._profile
        if prof is None:  # the recording ended between __new__ and __init__
            return PipelineRun.next_row(self)
        t = _clock()
        try:
            row = PipelineRun.next_row(self)
        except StopIteration:
            prof.consumer(t, _clock(), False)
            if self.tuner is not None:  # a safe point: between epochs
                self.tuner.after_epoch()
            raise
        except BaseException:
            prof.consumer(t, _clock(), False)
            raise
        prof.consumer(t, _clock(), True)
        if self.tuner is not None:
            self.tuner.after_row(row)
        return row


def _tuned(options: Any) -> bool:
    """Whether a run with these options (None: the current ones) is autotuned: not in a serial
    (debug mode) run."""
    o = options if options is not None else _options.snapshot()
    return bool(getattr(o, "autotune", False)) and not getattr(o, "serial", False)


class _Resources:
    """What a run must release: its prefetch thread, its tree (and so its pools), idle pools."""

    def __init__(self, pools: PoolRegistry) -> None:
        self.pools = pools
        self.tree: OpIter | None = None
        self.prefetcher: Prefetcher | None = None

    def close(self) -> None:
        pf, self.prefetcher = self.prefetcher, None
        if pf is not None:
            pf.stop(timeout=0)  # it leaves at its next check; closing the pools below wakes it
        if self.tree is not None:
            self.tree.close()
        self.pools.close_idle()
        if pf is not None:
            pf.stop(timeout=5.0)
