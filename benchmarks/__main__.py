"""python -m benchmarks: headrace against MindSpore 2.10, PyTorch's DataLoader and tf.data on the
workloads of the benchmark spec, ../shared/BENCHMARKS.md from the repository root (W1 overhead,
W2 imagenet-like, W3 records, limits).

Every (system, variant, workers) runs alone in its own interpreter, one after another; results go
to benchmarks/_out/<time>/results.{json,md} and benchmarks/_out/latest.*; a full run (all
workloads and systems at the spec's sizes, >= 3 epochs) also writes benchmarks/RESULTS.md.

    python -m benchmarks                         # everything (~25 min on 2 cores)
    python -m benchmarks --quick                 # smoke run on tiny sizes
    python -m benchmarks -w w2 -s headrace,mindspore --workers 2 --epochs 5
    python -m benchmarks --list                  # what would run
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys

from . import envs, harness, report, suite, w1, w2, w3, wfeed, wspeech, wtext

OUT = os.path.join(harness.ROOT, "benchmarks", "_out")
DATA = os.path.join(harness.ROOT, "benchmarks", "_data")
WORKLOADS = ["w1", "w2", "w3", "limits", "text", "cache", "feed", "speech", "ray"]
QUICK = {"w1": 5_120, "w2": w2.QUICK_COUNT, "w3": 500, "text": 2_000, "cache": w2.QUICK_COUNT,
         "feed": wfeed.QUICK_STEPS, "speech": wspeech.QUICK}
FULL = {"w1": w1.N, "w2": w2.COUNT, "w3": w3.ROWS, "text": wtext.N, "cache": w2.COUNT, "feed": wfeed.STEPS,
        "speech": wspeech.N}


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-w", "--workloads", default=",".join(WORKLOADS), help="comma list")
    p.add_argument("-s", "--systems", default=",".join(suite.SYSTEMS), help="comma list")
    p.add_argument("--variant", action="append", default=[],
                   help="run only variants whose name contains this (repeatable)")
    p.add_argument("--workers", default="1,2", help="worker counts for systems that have workers")
    p.add_argument("--epochs", type=int, default=None, help="timed epochs (default 3; quick 1)")
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--quick", action="store_true", help="tiny sizes, 1 epoch: a smoke run")
    p.add_argument("--w1-rows", type=int, default=None)
    p.add_argument("--w2-images", type=int, default=None)
    p.add_argument("--w3-rows", type=int, default=None)
    p.add_argument("--text-reviews", type=int, default=None)
    p.add_argument("--feed-steps", type=int, default=None)
    p.add_argument("--speech-clips", type=int, default=None, help="a multiple of 32")
    p.add_argument("--data", default=DATA, help="data root (generated once, reused)")
    p.add_argument("--out", default=OUT)
    p.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    p.add_argument("--stall", type=float, default=120,
                   help="kill a run whose processes use under 20%% of a core for this many seconds "
                        "(a hung peer); 0 never does")
    p.add_argument("--no-setup", action="store_true", help="do not create venvs / pip install")
    p.add_argument("--list", action="store_true", help="print the runs and exit")
    a = p.parse_args(argv)
    a.workloads = [x for x in a.workloads.split(",") if x]
    a.systems = [x for x in a.systems.split(",") if x]
    a.workers = [int(x) for x in a.workers.split(",") if x]
    for x in a.workloads:
        if x not in WORKLOADS:
            p.error(f"unknown workload {x!r}; pick from {WORKLOADS}")
    for x in a.systems:
        if x not in suite.SYSTEMS:
            p.error(f"unknown system {x!r}; pick from {list(suite.SYSTEMS)}")
    base = QUICK if a.quick else FULL
    a.sizes = {"w1": a.w1_rows or base["w1"], "w2": a.w2_images or base["w2"],
               "w3": a.w3_rows or base["w3"], "text": a.text_reviews or base["text"],
               "feed": a.feed_steps or base["feed"], "speech": a.speech_clips or base["speech"]}
    a.sizes["limits"] = a.sizes["w2"]
    a.sizes["cache"] = a.sizes["w2"]
    a.sizes["ray"] = a.sizes["w2"]   # W2's images (benchmarks/wray.py)
    if a.epochs is None:
        a.epochs = 1 if a.quick else 3
    a.full = (not a.quick and a.sizes == {**FULL, "limits": FULL["w2"], "cache": FULL["w2"], "ray": FULL["w2"]}
              and a.epochs >= 3
              and a.workloads == WORKLOADS and a.systems == list(suite.SYSTEMS) and not a.variant
              and a.workers == [1, 2])
    return a


def plan(a) -> list[tuple[suite.Config, int]]:
    runs = []
    for cfg in suite.configs():
        if cfg.workload not in a.workloads or cfg.system not in a.systems:
            continue
        if a.variant and not any(v in cfg.variant for v in a.variant):
            continue
        for w in cfg.workers:
            if w == 0 or w in a.workers:
                runs.append((cfg, w))
    return runs


def items_for(a, cfg: suite.Config) -> int:
    n = a.sizes[cfg.workload]
    return min(n, cfg.items) if cfg.items else n


# --------------------------------------------------------------------------- setup and data

def setup(a) -> dict:
    status = {}
    if a.no_setup:
        return {"setup": "skipped (--no-setup)"}
    if "mindspore" in a.systems:
        status["mindspore venv"] = envs.setup_oracle()
    if {"torch", "tf", "grain", "dali"} & set(a.systems) or {"w2", "limits", "cache"} & set(a.workloads):
        status.update(envs.setup_bench_venv())
    if "torchaudio" in a.systems and "speech" in a.workloads:
        status.update(envs.setup_torchaudio_venv())
    return status


def generate(a) -> dict:
    """W1 in this interpreter; W2 where scikit-image is (the benchmark venv). Returns W2's meta."""
    if "w1" in a.workloads:
        w1.generate(a.data)
    if "text" in a.workloads:
        wtext.generate(a.data, a.sizes["text"])
    if "speech" in a.workloads:
        wspeech.generate(a.data, a.sizes["speech"])
    if not {"w2", "limits", "cache", "ray"} & set(a.workloads):
        return {}
    count = a.sizes["w2"]
    meta = os.path.join(w2.w2_dir(a.data, count), "meta.json")
    py = next((p for p in (suite.BENCH_PY, sys.executable) if envs.can_import(p, "skimage, cv2")),
              None)
    if w2.is_generated(a.data, count):
        pass
    elif py is None:
        print("[data] no interpreter imports both scikit-image and OpenCV: W2 data can't be "
              "generated",
              file=sys.stderr)
    else:
        print(f"[data] W2: {count} JPEGs under {w2.w2_dir(a.data, count)}", file=sys.stderr)
        code = "import sys; from benchmarks import w2; w2.generate(sys.argv[1], int(sys.argv[2]))"
        subprocess.run([py, "-c", code, a.data, str(count)], cwd=harness.ROOT, check=False,
                       env=dict(os.environ, **harness.RUNNER_ENV))
    if os.path.exists(meta):
        with open(meta) as f:
            return json.load(f)
    return {}


