"""Runner for Google's Grain (`grain` from the registry; its `grain` / `grain.python` API).

Two ways of running the per-record work, as Grain's users do:

* ``threads``: ``MapDataset`` -> ``to_iter_dataset(ReadOptions(num_threads=w))``: the records' maps
  run in Grain's prefetch thread pool, then ``batch``;
* ``mp_prefetch``: the same chain batched in each of ``w`` worker processes
  (``IterDataset.mp_prefetch(MultiprocessingOptions(num_workers=w))``), each worker reading its own
  slice of the records.

``threads + device_put`` and ``mp_prefetch + device_put`` add Grain's JAX path to either:
``grain.experimental.device_put`` (a CPU buffer thread, ``jax.device_put`` of each batch onto the
CPU device, a device buffer thread; 2 batches each), the peer of ``headrace.jax.Loader``.

W1 reads the shared W1 source and runs ``w1.plus1``; W2 reads the JPEG files of the manifest in a
shuffled order and runs the hand-written OpenCV chain of ``w2.chain_cv2`` (the one PyTorch's runner
uses), drawing its crop and flip from Grain's per-record generator (``random_map``).

    python -m benchmarks.peers.grainpy --workload w2 --variant threads --workers 2 --data benchmarks/_data
"""
from __future__ import annotations

import numpy as np

from .. import w1, w2, wfeed
from ..harness import Unavailable, import_or_unavailable, pin_opencv, runner_main, time_epochs

VARIANTS = ("threads", "mp_prefetch", "threads + device_put", "mp_prefetch + device_put")
BUFFER = 2  # device_put's CPU and device buffers (batches), as headrace.jax.Loader's defaults hold
SEED = 1


class NumpyRandom:
    """The three calls of `random.Random` that the W2 chain makes, over Grain's numpy Generator."""

    def __init__(self, gen: np.random.Generator):
        self.gen = gen

    def uniform(self, a: float, b: float) -> float:
        return float(self.gen.uniform(a, b))

    def randint(self, a: int, b: int) -> int:
        return int(self.gen.integers(a, b + 1))

    def random(self) -> float:
        return float(self.gen.random())


def read_w2(record) -> tuple[bytes, int]:
    path, label = record
    with open(path, "rb") as f:
        return f.read(), label


def w2_chain(record, gen: np.random.Generator):
    buf, label = record
    return w2.chain_cv2(buf, NumpyRandom(gen)), np.int32(label)


def w1_row(row):
    x, y = row
    return w1.plus1(x), y


def worker_init(_index: int, _count: int) -> None:
    pin_opencv()


def pipeline(grain, a, epoch: int):
    """The MapDataset of one epoch (W2 reshuffled with the epoch's seed) and its batch size."""
    if a.workload == "w1":
        return grain.MapDataset.source(w1.load_source(a.data, a.items)).map(w1_row), w1.BATCH
    if a.workload == "w2":
        files = w2.manifest(w2.w2_dir(a.data, a.items or w2.COUNT))
        ds = grain.MapDataset.source(files).shuffle(seed=SEED + epoch).map(read_w2)
        return ds.random_map(w2_chain, seed=SEED + epoch), w2.BATCH
    raise Unavailable(f"the Grain runner runs w1 and w2, not {a.workload}")


def run_feed(grain, a) -> dict:
    """The feed workload through Grain's JAX path: a 1-thread prefetch, then device_put."""
    jax = import_or_unavailable("jax")
    steps = a.items or wfeed.STEPS

    def make_iter():
        ds = grain.MapDataset.range(steps).map(wfeed.make_batch)
        ds = ds.to_iter_dataset(grain.ReadOptions(num_threads=max(1, a.workers), prefetch_buffer_size=2))
        return on_cpu_device(grain, jax, ds)

    res = wfeed.time_loops(make_iter, steps, a.epochs, a.warmup)
    res["versions"] = {"grain": _version(), "jax": jax.__version__}
    return res


def on_cpu_device(grain, jax, ds):
    """``ds`` through Grain's JAX path onto the CPU device."""
    return grain.experimental.device_put(ds, jax.devices("cpu")[0], cpu_buffer_size=BUFFER,
                                         device_buffer_size=BUFFER)


def run(a) -> dict:
    grain = import_or_unavailable("grain")
    from absl import flags   # grain reads absl flags (mp_prefetch); the runner has its own argv
    flags.FLAGS.mark_as_parsed()
    if a.workload == "feed":
        return run_feed(grain, a)
    if a.variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, not {a.variant!r}")
    epochs = iter(range(1 << 30))
    base, _, put = a.variant.partition(" + ")
    jax = import_or_unavailable("jax") if put else None

    def make_iter():
        ds, batch = pipeline(grain, a, next(epochs))
        if base == "threads":
            it = ds.to_iter_dataset(grain.ReadOptions(num_threads=a.workers)).batch(batch)
        else:
            it = ds.to_iter_dataset(grain.ReadOptions(num_threads=0)).batch(batch)
            it = it.mp_prefetch(grain.MultiprocessingOptions(num_workers=a.workers),
                                worker_init_fn=worker_init)
        return iter(on_cpu_device(grain, jax, it) if put else it)

    if a.workload == "w1":
        # mp_prefetch interleaves its workers' slices, so only the threads variants start at row 0.
        check = (lambda b: w1.check_batch(b[0], b[1])) if base == "threads" else None
    else:
        check = lambda b: w2.check_batch(b[0], b[1])  # noqa: E731
    res = time_epochs(make_iter, lambda b: (len(b[0]), 0), a.epochs, a.warmup, check)
    res["versions"] = {"grain": _version(), "numpy": np.__version__}
    if jax is not None:
        res["versions"]["jax"] = jax.__version__
    return res


def _version() -> str:
    from importlib.metadata import version
    return version("grain")


if __name__ == "__main__":
    runner_main(run, __doc__)
