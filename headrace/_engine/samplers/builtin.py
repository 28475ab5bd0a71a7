"""Index plans: which source rows one pass reads, and in what order.

A plan is a small immutable value. ``indices(ctx)`` is a pure function of the
:class:`~headrace._util.types.SampleContext` (rows, pass, seed, labels), so a pipeline can resume
from a counter and two iterators never disturb each other. The one exception is
:class:`UserPlan`, which runs a user's Python sampler object and so is only as pure as that object.

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

import abc
import copy
import dataclasses
import math
import numbers
import threading
from collections import OrderedDict
from typing import Any, Callable, Sequence

import numpy as np

from headrace._util import mtshuffle
from headrace._util.rng import key_rng
from headrace._util.types import SampleContext

__all__ = [
    "ChainedPlan", "DistributedPlan", "PKPlan", "RandomPlan", "SamplerPlan", "SequentialPlan",
    "SubsetPlan", "UserPlan", "WeightedRandomPlan", "chain",
]

LabelsFn = Callable[[], np.ndarray]

_SALT_PASS_SEED = 0x5EED5A3F


def _pass_seed(ctx: SampleContext) -> int:
    """The seed MindSpore's GetSeed() gives a sampler that reseeds every pass."""
    if getattr(ctx, "seeded", True):
        return ctx.seed
    return int(key_rng(ctx.seed, ctx.pass_index, _SALT_PASS_SEED).integers(0, 2**32))


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


# --------------------------------------------------------------------------------------------
# Shared cache of chained shuffles: pass k of (n, seed) costs one shuffle if pass k-1 is cached.
# --------------------------------------------------------------------------------------------

class _ChainCache:
    """Remembers the latest pass computed for each (n, seed, start); a few keys at most."""

    def __init__(self, max_keys: int = 4) -> None:
        self._lock = threading.Lock()
        self._max = max_keys
        self._entries: OrderedDict[tuple, tuple[int, np.ndarray]] = OrderedDict()

    def get(self, n: int, seed: int, pass_index: int, start_key: Any = None,
            start: np.ndarray | None = None, step_seed: Callable[[int], int] | None = None) -> np.ndarray:
        """Order of ``pass_index`` where pass k shuffles pass k-1's order with ``step_seed(k)``.

        ``start`` (identified by ``start_key``) is the order before pass 0; default arange(n).
        """
        step_seed = step_seed or (lambda k: (seed + k) & mtshuffle.M32)
        key = (n, seed, start_key)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
        if hit is not None and hit[0] <= pass_index:
            done, perm = hit
        else:
            done, perm = -1, (np.arange(n, dtype=np.int64) if start is None
                              else np.asarray(start, dtype=np.int64))
        for k in range(done + 1, pass_index + 1):
            perm = perm[mtshuffle.shuffle_permutation(n, step_seed(k))]
        perm = _readonly(perm)
        with self._lock:
            old = self._entries.get(key)
            if old is None or old[0] <= pass_index:
                self._entries[key] = (pass_index, perm)
                self._entries.move_to_end(key)
                while len(self._entries) > self._max:
                    self._entries.popitem(last=False)
        return perm


_chains = _ChainCache()


# --------------------------------------------------------------------------------------------
# Plans
# --------------------------------------------------------------------------------------------

class SamplerPlan(abc.ABC):
    """Base of the index plans (implements ``IndexSampler`` from ``_util.types``).

    ``num_samples`` is what ``get_dataset_size()`` reports and ``indices`` what a pass reads.
    ``rows_for_parent`` is how many rows a parent sampler chained on top of this one believes it
    samples from: MindSpore hands the parent this plan's own sample count, which for a
    distributed plan is the whole (capped) row count, not its shard.
    """

    @abc.abstractmethod
    def num_samples(self, num_rows: int, labels: LabelsFn | None = None) -> int:
        """Rows one pass yields for a source of ``num_rows`` rows, without reading anything.

        ``labels`` is needed by the PK plan only; without it the PK plan returns -1 (unknown).
        """

    @abc.abstractmethod
    def indices(self, ctx: SampleContext) -> np.ndarray:
        """The source indices pass ``ctx.pass_index`` reads, in order (int64, read-only)."""

    def rows_for_parent(self, ctx: SampleContext) -> int:
        return self._capped(ctx.num_rows, ctx.num_rows)

    @property
    def pure(self) -> bool:
        """True when ``indices`` is a pure function of its context (resumable from a counter)."""
        return True

    def is_shuffled(self) -> bool:
        """Whether the order is random (MindSpore's ``is_shuffled`` of the matching sampler)."""
        return False

    def is_sharded(self) -> bool:
        return False

    def add_child(self, child: "SamplerPlan") -> "SamplerPlan":
        """The plan that samples from ``child``'s output with this one (plans are values: this one
        is unchanged). What MindSpore's parsed sampler objects offer as ``add_child``.

        Raises:
            TypeError: ``child`` is not a plan.
        """
        if not isinstance(child, SamplerPlan):
            raise TypeError(f"add_child needs a sampler plan (a sampler's parse()), but got {type(child).__name__}.")
        return ChainedPlan(self, child)

    @staticmethod
    def _cap(limit: int, available: int) -> int:
        return available if limit <= 0 else min(limit, available)

    def _capped(self, num_rows: int, available: int) -> int:
        return self._cap(getattr(self, "num_samples_limit", 0), available)


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


