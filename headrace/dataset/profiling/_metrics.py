"""Metrics from the engine's profiling records (``headrace/_engine/profile.py``).

One run (an iterator) becomes one JSON-able dict; the layout is documented, field by field, in
``SCHEMA`` of ``headrace/dataset/profiling/__init__.py`` and tested exactly. Times are seconds,
percentages are 0..100 rounded to 0.1, timestamps are seconds since the profile started.

How the queue metrics map onto headrace: MindSpore samples each op's output queue (connector)
every few milliseconds and reports its average size, that average over its capacity
(utilisation) and the share of samples that found it empty (empty frequency). A headrace stage's
output queue is its finished tasks whose results the stage has not yet taken (each task knows
when it ended in its worker and when it was taken), so the same three numbers come out exactly,
weighted by time instead of sampled. The capacity is the pool's tasks in flight. The input queue
is the tasks submitted and not yet started by a worker.
"""
from __future__ import annotations

from typing import Any

KINDS = {"ReadStep": "source", "StreamIter": "source", "MapStep": "map", "FilterStep": "filter",
         "BatchStep": "batch", "BucketBatchIter": "batch", "ShuffleIter": "shuffle", "RepeatIter": "repeat",
         "TakeIter": "take", "SkipIter": "skip", "SelectIter": "project", "ZipIter": "zip",
         "ConcatIter": "concat", "FlatMapIter": "flat_map", "DeviceStageIter": "gpu_stage"}


def _pct(part: float, whole: float) -> float:
    return round(100.0 * part / whole, 1) if whole > 0 else 0.0


def _r(x: float) -> float:
    return round(x, 6)


def label(node: dict) -> str:
    """A short name for an op: ``map[Decode,RandomResizedCrop]``, ``batch``, ``ImageFolderDataset``."""
    kind = KINDS.get(node["kind"], node["kind"])
    fns = node.get("functions") or []
    if kind in ("map", "filter"):
        return f"{kind}[{','.join(fns)}]" if fns else kind
    if kind == "source":
        return node["name"]
    if kind in ("batch", "zip", "concat", "flat_map", "project"):
        return kind
    return node["name"]


def queue_stats(spans: list[tuple[float, float]], start: float, end: float) -> tuple[float, float]:
    """(time-weighted average length, fraction of [start, end] with length 0) of a queue whose
    items are in it over ``spans``."""
    length = end - start
    if length <= 0:
        return 0.0, 1.0
    events = []
    for a, b in spans:
        a, b = max(a, start), min(b, end)
        if b > a:
            events.append((a, 1))
            events.append((b, -1))
    events.sort()
    area = 0.0
    empty = 0.0
    depth = 0
    t = start
    for when, step in events:
        if depth == 0:
            empty += when - t
        area += depth * (when - t)
        depth += step
        t = when
    empty += end - t if depth == 0 else 0.0
    area += depth * (end - t)
    return area / length, empty / length


def window(run: Any, fallback_end: float) -> tuple[float, float]:
    end = run.closed or run.last_return or fallback_end
    return run.created, max(end, run.created)


