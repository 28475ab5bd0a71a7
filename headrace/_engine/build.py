"""Plan -> iterator tree. Each call builds fresh iterators, so one plan serves many iterators.

Sources read by index, maps, filters and batches are grouped into stages (``exec/stage.py``)
that run serially, on threads or in worker processes; the other ops are built one by one.
"""
from __future__ import annotations

from typing import Any, Callable

from headrace._engine import plan as P
from headrace._engine.ops.base import BuildContext, OpIter
from headrace._engine.ops.batch import BucketBatchIter
from headrace._engine.ops.columns import SelectIter
from headrace._engine.ops.combine import ConcatIter, ZipIter
from headrace._engine.ops.flat_map import FlatMapIter
from headrace._engine.ops.gate import GateIter
from headrace._engine.ops.repeat import RepeatIter
from headrace._engine.ops.shuffle import ShuffleIter
from headrace._engine.ops.slice import SkipIter, TakeIter
from headrace._engine.ops.source import StreamIter
from headrace._engine.exec.stage import build_stage, plan_stage

_UNARY: dict[type, Callable[..., OpIter]] = {
    P.BucketBatchNode: BucketBatchIter,
    P.ShuffleNode: ShuffleIter,
    P.RepeatNode: RepeatIter,
    P.TakeNode: TakeIter,
    P.SkipNode: SkipIter,
    P.SelectNode: SelectIter,
    P.GateNode: GateIter,
}


def plan_of(value: Any) -> P.Node:
    """Accepts a plan node or anything carrying one (a public Dataset) as ``_plan``."""
    return value if isinstance(value, P.Node) else value._plan


def build(node: Any, ctx: BuildContext) -> OpIter:
    node = plan_of(node)
    kind = type(node)
    if kind in (P.RandomAccessNode, P.MapNode, P.FilterNode, P.BatchNode):
        sp = plan_stage(node, ctx.options)
        if sp is not None:
            return build_stage(sp, ctx, build)
    if kind is P.StreamNode:
        return StreamIter(ctx, node)
    if kind is P.ZipNode:
        return ZipIter(ctx, tuple(build(c, ctx) for c in node.children))
    if kind is P.ConcatNode:
        return ConcatIter(ctx, node, tuple(build(c, ctx) for c in node.children))
    if kind is P.FlatMapNode:
        return FlatMapIter(ctx, node, build(node.children[0], ctx), build)
    parent = build(node.children[0], ctx)
    return _UNARY[kind](ctx, node, parent)
