"""Rows that fail, under an error policy other than "raise" (the dataset layer's error samples mode).

With ``options.error_policy`` "replace" or "skip", a stage runs its tasks through
:func:`run_guarded`: a row whose source read, map or filter raises becomes an :class:`ErrorRow`
(what failed, where: op, pass position, source index, file, message) in the task's result, and the
next rows go on. Where they are resolved decides what is deterministic:

* a stage topped by a batch resolves them in the task, which is exactly one batch: "skip" leaves
  the row out of its batch (one row short: every shard keeps its number of batches), "replace"
  puts in the next healthy row of the batch (else the previous one); a batch none of whose rows
  could be made is replaced by the next healthy batch under either policy (:class:`ErrorSorter`);
* a stage without a batch hands rows out in pass order, and :class:`ErrorSorter` resolves them
  there, in the reading process: "skip" drops the row, "replace" puts in the next healthy row of
  the pass (the last one for failures at the end of a pass).

Either way the choice depends only on which rows fail, never on the number of workers or on task
sizes; a restored checkpoint reads the pass up to its position again (``StageIter.skip``), so it
makes the same choices. With the policy "raise" none of this runs: the stage's loops are untouched.
Every ErrorRow goes to the run's error log (``ctx.error_log``), with what became of it.
"""
from __future__ import annotations

from typing import Any

from headrace._util.errors import PipelineError
from headrace._util.types import Row

GARBAGE = "All data is garbage and cannot be replaced."


class ErrorRow:
    """A failed row's record; travels from a worker in the task's result."""

    __slots__ = ("op", "index", "source_index", "file", "error", "action", "replaced_by", "epoch")

    def __init__(self, op: str, index: int, source_index: int | None, file: str | None, error: str) -> None:
        self.op = op
        self.index = index                # position in the pass
        self.source_index = source_index  # the source's row index, when the stage reads a source
        self.file = file
        self.error = error
        self.action = ""                  # "skipped" or "replaced"
        self.replaced_by: int | None = None  # the pass position of the row put in its place
        self.epoch: int | None = None     # set by the run when the epoch ends

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__}

    def __repr__(self) -> str:
        return f"ErrorRow({self.as_dict()!r})"


def _record(e: PipelineError, pos: int, item: Any, read: Any) -> ErrorRow:
    file = e.file
    src = item if read is not None else None
    if file is None and src is not None:
        file_of = getattr(read.source, "file_of", None)
        if file_of is not None:
            try:
                file = file_of(src)
            except Exception:  # noqa: BLE001 - a name for the report only
                file = None
    detail = e.detail.strip().splitlines()
    return ErrorRow(e.op, pos, None if src is None else int(src), file, detail[-1] if detail else "")


def run_guarded(program: Any, task: tuple, policy: str) -> tuple[list, PipelineError | None]:
    """``StageProgram.run`` for the policies "replace" / "skip" (see the module docstring)."""
    seed, p, start, items, num = task
    read, maps, filt, batch = program.read, program.maps, program.filter, program.batch
    if type(items) is not list and type(items) is not range:
        items = items.tolist()
    rows: list[Any] = []
    pos = start
    keyed = read is not None and read.globals is not None
    for item in items:
        try:
            row = (read.keyed(item, seed, p, pos) if keyed else read(item)) if read is not None else item
            for m in maps:
                row = m(row, seed, p, pos)
            if filt is None or filt(row, seed, p, pos):
                rows.append((pos, row))
        except PipelineError as e:
            rows.append((pos, _record(e, pos, item, read)))
        pos += 1
    if batch is None:
        return [r for _, r in rows], None
    marks = [r for _, r in rows if type(r) is ErrorRow]
    kept = resolve(rows, policy) if marks else [r for _, r in rows]
    try:
        return ([batch(kept, seed, p, num)] if kept else []) + marks, None
    except PipelineError as e:
        return marks, e


def resolve(rows: list[tuple[int, Any]], policy: str) -> list[Row]:
    """The rows of one batch with its failed rows left out or replaced (``rows``: (position, row)).
    Empty when no row of the batch is healthy (the sorter then puts in a whole other batch)."""
    healthy = [(pos, r) for pos, r in rows if type(r) is not ErrorRow]
    if not healthy:
        for _, r in rows:
            r.action = "skipped" if policy == "skip" else ""
        return []
    out: list[Row] = []
    for pos, r in rows:
        if type(r) is not ErrorRow:
            out.append(r)
            continue
        if policy == "skip":
            r.action = "skipped"
            continue
        after = [h for h in healthy if h[0] > pos]
        sub = after[0] if after else [h for h in healthy if h[0] < pos][-1]
        r.action, r.replaced_by = "replaced", sub[0]
        out.append(sub[1])
    return out


