"""Feed workload (issue 15): a training loop of 10 ms steps fed by a pipeline 1.2x faster than the
step. What counts is how long the loop waits for data: the share of the loop's time spent in
``next(batches)`` after the first batch, and the wait for the first batch itself.

The pipeline is a random-access source of ``STEPS`` batch indices whose per-batch map sleeps
``PRODUCE_S`` (8.3 ms: the step time / 1.2) and returns a float32 (32, 16) batch; sleeping keeps the
figure independent of how busy the machine's cores are (the step sleeps too, as a GPU step leaves
the host idle). Every system runs it with one worker and its own prefetch; each epoch makes the
loader, waits ``SETUP_S`` (the training side's own set-up), then runs one loop of ``STEPS`` steps. The result's rate is steps/s (100 at most); ``wait_fraction`` and
``first_wait_s`` are the figures of interest.
"""
from __future__ import annotations

import time

import numpy as np

from .config import Config

STEP_S = 0.010
SPEED = 1.2
PRODUCE_S = STEP_S / SPEED
BATCH = 32
STEPS = 300
SETUP_S = 0.2
QUICK_STEPS = 40


def make_batch(i) -> np.ndarray:
    """One batch of the pipeline (index ``i``), ``PRODUCE_S`` seconds of (sleeping) work."""
    time.sleep(PRODUCE_S)
    return np.full((BATCH, 16), int(np.asarray(i).reshape(-1)[0]), np.float32)


class Indices:
    """Random-access source of batch indices (one row per step)."""

    def __init__(self, n: int):
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        return (np.asarray(i, np.int64),)


def train(make_iter, steps: int) -> dict:
    """Runs the loop once: ``steps`` steps of ``STEP_S``; returns its epoch record with the waits."""
    source = make_iter()
    time.sleep(SETUP_S)   # the training side gets ready (model, optimizer) after making its loader
    t0 = time.perf_counter()
    it = iter(source)
    waits = []
    for _ in range(steps):
        a = time.perf_counter()
        batch = next(it)
        waits.append(time.perf_counter() - a)
        del batch
        time.sleep(STEP_S)
    seconds = time.perf_counter() - t0
    for obj in (it, source):
        close = getattr(obj, "close", None)
        if close is not None:
            close()
    return {"seconds": seconds, "items": steps, "bytes": 0, "first_batch_s": waits[0],
            "wait_fraction": sum(waits[1:]) / seconds, "first_wait_s": waits[0]}


def time_loops(make_iter, steps: int, epochs: int, warmup: int) -> dict:
    out: dict = {"warmup": [], "epochs": []}
    for e in range(warmup + epochs):
        out["warmup" if e < warmup else "epochs"].append(train(make_iter, steps))
    return out


CONFIGS = [
    Config("feed", "headrace", "headrace.torch", (1,), compare="headrace.torch",
           note="Loader(data): torch tensors on CPU, the pipeline's prefetch thread as the queue (its prefetch size deep)"),
    Config("feed", "headrace", "headrace.jax", (1,), compare="headrace.torch",
           note="Loader(data): jax arrays on the CPU device, one buffer (the pipeline's prefetch size deep)"),
    Config("feed", "torch", "DataLoader", (1,), compare="headrace.torch",
           note="batch_size=None over the same batches, num_workers=1, prefetch_factor 2"),
    Config("feed", "grain", "device_put", (1,), compare="headrace.jax",
           note="grain.experimental.device_put on a 1-thread prefetch, CPU device"),
]
