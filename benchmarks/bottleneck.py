"""Bottleneck family (issue 16): pipelines with one known, injected bottleneck, profiled; the
profiler's verdict must name it in at least 19 of 20 cases.

    python -m benchmarks.bottleneck                  # the 20 cases, ~30 s on 2 busy cores
    python -m benchmarks.bottleneck --only gil,consumer --rows 64

The injected slowness is large and mostly sleep-based (5 ms per row against microseconds for the
other ops) so that the answer does not depend on how busy the machine is; the GIL-bound function
is a pure-Python loop (about 3 ms per row) on two threads. Each case names what the verdict
must say: the op's label (``map[slow_at_3]``, ``GeneratorDataset``) or ``consumer``, and for the
GIL case also the cause ``gil``. ``tests/benchmarks/test_bottleneck.py`` runs a few of them.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

SLOW_S = 0.005
N_MAPS = 4


def _fast(i: int) -> Callable:
    def f(x):
        return x + 1
    f.__name__ = f.__qualname__ = f"f{i}"
    return f


def _slow(k: int) -> Callable:
    def slow(x):
        time.sleep(SLOW_S)
        return x
    slow.__name__ = slow.__qualname__ = f"slow_at_{k}"
    return slow


def gil_bound(x):
    s = 0
    for i in range(30_000):  # pure Python: holds the GIL the whole time
        s += i * i
    return x + (s & 1)


def heavy_numpy(x):
    m = np.random.default_rng(0).standard_normal((160, 160))
    for _ in range(6):
        m = m @ m
        m /= np.abs(m).max()
    return x + int(m[0, 0] > 10)


class SlowSource:
    """Random access, 5 ms a row."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        time.sleep(SLOW_S)
        return (np.int64(i),)


def slow_stream(n: int):
    def gen():
        for i in range(n):
            time.sleep(SLOW_S)
            yield (np.int64(i),)
    return gen


@dataclass
class Case:
    name: str
    expect: str          # the verdict's "bottleneck"
    cause: str | None    # the verdict's "cause", when the case is about it
    build: Callable[[int], Any]
    consumer_sleep: float = 0.0


def _maps(ds: Any, d: Any, fns: list[Callable], workers: int, processes: bool = False) -> Any:
    for fn in fns:
        d = d.map(fn, input_columns="a", num_parallel_workers=workers, python_multiprocessing=processes)
    return d


def _source(ds: Any, n: int, workers: int) -> Any:
    return ds.NumpySlicesDataset({"a": np.arange(n, dtype=np.int64)}, shuffle=False, num_parallel_workers=workers)


def cases() -> list[Case]:
    import headrace.dataset as ds  # noqa: PLC0415

    def slow_map(k: int, workers: int, processes: bool = False) -> Callable[[int], Any]:
        fns = [_slow(k) if i == k else _fast(i) for i in range(1, N_MAPS + 1)]
        return lambda n: _maps(ds, _source(ds, n, workers), fns, workers, processes).batch(8)

    out = []
    for w in (1, 2):
        for k in range(1, N_MAPS + 1):
            out.append(Case(f"slow map {k} of {N_MAPS}, {w} thread(s)", f"map[slow_at_{k}]", None, slow_map(k, w)))
    out.append(Case("slow map 2 of 4, 2 processes", "map[slow_at_2]", None, slow_map(2, 2, True)))
    for w in (1, 2):
        out.append(Case(f"slow random-access source, {w} worker(s)", "GeneratorDataset", None,
                        lambda n, w=w: _maps(ds, ds.GeneratorDataset(SlowSource(n), ["a"], shuffle=False,
                                                                     num_parallel_workers=w),
                                             [_fast(1), _fast(2)], w).batch(8)))
    out.append(Case("slow streaming source", "GeneratorDataset", None,
                    lambda n: _maps(ds, ds.GeneratorDataset(slow_stream(n), ["a"]), [_fast(1)], 2).batch(8)))
    for k in (1, 3):
        fns = [gil_bound if i == k else _fast(i) for i in range(1, 4)]
        out.append(Case(f"GIL-bound map {k} of 3 on 2 threads", "map[gil_bound]", "gil",
                        lambda n, fns=fns: _maps(ds, _source(ds, n, 2), fns, 2).batch(8)))
    for w, procs in ((1, False), (2, False), (2, True)):
        out.append(Case(f"slow consumer, {w} {'processes' if procs else 'thread(s)'}", "consumer", "consumer",
                        lambda n, w=w, procs=procs: _maps(ds, _source(ds, n, w), [_fast(1), _fast(2)], w,
                                                          procs).batch(8), consumer_sleep=0.03))
    out.append(Case("slow map after a shuffle", "map[slow_at_1]", None,
                    lambda n: _maps(ds, _source(ds, n, 1).shuffle(16), [_slow(1), _fast(2)], 2).batch(8)))
    out.append(Case("slow filter", "filter[slow_pred]", None, lambda n: _source(ds, n, 1).map(
        _fast(1), input_columns="a").filter(_slow_pred(), input_columns="a").batch(8)))
    out.append(Case("CPU-heavy map among cheap ones, 2 threads", "map[heavy_numpy]", None,
                    lambda n: _maps(ds, _source(ds, n, 2), [_fast(1), heavy_numpy, _fast(3)], 2).batch(8)))
    return out


def _slow_pred() -> Callable:
    def slow_pred(x):
        time.sleep(SLOW_S)
        return True
    return slow_pred


def run_case(case: Case, rows: int) -> dict:
    import headrace.dataset as ds  # noqa: PLC0415
    d = case.build(rows)
    with ds.profile() as p:
        for _ in d.create_tuple_iterator(num_epochs=1, output_numpy=True):
            if case.consumer_sleep:
                time.sleep(case.consumer_sleep)
    doc = p.to_dict()
    v = doc["runs"][doc["main_run"]]["verdict"]
    ok = v["bottleneck"] == case.expect and (case.cause is None or v["cause"] == case.cause)
    return {"case": case.name, "expect": case.expect, "got": v["bottleneck"], "cause": v["cause"], "ok": ok,
            "text": v["text"]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bottleneck", description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=96, help="rows per pipeline (default 96)")
    p.add_argument("--only", default="", help="comma list: run the cases whose name contains one of these")
    p.add_argument("-v", "--verbose", action="store_true", help="print each verdict's text")
    a = p.parse_args(argv)
    keys = [k for k in a.only.split(",") if k]
    todo = [c for c in cases() if not keys or any(k in c.name for k in keys)]
    hits = 0
    for c in todo:
        r = run_case(c, a.rows)
        hits += r["ok"]
        print(f"{'ok ' if r['ok'] else 'MISS'} {r['case']:<44} expect {r['expect']:<20} got {r['got']} ({r['cause']})")
        if a.verbose or not r["ok"]:
            print(f"     {r['text']}")
    print(f"{hits} of {len(todo)} verdicts named the injected bottleneck")
    return 0 if hits >= len(todo) * 19 / 20 else 1


if __name__ == "__main__":
    sys.exit(main())
