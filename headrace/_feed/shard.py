"""Resharding a pipeline for one rank of a distributed job.

A framework adapter learns the rank and the world size from the framework (torch.distributed,
JAX's process index and count, a torch DataLoader worker) and asks for the pipeline that reads
that rank's share. The share is what MindSpore gives a source built with ``num_shards`` and
``shard_id``: the pipeline's one random-access source is rebuilt from the arguments it was made
with plus those two, and every dataset above it is copied onto the new source (the user's
datasets are not changed). Rows are dealt out round-robin after the (global, seeded) shuffle, and
a shard that comes up short repeats rows from the start, so every rank reads as many rows as the
others (MindSpore's ``DistributedSampler`` rule).

A rank's share can be split again (``split``), between torch DataLoader workers: part ``i`` of
``k`` keeps positions ``i, i + k, ...`` of the order the shard reads, so the parts together read
the shard's rows exactly once (no padding: a part may be one row short, or empty).
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from headrace._engine import plan as P
from headrace._engine.samplers.base import LabelsFn, SamplerPlan, _readonly
from headrace._util.types import SampleContext
from headrace.dataset.core.config import DEFAULT_SEED

_CACHES = ("_plan_node", "_counted_size", "_first", "_access_order", "_src")


def check_shard(num_shards: Any, shard_id: Any) -> tuple[int, int]:
    """``(num_shards, shard_id)`` as ints with 0 <= shard_id < num_shards; TypeError/ValueError otherwise."""
    for value, name in ((num_shards, "num_shards"), (shard_id, "shard_id")):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, but got {value!r} of type {type(value).__name__}.")
    if num_shards < 1:
        raise ValueError(f"num_shards must be at least 1, but got {num_shards}.")
    if not 0 <= shard_id < num_shards:
        raise ValueError(f"shard_id must be in [0, {num_shards - 1}] (num_shards={num_shards}), but got {shard_id}.")
    return num_shards, shard_id


def reshard(dataset: Any, num_shards: int, shard_id: int, who: str, split: tuple[int, int] = (1, 0)) -> Any:
    """A copy of ``dataset`` whose source reads shard ``shard_id`` of ``num_shards``.

    ``who`` names the caller in errors (e.g. "headrace.torch.Loader (torch.distributed rank 1 of 2)").
    ``split=(parts, part)`` then keeps positions ``part, part + parts, ...`` of the shard's order
    (see the module notes); the source may then have ``num_samples``, a built-in sampler, or
    shards of its own when ``num_shards`` is 1. A source whose plan is not a plain random-access
    read (one with ``cache``) is dealt as shard ``shard_id + num_shards * part`` of
    ``num_shards * parts`` instead, where a short part repeats rows.

    Raises:
        ValueError: the pipeline is already sharded, has several sources (zip, concat), or its
            source cannot be sharded (a generator function or iterable, a source with a sampler):
            the message says to pass ``num_shards``/``shard_id`` to the source instead; or
            ``split`` meets a pipeline it cannot split (several sources, a Python sampler object).
    """
    num_shards, shard_id = check_shard(num_shards, shard_id)
    parts, part = check_shard(*split)
    if num_shards == 1 and parts == 1:
        return dataset
    if num_shards > 1 and dataset.is_sharded():
        raise ValueError(_already_sharded(who))
    chain = []
    node = dataset
    while node.children:
        if len(node.children) != 1:
            joins = f"several sources ({type(node).__name__} joins {len(node.children)})"
            if num_shards == 1:
                raise ValueError(f"{who}: cannot split a pipeline with {joins} between DataLoader workers; "
                                 f"read it with num_workers=0 (headrace's own workers run it in parallel).")
            raise ValueError(f"{who}: cannot shard a pipeline with {joins}; give each source "
                             f"num_shards={num_shards} and shard_id={shard_id} and pass shard=False.")
        chain.append(node)
        node = node.children[0]
    source = _sharded_source(node, num_shards, shard_id, who) if num_shards > 1 else node
    if parts > 1:
        source = _split_source(source, parts, part, who)
        if source is None:
            if node.is_sharded():
                raise ValueError(_already_sharded(who))
            source = _sharded_source(node, num_shards * parts, shard_id + num_shards * part, who)
    for parent in reversed(chain):
        source = _copy_with_child(parent, source)
    return source


def _already_sharded(who: str) -> str:
    return (f"{who}: the pipeline is already sharded (its source was given num_shards/shard_id or "
            f"a sharding sampler); pass shard=False to read it as it is.")


def _sharded_source(source: Any, num_shards: int, shard_id: int, who: str) -> Any:
    args = source.__dict__.get("_ctor_args")
    fix = (f"build the source with num_shards={num_shards}, shard_id={shard_id} and pass shard=False")
    if args is None or "num_shards" not in args or "shard_id" not in args:
        raise ValueError(f"{who}: {type(source).__name__} cannot be sharded here; {fix}.")
    if args.get("sampler") is not None:
        raise ValueError(f"{who}: {type(source).__name__} reads through a sampler, which decides the rows; "
                         f"add a DistributedSampler to it or {fix}.")
    if getattr(source, "random_access", True) is False:
        raise ValueError(f"{who}: {type(source).__name__} reads a generator or iterable, which cannot be "
                         f"sharded by index; shard it in the generator (read only this rank's rows) and pass "
                         f"shard=False.")
    twin = type(source)(**{**args, "num_shards": num_shards, "shard_id": shard_id})
    if "_init_step" in source.__dict__:
        twin.__dict__["_init_step"] = source.__dict__["_init_step"]
    return twin


def _split_source(source: Any, parts: int, part: int, who: str) -> Any:
    """A copy of ``source`` reading positions ``part, part + parts, ...`` of its order; None when
    its plan is not a plain random-access read (a stream, a cache: the caller deals shards instead)."""
    twin = object.__new__(type(source))
    twin.__dict__.update((k, v) for k, v in source.__dict__.items() if k not in _CACHES)
    node = twin._plan  # made where it is read, just before (a set_debug_mode after it would remake it unsplit)
    if type(node) is not P.RandomAccessNode:
        return None
    if not getattr(node.sampler, "pure", True):
        raise ValueError(f"{who}: {type(source).__name__} reads through a Python sampler object, whose order each "
                         f"DataLoader worker would draw on its own; read it with num_workers=0 (headrace's own "
                         f"workers run the pipeline in parallel) or use a built-in sampler.")
    twin.__dict__["_plan_node"] = dataclasses.replace(node, sampler=EveryNth(node.sampler, parts, part))
    return twin


@dataclasses.dataclass(frozen=True)
class EveryNth(SamplerPlan):
    """Positions ``part, part + parts, ...`` of the order ``inner`` plans.

    Each part plans the whole order and keeps its own positions, so all parts must draw the same
    order: a run without a user seed plans with the seed DistributedSampler takes then
    (``DEFAULT_SEED``; the run's own seed differs in every worker process), so the order repeats
    until the pass changes. ``inner`` is the source's plan (any of the engine's index plans).
    """

    inner: Any
    parts: int
    part: int

    @property
    def pure(self) -> bool:
        return bool(getattr(self.inner, "pure", True))

    def is_shuffled(self) -> bool:
        return bool(self.inner.is_shuffled())

    def is_sharded(self) -> bool:
        return True

    def num_samples(self, num_rows: int, labels: LabelsFn | None = None) -> int:
        size = self.inner.num_samples(num_rows, labels)
        return size if size < 0 else max(0, -(-(size - self.part) // self.parts))

    def indices(self, ctx: SampleContext) -> np.ndarray:
        if not ctx.seeded:
            ctx = dataclasses.replace(ctx, seed=DEFAULT_SEED)
        return _readonly(np.array(self.inner.indices(ctx)[self.part::self.parts], dtype=np.int64))


def _copy_with_child(node: Any, child: Any) -> Any:
    twin = object.__new__(type(node))
    twin.__dict__.update((k, v) for k, v in node.__dict__.items() if k not in _CACHES)
    twin.children = [child]
    return twin
