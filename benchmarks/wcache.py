"""Cache workload (issue 18): W2's MindRecord images, 1 worker, batch 128, with ``DatasetCache``.

Variants, each run by the MindSpore-API runner (``peers/msapi.py``) for headrace and MindSpore:

* ``train uncached`` / ``train cached``: Decode -> RandomResizedCrop(224) -> RandomHorizontalFlip
  -> Normalize -> HWC2CHW, the cached one with ``cache=`` on the Decode map (the random ops still
  run every epoch);
* ``eval uncached`` / ``eval cached``: Decode -> Resize(256) -> CenterCrop(224) (cached) ->
  Normalize -> HWC2CHW;
* ``train cached x2``: as ``train cached``, with a second process reading the same cache during
  the timed epochs (the row's peak PSS is both processes').

A cached run's warm-up epoch is the fill (``first_epoch_s`` in the result); the timed epochs read
the cache.

Two figures of issue 42 (item 3), computed by the runner so that every run reports them:

* ``fill_over_uncached`` (``train cached`` / ``eval cached``): a filling epoch over a steady
  uncached epoch, from ``fill_pairs``: after the timed epochs, one untimed uncached epoch, then
  ``epochs`` pairs of (uncached epoch, filling epoch of a fresh session) in alternating order, so
  that each pair sees the same load; the median of the pairs' wall-clock ratios, and
  ``fill_over_uncached_cpu`` the same over this process's CPU time (all its threads; a cache
  server's CPU is not in it). For headrace each pair also says which share of the fill's rows
  ``put`` wrote itself because no core was idle (``fill_written_here_share``; the rest were
  written behind by the cache's writer thread).
* ``pss`` (``train cached x2``): before the second process starts, the first reads ``epochs`` more
  cached epochs alone (as many as the second will read, so that both peaks come from as many
  samples) while its PSS (``/proc/<pid>/smaps_rollup``, with its worker processes) is sampled
  every 0.1 s (``one_mib``: peak); during the timed epochs with the second process, the sum of
  both (``two_mib``: peak). ``two_over_one``, ``second_added_mib`` (two less one), ``cache_mib``
  (the cached rows' bytes) and ``second_added_share`` (added over the cache's size); ``batch_mib``
  (one batch, the unit of the batches in flight) and each process's PSS by kind at its peak
  (``alone_*``: the first alone; ``first_*`` / ``second_*``: when the sum peaked; ``anon``: its
  private heap, batches included; ``shmem``: its share of the cache's pages; ``file``: its share
  of the libraries) say what the added part is. The second process writes its PSS before it
  reads (``second_base_mib``: interpreter and libraries); ``second_working_mib``, what its private
  heap grew by while reading (its batches in flight and their buffers), is its working set, and
  ``second_excess_mib`` / ``second_excess_share`` the rest of what it added (in MiB, and over the
  cache's size), less ``first_heap_change_mib``, how far the first's private heap at the sum's peak
  is from its own peak alone (its batches in flight): issue 42 asks for a share of at most 0.05.
  Each sum is read while no process's share of the shared pages moved (``PssPeak.sample``). Each run uses a fresh session (``cache_admin -g``: headrace's CLI, or MindSpore's
``dataset-cache`` with its server started on ``MS_PORT`` when none runs) and destroys it after.
For MindSpore the server's PSS is sampled after the timed epochs (``server_pss_mib``): its rows live
in that daemon, outside the runner's process tree.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from .config import Config

VARIANTS = ("train uncached", "train cached", "eval uncached", "eval cached", "train cached x2")
MS_PORT = 50071
RESIZE = 256

CONFIGS = [Config("cache", s, v, workers=(1,), compare=(v if s == "mindspore" else None),
                  note="warm-up epoch = cache fill" if "uncached" not in v else "")
           for s in ("headrace", "mindspore") for v in VARIANTS]


def _ms_admin() -> str:
    return os.path.join(os.path.dirname(sys.executable), "dataset-cache")


_STARTED: list[bool] = []  # this runner started MindSpore's cache server: destroy_session stops it


def new_session(module: str) -> int:
    """A fresh cache session, made the way each system's users make one."""
    if module == "mindspore":
        admin = _ms_admin()
        out = subprocess.run([admin, "-g", "-p", str(MS_PORT)], capture_output=True, text=True, timeout=120)
        if "Session created" not in out.stdout:
            subprocess.run([admin, "--start", "-p", str(MS_PORT)], capture_output=True, text=True, timeout=120)
            _STARTED.append(True)
            out = subprocess.run([admin, "-g", "-p", str(MS_PORT)], capture_output=True, text=True, timeout=120)
    else:
        out = subprocess.run([sys.executable, "-m", "headrace", "cache", "-g"], capture_output=True, text=True,
                             timeout=120)
    if "Session created" not in out.stdout:
        raise RuntimeError(f"no cache session: {out.stdout[-500:]} {out.stderr[-500:]}")
    return int(out.stdout.strip().split(":")[-1])


