"""What one task of a stage runs: :class:`StageProgram`, the stage's steps composed.

A task is a run of source indices (or of rows pulled from the stage's parent); the program reads,
maps, filters and, when a batch tops the stage, collates them into one batch, all in the thread or
process that runs the task. It calls the steps' picklable functions (``ops/source.ReadFn``,
``ops/map.MapFn`` / ``FilterFn``, ``ops/batch.BatchFn``) and nothing else: this is the per-row
path of the index domain, the same in every mode (inline, threads, processes).

Two variants run the same steps in the same order, and only when asked for: ``run_guarded``
(``error_rows.py``: an error policy that replaces or skips failing rows) and ``run_timed``
(``profiled.py``: a profiled run). A serial stage over a parent, which maps rows one at a time as
they are asked for, calls the same map and filter functions (``StageIter._next_row_inline``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from headrace._engine.exec.error_rows import run_guarded
from headrace._engine.ops.batch import NUMERIC_KINDS
from headrace._util import rng
from headrace._util.arrays import empty_aligned
from headrace._util.errors import PipelineError, format_traceback

try:
    from headrace._native import _rows
except ImportError:  # built without the extension: _one_map's Python loop
    _rows = None

_ndarray = np.ndarray
_OBJECT = np.dtype(object)


class StageProgram:
    """What one task runs; picklable (cloudpickle for spawned workers).

    A task is ``(seed, pass, start, items, batch number)``: ``items`` are source indices when the
    stage reads a source (an int64 array, or a ``range`` when they are consecutive), else rows;
    ``start`` is the pass position of the first item, which is
    the index every op keys its randomness with. The result is ``(rows, error or None)``: the rows
    made before a failure, then the failure (a batch that fails yields no row).

    ``stopped``, set when the stage closes, ends a task between two rows: closing then waits for
    the row each worker thread is in, not for the rest of its task (a whole batch: W2's 128
    images took a closing loader 0.3-0.7 s). The task then gives no row and an error no reader
    sees (the stage is closed).
    """

    __slots__ = ("read", "maps", "filter", "batch", "name", "errors", "stopped")

    def __init__(self, read: Any, maps: tuple, filt: Any, batch: Any, name: str = "stage") -> None:
        self.read = read
        self.maps = maps
        self.filter = filt
        self.batch = batch
        self.name = name  # the stage's ops, for a failure that is no op's own
        self.errors: str | None = None  # an error policy ("replace", "skip"): see exec/error_rows.py
        self.stopped = False

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
        built = None  # (column, the batch's array of it) when a map wrote its rows there
        same = False  # every row a pair of arrays, each column's of one dtype object (the C loop checked)
        if type(items) is not list and type(items) is not range:
            items = items.tolist()
        try:
            # The common shape, in a loop of its own (not for user code that gets np.random and
            # random seeded per sample: MapFn.__call__ and ReadFn.keyed do that).
            if (filt is None and len(maps) == 1 and maps[0].globals is None
                    and (read is None or read.globals is None)):
                m = maps[0]
                into = _batch_writer(m, batch)
                cursor, prev = rng.enter_cursor(seed, m.op_id, p)
                try:
                    stopped, built, same = _one_map(read, m, into, items, start, out, cursor, self)
                    if stopped:
                        return [], self._stopped_error()
                finally:
                    rng.leave_cursor(prev)
            else:
                append = out.append
                pos = start
                keyed = read is not None and read.globals is not None
                for item in items:
                    if self.stopped:
                        return [], self._stopped_error()
                    row = (read.keyed(item, seed, p, pos) if keyed else read(item)) if read is not None else item
                    for m in maps:
                        row = m(row, seed, p, pos)
                    if filt is None or filt(row, seed, p, pos):
                        append(row)
                    pos += 1
            if batch is not None:
                return [batch(out, seed, p, num, built, same)], None
        except PipelineError as e:
            return ([] if batch is not None else out), self._at_source(e, start, items)
        except Exception as e:  # noqa: BLE001 - no op's own error: the same report in every mode
            err = PipelineError(self.name, f"{type(e).__name__}: {e}", python_stack=format_traceback(e))
            err.__cause__ = e
            return ([] if batch is not None else out), err
        return out, None

    def _at_source(self, err: PipelineError, start: int, items: Any) -> PipelineError:
        """A map's or filter's failure names its row by pass position (the key of its random
        draws); a stage that reads the source knows the source index the row was read at, which is
        what the user can look up (under a shuffle the two differ), and the file where there is one."""
        read = self.read
        if read is None or err.index is None or not 0 <= err.index - start < len(items):
            return err
        if not any(err.op == m.name for m in self.maps) and (self.filter is None or err.op != self.filter.name):
            return err
        item = int(items[err.index - start])
        return err.relocated(item, getattr(read.source, "file_of", lambda i: None)(item))

    def _stopped_error(self) -> PipelineError:
        return PipelineError(self.name, "the pipeline was closed while this task ran; its rows were dropped.")


def _one_map(read: Any, m: Any, into: Any, items: list, pos: int, out: list, cursor: Any,
             prog: StageProgram) -> tuple[bool, tuple[int, np.ndarray] | None, bool]:
    """Reads (when ``read``) and maps ``items`` into ``out``; row ``k`` is keyed ``pos + k``.
    Returns whether ``prog`` was stopped before the last row, ``(column, array)`` when the
    map wrote that column's rows into one array for the batch (``into``, below), else None, and
    whether the C loop found every row a pair of arrays whose dtypes are the first row's, column
    by column (what ``BatchFn`` then need not check again; False from the Python loops).

    Two loops (rows from the parent; rows read from the source or written into a batch), with
    everything they touch bound to locals: this is the per-row path of a source -> map -> batch
    stage, where a trivial map costs about as much as the loop itself.
    The source's ``read`` and, for a one-column in-place map returning an ndarray, the map's
    function are called here directly; failures are reported exactly as ``ReadFn`` and
    ``MapFn`` report them, and any other result goes through ``MapFn.finish``. (The watchdog
    reads this function's frame: NOTE [ finding the stuck sample ] in watchdog.py.)

    ``into``, when a batch tops the stage and the map's function can write its result into a
    given array (``into(x, out=array)``, returning ``array`` itself when it wrote there): row
    ``k``'s result goes straight into row ``k`` of the batch's array of that column, made when the
    first row's result gives its shape and dtype, so the batch takes that array as it is instead
    of copying every row into one. A result the function made elsewhere is copied into its row;
    one that cannot be (another shape or dtype, not an array) ends the direct writes: the rows
    written so far stay views of the array, and the batch collates the rows as it always does
    (its checks name the problem). The rows and the array of a failed batch are dropped.
    """
    append = out.append
    apply = m.apply
    if read is None and into is None:  # rows from the stage's parent, through the map's apply
        for row in items:
            if prog.stopped:
                return True, None, False
            cursor.index = pos
            append(apply(row, pos))
            pos += 1
        return False, None, False
    fast = m.fast_path()  # (not None where ``into`` is: see _batch_writer)
    fn, one, at = fast if fast is not None else (None, 0, 0)
    finish = m.finish
    if fn is not None and into is None and read is not None and _rows is not None:
        # The loop below, for this shape, in C (headrace/_native/_rows.c): the same calls in the
        # same order, the row check of a user's random-access source included (``row_parts``).
        get, convert, n = getattr(read.source, "row_parts", None) or (read.read, None, -1)
        phase = [False]  # reading (False) or mapping (True) row len(out): for the watchdog
        same = [False]
        args = (items, get, convert, n, _ndarray, _OBJECT, fn, one, at, cursor, prog, out, read.fail, m.fail,
                finish, pos, phase, same)
        stopped = _rows.read_map(*args)  # (one line: the watchdog knows the call by it)
        return stopped, None, same[0]
    rd = read.read if read is not None else _same
    first, n = pos, len(items)
    buf: np.ndarray | None = None
    slot: Any = None
    for item in items:
        if prog.stopped:
            return True, None, False
        try:
            row = rd(item)
        except Exception as e:  # noqa: BLE001 - a failing read is reported with its sample
            read.fail(e, item)
        cursor.index = pos
        if fn is None:
            append(apply(row, pos))
            pos += 1
            continue
        try:
            v = into(row[one], out=(slot := buf[pos - first])) if buf is not None else fn(row[one])
        except Exception as e:  # noqa: BLE001 - a failing user op is reported with its sample
            m.fail(e, pos)
        if type(v) is _ndarray and len(row) == 2:
            if buf is not None:
                if v is not slot:
                    if v.shape == slot.shape and v.dtype == slot.dtype:
                        slot[...] = v  # the copy the batch would make
                        v = slot
                    else:
                        buf = None
            elif into is not None and pos == first and v.dtype.kind in NUMERIC_KINDS:
                buf = empty_aligned((n,) + v.shape, v.dtype)
                buf[0] = v
                v = buf[0]
            append((v, row[1]) if at == 0 else (row[0], v))
        else:
            buf = None
            append(finish(row, v, pos))
        pos += 1
    return False, (None if buf is None else (at, buf)), False


def _same(row: Any) -> Any:
    """The rows of a stage over a parent are its items (``_one_map``'s read, without a source)."""
    return row


def _batch_writer(m: Any, batch: Any) -> Any:
    """The map's function writing into a given array (its ``write_into(x, out=array)``: see
    :func:`_one_map`) when a batch that can take the column so made tops the stage; else None."""
    fast = m.fast_path()
    if batch is None or fast is None:
        return None
    into = getattr(fast[0], "write_into", None)
    return into if callable(into) and batch.takes_built(fast[2]) else None