class ErrorSorter:
    """Takes the ErrorRows out of a stage's results, in pass order, into the run's error log, and
    resolves what the tasks could not: failed rows of a stage without a batch, and batches none of
    whose rows could be made, for which a whole other batch stands in.
    A unit (a row, or such a batch) is replaced by the next healthy unit of the pass, or at the end
    of the pass by the last one."""

    def __init__(self, policy: str, log: list) -> None:
        self.policy = policy
        self.log = log
        self.owed: list[list[ErrorRow]] = []  # units waiting for the next healthy one
        self.last: Any = None
        self.last_pos: int | None = None

    @property
    def pending(self) -> bool:
        return bool(self.owed)

    def reset(self) -> None:
        self.owed.clear()
        self.last, self.last_pos = None, None

    def take(self, rows: list, start: int, batched: bool, positions: bool) -> list:
        """``rows`` (one task's result) without ErrorRows (logged), with the replacements owed.
        ``start``: the position of the first row; ``positions``: whether row k is at start + k."""
        if batched:
            marks = [r for r in rows if type(r) is ErrorRow]
            if not marks:
                return self._deliver(rows, None)
            self.log.extend(marks)
            batches = [r for r in rows if type(r) is not ErrorRow]
            if not batches:
                # A whole batch failed: another batch stands in (also for "skip": every shard of
                # a sharded pipeline keeps its number of batches).
                self.owed.append(marks)
                return []
            return self._deliver(batches, None)
        out: list = []
        for k, r in enumerate(rows):
            if type(r) is not ErrorRow:
                out += self._deliver([r], start + k if positions else None)
                continue
            self.log.append(r)
            if self.policy == "skip":
                r.action = "skipped"
            else:
                self.owed.append([r])
        return out

    def _deliver(self, units: list, pos: int | None) -> list:
        if not units:
            return units
        if self.owed:
            fill = [units[0]] * len(self.owed)
            self._settle(pos)
            units = fill + units
        self.last, self.last_pos = units[-1], pos
        return units

    def _settle(self, pos: int | None) -> None:
        for group in self.owed:
            for m in group:
                m.action, m.replaced_by = "replaced", pos
        self.owed.clear()

    def finish(self) -> list:
        """At the end of a pass: the replacements still owed (the last healthy unit)."""
        if not self.owed:
            return []
        if self.last is None:
            first = self.owed[0][0]
            self.owed.clear()
            if self.policy == "skip":
                return []
            raise PipelineError(first.op, f"{GARBAGE} No row of the pass was read without an error "
                                f"(the first failed at position {first.index}: {first.error}).", index=first.index)
        out = [self.last] * len(self.owed)
        self._settle(self.last_pos)
        return out


def sorter_for(ctx: Any, program: Any) -> "ErrorSorter | None":
    """The stage's error sorter under an error policy (not in a serial run), else None."""
    o = ctx.options
    policy = getattr(o, "error_policy", "raise")
    if policy == "raise" or getattr(o, "serial", False) or (program.read is None and not program.maps):
        return None
    program.errors = policy
    log = getattr(ctx, "error_log", None)
    if log is None:
        log = ctx.error_log = []
    return ErrorSorter(policy, log)


SHOWN = 20  # rows named in an epoch's summary (all of them are in the error log)


def error_summary(rows: list[ErrorRow], epoch: int) -> str:
    """One epoch's report: counts by what became of the rows, then each row (the first SHOWN)."""
    replaced = sum(1 for r in rows if r.action == "replaced")
    skipped = sum(1 for r in rows if r.action == "skipped")
    lines = [f"Epoch {epoch + 1}: {len(rows)} row(s) failed and were kept out of the output "
             f"({replaced} replaced, {skipped} skipped):"]
    for r in rows[:SHOWN]:
        where = f"position {r.index}"
        if r.source_index is not None:
            where += f", source row {r.source_index}"
        if r.file:
            where += f", file {r.file}"
        fate = (f"replaced by the row at position {r.replaced_by}" if r.action == "replaced" and r.replaced_by
                is not None else r.action or "pending")
        lines.append(f"  {r.op} at {where}: {r.error} -> {fate}")
    if len(rows) > SHOWN:
        lines.append(f"  ... and {len(rows) - SHOWN} more (the iterator's error_samples() lists them all)")
    return "\n".join(lines)
