"""Plan nodes: frozen descriptions of a pipeline. Building iterators from them is build.py's job.

Every node knows its output column names and, where it can tell without reading data, its size
(rows per pass; None when only iterating can tell).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Sequence

from headrace._util.types import IndexSampler


@dataclasses.dataclass(frozen=True, eq=False)
class Node:
    children: tuple["Node", ...]
    columns: tuple[str, ...]

    def size(self) -> int | None:
        return self.children[0].size() if self.children else None


@dataclasses.dataclass(frozen=True, eq=False)
class CountedNode(Node):
    """Stands for a subtree whose rows were counted by reading it (see :func:`counted_size`)."""
    rows: int = 0

    def size(self) -> int:
        return self.rows


def counted_size(node: Node, count: Callable[[Node], int]) -> int:
    """The rows of ``node``, reading (``count(subtree)``) only the lowest subtrees whose size
    cannot be told otherwise: a generator without a length is read by itself, and the maps,
    batches and repeats above it are sized from its count, without running their functions (as
    MindSpore sizes them). A filter's rows depend on its input, so its subtree is read whole."""
    size = node.size()
    if size is not None:
        return size
    if node.children and _with_sizes(node, [1] * len(node.children)).size() is not None:
        # (a node that sizes itself from its children's sizes: a filter does not, and its
        # subtree is read once, whole, rather than its children first)
        size = _with_sizes(node, [counted_size(c, count) for c in node.children]).size()
        if size is not None:
            return size
    return count(node)


def _with_sizes(node: Node, sizes: list[int]) -> Node:
    """``node`` over children that stand for subtrees of ``sizes`` rows."""
    return dataclasses.replace(node, children=tuple(CountedNode((), c.columns, n) for c, n in zip(node.children, sizes)))


@dataclasses.dataclass(frozen=True, eq=False)
class RandomAccessNode(Node):
    """Reads ``source`` at the indices ``sampler`` plans for each pass."""
    source: Any
    sampler: IndexSampler
    name: str = "Source"
    num_workers: int = 1
    labels: Callable[[], Any] | None = None
    processes: bool | None = None  # True: read in worker processes; False: never; None: no preference

    def size(self) -> int | None:
        n = self.sampler.num_samples(len(self.source), self.labels)
        return None if n is None or n < 0 else n  # -1: only reading can tell (PK without labels)


@dataclasses.dataclass(frozen=True, eq=False)
class StreamNode(Node):
    """Reads ``source.iterate()`` front to back, at most ``num_samples`` rows when set."""
    source: Any
    name: str = "Source"
    num_samples: int | None = None
    known_len: int | None = None
    shard: tuple[int, int] | None = None  # (num_shards, shard_id): keep every num_shards-th row

    def size(self) -> int | None:
        n = self.known_len
        if n is None:
            return None
        if self.shard is not None:
            shards, sid = self.shard
            n = math.ceil(n / shards)
        return n if self.num_samples is None else min(n, self.num_samples)


@dataclasses.dataclass(frozen=True, eq=False)
class MapNode(Node):
    """Applies ``fn(*input columns) -> value or tuple`` per row; outputs replace the inputs in place."""
    fn: Callable[..., Any]
    input_idx: tuple[int, ...]
    out_names: tuple[str, ...]
    layout: tuple[tuple[str, int], ...]   # per output column: ("in", i) or ("out", j)
    name: str = "Map"
    num_workers: int = 1
    processes: bool = False
    hooks: Any = None  # called around rows and epochs in the reading process (ops/hooks.py)


@dataclasses.dataclass(frozen=True, eq=False)
class FilterNode(Node):
    predicate: Callable[..., Any]
    input_idx: tuple[int, ...]
    num_workers: int = 1

    def size(self) -> None:
        return None


@dataclasses.dataclass(frozen=True, eq=False)
class BatchNode(Node):
    batch_size: int | Callable[[Any], int]
    drop_remainder: bool = False
    per_batch_map: Callable[..., Any] | None = None
    input_idx: tuple[int, ...] = ()
    layout: tuple[tuple[str, int], ...] = ()
    out_count: int = 0
    pad_info: dict[int, tuple[Sequence[int | None] | None, Any]] | None = None  # by column index
    num_workers: int = 1
    processes: bool = False  # per_batch_map in worker processes

    def size(self) -> int | None:
        n = self.children[0].size()
        if n is None or not isinstance(self.batch_size, int):
            return None
        return n // self.batch_size if self.drop_remainder else math.ceil(n / self.batch_size)


