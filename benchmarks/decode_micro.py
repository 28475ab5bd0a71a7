"""Micro benchmark: single-thread decode rates (images/s) of headrace's decode ops on W2-like JPEGs.

Used to check that the decode safety checks (pixel limit from the header, "data ends early"
detection) cost nothing measurable: run it with the tree before and after a change on the same
files and compare. All JPEGs are read into memory first; each op runs ``--rounds`` passes over
them and the best pass is reported (the least disturbed one). Time is this process's CPU time
(``time.process_time``; everything runs in one thread), which a busy shared machine disturbs far
less than wall time.

    python -m benchmarks.decode_micro DIR [--rounds 7] [--limit 300]

DIR is searched recursively for ``*.jpg`` (e.g. a W2 folder made by ``benchmarks.w2.generate``).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import time

import numpy as np


def _ops():
    import headrace.dataset.vision as v
    from headrace.dataset.vision._ops_decode import DecodeRandomResizedCrop
    return {
        "Decode": v.Decode(),
        "RandomCropDecodeResize(224)": v.RandomCropDecodeResize(224),
        "Decode+RandomResizedCrop(224) fused": DecodeRandomResizedCrop(v.Decode(), v.RandomResizedCrop(224)),
        "Decode+RandomResizedCrop(112) fused": DecodeRandomResizedCrop(v.Decode(), v.RandomResizedCrop(112)),
    }


def run(datas: list[np.ndarray], rounds: int) -> dict[str, float]:
    from headrace._util import rng
    out = {}
    for name, op in _ops().items():
        best = float("inf")
        for _ in range(rounds):
            t0 = time.process_time()
            for i, d in enumerate(datas):
                with rng.sample_key((1, 2, 0, i)):
                    op(d)
            best = min(best, time.process_time() - t0)
        out[name] = len(datas) / best
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--limit", type=int, default=300)
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.data, "**", "*.jpg"), recursive=True))[:a.limit]
    if not files:
        raise SystemExit(f"no *.jpg under {a.data}")
    datas = []
    for f in files:
        with open(f, "rb") as fh:
            datas.append(np.frombuffer(fh.read(), np.uint8))
    import cv2
    cv2.setNumThreads(1)
    rates = run(datas, a.rounds)
    print(json.dumps({"images": len(datas), "rates": {k: round(v, 1) for k, v in rates.items()}}))


if __name__ == "__main__":
    main()
