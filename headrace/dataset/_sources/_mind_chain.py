"""A chain of samplers (``add_child``) given to ``MindDataset``, as MindSpore's MindRecord reader
runs it: the operations of ``headrace/_engine/samplers/mindchain.py``, one per sampler."""
from __future__ import annotations

from typing import Any

from headrace._engine.samplers.mindchain import ChainOp, MindChainPlan, supports
from headrace.dataset import samplers as S
from headrace.dataset._shuffle import Shuffle

__all__ = ["chain_ops", "chain_plan", "plan_over_split", "split_parts"]


def _op(sampler: Any) -> ChainOp | None:
    """The operation of one sampler of a chain, or None for one MindRecord runs otherwise."""
    limit = sampler.num_samples or 0
    if type(sampler) is S.RandomSampler:
        if sampler.replacement or sampler.shuffle not in (Shuffle.GLOBAL, Shuffle.ADAPTIVE):
            return None
        return ChainOp("shuffle", limit=limit, reshuffle=bool(getattr(sampler, "reshuffle_each_epoch", True)))
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


def chain_ops(sampler: Any) -> list[ChainOp] | None:
    """The operations of ``sampler`` and its children, innermost first, or None where one of
    them is not run as an operation (PK, weighted, user samplers; draws with replacement)."""
    ops = []
    while sampler is not None:
        op = _op(sampler)
        if op is None:
            return None
        ops.append(op)
        sampler = sampler.child_sampler
    ops.reverse()
    return ops


def chain_plan(sampler: Any) -> MindChainPlan | None:
    """The plan of ``sampler`` and its children, or None where the engine's chained plan runs it
    (a sampler MindRecord does not run as an operation, or more than one shard)."""
    ops = chain_ops(sampler)
    return MindChainPlan(tuple(ops)) if ops and supports(tuple(ops)) else None


def plan_over_split(dataset: Any, sampler: Any) -> MindChainPlan | None:
    """The plan of ``sampler`` (and its children) given to a part of a split of a ``MindDataset``:
    the part's operations and then the sampler's, as MindSpore's reader runs them (a distributed
    sampler shards the part's rows, anew each epoch when it shuffles); None where the sampler is
    not a chain of operations."""
    base = dataset.__dict__.get("_split_ops")
    split = dataset.__dict__.get("_split_plan")
    ops = chain_ops(sampler)
    if base is None or ops is None or not isinstance(split, MindChainPlan):
        return None
    both = tuple(base) + tuple(ops)
    return MindChainPlan(both, seed=split.seed) if supports(both) else None


def split_parts(dataset: Any, counts: list[int], randomize: bool, seed: int) -> list[Any] | None:
    """The parts of a split of a ``MindDataset`` as MindSpore makes them (a sequence over the
    split's shuffle, which never reshuffles, over the dataset's sampling), or None where its
    sampling is not a chain of operations. The parts share ``seed``, so they never overlap; a
    later epoch reorders each part's rows (as MindSpore does), it never moves rows between parts."""
    base = dataset.__dict__.get("_split_ops")
    if base is not None and dataset.sampler is not None:  # a part that was given a sampler
        more = chain_ops(dataset.sampler)
        base = None if more is None else list(base) + more
    elif base is None:
        unshuffled = dataset.shuffle_flag in (False, Shuffle.FALSE)
        if dataset.sampler is not None:
            base = chain_ops(dataset.sampler)
        elif dataset.num_samples:  # the first rows, unshuffled; shuffled, drawn with replacement
            base = [ChainOp("sequence", limit=dataset.num_samples)] if unshuffled else None
        elif dataset.shuffle_flag in (None, True, Shuffle.GLOBAL, Shuffle.ADAPTIVE):
            base = [ChainOp("shuffle")]
        elif unshuffled:
            base = []
    if base is None:
        return None
    out, start = [], 0
    for n in counts:
        ops = list(base) + ([ChainOp("shuffle", reshuffle=False)] if randomize else [])
        ops.append(ChainOp("sequence", start=start, limit=n))
        if not supports(tuple(ops)):
            return None
        part = dataset._with_split_plan(MindChainPlan(tuple(ops), seed=seed))
        part.__dict__["_split_ops"] = ops
        out.append(part)
        start += n
    return out
