"""Feeding a GPU (issue 15): W2's image chain into CUDA tensors, headrace.torch.Loader against
torch's DataLoader (``pin_memory=True``, ``.to("cuda", non_blocking=True)``), same workers.

Three loops per system: ``host`` (NumPy batches or torch's CPU tensors, no device and no pinning:
what the pipeline itself delivers), ``feed`` (the loop only sums each batch on the GPU: the rate
the pipeline delivers onto the device) and ``train`` (a small convolutional network's forward, backward and SGD
step in bf16 on each batch: images/s, and the share of the loop's time spent waiting for data).
Each row also gives the main process's CPU time per image (all its threads; worker processes
not counted), which is where a serial bottleneck shows.
Both systems decode, crop, flip and normalise the same JPEGs (W2's generator) with OpenCV; headrace
through ``ImageFolderDataset`` + ``vision`` ops (the map on threads, or in processes with
``python_multiprocessing=True``), torch with W2's hand-written chain in its worker processes. Needs a CUDA device; ``--device cpu`` runs the same code on the CPU (smoke test).

    python -m benchmarks.gpu_feed --workers 4,8 --images 2048
"""
from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time

import numpy as np

from . import w2
from .harness import pin_opencv
from .peers.torchdl import W2Files


def photos() -> tuple[list, str]:
    """W2's scikit-image photos, or (without scikit-image or its data) smooth synthetic ones."""
    try:
        return w2.skimage_photos(), "scikit-image photos"
    except Exception as e:  # noqa: BLE001 - any failure to get the photos falls back
        rng = np.random.default_rng(0)
        out = []
        for h, w in [(512, 512), (300, 451), (400, 600), (427, 640), (500, 741), (872, 1000), (600, 600), (512, 768)]:
            yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
            base = np.stack([xx / w * 255, yy / h * 255, (xx + yy) / (w + h) * 255], -1)
            base += 40 * np.sin(xx[..., None] / rng.uniform(5, 40)) + rng.normal(0, 6, (h, w, 3))
            out.append(np.clip(base, 0, 255).astype(np.uint8))
        return out, f"synthetic photos ({type(e).__name__}: {e})"


def network(torch):
    nn = torch.nn
    layers, ch = [], 3
    for out in (32, 64, 128, 256):
        layers += [nn.Conv2d(ch, out, 3, stride=2, padding=1), nn.BatchNorm2d(out), nn.ReLU(inplace=True)]
        ch = out
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(ch, 8))


def headrace_loader(d, workers, device, processes=False):
    import headrace.dataset as ds
    import headrace.dataset.vision as vision
    from headrace.torch import Loader
    mean, std = [float(v) for v in w2.MEAN], [float(v) for v in w2.STD]
    data = ds.ImageFolderDataset(os.path.join(d, "jpeg"), shuffle=True, num_parallel_workers=workers)
    data = data.map([vision.Decode(), vision.RandomResizedCrop(w2.SIZE), vision.RandomHorizontalFlip(),
                     vision.Normalize(mean=mean, std=std), vision.HWC2CHW()],
                    input_columns=["image"], num_parallel_workers=workers, python_multiprocessing=processes)
    on_gpu = device is not None and device.startswith("cuda")
    loader = Loader(data.batch(w2.BATCH), device=device, pin_memory=on_gpu)
    return loader, loader.close


def torch_loader(d, workers, device):
    import torch
    files = w2.manifest(d)
    dl = torch.utils.data.DataLoader(W2Files(files, w2.chain_cv2), batch_size=w2.BATCH, shuffle=True, num_workers=workers,
                                     pin_memory=device is not None and device.startswith("cuda"),
                                     worker_init_fn=lambda _: pin_opencv(), persistent_workers=True)
    if device is None:
        return dl, lambda: None

    class OnDevice:
        def __iter__(self):
            for x, y in dl:
                yield x.to(device, non_blocking=True), y.to(device, non_blocking=True)
    return OnDevice(), lambda: None


