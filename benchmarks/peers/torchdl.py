"""Runner for PyTorch's DataLoader (torch==2.13.0 CPU; its workers are processes).

W2's transforms are written by hand with OpenCV (or Pillow): there is no torchvision CPU wheel here.

    python -m benchmarks.peers.torchdl --workload w2 --variant OpenCV --workers 2 --data benchmarks/_data
"""
from __future__ import annotations

import random

import numpy as np

from .. import w1, w2, wfeed
from ..harness import import_or_unavailable, pin_opencv, runner_main, time_epochs

class W1Rows:
    """Map-style dataset over the shared W1 source: `(plus1(x), y)` per row."""

    def __init__(self, src):
        self.src = src

    def __len__(self):
        return len(self.src)

    def __getitem__(self, i):
        x, y = self.src[i]
        return w1.plus1(x), y


class W2Files:
    """Map-style dataset over the W2 JPEG files: reads, then runs the hand-written chain."""

    def __init__(self, files, chain):
        self.files, self.chain = files, chain

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        path, label = self.files[i]
        with open(path, "rb") as f:
            buf = f.read()
        # DataLoader seeds Python's `random` in every worker.
        return self.chain(buf, random), label


class FeedBatches:
    """Map-style dataset whose item i is the feed workload's batch i (made in the worker)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return wfeed.make_batch(i)


def worker_init(_worker_id: int) -> None:
    pin_opencv()


def run(a) -> dict:
    torch = import_or_unavailable("torch")
    DataLoader = torch.utils.data.DataLoader
    workers = a.workers
    if a.workload == "w1":
        dataset, batch, shuffle = W1Rows(w1.load_source(a.data, a.items)), w1.BATCH, False
        check = lambda b: w1.check_batch(b[0].numpy(), b[1].numpy())  # noqa: E731
    elif a.workload == "w2":
        files = w2.manifest(w2.w2_dir(a.data, a.items or w2.COUNT))
        chain = w2.chain_cv2 if a.variant == "OpenCV" else w2.chain_pil
        dataset, batch, shuffle = W2Files(files, chain), w2.BATCH, True
        check = lambda b: w2.check_batch(b[0].numpy(), b[1].numpy())  # noqa: E731
    elif a.workload == "feed":
        steps = a.items or wfeed.STEPS
        loader = DataLoader(FeedBatches(steps), batch_size=None, num_workers=max(1, workers), prefetch_factor=2)
        res = wfeed.time_loops(lambda: loader, steps, a.epochs, a.warmup)
        res["versions"] = {"torch": torch.__version__, "numpy": np.__version__}
        return res
    else:
        raise ValueError(f"torch runs w1, w2 and feed, not {a.workload}")

    def make_iter():
        return iter(DataLoader(dataset, batch_size=batch, shuffle=shuffle, num_workers=workers,
                               worker_init_fn=worker_init if workers else None))

    res = time_epochs(make_iter, lambda b: (len(b[0]), 0), a.epochs, a.warmup, check)
    res["versions"] = {"torch": torch.__version__, "numpy": np.__version__}
    return res


if __name__ == "__main__":
    runner_main(run, __doc__)
