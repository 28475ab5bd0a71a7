"""Grouping: which plan nodes run as one stage, and the stage's mode and worker count.

``plan_stage`` groups a chain of plan nodes into one stage::

    [random-access source] -> map* -> [filter | batch]

Grouping rules (the result cannot differ from running the ops one by one, because every op keys
its randomness by (seed, op id, pass, row index) and a stage assigns the same indices):

* maps join while they have the same mode (``python_multiprocessing``) and worker count;
* a batch joins on top: always when it only collates, with a ``per_batch_map`` when its mode and
  worker count match; a filter may top a stage instead (a batch cannot sit above a filter in one
  stage, since its rows would depend on the filter's results);
* a map with GPU ops (its function carries ``device_ops``) tops the maps of its stage: no map,
  filter or ``per_batch_map`` above it joins, since its rows leave the stage as work for the GPU
  stage (``headrace/_engine/device_stage.py``) that runs on top of the stage;
* a random-access source joins at the bottom when its reads may run in the stage's workers: it
  allows parallel reads (``num_parallel_workers > 1``) or has the stage's worker count, and, for a
  process stage, it is not marked thread-only and can be sent to a spawned worker.

The stage's mode: processes when its functions ask for them (a source alone: with more than one
worker), threads when more than one worker, otherwise inline in the caller's thread.
"""
from __future__ import annotations

import weakref
from typing import Any

from headrace._engine import plan as P

INLINE, THREADS, PROCESSES = "inline", "threads", "processes"


class StagePlan:
    """A chain of plan nodes (bottom first) that runs as one stage, its parent and its mode."""

    __slots__ = ("nodes", "parent", "mode", "workers")

    def __init__(self, nodes: list[P.Node], parent: P.Node | None, mode: str, workers: int) -> None:
        self.nodes, self.parent, self.mode, self.workers = nodes, parent, mode, workers


def plan_stage(node: P.Node, options: Any) -> StagePlan | None:
    """The stage ``node`` tops, or None when ``node`` is not a stage op."""
    chain: list[P.Node] = []  # top first
    fmode: tuple[bool, int] | None = None  # (processes, workers) of the function members
    n = node
    serial = getattr(options, "serial", False)
    if type(n) is P.BatchNode:
        chain.append(n)
        if n.per_batch_map is not None:
            fmode = function_mode(n, serial)
        n = n.children[0]
        if type(n) is P.FilterNode:
            return finish_plan(chain, n, fmode, serial)
    elif type(n) is P.FilterNode:
        chain.append(n)
        fmode = function_mode(n, serial)
        n = n.children[0]
    hooks = getattr(options, "hooks", True)
    while type(n) is P.MapNode and (n.hooks is None or not hooks):  # a map with hooks stands alone
        if chain and getattr(n.fn, "device_ops", None) is not None and not _collates(chain):
            break  # a map with GPU ops tops its stage's maps (module docstring)
        m = function_mode(n, serial)
        if fmode is not None and m != fmode:
            break
        fmode = m
        chain.append(n)
        n = n.children[0]
    if type(n) is P.RandomAccessNode and (serial or _source_joins(n, fmode, options)):
        chain.append(n)
        return finish_plan(chain, None, fmode, serial)
    if not chain:
        return None
    return finish_plan(chain, n, fmode, serial)


def _collates(chain: list[P.Node]) -> bool:
    """Whether ``chain`` (top first) is one batch that only collates."""
    return len(chain) == 1 and type(chain[0]) is P.BatchNode and chain[0].per_batch_map is None


def function_mode(n: P.MapNode | P.FilterNode | P.BatchNode, serial: bool) -> tuple[bool, int]:
    """(processes, workers) of a function member; one worker of no kind in a serial run."""
    return (False, 1) if serial else (bool(getattr(n, "processes", False)), n.num_workers)


def finish_plan(chain: list[P.Node], parent: P.Node | None, fmode: tuple[bool, int] | None,
            serial: bool = False) -> StagePlan:
    nodes = chain[::-1]
    if fmode is None:
        src = nodes[0] if type(nodes[0]) is P.RandomAccessNode else None
        if src is None or serial:
            return StagePlan(nodes, parent, INLINE, 1)
        w = src.num_workers
        if w <= 1 or getattr(src, "processes", None) is not True:
            # A source alone on threads only moves rows between threads: reads that take
            # microseconds (page cache, memory) lose more to GIL hand-offs than they gain, so the
            # stage reads in the caller's thread (the prefetch thread keeps it off the consumer).
            return StagePlan(nodes, parent, INLINE, 1)
        return StagePlan(nodes, parent, PROCESSES, w)
    procs, w = fmode
    return StagePlan(nodes, parent, PROCESSES if procs else (THREADS if w > 1 else INLINE), max(1, w))


_sendable: "weakref.WeakKeyDictionary[P.Node, bool]" = weakref.WeakKeyDictionary()


def _source_joins(src: P.RandomAccessNode, fmode: tuple[bool, int] | None, options: Any) -> bool:
    if fmode is None:
        return True
    procs, w = fmode
    if not (src.num_workers > 1 or src.num_workers == w):
        return False  # a source read by one worker is not known to bear concurrent reads
    if not procs:
        return True
    if getattr(src, "processes", None) is False:
        return False
    if getattr(options, "multiprocessing_start_method", "fork") != "spawn":
        return True
    ok = _sendable.get(src)
    if ok is None:
        import cloudpickle  # noqa: PLC0415 - only spawn needs it
        try:
            cloudpickle.dumps(src.source, protocol=5)
            ok = True
        except Exception:  # noqa: BLE001 - then the source is read in the main process
            ok = False
        _sendable[src] = ok
    return ok
