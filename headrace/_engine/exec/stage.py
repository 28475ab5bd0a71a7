"""Stages: adjacent 1:1 ops run as one function per task, serially, on threads or in processes.

``build`` groups a chain of plan nodes into one stage::

    [random-access source] -> map* -> [filter | batch]

and the stage runs it as a :class:`StageProgram`: a task is a run of source indices (or of rows
pulled from the stage's parent), and the program reads, maps and, when a batch tops the stage,
collates them into one batch, all in the same worker. So a random-access source followed by maps
and a batch ships whole batches out of its workers, and only indices go in.

Grouping rules (the result cannot differ from running the ops one by one, because every op keys
its randomness by (seed, op id, pass, row index) and a stage assigns the same indices):

* maps join while they have the same mode (``python_multiprocessing``) and worker count;
* a batch joins on top: always when it only collates, with a ``per_batch_map`` when its mode and
  worker count match; a filter may top a stage instead (a batch cannot sit above a filter in one
  stage, since its rows would depend on the filter's results);
* a random-access source joins at the bottom when its reads may run in the stage's workers: it
  allows parallel reads (``num_parallel_workers > 1``) or has the stage's worker count, and, for a
  process stage, it is not marked thread-only and can be sent to a spawned worker.

The stage's mode: processes when its functions ask for them (a source alone: with more than one
worker), threads when more than one worker, otherwise inline in the caller's thread.
Process pools survive a checkpoint restore (``PoolRegistry``): workers start once per iterator.
"""
from __future__ import annotations

import collections
import os
import time
import weakref
from typing import Any, Callable

import numpy as np

from headrace._engine import plan as P
from headrace._engine.ops.base import BuildContext, OpIter
from headrace._engine.ops.batch import BatchIter
from headrace._engine.ops.map import FilterIter, MapIter
from headrace._engine.ops.source import RandomAccessIter
from headrace._engine.exec.error_rows import run_guarded, sorter_for
from headrace._engine.exec.ordered import InlinePool, ThreadPool, thread_name
from headrace._engine.exec.profiled import ProfiledProgram
from headrace._util import rng
from headrace._util.errors import PipelineError, format_traceback
from headrace._util.types import Row

_ndarray = np.ndarray
INLINE, THREADS, PROCESSES = "inline", "threads", "processes"
CHUNK = {INLINE: 16, THREADS: 16, PROCESSES: 64}   # most rows per task when no batch tops the stage
TASK_SECONDS = 0.005  # rows per task grow from 1 until a task takes about this long
DEPTH = {THREADS: 2}  # tasks in flight per thread worker (process pools adapt theirs to the result size)


