"""The profiler's cost on W1 (issue 16: at most 2%): epochs alternating plain and inside
``ds.profile()`` in one process, so that a shared machine's drift hits both alike.

    python -m benchmarks.profiler_cost --mode threads --workers 1 --pairs 6
    python -m benchmarks.profiler_cost --mode processes --workers 2 --pairs 6
    python -m benchmarks.profiler_cost --items 50000 --pairs 40   # many short pairs: steadier medians

Prints the per-pair ratio profiled / plain of rows/s (median and every pair) and of this
process's CPU time (worker processes' CPU is not in it).
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

from . import w1

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_data")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("threads", "processes"), default="threads")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--pairs", type=int, default=6)
    ap.add_argument("--items", type=int, default=0, help="rows an epoch (0: W1's 200,000)")
    ap.add_argument("--data", default=ROOT)
    a = ap.parse_args(argv)
    import headrace.dataset as ds  # noqa: PLC0415 - after argument parsing
    w1.generate(a.data)
    src = w1.load_source(a.data, a.items)
    procs = a.mode == "processes"

    def epoch() -> tuple[float, float]:
        d = ds.GeneratorDataset(src, ["data", "label"], shuffle=False, num_parallel_workers=a.workers,
                                python_multiprocessing=procs)
        d = d.map(w1.plus1, input_columns=["data"], num_parallel_workers=a.workers,
                  python_multiprocessing=procs).batch(w1.BATCH)
        t, c = time.perf_counter(), time.process_time()
        n = sum(len(b[0]) for b in d.create_tuple_iterator(output_numpy=True, num_epochs=1))
        return n / (time.perf_counter() - t), time.process_time() - c

    epoch()  # warm-up
    res: dict[str, list[tuple[float, float]]] = {"plain": [], "profiled": []}
    for i in range(a.pairs):
        for kind in (("plain", "profiled") if i % 2 == 0 else ("profiled", "plain")):
            if kind == "profiled":
                with ds.profile():
                    res[kind].append(epoch())
            else:
                res[kind].append(epoch())
    rate = [p[0] / q[0] for p, q in zip(res["profiled"], res["plain"])]
    cpu = [p[1] / q[1] for p, q in zip(res["profiled"], res["plain"])]
    print(f"{a.mode} w={a.workers}: rows/s plain median {statistics.median(r[0] for r in res['plain']):,.0f}, "
          f"profiled {statistics.median(r[0] for r in res['profiled']):,.0f}; per-pair profiled/plain rate: "
          f"median {statistics.median(rate):.3f} (all {[round(x, 2) for x in rate]}); this process's CPU "
          f"profiled/plain: median {statistics.median(cpu):.3f}; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
