"""Turns the list of run results into the Markdown table (and ratios headrace / peer)."""
from __future__ import annotations

import statistics

from . import w1, w2, wcache
from .harness import summarize
from .suite import UNITS

TITLES = {"w1": "W1 overhead (rows/s)", "w2": "W2 imagenet-like (images/s)",
          "w3": "W3 records (MB/s, 10^6 bytes of payload)",
          "limits": "Limits: one core, one thread, JPEGs in memory (images/s)",
          "text": "Text: BertTokenizer + Lookup + Truncate + pad, batch 32 (reviews/s)",
          "cache": "Cache: W2's MindRecord images, 1 worker, batch 128, with and without DatasetCache (images/s)",
          "feed": "Feed: 10 ms training steps, a pipeline 1.2x faster (steps/s)",
          "speech": "Speech: 1 s clips, MelSpectrogram + AmplitudeToDB + Time/FrequencyMasking, batch 32 (clips/s)"}


def _fmt(v: float | None) -> str:
    if v is None:
        return "–"
    if v >= 1000:
        return f"{v:,.0f}"
    return f"{v:.3g}" if v < 10 else f"{v:.0f}"


def add_summaries(results: list[dict]) -> None:
    for r in results:
        r["summary"] = summarize(r, UNITS[r["workload"]]) if r.get("status") == "ok" else {}


def ratio_base(results: list[dict], r: dict) -> dict | None:
    """The headrace row that `r` is compared with: the `compare` variant, same workers if run."""
    if r["system"] == "headrace" or not r.get("compare"):
        return None
    cands = [h for h in results if h["system"] == "headrace" and h["workload"] == r["workload"]
             and h["variant"] == r["compare"] and h.get("summary")]
    for w in (r["workers"], max(r["workers"], 1), 1, 0):
        for h in cands:
            if h["workers"] == w:
                return h
    return None


def add_ratios(results: list[dict]) -> None:
    for r in results:
        base = ratio_base(results, r)
        r["ratio"] = None
        if base and r.get("summary"):
            r["ratio"] = base["summary"]["median"] / r["summary"]["median"]
            r["ratio_against"] = f"headrace {base['variant']} w={base['workers']}"


