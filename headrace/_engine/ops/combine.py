"""Zip (rows side by side) and concat (inputs one after another)."""
from __future__ import annotations

from typing import Any

import numpy as np

from headrace._engine.ops.base import BuildContext, OpIter
from headrace._util.errors import PipelineError
from headrace._util.rng import key_rng
from headrace._util.types import Row

CONCAT_OP = "ConcatDataset"
COLUMNS_DIFFER = "Invalid columns, 'column name' or 'column order' of concat datasets should be the same."
_INTERLEAVE_KEY = 0x434F4E43  # "CONC"
_DONE = object()  # what _next_of returns for a child that has no more rows


class ZipIter(OpIter):
    name = "Zip"

    def __next__(self) -> Row:
        out: tuple = ()
        for p in self.parents:
            out += next(p)
        return out

    def skip(self, n: int) -> int:
        return min(p.skip(n) for p in self.parents)


def check_concat_columns(node: Any) -> None:
    """PipelineError (a RuntimeError) unless every child has the first child's columns, in order."""
    first = tuple(node.children[0].columns)
    for child in node.children[1:]:
        if tuple(child.columns) != first:
            raise PipelineError(CONCAT_OP, f"{COLUMNS_DIFFER} Got {list(first)} and {list(child.columns)}.")


def _kind(value: Any) -> tuple[str, int] | None:
    """(dtype name, rank) of an array value; None for values that are not arrays (dicts...)."""
    if not isinstance(value, np.ndarray):
        return None
    dt = value.dtype
    return ("string" if dt.kind == "U" else "bytes" if dt.kind == "S" else dt.name), value.ndim


class ConcatIter(OpIter):
    """One child after another; optionally only one shard's positions (``node.shard``) or the
    children interleaved at random (``node.interleave``). The first row of each child in a pass is
    checked against the first row of the pass: same dtypes and ranks, as MindSpore requires."""

    name = "Concat"

    def __init__(self, ctx: BuildContext, node: Any, parents: tuple[OpIter, ...]) -> None:
        check_concat_columns(node)
        super().__init__(ctx, parents)
        self._current = 0
        self._shard = node.shard
        self._presharded = node.presharded or (False,) * len(parents)
        self._child_rows = node.child_rows
        self._interleave = node.interleave
        self._position = 0          # position in the whole concatenation (sharded mode)
        self._reference: list | None = None
        self._checked: set[int] = set()
        self._order: np.ndarray | None = None
        self._cursor = 0
        self._done: set[int] = set()
        self._last = 0

    def _reset(self, pass_index: int) -> None:
        self._current = 0
        self._position = 0
        self._reference = None
        self._checked = set()
        if self._interleave is None:
            self.parents[0].reset(pass_index)
            return
        for p in self.parents:
            p.reset(pass_index)
        labels = np.repeat(np.arange(len(self.parents), dtype=np.int32), self._interleave)
        key_rng(self.ctx.seed, _INTERLEAVE_KEY, self.op_id, pass_index).shuffle(labels)
        self._order, self._cursor, self._done = labels, 0, set()

    def _advance(self) -> bool:
        if self._shard is not None and self._presharded[self._current]:
            self._position += self._child_rows[self._current]
        self._current += 1
        if self._current >= len(self.parents):
            return False
        self.parents[self._current].reset(self.pass_index)
        return True

    def _verify(self, child: int, row: Row) -> None:
        self._checked.add(child)
        kinds = [_kind(v) for v in row]
        if self._reference is None:
            self._reference = kinds
            return
        for ref, got in zip(self._reference, kinds):
            if ref is None or got is None:
                continue
            if ref[0] != got[0]:
                raise PipelineError(CONCAT_OP, "Concat: the data types of the two datasets to be concatenated "
                                               f"should be the same, but got: {ref[0]} and {got[0]}.")
            if ref[1] != got[1]:
                raise PipelineError(CONCAT_OP, "Concat: the data tensor rank of the two datasets to be "
                                               f"concatenated should be the same, but got: {ref[1]} and {got[1]}.")

    def _next_in_order(self) -> Row:
        while True:
            if self._current >= len(self.parents):  # (a skip ran past the last child)
                raise StopIteration
            try:
                row = next(self.parents[self._current])
            except StopIteration:
                if not self._advance():
                    raise
                continue
            if self._shard is not None and not self._presharded[self._current]:
                keep = self._position % self._shard[0] == self._shard[1]
                self._position += 1
                if not keep:
                    continue
            return row

    def _next_interleaved(self) -> Row:
        order = self._order
        assert order is not None
        while self._cursor < len(order):
            child = int(order[self._cursor])
            self._cursor += 1
            if child not in self._done and (row := self._next_of(child)) is not _DONE:
                return row
        # A child that yields more rows than its size said: its extra rows come last, in order.
        for child in range(len(self.parents)):
            if child not in self._done and (row := self._next_of(child)) is not _DONE:
                return row
        raise StopIteration

    def _next_of(self, child: int) -> Any:
        """The next row of ``child`` (it becomes ``_last``), or ``_DONE`` once it is exhausted."""
        try:
            row = next(self.parents[child])
        except StopIteration:
            self._done.add(child)
            return _DONE
        self._last = child
        return row

    def __next__(self) -> Row:
        if self._interleave is not None:
            row = self._next_interleaved()
            child = self._last
        else:
            row = self._next_in_order()
            child = self._current
        if child not in self._checked:
            self._verify(child, row)
        return row

    def skip(self, n: int) -> int:
        if self._shard is not None or self._interleave is not None:
            return super().skip(n)
        done = 0
        while done < n and self._current < len(self.parents):
            done += self.parents[self._current].skip(n - done)
            if done < n and not self._advance():
                break
        return done