@dataclasses.dataclass(frozen=True)
class RandomPlan(SamplerPlan):
    """A fresh shuffle each pass, or draws with replacement (MindSpore's RandomSampler)."""

    replacement: bool = False
    num_samples_limit: int = 0

    def is_shuffled(self) -> bool:
        return True

    def num_samples(self, num_rows: int, labels: LabelsFn | None = None) -> int:
        return self._cap(self.num_samples_limit, num_rows)

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
class WeightedRandomPlan(SamplerPlan):
    """Rows 0..len(weights)-1 drawn by weight, with or without replacement."""

    weights: tuple[float, ...]
    num_samples_limit: int = 0
    replacement: bool = True

    def is_shuffled(self) -> bool:
        return True

    def num_samples(self, num_rows: int, labels: LabelsFn | None = None) -> int:
        return self._cap(self.num_samples_limit, num_rows)

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


class UserPlan(SamplerPlan):
    """Runs a user's sampler object (``get_indices()``/``reset()``/``_handshake()``) pass by pass.

    Every run starts from a copy of the object as it was when the plan was made (MindSpore copies
    the pipeline for each iterator), so two iterators and a restarted one see the same sequence;
    ``reset()`` runs between passes. Passes are cached, so asking for the same pass twice does
    not advance the user's object.
    """

    #: when True, a pass that yields fewer indices than the sampler's declared ``num_samples`` is an
    #: error (MindSpore's generator sources check it; its other sources read what there is)
    check_count = False

    def __init__(self, sampler: Any) -> None:
        self._pristine = self._copy(sampler)
        self._lock = threading.Lock()
        self._live: Any = None
        self._live_pass = -1
        self._live_rows = -1
        self._cache: dict[int, tuple[np.ndarray, list[int]]] = {}

    @staticmethod
    def _copy(sampler: Any) -> Any:
        try:
            return copy.deepcopy(sampler)
        except Exception:  # noqa: BLE001 - not copyable (holds a generator, a lock...): share the object
            return sampler

    @property
    def pure(self) -> bool:
        return False

    @property
    def sampler(self) -> Any:
        return self._pristine

    def num_samples(self, num_rows: int, labels: LabelsFn | None = None) -> int:
        """The declared ``num_samples`` (not capped), else the length of one pass of a copy.

        Returns -1 (unknown) when there is no declared count and the object cannot be copied.
        """
        declared = getattr(self._pristine, "num_samples", None)
        if declared is not None:
            return int(declared)
        try:
            probe = copy.deepcopy(self._pristine)
        except Exception:  # noqa: BLE001 - any failure to copy means "unknown"
            return -1
        probe._handshake(num_rows)
        return len(_user_indices(probe)[0])

    def rows_for_parent(self, ctx: SampleContext) -> int:
        # MindSpore hands a parent the user sampler's own count (declared, or one pass counted).
        return self.num_samples(ctx.num_rows)

    def _advance(self, ctx: SampleContext) -> tuple[np.ndarray, list[int]]:
        if self._live is None or ctx.pass_index < self._live_pass or ctx.num_rows != self._live_rows:
            self._live = self._copy(self._pristine)
            self._live._handshake(ctx.num_rows)
            self._live_pass = -1
            self._live_rows = ctx.num_rows
            self._cache.clear()
        while self._live_pass < ctx.pass_index:
            if self._live_pass >= 0:
                self._live.reset()
            self._live_pass += 1
            self._cache = {self._live_pass: _user_indices(self._live)}
        got = self._cache[ctx.pass_index]
        declared = getattr(self._pristine, "num_samples", None)
        if self.check_count and declared is not None and len(got[0]) < declared:
            raise RuntimeError(f"The actual amount of data read from generator {len(got[0])} is different from "
                               f"generator.len {declared}, you should adjust generator.len to make them match.")
        return got

    def indices(self, ctx: SampleContext) -> np.ndarray:
        with self._lock:
            hit = self._cache.get(ctx.pass_index) if ctx.num_rows == self._live_rows else None
            return (hit or self._advance(ctx))[0]

    def batch_sizes(self, ctx: SampleContext) -> list[int]:
        """Per item the sampler yielded in that pass: 0 for a single index, else the list's length."""
        with self._lock:
            hit = self._cache.get(ctx.pass_index) if ctx.num_rows == self._live_rows else None
            return list((hit or self._advance(ctx))[1])

    def with_count_check(self) -> "UserPlan":
        """This plan, made to check the count of every pass (see ``check_count``); returns self."""
        self.check_count = True
        return self

    def __repr__(self) -> str:
        return f"UserPlan({type(self._pristine).__name__})"


