"""Project and rename: rows re-ordered or re-labelled column-wise."""
from __future__ import annotations

from typing import Any

from headrace._engine.ops.base import BuildContext, OpIter
from headrace._util.types import Row


class SelectIter(OpIter):
    name = "Select"

    def __init__(self, ctx: BuildContext, node: Any, parent: OpIter) -> None:
        super().__init__(ctx, (parent,))
        self._index = node.index
        self._identity = tuple(range(len(node.children[0].columns))) == node.index

    def __next__(self) -> Row:
        row = next(self.parent)
        if self._identity:
            return row
        return tuple([row[i] for i in self._index])

    def skip(self, n: int) -> int:
        return self.parent.skip(n)
