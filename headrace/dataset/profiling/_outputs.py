"""The profile's files besides the JSON: a Chrome / Perfetto trace and a PNG chart.

The trace is the trace-event JSON format (``{"traceEvents": [...]}``; open it in
``chrome://tracing`` or https://ui.perfetto.dev): one track per worker (its process and thread)
with a slice per task, split into its ops for the tasks whose ops were timed (the split is laid
out in proportion, marked ``"approx": true``: the ops ran row by row, interleaved); one track per
op that runs in the pipeline's main thread; the consumer's waits; a counter per stage's output
queue. Timestamps are microseconds since the profile started.

The chart (Pillow only) shows, over the run's time, how busy each op was (percent of its
workers) and how many finished results waited in each stage's output queue, with the verdict.
"""
from __future__ import annotations

import math
import os
from typing import Any

from headrace.dataset.profiling._metrics import window

MAIN_TID = 1_000_000_000  # virtual thread ids of the main-thread tracks (above real ones in Perfetto's sort)


def _us(t: float, origin: float) -> float:
    return round((t - origin) * 1e6, 3)


def trace_events(recorder: Any, runs: list[dict]) -> dict:
    origin = recorder.started
    pid = os.getpid()
    ev: list[dict] = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "headrace (main process)"}}]
    named: set[tuple[int, int]] = set()
    for rec, m in zip(recorder.runs, runs):
        labels = {o["id"]: o["label"] for o in m["ops"]}
        base = MAIN_TID + rec.index * 1000
        _track(ev, pid, base, f"run {rec.index}: consumer (waiting for rows)")
        ev += [{"ph": "X", "name": "next_row", "cat": "consumer", "pid": pid, "tid": base,
                "ts": _us(a, origin), "dur": _us(b, a)} for a, b in rec.calls]
        for k, (oid, op) in enumerate(sorted(rec.callers.items()), start=1):
            if rec.nodes.get(oid, {}).get("stage") is not None:
                name = f"run {rec.index}: stage [{_stage_label(rec, oid, labels)}] (caller side)"
            else:
                name = f"run {rec.index}: {labels.get(oid, oid)}"
            _track(ev, pid, base + k, name)
            ev += [{"ph": "X", "name": labels.get(oid, str(oid)), "cat": "op", "pid": pid, "tid": base + k,
                    "ts": _us(a, origin), "dur": _us(b, a)} for a, b in op.spans]
        for sid, st in rec.stages.items():
            if sid not in labels:
                continue
            _stage_events(ev, rec, st, labels, origin, named)
    return {"traceEvents": ev, "displayTimeUnit": "ms",
            "otherData": {"producer": "headrace profiler", "schema": "headrace.profile/1"}}


def _track(ev: list[dict], pid: int, tid: int, name: str) -> None:
    ev.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}})


def _stage_label(rec: Any, sid: int, labels: dict) -> str:
    st = rec.stages.get(sid)
    members = st.members if st is not None else [sid]
    return " -> ".join(labels.get(m, str(m)) for m in members)


def _stage_events(ev: list[dict], rec: Any, st: Any, labels: dict, origin: float, named: set) -> None:
    name = f"stage [{_stage_label(rec, st.op_id, labels)}]"
    for t in st.tasks:
        wpid, tid = t[7]
        if (wpid, tid) not in named:
            named.add((wpid, tid))
            if wpid != os.getpid():
                ev.append({"ph": "M", "name": "process_name", "pid": wpid, "tid": 0,
                           "args": {"name": f"headrace worker (pid {wpid})"}})
            _track(ev, wpid, tid, f"{st.mode} worker")
        ev.append({"ph": "X", "name": name, "cat": "task", "pid": wpid, "tid": tid, "ts": _us(t[3], origin),
                   "dur": _us(t[4], t[3]),
                   "args": {"rows_in": t[9], "rows_out": t[6], "cpu_ms": round(t[5] * 1e3, 3) if t[5] >= 0 else None}})
    for t0, t1, ops, (wpid, tid) in st.op_spans:
        total = sum(ops) or 1.0
        at = t0
        for m, s in zip(st.members, ops):
            d = (t1 - t0) * s / total
            ev.append({"ph": "X", "name": labels.get(m, str(m)), "cat": "op", "pid": wpid, "tid": tid,
                       "ts": _us(at, origin), "dur": round(d * 1e6, 3), "args": {"approx": True, "seconds": round(s, 6)}})
            at += d
    depth = []
    for t in st.tasks:
        if t[2] > t[4]:
            depth.append((t[4], 1))
            depth.append((t[2], -1))
    depth.sort()
    n = 0
    qname = f"run {rec.index}: output queue of {name}"
    for when, step in depth:
        n += step
        ev.append({"ph": "C", "name": qname, "pid": os.getpid(), "ts": _us(when, origin), "args": {"results": n}})


# ---- the chart ----------------------------------------------------------------------------------

COLORS = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75),
          (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207)]
BUCKETS = 100          # the chart's points per series
MAX_TIMELINE = 10_000  # most points of a series in profile.json (then the interval widens)


def timeline_width(start: float, end: float, interval: float) -> float:
    """``interval``, widened so that the window holds at most ``MAX_TIMELINE`` buckets."""
    return max(interval, (end - start) / MAX_TIMELINE, 1e-9)


