"""Chained samplers over MindRecord rows (a sampler with ``add_child`` given to ``MindDataset``).

MindSpore's MindRecord reader applies a chain as operations on one list of row ids, innermost
first, each on the list the one before it left (so a parent samples positions of its child's
output, and a distributed child hands its parent only its shard). Its later epochs differ from the
first, as observed on MindSpore 2.10:

* pass 0: every operation, innermost first: a shuffle reorders the list with
  ``minstd_shuffle(len, seed + 1)`` (``seed`` for one that does not reshuffle every epoch, as the
  sampler ``Dataset.split`` adds); a shard keeps its positions (strided, or blocks under
  ``MS_DEV_MINDRECORD_SHARD_BY_BLOCK``) of the list, shuffled first with
  ``minstd_shuffle(len, shard_seed + 1)`` when it shuffles; a sequence keeps a slice; a subset
  keeps its ids (taken modulo the list's length), shuffled with ``seed + 1`` when random;
* pass k without a shard in the chain: each shuffle reorders the previous pass's output again with
  ``minstd_shuffle(len, seed + 1 + k)`` (``seed`` again when it does not reshuffle); nothing else
  is applied again;
* pass k with a shard in the chain: the shard is taken again (with ``shard_seed + 1 + k`` when it
  shuffles) from the list it was given in pass 0; shuffles are not applied again, and each
  operation above the shard only cuts the list to its count (:meth:`ChainOp.later_count`: a
  shuffle's or a sequence's ``num_samples``, a sequence without one its length less its start, a
  subset as many ids as it has).

An operation that asks for more ids than it is given (``RandomSampler(num_samples=5)`` over a
shard of 3 rows, a sequence whose start plus count runs past the end) keeps the ids there are: each
row of the shard once. MindSpore 2.10 reads past the end of its list there: it yields more rows
than its own dataset size, rows twice or rows of other shards, or crashes
(``tests/compat/test_issue39_orders_compat.py``).

A chain with more than one shard is not planned here (:func:`supports`).
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from headrace._engine.samplers.base import SamplerPlan, SmallCache
from headrace._engine.samplers.mindrecord import shard_by_block, shard_positions
from headrace._util import mtshuffle
from headrace._util.mtshuffle import minstd_shuffle
from headrace._util.types import SampleContext

__all__ = ["ChainOp", "MindChainPlan", "supports"]

KINDS = ("shuffle", "shard", "sequence", "subset")


@dataclasses.dataclass(frozen=True)
class ChainOp:
    """One operation of a chain.

    Attributes:
        kind: "shuffle", "shard", "sequence" or "subset".
        limit: keep at most this many ids (0: all).
        shuffle: (shard, subset) shuffle first.
        reshuffle: (shuffle) a new seed every epoch (``seed + 1 + k``), else ``seed`` every time.
        num_shards, shard_id, seed: (shard) which shard, and the seed of its shuffle.
        start: (sequence) first position kept.
        ids: (subset) the positions kept.
    """

    kind: str
    limit: int = 0
    shuffle: bool = False
    reshuffle: bool = True
    num_shards: int = 1
    shard_id: int = 0
    seed: int = 0
    start: int = 0
    ids: tuple = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {list(KINDS)}, but got {self.kind!r}.")
        if self.limit < 0 or self.start < 0:
            raise ValueError(f"limit and start must be >= 0, but got {self.limit} and {self.start}.")
        if self.kind == "shard" and self.num_shards < 1:
            # a shard_id out of [0, num_shards) is read as MindSpore reads it (see shard_positions)
            raise ValueError(f"num_shards must be >= 1, but got {self.num_shards}.")

    def count(self, n: int) -> int:
        """How many ids this operation leaves of a list of ``n`` (in pass 0)."""
        if self.kind == "shuffle":
            out = n
        elif self.kind == "shard":
            out = -(-n // self.num_shards) if n else 0
        elif self.kind == "sequence":
            out = max(n - self.start, 0)
        else:
            out = len(self.ids) if n else 0
        return min(out, self.limit) if self.limit else out


    def later_count(self, n: int) -> int:
        """How many ids this operation, above a shard, keeps of the ``n`` the shard gives in a pass
        after the first: its count alone (a sequence's start no longer skips ids, its count still
        applies; a subset keeps as many ids as it has)."""
        if self.kind == "sequence" and not self.limit:
            return max(n - self.start, 0)
        out = len(self.ids) if self.kind == "subset" else n
        return min(out, self.limit, n) if self.limit else min(out, n)


def supports(ops: tuple[ChainOp, ...]) -> bool:
    """Whether :class:`MindChainPlan` plans this chain (at most one shard)."""
    return sum(op.kind == "shard" for op in ops) <= 1


def _shuffled(ids: np.ndarray, seed: int) -> np.ndarray:
    return ids[minstd_shuffle(len(ids), seed & mtshuffle.M32)] if len(ids) > 1 else ids


@dataclasses.dataclass(frozen=True)
class MindChainPlan(SamplerPlan):
    """The ids a chain of MindRecord samplers reads (see the module docstring).

    Attributes:
        ops: the operations, innermost (the last child) first.
        by_block: shards read contiguous blocks; None: ``shard_by_block()`` when planned.
        seed: the seed of the shuffles; None: the pipeline's (the parts of a split share one).
    """

    ops: tuple[ChainOp, ...]
    by_block: bool | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        if not self.ops:
            raise ValueError("ops must name at least one operation.")
        if not supports(self.ops):
            raise ValueError("A MindRecord sampler chain may hold one distributed sampler at most.")

    def is_shuffled(self) -> bool:
        return any(op.kind == "shuffle" or op.shuffle for op in self.ops)

    def is_sharded(self) -> bool:
        return any(op.kind == "shard" and op.num_shards > 1 for op in self.ops)

    def num_samples(self, num_rows: int, labels: Any = None) -> int:
        n = num_rows
        for op in self.ops:
            n = op.count(n)
        return n

    def rows_for_parent(self, ctx: SampleContext) -> int:
        return self.num_samples(ctx.num_rows)

    @staticmethod
    def _shard(ids: np.ndarray, op: ChainOp, pass_index: int, block: bool) -> np.ndarray:
        if len(ids) == 0:
            return ids
        if op.shuffle:
            ids = _shuffled(ids, op.seed + 1 + pass_index)
        out = ids[shard_positions(len(ids), op.num_shards, op.shard_id, block)]
        return out[:op.limit] if op.limit else out

    def _first(self, n: int, seed: int, block: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """Pass 0's ids, and the list the shard was given (None without a shard)."""
        ids = np.arange(n, dtype=np.int64)
        before_shard = None
        for op in self.ops:
            if op.kind == "shard":
                before_shard = ids
                ids = self._shard(ids, op, 0, block)
                continue
            if op.kind == "shuffle":
                ids = _shuffled(ids, seed + 1 if op.reshuffle else seed)
            elif op.kind == "sequence":
                ids = ids[op.start:]
            elif len(ids):  # subset: positions modulo the length, as the MindRecord reader reads them
                pos = np.asarray(op.ids, dtype=np.int64).astype(np.uint64) % np.uint64(len(ids))
                pos = pos.astype(np.int64)
                ids = ids[_shuffled(pos, seed + 1) if op.shuffle else pos]
            if op.limit:
                ids = ids[:op.limit]
        return ids, before_shard

    def indices(self, ctx: SampleContext) -> np.ndarray:
        seed = ctx.seed if self.seed is None else self.seed
        block = shard_by_block() if self.by_block is None else self.by_block
        ids, before_shard = _cache.first(self, ctx.num_rows, seed, block)
        shard_at = next((i for i, op in enumerate(self.ops) if op.kind == "shard"), None)
        if ctx.pass_index and shard_at is not None and before_shard is not None:
            ids = self._shard(before_shard, self.ops[shard_at], ctx.pass_index, block)
            for op in self.ops[shard_at + 1:]:
                ids = ids[:op.later_count(len(ids))]
        elif ctx.pass_index:
            ids = _cache.later(self, ids, ctx.num_rows, seed, block, ctx.pass_index)
        out = np.ascontiguousarray(ids, dtype=np.int64)
        out.flags.writeable = False
        return out


class _PassCache:
    """The latest pass computed per (plan, rows, seed): pass k costs one step from pass k - 1."""

    def __init__(self, max_keys: int = 8) -> None:
        self._first = SmallCache(max_keys)
        self._later = SmallCache(max_keys)

    def first(self, plan: MindChainPlan, n: int, seed: int, block: bool) -> tuple[np.ndarray, np.ndarray | None]:
        key = (plan, n, seed, block)
        hit = self._first.get(key)
        if hit is None:
            hit = plan._first(n, seed, block)
            self._first.put(key, hit)
        return hit

    def later(self, plan: MindChainPlan, ids: np.ndarray, n: int, seed: int, block: bool,
              pass_index: int) -> np.ndarray:
        key = (plan, n, seed, block)
        done, cur = self._later.get(key, (0, ids))
        if done > pass_index:
            done, cur = 0, ids
        for k in range(done + 1, pass_index + 1):
            for op in plan.ops:
                if op.kind == "shuffle":
                    cur = _shuffled(cur, seed + 1 + k if op.reshuffle else seed)
        self._later.put(key, (pass_index, cur))
        return cur


_cache = _PassCache()