def destroy_session(module: str, session: int, last: bool = True) -> None:
    """Removes ``session``; ``last``: the run's own session, after which a MindSpore cache server
    this runner started is stopped too."""
    cmd = ([_ms_admin(), "-d", str(session), "-p", str(MS_PORT)] if module == "mindspore"
           else [sys.executable, "-m", "headrace", "cache", "-d", str(session)])
    subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if last and module == "mindspore" and _STARTED:  # the server this runner started leaves with it
        subprocess.run([_ms_admin(), "--stop", "-p", str(MS_PORT)], capture_output=True, text=True, timeout=120)
        _STARTED.clear()


def make_cache(ds, module: str, session: int):
    if module == "mindspore":
        return ds.DatasetCache(session_id=session, size=0, port=MS_PORT)
    return ds.DatasetCache(session_id=session, size=0)


def pipeline(ds, vision, path: str, chain: str, cache, mean, std, size: int, batch: int):
    """The MindSpore code of one chain (``cache`` None: uncached)."""
    data = ds.MindDataset(path, columns_list=["image", "label"], shuffle=True, num_parallel_workers=1)
    if chain == "train":
        data = data.map([vision.Decode()], input_columns=["image"], num_parallel_workers=1, cache=cache)
        tail = [vision.RandomResizedCrop(size), vision.RandomHorizontalFlip()]
    else:
        data = data.map([vision.Decode(), vision.Resize(RESIZE), vision.CenterCrop(size)], input_columns=["image"],
                        num_parallel_workers=1, cache=cache)
        tail = []
    data = data.map(tail + [vision.Normalize(mean=mean, std=std), vision.HWC2CHW()], input_columns=["image"],
                    num_parallel_workers=1)
    return data.batch(batch)


