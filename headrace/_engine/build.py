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
from headrace._engine.ops.hooks import build_hooked_map
from headrace._engine.ops.repeat import FOREVER_STRIDE, RepeatIter
from headrace._engine.ops.shuffle import ShuffleIter
from headrace._engine.ops.slice import SkipIter, TakeIter
from headrace._engine.ops.source import StreamIter
from headrace._engine.device_stage import device_ops, wrap_device
from headrace._engine.exec.stage import build_stage, hooked_map_stage, plan_stage

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
    prof = getattr(ctx, "profile", None)
    if prof is None:
        return _build(node, ctx)
    # A profiled run: every op iterator of the tree is timed (the sub-pipelines a flat_map builds
    # per row are not: they would add records without end).
    return prof.wrap(_build(node, ctx, _build_unprofiled))


class _Unprofiled:
    """A build context seen without its profile (for what flat_map builds per row)."""

    profile = None

    def __init__(self, ctx: BuildContext) -> None:
        self._ctx = ctx

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)


def _build_unprofiled(node: Any, ctx: BuildContext) -> OpIter:
    return _build(node, _Unprofiled(ctx) if getattr(ctx, "profile", None) is not None else ctx)  # type: ignore[arg-type]


def _build(node: Any, ctx: BuildContext, flat: Callable[[Any, BuildContext], OpIter] | None = None) -> OpIter:
    build_ = build
    node = plan_of(node)
    kind = type(node)
    if kind is P.MapNode and node.hooks is not None and getattr(ctx.options, "hooks", True):
        if device_ops(node) is not None:
            raise ValueError(f"map: callbacks are not supported on a map with GPU ops "
                             f"({', '.join(device_ops(node) or ())}); give the callbacks to a map of their own.")
        return build_hooked_map(node, ctx, build, hooked_map_stage)
    if kind is P.RepeatNode:
        # the passes of the ops below per epoch (a hooked map's epochs span them)
        outer = getattr(ctx, "rounds", 1)
        ctx.rounds = outer * (node.count if node.count is not None else FOREVER_STRIDE)  # type: ignore[attr-defined]
        try:
            parent = build(node.children[0], ctx)
        finally:
            ctx.rounds = outer  # type: ignore[attr-defined]
        return RepeatIter(ctx, node, parent)
    if kind in (P.RandomAccessNode, P.MapNode, P.FilterNode, P.BatchNode):
        sp = plan_stage(node, ctx.options)
        if sp is not None:
            return wrap_device(sp.nodes, build_stage(sp, ctx, build_), ctx)
    if kind is P.StreamNode:
        return StreamIter(ctx, node)
    if kind is P.ZipNode:
        return ZipIter(ctx, tuple(build_(c, ctx) for c in node.children))
    if kind is P.ConcatNode:
        return ConcatIter(ctx, node, tuple(build_(c, ctx) for c in node.children))
    if kind is P.FlatMapNode:
        return FlatMapIter(ctx, node, build_(node.children[0], ctx), flat or build)
    parent = build_(node.children[0], ctx)
    return _UNARY[kind](ctx, node, parent)
