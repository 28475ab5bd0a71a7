"""What a framework adapter costs a training loop on W1 (issue 15: within 3% of headrace's NumPy
output), measured as steadily as a shared machine allows.

    python -m benchmarks.adapter_cost --mode processes --adapter torch --pairs 40
    python -m benchmarks.adapter_cost --mode threads --adapter jax --pairs 40

One process holds two kept iterators over the same W1 pipeline (``num_epochs=-1``; a loader read
every epoch, as a training loop reads it): headrace's NumPy iterator and
``headrace.<adapter>.Loader`` (CPU tensors / JAX arrays on the CPU device). They are read one
epoch each in turns, the order alternating, so that the machine's drift hits both alike. Each
epoch gives three figures:

- **steady**: rows/s between the ``--skip``-th batch and the ``--tail``-th batch from the end.
  This leaves out how the epoch starts: the loader starts its next epoch as soon as one ends
  (its feature), the NumPy iterator when it is asked, so whole-epoch rates favour the loader by
  the batches it read ahead while the other iterator was read.
- **whole**: rows/s over the whole epoch, that head start included.
- **CPU**: rows per CPU second of this process and its workers over the steady window.

``--step torch`` (or ``jax``) runs one operation of the framework after each batch of both
iterators, as any training loop of that framework does between batches (see ``make_step``).

``--adapter numpy`` reads a second NumPy iterator in the loader's place: a check of the method,
whose ratios should sit at 1. ``--baseline device_put`` (with ``--adapter jax``) puts each NumPy
batch on JAX's default device in the loop, as a JAX loop without the adapter does
(``jax.device_put(batch)``, see ``LoopPut``): the loader against the same arrays made the
public way. Printed: the per-pair ratio loader / baseline of each, its median and a 95% bootstrap
interval of that median (resampling the pairs), and both iterators' medians. W2 is not measured
this way: its 16-batch epoch fits in a kept loader's read-ahead (the pipeline's prefetch size),
so no window of it is steady; the suite's ``, paired`` rows measure it with loaders made anew each
epoch.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from . import w1
from .harness import cpu_seconds, tree_pids

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_data")
SKIP = 100  # batches a steady window leaves out at the start (of 782 an epoch)
TAIL = 20


def tree_cpu() -> float:
    """CPU seconds used so far by this process and every process under it (its workers)."""
    return sum(cpu_seconds(p) for p in tree_pids(os.getpid()))


def epoch_times(it: Iterable, marks: tuple[int, int] = (-1, -1),
                step: Callable[[], Any] | None = None) -> tuple[list[float], list[int], float]:
    """Reads one epoch of ``it``: the time each batch arrived (from the epoch's start), its rows,
    and the CPU seconds of this process tree between the arrivals of batches ``marks`` (0.0 when a
    mark is not reached). ``step``, if given, is called after each batch (see ``make_step``)."""
    times, sizes, cpu = [], [], [0.0, 0.0]
    t0 = time.perf_counter()
    for batch in it:
        if step is not None:
            step()
        sizes.append(batch[0].shape[0])  # (torch's len() is a Python call: not the adapter's cost)
        times.append(time.perf_counter() - t0)
        i = len(times) - 1
        if i == marks[0] or i == marks[1]:
            cpu[i == marks[1]] = tree_cpu()
    return times, sizes, cpu[1] - cpu[0] if cpu[0] and cpu[1] else 0.0


def make_step(kind: str) -> Callable[[], Any] | None:
    """The smallest training step of a framework: one operation on a 4-value tensor of the loop's
    own, the same for both iterators (``kind``: "none", "torch" or "jax"; None for "none").

    A loop that trains with torch runs torch's code between batches. Without such a step, each
    batch's ``torch.from_numpy`` may run with torch's code evicted from the caches by the
    workers: after evicting 64 MB, the first ``from_numpy`` took 40-68 us and a second one 2-3 us;
    after one ``w + 1`` it took 15-18 us (2026-11-28, the 2-core VM). On W1 over processes the step
    changed little: headrace.torch 0.971 without it, 0.967 with it (120 pairs each, that day).
    """
    if kind == "none":
        return None
    if kind == "torch":
        import torch  # noqa: PLC0415
        w = torch.ones(4)
        return lambda: w.add(1)
    if kind == "jax":
        import jax  # noqa: PLC0415
        import jax.numpy as jnp  # noqa: PLC0415
        v = jnp.ones(4)
        add = jax.jit(lambda x: x + 1)
        return lambda: add(v).block_until_ready()
    raise ValueError(f"step must be 'none', 'torch' or 'jax', but got {kind!r}")


def window(times: Sequence[float], skip: int, tail: int) -> tuple[int, int]:
    """The batches whose arrivals bound an epoch's steady window: ``skip`` and ``len - 1 - tail``."""
    last = len(times) - 1 - tail
    if skip < 0 or tail < 0 or last <= skip:
        raise ValueError(f"an epoch of {len(times)} batches has no window after skip={skip} and tail={tail}")
    return skip, last


def steady_rate(times: Sequence[float], sizes: Sequence[int], skip: int, tail: int) -> float:
    """Rows/s from the arrival of batch ``skip`` to that of batch ``len - 1 - tail`` (the rows of
    the batches after the first of them).

    >>> steady_rate([1.0, 2.0, 3.0, 4.0, 9.0], [10] * 5, skip=1, tail=1)
    10.0
    """
    first, last = window(times, skip, tail)
    return sum(sizes[first + 1:last + 1]) / (times[last] - times[first])


def median_interval(ratios: Sequence[float], resamples: int = 4000, seed: int = 0) -> tuple[float, float]:
    """A 95% bootstrap interval of the median of ``ratios`` (pairs resampled with replacement)."""
    if not ratios:
        raise ValueError("no ratios")
    rng = np.random.default_rng(seed)
    a = np.asarray(ratios, dtype=np.float64)
    medians = np.median(a[rng.integers(0, len(a), (resamples, len(a)))], axis=1)
    lo, hi = np.quantile(medians, [0.025, 0.975])
    return float(lo), float(hi)


class LoopPut:
    """Epochs of a kept NumPy iterator, each batch put on JAX's default device in the loop
    (``jax.device_put(batch)``, the public way): what a JAX training loop without the adapter
    reads."""

    def __init__(self, numpy_it: Any) -> None:
        import jax  # noqa: PLC0415
        self._it, self._put = numpy_it, jax.device_put

    def __iter__(self):
        put = self._put
        for batch in self._it:  # (iter() of a kept iterator reads one epoch)
            yield put(batch)


def make_pipeline(mode: str, workers: int, data_root: str, items: int) -> Any:
    """W1 (a Python map over rows, in ``mode`` workers) as the suite's headrace rows build it."""
    import headrace.dataset as ds  # noqa: PLC0415
    w1.generate(data_root)
    procs = mode == "processes"
    data = ds.GeneratorDataset(w1.load_source(data_root, items), ["data", "label"], shuffle=False,
                               num_parallel_workers=workers, python_multiprocessing=procs)
    return data.map(w1.plus1, input_columns=["data"], num_parallel_workers=workers,
                    python_multiprocessing=procs).batch(w1.BATCH)


def measure(numpy_it: Any, loader: Any, pairs: int, skip: int, tail: int,
            step: Callable[[], Any] | None = None) -> dict:
    """``pairs`` rounds of one epoch of each (the order alternating, after one untimed epoch of
    each): per-pair ratios loader / NumPy of the steady rate, the whole-epoch rate and the steady
    window's rows per CPU second (of this process and its workers), and each side's figures.
    ``step`` runs after every batch of both (``make_step``)."""
    times, _, _ = epoch_times(iter(numpy_it), step=step)
    epoch_times(iter(loader), step=step)
    marks = window(times, skip, tail)
    out: dict = {"numpy": [], "loader": [], "steady": [], "whole": [], "cpu": []}
    for i in range(pairs):
        got = {}
        for name, it in ((("numpy", numpy_it), ("loader", loader)) if i % 2 == 0
                         else (("loader", loader), ("numpy", numpy_it))):
            times, sizes, cpu = epoch_times(iter(it), marks, step)
            if len(times) != marks[1] + 1 + tail:
                raise RuntimeError(f"{name}: an epoch of {len(times)} batches, not {marks[1] + 1 + tail}")
            rows = sum(sizes[marks[0] + 1:marks[1] + 1])
            got[name] = (steady_rate(times, sizes, skip, tail), sum(sizes) / times[-1], rows / cpu if cpu else 0.0)
            out[name].append(got[name])
        out["steady"].append(got["loader"][0] / got["numpy"][0])
        out["whole"].append(got["loader"][1] / got["numpy"][1])
        if got["loader"][2] and got["numpy"][2]:
            out["cpu"].append(got["loader"][2] / got["numpy"][2])
    return out


def report(res: dict, label: str, baseline: str = "NumPy") -> str:
    """The figures of ``measure``'s result under ``label``; ``baseline``: what the loader was paired
    with (``--baseline``)."""
    lines = [label]
    for key, what in (("steady", "rows/s, steady window"), ("whole", "rows/s, whole epoch"),
                      ("cpu", "rows per CPU second, steady window")):
        r = res[key]
        if not r:
            lines.append(f"  {what}: not measured (CPU time too short for the clock)")
            continue
        lo, hi = median_interval(r)
        lines.append(f"  {what}, loader/{baseline}: median {statistics.median(r):.3f} (95% interval of the median "
                     f"{lo:.3f}-{hi:.3f}; range {min(r):.3f}-{max(r):.3f}; {len(r)} pairs)")
    for name, shown in (("numpy", baseline), ("loader", "loader")):
        steady, whole, cpu = (statistics.median(x[k] for x in res[name]) for k in range(3))
        lines.append(f"  {shown} medians: {steady:,.0f} rows/s steady, {whole:,.0f} rows/s whole, "
                     f"{cpu:,.0f} rows per CPU second")
    lines.append(f"  load average {os.getloadavg()[0]:.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("threads", "processes"), default="threads", help="W1's workers")
    ap.add_argument("--adapter", choices=("torch", "jax", "numpy"), default="torch",
                    help="numpy: a second NumPy iterator in the loader's place (a check of the method: ~1.0)")
    ap.add_argument("--baseline", choices=("numpy", "device_put"), default="numpy",
                    help="device_put: each NumPy batch put with jax.device_put in the loop (--adapter jax only)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--skip", type=int, default=SKIP, help="batches left out at an epoch's start")
    ap.add_argument("--tail", type=int, default=TAIL, help="batches left out at an epoch's end")
    ap.add_argument("--depth", type=int, default=None,
                    help="the loader's queue_depth (torch) or cpu_buffer (JAX); default: its own")
    ap.add_argument("--items", type=int, default=0, help="rows an epoch (0: W1's 200,000)")
    ap.add_argument("--step", choices=("none", "torch", "jax"), default="none",
                    help="after each batch of both iterators, one operation of this framework (see make_step)")
    ap.add_argument("--data", default=ROOT)
    a = ap.parse_args(argv)
    if a.pairs < 1 or a.workers < 1:
        ap.error("--pairs and --workers must be at least 1")
    if a.adapter == "numpy" and a.depth is not None:
        ap.error("--depth is the loader's: not with --adapter numpy")
    if a.baseline == "device_put" and a.adapter != "jax":
        ap.error("--baseline device_put is JAX's put: only with --adapter jax")
    numpy_it = make_pipeline(a.mode, a.workers, a.data, a.items).create_tuple_iterator(
        output_numpy=True, num_epochs=-1)
    if a.adapter == "numpy":
        other = make_pipeline(a.mode, a.workers, a.data, a.items).create_tuple_iterator(
            output_numpy=True, num_epochs=-1)
        close, name = other.stop, "a second NumPy iterator"
    else:
        adapter = __import__(f"headrace.{a.adapter}", fromlist=["Loader"])
        depth = {} if a.depth is None else {"queue_depth" if a.adapter == "torch" else "cpu_buffer": a.depth}
        other = adapter.Loader(make_pipeline(a.mode, a.workers, a.data, a.items), shard=False, **depth)
        close, name = other.close, f"headrace.{a.adapter}.Loader"
    baseline = LoopPut(numpy_it) if a.baseline == "device_put" else numpy_it
    try:
        res = measure(baseline, other, a.pairs, a.skip, a.tail, make_step(a.step))
    finally:
        close()
        numpy_it.stop()
    step = "" if a.step == "none" else f"; a {a.step} operation after each batch of both"
    against = "NumPy + jax.device_put" if a.baseline == "device_put" else "NumPy"
    print(report(res, f"W1 {a.mode}, {a.workers} workers, {name} vs {against} "
                      f"(kept; steady window: batches {a.skip}..end-{a.tail}{step})", against))


if __name__ == "__main__":
    main()