def table(results: list[dict], workload: str) -> str:
    rows = [r for r in results if r["workload"] == workload]
    if not rows:
        return ""
    unit = UNITS[workload]
    head = (f"### {TITLES[workload]}\n\n"
            f"| system | variant | workers | items/epoch | median {unit} | min–max | 1st batch s "
            f"| peak RSS MiB (PSS) | load1 start→end | other busy cores | headrace/peer | note |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    for r in rows:
        m = r.get("measured", {})
        s = r.get("summary") or {}
        w = "–" if r["workers"] == 0 else str(r["workers"])
        load = (f"{m['load1_start']:.2f}→{m['load1_end']:.2f}" if m else "–")
        other = f"{m['other_busy_cores']:.2f}" if m else "–"
        rss = (f"{m['peak_rss_mib']:,.0f} ({m['peak_pss_mib']:,.0f})" if m else "–")
        note = r.get("note", "")
        if s:
            median, rng = _fmt(s["median"]), f"{_fmt(s['min'])}–{_fmt(s['max'])}"
            first = f"{s['first_batch_s']:.3g}" if s.get("first_batch_s") is not None else "–"
            items = f"{s['items_per_epoch']:,}"
        else:
            median, rng, first, items = f"**{r.get('status', '?')}**", "–", "–", "–"
            err = (r.get("error") or "").replace("|", "\\|").replace("\n", " ")
            note = (note + "; " if note else "") + err[:160]
        ratio = f"{r['ratio']:.2f}" if r.get("ratio") else "–"
        lines.append(f"| {r['system']} | {r['variant']} | {w} | {items} | {median} | {rng} | {first} "
                     f"| {rss} | {load} | {other} | {ratio} | {note} |")
    return head + "\n".join(lines) + "\n"


def memory(results: list[dict]) -> str:
    """Peak memory of each run's whole process tree next to what one batch holds, for the workloads
    that batch arrays (W1, W2): how many batches' worth of memory each system keeps."""
    rows = [r for r in results if r["workload"] in ("w1", "w2") and r.get("summary")
            and r.get("measured") and r.get("batch_bytes")]
    if not rows:
        return ""
    lines = ["### Memory\n",
             "Peak RSS and PSS (proportional set size: shared pages split between the processes "
             "that map them) of the runner's whole process tree, sampled while it ran (RSS every 0.2 s, "
             "PSS as often as keeps the sampling under 1% of a core), and the bytes "
             "of one output batch. PSS / batch is how many batches' worth of memory the run held, "
             "interpreter and libraries included.\n",
             "| workload | system | variant | workers | batch MiB | peak RSS MiB | peak PSS MiB "
             "| PSS / batch |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        m, mib = r["measured"], r["batch_bytes"] / 2**20
        w = "–" if r["workers"] == 0 else str(r["workers"])
        lines.append(f"| {r['workload']} | {r['system']} | {r['variant']} | {w} | {mib:.3g} "
                     f"| {m['peak_rss_mib']:,.0f} | {m['peak_pss_mib']:,.0f} "
                     f"| {m['peak_pss_mib'] / mib:,.0f} |")
    return "\n".join(lines) + "\n"


def feed_waits(results: list[dict]) -> str:
    """The feed workload's figures: the loop's time waiting for data, and the first batch's wait."""
    rows = [r for r in results if r["workload"] == "feed" and r.get("summary")]
    if not rows:
        return ""
    lines = ["Time the training loop waited for data (median over epochs): after the first batch, as "
             "a share of the loop's time; and the wait for the first batch.\n",
             "| system | variant | waiting % | first batch wait ms |", "|---|---|---|---|"]
    for r in rows:
        eps = r["epochs"]
        frac = sorted(e["wait_fraction"] for e in eps)[len(eps) // 2]
        first = sorted(e["first_wait_s"] for e in eps)[len(eps) // 2]
        lines.append(f"| {r['system']} | {r['variant']} | {100 * frac:.2f} | {1000 * first:.1f} |")
    return "\n".join(lines) + "\n"


def paired(results: list[dict]) -> str:
    """The paired rows' figures: each adapter epoch's rate over the NumPy epoch read next to it."""
    rows = [r for r in results if r.get("summary") and r["epochs"] and "paired_ratio" in r["epochs"][0]]
    if not rows:
        return ""
    lines = ["Adapters, paired: epochs through a loader and through a NumPy iterator over the same "
             "pipeline, in turns in one process (each epoch makes its pipeline and loader anew); the ratio "
             "of each pair of epochs (above 1: the loader was faster).\n",
             "| workload | variant | workers | pairs | NumPy median | loader median | paired ratio, median "
             "| min–max |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ratios = sorted(e["paired_ratio"] for e in r["epochs"])
        base = statistics.median(e["base_rate"] for e in r["epochs"])
        lines.append(f"| {r['workload']} | {r['variant']} | {r['workers']} | {len(ratios)} "
                     f"| {_fmt(base)} | {_fmt(r['summary']['median'])} "
                     f"| {statistics.median(ratios):.3f} | {ratios[0]:.3f}–{ratios[-1]:.3f} |")
    return "\n".join(lines) + "\n"


def markdown(results: list[dict], header: str) -> str:
    parts = [header]
    for wl in TITLES:
        t = table(results, wl)
        if t:
            parts.append(t)
        if wl == "w1" and w1.limit_ratios(results):
            parts.append(w1.limit_ratios(results))
        if wl == "w2" and w2.goal_ratios(results):
            parts.append(w2.goal_ratios(results))
        if wl == "cache" and wcache.issue_figures(results):
            parts.append(wcache.issue_figures(results))
    waits = feed_waits(results)
    if waits:
        parts.append(waits)
    pairs = paired(results)
    if pairs:
        parts.append(pairs)
    mem = memory(results)
    if mem:
        parts.append(mem)
    return "\n".join(parts)