# --------------------------------------------------------------------------- running

def run_one(a, cfg: suite.Config, workers: int) -> dict:
    module, _, extra = suite.SYSTEMS[cfg.system]
    args = [*extra, "--workload", cfg.workload, "--variant", cfg.variant,
            "--workers", str(workers), "--epochs", str(a.epochs), "--warmup", str(a.warmup),
            "--items", str(items_for(a, cfg)), "--data", os.path.abspath(a.data)]
    res = harness.launch(harness.Launch(envs.interpreter(cfg.system), module, args, a.timeout, a.stall))
    res.update(workload=cfg.workload, system=cfg.system, variant=cfg.variant, workers=workers,
               compare=cfg.compare, note=cfg.note)
    return res


def quality(a) -> str:
    """RandomCropDecodeResize's quality table (limits.quality), from a fresh interpreter."""
    d = w2.w2_dir(a.data, a.sizes["w2"])
    if not w2.is_generated(a.data, a.sizes["w2"]):
        return ""
    proc = subprocess.run([sys.executable, "-m", "benchmarks.limits", "--psnr", d], cwd=harness.ROOT,
                          capture_output=True, text=True, env=dict(os.environ, **harness.RUNNER_ENV))
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        return f"The quality check failed: {last}\n"
    return proc.stdout


