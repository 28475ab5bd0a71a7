"""GPU decode (issue 43): the device check of the GPU stage, all goals in one run.

Measures, on the backend ``HEADRACE_GPU_BACKEND`` selects (``--fake``: the NumPy backend, for
machines without a GPU; this is how the script is tested):

* ``raw_decode``: the backend decoding ``--images`` JPEGs (ImageNet-size by default: 500 x 375 and
  its neighbours) in batches of ``--batch``: images per second;
* ``w2_chain``: W2's chain (RandomCropDecodeResize(224), RandomHorizontalFlip, Normalize, HWC2CHW)
  with the ops on the device, at most 4 CPU workers, batches of ``--batch``: images per second,
  the share of the loop's time it waited for data, the backend's name and its fallback share;
* ``memory``: the GPU memory the decode stage allocated at batch ``--batch`` (CUDA backends; the
  fake backend holds host memory and reports none);
* ``psnr``: the backend's decode against the CPU decoder (median and minimum dB over the JPEGs;
  ``inf`` where equal);
* ``identical``: whether two runs of the chain under one seed give the same batches.

A check fails (exit status 1) when the runs differ or the fallback share of all-baseline JPEGs is
not 0. The result is printed as JSON (and written to ``--out``).

    python -m benchmarks.gpu_decode              # a GPU backend, 4,096 JPEGs
    python -m benchmarks.gpu_decode --fake --images 64 --batch 16 --size 96
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from typing import Any

import cv2
import numpy as np

SIZES = [(375, 500), (500, 375), (333, 500), (500, 333), (375, 499), (400, 500)]
MEAN, STD = [123.675, 116.28, 103.53], [58.395, 57.12, 57.375]


def make_jpegs(count: int, size: int | None = None, seed: int = 0) -> list[bytes]:
    """``count`` baseline JPEGs (quality 90) of smooth synthetic photos: ImageNet-size, or about
    ``size`` pixels on the longer side."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        h, w = SIZES[i % len(SIZES)]
        if size is not None:
            h, w = max(8, h * size // 500), max(8, w * size // 500)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        base = np.stack([xx / w * 255, yy / h * 255, (xx + yy) / (w + h) * 255], -1)
        base += 30 * np.sin(xx[..., None] / rng.uniform(4, 30)) + rng.normal(0, 5, (h, w, 3))
        img = np.clip(base, 0, 255).astype(np.uint8)
        out.append(cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes())
    return out


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """Peak signal-to-noise ratio of two uint8 images in dB (``inf`` when equal)."""
    if a.shape != b.shape:
        raise ValueError(f"psnr: shapes differ: {a.shape} and {b.shape}")
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return float("inf") if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)


def raw_decode(backend: Any, jpegs: list[bytes], batch: int) -> dict:
    t0 = time.perf_counter()
    n = 0
    for i in range(0, len(jpegs), batch):
        imgs = backend.decode(jpegs[i:i + batch], "Decode")
        n += sum(img is not None for img in imgs)
    dt = time.perf_counter() - t0
    return {"images": len(jpegs), "decoded": n, "seconds": round(dt, 3),
            "images_per_second": round(len(jpegs) / dt, 1) if dt > 0 else None}


