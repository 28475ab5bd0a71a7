"""The concatenation of random-access datasets as one random-access source (for use_sampler)."""
from __future__ import annotations

import bisect
from typing import Any, Sequence

import numpy as np

from headrace._engine import plan as P
from headrace._util.types import SampleContext


class ConcatSource:
    """Row ``g`` of the concatenation is row ``g - start[k]`` of child ``k``, in the child's order."""

    def __init__(self, columns: Sequence[str], sources: list[Any], orders: list[np.ndarray]) -> None:
        self.column_names = list(columns)
        self._sources = sources
        self._orders = [o.tolist() for o in orders]
        self._starts = np.cumsum([0] + [len(o) for o in orders]).tolist()

    def __len__(self) -> int:
        return self._starts[-1]

    def read(self, index: int) -> tuple:
        k = bisect.bisect_right(self._starts, index) - 1
        return self._sources[k].read(self._orders[k][index - self._starts[k]])


def concat_source(children: Sequence[Any], plans: Sequence[P.Node]) -> ConcatSource:
    """Checks that every child is an unshuffled random-access source and joins them."""
    sources, orders = [], []
    for i, (child, plan) in enumerate(zip(children, plans)):
        if not isinstance(plan, P.RandomAccessNode):
            raise ValueError(f"ConcatDataset.use_sampler needs every child to be a dataset read by index "
                             f"(a mappable source with no operations on it); child {i} is {type(child).__name__}.")
        if child.is_shuffled():
            raise ValueError(f"ConcatDataset.use_sampler needs unshuffled children; create child {i} with "
                             "shuffle=False.")
        sources.append(plan.source)
        orders.append(np.asarray(plan.sampler.indices(SampleContext(len(plan.source), 0, 0)), dtype=np.int64))
    return ConcatSource(plans[0].columns, sources, orders)
