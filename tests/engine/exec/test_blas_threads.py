"""NOTE [ BLAS in map threads ]: while the engine's thread pools or a pass's prefetch thread run,
OpenBLAS uses one thread per call, and the count the user had comes back when the last ends."""
from __future__ import annotations

import ctypes
import os
import sys
import threading
import time

import numpy as np
import pytest

import headrace.dataset as ds
from headrace._engine.exec import native_threads


def _getter():
    """The thread-count getter of the first OpenBLAS that has the setter the engine uses (OpenCV's
    wheel bundles an older OpenBLAS without it, which the engine leaves alone)."""
    for path in native_threads._loaded_native_pools():
        if "openblas" in path.lower():
            lib = ctypes.CDLL(path)
            if getattr(lib, "openblas_set_num_threads_local", None) is None:
                continue
            for name in ("openblas_get_num_threads", "scipy_openblas_get_num_threads64_",
                         "openblas_get_num_threads64_"):
                fn = getattr(lib, name, None)
                if fn is not None:
                    fn.restype = ctypes.c_int
                    return fn
    pytest.skip("no OpenBLAS with a per-call thread count is loaded")


@pytest.mark.parametrize("workers", [1, 2], ids=["prefetch_thread", "pool"])
def test_map_threads_run_blas_on_one_thread_and_the_count_comes_back(workers):
    get = _getter()
    setter = native_threads._blas_setters()[0]
    before = setter(2)  # a known count for the user's side
    try:
        seen = []

        def probe(x):
            end = time.perf_counter() + 0.0012  # heavy rows (over run.HEAVY_ROW_S): 1 worker starts the prefetch thread
            while time.perf_counter() < end:
                pass
            seen.append((threading.current_thread() is threading.main_thread(), get()))
            return x @ np.eye(2)  # a BLAS call

        d = ds.NumpySlicesDataset({"x": np.ones((300, 2, 2))}, shuffle=False).map(probe, ["x"], num_parallel_workers=workers)
        it = d.create_tuple_iterator(output_numpy=True)
        rows = [next(it)[0] for _ in range(20)]  # (fewer rows than the pass: it is not over)
        assert get() == 1  # the pass runs: the user's threads run BLAS on one thread too
        rows += [r[0] for r in it]
        if workers == 1:
            assert get() == 2  # the pass's end came after its thread let go
        it.stop()
        assert len(rows) == 300 and len(seen) == 300
        off_main = [count for main, count in seen if not main]
        assert len(off_main) >= 250 and set(off_main) == {1}
        assert get() == 2
    finally:
        setter(before)


def test_holds_nest_and_only_the_last_release_restores():
    get = _getter()
    setter = native_threads._blas_setters()[0]
    before = setter(2)
    try:
        native_threads.hold_one_blas_thread()
        native_threads.hold_one_blas_thread()
        native_threads.release_blas_threads()
        assert get() == 1
        native_threads.release_blas_threads()
        assert get() == 2
        native_threads.release_blas_threads()  # an extra release changes nothing
        assert get() == 2
    finally:
        setter(before)


FORK_WHILE_HELD = """
import os, sys, threading
import numpy as np
import headrace.dataset as ds
from headrace._util import forksafe
from headrace._engine.exec import native_threads

native_threads.hold_one_blas_thread()        # a pass of the parent's runs: counts saved
saved = list(native_threads._blas_saved)
locks = list(forksafe._locks)
held, leave = threading.Event(), threading.Event()

def holder():                                 # another thread holds every module lock at the fork
    for lock in locks:
        lock.acquire()
    held.set()
    leave.wait()
    for lock in reversed(locks):
        lock.release()

t = threading.Thread(target=holder)
t.start()
held.wait()
pid = os.fork()
if pid == 0:
    code = 1
    try:
        assert native_threads._blas_holders == 0 and native_threads._blas_saved == saved
        # a pipeline of the child's own: a prefetch thread (the BLAS hold) and 2 map threads
        d = ds.NumpySlicesDataset({"x": np.arange(50)}, shuffle=False).map(lambda x: x * 2, ["x"],
                                                                          num_parallel_workers=2)
        assert [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)] == list(range(0, 100, 2))
        assert native_threads._blas_holders == 0 and native_threads._blas_saved == []
        code = 0
    finally:
        os._exit(code)
leave.set()
t.join()
_, status = os.waitpid(pid, 0)
native_threads.release_blas_threads()
print(len(locks), os.waitstatus_to_exitcode(status))
"""


def test_a_child_forked_while_other_threads_hold_headrace_locks_runs_a_pipeline():
    # A fork copies a lock another thread holds as locked: a torch DataLoader worker forked that
    # way waited forever in the BLAS lock (1 run in 50-60). forksafe unlocks them in the child.
    from tests.helpers import run_together

    out = run_together([[sys.executable, "-c", FORK_WHILE_HELD]], {**os.environ, "PYTHONPATH": os.getcwd()},
                       timeout=120)
    count, code = out[0].split()
    assert int(count) >= 10 and code == "0"  # the module locks of what the script imported, all held
