"""The rest of one pass, dealt out again: resuming a sharded read on a different number of shards.

A pass of a sharded random-access source has one global order ``G`` (a permutation of the rows, or
``arange`` without shuffling) whose positions are dealt round-robin: shard ``i`` of ``k`` reads
positions ``i, i + k, i + 2k, ...``. When every shard has read the same number ``c`` of its
positions (data-parallel training steps in lockstep), the positions read so far are exactly the
prefix ``[start, start + k * c)`` of that order: so the progress of the whole job is one number,
``start``, whatever the shard count was.

:class:`ResumedPassPlan` reads pass ``pass_index`` from position ``start`` on, dealt round-robin over
its own shard count: shard ``i`` of ``m`` reads positions ``start + i + m * j`` for
``j < ceil((n - start) / m)``. Every row not read before ``start`` is read exactly once across the
shards. Shards that come up one short get a pad row, as MindSpore's rule gives every shard the same
count; pads are taken from the rows already read before ``start`` (position ``(p - n) % start``), so
no unread row is ever read twice. Every other pass is the plan ``then`` (the shard's ordinary plan).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from headrace._engine.samplers.base import LabelsFn, SamplerPlan, _readonly
from headrace._util.types import SampleContext


@dataclasses.dataclass(frozen=True)
class ResumedPassPlan(SamplerPlan):
    """Pass ``pass_index`` from global position ``start`` on, shard ``shard_id`` of ``num_shards``.

    Args:
        order: the plan whose ``indices`` (with an unsharded context) are the pass's global order.
        then: the plan of every other pass (this shard's ordinary plan).
        pass_index: the pass being resumed.
        start: positions of the global order already read (0 < start < rows).
        num_shards, shard_id: how the rest of the pass is dealt out.
    """

    order: SamplerPlan
    then: SamplerPlan
    pass_index: int
    start: int
    num_shards: int
    shard_id: int

    def __post_init__(self) -> None:
        if self.start <= 0:
            raise ValueError(f"ResumedPassPlan: start must be above 0, but got {self.start}.")
        if not 0 <= self.shard_id < self.num_shards:
            raise ValueError(f"ResumedPassPlan: shard_id must be in [0, {self.num_shards}), "
                             f"but got {self.shard_id}.")

    def is_shuffled(self) -> bool:
        return self.then.is_shuffled()

    def is_sharded(self) -> bool:
        return self.num_shards > 1

    def num_samples(self, num_rows: int, labels: LabelsFn | None = None) -> int:
        return self.then.num_samples(num_rows, labels)

    def rows_left(self, num_rows: int) -> int:
        """Rows this shard reads in the resumed pass (pads included)."""
        return -(-(num_rows - self.start) // self.num_shards)

    def indices(self, ctx: SampleContext) -> np.ndarray:
        if ctx.pass_index != self.pass_index:
            return self.then.indices(ctx)
        n = ctx.num_rows
        order = np.asarray(self.order.indices(ctx), dtype=np.int64)
        if len(order) != n:
            raise ValueError(f"ResumedPassPlan: the global order has {len(order)} positions for {n} rows; "
                             "only a plan that reads every row once can be resumed on other shards.")
        if self.start >= n:
            raise ValueError(f"ResumedPassPlan: start {self.start} is not below the {n} rows of the source.")
        pos = self.start + self.shard_id + self.num_shards * np.arange(self.rows_left(n), dtype=np.int64)
        pad = pos >= n
        pos[pad] = (pos[pad] - n) % self.start
        return _readonly(order[pos])