def progress(i: int, n: int, r: dict) -> None:
    s = harness.summarize(r, suite.UNITS[r["workload"]]) if r.get("status") == "ok" else {}
    m = r.get("measured", {})
    what = (f"{s['median']:,.0f} {suite.UNITS[r['workload']]} "
            f"(min {s['min']:,.0f}, max {s['max']:,.0f})" if s
            else f"{r.get('status')}: {(r.get('error') or '')[:200]}")
    print(f"[{i}/{n}] {r['workload']} {r['system']} {r['variant']!r} w={r['workers']}: {what}; "
          f"load1 {m.get('load1_start', 0):.2f}->{m.get('load1_end', 0):.2f}, "
          f"other busy cores {m.get('other_busy_cores', 0):.2f}", file=sys.stderr, flush=True)


def machine() -> dict:
    cpu = mem = ""
    with open("/proc/cpuinfo") as f:
        cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    with open("/proc/meminfo") as f:
        mem = f"{int(f.readline().split()[1]) / 2**20:.1f} GiB"
    return {"cpu": cpu, "cores": os.cpu_count(), "memory": mem, "kernel": platform.release(),
            "python": sys.version.split()[0]}


def git_commit() -> str:
    """HEAD, plus a note when headrace/ or benchmarks/ differ from it (what ran is the tree)."""
    def git(*args):
        return subprocess.run(["git", *args], capture_output=True, text=True,
                              cwd=harness.ROOT).stdout.strip()
    dirty = git("status", "--porcelain", "--", "headrace", "benchmarks")
    return (git("rev-parse", "--short", "HEAD") or "?") + (
        f" + {len(dirty.splitlines())} uncommitted paths in headrace/, benchmarks/" if dirty else "")


def header(a, meta: dict, results: list[dict]) -> str:
    m = meta["machine"]
    vers = {}
    for r in results:
        for k, v in (r.get("versions") or {}).items():
            vers.setdefault(f"{k} ({r['system']})" if k == "numpy" else k, v)
    w2m = meta.get("w2_data") or {}
    lines = [
        "# headrace benchmark results",
        "",
        f"Produced by `{meta['command']}` on {meta['started']} (commit {meta['commit']}"
        + (f"; at the end {meta['commit_end']}" if meta.get("commit_end", meta["commit"])
           != meta["commit"] else "")
        + f"); {'full run' if a.full else 'partial run'}. Each runner imports the working tree "
        "when it starts.",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory']} RAM, Linux {m['kernel']}; shared "
        "with other work, so each row carries the 1-minute load average at its start and end, and "
        "the CPU cores that processes other than the run's own tree kept busy on average while it "
        "ran (from /proc/stat minus the tree's rusage).",
        "",
        "Method (spec: ../shared/BENCHMARKS.md from the repository root): each row is one "
        f"interpreter running one system alone; {a.warmup} warm-up epoch(s), then {a.epochs} timed epoch(s); an epoch "
        "builds the pipeline, creates the iterator and drains it, so start-up counts; '1st batch' "
        "is the median time from the start of an epoch to its first batch.  Rates are per-epoch "
        "medians with min–max.  Peak RSS sums the whole process tree (workers included; PSS in "
        "brackets counts shared pages once), sampled every 0.2 s.  OpenCV is pinned to one thread "
        "(`cv2.setNumThreads(1)` and `OPENCV_FOR_THREADS_NUM=1` for copies we cannot reach). "
        "headrace/peer = headrace's median (the variant named by the row, same workers) / the "
        "row's median: above 1 means headrace is faster.",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in sorted(vers.items())) + ".",
        "Setup: " + ", ".join(f"{k}: {v}" for k, v in meta["setup"].items()) + ".",
    ]
    if w2m:
        lines += [
            "",
            f"W2 data: {w2m['params']['count']} JPEGs, mean {w2m['mean_kib']:.1f} KiB, "
            f"sha256 of all bytes in index order `{w2m['sha256']}` "
            f"(made with {', '.join(f'{k} {v}' for k, v in w2m['versions'].items())}). The spec's "
            "digest (`ca479df30d6dbc68…`, mean 71.8 KiB) is not reproduced: the spec fixes the "
            "seeds and the steps but not the order of the random draws, the crop rounding, the "
            "colour-jitter arithmetic or the noise dtype, so another faithful reading gives other "
            "bytes; the mean size and bits per pixel match closely.",
        ]
    return "\n".join(lines) + "\n"


