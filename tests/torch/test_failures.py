"""Failure behaviour of headrace.torch.Loader: a loop that stops early, raises or is interrupted
leaves no thread, process or segment; errors reach the loop with the op, column and sample while
the device queue is full; framework imports before worker processes neither hang nor warn.

Each scenario runs in a subprocess with a hard timeout and reports what it saw as JSON, on both
paths of the device queue (``path``): "direct" (CPU tensors with nothing to pin: the pipeline's
prefetch thread is the queue) and "thread" (the device queue's own thread and ``arrive``, the path
of CUDA and pinned memory, forced here on the CPU)."""
import json
import os
import re
import signal
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

PRELUDE = textwrap.dedent("""
    import gc, json, os, signal, sys, threading, time
    # a suite started as a background job runs this with SIGINT ignored; Ctrl-C is tested here
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy as np
    import headrace.dataset as ds
    from headrace.torch import Loader
    from tests.conftest import descendants, segments_of

    def slow(x):
        time.sleep(0.002)
        return x

    def pipeline(n=200, fn=slow):
        return ds.NumpySlicesDataset({"x": np.arange(n)}, shuffle=False).map(
            fn, input_columns="x", num_parallel_workers=2, python_multiprocessing=True).batch(2)

    def queue_threads():
        # the device queue: a thread of its own, or (CPU tensors, nothing to pin) the pipeline's
        # prefetch thread
        return sorted(t.name for t in threading.enumerate()
                      if "device queue" in t.name or t.name.startswith("headrace-prefetch"))

    from headrace._engine.exec import forkserver

    def workers():
        # live processes this one started, but the worker fork server and its idle spares (they
        # live as long as this process, by design: see forkserver.py); the workers it forked count
        server = forkserver.current()
        if server is None or server.dead:
            return descendants(os.getpid())
        return descendants(os.getpid()) - {server.pid} - server.spares

    def wait_gone(deadline=30):
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            if not workers() and not segments_of({os.getpid()}) and not queue_threads():
                break
            time.sleep(0.05)
        return {"children": sorted(workers()), "segments": sorted(segments_of({os.getpid()})),
                "threads": queue_threads()}
""")


THREAD_PATH = "from tests.helpers import force_torch_device_thread\nforce_torch_device_thread()\n"


@pytest.fixture(params=["direct", "thread"])
def path(request):
    return request.param


def run(body, timeout=180, sigint_after=None, path="direct"):
    env = {**os.environ, "PYTHONPATH": os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", "")}
    script = PRELUDE + (THREAD_PATH if path == "thread" else "") + textwrap.dedent(body)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        if sigint_after is not None:
            # wait for the script to say it is inside the loop, then interrupt it
            line = proc.stdout.readline()
            assert line.strip() == "in loop", line + proc.stderr.read()
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the scenario hung: {err[-3000:]}")
    assert proc.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1]), err


def test_breaking_out_ends_the_thread_and_the_workers_without_close(path):
    # The next epoch after a break starts its pipeline anew, so the break releases this one at
    # once (it used to wait 0.5 s for the thread's next batch while the workers went on decoding).
    report, _ = run("""
        loader = Loader(pipeline(), queue_depth=4)
        for i, b in enumerate(loader):
            if i == 3:
                during = [t for t in queue_threads() if "device queue" in t]
                break
        time.sleep(0)  # the epoch generator is closed by now (reference counting)
        after_break = queue_threads()
        gone = wait_gone()
        again = [b[0].tolist() for b in loader][:2]  # the loader reads the next epoch after it
        loader.close()
        print(json.dumps({"during": during, "after_break": after_break, "again": len(again), **gone}))
    """, path=path)
    during = ["headrace.torch.Loader device queue"] if path == "thread" else []
    assert report == {"during": during, "after_break": [], "again": 2, "children": [], "segments": [], "threads": []}


def test_an_exception_in_the_loop_releases_everything(path):
    report, _ = run("""
        try:
            with Loader(pipeline(), queue_depth=2) as loader:
                for i, b in enumerate(loader):
                    if i == 5:
                        raise KeyError("training step failed")
        except KeyError as e:
            caught = str(e)
        print(json.dumps({"caught": caught, **wait_gone()}))
    """, path=path)
    assert report == {"caught": "'training step failed'", "children": [], "segments": [], "threads": []}


