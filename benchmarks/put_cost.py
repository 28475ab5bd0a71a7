"""What making and freeing a framework's arrays costs per W1 batch, hot and with cold caches: the
part of an adapter's cost (``benchmarks/adapter_cost.py``) that is the framework's own.

    python -m benchmarks.put_cost
    python -m benchmarks.put_cost --trials 5000 --evict 16 --gap-us 300

One W1 batch (float32 (256, 16) and int32 (256,), as the engine makes it) is converted as each
adapter does it on a CPU device, and the result is freed at once: ``torch.from_numpy`` per column
(headrace.torch), ``headrace.jax``'s put (``DevicePut.row``: XLA's put without JAX's Python
layers, see ``headrace/jax/_put.py``), and ``jax.device_put`` per column for reference.

- **hot**: conversions back to back, as in a micro-benchmark;
- **cold**: before each conversion, ``--evict`` MiB of memory are written and the thread sleeps
  ``--gap-us`` microseconds, as a training loop's thread is between batches while workers run.

Printed: the median microseconds per batch (convert + free) and the median CPU microseconds of
this thread, per framework and condition. A framework that is not installed is skipped.
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable

import numpy as np

from . import w1


def batch() -> tuple[np.ndarray, np.ndarray]:
    """One W1 batch as the engine's batch op makes it (fresh NumPy arrays)."""
    data = np.ones((w1.BATCH, 16), np.float32)
    labels = np.arange(w1.BATCH, dtype=np.int32)
    return data, labels


def converters() -> dict[str, Callable[[tuple], Any]]:
    """Each installed adapter's conversion of a batch (name -> function of the batch)."""
    out: dict[str, Callable[[tuple], Any]] = {}
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        pass
    else:
        from_numpy = torch.from_numpy
        out["torch.from_numpy (headrace.torch)"] = lambda row: [from_numpy(v) for v in row]
    try:
        import jax  # noqa: PLC0415
    except ImportError:
        pass
    else:
        from headrace.jax._put import DevicePut  # noqa: PLC0415
        device = jax.devices("cpu")[0]
        put = DevicePut(device)
        out["headrace.jax put"] = put.row
        device_put = jax.device_put
        out["jax.device_put"] = lambda row: [device_put(v, device) for v in row]
    return out


def measure(convert: Callable[[tuple], Any], row: tuple, trials: int, evict: np.ndarray | None,
            gap_s: float) -> tuple[float, float]:
    """Median wall and thread-CPU microseconds of ``convert(row)`` plus freeing its result, over
    ``trials`` conversions; with ``evict``, that memory is written and the thread sleeps ``gap_s``
    seconds before each."""
    for _ in range(3):  # each dtype's first conversion (headrace.jax checks its direct path then)
        convert(row)
    wall, cpu = [], []
    clock, thread_clock = time.perf_counter, time.thread_time
    for _ in range(trials):
        if evict is not None:
            evict += 1
            time.sleep(gap_s)
        c, t = thread_clock(), clock()
        out = convert(row)
        del out
        wall.append(clock() - t)
        cpu.append(thread_clock() - c)
    return statistics.median(wall) * 1e6, statistics.median(cpu) * 1e6


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=3000)
    ap.add_argument("--evict", type=int, default=8, help="MiB written before each cold conversion")
    ap.add_argument("--gap-us", type=float, default=300.0, help="sleep before each cold conversion")
    a = ap.parse_args(argv)
    if a.trials < 1 or a.evict < 1 or a.gap_us < 0:
        ap.error("--trials and --evict must be at least 1, --gap-us at least 0")
    row = batch()
    junk = np.ones(a.evict << 20, np.uint8)
    found = converters()
    if not found:
        print("neither torch nor jax is installed: nothing to measure")
        return
    print(f"one W1 batch (float32 {row[0].shape} + int32 {row[1].shape}), converted and freed; "
          f"median of {a.trials}; cold: {a.evict} MiB written and {a.gap_us:.0f} us asleep before each")
    for name, convert in found.items():
        hot = measure(convert, row, a.trials, None, 0.0)
        cold = measure(convert, row, a.trials, junk, a.gap_us * 1e-6)
        print(f"  {name:36s} hot {hot[0]:6.1f} us ({hot[1]:6.1f} CPU)   cold {cold[0]:6.1f} us ({cold[1]:6.1f} CPU)")


if __name__ == "__main__":
    main()
