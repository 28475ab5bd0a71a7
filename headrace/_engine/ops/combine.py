"""Zip (rows side by side) and concat (inputs one after another)."""
from __future__ import annotations

from typing import Any

from headrace._engine.ops.base import BuildContext, OpIter
from headrace._util.types import Row


class ZipIter(OpIter):
    name = "Zip"

    def __next__(self) -> Row:
        out: tuple = ()
        for p in self.parents:
            out += next(p)
        return out

    def skip(self, n: int) -> int:
        return min(p.skip(n) for p in self.parents)


class ConcatIter(OpIter):
    name = "Concat"

    def __init__(self, ctx: BuildContext, node: Any, parents: tuple[OpIter, ...]) -> None:
        super().__init__(ctx, parents)
        self._current = 0

    def _reset(self, pass_index: int) -> None:
        self._current = 0
        self.parents[0].reset(pass_index)

    def _advance(self) -> bool:
        self._current += 1
        if self._current >= len(self.parents):
            return False
        self.parents[self._current].reset(self.pass_index)
        return True

    def __next__(self) -> Row:
        while True:
            try:
                return next(self.parents[self._current])
            except StopIteration:
                if not self._advance():
                    raise

    def skip(self, n: int) -> int:
        done = 0
        while done < n:
            done += self.parents[self._current].skip(n - done)
            if done < n and not self._advance():
                break
        return done
