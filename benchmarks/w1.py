"""W1 "overhead": 200,000 rows of float32 (16,) + int32 label, a trivial Python map, batch 256.

The random-access source class and the map function below are shared by every peer's runner, so
all of them read exactly the same Python object per row.
"""
from __future__ import annotations

import os

import numpy as np

from .config import Config, adapter_configs, paired_configs

N = 200_000
BATCH = 256
SLOW_ITEMS = 51_200   # epoch size of the slow secondary variants (noted in items/epoch)


def generate(root: str) -> None:
    """Writes w1/data.npy and w1/labels.npy (the spec's seed) unless they already exist."""
    d = os.path.join(root, "w1")
    os.makedirs(d, exist_ok=True)
    data_p, labels_p = os.path.join(d, "data.npy"), os.path.join(d, "labels.npy")
    if os.path.exists(data_p) and os.path.exists(labels_p):
        return
    data = np.random.default_rng(1).standard_normal((N, 16), dtype=np.float32)
    labels = (np.arange(N) % 1000).astype(np.int32)
    np.save(data_p + ".tmp.npy", data)
    np.save(labels_p + ".tmp.npy", labels)
    os.replace(data_p + ".tmp.npy", data_p)
    os.replace(labels_p + ".tmp.npy", labels_p)


class Source:
    """Random-access rows: (float32 (16,) view, 0-d int32 array)."""

    def __init__(self, data: np.ndarray, labels: np.ndarray, n: int):
        self.data, self.labels, self.n = data, labels, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        return self.data[i], np.asarray(self.labels[i])


def load_source(root: str, items: int) -> Source:
    d = os.path.join(root, "w1")
    data = np.load(os.path.join(d, "data.npy"))
    labels = np.load(os.path.join(d, "labels.npy"))
    return Source(data, labels, items or N)


def plus1(x):
    return x + 1


def bare_batch(src: Source, s: int) -> tuple:
    """The bare loop's batch from row ``s``: up to BATCH rows read, ``plus1`` on each data column,
    both columns stacked (what every runner's pipeline makes, without a framework)."""
    rows = [src[i] for i in range(s, min(s + BATCH, len(src)))]
    return np.stack([plus1(x) for x, _ in rows]), np.stack([y for _, y in rows])


def check_batch(data, label, first_index: int = 0) -> None:
    """The first batch must be rows 0..255 plus one, as float32 (256, 16), labels int."""
    data, label = np.asarray(data), np.asarray(label)
    assert data.shape[1:] == (16,) and data.dtype == np.float32, (data.shape, data.dtype)
    expect = np.random.default_rng(1).standard_normal((data.shape[0], 16), dtype=np.float32) + 1
    assert np.allclose(data, expect), "W1 first batch differs from rows 0.. + 1"
    assert label.reshape(-1)[: 3].tolist() == [0, 1, 2], label[:3]


LIMIT_WORKERS = 2  # issue 42 item 4: headrace at 2 workers against twice the bare loop
FORKED_LOOP = "bare loop, forked"  # the same loop in LIMIT_WORKERS forked processes (peers/plain.py)


def limit_ratios(results: list[dict]) -> str:
    """W1 against the machine's own limit: each headrace threads / processes row at
    ``LIMIT_WORKERS`` workers over ``LIMIT_WORKERS`` x the bare Python loop's median rows/s, all
    from the same run (``results`` with their summaries); "" unless the run has both kinds of row.
    """
    def ok(r: dict, system: str) -> bool:
        return r["workload"] == "w1" and r["system"] == system and bool(r.get("summary"))

    bare = [r for r in results if ok(r, "python") and r["variant"] == "bare loop"]
    forked = [r for r in results if ok(r, "python") and r["variant"] == FORKED_LOOP and r["workers"] == LIMIT_WORKERS]
    rows = [r for r in results if ok(r, "headrace") and r["workers"] == LIMIT_WORKERS
            and r["variant"] in ("threads", "processes")]
    if not bare or not rows:
        return ""
    loop = bare[0]["summary"]["median"]
    floor = forked[0]["summary"]["median"] if forked else None
    lines = [f"W1 against the machine's limit: headrace at {LIMIT_WORKERS} workers over {LIMIT_WORKERS} x the "
             f"bare Python loop ({loop:,.0f} rows/s in one process), from this run"
             + ("" if floor is None else
                f"; and over the same loop split over {LIMIT_WORKERS} forked processes without a framework "
                f"('{FORKED_LOOP}', {floor:,.0f} rows/s: {floor / (LIMIT_WORKERS * loop):.3f} of "
                f"{LIMIT_WORKERS} x the loop)") + ".\n",
             f"| variant | workers | median rows/s | headrace / ({LIMIT_WORKERS} x bare loop) | headrace / forked loop |",
             "|---|---|---|---|---|"]
    for r in rows:
        median = r["summary"]["median"]
        lines.append(f"| {r['variant']} | {r['workers']} | {median:,.0f} | {median / (LIMIT_WORKERS * loop):.3f} "
                     f"| {'–' if floor is None else f'{median / floor:.3f}'} |")
    return "\n".join(lines) + "\n"


