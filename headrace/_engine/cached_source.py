"""A random-access source whose rows (after a chain of deterministic maps) come from a cache.

``CachedSource(inner, maps, store)`` reads row ``i`` from ``store`` (``cache_store.CacheStore``)
when a committed chunk has it; otherwise it reads ``inner`` and runs the maps, stores the result
(when this process fills and the cache has room) and returns it. The sampler above it is the
inner source's, so shuffles, shards and num_samples work on the same row ids, and a cached row id
always means the same input row: the store's key covers the source, the maps and the shard.
"""
from __future__ import annotations

from typing import Any, Sequence

from headrace._engine import plan as P
from headrace._engine.cache_store import CacheStore
from headrace._engine.ops.map import MapFn
from headrace._util.types import Row


class CachedSource:
    """A ``RandomAccessSource`` over ``inner`` with ``maps`` applied, served from ``store``."""

    def __init__(self, inner: Any, maps: Sequence[P.MapNode], store: CacheStore,
                 column_names: Sequence[str]) -> None:
        self.inner = inner
        self.steps = tuple(MapFn(node, 0) for node in maps)
        self.store = store
        self.column_names = list(column_names)
        self.processes = getattr(inner, "processes", None)
        self.folded_ops = len(self.steps)  # the source op reserves their ids: random ops above keep theirs

    def __len__(self) -> int:
        return len(self.inner)

    def read(self, index: int) -> Row:
        try:
            row = self.store.get(index)
        except OSError:  # the cache's files went away (a destroyed session): compute the row
            row = None
        if row is not None:
            return row
        row = self.inner.read(index)
        for step in self.steps:
            row = step.apply(row, index)
        try:
            self.store.put(index, row)
        except OSError:  # a full or removed cache never fails the pipeline: the row streams
            pass
        return row

    def file_of(self, index: int) -> Any:
        return getattr(self.inner, "file_of", lambda i: None)(index)


def cached_node(source_node: P.RandomAccessNode, maps: Sequence[P.MapNode], store: CacheStore,
                name: str, num_workers: int, processes: bool | None) -> P.RandomAccessNode:
    """The plan node reading ``source_node``'s rows through ``maps`` and the cache ``store``."""
    columns = maps[-1].columns if maps else source_node.columns
    src = CachedSource(source_node.source, maps, store, columns)
    return P.RandomAccessNode((), tuple(columns), src, source_node.sampler, name, num_workers,
                              source_node.labels, processes)
