"""Flat map: each input row becomes a whole pipeline whose rows follow one another."""
from __future__ import annotations

from typing import Any, Callable

from headrace._engine.ops.base import BuildContext, OpIter
from headrace._engine.ops.map import global_seeds
from headrace._util.errors import PipelineError, user_error
from headrace._util.types import Row


class FlatMapIter(OpIter):
    name = "flat_map operation"

    def __init__(self, ctx: BuildContext, node: Any, parent: OpIter, build: Callable[..., OpIter]) -> None:
        super().__init__(ctx, (parent,))
        self._fn = node.fn
        self._globals = global_seeds(ctx, node.fn, self.op_id)
        self._build = build
        self._inner: OpIter | None = None
        self._count = 0

    def _reset(self, pass_index: int) -> None:
        self._close_inner()
        super()._reset(pass_index)
        self._count = 0

    def _close_inner(self) -> None:
        if self._inner is not None:
            self._inner.close()
            self._inner = None

    def __next__(self) -> Row:
        while True:
            if self._inner is not None:
                try:
                    return next(self._inner)
                except StopIteration:
                    self._close_inner()
            row = next(self.parent)
            g = self._globals
            token = g.enter(self.ctx.seed, self.pass_index, self._count) if g is not None else None
            try:
                plan = self._fn(*row)
            except Exception as e:
                raise user_error(self.name, e, index=self._count) from e
            finally:
                if g is not None and token is not None:
                    g.leave(token)
            if plan is None:
                raise PipelineError(self.name, "the function must return a Dataset, but returned None.",
                                    index=self._count)
            self._count += 1
            self._inner = self._build(plan, self.ctx)
            self._inner.reset(0)

    def close(self) -> None:
        self._close_inner()
        super().close()