CONFIGS = [
    Config("w1", "python", "bare loop", (0,), note="in-process loop, no framework"),
    Config("w1", "python", FORKED_LOOP, (LIMIT_WORKERS,),
           note="the bare loop's batches made in w processes forked each epoch, pickled back through pipes: "
                "a process loader's floor, no framework"),
    Config("w1", "headrace", "threads", compare="threads"),
    # headrace's processes variant is not a slow one: the spec's 200,000-row epoch, like threads,
    # so the two are compared on the same epoch (worker start-up spread over the same rows).
    Config("w1", "headrace", "processes", compare="processes"),
    Config("w1", "headrace", "threads, profiled", compare="threads",
           note="inside ds.profile() (issue 16: the profiler's cost)"),
    Config("w1", "headrace", "processes, profiled", compare="processes",
           note="inside ds.profile() (issue 16: the profiler's cost)"),
    *adapter_configs("w1", "threads"),
    *[Config("w1", "headrace", f"processes + headrace.{fw}", (2,), compare="processes",
             note=f"{what} through headrace.{fw}.Loader over process workers (issue 15)")
      for fw, what in (("torch", "torch tensors"), ("jax", "JAX arrays on the CPU device"))],
    *paired_configs("w1", "processes"),
    Config("w1", "mindspore", "threads", compare="threads"),
    Config("w1", "mindspore", "processes", items=SLOW_ITEMS, compare="processes",
           note="python_multiprocessing=True"),
    Config("w1", "mindspore", "ms.Tensor output", items=SLOW_ITEMS, compare="threads",
           note="output_numpy=False"),
    Config("w1", "torch", "DataLoader", compare="threads", note="num_workers=w (processes)"),
    Config("w1", "torch", "num_workers=0", (0,), compare="threads"),
    # Grain's per-record cost on W1 is ~0.7 ms (1,359 rows/s with 1 thread on 2026-11-27): a
    # 200,000-row epoch would take minutes, so its rows use the slow variants' epoch.
    Config("w1", "grain", "threads", items=SLOW_ITEMS, compare="threads",
           note="MapDataset.map in ReadOptions(num_threads=w), then batch"),
    Config("w1", "grain", "mp_prefetch", items=SLOW_ITEMS, compare="processes",
           note="batched in w worker processes (IterDataset.mp_prefetch)"),
    Config("w1", "grain", "threads + device_put", (2,), items=SLOW_ITEMS, compare="threads + headrace.jax",
           note="threads, then grain.experimental.device_put onto the CPU device (issue 15: the JAX peer)"),
    Config("w1", "grain", "mp_prefetch + device_put", (2,), items=SLOW_ITEMS, compare="processes + headrace.jax",
           note="mp_prefetch, then grain.experimental.device_put onto the CPU device (issue 15: the JAX peer)"),
    Config("w1", "tf", "numpy_function", compare="threads"),
    Config("w1", "tf", "from_generator", items=SLOW_ITEMS, compare="threads"),
    Config("w1", "tf", "native", compare="threads",
           note="from_tensor_slices + graph x+1: no Python per row, an upper bound"),
]
