"""Resharding a pipeline for one rank of a distributed job.

A framework adapter learns the rank and the world size from the framework (torch.distributed,
JAX's process index and count, a torch DataLoader worker) and asks for the pipeline that reads
that rank's share. The share is what MindSpore gives a source built with ``num_shards`` and
``shard_id``: the pipeline's one random-access source is rebuilt from the arguments it was made
with plus those two, and every dataset above it is copied onto the new source (the user's
datasets are not changed). Rows are dealt out round-robin after the (global, seeded) shuffle, and
a shard that comes up short repeats rows from the start, so every rank reads as many rows as the
others (MindSpore's ``DistributedSampler`` rule).
"""
from __future__ import annotations

from typing import Any

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


def reshard(dataset: Any, num_shards: int, shard_id: int, who: str) -> Any:
    """A copy of ``dataset`` whose source reads shard ``shard_id`` of ``num_shards``.

    ``who`` names the caller in errors (e.g. "headrace.torch.Loader (torch.distributed rank 1 of 2)").

    Raises:
        ValueError: the pipeline is already sharded, has several sources (zip, concat), or its
            source cannot be sharded (a generator function or iterable, a source with a sampler):
            the message says to pass ``num_shards``/``shard_id`` to the source instead.
    """
    num_shards, shard_id = check_shard(num_shards, shard_id)
    if num_shards == 1:
        return dataset
    if dataset.is_sharded():
        raise ValueError(f"{who}: the pipeline is already sharded (its source was given num_shards/shard_id or "
                         f"a sharding sampler); pass shard=False to read it as it is.")
    chain = []
    node = dataset
    while node.children:
        if len(node.children) != 1:
            raise ValueError(f"{who}: cannot shard a pipeline with several sources ({type(node).__name__} "
                             f"joins {len(node.children)}); give each source num_shards={num_shards} and "
                             f"shard_id={shard_id} and pass shard=False.")
        chain.append(node)
        node = node.children[0]
    source = _sharded_source(node, num_shards, shard_id, who)
    for parent in reversed(chain):
        source = _copy_with_child(parent, source)
    return source


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


def _copy_with_child(node: Any, child: Any) -> Any:
    twin = object.__new__(type(node))
    twin.__dict__.update((k, v) for k, v in node.__dict__.items() if k not in _CACHES)
    twin.children = [child]
    return twin
