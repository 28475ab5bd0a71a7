"""Shared benchmark harness: the epoch timer that runners use, and the launcher that runs each runner
in its own interpreter while watching its process tree (peak RSS/PSS) and the machine's load.

Standard library only: runners import this module under every peer's interpreter (MindSpore's venv
has NumPy 1.26, the main one NumPy 2).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field

RESULT_MARK = "@@BENCH_RESULT@@ "
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# OpenCV reads this when it creates its thread pool: it pins the copies of OpenCV we cannot reach
# from Python (the one inside MindSpore, the one TensorFlow might load) to one thread too.
RUNNER_ENV = {"OPENCV_FOR_THREADS_NUM": "1", "GLOG_v": "3", "TF_CPP_MIN_LOG_LEVEL": "2",
              "PYTHONHASHSEED": "0", "PYTHONWARNINGS": "ignore"}


# --------------------------------------------------------------------------- inside a runner

class Unavailable(Exception):
    """The system cannot be imported or lacks the API a workload needs."""


def pin_opencv() -> None:
    """cv2.setNumThreads(1) where this interpreter has cv2 (MindSpore's venv does not)."""
    try:
        import cv2
    except ImportError:
        return
    cv2.setNumThreads(1)


def runner_args(description: str) -> argparse.Namespace:
    """The command line every runner accepts (the launcher builds it from a Config)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--workload", required=True)
    p.add_argument("--variant", required=True)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--items", type=int, default=0, help="W1 rows / W3 records per epoch (0 = spec)")
    p.add_argument("--data", required=True, help="data root (benchmarks/_data or a test dir)")
    p.add_argument("--module", default="", help="for the MindSpore-API runner: mindspore|headrace")
    return p.parse_args()


def time_epochs(make_iter, count, epochs: int, warmup: int, check=None, before=None) -> dict:
    """Runs `warmup` + `epochs` epochs; an epoch is `make_iter()` plus full iteration.

    `count(batch)` -> (items, bytes) in the batch; `check(batch)` validates the first batch once;
    `before()` runs untimed ahead of each epoch.
    Returns per-epoch seconds, items, bytes and time to first batch.
    """
    out = {"warmup": [], "epochs": []}
    for e in range(warmup + epochs):
        if before is not None:
            before()
        t0 = time.perf_counter()
        first = None
        items = nbytes = 0
        it = make_iter()
        for batch in it:
            if first is None:
                first = time.perf_counter() - t0
                if e == 0:
                    out["batch_bytes"] = batch_bytes(batch)
                    if check is not None:
                        check(batch)
            n, b = count(batch)
            items += n
            nbytes += b
        seconds = time.perf_counter() - t0
        del it
        rec = {"seconds": seconds, "items": items, "bytes": nbytes, "first_batch_s": first}
        out["warmup" if e < warmup else "epochs"].append(rec)
    return out


def time_paired(make_base, make_other, count, epochs: int, warmup: int, check=None) -> dict:
    """Epochs of ``make_other()`` paired with epochs of ``make_base()`` in the same process, in
    turns (base first, then other first, and so on), so that both see the same load: each of
    ``other``'s epoch records carries ``paired_ratio``, its rate over the base epoch next to it,
    and ``base_rate``. On a shared machine a rate drifts by more than an adapter costs; the
    ratio of a pair drifts far less. ``warmup`` pairs are not counted."""
    out: dict = {"warmup": [], "epochs": []}
    for e in range(warmup + epochs):
        order = ("base", "other") if e % 2 == 0 else ("other", "base")
        recs = {}
        for which in order:
            made = make_base if which == "base" else make_other
            res = time_epochs(made, count, 1, 0, check if e == 0 else None)
            recs[which] = res["epochs"][0]
            if e == 0 and which == "other":
                out["batch_bytes"] = res.get("batch_bytes")
        base, rec = recs["base"], recs["other"]
        base_rate = base["items"] / base["seconds"]
        rec["base_rate"] = base_rate
        rec["paired_ratio"] = rec["items"] / rec["seconds"] / base_rate
        out["warmup" if e < warmup else "epochs"].append(rec)
    return out


def batch_bytes(batch) -> int:
    """Bytes held by one batch's arrays or tensors (what each prefetched batch costs in memory)."""
    if isinstance(batch, dict):
        batch = list(batch.values())
    if not isinstance(batch, (list, tuple)):
        batch = [batch]
    return sum(int(getattr(c, "nbytes", 0)) for c in batch)


def time_calls(fn, epochs: int, warmup: int, before=None) -> dict:
    """Times `fn()` -> (items, bytes) like an epoch; `before()` runs untimed ahead of each call."""
    out = {"warmup": [], "epochs": []}
    for e in range(warmup + epochs):
        if before is not None:
            before()
        t0 = time.perf_counter()
        items, nbytes = fn()
        seconds = time.perf_counter() - t0
        rec = {"seconds": seconds, "items": items, "bytes": nbytes, "first_batch_s": None}
        out["warmup" if e < warmup else "epochs"].append(rec)
    return out


def emit(result: dict) -> None:
    print(RESULT_MARK + json.dumps(result), flush=True)


def runner_main(run, description: str) -> None:
    """Entry point of a runner script: parses the args, calls `run(args) -> dict`, prints JSON.

    `run` raises Unavailable when the system can't be used; any other exception is a failure.
    """
    args = runner_args(description)
    pin_opencv()
    base = {"workload": args.workload, "variant": args.variant, "workers": args.workers,
            "python": sys.version.split()[0]}
    try:
        res = run(args)
        res = {**base, "status": "ok", **res}
    except Unavailable as e:
        res = {**base, "status": "unavailable", "error": f"not available yet: {e}"}
    except BaseException as e:  # noqa: BLE001 - reported, the suite goes on
        res = {**base, "status": "failed", "error": f"{type(e).__name__}: {e}",
               "traceback": traceback.format_exc()[-3000:]}
    emit(res)
    sys.stdout.flush()
    # Some frameworks leave non-daemon threads behind; the result is out, so leave now.
    os._exit(0)


def import_or_unavailable(name: str):
    import importlib
    try:
        return importlib.import_module(name)
    except Exception as e:  # noqa: BLE001 - any import failure means "not available"
        raise Unavailable(f"import {name}: {type(e).__name__}: {e}") from e


# --------------------------------------------------------------------------- the launcher side

def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        stat = _read(f"/proc/{name}/stat")
        if not stat:
            continue
        ppid = int(stat[stat.rfind(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(name))
    return kids


def _children_of(pid: int) -> list[int] | None:
    """The children of ``pid`` from ``/proc/<pid>/task/<tid>/children`` (one small file per
    thread); None where the kernel has no such file (then the whole of /proc is read)."""
    kids: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return kids  # gone
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids.extend(int(k) for k in f.read().split())
        except FileNotFoundError:
            if not os.path.exists(f"/proc/{pid}/task/{tid}"):
                continue  # the thread ended
            return None  # a kernel without CONFIG_PROC_CHILDREN
        except OSError:
            continue
    return kids


def tree_pids(root: int) -> list[int]:
    """``root`` and its descendants. Read through each process's children files: a scan of every
    process's stat file took 1.4 ms of CPU a sample on this machine, from the run being measured."""
    out, todo = [], [root]
    kids_map: dict[int, list[int]] | None = None
    while todo:
        pid = todo.pop()
        out.append(pid)
        kids = _children_of(pid) if kids_map is None else kids_map.get(pid, [])
        if kids is None:
            kids_map = _children_map()
            kids = kids_map.get(pid, [])
        todo.extend(kids)
    return out


def _rss_pss(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of one process in bytes; PSS shares pages between forked workers fairly."""
    rss = pss = 0
    for line in _read(f"/proc/{pid}/smaps_rollup").splitlines():
        if line.startswith("Rss:"):
            rss = int(line.split()[1]) * 1024
        elif line.startswith("Pss:"):
            pss = int(line.split()[1]) * 1024
    return rss, pss


_PAGE = os.sysconf("SC_PAGE_SIZE")


def _rss(pid: int) -> int:
    """RSS of one process in bytes from its counters (statm): no walk of its page tables."""
    fields = _read(f"/proc/{pid}/statm").split()
    return int(fields[1]) * _PAGE if len(fields) > 1 else 0


def cpu_times() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot."""
    vals = [int(v) for v in _read("/proc/stat").splitlines()[0].split()[1:]]
    hz = os.sysconf("SC_CLK_TCK")
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)
    return (sum(vals[:8]) - idle) / hz, sum(vals[:8]) / hz


def loadavg() -> float:
    return float(_read("/proc/loadavg").split()[0])


def cpu_seconds(pid: int, own: bool = False) -> float:
    """CPU seconds used by `pid` and by its children it has already reaped (``own``: by `pid` only)."""
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return 0.0
    fields = stat[stat.rfind(")") + 2:].split()
    return sum(int(v) for v in fields[11:13 if own else 15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime


class TreeMonitor(threading.Thread):
    """Samples the process tree under `pid` every `period` s: peak summed RSS and PSS, max procs.

    PSS is read less often, so that the monitor takes at most ``PSS_SHARE`` of one core from the
    run it measures. Reading it walks every page table of the tree (``smaps_rollup``): 6-8 ms of CPU
    a sample for headrace's six processes over W1 (2026-11-29), which at every 0.2 s cost its W1
    row over 2 worker processes 2-3% of its rows/s (0.756-0.759 of 2 x the bare loop against
    0.772-0.781 sampling every second, runs in turns), more than a peer with fewer processes. RSS
    comes from each process's counters (statm) every period.

    With ``stall_s`` > 0 it also watches the tree's CPU use: a runner whose whole tree used less
    than ``stall_cores`` of a core over the last ``stall_s`` seconds is taken to be hung (a real
    benchmark keeps at least one core busy) and its process group is killed.
    """

    PSS_SHARE = 0.01

    def __init__(self, pid: int, period: float = 0.2, stall_s: float = 0.0, stall_cores: float = 0.2):
        super().__init__(daemon=True)
        self.pid, self.period = pid, period
        self.stall_s, self.stall_cores = stall_s, stall_cores
        self.peak_rss = self.peak_pss = self.max_procs = 0
        self.stalled: str | None = None
        self._cpu: list[tuple[float, float]] = []   # (time, tree CPU seconds) samples
        # pid -> its own CPU seconds when last seen: the tree's CPU even where no process of ours
        # reaps it (a fork server's workers, reparented when the runner exits), which
        # RUSAGE_CHILDREN never counts; each process's last period is missed
        self.own_cpu: dict[int, float] = {}
        self._stop_evt = threading.Event()

    def run(self) -> None:
        next_pss = 0.0
        while not self._stop_evt.is_set():
            pids = tree_pids(self.pid)
            now = time.monotonic()
            if now >= next_pss:
                cpu = time.thread_time()
                rss = pss = 0
                for p in pids:
                    r, s = _rss_pss(p)
                    rss += r
                    pss += s
                self.peak_pss = max(self.peak_pss, pss)
                next_pss = now + max(self.period, (time.thread_time() - cpu) / self.PSS_SHARE)
            else:
                rss = sum(_rss(p) for p in pids)
            self.peak_rss = max(self.peak_rss, rss)
            self.max_procs = max(self.max_procs, len(pids))
            for p in pids:
                self.own_cpu[p] = max(self.own_cpu.get(p, 0.0), cpu_seconds(p, own=True))
            if self.stall_s > 0 and self._check_stall(sum(cpu_seconds(p) for p in pids)):
                return
            self._stop_evt.wait(self.period)

    def _check_stall(self, cpu: float) -> bool:
        now = time.monotonic()
        self._cpu.append((now, cpu))
        while len(self._cpu) > 1 and now - self._cpu[1][0] >= self.stall_s:
            self._cpu.pop(0)
        t0, c0 = self._cpu[0]
        if now - t0 < self.stall_s or (cpu - c0) >= self.stall_cores * (now - t0):
            return False
        self.stalled = (f"stalled: its processes used {(cpu - c0) / (now - t0):.0%} of a core over "
                        f"the last {now - t0:.0f} s (looks hung); killed")
        try:
            os.killpg(self.pid, signal.SIGKILL)  # our own child's session, by its id
        except ProcessLookupError:
            pass
        return True

    def stop(self) -> None:
        self._stop_evt.set()
        self.join(5)


ORPHAN_GRACE_S = 3.0  # how long launch() waits for a runner's processes that outlive it


@dataclass
class Launch:
    python: str
    module: str            # e.g. "benchmarks.peers.torchdl"
    args: list[str]
    timeout: float = 1800.0
    stall_s: float = 120.0  # kill a runner whose tree stays nearly idle this long (0: never)
    env: dict = field(default_factory=dict)


_subreaper: list[bool] = []  # [whether this process is its descendants' subreaper], once asked


def adopt_orphans() -> bool:
    """Makes this process the reaper of its orphaned descendants (Linux's
    ``PR_SET_CHILD_SUBREAPER``); True where it is. A runner's fork server, left running when the
    runner exits, is then reaped by :func:`launch`, and its CPU (with that of the workers it
    reaped) counts in this process's ``RUSAGE_CHILDREN`` instead of init's. The suite's own
    process calls it once; a process that runs other work must not (its other children's orphans
    would wait on it)."""
    if not _subreaper:
        ok = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes  # noqa: PLC0415

                ok = ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
            except (OSError, AttributeError):
                pass
        _subreaper.append(ok)
    return _subreaper[0]


def _my_children() -> set[int]:
    kids = _children_of(os.getpid())
    if kids is None:  # a kernel without the children files: every process's stat file
        kids = _children_map().get(os.getpid(), [])
    return set(kids)


def _reap_adopted(before: set[int], grace: float) -> int:
    """Reaps the children this process gained in a run (orphans of the runner's tree, adopted as
    its subreaper, also those adopted while waiting), waiting up to ``grace`` seconds for them
    to exit; ``before``: the children it had already. Returns how many are still running."""
    deadline = time.monotonic() + grace
    while True:
        for pid in _my_children() - before:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # reaped meanwhile
                pass
        left = _my_children() - before
        if not left or time.monotonic() >= deadline:
            return len(left)
        time.sleep(0.01)


def launch(spec: Launch) -> dict:
    """Runs one runner to completion and returns its JSON result plus what we measured around it.

    The CPU of the runner's tree (``our_cores``) comes from ``RUSAGE_CHILDREN``: every process of
    the tree is reaped by its parent or, orphaned, by this process (see :func:`adopt_orphans`),
    so it holds the CPU of workers that lived less than one of the monitor's samples too (where
    this process called :func:`adopt_orphans`; otherwise orphans are init's, and only the
    monitor's samples of them count)."""
    adopting = bool(_subreaper) and _subreaper[0]
    before = _my_children() if adopting else set()
    env = dict(os.environ, **RUNNER_ENV, **spec.env)
    env.pop("PYTHONPATH", None)
    cmd = [spec.python, "-m", spec.module, *spec.args]
    load0, (busy0, tot0) = loadavg(), cpu_times()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
    except OSError as e:
        return {"status": "unavailable", "error": f"not available: cannot start {spec.python}: {e}"}
    mon = TreeMonitor(proc.pid, stall_s=spec.stall_s)
    mon.start()
    timed_out = False
    try:
        stdout, stderr = proc.communicate(timeout=spec.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)  # our own child's session, by its id
        stdout, stderr = proc.communicate()
    wall = time.perf_counter() - t0
    mon.stop()
    if adopting:  # the tree's processes left running (a fork server on its way out)
        _reap_adopted(before, ORPHAN_GRACE_S)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy1, tot1 = cpu_times()
    ncpu = os.cpu_count() or 1
    ours = max((ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime), sum(mon.own_cpu.values()))
    res = None
    for line in stdout.splitlines():
        if line.startswith(RESULT_MARK):
            res = json.loads(line[len(RESULT_MARK):])
    if res is None:
        why = (mon.stalled or f"timed out after {spec.timeout:.0f} s" if timed_out or mon.stalled
               else f"exit code {proc.returncode}")
        res = {"status": "failed", "error": f"runner gave no result ({why})",
               "traceback": (stderr or "")[-3000:]}
    elif res.get("status") != "ok":
        res.setdefault("stderr_tail", (stderr or "")[-1500:])
    res["measured"] = {
        "wall_s": wall,
        "peak_rss_mib": mon.peak_rss / 2**20,
        "peak_pss_mib": mon.peak_pss / 2**20,
        "max_procs": mon.max_procs,
        "load1_start": load0,
        "load1_end": loadavg(),
        # Busy cores over the run, all processes on the machine, and ours (this runner's tree).
        "machine_busy_cores": (busy1 - busy0) / max(tot1 - tot0, 1e-9) * ncpu,
        "our_cores": ours / wall,
    }
    res["measured"]["other_busy_cores"] = max(
        0.0, res["measured"]["machine_busy_cores"] - res["measured"]["our_cores"])
    res["command"] = " ".join(cmd)
    return res


def summarize(res: dict, unit: str) -> dict:
    """Median / min / max of the per-epoch rate in `unit` (items/s, or MB/s from bytes)."""
    eps = res.get("epochs") or []
    if not eps:
        return {}
    if unit == "MB/s":
        rates = [e["bytes"] / 1e6 / e["seconds"] for e in eps]
    else:
        rates = [e["items"] / e["seconds"] for e in eps]
    firsts = [e["first_batch_s"] for e in eps if e.get("first_batch_s") is not None]
    return {"median": statistics.median(rates), "min": min(rates), "max": max(rates),
            "n": len(rates), "first_batch_s": statistics.median(firsts) if firsts else None,
            "items_per_epoch": eps[0]["items"]}
