"""ConcatDataset's plan and ``use_sampler`` (MindSpore 2.10's behaviour, checked against it).

* ``DistributedSampler(num_shards, shard_id, shuffle=False)``: position ``p`` of the whole
  concatenation (child after child, each in its own order) goes to shard ``p % num_shards``; but a
  ``MindDataset`` child gives each shard that many of its rows as one contiguous block, the blocks
  in shard order (MindSpore's MindRecord reader shards so).
  A child that is itself a source read by index is read in index order (MindSpore replaces its
  sampler, so a child's own shuffle is dropped) and only at the indices of this shard, so no row
  is read for nothing; every other child (a stream, a pipeline, a nested concat) is read in full
  and its rows are kept by position. This is how MindSpore's BERT scripts pad an evaluation set
  (a shuffled TFRecordDataset + a PaddedDataset) so that every shard gets as many rows.
* ``RandomSampler()``: the rows of the children come interleaved at random (each next row comes
  from a child drawn with weight = the rows it has left; every child keeps its own order); nested
  concats are given the same sampler, as MindSpore does. A new draw every epoch, seeded by
  ``ds.config.set_seed``.

Differences from MindSpore on purpose (both make shards uneven there, which padding is meant to
prevent, and which can stall distributed training):

* MindSpore counts a GeneratorDataset over a plain generator as 0 rows when it places the children
  after it (a generator of 7 rows + 2 padded rows over 3 shards gives 4, 3, 2 rows); here
  positions count every row (3, 3, 3).
* MindSpore's position counter for streamed children runs on from one epoch into the next (less
  the rows of a last child read by index), so from the second epoch a shard can get other rows,
  and another count than ``get_dataset_size()`` says; here every epoch is sharded as the first.
  The two agree whenever the streamed rows before each index-read child fill whole rounds.
* The random interleave of ``RandomSampler`` is drawn with headrace's generator, so its order
  is not MindSpore's (it has the same properties).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from headrace._engine import plan as P
from headrace._engine.ops.combine import COLUMNS_DIFFER
from headrace._util.errors import PipelineError
from headrace.dataset.samplers import DistributedSampler, RandomSampler, SubsetSampler


def check_columns(concat: Any) -> tuple[str, ...]:
    """The columns of a concat; RuntimeError (and ValueError) if the children's columns differ."""
    plans = [c._plan for c in concat.children]
    first = tuple(plans[0].columns)
    for p in plans[1:]:
        if tuple(p.columns) != first:
            raise PipelineError("ConcatDataset", f"{COLUMNS_DIFFER} Got {list(first)} and {list(p.columns)}.")
    return first


def use_concat_sampler(concat: Any, sampler: Any, batch_type: type) -> None:
    """Checks ``sampler`` (and the children) as MindSpore does and keeps it on ``concat``.

    ``batch_type`` is ``BatchDataset`` (passed in: this module sits below the dataset classes).
    """
    if not isinstance(sampler, (DistributedSampler, RandomSampler)):
        raise TypeError(f"The parameter {sampler} of concat must be DistributedSampler or RandomSampler!")
    if isinstance(sampler, RandomSampler):
        if sampler.replacement:
            raise ValueError("The parameter replacement of RandomSampler must be False!")
        if sampler.get_num_samples() is not None:
            raise ValueError("The parameter num_samples of RandomSampler is not support to be set!")
        _keep(concat, sampler)
        _give_nested(concat, sampler, type(concat), batch_type)
        return
    if sampler.is_shuffled():
        raise ValueError("The parameter shuffle of DistributedSampler must be False!")
    if sampler.get_num_samples() is not None:
        raise ValueError("The parameter num_samples of DistributedSampler is not support to be set!")
    for child in concat.children:
        if getattr(child, "num_samples", None) is not None and _reads_by_index(child):
            raise ValueError(f"The parameter NumSamples of {child} is not support to be set!")
        if isinstance(child, batch_type):
            raise TypeError(f"The parameter {child} of concat must not be BatchDataset or PaddedBatchDataset!")
    _keep(concat, sampler)


def _keep(concat: Any, sampler: Any) -> None:
    concat.__dict__["_sampler"] = sampler
    for cached in ("_plan_node", "_counted_size", "_first"):
        concat.__dict__.pop(cached, None)


def _give_nested(node: Any, sampler: Any, concat_type: type, batch_type: type) -> None:
    for child in node.children:
        if isinstance(child, concat_type):
            use_concat_sampler(child, sampler, batch_type)
        _give_nested(child, sampler, concat_type, batch_type)


def _reads_by_index(child: Any) -> bool:
    """Whether MindSpore reads ``child`` by index (TFRecord, CSV and text files are streams there)."""
    return child.reads_by_index and not child.streamed_in_mindspore and isinstance(child._plan, P.RandomAccessNode)


def concat_plan(concat: Any) -> P.ConcatNode:
    """The plan of ``concat``: children one after another, or as its sampler says. The columns
    are checked when it is read (MindSpore reports its size even when they differ)."""
    plans = tuple(c._plan for c in concat.children)
    cols = tuple(plans[0].columns)
    sampler = concat.__dict__.get("_sampler")
    if sampler is None:
        return P.ConcatNode(plans, cols)
    if isinstance(sampler, RandomSampler):
        sizes = tuple(int(c.get_dataset_size()) for c in concat.children)
        return P.ConcatNode(plans, cols, interleave=sizes)
    return _sharded_plan(concat, cols, sampler.num_shards, sampler.shard_id)


def _sharded_plan(concat: Any, cols: tuple[str, ...], shards: int, shard_id: int) -> P.ConcatNode:
    plans, presharded, rows_of, start = [], [], [], 0
    for child in concat.children:
        if _reads_by_index(child):
            rows = len(child._source())
            first = (shard_id - start) % shards
            ids = np.arange(first, rows, shards, dtype=np.int64).tolist()
            if getattr(child, "reads_as_mindrecord", False):
                # MindRecord: as many rows as the strides give the shard, but as one block; the
                # blocks follow each other in shard order
                counts = [len(range((k - start) % shards, rows, shards)) for k in range(shards)]
                low = sum(counts[:shard_id])
                ids = list(range(low, low + len(ids)))
            plans.append(child._with_sampler(SubsetSampler(ids))._plan)
            presharded.append(True)
        else:
            rows = int(child.get_dataset_size())
            plans.append(child._plan)
            presharded.append(False)
        rows_of.append(rows)
        start += rows
    return P.ConcatNode(tuple(plans), cols, shard=(shards, shard_id), presharded=tuple(presharded),
                        child_rows=tuple(rows_of), total_rows=start)


def concat_size(concat: Any) -> int | None:
    """Rows per epoch from the plan, else (no sampler) the sum of the children's sizes."""
    size = concat._plan.size()
    if size is None and concat.__dict__.get("_sampler") is None:
        size = sum(int(c.get_dataset_size()) for c in concat.children)
    return size