def server_pss_mib() -> float | None:
    """PSS of MindSpore's cache server on MS_PORT (its rows), or None when not found."""
    total, found = 0, False
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
            if not cmd or not cmd[0].endswith(b"dataset-cache-server") or str(MS_PORT).encode() not in cmd:
                continue
            with open(f"/proc/{d}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        found = True
        except OSError:
            continue
    return total / 1024 if found else None


PSS_PERIOD = 0.1
SAMPLE_TRIES = 5
_KINDS = ("Pss", "Pss_Anon", "Pss_Shmem", "Pss_File")


def _tree(pid: int, skip: frozenset[int] = frozenset()) -> list[int]:
    """``pid`` and its descendants (worker processes count with the process that started them),
    but for those in ``skip`` and theirs (the second process is the first's child: counted apart)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        if p in skip:
            continue
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            continue
    return out


def pss_kinds(pid: int, skip: frozenset[int] = frozenset()) -> dict[str, int] | None:
    """PSS in bytes by kind (``_KINDS``) of process ``pid`` and its descendants but ``skip`` (see
    ``_tree``), from ``/proc/<pid>/smaps_rollup``; None when the process is gone."""
    out = dict.fromkeys(_KINDS, 0)
    found = False
    for p in _tree(pid, skip):
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    name, _, rest = line.partition(":")
                    if name in out:
                        out[name] += int(rest.split()[0]) * 1024
            found = True
        except (OSError, ValueError, IndexError):
            continue
    return out if found else None


class PssPeak:
    """Samples the summed PSS of some processes every PSS_PERIOD s on a thread; ``peak`` is the
    highest sum seen, ``at_peak`` each process's kinds at that sample."""

    def __init__(self, pids) -> None:
        self.pids = pids  # a list the caller may extend while sampling
        self.peak = 0
        self.at_peak: dict[int, dict[str, int]] = {}
        self.skipped = 0  # samples with no consistent reading (see sample)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="wcache-pss", daemon=True)

    def __enter__(self) -> "PssPeak":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.sample()

    def sample(self) -> None:
        """One sum, from a moment when no process's share of shared memory changed while it was
        read: the processes are read one after another, and a page that one of them maps between
        two reads is counted whole by the first read and half by the second (``train cached x2``:
        the second process maps the cache's chunks as it meets them, and the peak, a maximum,
        picked the sums that counted ~28 MiB of them twice). So every process is read twice, and a
        sum counts only when each one's shared part (``Pss_Shmem``) was the same both times;
        ``SAMPLE_TRIES`` tries, else no sum this time."""
        pids = list(self.pids)
        for _ in range(SAMPLE_TRIES):
            kinds = self._read(pids)
            again = self._read(pids)
            if kinds.keys() == again.keys() and all(k["Pss_Shmem"] == again[p]["Pss_Shmem"] for p, k in kinds.items()):
                break
        else:
            self.skipped += 1
            return
        total = sum(k["Pss"] for k in kinds.values())
        if total > self.peak:
            self.peak, self.at_peak = total, kinds

    @staticmethod
    def _read(pids: list[int]) -> dict[int, dict[str, int]]:
        return {pid: k for pid in pids if (k := pss_kinds(pid, frozenset(pids) - {pid})) is not None}

    def _loop(self) -> None:
        while not self._stop.wait(PSS_PERIOD):
            self.sample()


def pss_figures(one: PssPeak, two: PssPeak, second_pid: int | None, cache_bytes: int, batch_bytes: int,
                base: dict | None) -> dict:
    """The ``pss`` record of ``train cached x2`` (see the module's docstring); ``base``: the second
    process's PSS kinds before it read (None when it did not say)."""
    mib = 2**20
    added = two.peak - one.peak
    out = {"one_mib": one.peak / mib, "two_mib": two.peak / mib,
           "two_over_one": two.peak / one.peak if one.peak else None,
           "second_added_mib": added / mib, "cache_mib": cache_bytes / mib,
           "second_added_share": added / cache_bytes if cache_bytes else None,
           "batch_mib": batch_bytes / mib, "samples_skipped": one.skipped + two.skipped}
    alone = one.at_peak.get(os.getpid(), {})
    first = two.at_peak.get(os.getpid(), {})
    second = two.at_peak.get(second_pid, {}) if second_pid is not None else {}
    for name, kinds in (("alone", alone), ("first", first), ("second", second)):
        for kind, short in (("Pss_Anon", "anon"), ("Pss_Shmem", "shmem"), ("Pss_File", "file")):
            out[f"{name}_{short}_mib"] = kinds.get(kind, 0) / mib
    # The first process's heap at the two peaks: one batch (73.5 MiB in W2) more or fewer in flight
    # moves the sum by 7% of the cache either way (excess figures of -0.7% and 3.7% in runs that
    # differed in nothing else); it is the first's working set, not something the second added.
    first_heap = first.get("Pss_Anon", 0) - alone.get("Pss_Anon", 0)
    out["first_heap_change_mib"] = first_heap / mib
    if base is not None:
        working = second.get("Pss_Anon", 0) - base["Pss_Anon"]
        excess = added - working - first_heap
        out.update({"second_base_mib": base["Pss"] / mib, "second_working_mib": working / mib,
                    "second_excess_mib": excess / mib,
                    "second_excess_share": excess / cache_bytes if cache_bytes else None})
    return out


def issue_figures(results: list[dict]) -> str:
    """The report's lines for issue 42's two figures (see the module's docstring), one per cached
    row that has them (any system); "" when the run has none."""
    fills = [r for r in results if r["workload"] == "cache" and "fill_over_uncached" in r]
    twos = [r for r in results if r["workload"] == "cache" and "pss" in r]
    if not fills and not twos:
        return ""
    lines = []
    if fills:
        lines += ["Filling epoch over a steady uncached epoch (issue 42 item 3: at most 1.15), median of "
                  "pairs run in turns; per pair in brackets. \"written by put\": the share of the fill's "
                  "rows put wrote itself for want of an idle core (headrace).\n",
                  "| system | variant | pairs | wall | CPU | written by put |", "|---|---|---|---|---|---|"]
        for r in fills:
            pairs = r["fill_pairs"]
            here = [p["fill_written_here_share"] for p in pairs if "fill_written_here_share" in p]
            each = ", ".join(f"{p['ratio']:.2f}" for p in pairs)
            each_cpu = ", ".join(f"{p['cpu_ratio']:.2f}" for p in pairs)
            lines.append(f"| {r['system']} | {r['variant']} | {len(pairs)} | {r['fill_over_uncached']:.3f} ({each}) "
                         f"| {r['fill_over_uncached_cpu']:.3f} ({each_cpu}) "
                         f"| {', '.join(f'{h:.2f}' for h in here) if here else '–'} |")
    if twos:
        lines += [("\n" if fills else "") + "Two processes reading one cache (issue 42 item 3: the second adds at "
                  "most its working set + 5% of the cache): peak PSS alone and together, in MiB; the "
                  "excess is what the second adds less its working set and less the first's heap "
                  "change (its batches in flight at the two peaks).\n",
                  "| system | cache | one | two | two / one | second adds | its working set "
                  "| first's heap change | excess / cache |", "|---|---|---|---|---|---|---|---|---|"]
        for r in twos:
            q = r["pss"]
            excess = q.get("second_excess_share")
            lines.append(f"| {r['system']} | {q['cache_mib']:,.0f} | {q['one_mib']:,.0f} | {q['two_mib']:,.0f} "
                         f"| {q['two_over_one']:.2f} | {q['second_added_mib']:,.0f} "
                         f"| {q.get('second_working_mib', float('nan')):,.0f} "
                         f"| {q.get('first_heap_change_mib', float('nan')):+,.0f} "
                         f"| {'–' if excess is None else f'{excess:.3f}'} |")
    return "\n".join(lines) + "\n"


def one_epoch(make_iter) -> tuple[float, float]:
    """(wall seconds, this process's CPU seconds) of one full epoch of ``make_iter()``."""
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in make_iter():
        pass
    return time.perf_counter() - t0, time.process_time() - c0


def write_split(cache) -> dict[str, float]:
    """headrace's fill: the share of rows ``put`` wrote itself because the machine had no idle
    core (the rest went to the writer thread; see ``headrace/_engine/cache_store.py``); nothing
    for a cache without such counters (MindSpore's)."""
    stores = getattr(cache, "_stores", [])
    behind = sum(getattr(s, "written_behind", 0) for s in stores)
    here = sum(getattr(s, "written_here", 0) for s in stores)
    return {"fill_written_here_share": here / (behind + here)} if behind + here else {}


def fill_pairs(make_uncached, make_filling, new_cache, drop_cache, pairs: int) -> dict:
    """A filling epoch against a steady uncached epoch, paired (see the module's docstring).

    ``make_uncached()`` / ``make_filling(cache)`` give one epoch's iterator; ``new_cache()`` a
    cache of a fresh session, ``drop_cache(cache)`` removes that session."""
    one_epoch(make_uncached)  # the uncached pipeline's own warm-up: what follows is steady
    recs = []
    for i in range(pairs):
        rec: dict[str, float] = {}
        for which in (("uncached", "fill") if i % 2 == 0 else ("fill", "uncached")):
            if which == "uncached":
                rec["uncached_s"], rec["uncached_cpu_s"] = one_epoch(make_uncached)
                continue
            cache = new_cache()
            try:
                rec["fill_s"], rec["fill_cpu_s"] = one_epoch(lambda c=cache: make_filling(c))
                rec.update(write_split(cache))
            finally:
                drop_cache(cache)
        rec["ratio"] = rec["fill_s"] / rec["uncached_s"]
        rec["cpu_ratio"] = rec["fill_cpu_s"] / rec["uncached_cpu_s"] if rec["uncached_cpu_s"] > 0 else float("nan")
        recs.append(rec)
    return {"fill_pairs": recs, "fill_over_uncached": statistics.median(r["ratio"] for r in recs),
            "fill_over_uncached_cpu": statistics.median(r["cpu_ratio"] for r in recs)}


def run_cache(a, ds, vision, path: str, time_epochs, check) -> dict:
    from . import w2

    chain = a.variant.split()[0]
    cached = "uncached" not in a.variant
    two = a.variant.endswith("x2")
    mean, std = [float(v) for v in w2.MEAN], [float(v) for v in w2.STD]
    session = new_session(a.module) if cached else None
    partner: list[subprocess.Popen] = []
    pss: dict[str, PssPeak] = {}
    fd, base_out = tempfile.mkstemp(prefix="wcache-base-", suffix=".json")
    os.close(fd)
    try:
        cache = make_cache(ds, a.module, session) if cached else None

        def iterator(c):
            return pipeline(ds, vision, path, chain, c, mean, std, w2.SIZE, w2.BATCH).create_tuple_iterator(
                output_numpy=True, num_epochs=1)

        def make_iter():
            return iterator(cache)

        timed = {"n": 0}

        def before():  # the second process joins when the timed epochs start (after the fill)
            timed["n"] += 1
            if timed["n"] == max(a.warmup, 1) + 1 and not partner:
                with PssPeak([os.getpid()]) as alone:  # as many cached epochs alone as the second reads
                    for _ in range(a.epochs):
                        one_epoch(make_iter)
                pss["one"] = alone
                spec = json.dumps({"module": a.module, "path": path, "chain": chain, "session": session,
                                   "epochs": a.epochs, "base_out": base_out})
                pids = [os.getpid()]
                pss["two"] = PssPeak(pids).__enter__()
                partner.append(subprocess.Popen([sys.executable, "-m", "benchmarks.wcache", spec]))
                pids.append(partner[0].pid)

        res = time_epochs(make_iter, lambda b: (len(b[0]), 0), a.epochs, max(a.warmup, 1), check,
                          before=before if two else None)
        for p in partner:
            p.wait(timeout=3600)
            if p.returncode:
                raise RuntimeError(f"the second process failed with exit code {p.returncode}")
        if "two" in pss:
            pss["two"].__exit__(None, None, None)
        res["first_epoch_s"] = res["warmup"][0]["seconds"]
        if cached:
            st = cache.get_stat()
            res["cache_stat"] = {"num_mem_cached": st.num_mem_cached, "num_disk_cached": st.num_disk_cached,
                                 "avg_cache_sz": st.avg_cache_sz}
            if a.module == "mindspore":
                res["server_pss_mib"] = server_pss_mib()
            if two and "two" in pss:
                rows = st.num_mem_cached + st.num_disk_cached
                try:
                    with open(base_out) as f:
                        base = json.load(f)
                except (OSError, ValueError):
                    base = None
                res["pss"] = pss_figures(pss["one"], pss["two"], partner[0].pid if partner else None,
                                         rows * st.avg_cache_sz, res.get("batch_bytes") or 0, base)
            elif not two:
                res.update(fill_pairs(lambda: iterator(None), iterator,
                                      lambda: make_cache(ds, a.module, new_session(a.module)),
                                      lambda c: destroy_session(a.module, c.session_id, last=False), max(a.epochs, 1)))
        return res
    finally:
        if "two" in pss:
            pss["two"].__exit__(None, None, None)
        for p in partner:
            if p.poll() is None:
                p.kill()
                p.wait()
        if session is not None:
            destroy_session(a.module, session)
        os.unlink(base_out)


def _partner(spec: dict) -> None:
    """The second reader of ``train cached x2`` (same code, same session)."""
    import importlib

    from . import w2

    ds = importlib.import_module(f"{spec['module']}.dataset")
    vision = importlib.import_module(f"{spec['module']}.dataset.vision")
    cache = make_cache(ds, spec["module"], spec["session"])
    mean, std = [float(v) for v in w2.MEAN], [float(v) for v in w2.STD]
    if spec.get("base_out"):  # its PSS before it reads: the interpreter and libraries
        with open(spec["base_out"], "w") as f:
            json.dump(pss_kinds(os.getpid()), f)
    for _ in range(spec["epochs"]):
        data = pipeline(ds, vision, spec["path"], spec["chain"], cache, mean, std, w2.SIZE, w2.BATCH)
        for _ in data.create_tuple_iterator(output_numpy=True, num_epochs=1):
            pass


if __name__ == "__main__":
    _partner(json.loads(sys.argv[1]))
    os._exit(0)