def main_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run_loop(torch, loader, device, model, epochs):
    """Epoch records: (images, seconds, seconds waiting for a batch after the first, main-process
    CPU seconds). ``device`` None: the loop only counts the images."""
    sync = torch.cuda.synchronize if device is not None and device.startswith("cuda") else (lambda: None)
    opt = torch.optim.SGD(model.parameters(), lr=0.01) if model is not None else None
    out = []
    for _ in range(epochs):
        images, waits = 0, []
        acc = None if device is None else torch.zeros((), device=device)
        c0, t0 = main_cpu(), time.perf_counter()
        it = iter(loader)
        while True:
            a = time.perf_counter()
            try:
                x, y = next(it)
            except StopIteration:
                break
            waits.append(time.perf_counter() - a)
            images += x.shape[0]
            if model is not None:
                with torch.autocast(device.split(":")[0], dtype=torch.bfloat16):
                    loss = torch.nn.functional.cross_entropy(model(x), y.long())
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
            elif acc is not None:  # the feed loop (the host loop only counts)
                acc += x.sum()
        sync()
        seconds = time.perf_counter() - t0
        out.append((images, seconds, sum(waits[1:]), main_cpu() - c0))
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workers", default="4,8")
    p.add_argument("--images", type=int, default=2048)
    p.add_argument("--epochs", type=int, default=3, help="timed epochs after one warm-up")
    p.add_argument("--device", default="cuda")
    p.add_argument("--loops", default="feed,train", help="host, feed, train (see above)")
    p.add_argument("--data", default=None, help="folder for the JPEGs (default: a new temporary one)")
    p.add_argument("--systems", default="headrace,headrace-mp,torch",
                   help="headrace (map on threads), headrace-mp (map in processes), torch")
    a = p.parse_args(argv)
    import torch
    import cv2
    cv2.setNumThreads(1)
    root = a.data or tempfile.mkdtemp(prefix="hr-gpufeed-")
    t = time.perf_counter()
    pics, kind = photos()
    d = w2.generate(root, a.images, pics, processes=os.cpu_count() or 1)
    print(f"data: {a.images} JPEGs from {kind} in {time.perf_counter() - t:.1f} s; device {a.device}"
          + (f" ({torch.cuda.get_device_name()})" if a.device.startswith("cuda") else ""), flush=True)
    print("| loop | system | workers | images/s (median) | min-max | waiting share | main CPU ms/image |")
    print("|---|---|---|---|---|---|---|")
    for workers in [int(w) for w in a.workers.split(",")]:
        for loop in a.loops.split(","):
            device = None if loop == "host" else a.device
            for system in a.systems.split(","):
                if system == "torch":
                    loader, close = torch_loader(d, workers, device)
                else:
                    loader, close = headrace_loader(d, workers, device, system == "headrace-mp")
                model = None
                if loop == "train":
                    torch.manual_seed(0)
                    model = network(torch).to(a.device).to(memory_format=torch.channels_last)
                recs = run_loop(torch, loader, device, model, 1 + a.epochs)[1:]
                close()
                mid = len(recs) // 2
                rates = sorted(n / s for n, s, _, _ in recs)
                wait = sorted(w / s for _, s, w, _ in recs)[mid]
                cpu = sorted(c / n * 1e3 for n, _, _, c in recs)[mid]
                print(f"| {loop} | {system} | {workers} | {rates[mid]:,.0f} | "
                      f"{rates[0]:,.0f}-{rates[-1]:,.0f} | {wait:.1%} | {cpu:.3f} |", flush=True)
                print(f"<!-- epochs (images, s, waiting s, main CPU s): "
                      f"{[(n, round(s, 2), round(w, 2), round(c, 2)) for n, s, w, c in recs]} -->", flush=True)


if __name__ == "__main__":
    main()