def run_metrics(run: Any, origin: float, fallback_end: float) -> dict:
    start, end = window(run, fallback_end)
    wall = end - start
    order = _order(run)
    labels = _labels(run, order)
    # Utilisation and queues are measured from the first task's start (worker processes take a
    # while to boot: that is time to the first row, not idle workers).
    firsts = [st.tasks[0][3] for st in run.stages.values() if st.tasks] + \
        [rec.spans[0][0] for rec in run.callers.values() if rec.spans]
    busy_start = max(start, min(firsts)) if firsts else start
    busy_wall = end - busy_start
    stages = {sid: _stage(run.stages[sid], busy_start, end, busy_wall, _row_by_row(run, sid))
              for sid in run.stages if _in_tree(run, sid)}
    ops = [_op(run, oid, labels, stages, busy_wall, wall) for oid in order]
    parents = {c: o["id"] for o in ops for c in o["children"]}
    for o in ops:
        o["parent"] = parents.get(o["id"])
    ss = [c for c in run.calls[1:]]  # after the first row: the steady state
    wait_ss = sum(b - a for a, b in ss)
    away_ss = sum(ss[i + 1][0] - ss[i][1] for i in range(len(ss) - 1)) if ss else 0.0
    first = None if run.first_row is None else _r(run.first_row - run.created)
    out = {
        "run": run.index,
        "start": _r(start - origin),
        "wall_seconds": _r(wall),
        "rows": run.rows,
        "rows_per_second": round(run.rows / wall, 2) if wall > 0 else 0.0,
        "time_to_first_row_seconds": first,
        "consumer": {
            "wait_seconds": _r(run.wait),
            "away_seconds": _r(run.away),
            "steady_wait_pct": _pct(wait_ss, wait_ss + away_ss),
        },
        "busy_window_seconds": _r(busy_wall),
        "cores": run.recorder.cores,
        "ops": ops,
        "stages": [dict(stages[sid], id=sid, ops=list(run.stages[sid].members)) for sid in sorted(stages)],
    }
    devices = getattr(run, "devices", None)
    if devices:  # a run with GPU stages (headrace/_engine/device_stage.py)
        out["devices"] = [_device(oid, d) for oid, d in sorted(devices.items())]
    return out


def _device(oid: int, d: dict) -> dict:
    """A GPU stage's counters: backend, samples, CPU fallbacks by reason and their share (%)."""
    n = sum(d["fallbacks"].values())
    return {"id": oid, "backend": d["backend"], "samples": d["samples"], "batches": d["batches"],
            "fallbacks": dict(sorted(d["fallbacks"].items())), "fallback_pct": _pct(n, d["samples"])}


def _in_tree(run: Any, sid: int) -> bool:
    node = run.nodes.get(sid)
    return node is not None and node["stage"] == sid


def _order(run: Any) -> list[int]:
    """Op ids from the top (the op the consumer reads) down to the sources."""
    out: list[int] = []
    todo = [run.top] if run.top is not None else []
    seen = set()
    while todo:
        oid = todo.pop(0)
        if oid in seen or oid not in run.nodes:
            continue
        seen.add(oid)
        out.append(oid)
        todo.extend(run.nodes[oid]["children"])
    return out


def _labels(run: Any, order: list[int]) -> dict[int, str]:
    raw = {oid: label(run.nodes[oid]) for oid in order}
    counts: dict[str, int] = {}
    for v in raw.values():
        counts[v] = counts.get(v, 0) + 1
    return {oid: (v if counts[v] == 1 else f"{v}#{oid}") for oid, v in raw.items()}


def _row_by_row(run: Any, sid: int) -> float:
    """A stage that ran its ops row by row in its reader's thread (1 worker, over a parent op, no
    batch: no tasks): its own time as its caller saw it, without the op it reads from."""
    if run.stages[sid].count or sid not in run.callers:
        return 0.0
    bottom = run.nodes[run.stages[sid].members[0]]
    below = sum(run.callers[c].seconds for c in bottom["children"] if c in run.callers)
    return max(0.0, run.callers[sid].seconds - below)


def _stage(st: Any, start: float, end: float, wall: float, row_by_row: float = 0.0) -> dict:
    tasks = st.tasks
    out_spans = [(t[4], t[2]) for t in tasks]            # ended -> taken
    in_spans = [(t[0], t[3]) for t in tasks]             # submitted -> started
    capacity = max((t[8] for t in tasks), default=0)
    avg_out, empty_out = queue_stats(out_spans, start, end)
    avg_in, empty_in = queue_stats(in_spans, start, end)
    waited = sum(1 for t in tasks if t[4] > t[1])          # not ready when asked for
    seen = len({t[7] for t in tasks})
    workers = _slots(st.mode, st.workers, seen)
    return {
        "mode": st.mode,
        "workers": st.workers,
        "workers_seen": seen,
        "tasks": st.count,
        "rows_in": st.items,
        "rows_out": st.rows,
        "busy_seconds": _r(st.busy + row_by_row),
        "cpu_seconds": _r(st.cpu),
        "worker_utilization_pct": _util(st.busy + row_by_row, workers, wall),
        "cpu_cores_used": round(st.cpu / wall, 3) if wall > 0 else 0.0,
        "cpu_per_busy_pct": _pct(st.cpu, st.busy),
        "blocks_per_second": round(st.switches / st.switch_busy, 1) if st.switch_busy > 0 else None,
        "blocks_per_cpu_second": round(st.switches / st.switch_cpu, 1) if st.switch_cpu > 0 else None,
        "result_not_ready_pct": _pct(waited, len(tasks)),
        "input_queue": None if st.mode == "inline" else {
            "average_size": round(avg_in, 2),
            "nonempty_pct": round(100.0 * (1.0 - empty_in), 1),
        },
        "output_queue": {
            "capacity": capacity,
            "average_size": round(avg_out, 2),
            "utilization_pct": _pct(avg_out, capacity),
            "empty_freq_pct": round(100.0 * empty_out, 1),
        },
    }