def _user_items(sampler: Any) -> tuple[np.ndarray, list[int]]:
    """One pass of a user sampler as MindSpore's ``get_indices`` makes it: a flat array, batch sizes."""
    limit = getattr(sampler, "num_samples", None)
    flat: list[Any] = []
    sizes: list[int] = []
    for count, item in enumerate(sampler):
        if isinstance(item, numbers.Number) or (isinstance(item, np.ndarray) and item.ndim == 0):
            flat.append(item)
            sizes.append(0)
        else:
            item = list(item)
            flat.extend(item)
            sizes.append(len(item))
        # Like MindSpore, the limit is checked after an item is taken (so 0 still takes one).
        if limit is not None and count + 1 >= limit:
            break
    try:
        arr = np.array(flat)
    except (ValueError, TypeError):  # ragged nesting
        arr = np.array(None, dtype=object)
    if arr.dtype == object:
        raise RuntimeError("Fetched indices can not be converted to a valid ndarray.")
    return arr, sizes


def _user_indices(sampler: Any) -> tuple[np.ndarray, list[int]]:
    """One pass of a user sampler as the engine takes it: int64 indices (else an error), batch sizes."""
    arr, sizes = _user_items(sampler)
    if arr.dtype.kind not in "iu":
        raise RuntimeError(f"Python sampler should return index of type integer, but got: {arr.dtype}")
    return _readonly(arr.astype(np.int64).reshape(-1)), sizes


class ChainedPlan(SamplerPlan):
    """``parent`` samples positions in ``child``'s output (MindSpore's ``add_child``).

    The parent sees ``child.rows_for_parent(ctx)`` rows. Both advance pass by pass together and
    share the context's seed. A parent position past the end of the child's output is an error,
    as in MindSpore ("Not a valid index"): a distributed child reports all its rows to its
    parent but yields only its shard.
    """

    def __init__(self, parent: SamplerPlan, child: SamplerPlan) -> None:
        if isinstance(parent, PKPlan):
            raise ValueError("PKSampler cannot sample from a child sampler; add the PKSampler as "
                             "the child instead.")
        self.parent = parent
        self.child = child

    @property
    def pure(self) -> bool:
        return self.parent.pure and self.child.pure

    def is_shuffled(self) -> bool:
        # As MindSpore: random and weighted parents are shuffled, a subset parent is what its own
        # flag says, and the others report their child.
        if isinstance(self.parent, (RandomPlan, WeightedRandomPlan, SubsetPlan)):
            return self.parent.is_shuffled()
        return self.child.is_shuffled()

    def is_sharded(self) -> bool:
        return self.child.is_sharded()

    def num_samples(self, num_rows: int, labels: LabelsFn | None = None) -> int:
        child_rows = self.child.num_samples(num_rows, labels)
        if child_rows < 0:
            return child_rows
        return self.parent.num_samples(child_rows)

    def _parent_ctx(self, ctx: SampleContext) -> SampleContext:
        return dataclasses.replace(ctx, num_rows=self.child.rows_for_parent(ctx), labels=None)

    def rows_for_parent(self, ctx: SampleContext) -> int:
        return self.parent.rows_for_parent(self._parent_ctx(ctx))

    def indices(self, ctx: SampleContext) -> np.ndarray:
        child_ids = self.child.indices(ctx)
        positions = self.parent.indices(self._parent_ctx(ctx))
        bad = (positions < 0) | (positions >= len(child_ids))
        if bad.any():
            err = RuntimeError("Not a valid index")
            err.add_note(f"The parent sampler asked for position {int(positions[bad.argmax()])} of its "
                         f"child sampler's output, which has {len(child_ids)} ids.")
            raise err
        return _readonly(child_ids[positions])

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ChainedPlan) and self.parent == other.parent
                and self.child == other.child)

    def __hash__(self) -> int:
        return hash((ChainedPlan, self.parent, self.child))

    def __repr__(self) -> str:
        return f"ChainedPlan(parent={self.parent!r}, child={self.child!r})"


def chain(plans: Sequence[SamplerPlan]) -> SamplerPlan:
    """Chains ``plans`` outermost first: ``chain([a, b, c])`` is a sampling from b sampling from c."""
    plan = plans[-1]
    for parent in reversed(plans[:-1]):
        plan = ChainedPlan(parent, plan)
    return plan
