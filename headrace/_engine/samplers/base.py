"""The base of the index plans (:class:`SamplerPlan`), plans chained over a child plan
(MindSpore's ``add_child``), and what the plans share: the cache of chained shuffles, the
per-pass seed of plans that reseed every pass. The plans of MindSpore's samplers are in
``builtin.py``, a user's sampler object in ``user.py``.
"""
from __future__ import annotations

import abc
import dataclasses
import threading
from collections import OrderedDict
from typing import Any, Callable, Sequence

import numpy as np

from headrace._util import mtshuffle
from headrace._util.forksafe import fork_safe
from headrace._util.rng import key_rng
from headrace._util.types import SampleContext
from headrace._util.errors import add_note

__all__ = ["ChainedPlan", "LabelsFn", "SamplerPlan", "chain"]

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

class SmallCache:
    """A few entries under a lock; past ``max_keys`` the least recently used one is dropped. What
    the caches of computed passes share (here and in ``mindchain.py``)."""

    def __init__(self, max_keys: int) -> None:
        self._lock = fork_safe(threading.Lock())
        self._max = max_keys
        self._entries: OrderedDict[Any, Any] = OrderedDict()

    def get(self, key: Any, default: Any = None) -> Any:
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
        return default if hit is None else hit

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def put(self, key: Any, value: Any, replaces: Callable[[Any], bool] | None = None) -> None:
        """Stores ``value`` unless ``replaces(old)`` says the entry there is to be kept."""
        with self._lock:
            old = self._entries.get(key)
            if old is None or replaces is None or replaces(old):
                self._entries[key] = value
                self._entries.move_to_end(key)
                while len(self._entries) > self._max:
                    self._entries.popitem(last=False)


class _ChainCache:
    """Remembers the latest pass computed for each (n, seed, start); a few keys at most."""

    def __init__(self, max_keys: int = 4) -> None:
        self._entries = SmallCache(max_keys)

    def get(self, n: int, seed: int, pass_index: int, start_key: Any = None,
            start: np.ndarray | None = None, step_seed: Callable[[int], int] | None = None) -> np.ndarray:
        """Order of ``pass_index`` where pass k shuffles pass k-1's order with ``step_seed(k)``.

        ``start`` (identified by ``start_key``) is the order before pass 0; default arange(n).
        """
        step_seed = step_seed or (lambda k: (seed + k) & mtshuffle.M32)
        key = (n, seed, start_key)
        hit = self._entries.get(key)
        if hit is not None and hit[0] <= pass_index:
            done, perm = hit
        else:
            done, perm = -1, (np.arange(n, dtype=np.int64) if start is None
                              else np.asarray(start, dtype=np.int64))
        for k in range(done + 1, pass_index + 1):
            perm = perm[mtshuffle.shuffle_permutation(n, step_seed(k))]
        perm = _readonly(perm)
        self._entries.put(key, (pass_index, perm), replaces=lambda old: old[0] <= pass_index)
        return perm


_chains = _ChainCache()


class SamplerPlan(abc.ABC):
    """Base of the index plans (implements ``IndexSampler`` from ``_util.types``).

    ``num_samples`` is what ``get_dataset_size()`` reports and ``indices`` what a pass reads.
    ``rows_for_parent`` is how many rows a parent sampler chained on top of this one believes it
    samples from: MindSpore hands the parent this plan's own sample count, which for a
    distributed plan is the whole (capped) row count, not its shard.
    """

    #: whether a plan chained over a child may sample from it (MindSpore's PK sampler may not)
    takes_child = True
    #: whether, chained over a child, the plan's own is_shuffled() answers (random, weighted and
    #: subset plans), rather than the child's
    own_shuffle_over_child = False

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


class ChainedPlan(SamplerPlan):
    """``parent`` samples positions in ``child``'s output (MindSpore's ``add_child``).

    The parent sees ``child.rows_for_parent(ctx)`` rows. Both advance pass by pass together and
    share the context's seed. A parent position past the end of the child's output is an error,
    as in MindSpore ("Not a valid index"): a distributed child reports all its rows to its
    parent but yields only its shard.
    """

    def __init__(self, parent: SamplerPlan, child: SamplerPlan) -> None:
        if not parent.takes_child:
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
        if self.parent.own_shuffle_over_child:
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
            add_note(err, f"The parent sampler asked for position {int(positions[bad.argmax()])} of its "
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
