"""Repeat: replays its input ``count`` times per pass (None: forever)."""
from __future__ import annotations

from typing import Any

from headrace._engine.ops.base import BuildContext, OpIter
from headrace._util.types import Row

FOREVER_STRIDE = 1 << 32  # child pass numbers of an endless repeat: pass * stride + round


class RepeatIter(OpIter):
    def __init__(self, ctx: BuildContext, node: Any, parent: OpIter) -> None:
        super().__init__(ctx, (parent,))
        self._count = node.count
        self._round = 0
        self._round_rows = 0
        self.name = f"Repeat(count={node.count})"

    def _child_pass(self, pass_index: int, rnd: int) -> int:
        stride = self._count if self._count is not None else FOREVER_STRIDE
        return pass_index * stride + rnd

    def _reset(self, pass_index: int) -> None:
        self._round = 0
        self._round_rows = 0
        self.parent.reset(self._child_pass(pass_index, 0))

    def _next_round(self) -> bool:
        if self._round_rows == 0 and self._count is None:
            return False  # an empty input repeated forever is still empty
        self._round += 1
        if self._count is not None and self._round >= self._count:
            return False
        self._round_rows = 0
        self.parent.reset(self._child_pass(self.pass_index, self._round))
        return True

    def __next__(self) -> Row:
        while True:
            try:
                row = next(self.parent)
            except StopIteration:
                if not self._next_round():
                    raise
                continue
            self._round_rows += 1
            return row

    def skip(self, n: int) -> int:
        done = 0
        while done < n:
            k = self.parent.skip(n - done)
            done += k
            self._round_rows += k
            if done < n and not self._next_round():
                break
        return done
