"""Runner for the no-framework references: the bare W1 loop, plain file I/O for W3, and the limits.

    python -m benchmarks.peers.plain --workload w1 --variant "bare loop" --data benchmarks/_data
"""
from __future__ import annotations

import os

import cv2
import numpy as np
import PIL
import simplejpeg

from .. import limits, w1, w2, w3
from ..harness import runner_main, time_calls, time_epochs


def run_w1(a) -> dict:
    src = w1.load_source(a.data, a.items)

    def batches():
        n = len(src)
        for s in range(0, n, w1.BATCH):
            rows = [src[i] for i in range(s, min(s + w1.BATCH, n))]
            yield np.stack([w1.plus1(x) for x, _ in rows]), np.stack([y for _, y in rows])

    return time_epochs(batches, lambda b: (len(b[0]), 0), a.epochs, a.warmup,
                       lambda b: w1.check_batch(*b))


def run_w3(a) -> dict:
    rows = a.items or w3.ROWS
    path = os.path.join(w3.w3_dir(a.data), "plain", "records.bin")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if a.variant.startswith("plain write"):
        data = w3.payloads(rows)
        fsync = a.variant.endswith("fsync")
        fresh = w3.FreshPaths(os.path.join(os.path.dirname(path), "write"), os.path.basename(path))
        res = time_calls(lambda: w3.plain_write(fresh.path, data, fsync), a.epochs, a.warmup,
                         before=fresh.next)   # as for FileWriter: fresh path, old files deleted, os.sync()
        fresh.cleanup()
        return res
    if not w3.is_complete(path, rows):
        w3.plain_write(path, w3.payloads(rows), fsync=False)
        w3.mark_complete(path, rows)
    if "readinto" in a.variant:
        view = memoryview(bytearray(w3.READ_CHUNK))
        read = lambda p: w3.plain_read_chunks(p, view)  # noqa: E731
    else:
        read = w3.plain_read_records
    before = (lambda: w3.drop_cache([path])) if a.variant.endswith("cold") else None
    return time_calls(lambda: read(path), a.epochs, a.warmup, before)


def run_limits(a) -> dict:
    d = w2.w2_dir(a.data, a.items or w2.COUNT)
    blobs = []
    for p, _ in w2.manifest(d):
        with open(p, "rb") as f:
            blobs.append(f.read())
    fn = limits.DECODERS[a.variant]

    def one_pass():
        for b in blobs:
            fn(b)
        return len(blobs), 0

    return time_calls(one_pass, a.epochs, a.warmup)


def run(a) -> dict:
    fn = {"w1": run_w1, "w3": run_w3, "limits": run_limits}[a.workload]
    res = fn(a)
    res["versions"] = {"numpy": np.__version__, "opencv": cv2.__version__,
                       "pillow": PIL.__version__, "simplejpeg": simplejpeg.__version__}
    return res


if __name__ == "__main__":
    runner_main(run, __doc__)