def write_outputs(a, meta: dict, results: list[dict], final: bool) -> str:
    report.add_summaries(results)
    report.add_ratios(results)
    md = report.markdown(results, header(a, meta, results))
    if meta.get("quality"):
        md += ("\n### Quality: RandomCropDecodeResize against the full-decode chain\n\n"
               "`python -m benchmarks.limits --psnr <W2 dir>`: the same sample keys (so the same crop "
               "boxes) through Decode -> RandomResizedCrop and RandomCropDecodeResize, on the first 500 "
               "W2 JPEGs. Where the crop is shrunk 2x or more the JPEG is decoded at 1/2, 1/4 or 1/8 "
               "scale; the last columns score both results against an area-averaged (alias-free) resize "
               "of the full decode's pixels in the box each one covers.\n\n" + meta["quality"])
    os.makedirs(meta["out_dir"], exist_ok=True)
    doc = {"meta": meta, "results": results}
    for d in (meta["out_dir"], a.out):
        with open(os.path.join(d, "results.json" if d != a.out else "latest.json"), "w") as f:
            json.dump(doc, f, indent=1)
        with open(os.path.join(d, "results.md" if d != a.out else "latest.md"), "w") as f:
            f.write(md)
    if final and a.full:
        with open(os.path.join(harness.ROOT, "benchmarks", "RESULTS.md"), "w") as f:
            f.write(md)
    return md


def main(argv=None) -> int:
    a = parse_args(argv)
    runs = plan(a)
    if a.list:
        for cfg, w in runs:
            print(f"{cfg.workload}\t{cfg.system}\t{cfg.variant}\tworkers={w}\titems={items_for(a, cfg)}")
        return 0
    harness.adopt_orphans()  # the runners' CPU includes what outlives them (see harness.launch)
    started = dt.datetime.now().astimezone()
    meta = {"command": "python -m benchmarks " + " ".join(sys.argv[1:] if argv is None else argv),
            "started": started.isoformat(timespec="seconds"), "commit": git_commit(),
            "machine": machine(), "sizes": a.sizes, "epochs": a.epochs, "warmup": a.warmup,
            "full": a.full, "out_dir": os.path.join(a.out, started.strftime("%Y%m%d-%H%M%S"))}
    meta["setup"] = setup(a)
    meta["w2_data"] = generate(a)
    results = []
    for i, (cfg, w) in enumerate(runs, 1):
        results.append(run_one(a, cfg, w))
        progress(i, len(runs), results[-1])
        write_outputs(a, meta, results, final=False)   # partial results survive an interruption
    if "limits" in a.workloads:
        meta["quality"] = quality(a)
    meta["commit_end"] = git_commit()
    md = write_outputs(a, meta, results, final=True)
    print(md)
    print(f"[done] {meta['out_dir']}/results.{{md,json}}"
          + ("; benchmarks/RESULTS.md updated" if a.full else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