class StageProgram:
    """What one task runs; picklable (cloudpickle for spawned workers).

    A task is ``(seed, pass, start, items, batch number)``: ``items`` are source indices when the
    stage reads a source (an int64 array, or a ``range`` when they are consecutive), else rows;
    ``start`` is the pass position of the first item, which is
    the index every op keys its randomness with. The result is ``(rows, error or None)``: the rows
    made before a failure, then the failure (a batch that fails yields no row).
    """

    __slots__ = ("read", "maps", "filter", "batch", "name", "errors")

    def __init__(self, read: Any, maps: tuple, filt: Any, batch: Any, name: str = "stage") -> None:
        self.read = read
        self.maps = maps
        self.filter = filt
        self.batch = batch
        self.name = name  # the stage's ops, for a failure that is no op's own
        self.errors: str | None = None  # an error policy ("replace", "skip"): see exec/error_rows.py

    def parts(self) -> list[tuple[str, Any]]:
        """(op name, user object) pairs, for naming what cannot be sent to a worker."""
        out: list[tuple[str, Any]] = []
        if self.read is not None:
            out.append((f"the source of {self.read.name}", self.read.source))
        out += [(m.name, m.fn) for m in self.maps]
        if self.filter is not None:
            out.append((self.filter.name, self.filter.pred))
        if self.batch is not None and self.batch.pbm is not None:
            out.append(("batch operation: [per_batch_map]", self.batch.pbm))
        return out

    def run(self, task: tuple) -> tuple[list, PipelineError | None]:
        if self.errors is not None:
            return run_guarded(self, task, self.errors)
        seed, p, start, items, num = task
        read, maps, filt, batch = self.read, self.maps, self.filter, self.batch
        out: list = []
        if type(items) is not list and type(items) is not range:
            items = items.tolist()
        try:
            # The common shape, in a loop of its own (not for user code that gets np.random and
            # random seeded per sample: MapFn.__call__ and ReadFn.keyed do that).
            if (filt is None and len(maps) == 1 and maps[0].globals is None
                    and (read is None or read.globals is None)):
                m = maps[0]
                cursor, prev = rng.enter_cursor(seed, m.op_id, p)
                try:
                    _one_map(read, m, items, start, out, cursor)
                finally:
                    rng.leave_cursor(prev)
            else:
                append = out.append
                pos = start
                keyed = read is not None and read.globals is not None
                for item in items:
                    row = (read.keyed(item, seed, p, pos) if keyed else read(item)) if read is not None else item
                    for m in maps:
                        row = m(row, seed, p, pos)
                    if filt is None or filt(row, seed, p, pos):
                        append(row)
                    pos += 1
            if batch is not None:
                return [batch(out, seed, p, num)], None
        except PipelineError as e:
            return ([] if batch is not None else out), e
        except Exception as e:  # noqa: BLE001 - no op's own error: the same report in every mode
            err = PipelineError(self.name, f"{type(e).__name__}: {e}", python_stack=format_traceback(e))
            err.__cause__ = e
            return ([] if batch is not None else out), err
        return out, None


def _one_map(read: Any, m: Any, items: list, pos: int, out: list, cursor: Any) -> None:
    """Reads (when ``read``) and maps ``items`` into ``out``; row ``k`` is keyed ``pos + k``.

    One loop per case, with everything it touches bound to locals: this is the per-row path of
    a source -> map -> batch stage, where a trivial map costs about as much as the loop itself.
    The source's ``read`` and, for a one-column in-place map returning an ndarray, the map's
    function are called here directly; failures are reported exactly as ``ReadFn`` and
    ``MapFn`` report them, and any other result goes through ``MapFn.finish``.
    """
    append = out.append
    fast = m.fast_path()
    if read is not None:
        rd = read.read
        if fast is not None:
            fn, one, at = fast
            finish = m.finish
            for item in items:
                try:
                    row = rd(item)
                except Exception as e:  # noqa: BLE001 - a failing read is reported with its sample
                    read.fail(e, item)
                cursor.index = pos
                try:
                    v = fn(row[one])
                except Exception as e:  # noqa: BLE001 - a failing user op is reported with its sample
                    m.fail(e, pos)
                if type(v) is _ndarray and len(row) == 2:
                    append((v, row[1]) if at == 0 else (row[0], v))
                else:
                    append(finish(row, v, pos))
                pos += 1
        else:
            apply = m.apply
            for item in items:
                try:
                    row = rd(item)
                except Exception as e:  # noqa: BLE001 - a failing read is reported with its sample
                    read.fail(e, item)
                cursor.index = pos
                append(apply(row, pos))
                pos += 1
    else:
        apply = m.apply
        for row in items:
            cursor.index = pos
            append(apply(row, pos))
            pos += 1


# ---- grouping ---------------------------------------------------------------------------------

class StagePlan:
    """A chain of plan nodes (bottom first) that runs as one stage, its parent and its mode."""

    __slots__ = ("nodes", "parent", "mode", "workers")

    def __init__(self, nodes: list[P.Node], parent: P.Node | None, mode: str, workers: int) -> None:
        self.nodes, self.parent, self.mode, self.workers = nodes, parent, mode, workers