def _op(run: Any, oid: int, labels: dict[int, str], stages: dict[int, dict], wall: float, run_wall: float) -> dict:
    """``wall``: the busy window (utilisation is over it); rows/s are over the run's wall time."""
    node = run.nodes[oid]
    sid = node["stage"]
    out = {"id": oid, "label": labels[oid], "name": node["name"], "type": KINDS.get(node["kind"], node["kind"]),
           "mode": node["mode"], "workers": node["workers"], "stage": sid, "children": list(node["children"])}
    if sid is not None and sid in run.stages:
        st = run.stages[sid]
        members = st.members
        i = members.index(oid)
        share = _share(st, i, len(members))
        cshare = st.op_cpu[i] / sum(st.op_cpu) if len(st.op_cpu) == len(members) and sum(st.op_cpu) > 0 else None
        busy = stages[sid]["busy_seconds"] * share
        cpu = st.cpu * (share if cshare is None else cshare)
        kind = out["type"]
        rows = st.rows if (kind in ("batch", "filter") or i == len(members) - 1) else st.items
        if st.count == 0 and sid in run.callers:  # ran row by row: its caller counted the rows
            rows = run.callers[sid].rows
        out.update(rows=rows, wall_seconds=_r(busy), cpu_seconds=_r(cpu),
                   rows_per_second=round(rows / run_wall, 2) if run_wall > 0 else 0.0,
                   worker_utilization_pct=_util(busy, _slots(st.mode, st.workers, stages[sid]["workers_seen"]), wall),
                   share_of_stage_pct=round(100.0 * share, 1),
                   cpu_share_of_stage_pct=None if cshare is None else round(100.0 * cshare, 1),
                   output_queue=stages[sid]["output_queue"] if oid == sid else None)
    else:
        rec = run.callers.get(oid)
        inclusive = rec.seconds if rec is not None else 0.0
        below = sum(run.callers[c].seconds for c in node["children"] if c in run.callers)
        own = max(0.0, inclusive - below)
        rows = rec.rows if rec is not None else 0
        out.update(rows=rows, wall_seconds=_r(own), cpu_seconds=None,
                   rows_per_second=round(rows / run_wall, 2) if run_wall > 0 else 0.0,
                   worker_utilization_pct=_util(own, 1, wall), share_of_stage_pct=None, cpu_share_of_stage_pct=None,
                   output_queue=None)
    return out


def _slots(mode: str, workers: int, seen: int) -> int:
    """The workers utilisations are over: the stage's own (an inline stage's tasks run one at a
    time in whichever thread reads it; a thread stage's reader may run a task itself when no
    worker has started it, which can take the sum past 100%: ``_util`` caps it)."""
    return max(1, workers)


def _util(busy: float, slots: int, wall: float) -> float:
    return min(100.0, _pct(busy, slots * wall))


def _share(st: Any, i: int, n: int) -> float:
    if n == 1:
        return 1.0
    total = sum(st.op_seconds)
    if st.timed_tasks == 0 or total <= 0 or len(st.op_seconds) != n:
        return 1.0 / n
    return st.op_seconds[i] / total
