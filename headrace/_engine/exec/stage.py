"""Stages: adjacent 1:1 ops run as one function per task, serially, on threads or in processes.

A stage is where the index-domain ops (a source read by index, maps, a filter, a batch) run, and
the only place: ``build`` groups their plan nodes (``stage_plan.plan_stage``), builds one
:class:`~headrace._engine.ops.base.Step` per op (``ReadStep``, ``MapStep``, ``FilterStep``,
``BatchStep``: op ids, per-pass plans and picklable functions), and :class:`StageIter` runs
them as a :class:`~headrace._engine.exec.stage_program.StageProgram` per task: a run of source
indices (or of rows pulled from the stage's parent) read, mapped and, when a batch tops the stage,
collated into one batch, all in the same worker. So a random-access source followed by maps and a
batch ships whole batches out of its workers, and only indices go in.

Process pools survive a checkpoint restore (``PoolRegistry``): workers start once per iterator.
"""
from __future__ import annotations

import collections
import os
import time
from typing import Any, Callable

from headrace._engine import plan as P
from headrace._engine.ops.base import BuildContext, OpIter, Step
from headrace._engine.ops.batch import BatchStep
from headrace._engine.ops.map import FilterStep, MapStep
from headrace._engine.ops.source import ReadStep
from headrace._engine.exec.error_rows import sorter_for
from headrace._engine.exec.ordered import InlinePool, ThreadPool, thread_name
from headrace._engine.exec.profiled import ProfiledProgram
from headrace._engine.exec.stage_plan import INLINE, PROCESSES, THREADS, StagePlan, finish_plan, function_mode, plan_stage
from headrace._engine.exec.stage_program import StageProgram
from headrace._util.errors import PipelineError, add_note
from headrace._util.types import Row

__all__ = ["INLINE", "PROCESSES", "THREADS", "PoolRegistry", "StageIter", "StagePlan", "StageProgram",
           "build_stage", "hooked_map_stage", "plan_stage"]

CHUNK = {INLINE: 16, THREADS: 16, PROCESSES: 64}   # most rows per task when no batch tops the stage
TASK_SECONDS = 0.005  # rows per task grow from 1 until a task takes about this long
DEPTH = {THREADS: 2}  # tasks in flight per thread worker (process pools adapt theirs to the result size)


def build_stage(sp: StagePlan, ctx: BuildContext, build: Callable[[P.Node, BuildContext], OpIter]) -> "StageIter":
    """Builds the parent first, then the steps bottom to top: the op ids are those the ops would
    get built one by one."""
    parent = build(sp.parent, ctx) if sp.parent is not None else None
    members: list[Step] = []
    for n in sp.nodes:
        t = type(n)
        if t is P.RandomAccessNode:
            members.append(ReadStep(ctx, n))
        elif t is P.MapNode:
            members.append(MapStep(ctx, n))
        elif t is P.FilterNode:
            members.append(FilterStep(ctx, n))
        else:
            members.append(BatchStep(ctx, n))
    return StageIter(ctx, members, parent, sp.mode, sp.workers)


def hooked_map_stage(node: P.MapNode, parent: OpIter) -> "StageIter":
    """A map with row hooks, alone in a stage over ``parent`` (built already). Blocking hooks, or
    a serial run, make it run one row at a time as rows are read (see ``ops/hooks.py``)."""
    ctx = parent.ctx
    if node.hooks.blocking or getattr(ctx.options, "serial", False):
        mode, workers = INLINE, 1
    else:
        sp = finish_plan([node], None, function_mode(node, False))
        mode, workers = sp.mode, sp.workers
    return StageIter(ctx, [MapStep(ctx, node)], parent, mode, workers)


# ---- the stage iterator -----------------------------------------------------------------------

class PoolRegistry:
    """Process pools of one run, kept across a checkpoint restore's rebuild of the tree."""

    def __init__(self) -> None:
        self._idle: dict[tuple, Any] = {}
        self.keep = False

    def acquire(self, key: tuple, make: Callable[[], Any]) -> Any:
        pool = self._idle.pop(key, None)
        return pool if pool is not None else make()

    def release(self, key: tuple, pool: Any) -> None:
        if self.keep and key not in self._idle:
            pool.discard()
            self._idle[key] = pool
        else:
            pool.close()

    def close_idle(self) -> None:
        idle, self._idle = self._idle, {}
        for pool in idle.values():
            pool.close()


def _paced(op: OpIter) -> bool:
    """Whether ``op`` or an op below it holds rows until its consumer releases them."""
    return getattr(op, "paces_reads", False) or any(_paced(p) for p in op.parents)


