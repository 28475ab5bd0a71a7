"""MindSpore's MindRecord sampling plans: the orders of ``MindDataset``.

MindSpore's MindRecord samplers differ from those of other sources: shuffles use
``std::default_random_engine`` (``minstd_rand0``, :func:`headrace._util.mtshuffle.minstd_shuffle`)
seeded with ``seed + 1`` (+ the epoch), not the Mersenne Twister. The orders each plan gives are
described in ``headrace/dataset/_sources/mindrecord.py``, which picks the plan for a dataset's
arguments. Sharded plans take strided positions, or contiguous blocks when
``MS_DEV_MINDRECORD_SHARD_BY_BLOCK`` is ``true`` when the pass is planned (:func:`shard_positions`).
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np

from headrace._engine.samplers.base import SamplerPlan
from headrace._util import mtshuffle
from headrace._util.mtshuffle import minstd_shuffle
from headrace._util.types import SampleContext

__all__ = ["MindDealtOrder", "MindFilePlan", "MindShufflePlan", "MindSubsetRandomPlan", "shard_by_block",
           "shard_positions"]

#: MindSpore's switch for contiguous shards of MindRecord rows (read when a pass is planned).
SHARD_BY_BLOCK_ENV = "MS_DEV_MINDRECORD_SHARD_BY_BLOCK"
#: ``Shuffle.PARTIAL`` shuffles the rows in runs of this many; ``ADAPTIVE`` is partial above ADAPTIVE_ROWS.
PARTIAL_ROWS = 1_000_000
ADAPTIVE_ROWS = 100_000_000


def shard_by_block() -> bool:
    """Whether ``MS_DEV_MINDRECORD_SHARD_BY_BLOCK`` is set to ``true`` (any case) now."""
    return os.environ.get(SHARD_BY_BLOCK_ENV, "").lower() == "true"


def shard_positions(n: int, num_shards: int, shard_id: int, by_block: bool) -> np.ndarray:
    """Positions of an order of ``n`` rows that shard ``shard_id`` reads: ``ceil(n / num_shards)`` of
    them, wrapping to the start so every shard reads as many. Strided (``shard_id, shard_id +
    num_shards, ...``) by default; with ``by_block`` the shard's contiguous block.

    A ``shard_id`` out of ``[0, num_shards)`` is read as MindSpore 2.10's MindRecord reader reads it
    (observed on the oracle): the same formula, each position taken as an unsigned 64-bit number
    modulo ``n``. Past the last shard that is plain strides from there; a negative position ``-j``
    becomes ``(2**64 - j) % n``, which is not ``n - j`` unless ``n`` divides ``2**64``.

    Examples:
        >>> shard_positions(10, 3, 2, False).tolist(), shard_positions(10, 3, 2, True).tolist()
        ([2, 5, 8, 1], [8, 9, 0, 1])
        >>> shard_positions(7, 2, -1, False).tolist()  # -1 -> (2**64 - 1) % 7 = 1
        [1, 1, 3, 5]
    """
    size = -(-n // num_shards)
    if by_block:
        pos = np.arange(size, dtype=np.int64) + shard_id * size
    else:
        pos = np.arange(size, dtype=np.int64) * num_shards + shard_id
    return (pos.astype(np.uint64) % np.uint64(n)).astype(np.int64)


def _ro(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.int64)
    a.flags.writeable = False
    return a


class _MindPlan(SamplerPlan):
    """What MindSpore's MindRecord shuffles share: always shuffled, sharded by ``num_shards``."""

    num_shards: int

    def is_shuffled(self) -> bool:
        return True

    def is_sharded(self) -> bool:
        return self.num_shards > 1