def compare_decode(backend: Any, jpegs: list[bytes], count: int = 64) -> dict:
    from headrace._image import decode as dec
    values = []
    for buf in jpegs[:count]:
        (img,) = backend.decode([buf], "Decode")
        if img is None:
            continue
        values.append(psnr(np.asarray(backend.to_host(img)), dec.decode_rgb(buf)))
    finite = sorted(v for v in values)
    return {"images": len(values), "median_db": finite[len(finite) // 2] if finite else None,
            "min_db": finite[0] if finite else None}


def chain(jpegs: list[bytes], workers: int, batch: int, processes: bool, out_size: int = 224):
    import headrace.dataset as ds
    import headrace.dataset.vision as vision
    arrays = [np.frombuffer(b, np.uint8) for b in jpegs]
    data = ds.GeneratorDataset(lambda: ((a,) for a in arrays), ["image"], shuffle=False)
    ops = [vision.RandomCropDecodeResize(out_size).device("GPU"), vision.RandomHorizontalFlip().device("GPU"),
           vision.Normalize(MEAN, STD).device("GPU"), vision.HWC2CHW()]
    data = data.map(ops, input_columns="image", num_parallel_workers=workers, python_multiprocessing=processes)
    return data.batch(batch, drop_remainder=False)


def run_chain(jpegs: list[bytes], workers: int, batch: int, processes: bool, out_size: int) -> dict:
    """One pass of the chain under the profiler: rate, the loop's wait share, fallbacks, digest."""
    import headrace.dataset as ds
    digest = hashlib.sha256()
    rows = 0
    with ds.profile() as p:
        t0 = time.perf_counter()
        it = chain(jpegs, workers, batch, processes, out_size).create_tuple_iterator(output_numpy=True)
        for (img,) in it:
            rows += img.shape[0]
            digest.update(np.ascontiguousarray(img).tobytes())
        dt = time.perf_counter() - t0
    (run,) = p.to_dict()["runs"]
    (dev,) = run["devices"]
    wait = run["consumer"]["wait_seconds"]
    return {"images": rows, "workers": workers, "processes": processes, "seconds": round(dt, 3),
            "images_per_second": round(rows / dt, 1) if dt > 0 else None,
            "loop_wait_pct": round(100 * wait / dt, 1) if dt > 0 else None,
            "backend": dev["backend"], "fallback_pct": dev["fallback_pct"], "fallbacks": dev["fallbacks"],
            "sha256": digest.hexdigest()}


def memory(backend: Any, jpegs: list[bytes], batch: int) -> dict:
    """Device memory one decode of ``batch`` JPEGs allocates (CUDA backends expose
    ``peak_memory(fn)``; others report none)."""
    peak = getattr(backend, "peak_memory", None)
    if peak is None:
        return {"batch": batch, "bytes": None, "note": f"the {backend.name} backend holds no device memory"}
    return {"batch": batch, "bytes": int(peak(lambda: backend.decode(jpegs[:batch], "Decode")))}


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--fake", action="store_true", help="run on the fake (NumPy) backend: no GPU needed")
    p.add_argument("--images", type=int, default=4096)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--workers", type=int, default=4, help="CPU workers of the chain (at most 4)")
    p.add_argument("--size", type=int, default=None, help="longer side of the JPEGs (default: ImageNet-size)")
    p.add_argument("--out-size", type=int, default=224, help="the chain's crop size")
    p.add_argument("--processes", action="store_true", help="the chain's workers are processes")
    p.add_argument("--out", default=None, help="also write the JSON result here")
    a = p.parse_args(argv)
    if a.images < 1 or a.batch < 1:
        p.error("--images and --batch must be at least 1")
    if not 1 <= a.workers <= 4:
        p.error(f"--workers must be in [1, 4], but got {a.workers}")
    if a.fake:
        os.environ["HEADRACE_GPU_BACKEND"] = "fake"
    from headrace._image import device
    backend = device.select_backend(["gpu_decode"])
    t0 = time.perf_counter()
    jpegs = make_jpegs(a.images, a.size)
    made = time.perf_counter() - t0
    import headrace.dataset as ds
    ds.config.set_seed(43)
    first = run_chain(jpegs, a.workers, a.batch, a.processes, a.out_size)
    ds.config.set_seed(43)
    second = run_chain(jpegs, a.workers, a.batch, a.processes, a.out_size)
    result = {
        "backend": backend.name,
        "jpegs": {"count": a.images, "seconds_to_make": round(made, 2)},
        "raw_decode": raw_decode(backend, jpegs, a.batch),
        "w2_chain": first,
        "memory": memory(backend, jpegs, a.batch),
        "psnr": compare_decode(backend, jpegs),
        "identical": first["sha256"] == second["sha256"],
    }
    text = json.dumps(result, indent=1, default=str)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    if not result["identical"] or first["fallback_pct"] != 0:
        print("gpu_decode: FAILED (runs differ or baseline JPEGs fell back to the CPU)", file=sys.stderr)
        raise SystemExit(1)
    return result


if __name__ == "__main__":
    main()
