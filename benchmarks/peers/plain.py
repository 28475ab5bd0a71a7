"""Runner for the no-framework references: the bare W1 loop (in this process, or split over
forked processes), plain file I/O for W3, and the limits.

    python -m benchmarks.peers.plain --workload w1 --variant "bare loop" --data benchmarks/_data
"""
from __future__ import annotations

import os
import pickle
import traceback

import cv2
import numpy as np
import PIL
import simplejpeg

from .. import limits, w1, w2, w3
from ..harness import runner_main, time_calls, time_epochs


def forked_batches(make, starts, workers: int):
    """``make(s)`` for each of ``starts``, in order, made in ``workers`` processes forked now: the
    floor of a loader in worker processes, without a framework. Process ``k`` makes the batches
    ``k, k + workers, ...`` and pickles each into its own pipe (whose 64 KiB hold it a few W1
    batches ahead); this process reads them back in turn. A child that fails exits non-zero,
    which raises here once every child has been waited for."""
    starts = list(starts)
    pipes, pids = [], []
    read_all = False  # the failures of children are raised when the reader did not stop early
    try:
        for k in range(workers):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                code = 1
                try:
                    os.close(r)
                    with os.fdopen(w, "wb") as out:
                        for s in starts[k::workers]:
                            pickle.dump(make(s), out, protocol=5)
                    code = 0
                except BaseException:  # noqa: BLE001 - said on stderr; the exit status tells the parent
                    traceback.print_exc()
                finally:
                    os._exit(code)
            os.close(w)
            pids.append(pid)
            pipes.append(os.fdopen(r, "rb"))
        for j in range(len(starts)):
            yield pickle.load(pipes[j % workers])
        read_all = True
    except EOFError:  # a child ended early: its exit status says why (below)
        read_all = True
    finally:
        for f in pipes:
            f.close()  # a child still writing (the reader stopped early) then fails on its pipe
        failed = [status for pid in pids if (status := os.waitpid(pid, 0)[1])]
    if failed and read_all:
        raise RuntimeError(f"{len(failed)} forked worker(s) failed (wait status {failed[0]})")


def run_w1(a) -> dict:
    src = w1.load_source(a.data, a.items)
    n = len(src)

    def batch(s: int) -> tuple:
        return w1.bare_batch(src, s)

    def batches():
        for s in range(0, n, w1.BATCH):
            yield batch(s)

    def forked():
        return forked_batches(batch, range(0, n, w1.BATCH), a.workers)

    make = forked if a.variant == w1.FORKED_LOOP else batches
    return time_epochs(make, lambda b: (len(b[0]), 0), a.epochs, a.warmup, lambda b: w1.check_batch(*b))


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
