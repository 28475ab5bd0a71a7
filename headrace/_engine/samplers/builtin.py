"""Index plans: which source rows one pass reads, and in what order.

A plan is a small immutable value. ``indices(ctx)`` is a pure function of the
:class:`~headrace._util.types.SampleContext` (rows, pass, seed, labels), so a pipeline can resume
from a counter and two iterators never disturb each other. The one exception is
:class:`UserPlan` (``user.py``), which runs a user's Python sampler object and so is only as pure
as that object. The base of the plans and plans chained over a child are in ``base.py``; this
module holds the plans of MindSpore's built-in samplers and names them all.

The orders follow MindSpore 2.10's C++ samplers exactly (see ``_util/mtshuffle.py`` for the random
streams):

* random shuffles: pass 0 shuffles ``arange(n)`` with ``mt19937(seed)``; pass k shuffles pass
  k-1's order again with ``mt19937(seed + k)``;
* draws with replacement: pass k draws from ``mt19937(seed + k)``;
* subset-random and weighted plans reseed with the same seed every pass (so a weighted plan repeats
  its draws, and a subset-random plan re-applies the same shuffle), unless the context says the
  seed was not fixed by the user (``ctx.seeded`` False), in which case every pass gets a fresh seed
  derived from (seed, pass), as MindSpore draws a fresh one from the OS;
* the distributed plan uses the seed it was built with (MindSpore takes the configured seed, even
  when unset, so that all shards agree on one permutation).

Errors that MindSpore raises while running are raised as ``RuntimeError`` with MindSpore's message
text; the engine adds the surrounding layout.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from headrace._engine.samplers.base import (ChainedPlan, LabelsFn, SamplerPlan, _chains, _pass_seed,
                                            _readonly, chain)
from headrace._engine.samplers.user import UserPlan
from headrace._util import mtshuffle
from headrace._util.types import SampleContext

__all__ = [
    "ChainedPlan", "DistributedPlan", "PKPlan", "RandomPlan", "SamplerPlan", "SequentialPlan",
    "SubsetPlan", "UserPlan", "WeightedRandomPlan", "chain",
]


@dataclasses.dataclass(frozen=True)
class SequentialPlan(SamplerPlan):
    """Rows ``start_index, start_index + 1, ...``; ``num_samples_limit`` 0 means all of them."""

    start_index: int = 0
    num_samples_limit: int = 0

    def num_samples(self, num_rows: int, labels: LabelsFn | None = None) -> int:
        # MindSpore 2.10 reports num_samples - start_index when start_index + num_samples runs
        # past the end (e.g. -3 for start 8, num_samples 5, 10 rows); we report the rows read.
        available = num_rows - self.start_index
        return 0 if available <= 0 else self._cap(self.num_samples_limit, available)

    def rows_for_parent(self, ctx: SampleContext) -> int:
        return max(0, self.num_samples(ctx.num_rows))

    def span(self, ctx: SampleContext) -> tuple[int, int]:
        """(first index, count): the pass reads ``range(first, first + count)``."""
        n = ctx.num_rows
        if self.start_index >= n and not (n == 0 and self.start_index == 0):
            raise RuntimeError(f"Invalid parameter, start_index must be less than num_rows, but got "
                               f"start_index: {self.start_index}, num_rows: {n}.")
        return self.start_index, self.num_samples(n)

    def indices(self, ctx: SampleContext) -> np.ndarray:
        start, count = self.span(ctx)
        return _readonly(np.arange(start, start + count, dtype=np.int64))


class _RandomDrawPlan(SamplerPlan):
    """What the random and weighted plans share: ``num_samples_limit`` rows (0: as many as the
    source has) drawn at random each pass, so the order is shuffled, and shuffled also when the
    plan is chained over a child (MindSpore answers ``is_shuffled`` from such a parent)."""

    own_shuffle_over_child = True

    def is_shuffled(self) -> bool:
        return True

    def num_samples(self, num_rows: int, labels: LabelsFn | None = None) -> int:
        return self._capped(num_rows, num_rows)


@dataclasses.dataclass(frozen=True)
class RandomPlan(_RandomDrawPlan):
    """A fresh shuffle each pass, or draws with replacement (MindSpore's RandomSampler)."""

    replacement: bool = False
    num_samples_limit: int = 0

    def indices(self, ctx: SampleContext) -> np.ndarray:
        n = ctx.num_rows
        count = self.num_samples(n)
        if n <= 0:
            return _readonly(np.zeros(0, dtype=np.int64))
        if self.replacement:
            gen = mtshuffle.MT19937((ctx.seed + ctx.pass_index) & mtshuffle.M32)
            if n - 1 >= mtshuffle.M32:
                return _readonly(np.array([gen.uniform(n - 1) for _ in range(count)], dtype=np.int64))
            return _readonly(gen.uniform_many(n - 1, count))
        perm = _chains.get(n, ctx.seed & mtshuffle.M32, ctx.pass_index)
        return perm if count == n else perm[:count]


@dataclasses.dataclass(frozen=True)
class DistributedPlan(SamplerPlan):
    """Shard ``shard_id`` of ``num_shards``: rows shard_id, shard_id + num_shards, ... with wrap-around.

    Without an offset every shard gets ceil(rows / num_shards) rows, the last ones wrapping to the
    start. With ``shuffle`` the rows are first permuted: pass k uses the permutation of
    :class:`RandomPlan` built from ``seed`` (not the context's seed, so all shards agree).
    ``offset`` (-1: none) shifts which shard receives row 0, as for a concatenated dataset.
    """

    num_shards: int
    shard_id: int
    shuffle: bool = True
    num_samples_limit: int = 0
    offset: int = -1
    seed: int = 0
    even_dist: bool = True

    def is_shuffled(self) -> bool:
        return self.shuffle

    def is_sharded(self) -> bool:
        return self.num_shards > 1

    def _shard_size(self, rows: int) -> tuple[int, int]:
        """(rows this shard yields before the num_samples cap, offset in effect)."""
        if self.offset != -1 or not self.even_dist:
            off = max(self.offset, 0)
            size = (rows + off) // self.num_shards
            if self.shard_id < (rows + off) % self.num_shards:
                size += 1
            if self.shard_id < off:
                size -= 1
            return size, off
        return (rows + self.num_shards - 1) // self.num_shards, 0

    def num_samples(self, num_rows: int, labels: LabelsFn | None = None) -> int:
        size, _ = self._shard_size(num_rows)
        return min(self._cap(self.num_samples_limit, num_rows), max(size, 1))

    def indices(self, ctx: SampleContext) -> np.ndarray:
        n = ctx.num_rows
        if n <= 0:
            return _readonly(np.zeros(0, dtype=np.int64))
        size, off = self._shard_size(n)
        size = min(self._cap(self.num_samples_limit, n), size)
        if size <= 0:
            # MindSpore gives an empty shard row 0, so that every shard yields something.
            return _readonly(np.zeros(1, dtype=np.int64))
        counter = np.arange(size, dtype=np.int64)
        if self.shard_id - off < 0:
            counter += 1
        ids = (self.num_shards * counter + self.shard_id - off) % n
        if self.shuffle:
            ids = _chains.get(n, self.seed & mtshuffle.M32, ctx.pass_index)[ids]
        return _readonly(ids)


@dataclasses.dataclass(frozen=True)
class SubsetPlan(SamplerPlan):
    """The given row ids in order, or (``shuffle``) reshuffled every pass (SubsetRandomSampler)."""

    own_shuffle_over_child = True

    ids: tuple[int, ...]
    num_samples_limit: int = 0
    shuffle: bool = False

    def is_shuffled(self) -> bool:
        return self.shuffle

    def num_samples(self, num_rows: int, labels: LabelsFn | None = None) -> int:
        # MindSpore also caps this by num_rows, though a pass yields all ids (duplicates make
        # that differ); we report what a pass yields.
        return self._cap(self.num_samples_limit, len(self.ids))

    def rows_for_parent(self, ctx: SampleContext) -> int:
        return self.num_samples(ctx.num_rows)

    def _order(self, ctx: SampleContext) -> np.ndarray:
        ids = np.array(self.ids, dtype=np.int64)
        if not self.shuffle or len(ids) <= 1:
            return ids
        if not getattr(ctx, "seeded", True):
            return ids[mtshuffle.shuffle_permutation(len(ids), _pass_seed(ctx))]
        # The same seed every pass: pass k applies the same shuffle k + 1 times.
        seed = ctx.seed & mtshuffle.M32
        perm = _chains.get(len(ids), seed, ctx.pass_index, start_key="same seed each pass",
                           step_seed=lambda k: seed)
        return ids[perm]

    def indices(self, ctx: SampleContext) -> np.ndarray:
        n = ctx.num_rows
        ids = self._order(ctx)[:self.num_samples(n)]
        bad = (ids < 0) | (ids >= n)
        if bad.any():
            raise RuntimeError(f"Sample ID ({int(ids[bad.argmax()])}) is out of bound, "
                               f"expected range [0, {n - 1}]")
        return _readonly(ids)


@dataclasses.dataclass(frozen=True)
class WeightedRandomPlan(_RandomDrawPlan):
    """Rows 0..len(weights)-1 drawn by weight, with or without replacement."""

    weights: tuple[float, ...]
    num_samples_limit: int = 0
    replacement: bool = True

    def indices(self, ctx: SampleContext) -> np.ndarray:
        n = ctx.num_rows
        w = self.weights
        if len(w) > n:
            raise RuntimeError("Invalid parameter, size of sample weights must be less than or equal to "
                               "num of data, otherwise might cause generated id out of bound or other "
                               f"errors, but got weight size: {len(w)}, num of data: {n}")
        count = self.num_samples(n)
        if not self.replacement and count > len(w):
            raise RuntimeError("Invalid parameter, without replacement, weight size must be greater than "
                               f"or equal to num_samples, but got weight size: {len(w)}, num_samples: {count}")
        gen = mtshuffle.MT19937(_pass_seed(ctx) & mtshuffle.M32)
        if self.replacement:
            # std::discrete_distribution: cumulative probabilities, last one forced to 1.
            total = 0.0
            for x in w:
                total += x
            cumulative = np.cumsum(np.array(w, dtype=np.float64) / total)
            cumulative[-1] = 1.0
            words = gen.words(2 * count).astype(np.float64)
            u = (words[0::2] + words[1::2] * 4294967296.0) / 18446744073709551616.0
            u = np.minimum(u, math.nextafter(1.0, 0.0))
            return _readonly(np.searchsorted(cumulative, u, side="left").astype(np.int64))
        # Without replacement: exponential keys E_i / w_i, the `count` smallest (ties by index).
        keys = []
        for x in w:
            e = -math.log(1.0 - mtshuffle.uniform_canonical(gen))
            keys.append(e / x if x != 0 else (math.inf if e > 0 else math.nan))
        order = np.argsort(np.array(keys, dtype=np.float64), kind="stable")
        return _readonly(order[:count].astype(np.int64))


@dataclasses.dataclass(frozen=True)
class PKPlan(SamplerPlan):
    """``num_val`` rows drawn (with replacement) from each class, class by class.

    Classes come in ascending label order, or shuffled once with the pass-0 generator when
    ``shuffle`` is set. Needs ``ctx.labels``.
    """

    takes_child = False

    num_val: int
    shuffle: bool = False
    num_samples_limit: int = 0

    def is_shuffled(self) -> bool:
        return self.shuffle

    @staticmethod
    def _classes(labels: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        labels = np.asarray(labels).astype(np.int64, copy=False)
        order = np.argsort(labels, kind="stable")
        classes, starts = np.unique(labels[order], return_index=True)
        groups = np.split(order, starts[1:]) if len(order) else []
        return classes, groups

    def num_samples(self, num_rows: int, labels: LabelsFn | None = None) -> int:
        if labels is None:
            return -1
        classes, _ = self._classes(labels())
        return self._cap(self.num_samples_limit, self.num_val * len(classes))

    def rows_for_parent(self, ctx: SampleContext) -> int:
        return self.num_samples(ctx.num_rows, self._labels_fn(ctx))

    @staticmethod
    def _labels_fn(ctx: SampleContext) -> LabelsFn:
        if ctx.labels is None:
            raise ValueError("PKSampler needs the class of every row, but this source cannot "
                             "provide class labels.")
        return ctx.labels

    def indices(self, ctx: SampleContext) -> np.ndarray:
        classes, groups = self._classes(self._labels_fn(ctx)())
        total = self.num_val * len(classes)
        count = self._cap(self.num_samples_limit, total)
        seed = ctx.seed & mtshuffle.M32
        gen = mtshuffle.MT19937(seed)
        order = list(range(len(classes)))
        if self.shuffle and len(order) > 1:
            order = mtshuffle.shuffle_permutation_with(gen, len(order)).tolist()
        if ctx.pass_index > 0:
            gen = mtshuffle.MT19937((seed + ctx.pass_index) & mtshuffle.M32)
        out = np.empty(count, dtype=np.int64)
        for t in range(count):
            members = groups[order[t // self.num_val]]
            out[t] = members[gen.uniform(len(members) - 1)]
        return _readonly(out)
