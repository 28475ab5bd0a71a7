"""The rows of one part of a split dataset (``Dataset.split``): a fixed slice of one fixed order.

Every part of a split holds the same ``base`` plan (the dataset's plan before the split), the same
``seed`` and the same ``order``; only the slice ``[start, start + count)`` differs. A part's rows
are the same every pass: the base plan is read at pass 0 under the split's seed, so the parts of
one split are disjoint and cover every row in every epoch, whether or not the user set a seed.

``order`` is how the base order is dealt before slicing:

* ``"none"``: as it is (``randomize=False``);
* ``"random"``: permuted as MindSpore's ``RandomSampler`` permutes its child's output on its first
  pass (sources MindSpore reads by index);
* ``"buffer"``: passed through MindSpore's buffer shuffle of ``buffer_size`` rows, its stream
  seeded with the seed (sources MindSpore reads as streams: TextFile, CSV, TFRecord, ...).

Under a seed the first epoch of each part equals MindSpore 2.10's. MindSpore re-draws a shuffled
base in later epochs, so that rows move between its parts; a part here keeps its rows.
"""
from __future__ import annotations

import dataclasses
import threading
from typing import Any

import numpy as np

from headrace._engine.samplers.base import LabelsFn, SamplerPlan, _chains, _readonly
from headrace._util import mtshuffle
from headrace._util.forksafe import fork_safe
from headrace._util.types import SampleContext

__all__ = ["SPLIT_ORDERS", "SplitPlan"]

SPLIT_ORDERS = ("none", "random", "buffer")

_DEALT: dict[tuple, np.ndarray] = {}
_DEALT_LOCK = fork_safe(threading.Lock())
_DEALT_KEEP = 4


@dataclasses.dataclass(frozen=True, eq=False)
class SplitPlan(SamplerPlan):
    """Rows ``start .. start + count - 1`` of ``base``'s pass-0 order dealt by ``order``.

    Args:
        base: the plan of the dataset before the split (an ``IndexSampler``).
        start, count: the part's slice of the dealt order.
        order: one of ``SPLIT_ORDERS``.
        seed: the split's seed (the configured one, or one drawn once for all parts).
        seeded: whether the user set the seed (passed on to ``base``).
        buffer_size: rows of the buffer shuffle (``order == "buffer"``).
    """

    own_shuffle_over_child = True

    base: Any
    start: int
    count: int
    order: str
    seed: int
    seeded: bool = True
    buffer_size: int = 10000

    def __post_init__(self) -> None:
        if self.order not in SPLIT_ORDERS:
            raise ValueError(f"order must be one of {list(SPLIT_ORDERS)}, but got {self.order!r}.")
        if self.start < 0 or self.count < 0:
            raise ValueError(f"start and count must be >= 0, but got start {self.start}, count {self.count}.")
        if self.buffer_size < 1:
            raise ValueError(f"buffer_size must be positive, but got {self.buffer_size}.")

    def is_shuffled(self) -> bool:
        return self.order != "none" or bool(getattr(self.base, "is_shuffled", lambda: False)())

    def num_samples(self, num_rows: int, labels: LabelsFn | None = None) -> int:
        return self.count

    def rows_for_parent(self, ctx: SampleContext) -> int:
        return self.count

    def dealt(self, ctx: SampleContext) -> np.ndarray:
        """The base's pass-0 order under the split's seed, dealt by ``order`` (all parts' rows).

        The same for every part and pass: computed once (a buffer shuffle of a million rows takes
        about a second) and kept for the few splits read last."""
        try:
            key = (self.base, self.order, self.seed, self.seeded, self.buffer_size, ctx.num_rows)
            hash(key)
        except TypeError:  # a base plan that is not hashable (a user's sampler): not kept
            return self._deal(ctx)
        with _DEALT_LOCK:
            hit = _DEALT.get(key)
        if hit is None:
            hit = self._deal(ctx)
            hit.flags.writeable = False
            with _DEALT_LOCK:
                _DEALT[key] = hit
                while len(_DEALT) > _DEALT_KEEP:
                    _DEALT.pop(next(iter(_DEALT)))
        return hit

    def _deal(self, ctx: SampleContext) -> np.ndarray:
        base_ctx = dataclasses.replace(ctx, pass_index=0, seed=self.seed, seeded=self.seeded)
        rows = np.asarray(self.base.indices(base_ctx), dtype=np.int64)
        if self.order == "random" and len(rows) > 1:
            rows = rows[_chains.get(len(rows), self.seed & mtshuffle.M32, 0)]
        elif self.order == "buffer" and len(rows) > 1:
            gen = mtshuffle.MT19937_64(self.seed)
            rows = np.asarray(mtshuffle.buffer_shuffle(rows.tolist(), self.buffer_size, gen), dtype=np.int64)
        return rows

    def indices(self, ctx: SampleContext) -> np.ndarray:
        rows = self.dealt(ctx)
        if self.start + self.count > len(rows):
            raise RuntimeError(f"Split part [{self.start}, {self.start + self.count}) runs past the {len(rows)} "
                               "rows of the dataset it was split from: the dataset changed after the split.")
        return _readonly(rows[self.start:self.start + self.count].copy())

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, SplitPlan) and self.base == other.base
                and (self.start, self.count, self.order, self.seed, self.seeded, self.buffer_size)
                == (other.start, other.count, other.order, other.seed, other.seeded, other.buffer_size))

    def __hash__(self) -> int:
        return hash((SplitPlan, self.start, self.count, self.order, self.seed))
