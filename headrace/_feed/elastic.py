"""Restoring a loader state on another number of ranks (elastic resume).

A loader state says how far its rank got: ``step`` batches into epoch ``epoch`` of shard
``shard_id`` of ``num_shards``. Ranks of a data-parallel job take their steps in lockstep, so one
rank's state gives the progress of all: every shard has read the same number ``c`` of its rows, and
because shards are dealt round-robin from one global order, the rows read are the prefix
``[start, start + num_shards * c)`` of that order (see ``_engine/samplers/resumed.py``). The new
ranks read the rest of the epoch from that position, dealt over their own count, and the epochs
after it as usual. The position is kept in the loader state (``resume``), so a resumed loader can
itself be saved and resumed again, on any count.

What it needs, checked with an error naming the reason:

* a pipeline whose delivered rows map to source rows by a fixed factor: the source, then ``map``,
  ``project``, ``rename`` and ``batch`` with an int batch size (no filter, repeat, take, skip,
  shuffle buffer, zip or concat, whose row counts or buffers belong to one rank);
* a random-access source read in full (no ``num_samples``, no sampler): MindSpore's rule for
  ``num_shards`` / ``shard_id`` deals its shuffled (or plain) order round-robin. ``MindDataset``
  deals its MindRecord order the same way (shuffled with ``seed + 1 + epoch`` as a whole, by
  files or within files, or not at all: ``MindDealtOrder``), except with ``Shuffle.PARTIAL`` (and
  ``ADAPTIVE`` over 100 million rows), which shuffles each shard's rows on its own, and with
  ``MS_DEV_MINDRECORD_SHARD_BY_BLOCK=true`` (read when the state is restored), which deals
  contiguous blocks: those restore on another rank count only from a job of one rank;
* the same seed setting as the saving job (the state carries it; the shard orders follow it).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from headrace._engine.samplers import DistributedPlan, MindFilePlan, MindShufflePlan, RandomPlan, SequentialPlan
from headrace._engine.samplers.mindrecord import SHARD_BY_BLOCK_ENV, MindDealtOrder, shard_by_block
from headrace._engine.samplers.resumed import ResumedPassPlan
from headrace._feed.shard import _CACHES, _copy_with_child, reshard
from headrace.dataset._datasets import BatchDataset, MapDataset, PaddedBatchDataset, ProjectDataset, RenameDataset
from headrace.dataset._sources.base import MappableDataset

_ONE_TO_ONE = (MapDataset, ProjectDataset, RenameDataset)


def source_rows_per_row(dataset: Any, who: str) -> tuple[int, bool, Any]:
    """``(source rows per delivered row, drop_remainder of the last batch, the source dataset)``.

    Raises:
        ValueError: an operation between the source and the output changes the row count in a way
            the state cannot trace back (its name is in the message).
    """
    per, drop, node = 1, False, dataset
    while node.children:
        if type(node) in (BatchDataset, PaddedBatchDataset):
            if isinstance(node.batch_size, bool) or not isinstance(node.batch_size, int):
                raise ValueError(f"{who}: a state restores on another number of ranks only when every batch has a "
                                 "fixed size; this pipeline's batch size is a function.")
            per *= node.batch_size
            drop = drop or bool(node.drop_remainder)
        elif not isinstance(node, _ONE_TO_ONE) or len(node.children) != 1:
            raise ValueError(f"{who}: a state restores on another number of ranks only for a pipeline of a source "
                             f"followed by map, project, rename and batch; {type(node).__name__} changes which rows "
                             "each rank reads. Restore on the same number of ranks, into the same rank.")
        node = node.children[0]
    if not isinstance(node, MappableDataset):
        raise ValueError(f"{who}: a state restores on another number of ranks only for a random-access source, "
                         f"not {type(node).__name__}.")
    return per, drop, node


def global_order(unsharded: Any, num_shards: int, who: str) -> Any:
    """The plan whose (unsharded) indices are the global order of a pass read on ``num_shards``."""
    source = _source_of(reshard(unsharded, num_shards, 0, who))
    plan = source._sampler_plan
    if isinstance(plan, (MindShufflePlan, MindFilePlan)) and not getattr(plan, "num_samples_limit", 0):
        return _mind_order(source, who)
    if isinstance(plan, DistributedPlan):
        if plan.offset != -1 or plan.num_samples_limit or not plan.even_dist:
            raise ValueError(f"{who}: the source's sampler (offset or num_samples) cannot be dealt out again.")
        return dataclasses.replace(plan, num_shards=1, shard_id=0)
    if isinstance(plan, SequentialPlan) and not plan.start_index and not plan.num_samples_limit:
        return plan
    if isinstance(plan, RandomPlan) and not plan.replacement and not plan.num_samples_limit:
        return plan
    raise ValueError(f"{who}: {type(source).__name__} chooses its rows through {_row_choice(source, plan)}, so a "
                     "pass is not every row once in one order that could be dealt out again; only a source read in "
                     "full restores on another number of ranks. Restore on the same number of ranks, into the same "
                     "rank.")


def _row_choice(source: Any, plan: Any) -> str:
    """What chose the rows of ``source`` (for a refusal): its sampler, or num_samples."""
    args = source.__dict__.get("_ctor_args") or {}
    sampler = args.get("sampler")
    if sampler is not None:
        return f"its sampler ({type(sampler).__name__})"
    if args.get("num_samples"):
        return f"num_samples={args['num_samples']}"
    return f"its plan ({type(plan).__name__})"


def _mind_order(source: Any, who: str) -> Any:
    """The global order of a MindRecord pass (a ``MindShufflePlan`` / ``MindFilePlan`` reading every row)."""
    rows = len(source._source())   # (opened first: the plan then knows the rows of each file)
    plan = source._sampler_plan
    if plan.num_shards == 1:
        return plan   # one rank's pass is one order, whatever the mode
    if not plan.deals_one_order(rows):
        raise ValueError(f"{who}: {type(source).__name__} reads with Shuffle.PARTIAL (which Shuffle.ADAPTIVE is "
                         f"over 100000000 rows; here {rows}), which shuffles the rows of each shard on its own, so "
                         "the rows the ranks have read are not the start of one order that could be dealt out "
                         "again. Restore on the same number of ranks, into the same rank, or shuffle with "
                         "Shuffle.GLOBAL.")
    if (shard_by_block() if plan.by_block is None else plan.by_block):
        raise ValueError(f"{who}: {SHARD_BY_BLOCK_ENV} is true, so each shard of {type(source).__name__} reads a "
                         "contiguous block of the order, and the rows the ranks have read are not the start of one "
                         "order that could be dealt out again. Restore on the same number of ranks, into the same "
                         "rank.")
    return MindDealtOrder(plan)


def _source_of(dataset: Any) -> Any:
    while dataset.children:
        dataset = dataset.children[0]
    return dataset


def resumed_position(saved: dict, step: int, per: int, drop: bool, num_rows: int) -> int:
    """Global positions of the saved epoch read by all ranks together (``num_rows``: the epoch is over).

    ``saved``: the state's ``num_shards``, ``epoch`` and ``resume`` (``{"pass", "start", "shards"}`` or None).
    """
    n, k = num_rows, saved["num_shards"]
    resume = saved["resume"]
    start = resume["start"] if resume is not None and resume["pass"] == saved["epoch"] else 0
    if start == 0:
        size = -(-n // k)
    else:
        size = -(-(n - start) // k)
    read = min(step * per, size)
    if drop and step == size // per:
        read = size   # the rows left after the last full batch were dropped, not unread
    return min(start + k * read, n)


def with_resumed_pass(dataset: Any, order: Any, epoch: int, start: int, shard: tuple[int, int]) -> Any:
    """A copy of the (resharded) ``dataset`` whose pass ``epoch`` reads from global position ``start``."""
    chain, node = [], dataset
    while node.children:
        chain.append(node)
        node = node.children[0]
    node._source()   # opened first: a MindRecord plan then knows the rows of each file
    then = node._sampler_plan
    if isinstance(then, ResumedPassPlan):
        then = then.then
    twin = object.__new__(type(node))
    twin.__dict__.update((k, v) for k, v in node.__dict__.items() if k not in _CACHES)
    twin._sampler_plan = ResumedPassPlan(order, then, epoch, start, shard[0], shard[1])
    out = twin
    for parent in reversed(chain):
        out = _copy_with_child(parent, out)
    return out