def test_a_dropped_loader_releases_everything(path):
    report, _ = run("""
        loader = Loader(pipeline(), queue_depth=2)
        it = iter(loader)
        next(it)
        del it, loader
        gc.collect()
        print(json.dumps(wait_gone()))
    """, path=path)
    assert report == {"children": [], "segments": [], "threads": []}


def test_ctrl_c_in_the_loop_releases_everything(path):
    report, _ = run("""
        loader = Loader(pipeline(n=100000), queue_depth=2)
        try:
            for i, b in enumerate(loader):
                if i == 2:
                    print("in loop", flush=True)
                time.sleep(0.01)
            outcome = "finished"
        except KeyboardInterrupt:
            outcome = "interrupted"
        loader.close()
        print(json.dumps({"outcome": outcome, **wait_gone()}))
    """, sigint_after=True, path=path)
    assert report == {"outcome": "interrupted", "children": [], "segments": [], "threads": []}


@pytest.mark.parametrize("depth", [1, 3])
def test_user_error_with_a_full_device_queue_reaches_the_loop(depth, path):
    report, _ = run(f"""
        def fail_at_31(x):
            if int(x) == 31:
                raise ZeroDivisionError("bad sample")
            return x
        loader = Loader(pipeline(fn=fail_at_31), queue_depth={depth})
        got = 0
        try:
            for b in loader:
                time.sleep(0.02)  # a slow training step: the device queue is full when the error comes
                got += 1
        except Exception as e:
            error = type(e).__name__
            text = str(e)
        loader.close()
        print(json.dumps({{"error": error, "text": text, "got": got, **wait_gone()}}))
    """, path=path)
    assert report["error"] == "PipelineError"
    assert "map operation: [PyFunc] failed at column: ['x'], sample index: 31" in report["text"]
    assert "ZeroDivisionError: bad sample" in report["text"]
    assert report["got"] == 15  # rows 0..29 in batches of 2; the batch holding row 31 fails
    assert (report["children"], report["segments"], report["threads"]) == ([], [], [])


def test_a_killed_worker_with_a_full_device_queue_reaches_the_loop(path):
    report, _ = run("""
        def die_at_41(x):
            if int(x) == 41:
                os.kill(os.getpid(), signal.SIGKILL)
            return x
        loader = Loader(pipeline(fn=die_at_41), queue_depth=1)
        got = 0
        try:
            for b in loader:
                time.sleep(0.02)
                got += 1
        except Exception as e:
            error = type(e).__name__
            text = str(e)
        loader.close()
        print(json.dumps({"error": error, "text": text, "got": got, **wait_gone()}))
    """, path=path)
    assert report["error"] == "PipelineError"
    # (the map and the batch run as one stage in the workers: both are named)
    assert "map operation: [PyFunc] -> batch operation failed at column: ['x']. worker process" in report["text"]
    assert "killed by signal 9 (SIGKILL)" in report["text"]
    # the task it died on is named: sample 41 is in it
    found = re.search(r"running samples? (.+?) of pass 0", report["text"])
    assert found, report["text"]
    spans = [[int(x) for x in part.split(" to ")] for part in found[1].split(" or ")]
    assert any(s[0] <= 41 <= s[-1] for s in spans) and all(s[-1] - s[0] < 64 for s in spans), found[0]
    assert report["got"] <= 20
    assert (report["children"], report["segments"], report["threads"]) == ([], [], [])


@pytest.mark.parametrize("framework", ["torch", "jax"])
def test_framework_threads_then_worker_processes_neither_hang_nor_warn(framework):
    if framework == "jax":
        pytest.importorskip("jax")
    start = {"torch": "import torch\ntorch.set_num_threads(2)\n_ = (torch.ones(256, 256) @ torch.ones(256, 256)).sum()",
             "jax": "import jax, jax.numpy as jnp\n_ = float(jnp.ones((64, 64)).sum())"}[framework]
    report, err = run(start + """
import warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    data = pipeline(n=40)
    epochs = [[b[0].tolist() for b in Loader(data)] for _ in range(2)]
    plain = [r[0].tolist() for r in pipeline(n=40).create_tuple_iterator(output_numpy=True, num_epochs=1)]
print(json.dumps({"same": epochs[0] == plain and epochs[1] == plain,
                  "warnings": [str(w.message)[:200] for w in caught], **wait_gone()}))
""")
    assert report == {"same": True, "warnings": [], "children": [], "segments": [], "threads": []}
    assert "fork" not in err.lower() and "warning" not in err.lower(), err[-2000:]
