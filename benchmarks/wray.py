"""The "ray" workload (issue 40 item 5): W2's images decoded and augmented on Ray, fed to a consumer.

Three rows do the same job (W2's JPEGs -> Decode -> RandomResizedCrop 224 -> flip -> normalize ->
CHW, batches of 128 at the consumer), each on ``--workers`` CPUs:

* ``headrace.ray``: W2 as MindRecord, ``read_mindrecord`` (seeded shuffle, ``ROWS_PER_TASK`` rows a
  read task) + ``map_ops`` (headrace's ops, ``MAP_BATCH`` rows a call) on a local Ray of
  ``num_cpus=workers``; the consumer is ``iter_batches(128)``;
* ``Ray Data``: Ray Data's own path: ``read_binary_files`` over the JPEG files (Ray's file
  shuffle) + ``map_batches`` running W2's OpenCV chain (``w2.chain_cv2``, the torch runner's);
* ``headrace``: headrace alone in one process: ``MindDataset`` + ``map`` + ``batch`` with
  ``num_parallel_workers=workers``;
* ``Ray free ops``: Ray's floor for the job: headrace.ray's read and data flow with a
  ``map_batches`` in place of ``map_ops`` that returns the chain's output (zeros of its shape and
  dtype, made for free) without decoding: what moving the rows and the 602 KB float32 images
  through Ray costs alone on these CPUs.

``read``: issue 40's read goals, on W2's MindRecord payload (images and labels), in one row:
``read_mindrecord``'s epochs from the second on (one dataset read again: MB/s of row payload, the
consumer taking Arrow batches, as the read tasks make them) against the same read tasks called one after another in the runner's process, and against Ray's
Parquet reader (one dataset, from its second epoch) on the same rows written as Parquet files of
``ROWS_PER_TASK`` rows; and, on the warm Ray, the time from a new ``read_mindrecord`` call to its
first batch (median of 3); and Ray's floor: blocks of the same rows and bytes that cost nothing to
make, read the same way (what Ray itself costs per block). The row's epochs are ``read_mindrecord``'s.

Each row runs in its own interpreter (``ray.init`` is not timed; an epoch builds the dataset and
drains it). ``python -m benchmarks.wray --data DIR --items N`` runs the four rows as the suite
does and prints images/s per row and the goals' ratios (headrace.ray over Ray Data, >= 1.5; over
headrace, >= 0.8: issue 40).
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

from . import harness, w2
from .config import Config

ROWS_PER_TASK = 64
MAP_BATCH = 32
SEED = 1
FREE_OPS = "Ray free ops"
VARIANTS = ("headrace.ray", "Ray Data", "headrace", FREE_OPS, "read")
CONFIGS = [Config("ray", "ray", v, (2,), note=n) for v, n in (
    ("headrace.ray", "read_mindrecord + map_ops on a local Ray of num_cpus=w"),
    ("Ray Data", "read_binary_files + map_batches(W2's OpenCV chain), num_cpus=w"),
    ("headrace", "MindDataset + map + batch in one process, num_parallel_workers=w"),
    (FREE_OPS, "headrace.ray's data flow with ops that cost nothing: Ray's own floor for the job"),
    ("read", "read goals: read_mindrecord 2nd epoch vs in-process tasks vs read_parquet; rate = rows/s"))]


def ops(vision) -> list:
    """W2's chain in MindSpore's API (``vision`` is ``headrace.dataset.vision``)."""
    mean, std = [float(v) for v in w2.MEAN], [float(v) for v in w2.STD]
    return [vision.Decode(), vision.RandomResizedCrop(w2.SIZE), vision.RandomHorizontalFlip(),
            vision.Normalize(mean=mean, std=std), vision.HWC2CHW()]


def mindrecord_path(a) -> str:
    """W2 as MindRecord, written by headrace's FileWriter once (the suite's file for W2)."""
    from headrace.mindrecord import FileWriter

    from .peers.msapi import mindrecord_file
    files = w2.manifest(w2.w2_dir(a.data, a.items or w2.COUNT))
    return mindrecord_file(argparse.Namespace(data=a.data, items=a.items, module="headrace"), FileWriter, files)


def _local_files_only() -> None:
    """Ray 2.60 lists files (``read_parquet``, ``read_binary_files``) in threads, of the driver or
    of a worker, each importing fsspec's HTTP filesystem to check for it; where that import fails
    (fsspec without aiohttp, as here), a thread that races another gets ImportError instead of the
    ModuleNotFoundError Ray catches, and the read fails. Marking the module absent makes every such
    import in this process a ModuleNotFoundError; where a Ray task lists the files, a single path (a
    folder rather than its files) keeps the check in one thread."""
    try:
        import fsspec.implementations.http  # noqa: F401 - only whether it imports
    except ImportError:
        sys.modules["fsspec.implementations.http"] = None   # type: ignore[assignment]


def start_ray(workers: int):
    import ray
    _local_files_only()
    folder = tempfile.mkdtemp(prefix="hrb-ray-", dir="/tmp")
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, configure_logging=False,
             _temp_dir=folder)
    ray.data.DataContext.get_current().enable_progress_bars = False
    return ray, folder


def cv2_rows(batch: dict) -> dict:
    """Ray Data's row: W2's OpenCV chain on each file's bytes, the label from its folder."""
    images, labels = [], []
    for data, path in zip(batch["bytes"], batch["path"]):
        images.append(w2.chain_cv2(data, random.Random(path)))
        labels.append(int(os.path.basename(os.path.dirname(path))[1:]))
    return {"image": np.stack(images), "label": np.asarray(labels, np.int32)}