def busy_series(rec: Any, m: dict, end_fallback: float, width: float | None = None
                ) -> tuple[list[float], dict[str, list[float]], dict[str, list[float]]]:
    """(bucket start times, op label -> % busy per bucket, stage label -> average output-queue
    length per bucket) over the run's window, in buckets ``width`` seconds wide (default: the
    window in ``BUCKETS`` buckets; at most ``MAX_TIMELINE`` buckets either way)."""
    start, end = window(rec, end_fallback)
    if width is None:
        buckets, width = BUCKETS, max((end - start) / BUCKETS, 1e-9)
    else:
        width = timeline_width(start, end, width)
        buckets = max(1, math.ceil((end - start) / width - 1e-9))
    edges = [start + i * width for i in range(buckets)]
    busy: dict[str, list[float]] = {}
    queues: dict[str, list[float]] = {}
    by_id = {o["id"]: o for o in m["ops"]}

    def spread(acc: list[float], a: float, b: float, weight: float) -> None:
        if b <= a:
            return
        i = max(0, int((a - start) / width))
        while i < buckets and edges[i] < b:
            lo, hi = edges[i], edges[i] + width
            ov = min(b, hi) - max(a, lo)
            if ov > 0:
                acc[i] += ov * weight
            i += 1

    for sid, st in rec.stages.items():
        if sid not in by_id:
            continue
        w = max(1, st.workers)
        shares = [by_id[mm]["share_of_stage_pct"] / 100.0 if mm in by_id else 0.0 for mm in st.members]
        accs = [[0.0] * buckets for _ in st.members]
        q = [0.0] * buckets
        for t in st.tasks:
            for acc, sh in zip(accs, shares):
                spread(acc, t[3], t[4], sh / w)
            spread(q, t[4], t[2], 1.0)
        for mm, acc in zip(st.members, accs):
            if mm in by_id:
                busy[by_id[mm]["label"]] = [100.0 * x / width for x in acc]
        queues[by_id[sid]["label"]] = [x / width for x in q]
    for oid, op in rec.callers.items():
        if oid not in by_id or by_id[oid]["stage"] is not None:
            continue
        acc = [0.0] * buckets
        for a, b in op.spans:
            spread(acc, a, b, 1.0)
        for c in by_id[oid]["children"]:
            if c in rec.callers:
                for a, b in rec.callers[c].spans:
                    spread(acc, a, b, -1.0)
        busy[by_id[oid]["label"]] = [max(0.0, 100.0 * x / width) for x in acc]
    wait = [0.0] * buckets
    for a, b in rec.calls:
        spread(wait, a, b, 1.0)
    busy["consumer waiting"] = [100.0 * x / width for x in wait]
    return [e - start for e in edges], busy, queues


def timeline(rec: Any, m: dict, end_fallback: float, interval: float) -> dict:
    """The run's series at ``interval`` seconds (``ds.config.set_monitor_sampling_interval``), for
    profile.json: per op the percent of its workers' time busy, per stage its output queue's
    average length, and the consumer's waiting, per interval."""
    times, busy, queues = busy_series(rec, m, end_fallback, interval)
    step = timeline_width(*window(rec, end_fallback), interval)
    return {"interval_seconds": round(step, 6), "times": [round(t, 6) for t in times],
            "busy_pct": {k: [round(x, 1) for x in v] for k, v in busy.items()},
            "output_queue_size": {k: [round(x, 3) for x in v] for k, v in queues.items()}}


def chart_png(path: str, rec: Any, m: dict, verdict_text: str, end_fallback: float) -> None:
    from PIL import Image, ImageDraw, ImageFont  # noqa: PLC0415 - only when a chart is written

    times, busy, queues = busy_series(rec, m, end_fallback)
    W, H = 1200, 760
    img = Image.new("RGB", (W, H), "white")
    d = ImageDraw.Draw(img)
    font = ImageFont.load_default()
    wall = m["wall_seconds"]
    d.text((20, 10), f"headrace profile: run {m['run']}, {m['rows']} rows in {wall:.2f} s "
                     f"({m['rows_per_second']:.1f} rows/s)", fill="black", font=font)
    top = (70, 40, 860, 330)
    bottom = (70, 380, 860, 620)
    _panel(d, font, top, times, busy, 100.0, "busy, % of the op's workers", wall)
    qmax = max([max(v) for v in queues.values()] + [1.0])
    _panel(d, font, bottom, times, queues, qmax, "results waiting in each stage's output queue", wall)
    y = 640
    for line in _wrap(verdict_text, 170):
        d.text((20, y), line, fill="black", font=font)
        y += 14
    img.save(path, format="PNG")


def _panel(d: Any, font: Any, box: tuple, times: list[float], series: dict[str, list[float]], vmax: float,
           title: str, wall: float) -> None:
    x0, y0, x1, y1 = box
    d.text((x0, y0 - 16), title, fill="black", font=font)
    d.rectangle(box, outline=(120, 120, 120))
    for k in range(5):
        y = y1 - (y1 - y0) * k / 4
        d.line((x0, y, x1, y), fill=(230, 230, 230))
        d.text((x0 - 60, y - 6), f"{vmax * k / 4:.1f}", fill=(80, 80, 80), font=font)
    for k in range(6):
        x = x0 + (x1 - x0) * k / 5
        d.text((x - 10, y1 + 4), f"{wall * k / 5:.2f}s", fill=(80, 80, 80), font=font)
    n = max(1, len(times))
    for i, (name, vals) in enumerate(series.items()):
        color = COLORS[i % len(COLORS)]
        pts = [(x0 + (x1 - x0) * (j + 0.5) / n, y1 - (y1 - y0) * min(v, vmax) / vmax) for j, v in enumerate(vals)]
        if len(pts) > 1:
            d.line(pts, fill=color, width=2)
        ly = y0 + 4 + 14 * i
        d.rectangle((x1 + 12, ly + 2, x1 + 22, ly + 10), fill=color)
        d.text((x1 + 28, ly), name[:50], fill="black", font=font)


def _wrap(text: str, width: int) -> list[str]:
    out, line = [], ""
    for word in text.split():
        if len(line) + len(word) + 1 > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        out.append(line)
    return out
