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
the cache. Each run uses a fresh session (``cache_admin -g``: headrace's CLI, or MindSpore's
``dataset-cache`` with its server started on ``MS_PORT`` when none runs) and destroys it after.
For MindSpore the server's PSS is sampled after the timed epochs (``server_pss_mib``): its rows live
in that daemon, outside the runner's process tree.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

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


def destroy_session(module: str, session: int) -> None:
    cmd = ([_ms_admin(), "-d", str(session), "-p", str(MS_PORT)] if module == "mindspore"
           else [sys.executable, "-m", "headrace", "cache", "-d", str(session)])
    subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if module == "mindspore" and _STARTED:  # the server this runner started leaves with it
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


def run_cache(a, ds, vision, path: str, time_epochs, check) -> dict:
    from . import w2

    chain = a.variant.split()[0]
    cached = "uncached" not in a.variant
    mean, std = [float(v) for v in w2.MEAN], [float(v) for v in w2.STD]
    session = new_session(a.module) if cached else None
    partner: list[subprocess.Popen] = []
    try:
        cache = make_cache(ds, a.module, session) if cached else None

        def make_iter():
            return pipeline(ds, vision, path, chain, cache, mean, std, w2.SIZE, w2.BATCH).create_tuple_iterator(
                output_numpy=True, num_epochs=1)

        timed = {"n": 0}

        def before():  # the second process joins when the timed epochs start (after the fill)
            timed["n"] += 1
            if timed["n"] == max(a.warmup, 1) + 1 and not partner:
                spec = json.dumps({"module": a.module, "path": path, "chain": chain, "session": session,
                                   "epochs": a.epochs})
                partner.append(subprocess.Popen([sys.executable, "-m", "benchmarks.wcache", spec]))

        res = time_epochs(make_iter, lambda b: (len(b[0]), 0), a.epochs, max(a.warmup, 1), check,
                          before=before if a.variant.endswith("x2") else None)
        for p in partner:
            p.wait(timeout=3600)
            if p.returncode:
                raise RuntimeError(f"the second process failed with exit code {p.returncode}")
        res["first_epoch_s"] = res["warmup"][0]["seconds"]
        if cached:
            st = cache.get_stat()
            res["cache_stat"] = {"num_mem_cached": st.num_mem_cached, "num_disk_cached": st.num_disk_cached,
                                 "avg_cache_sz": st.avg_cache_sz}
            if a.module == "mindspore":
                res["server_pss_mib"] = server_pss_mib()
        return res
    finally:
        for p in partner:
            if p.poll() is None:
                p.kill()
                p.wait()
        if session is not None:
            destroy_session(a.module, session)


def _partner(spec: dict) -> None:
    """The second reader of ``train cached x2`` (same code, same session)."""
    import importlib

    from . import w2

    ds = importlib.import_module(f"{spec['module']}.dataset")
    vision = importlib.import_module(f"{spec['module']}.dataset.vision")
    cache = make_cache(ds, spec["module"], spec["session"])
    mean, std = [float(v) for v in w2.MEAN], [float(v) for v in w2.STD]
    for _ in range(spec["epochs"]):
        data = pipeline(ds, vision, spec["path"], spec["chain"], cache, mean, std, w2.SIZE, w2.BATCH)
        for _ in data.create_tuple_iterator(output_numpy=True, num_epochs=1):
            pass


if __name__ == "__main__":
    _partner(json.loads(sys.argv[1]))
    os._exit(0)