@dataclasses.dataclass(frozen=True, eq=False)
class BucketBatchNode(Node):
    length_idx: tuple[int, ...]
    boundaries: tuple[int, ...]
    batch_sizes: tuple[int, ...]
    length_fn: Callable[..., Any] | None
    pad_info: dict[int, tuple[Sequence[int | None] | None, Any]] | None
    pad_to_bucket_boundary: bool
    drop_remainder: bool

    def size(self) -> None:
        return None


@dataclasses.dataclass(frozen=True, eq=False)
class ShuffleNode(Node):
    buffer_size: int
    seed: int | None  # the config seed captured when the node was made (None: unseeded)
    reshuffle: bool = True  # False: every pass draws the same order (the stream restarts from the seed)


@dataclasses.dataclass(frozen=True, eq=False)
class RepeatNode(Node):
    count: int | None  # None: forever

    def size(self) -> int | None:
        n = self.children[0].size()
        if self.count is None:
            return n  # MindSpore reports one round's size for an endless repeat
        return None if n is None else n * self.count


@dataclasses.dataclass(frozen=True, eq=False)
class TakeNode(Node):
    count: int

    def size(self) -> int | None:
        n = self.children[0].size()
        return None if n is None else min(n, self.count)


@dataclasses.dataclass(frozen=True, eq=False)
class SkipNode(Node):
    count: int

    def size(self) -> int | None:
        n = self.children[0].size()
        return None if n is None else max(0, n - self.count)


@dataclasses.dataclass(frozen=True, eq=False)
class ZipNode(Node):
    def size(self) -> int | None:
        sizes = [c.size() for c in self.children]
        known = [s for s in sizes if s is not None]
        return None if len(known) < len(sizes) else min(known)


@dataclasses.dataclass(frozen=True, eq=False)
class ConcatNode(Node):
    """The children's rows one after another.

    ``shard`` (num_shards, shard_id): keep only the rows whose position in the whole
    concatenation is shard_id modulo num_shards. A child whose ``presharded`` entry is true
    already yields just its share (its sampler was narrowed); it stands for ``child_rows``
    positions. ``interleave`` (rows per child): instead of one child after another, each next
    row comes from a child drawn at random, weighted by the rows it has left.
    """
    shard: tuple[int, int] | None = None
    presharded: tuple[bool, ...] = ()
    child_rows: tuple[int, ...] = ()  # rows of each child before sharding (sharded mode)
    total_rows: int | None = None  # rows of the whole concatenation before sharding
    interleave: tuple[int, ...] | None = None

    def size(self) -> int | None:
        if self.shard is not None and self.total_rows is not None:
            return shard_count(self.total_rows, *self.shard)
        if self.interleave is not None:
            return sum(self.interleave)
        sizes = [c.size() for c in self.children]
        known = [s for s in sizes if s is not None]
        return None if len(known) < len(sizes) else sum(known)


def shard_count(rows: int, num_shards: int, shard_id: int) -> int:
    """How many of the positions 0..rows-1 are shard_id modulo num_shards."""
    return max(0, (rows - shard_id + num_shards - 1) // num_shards)


@dataclasses.dataclass(frozen=True, eq=False)
class GateNode(Node):
    """Rows pass once ``gate`` (an ``ops.gate.RowGate``, shared by every iterator) allows."""
    gate: Any


@dataclasses.dataclass(frozen=True, eq=False)
class SelectNode(Node):
    """Project / rename: output column j is input column ``index[j]``."""
    index: tuple[int, ...]


@dataclasses.dataclass(frozen=True, eq=False)
class FlatMapNode(Node):
    """``fn(*row) -> plan Node``; the rows of each returned pipeline follow one another."""
    fn: Callable[..., Any]

    def size(self) -> None:
        return None


# ---- rewriting plans (autotune, auto_num_workers) ----------------------------------------------

def rewrite(plan: Node, swaps: dict[int, Node], origin: dict[int, Node]) -> Node:
    """``plan`` with the nodes in ``swaps`` (by id) replaced, and their ancestors remade over them;
    ``origin`` maps every remade node to the user's node it stands for (updated in place)."""
    memo: dict[int, Node] = {}

    def go(n: Node) -> Node:
        got = memo.get(id(n))
        if got is not None:
            return got
        kids = tuple(go(c) for c in n.children)
        new = swaps.get(id(n), n)
        if any(a is not b for a, b in zip(kids, n.children)):
            new = dataclasses.replace(new, children=kids)
        if new is not n:
            origin[id(new)] = origin.pop(id(n), n)
        memo[id(n)] = new
        return new

    return go(plan)


def all_nodes(plan: Node) -> list[Node]:
    """Every node of ``plan`` once (a node shared by two parents, too)."""
    seen: dict[int, Node] = {}
    todo = [plan]
    while todo:
        n = todo.pop()
        if id(n) not in seen:
            seen[id(n)] = n
            todo.extend(n.children)
    return list(seen.values())