def free_ops(batch: dict) -> dict:
    """The chain's output for ``batch`` made for free: zero images of its shape and dtype, the labels."""
    n = len(batch["label"])
    return {"image": np.zeros((n, 3, w2.SIZE, w2.SIZE), np.float32), "label": np.asarray(batch["label"], np.int32)}


def _count(batch) -> tuple[int, int]:
    return len(batch["label"]), 0


def _check(batch) -> None:
    w2.check_batch(batch["image"], batch["label"])


def run_pipeline(a) -> dict:
    """The rows headrace.ray, Ray Data and headrace."""
    import headrace.dataset as ds
    from headrace.dataset import vision
    if a.variant == "headrace":
        path = mindrecord_path(a)

        def make_local():
            data = ds.MindDataset(path, ["image", "label"], shuffle=True, num_parallel_workers=a.workers)
            data = data.map(ops(vision), "image", num_parallel_workers=a.workers).batch(w2.BATCH)
            return data.create_dict_iterator(output_numpy=True, num_epochs=1)
        return harness.time_epochs(make_local, _count, a.epochs, a.warmup, _check)
    ray, folder = start_ray(a.workers)
    try:
        if a.variant == "headrace.ray":
            from headrace.ray import map_ops, read_mindrecord
            path = mindrecord_path(a)

            def make():
                data = read_mindrecord(path, ["image", "label"], seed=SEED, rows_per_task=ROWS_PER_TASK)
                data = map_ops(data, ops(vision), "image", batch_size=MAP_BATCH)
                return data.iter_batches(batch_size=w2.BATCH, batch_format="numpy")
        elif a.variant == FREE_OPS:
            from headrace.ray import read_mindrecord
            path = mindrecord_path(a)

            def make():
                data = read_mindrecord(path, ["image", "label"], seed=SEED, rows_per_task=ROWS_PER_TASK)
                data = data.map_batches(free_ops, batch_size=MAP_BATCH, batch_format="numpy")
                return data.iter_batches(batch_size=w2.BATCH, batch_format="numpy")
        else:
            folder_of_jpegs = os.path.join(w2.w2_dir(a.data, a.items or w2.COUNT), "jpeg")   # (one path: see _local_files_only)

            def make():
                data = ray.data.read_binary_files(folder_of_jpegs, include_paths=True, shuffle="files")
                data = data.map_batches(cv2_rows, batch_size=MAP_BATCH, batch_format="numpy")
                return data.iter_batches(batch_size=w2.BATCH, batch_format="numpy")
        return harness.time_epochs(make, _count, a.epochs, a.warmup, _check)
    finally:
        ray.shutdown()
        shutil.rmtree(folder, ignore_errors=True)