def plan_stage(node: P.Node, options: Any) -> StagePlan | None:
    """The stage ``node`` tops, or None when ``node`` is not a stage op."""
    chain: list[P.Node] = []  # top first
    fmode: tuple[bool, int] | None = None  # (processes, workers) of the function members
    n = node
    serial = getattr(options, "serial", False)
    if type(n) is P.BatchNode:
        chain.append(n)
        if n.per_batch_map is not None:
            fmode = _fmode(n, serial)
        n = n.children[0]
        if type(n) is P.FilterNode:
            return _finish(chain, n, fmode, serial)
    elif type(n) is P.FilterNode:
        chain.append(n)
        fmode = _fmode(n, serial)
        n = n.children[0]
    hooks = getattr(options, "hooks", True)
    while type(n) is P.MapNode and (n.hooks is None or not hooks):  # a map with hooks stands alone
        m = _fmode(n, serial)
        if fmode is not None and m != fmode:
            break
        fmode = m
        chain.append(n)
        n = n.children[0]
    if type(n) is P.RandomAccessNode and (serial or _source_joins(n, fmode, options)):
        chain.append(n)
        return _finish(chain, None, fmode, serial)
    if not chain:
        return None
    return _finish(chain, n, fmode, serial)


def _fmode(n: P.Node, serial: bool) -> tuple[bool, int]:
    """(processes, workers) of a function member; one worker of no kind in a serial run."""
    return (False, 1) if serial else (bool(getattr(n, "processes", False)), n.num_workers)  # type: ignore[attr-defined]


def _finish(chain: list[P.Node], parent: P.Node | None, fmode: tuple[bool, int] | None,
            serial: bool = False) -> StagePlan:
    nodes = chain[::-1]
    if fmode is None:
        src = nodes[0] if type(nodes[0]) is P.RandomAccessNode else None
        if src is None or serial:
            return StagePlan(nodes, parent, INLINE, 1)
        w = src.num_workers
        if w <= 1 or getattr(src, "processes", None) is not True:
            # A source alone on threads only moves rows between threads: reads that take
            # microseconds (page cache, memory) lose more to GIL hand-offs than they gain, so the
            # stage reads in the caller's thread (the prefetch thread keeps it off the consumer).
            return StagePlan(nodes, parent, INLINE, 1)
        return StagePlan(nodes, parent, PROCESSES, w)
    procs, w = fmode
    return StagePlan(nodes, parent, PROCESSES if procs else (THREADS if w > 1 else INLINE), max(1, w))


_sendable: "weakref.WeakKeyDictionary[P.Node, bool]" = weakref.WeakKeyDictionary()


def _source_joins(src: P.RandomAccessNode, fmode: tuple[bool, int] | None, options: Any) -> bool:
    if fmode is None:
        return True
    procs, w = fmode
    if not (src.num_workers > 1 or src.num_workers == w):
        return False  # a source read by one worker is not known to bear concurrent reads
    if not procs:
        return True
    if getattr(src, "processes", None) is False:
        return False
    if getattr(options, "multiprocessing_start_method", "fork") != "spawn":
        return True
    ok = _sendable.get(src)
    if ok is None:
        import cloudpickle  # noqa: PLC0415 - only spawn needs it
        try:
            cloudpickle.dumps(src.source, protocol=5)
            ok = True
        except Exception:  # noqa: BLE001 - then the source is read in the main process
            ok = False
        _sendable[src] = ok
    return ok


def build_stage(sp: StagePlan, ctx: BuildContext, build: Callable[[P.Node, BuildContext], OpIter]) -> "StageIter":
    """Builds the parent first, then the members bottom to top: the op ids are those the ops get
    when built one by one."""
    parent = build(sp.parent, ctx) if sp.parent is not None else None
    members: list[OpIter] = []
    for n in sp.nodes:
        t = type(n)
        if t is P.RandomAccessNode:
            members.append(RandomAccessIter(ctx, n))
        elif t is P.MapNode:
            members.append(MapIter(ctx, n, None))
        elif t is P.FilterNode:
            members.append(FilterIter(ctx, n, None))
        else:
            members.append(BatchIter(ctx, n, None))
    return StageIter(ctx, members, parent, sp.mode, sp.workers)


