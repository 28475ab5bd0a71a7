"""W1 against the machine's own limit, paired (issue 42 item 4: headrace at 2 workers over twice the
bare Python loop), measured as steadily as a shared machine allows.

    python -m benchmarks.w1_limit --rounds 25

The suite's rows of that ratio come from three runner processes started one after another, so
the machine's drift between them moves the ratio by several percent. Here one process reads, in
each round, one epoch of each of:

- **bare**: the bare Python loop in this process (``w1.bare_batch``, the suite's 'bare loop' row);
- **parallel**: the same loop split over ``--workers`` processes forked for the epoch, each
  batch made and dropped there (only its row count comes back): how far this machine's cores
  scale the loop itself, before any loader hands a batch over;
- **forked**: the same loop split over ``--workers`` processes forked for the epoch, no framework
  (``peers.plain.forked_batches``, the 'bare loop, forked' row);
- **headrace**: W1's pipeline over ``--workers`` worker processes, made anew for the epoch (the
  'processes' row).

The order alternates between rounds, and each epoch is timed as the suite times a row (making
the iterator, then reading every batch). Printed: the median rate of each, and per-round ratios
headrace, parallel and forked over (workers x bare), and headrace / forked, each as its median
with a 95% bootstrap interval of that median (resampling the rounds).
"""
from __future__ import annotations

import argparse
import os
import statistics
from typing import Any, Callable, Iterable

from . import w1
from .adapter_cost import median_interval
from .harness import time_epochs
from .peers.plain import forked_batches

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_data")
KINDS = ("bare", "parallel", "forked", "headrace")


def makers(src: w1.Source, workers: int) -> dict[str, Callable[[], Iterable]]:
    """Each kind's epoch: a function making a new iterator over ``src``'s batches."""
    import headrace.dataset as ds  # noqa: PLC0415 - the suite's runners import it the same way

    starts = range(0, len(src), w1.BATCH)

    def bare() -> Iterable:
        return (w1.bare_batch(src, s) for s in starts)

    def parallel() -> Iterable:
        # (a range as long as the batch: its rows counted by epoch_rate, none of them sent)
        return forked_batches(lambda s: (range(len(w1.bare_batch(src, s)[0])),), starts, workers)

    def forked() -> Iterable:
        return forked_batches(lambda s: w1.bare_batch(src, s), starts, workers)

    def headrace() -> Iterable:
        data = ds.GeneratorDataset(src, ["data", "label"], shuffle=False, num_parallel_workers=workers,
                                   python_multiprocessing=True)
        data = data.map(w1.plus1, input_columns=["data"], num_parallel_workers=workers, python_multiprocessing=True)
        return data.batch(w1.BATCH).create_tuple_iterator(output_numpy=True, num_epochs=1)

    return {"bare": bare, "parallel": parallel, "forked": forked, "headrace": headrace}


def epoch_rate(make: Callable[[], Iterable], rows: int) -> float:
    """Rows/s of one epoch of ``make()``, timed as the suite times one (``harness.time_epochs``:
    making included); every row must arrive."""
    epoch = time_epochs(make, lambda batch: (len(batch[0]), 0), 1, 0)["epochs"][0]
    if epoch["items"] != rows:
        raise RuntimeError(f"an epoch gave {epoch['items']} rows, not {rows}")
    return epoch["items"] / epoch["seconds"]


def measure(src: w1.Source, workers: int, rounds: int, warmup: int = 1) -> dict[str, list[float]]:
    """Rates of ``rounds`` rounds, one epoch of each kind a round, the order reversed every other
    round; ``warmup`` rounds before them are not kept."""
    make = makers(src, workers)
    rates: dict[str, list[float]] = {k: [] for k in KINDS}
    for r in range(warmup + rounds):
        for kind in (KINDS if r % 2 == 0 else KINDS[::-1]):
            rate = epoch_rate(make[kind], len(src))
            if r >= warmup:
                rates[kind].append(rate)
    return rates


def ratios(rates: dict[str, list[float]], workers: int) -> dict[str, list[float]]:
    """Per round: headrace, forked and parallel over ``workers`` x bare, and headrace over forked."""
    bare = rates["bare"]
    out = {f"{k} / (w x bare)": [r / (workers * b) for r, b in zip(rates[k], bare)]
           for k in ("headrace", "parallel", "forked")}
    out["headrace / forked"] = [h / f for h, f in zip(rates["headrace"], rates["forked"])]
    return out


def report(rates: dict[str, list[float]], workers: int) -> str:
    lines = [f"{len(rates['bare'])} rounds, {workers} workers; median rows/s: "
             + ", ".join(f"{k} {statistics.median(v):,.0f}" for k, v in rates.items())]
    for name, values in ratios(rates, workers).items():
        lo, hi = median_interval(values)
        lines.append(f"  {name.replace('w x', f'{workers} x')}: {statistics.median(values):.3f} "
                     f"(95% interval of the median {lo:.3f}-{hi:.3f}; rounds {min(values):.3f}-{max(values):.3f})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> Any:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=25)
    ap.add_argument("--workers", type=int, default=w1.LIMIT_WORKERS)
    ap.add_argument("--items", type=int, default=0, help="rows an epoch (0: W1's 200,000)")
    ap.add_argument("--data", default=ROOT)
    a = ap.parse_args(argv)
    if a.rounds < 1 or a.workers < 1:
        ap.error("--rounds and --workers must be at least 1")
    w1.generate(a.data)
    rates = measure(w1.load_source(a.data, a.items), a.workers, a.rounds)
    print(report(rates, a.workers))
    return rates


if __name__ == "__main__":
    main()
