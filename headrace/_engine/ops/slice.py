"""Take and skip: the first ``count`` rows of a pass, or all but them."""
from __future__ import annotations

from typing import Any

from headrace._engine.ops.base import BuildContext, OpIter
from headrace._util.types import Row


class TakeIter(OpIter):
    def __init__(self, ctx: BuildContext, node: Any, parent: OpIter) -> None:
        super().__init__(ctx, (parent,))
        self._count = node.count
        self._taken = 0
        self.name = f"Take(count={node.count})"

    def _reset(self, pass_index: int) -> None:
        super()._reset(pass_index)
        self._taken = 0

    def __next__(self) -> Row:
        if self._taken >= self._count:
            raise StopIteration
        row = next(self.parent)
        self._taken += 1
        return row

    def skip(self, n: int) -> int:
        k = self.parent.skip(min(n, self._count - self._taken))
        self._taken += k
        return k


class SkipIter(OpIter):
    def __init__(self, ctx: BuildContext, node: Any, parent: OpIter) -> None:
        super().__init__(ctx, (parent,))
        self._count = node.count
        self._skipped = False
        self.name = f"Skip(count={node.count})"

    def _reset(self, pass_index: int) -> None:
        super()._reset(pass_index)
        self._skipped = False

    def _skip_head(self) -> None:
        if not self._skipped:
            self._skipped = True
            self.parent.skip(self._count)

    def __next__(self) -> Row:
        self._skip_head()
        return next(self.parent)

    def skip(self, n: int) -> int:
        self._skip_head()
        return self.parent.skip(n)