def hooked_map_stage(node: P.MapNode, parent: OpIter) -> "StageIter":
    """A map with row hooks, alone in a stage over ``parent`` (built already). Blocking hooks, or
    a serial run, make it run one row at a time as rows are read (see ``ops/hooks.py``)."""
    ctx = parent.ctx
    if node.hooks.blocking or getattr(ctx.options, "serial", False):
        mode, workers = INLINE, 1
    else:
        sp = _finish([node], None, _fmode(node, False))
        mode, workers = sp.mode, sp.workers
    return StageIter(ctx, [MapIter(ctx, node, None)], parent, mode, workers)


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

    Its members (the op iterators of the grouped nodes) hold the ops' ids, specs and per-pass
    counters; the stage does not take an id of its own.
    """

    def __init__(self, ctx: BuildContext, members: list[OpIter], parent: OpIter | None, mode: str,
                 workers: int) -> None:
        self.ctx = ctx
        self.parents = (parent,) if parent is not None else ()
        self.op_id = members[-1].op_id
        self.pass_index = -1
        self._closed = False
        self.members = members
        self.source = members[0] if isinstance(members[0], RandomAccessIter) else None
        self.batch = members[-1] if isinstance(members[-1], BatchIter) else None
        self.filter = members[-1] if isinstance(members[-1], FilterIter) else None
        maps = tuple(m.spec for m in members if isinstance(m, MapIter))
        self.name = " -> ".join(m.name for m in members)
        self.program = StageProgram(self.source.spec if self.source else None, maps,
                                    self.filter.spec if self.filter else None,
                                    self.batch.spec if self.batch else None, self.name)
        self.mode, self.workers = mode, workers
        # A profiled run (engine/profile.py): tasks report their timing; None otherwise.
        prof = getattr(ctx, "profile", None)
        self._prof = prof.stage(self) if prof is not None else None
        self._submits: collections.deque[float] = collections.deque()
        if prof is not None:
            self.program = ProfiledProgram(self.program, prof.interval)  # type: ignore[assignment]
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
        self._key = tuple(id(m.node) for m in members) + (mode, workers)  # type: ignore[attr-defined]
        self._registry = getattr(ctx, "pools", None) if mode == PROCESSES else None
        try:
            if self._registry is not None:
                self.pool = self._registry.acquire(self._key, self._make_pool)
            else:
                self.pool = self._make_pool()
        except BaseException:
            for op in (*members, *self.parents):  # built already: release what they hold
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
            return ProcessPool(self.program, self.workers, self.name, self.ctx.options)
        o = self.ctx.options
        watch = (self.name, float(getattr(o, "multiprocessing_timeout_interval", 300)),
                 float(getattr(o, "worker_timeout", 0)))
        if self.mode == THREADS:
            return ThreadPool(self.program.run, self.workers, "headrace-stage",
                              capacity=self.workers * DEPTH[THREADS], watch=watch)
        if getattr(o, "serial", False):
            return InlinePool(self.program.run)  # debug mode: no thread at all
        if watch[2]:  # a timeout: the task runs on a thread, so that the reader is free to raise
            return ThreadPool(self.program.run, 1, "headrace-stage", capacity=1, watch=watch)
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
                if self.mode == THREADS:  # where it ran, as ProcessPool.get notes it for processes
                    err.add_note(f"in thread {thread_name(self.pool.last_thread)!r} (pid {os.getpid()}) "
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
            for m in maps:
                row = m(row, seed, p, pos)
            if filt is None or filt(row, seed, p, pos):
                return row

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
            self.pool.close()
        self._out.clear()
        for m in self.members:
            m.close()
        for p in self.parents:
            p.close()
