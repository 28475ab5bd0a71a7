"""``headrace demo``: the standard image-training input pipeline on a small MindRecord dataset.

Builds (once) a folder of photo-like JPEGs as a MindRecord file, then reads it for a few epochs
the way a training job does (shuffle, decode, random-resized-crop, flip, normalize, HWC->CHW,
batch) with a progress bar, and prints throughput, time to first batch and where the time goes.
Needs nothing beyond ``pip install headrace``.

The job runs as its own profiler advises: unless ``--mode`` says otherwise, one profiled epoch
with map threads comes first, and the main job's map runs in worker processes when that epoch's
verdict finds the threads taking turns on Python's GIL (cause "gil"), with threads otherwise. On a
machine whose cores are busy with other work the verdict does not advise processes (paired
epochs of the main pipeline on 2 busy cores: threads 533-795 images/s median, 884-986 us of CPU
per image; processes 375-670 images/s, 1147-1196 us), so the demo then keeps its threads.
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from typing import Sequence

import cv2
import numpy as np
from tqdm import tqdm

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def synthetic_photo(index: int) -> bytes:
    """A deterministic 500x375 (or 375x500) JPEG with smooth shading, shapes, texture and noise."""
    rng = np.random.default_rng([7, index])
    h, w = (375, 500) if rng.random() < 0.75 else (500, 375)
    field = rng.normal(0, 1, (6, 8, 3)).astype(np.float32)
    img = cv2.resize(field, (w, h), interpolation=cv2.INTER_CUBIC)
    img = (img - img.min()) / (np.ptp(img) + 1e-6) * 200 + 25
    for _ in range(int(rng.integers(3, 9))):
        center = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        axes = (int(rng.integers(10, w // 3)), int(rng.integers(10, h // 3)))
        color = tuple(float(c) for c in rng.integers(0, 256, 3))
        cv2.ellipse(img, center, axes, float(rng.uniform(0, 180)), 0, 360, color, -1)
    img = cv2.GaussianBlur(img, (0, 0), 1.2)
    img += rng.normal(0, 6, img.shape).astype(np.float32)
    ok, buf = cv2.imencode(".jpg", np.clip(img, 0, 255).astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    return buf.tobytes()


def build_dataset(folder: str, images: int) -> str:
    """Writes ``images`` JPEGs (label = index % 10) as ``demo.mindrecord`` in ``folder`` unless present."""
    from headrace.mindrecord import FileWriter  # noqa: PLC0415 - only the demo needs the writer
    path = os.path.join(folder, f"demo_{images}.mindrecord")
    if os.path.exists(path) and os.path.exists(path + ".db"):
        return path
    writer = FileWriter(path, shard_num=1, overwrite=True)
    writer.add_schema({"image": {"type": "bytes"}, "label": {"type": "int32"}}, "headrace demo")
    chunk: list[dict] = []
    for i in tqdm(range(images), desc="writing MindRecord", unit="img"):
        chunk.append({"image": synthetic_photo(i), "label": i % 10})
        if len(chunk) == 256:
            writer.write_raw_data(chunk)
            chunk = []
    if chunk:
        writer.write_raw_data(chunk)
    writer.commit()
    return path


MODES = ("auto", "threads", "processes")


def make_pipeline(path: str, batch_size: int, workers: int, size: int, split: bool = False,
                  processes: bool = False):
    """The demo's pipeline; ``split``: one map per operation (for the per-op table: the profiler
    times a stage's ops one by one, but not the operations inside one map, which may also fuse);
    ``processes``: the maps run in worker processes (``python_multiprocessing``), else threads."""
    import headrace.dataset as ds  # noqa: PLC0415
    import headrace.dataset.vision as vision  # noqa: PLC0415
    ops = [vision.Decode(), vision.RandomResizedCrop(size), vision.RandomHorizontalFlip(),
           vision.Normalize(MEAN, STD), vision.HWC2CHW()]
    data = ds.MindDataset(path, shuffle=True, num_parallel_workers=workers)
    for group in ([op] for op in ops) if split else [ops]:
        data = data.map(group, input_columns="image", num_parallel_workers=workers, python_multiprocessing=processes)
    return data.batch(batch_size)


def probe(path: str, args: argparse.Namespace) -> tuple[str, dict]:
    """One profiled epoch of the main pipeline with map threads: (the main job's mode, that epoch's
    verdict). The mode is "processes" where the verdict finds the threads taking turns on the GIL
    (it then advises worker processes), "threads" otherwise."""
    import headrace.dataset as ds  # noqa: PLC0415
    pipeline = make_pipeline(path, args.batch_size, args.workers, args.size)
    with ds.profile() as prof:
        for _ in pipeline.create_tuple_iterator(num_epochs=1, output_numpy=True):
            pass
    doc = prof.to_dict()
    found = doc["runs"][doc["main_run"]]["verdict"]
    return ("processes" if found["cause"] == "gil" else "threads"), found


def op_table(path: str, args: argparse.Namespace, processes: bool) -> tuple[dict, float, str]:
    """One more epoch, profiled with every task's ops timed: (op label -> CPU seconds, wall
    seconds of the epoch, the printed table). CPU time, not wall time: with threads, an op's wall
    time also counts its waits for the GIL (HWC2CHW showed 19-23% of the time with 2 workers, 2%
    with 1)."""
    import headrace.dataset as ds  # noqa: PLC0415
    timed = make_pipeline(path, args.batch_size, args.workers, args.size, split=True, processes=processes)
    t0 = time.perf_counter()
    with ds.profile(op_sample_seconds=0) as prof:
        for _ in timed.create_tuple_iterator(num_epochs=1, output_numpy=True):
            pass
    wall = time.perf_counter() - t0
    doc = prof.to_dict()
    run = doc["runs"][doc["main_run"]]
    ops = [o for o in run["ops"] if o["cpu_seconds"] is not None]
    total_cpu = sum(o["cpu_seconds"] for o in ops) or 1.0
    total_wall = sum(o["wall_seconds"] for o in ops) or 1.0
    lines = [f"per-op time over one profiled epoch ({wall:.2f} s wall, {args.workers} worker(s)):",
             f"  {'op':<28} {'CPU s':>7} {'CPU %':>6} {'wall %':>6} {'us/image':>9}"]
    seconds = {}
    for o in sorted(ops, key=lambda o: -o["cpu_seconds"]):
        name = o["label"][4:-1] if o["label"].startswith("map[") else o["label"]
        seconds[name] = o["cpu_seconds"]
        lines.append(f"  {name:<28} {o['cpu_seconds']:7.3f} {100 * o['cpu_seconds'] / total_cpu:6.1f} "
                     f"{100 * o['wall_seconds'] / total_wall:6.1f} {1e6 * o['cpu_seconds'] / args.images:9.0f}")
    return seconds, wall, "\n".join(lines)


def run(args: argparse.Namespace) -> dict:
    import headrace.dataset as ds  # noqa: PLC0415
    cv2.setNumThreads(1)
    folder = args.dir or os.path.join(tempfile.gettempdir(), "headrace-demo")
    os.makedirs(folder, exist_ok=True)
    path = build_dataset(folder, args.images)
    probed = None
    mode = args.mode
    if mode == "auto":
        mode, probed = probe(path, args)
        print(f"probe epoch with map threads: {probed['text']}")
        print("setting: map in worker processes, as this verdict advises" if mode == "processes" else
              "setting: map threads (this verdict does not advise worker processes)")
    pipeline = make_pipeline(path, args.batch_size, args.workers, args.size, processes=mode == "processes")
    steps = pipeline.get_dataset_size()
    print(f"dataset: {path} ({args.images} images), batch {args.batch_size}, {steps} steps/epoch, "
          f"{args.workers} worker(s), map {mode}")
    rates, first_batch = [], None
    shape = None
    with ds.profile() as prof:
        it = pipeline.create_tuple_iterator(num_epochs=args.epochs, output_numpy=True)
        for epoch in range(args.epochs):
            t0 = time.perf_counter()
            seen = 0
            for images, labels in tqdm(it, total=steps, desc=f"epoch {epoch + 1}/{args.epochs}", unit="batch"):
                if first_batch is None:
                    first_batch = time.perf_counter() - t0
                    shape = images.shape
                seen += len(labels)
            rates.append(seen / (time.perf_counter() - t0))
        it.stop()
    doc = prof.to_dict()
    found = doc["runs"][doc["main_run"]]["verdict"]
    totals, wall, table = op_table(path, args, processes=mode == "processes")
    result = {"images_per_s": statistics.median(rates), "epoch_rates": rates, "first_batch_s": first_batch,
              "batch_shape": shape, "op_seconds": totals, "timed_epoch_s": wall, "mode": mode,
              "probe_verdict": probed, "verdict": found}
    print(f"throughput: {result['images_per_s']:.0f} images/s (median of {len(rates)} epochs: "
          + ", ".join(f"{r:.0f}" for r in rates) + f"); time to first batch: {first_batch * 1000:.0f} ms; "
          f"batch shape {tuple(shape)} float32")
    print(f"verdict on the main job (map {mode}): {found['text']}")
    print(table)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="headrace demo", description=__doc__.splitlines()[0])
    p.add_argument("--dir", help="where to keep the demo dataset (default: a folder in the temp dir)")
    p.add_argument("--images", type=int, default=1024, help="images in the dataset (default 1024)")
    p.add_argument("--epochs", type=int, default=3, help="epochs to read (default 3)")
    p.add_argument("--batch-size", type=int, default=64, help="batch size (default 64)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="parallel workers (default: CPUs)")
    p.add_argument("--size", type=int, default=224, help="output image size (default 224)")
    p.add_argument("--mode", choices=MODES, default="auto",
                   help="where the maps run: threads, worker processes, or auto (default): as the verdict on "
                        "one profiled epoch with threads advises")
    args = p.parse_args(argv)
    for name in ("images", "epochs", "batch_size", "workers", "size"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be a positive integer, but got {getattr(args, name)}")
    run(args)
    return 0