def _drain(tables) -> tuple[int, int, float | None]:
    """(rows, payload bytes: images and labels, seconds to the first) of an iterator of Arrow tables."""
    import pyarrow.compute as pc
    t0 = time.perf_counter()
    rows = nbytes = 0
    first = None
    for t in tables:
        if first is None:
            first = time.perf_counter() - t0
        rows += t.num_rows
        nbytes += int(pc.sum(pc.binary_length(t["image"])).as_py() or 0) + 4 * t.num_rows
    return rows, nbytes, first


def _rate(fn, epochs: int) -> dict:
    """MB/s of ``fn() -> (rows, bytes, first)`` over ``epochs`` calls after a first untimed one (the
    second epoch on: files in the page cache, Ray's workers started)."""
    fn()
    out = []
    for _ in range(epochs):
        t0 = time.perf_counter()
        rows, nbytes, _ = fn()
        out.append({"seconds": time.perf_counter() - t0, "items": rows, "bytes": nbytes, "first_batch_s": None})
    return {"epochs": out, "mb_s": statistics.median(e["bytes"] / 1e6 / e["seconds"] for e in out)}


def write_parquet(path: str, folder: str) -> list[str]:
    """The MindRecord's rows (image bytes, label) as Parquet files of ROWS_PER_TASK rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from headrace.mindrecord import FileReader
    os.makedirs(folder, exist_ok=True)
    reader = FileReader(path, columns=["image", "label"])
    rows = list(reader.get_next())
    reader.close()
    out = []
    for i in range(0, len(rows), ROWS_PER_TASK):
        part = rows[i:i + ROWS_PER_TASK]
        table = pa.table({"image": pa.array([r["image"] for r in part], pa.binary()),
                          "label": pa.array([int(r["label"]) for r in part], pa.int32())})
        out.append(os.path.join(folder, f"part-{i // ROWS_PER_TASK:05d}.parquet"))
        pq.write_table(table, out[-1])
    return out


def _free_block(sizes: np.ndarray) -> list:
    """A block of ``len(sizes)`` rows whose images are ``sizes`` zero bytes each (a label each), made
    in one allocation: what a read task returns when reading costs nothing."""
    import pyarrow as pa
    offsets = np.zeros(len(sizes) + 1, dtype=np.int32)
    np.cumsum(sizes, out=offsets[1:])
    image = pa.Array.from_buffers(pa.binary(), len(sizes), [None, pa.py_buffer(offsets),
                                                             pa.py_buffer(np.zeros(int(offsets[-1]), np.uint8))])
    return [pa.table({"image": image, "label": pa.array(np.zeros(len(sizes), np.int32))})]


def free_blocks(ray, tables: list):
    """Ray's floor for a read: a dataset of blocks shaped as ``tables`` (the read tasks' blocks: same
    rows and image sizes) that cost nothing to make, so that reading it measures what Ray itself
    costs per block (scheduling, object store, the consumer's batches)."""
    import pyarrow.compute as pc
    from ray.data.block import BlockMetadata
    from ray.data.datasource import Datasource, ReadTask
    sizes = [pc.binary_length(t["image"]).to_numpy().astype(np.int64) for t in tables]

    class FreeBlocks(Datasource):
        def estimate_inmemory_data_size(self):
            return int(sum(int(s.sum()) for s in sizes))

        def get_read_tasks(self, parallelism, per_task_row_limit=None, data_context=None):
            return [ReadTask(functools.partial(_free_block, s), BlockMetadata(
                num_rows=len(s), size_bytes=int(s.sum()), input_files=None, exec_stats=None)) for s in sizes]

    out = ray.data.read_datasource(FreeBlocks(), override_num_blocks=len(sizes))
    out.context.execution_options.preserve_order = True
    return out


def run_read(a) -> dict:
    """Issue 40's read figures (see the module notes)."""
    import headrace.dataset as ds
    from headrace.ray import MindRecordDatasource, read_mindrecord
    path = mindrecord_path(a)
    parquet = write_parquet(path, os.path.join(os.path.dirname(path), f"parquet-{ROWS_PER_TASK}"))
    ray, folder = start_ray(a.workers)
    try:
        kept = read_mindrecord(path, ["image", "label"], seed=SEED, rows_per_task=ROWS_PER_TASK)
        from_parquet = ray.data.read_parquet(os.path.dirname(parquet[0]))   # (the folder: see _local_files_only)

        def ray_epoch(data=kept):   # epoch k of one dataset (Ray's execution count: pass k)
            return _drain(data.iter_batches(batch_size=w2.BATCH, batch_format="pyarrow"))

        def in_process():   # the read tasks read_mindrecord makes, called here one after another
            source = MindRecordDatasource(ds.MindDataset(path, ["image", "label"]), SEED, ROWS_PER_TASK)
            return _drain((t for task in source.get_read_tasks(1) for t in task()))

        def first_batch():   # a new dataset on the warm Ray: from read_mindrecord() to its first batch
            t0 = time.perf_counter()
            data = read_mindrecord(path, ["image", "label"], seed=SEED, rows_per_task=ROWS_PER_TASK)
            made = time.perf_counter() - t0
            first = _drain(data.iter_batches(batch_size=w2.BATCH, batch_format="pyarrow"))[2]   # (drained)
            return made + (first or 0.0)

        source = MindRecordDatasource(ds.MindDataset(path, ["image", "label"]), SEED, ROWS_PER_TASK)
        floor = free_blocks(ray, [t for task in source.get_read_tasks(1) for t in task()])
        res = {"read_mindrecord": _rate(ray_epoch, a.epochs), "in_process": _rate(in_process, a.epochs),
               "read_parquet": _rate(lambda: ray_epoch(from_parquet), a.epochs),
               "ray_floor": _rate(lambda: ray_epoch(floor), a.epochs)}
        firsts = [first_batch() for _ in range(3)]
    finally:
        ray.shutdown()
        shutil.rmtree(folder, ignore_errors=True)
    mine = res["read_mindrecord"]
    return {"epochs": mine["epochs"], "warmup": [], "read": {
        "read_mindrecord_mb_s": mine["mb_s"], "in_process_mb_s": res["in_process"]["mb_s"],
        "read_parquet_mb_s": res["read_parquet"]["mb_s"],
        "over_in_process": mine["mb_s"] / res["in_process"]["mb_s"],
        "over_parquet": mine["mb_s"] / res["read_parquet"]["mb_s"],
        "ray_floor_mb_s": res["ray_floor"]["mb_s"], "floor_over_in_process": res["ray_floor"]["mb_s"] / res["in_process"]["mb_s"],
        "first_batch_warm_s": statistics.median(firsts)}}


def run(a) -> dict:
    if a.variant not in VARIANTS:
        raise ValueError(f"unknown ray variant {a.variant!r}; pick from {VARIANTS}")
    res = run_read(a) if a.variant == "read" else run_pipeline(a)
    import ray
    res["versions"] = {"numpy": np.__version__, "ray": ray.__version__}
    return res


# --------------------------------------------------------------------------- the report

def ratios(rates: dict[str, float]) -> dict[str, float]:
    """The goals' ratios from the rows' median images/s."""
    mine = rates["headrace.ray"]
    return {"headrace.ray / Ray Data": mine / rates["Ray Data"], "headrace.ray / headrace": mine / rates["headrace"]}


def report(results: list[dict]) -> str:
    """images/s per row, the ratios, the read figures; a row that failed is named with its error."""
    lines, rates = [], {}
    for r in results:
        m = r.get("measured", {})
        load = f"load1 {m.get('load1_start', 0):.2f}->{m.get('load1_end', 0):.2f}"
        if r.get("status") != "ok":
            lines.append(f"{r['variant']:>14}: {r.get('status')}: {(r.get('error') or '')[:300]}")
            continue
        s = harness.summarize(r, "images/s")
        rates[r["variant"]] = s["median"]
        first = f"1st batch {s['first_batch_s']:.2f} s; " if s["first_batch_s"] is not None else ""
        lines.append(f"{r['variant']:>14}: {s['median']:8.1f} images/s (min {s['min']:.1f}, max {s['max']:.1f}; "
                     f"{first}{load})")
        if "read" in r:
            rd = r["read"]
            lines.append(f"{'':>16}read_mindrecord 2nd epoch {rd['read_mindrecord_mb_s']:.0f} MB/s, same tasks "
                         f"in-process {rd['in_process_mb_s']:.0f} MB/s ({rd['over_in_process']:.2f}x; goal >= 0.6), "
                         f"read_parquet {rd['read_parquet_mb_s']:.0f} MB/s ({rd['over_parquet']:.2f}x; goal >= 2); "
                         f"first batch on a warm Ray {rd['first_batch_warm_s']:.2f} s (goal <= 1)")
            if "ray_floor_mb_s" in rd:
                lines.append(f"{'':>16}Ray alone (blocks of the same rows and bytes, made for free) "
                             f"{rd['ray_floor_mb_s']:.0f} MB/s ({rd['floor_over_in_process']:.2f}x of in-process)")
    if {"headrace.ray", "Ray Data", "headrace"} <= set(rates):
        q = ratios(rates)
        lines.append(f"headrace.ray / Ray Data {q['headrace.ray / Ray Data']:.2f}x (goal >= 1.5); "
                     f"headrace.ray / headrace {q['headrace.ray / headrace']:.2f}x (goal >= 0.8)")
    if {FREE_OPS, "headrace"} <= set(rates):
        lines.append(f"Ray's floor for the job ({FREE_OPS}) / headrace {rates[FREE_OPS] / rates['headrace']:.2f}x"
                     + (f"; headrace.ray / that floor {rates['headrace.ray'] / rates[FREE_OPS]:.2f}x"
                        if "headrace.ray" in rates else ""))
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.wray", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="data root holding W2 (python -m benchmarks makes it)")
    p.add_argument("--items", type=int, default=w2.COUNT, help="W2's image count")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--timeout", type=float, default=1800)
    p.add_argument("--variants", default=",".join(VARIANTS), help=f"comma list of {', '.join(VARIANTS)}")
    p.add_argument("--json", help="also write the results here")
    a = p.parse_args(argv)
    if not w2.is_generated(a.data, a.items) and not w2.is_generated(a.data, a.items, skimage=False):
        p.error(f"no W2 of {a.items} images under {a.data} (python -m benchmarks -w w2 --w2-images {a.items} makes it)")
    results = []
    harness.adopt_orphans()  # the runners' CPU includes what outlives them (see harness.launch)
    for v in a.variants.split(","):
        if v not in VARIANTS:
            p.error(f"unknown variant {v!r}; pick from {VARIANTS}")
        args = ["--workload", "ray", "--variant", v, "--workers", str(a.workers), "--epochs", str(a.epochs),
                "--warmup", str(a.warmup), "--items", str(a.items), "--data", os.path.abspath(a.data)]
        res = harness.launch(harness.Launch(sys.executable, "benchmarks.wray", args, a.timeout))
        res["variant"] = v
        results.append(res)
    print(report(results))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0 if all(r.get("status") == "ok" for r in results) else 1


if __name__ == "__main__":
    if "--workload" in sys.argv:
        harness.runner_main(run, __doc__)
    else:
        sys.exit(main())
