"""Stand-alone word-vector measurements (issue 17): parse a generated GloVe-style file once, reload
it from the memory-mapped cache, and ToVectors throughput per pipeline row and on one large array.

    python -m benchmarks.text_micro [--words 100000] [--dim 100]

Prints one line per measurement; nothing is asserted (the machine is shared). Files go to a
temporary folder that is removed at the end.
"""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

import numpy as np


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.text_micro", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--words", type=int, default=100_000)
    p.add_argument("--dim", type=int, default=100)
    a = p.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="hr-text-micro-")
    os.environ["HEADRACE_VECTORS_CACHE"] = os.path.join(tmp, "cache")
    from headrace.dataset import text
    try:
        rng = np.random.default_rng(0)
        words = [f"w{i}" for i in range(a.words)]
        path = os.path.join(tmp, f"glove.6B.{a.dim}d.txt")
        with open(path, "w", encoding="utf-8") as f:
            for w, row in zip(words, rng.normal(size=(a.words, a.dim)).astype(np.float32)):
                f.write(w + " " + " ".join(f"{x:.5f}" for x in row) + "\n")
        print(f"file: {os.path.getsize(path) / 1e6:.1f} MB, {a.words} x {a.dim}")
        t = time.perf_counter()
        text.GloVe.from_file(path)
        print(f"parse + write cache: {time.perf_counter() - t:.2f} s")
        t = time.perf_counter()
        glove = text.GloVe.from_file(path)
        print(f"reload from the memory-mapped cache: {(time.perf_counter() - t) * 1000:.0f} ms")
        tv = text.ToVectors(glove)
        rows = [np.array([words[i] for i in rng.integers(0, a.words, 200)]) for _ in range(5000)]
        t = time.perf_counter()
        for r in rows:
            tv(r)
        dt = time.perf_counter() - t
        print(f"ToVectors, rows of 200 tokens: {len(rows) * 200 / dt / 1e6:.2f} M tokens/s")
        big = np.concatenate(rows)
        t = time.perf_counter()
        tv(big)
        print(f"ToVectors, one array of {big.size:,} tokens: {big.size / (time.perf_counter() - t) / 1e6:.2f} M tokens/s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
