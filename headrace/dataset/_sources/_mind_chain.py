"""A chain of samplers (``add_child``) given to ``MindDataset``, as MindSpore's MindRecord reader
runs it: the operations of ``headrace/_engine/samplers/mindchain.py``, one per sampler."""
from __future__ import annotations

from typing import Any

from headrace._engine.samplers.mindchain import ChainOp, MindChainPlan, supports
from headrace.dataset import samplers as S
from headrace.dataset._shuffle import Shuffle

__all__ = ["chain_plan"]


def _op(sampler: Any) -> ChainOp | None:
    """The operation of one sampler of a chain, or None for one MindRecord runs otherwise."""
    limit = sampler.num_samples or 0
    if type(sampler) is S.RandomSampler:
        if sampler.replacement or sampler.shuffle not in (Shuffle.GLOBAL, Shuffle.ADAPTIVE):
            return None
        return ChainOp("shuffle", limit=limit)
    if type(sampler) is S.DistributedSampler:
        if sampler.offset != -1 or sampler.shuffle not in (Shuffle.GLOBAL, Shuffle.ADAPTIVE, Shuffle.FALSE):
            return None
        return ChainOp("shard", limit=limit, shuffle=sampler.shuffle != Shuffle.FALSE,
                       num_shards=sampler.num_shards, shard_id=sampler.shard_id, seed=sampler.seed)
    if type(sampler) is S.SequentialSampler:
        return ChainOp("sequence", limit=limit, start=sampler.start_index or 0)
    if type(sampler) in (S.SubsetSampler, S.SubsetRandomSampler):
        return ChainOp("subset", limit=limit, shuffle=type(sampler) is S.SubsetRandomSampler,
                       ids=tuple(int(i) for i in sampler.indices))
    return None


def chain_plan(sampler: Any) -> MindChainPlan | None:
    """The plan of ``sampler`` and its children, or None where the engine's chained plan runs it
    (a sampler MindRecord does not run as an operation, or more than one shard)."""
    ops = []
    while sampler is not None:
        op = _op(sampler)
        if op is None:
            return None
        ops.append(op)
        sampler = sampler.child_sampler
    ops.reverse()  # innermost first
    return MindChainPlan(tuple(ops)) if supports(tuple(ops)) else None