class StageIter(OpIter):
    """Runs a stage's tasks through its pool and hands out the rows in order.

    Its members (the steps of the grouped nodes, bottom first) hold the ops' ids, functions and
    per-pass plans; the stage does not take an id of its own.
    """

    def __init__(self, ctx: BuildContext, members: list[Step], parent: OpIter | None, mode: str,
                 workers: int) -> None:
        self.ctx = ctx
        self.parents = (parent,) if parent is not None else ()
        self.op_id = members[-1].op_id
        self.pass_index = -1
        self._closed = False
        self.members = members
        first, last = members[0], members[-1]
        self.source = first if isinstance(first, ReadStep) else None
        self.batch = last if isinstance(last, BatchStep) else None
        self.filter = last if isinstance(last, FilterStep) else None
        maps = tuple(m.spec for m in members if isinstance(m, MapStep))
        # the columns named when a worker process dies: those of the stage's map, when it has one
        self._map_columns = maps[0].in_names if len(maps) == 1 else None
        self.name = " -> ".join(m.name for m in members)
        self.program: StageProgram | ProfiledProgram = StageProgram(self.source.spec if self.source else None, maps,
                                    self.filter.spec if self.filter else None,
                                    self.batch.spec if self.batch else None, self.name)
        self.mode, self.workers = mode, workers
        # A profiled run (engine/profile.py): tasks report their timing; None otherwise.
        prof = getattr(ctx, "profile", None)
        self._prof = prof.stage(self) if prof is not None else None
        self._submits: collections.deque[float] = collections.deque()
        if prof is not None:
            self.program = ProfiledProgram(self.program, prof.interval)
        self._chunk = 1  # rows per task (no batch): adapts to how long the ops take per row
        # Over a parent that holds rows until the consumer releases them (a gate, ops/gate.py), no
        # read-ahead: one task at a time, and no batch: one row at a time.
        self._paced = parent is not None and _paced(parent)
        # Serial, over a parent, no batch: run the ops per row as it is asked for (no read-ahead).
        self._per_row = ((mode == INLINE and not getattr(ctx.options, "worker_timeout", 0)) or self._paced) \
            and self.source is None and self.batch is None  # a timeout needs tasks; a gate, rows one by one
        self._maps = maps
        self._filter_fn = self.filter.spec if self.filter else None
        self._sorter = sorter_for(ctx, self.program)
        if self._sorter is not None:
            self._per_row = False  # failed rows are sorted out per task
        self._key = tuple(id(m.node) for m in members) + (mode, workers)
        self._registry = getattr(ctx, "pools", None) if mode == PROCESSES else None
        try:
            if self._registry is not None:
                self.pool = self._registry.acquire(self._key, self._make_pool)
            else:
                self.pool = self._make_pool()
        except BaseException:
            for op in self.parents:  # built already: release what they hold
                op.close()
            raise
        self._out: collections.deque[Row] = collections.deque()
        self._meta: collections.deque[tuple[int, int, int]] = collections.deque()
        self._err: BaseException | None = None
        self._plan_err: BaseException | None = None
        self._planned_all = True
        self._draining = False  # skip() delivers what is in flight without planning more
        self._pos = 0           # pass position of the next item to plan
        self._plan_batch = 0    # number of the next batch to plan
        self._cursor = 0        # pass position of the next row (or batch start) to deliver
        self._cursor_batch = 0  # number of the next batch to deliver

    def _make_pool(self) -> Any:
        try:
            return self._start_pool()
        except PipelineError:
            raise
        except (RuntimeError, OSError, MemoryError) as e:  # e.g. "can't start new thread", fork's EAGAIN
            # The pool stopped what it had started before raising: nothing is left running.
            kind = "processes" if self.mode == PROCESSES else "threads"
            raise PipelineError(self.name, f"could not start {self.workers} worker {kind} "
                                f"({type(e).__name__}: {e}); the machine ran out of {kind} or memory. "
                                "Lower num_parallel_workers (the number of CPUs is usually the fastest).") from e

    def _start_pool(self) -> Any:
        if self.mode == PROCESSES:
            from headrace._engine.exec.process_pool import ProcessPool  # noqa: PLC0415 - heavy, rarely needed
            return ProcessPool(self.program, self.workers, self.name, self.ctx.options, columns=self._map_columns)
        o = self.ctx.options
        watch: tuple[str, float, float] | None = (
            self.name, float(getattr(o, "multiprocessing_timeout_interval", 300)), float(getattr(o, "worker_timeout", 0)))
        if not getattr(o, "watchdog", True):
            watch = None  # no stall reports, no timeout (the run refused a timeout without the watchdog)
        if self.mode == THREADS:
            return ThreadPool(self.program.run, self.workers, "headrace-stage",
                              capacity=self.workers * DEPTH[THREADS], watch=watch, cpus=o.bind_cpus)
        if getattr(o, "serial", False):
            return InlinePool(self.program.run)  # debug mode: no thread at all
        if watch is None:
            return InlinePool(self.program.run)
        if watch[2]:  # a timeout: the task runs on a thread, so that the reader is free to raise
            return ThreadPool(self.program.run, 1, "headrace-stage", capacity=1, watch=watch, cpus=o.bind_cpus)
        return InlinePool(self.program.run, watch=(self.name, watch[1], 0.0))

    def __str__(self) -> str:
        return f"Stage[{self.name}]({self.mode}, workers={self.workers})"

    # ---- passes -------------------------------------------------------------------------------
    def reset(self, pass_index: int) -> None:
        self.pass_index = pass_index
        for m in self.members:
            m.reset(pass_index)
        if self.parents:
            self.parents[0].reset(pass_index)
        self._drop_in_flight()
        self._out.clear()
        self._err = self._plan_err = None
        self._pos = self._plan_batch = self._cursor = self._cursor_batch = 0
        self._planned_all = False
        if self._sorter is not None:
            self._sorter.reset()

    def _drop_in_flight(self) -> None:
        self.pool.discard()
        self._meta.clear()
        self._submits.clear()

    def __next__(self) -> Row:
        if self._out:
            self._cursor += 1
            return self._out.popleft()
        if self._per_row:
            return self._next_row_inline()
        while True:
            if self._out:
                self._cursor += 1
                return self._out.popleft()
            if self._err is not None:
                self._raise("_err")
            self._fill()
            if not self.pool.pending:
                if self._plan_err is not None:
                    self._raise("_plan_err")
                if self._sorter is not None and self._sorter.pending:
                    self._out.extend(self._sorter.finish())
                    continue
                raise StopIteration
            prof = self._prof
            if prof is None:
                rows, err = self.pool.get()
            else:
                asked = time.perf_counter()
                got = self.pool.get()
                prof.task(got, self._submits.popleft(), asked, time.perf_counter(), self.pool.capacity,
                          self._meta[0][1])
                rows, err = got[0], got[1]
            start, count, num = self._meta.popleft()
            if self._sorter is not None:
                rows = self._sorter.take(rows, start, self.batch is not None, self.filter is None)
            if self.batch is None:
                self._adapt_chunk(count)
            if self.batch is not None:  # the cursor counts rows; popping the batch adds its 1 back
                self._cursor_batch = num + 1
                self._cursor = start + count - len(rows)
            self._out.extend(rows)
            if err is not None:
                err = self._at_source(err)
                if self.mode == THREADS:  # where it ran, as ProcessPool.get notes it for processes
                    add_note(err, f"in thread {thread_name(self.pool.last_thread)!r} (pid {os.getpid()}) "
                                 f"of {self.name}")
                # Not kept in this frame: a user error raised in this thread holds its callers'
                # frames, this one too, and so would close a cycle (see _raise).
                self._err, err = err, None
                self._drop_in_flight()
                self._planned_all = True  # a failed pass delivers the rows before it, then ends

    def _raise(self, attr: str) -> None:
        """Raises the error kept in ``attr`` and forgets it. No local variable holds it while it
        propagates: a frame holding the exception that holds the frame is a cycle, which keeps
        the whole run (workers, shared memory, rows) until a garbage collection."""
        try:
            raise getattr(self, attr)
        finally:
            setattr(self, attr, None)

    def _next_row_inline(self) -> Row:
        parent, maps, filt = self.parents[0], self._maps, self._filter_fn
        seed, p = self.ctx.seed, self.pass_index
        while True:
            row = next(parent)
            pos = self._pos
            self._pos = pos + 1
            try:
                for m in maps:
                    row = m(row, seed, p, pos)
                if filt is None or filt(row, seed, p, pos):
                    return row
            except PipelineError as e:
                raise self._at_source(e) from e.__cause__

    def _at_source(self, err: BaseException) -> BaseException:
        """A failure of this stage's map or filter names its row by pass position; over a stage
        that reads a source through ops that keep every row in place (maps), the position is the
        source's plan position, so the error names the source index (and file) the row was read
        at instead, as a stage that reads the source itself does (``StageProgram._at_source``)."""
        if self.source is not None or not isinstance(err, PipelineError) or err.index is None:
            return err
        if not any(err.op == m.name for m in self._maps) and (self.filter is None or err.op != self.filter.name):
            return err
        below = self.parents[0] if self.parents else None
        while isinstance(below, StageIter) and below.filter is None and below.batch is None:
            if below.source is not None:
                plan = below.source.indices
                if not 0 <= err.index < len(plan):
                    return err
                item = int(plan[err.index])
                return err.relocated(item, getattr(below.source.spec.source, "file_of", lambda i: None)(item))
            below = below.parents[0] if below.parents else None
        return err

    def _adapt_chunk(self, count: int) -> None:
        seconds = self.pool.last_seconds
        if seconds <= 0.0:
            self._chunk = CHUNK[self.mode]
            return
        want = int(TASK_SECONDS * count / seconds)
        self._chunk = max(1, min(CHUNK[self.mode], want, self._chunk * 4))

    def _fill(self) -> None:
        pool = self.pool
        cap = 1 if self._paced else pool.capacity
        while not self._planned_all and not self._draining and pool.pending < cap:
            try:
                planned = self._plan_next()
            except Exception as e:  # noqa: BLE001 - raised after the rows already in flight
                self._plan_err = e
                self._planned_all = True
                return
            if planned is None:
                self._planned_all = True
                return
            task, meta = planned
            pool.submit(task)
            self._meta.append(meta)
            if self._prof is not None:
                self._submits.append(time.perf_counter())

    def _plan_next(self) -> tuple[tuple, tuple[int, int, int]] | None:
        seed, p = self.ctx.seed, self.pass_index
        s = self._pos
        src = self.source
        if src is not None:
            idx = src.indices
            total = len(idx)
            if s >= total:
                return None
            if self.batch is None:
                left = total - s
                e = s + max(1, min(self._chunk, left // (self.workers * 2) or 1))
                self._pos = e
                return (seed, p, s, src.span(s, e), 0), (s, e - s, 0)
            num = self._plan_batch
            size = self.batch.size_for(num)
            count = min(size, total - s)
            if count < size and self.batch.node.drop_remainder:
                return None
            self._pos = s + count
            self._plan_batch = num + 1
            return (seed, p, s, src.span(s, s + count), num), (s, count, num)
        parent = self.parents[0]
        if self.batch is not None:
            job = self.batch.gather(parent)
            if job is None:
                return None
            rows, num = job
        else:
            rows = []
            try:
                for _ in range(self._chunk):
                    rows.append(next(parent))
            except StopIteration:
                self._planned_all = True
            except Exception as e:  # noqa: BLE001 - deliver the rows pulled so far, then the error
                if not rows:
                    raise
                self._plan_err = e
                self._planned_all = True
            if not rows:
                return None
            num = 0
        self._pos = s + len(rows)
        return (seed, p, s, rows, num), (s, len(rows), num)

    # ---- skipping (checkpoint restore, skip/take) -------------------------------------------
    def skip(self, n: int) -> int:
        if self._sorter is not None:  # which rows fail decides what is delivered: make them again
            return OpIter.skip(self, n)
        done = 0
        while done < n and self._out:
            self._out.popleft()
            self._cursor += 1
            done += 1
        if done >= n:
            return done
        if self._per_row and self.filter is None:
            k = self.parents[0].skip(n - done)
            self._pos += k
            return done + k
        if self.filter is not None or self.source is None:
            # Rows in flight were already pulled from the parent: deliver them, then skip the parent.
            self._draining = True
            try:
                while done < n and (self.pool.pending or self._out or self._err is not None):
                    self.__next__()
                    done += 1
            except StopIteration:
                return done
            finally:
                self._draining = False
            if done >= n or self._planned_all:
                return done
            if self.filter is not None:
                return done + OpIter.skip(self, n - done)
            if self.batch is not None:
                k, rows = self.batch.skip_batches(self.parents[0], n - done)
                self._pos += rows
            else:
                k = self.parents[0].skip(n - done)
                self._pos += k
            return done + k
        # A source stage: move the counters; nothing needs computing.
        self._drop_in_flight()
        self._err = self._plan_err = None
        total = len(self.source.indices)
        if self.batch is None:
            k = min(n - done, total - self._cursor)
            self._cursor += k
            done += k
        else:
            while done < n and self._cursor < total:
                size = self.batch.size_for(self._cursor_batch)
                count = min(size, total - self._cursor)
                if count < size and self.batch.node.drop_remainder:
                    self._cursor = total
                    break
                self._cursor += count
                self._cursor_batch += 1
                done += 1
        self._pos, self._plan_batch = self._cursor, self._cursor_batch
        self._planned_all = False
        return done

    # ---- shutdown -----------------------------------------------------------------------------
    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._registry is not None:
            self._registry.release(self._key, self.pool)
        else:
            program = self.program
            (program.program if isinstance(program, ProfiledProgram) else program).stopped = True
            self.pool.close()
        self._out.clear()
        for p in self.parents:
            p.close()