@dataclasses.dataclass(frozen=True)
class MindShufflePlan(_MindPlan):
    """MindSpore's MindRecord shuffle (see the module docstring).

    Attributes:
        num_shards, shard_id: sharding (1, 0: none). Sharded shuffles start afresh every epoch and
            use ``seed`` (the configured seed when the dataset was made), so all shards agree.
        num_samples_limit: rows per pass (0: all); without shards, a global shuffle with a limit
            draws with replacement, or, with ``replacement`` False, takes the first rows of the
            first epoch's shuffle and shuffles those again every later epoch.
        seed: the seed for sharded plans.
        mode: "global"; "adaptive" (global up to ``ADAPTIVE_ROWS`` rows, partial above);
            "partial" (see :meth:`_partial`); "false" (file order, for sharded reads).
        sizes: data rows of each file, in file order (the partial shuffle shuffles the files;
            filled in when the source is opened).
        by_block: shards read contiguous blocks instead of strides; None: ``shard_by_block()``
            when the pass is planned.
    """

    num_shards: int = 1
    shard_id: int = 0
    num_samples_limit: int = 0
    seed: int = 0
    mode: str = "global"
    sizes: tuple = ()
    by_block: bool | None = None
    replacement: bool = True

    def is_shuffled(self) -> bool:
        return self.mode != "false"

    def num_samples(self, num_rows: int, labels: Any = None) -> int:
        if self.num_shards > 1:
            return self._cap(self.num_samples_limit, -(-num_rows // self.num_shards))
        if self.num_samples_limit > 0:
            drawn = self.replacement and self.mode in ("global", "adaptive")
            return self.num_samples_limit if drawn else min(self.num_samples_limit, num_rows)
        return num_rows

    def _positions(self, n: int) -> np.ndarray:
        block = shard_by_block() if self.by_block is None else self.by_block
        return shard_positions(n, self.num_shards, self.shard_id, block)

    def indices(self, ctx: SampleContext) -> np.ndarray:
        n = ctx.num_rows
        if n <= 0:
            return _ro(np.zeros(0))
        if self.mode == "partial" or (self.mode == "adaptive" and n > ADAPTIVE_ROWS):
            return _ro(self._partial(ctx))
        if self.num_shards > 1:
            ids = self.dealt_order(ctx)[self._positions(n)]
            return _ro(ids[:self._cap(self.num_samples_limit, len(ids))])
        if self.num_samples_limit > 0 and not self.replacement:
            ids = minstd_shuffle(n, (ctx.seed + 1) & mtshuffle.M32)[:self.num_samples_limit]
            for k in range(1, ctx.pass_index + 1):
                ids = ids[minstd_shuffle(len(ids), (ctx.seed + 1 + k) & mtshuffle.M32)]
            return _ro(ids)
        if self.num_samples_limit > 0:
            # draws with replacement, each from a fresh mt19937(seed + 1 + epoch + j) as MindSpore
            # does; every epoch draws from the previous epoch's draws
            count = self.num_samples_limit
            ids = np.arange(n, dtype=np.int64)
            for k in range(ctx.pass_index + 1):
                base = ctx.seed + 1 + k
                top = len(ids) - 1
                ids = ids[[mtshuffle.MT19937((base + j) & mtshuffle.M32).uniform(top) for j in range(count)]]
            return _ro(ids)
        perm = np.arange(n, dtype=np.int64)
        for k in range(ctx.pass_index + 1):
            perm = perm[minstd_shuffle(n, (ctx.seed + 1 + k) & mtshuffle.M32)]
        return _ro(perm)

    def deals_one_order(self, num_rows: int) -> bool:
        """Whether a sharded pass of ``num_rows`` rows is one order dealt out (the global shuffle,
        or none), not PARTIAL's runs shuffled within each shard."""
        return self.mode in ("global", "false") or (self.mode == "adaptive" and num_rows <= ADAPTIVE_ROWS)

    def dealt_order(self, ctx: SampleContext) -> np.ndarray:
        """The order of every row that a sharded pass deals out by :func:`shard_positions`: shuffled
        afresh every pass with ``seed + 1 + pass`` (file order with ``mode="false"``)."""
        n = ctx.num_rows
        if not self.deals_one_order(n):
            raise ValueError(f"MindShufflePlan: mode {self.mode!r} over {n} rows shuffles each shard's rows on "
                             "its own; its pass is not one order dealt out.")
        if self.mode == "false":
            return np.arange(n, dtype=np.int64)
        return minstd_shuffle(n, (self.seed + 1 + ctx.pass_index) & mtshuffle.M32)

    def _partial(self, ctx: SampleContext) -> np.ndarray:
        """MindSpore's ``Shuffle.PARTIAL``, afresh every epoch with ``s = seed + 1 + epoch``: the files
        in the order ``minstd_shuffle(files, s)`` (padded rows after them), the shard's positions of
        that order, the first ``num_samples`` of them, then each run of ``PARTIAL_ROWS`` shuffled
        with ``minstd_shuffle(len(run), s)``."""
        n = ctx.num_rows
        seed = (self.seed if self.num_shards > 1 else ctx.seed) + 1 + ctx.pass_index
        seed &= mtshuffle.M32
        sizes = self.sizes if self.sizes and sum(self.sizes) <= n else (n,)
        bounds = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
        order = np.concatenate([np.arange(bounds[f], bounds[f + 1], dtype=np.int64)
                                for f in minstd_shuffle(len(sizes), seed)]
                               + [np.arange(bounds[-1], n, dtype=np.int64)])
        if self.num_shards > 1:
            order = order[self._positions(n)]
        if self.num_samples_limit > 0:
            order = order[:self.num_samples_limit]
        for a in range(0, len(order), PARTIAL_ROWS):
            run = order[a:a + PARTIAL_ROWS]
            order[a:a + len(run)] = run[minstd_shuffle(len(run), seed)]
        return order


@dataclasses.dataclass(frozen=True)
class MindFilePlan(_MindPlan):
    """MindSpore's ``Shuffle.FILES`` (``mode="files"``) and ``Shuffle.INFILE`` (``mode="infile"``).

    See the module docstring for the orders.

    Attributes:
        mode: "files" or "infile".
        sizes: data rows of each file, in file order (filled in when the source is opened; rows
            past their sum, i.e. padded rows, stay last).
        num_shards, shard_id: sharding (1, 0: none).
        seed: the seed for sharded plans (the configured seed when the dataset was made).
        by_block: as for :class:`MindShufflePlan`.
    """

    mode: str = "files"
    sizes: tuple = ()
    num_shards: int = 1
    shard_id: int = 0
    seed: int = 0
    by_block: bool | None = None

    def num_samples(self, num_rows: int, labels: Any = None) -> int:
        if self.num_shards > 1:
            return -(-num_rows // self.num_shards)
        return num_rows

    def _step(self, order: np.ndarray, seed: int) -> np.ndarray:
        """One epoch's shuffle of ``order`` (the data rows only)."""
        sizes = self.sizes if sum(self.sizes) == len(order) else (len(order),)
        bounds = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
        seed &= mtshuffle.M32
        if self.mode == "files":
            files = minstd_shuffle(len(sizes), seed)
            return np.concatenate([order[bounds[f]:bounds[f + 1]] for f in files] or [order])
        out = order.copy()
        for f, size in enumerate(sizes):
            a, b = bounds[f], bounds[f + 1]
            out[a:b] = order[a:b][minstd_shuffle(int(size), seed)]
        return out

    def deals_one_order(self, num_rows: int) -> bool:
        """Always: a sharded pass is one order (:meth:`dealt_order`) dealt out."""
        return True

    def dealt_order(self, ctx: SampleContext) -> np.ndarray:
        """The order of every row of the pass: for a sharded plan, the one that :func:`shard_positions`
        deals out (the rows in file order, shuffled once with ``seed + 1 + pass``); unsharded,
        every pass shuffles the one before it again."""
        n = ctx.num_rows
        data = min(n, sum(self.sizes)) if self.sizes else n
        order = np.arange(data, dtype=np.int64)
        if self.num_shards > 1:
            order = self._step(order, self.seed + 1 + ctx.pass_index)
        else:
            for k in range(ctx.pass_index + 1):
                order = self._step(order, ctx.seed + 1 + k)
        return np.concatenate([order, np.arange(data, n, dtype=np.int64)])

    def indices(self, ctx: SampleContext) -> np.ndarray:
        n = ctx.num_rows
        if n <= 0:
            return _ro(np.zeros(0))
        order = self.dealt_order(ctx)
        if self.num_shards > 1:
            block = shard_by_block() if self.by_block is None else self.by_block
            order = order[shard_positions(n, self.num_shards, self.shard_id, block)]
        return _ro(order)


@dataclasses.dataclass(frozen=True)
class MindDealtOrder(SamplerPlan):
    """The order of every row that one pass of the sharded ``plan`` deals out, before shard ``i`` of
    ``k`` takes its positions ``i, i + k, ...`` (wrapping to the start): what a resumed pass deals
    out again over another shard count (``resumed.py``). Only a plan whose pass is one order dealt
    out by strides (``plan.deals_one_order``, not in contiguous blocks) is such an order; for
    another, :meth:`indices` raises ValueError."""

    plan: MindShufflePlan | MindFilePlan

    def is_shuffled(self) -> bool:
        return self.plan.is_shuffled()

    def num_samples(self, num_rows: int, labels: Any = None) -> int:
        return num_rows

    def indices(self, ctx: SampleContext) -> np.ndarray:
        block = shard_by_block() if self.plan.by_block is None else self.plan.by_block
        if block:
            raise ValueError("MindDealtOrder: shards read contiguous blocks, not strides of one order.")
        return _ro(self.plan.dealt_order(ctx) if ctx.num_rows > 0 else np.zeros(0))


@dataclasses.dataclass(frozen=True)
class MindSubsetRandomPlan(SamplerPlan):
    """``SubsetRandomSampler`` over MindRecord: the ids shuffled with seed + 1, the same every epoch
    (``shuffle=False``: ``SubsetSampler``, the ids in their order).

    As MindSpore's MindRecord reader, an id is read as an unsigned 64-bit number modulo the row
    count: an id past the end or a negative one names a row (-1 of 5 rows is row 0, 7 is row 2);
    more ids than rows is an error."""

    ids: tuple
    num_samples_limit: int = 0
    shuffle: bool = True

    def is_shuffled(self) -> bool:
        return self.shuffle

    def num_samples(self, num_rows: int, labels: Any = None) -> int:
        return self._cap(self.num_samples_limit, len(self.ids))

    def indices(self, ctx: SampleContext) -> np.ndarray:
        if ctx.num_rows <= 0:
            return _ro(np.zeros(0))
        if len(self.ids) > ctx.num_rows:
            raise RuntimeError(f"Invalid input, indices size: {len(self.ids)} should be less than or equal to "
                               f"database size: {ctx.num_rows}.")
        ids = np.asarray(self.ids, dtype=np.int64).astype(np.uint64) % np.uint64(ctx.num_rows)
        ids = ids.astype(np.int64)
        if self.shuffle:
            ids = ids[minstd_shuffle(len(ids), (ctx.seed + 1) & mtshuffle.M32)]
        return _ro(ids[:self.num_samples(ctx.num_rows)])
