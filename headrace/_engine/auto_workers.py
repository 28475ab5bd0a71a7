"""``auto_num_workers``: worker counts from the machine, chosen when a run is created.

With the setting on, the plan a run executes gets new ``num_workers`` for its parallel ops (those
taking ``num_parallel_workers``), in place of the user's and the default:

* the ops that compute (maps, filters, batches with a ``per_batch_map``) form groups the way a
  stage groups them (``exec/stage_plan.py``): an op right over another of the same mode
  (threads or processes) runs in that op's stage. The groups share the CPU budget equally,
  ``max(1, budget // groups)`` workers each. The budget is the CPUs this process may use
  (``sched_getaffinity``) divided by the processes of the job on this host (``LOCAL_WORLD_SIZE``,
  as torchrun sets it; 1 without it);
* a random-access source right under a computing op gets that op's count, so its reads run in
  the op's workers; any other source reads with 1 worker;
* a batch without ``per_batch_map`` keeps its count: it only collates, in the stage below it.

Worker counts never change rows (every op keys its randomness by row and pass), so a run gives the
same rows with the setting on or off. Each change is one INFO line on the
``headrace.auto_num_workers`` logger. Autotune, when on too, starts from these counts.
"""
from __future__ import annotations

import dataclasses
import logging
import os

from headrace._engine import plan as P
from headrace._engine.machine import cpu_budget

log = logging.getLogger("headrace.auto_num_workers")


def ranks_on_host() -> int:
    """The processes of one job on this host (``LOCAL_WORLD_SIZE``; 1 when unset or not a positive int)."""
    try:
        n = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    except ValueError:
        return 1
    return max(1, n)


def _computes(n: P.Node) -> bool:
    kind = type(n)
    return kind in (P.MapNode, P.FilterNode) or (kind is P.BatchNode and n.per_batch_map is not None)  # type: ignore[attr-defined]


def _mode(n: P.Node) -> bool:
    return bool(getattr(n, "processes", False))


def assign(plan: P.Node, cores: int | None = None) -> P.Node:
    """``plan`` with the worker counts of ``auto_num_workers`` (``cores``: the budget before dividing
    by the ranks on the host; default: the CPUs this process may use)."""
    budget = max(1, (cpu_budget() if cores is None else cores) // ranks_on_host())
    nodes = P.all_nodes(plan)
    group: dict[int, int] = {}  # id(compute node) -> its group (the id of the group's lowest op)
    for n in reversed(nodes):  # all_nodes lists parents before children: children first here
        if not _computes(n):
            continue
        child = n.children[0] if n.children else None
        if child is not None and id(child) in group and _mode(child) == _mode(n):
            group[id(n)] = group[id(child)]
        else:
            group[id(n)] = id(n)
    share = max(1, budget // max(1, len(set(group.values()))))
    want: dict[int, int] = {i: share for i in group}
    for n in nodes:
        if id(n) in group and n.children and type(n.children[0]) is P.RandomAccessNode:
            want[id(n.children[0])] = share
    swaps: dict[int, P.Node] = {}
    for n in nodes:
        if type(n) is P.RandomAccessNode:
            new = want.get(id(n), 1)
        elif id(n) in want:
            new = want[id(n)]
        else:
            continue
        old = n.num_workers  # type: ignore[attr-defined]
        if new != old:
            swaps[id(n)] = dataclasses.replace(n, num_workers=new)  # type: ignore[call-arg]
            log.info("auto_num_workers: %s num_parallel_workers %d -> %d (%d CPUs for %d stage(s))",
                     getattr(n, "name", type(n).__name__), old, new, budget, len(set(group.values())))
    return P.rewrite(plan, swaps, {}) if swaps else plan
