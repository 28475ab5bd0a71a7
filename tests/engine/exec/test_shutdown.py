"""Stopping early leaves nothing behind; a dying parent leaves no orphans.

"Nothing" is checked by listing, before and after: this process's children (/proc), its threads,
its shared-memory segments (/dev/shm names with this process's prefix), the temp dir and fds.
"""
from __future__ import annotations

import functools
import gc
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

import pytest

from headrace._engine.exec import forkserver, shm
from headrace._engine.run import PipelineRun
from tests.engine.exec.test_process_pool import ROOT, opts, pipeline, slow

FORK_AND_SPAWN = ["fork", "spawn"]


def children(pid: int | None = None) -> set[int]:
    """Live or zombie children of ``pid`` (default: this process)."""
    pid = os.getpid() if pid is None else pid
    out = set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.add(int(d))
    return out


def workers_and_children() -> set[int]:
    """This process's children and the workers its fork server forked (not the server itself,
    nor its idle spares: they live as long as this process, see forkserver.py)."""
    server = forkserver.current()
    if server is None or server.dead:
        return children()
    return (children() | children(server.pid)) - {server.pid} - server.spares


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def still_alive(pids: list[int], within: float) -> list[int]:
    """The ``pids`` still alive after waiting up to ``within`` seconds for all of them to go."""
    deadline = time.monotonic() + within
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def segments() -> set[str]:
    prefix = f"hr{os.getpid():x}_"
    return {n for n in os.listdir(shm.SHM_DIR) if n.startswith(prefix)}


def temp_files() -> set[str]:
    prefix = f"hr{os.getpid():x}_"
    return {n for n in os.listdir(tempfile.gettempdir()) if n.startswith(prefix)}


def our_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("headrace")}


def fds() -> set[int]:
    server = forkserver.current()
    own = {server.sock.fileno()} if server is not None and not server.dead else set()
    listed = {int(fd) for fd in os.listdir("/proc/self/fd")}
    return {fd for fd in listed if _is_open(fd)} - own  # not the listing's own, closed by now


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


def snapshot() -> dict:
    return {"children": workers_and_children(), "threads": our_threads(), "segments": segments(),
            "temp": temp_files(), "fds": fds()}


def assert_all_released(before: dict, within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while True:
        gc.collect()
        now = snapshot()
        left = {k: now[k] - before[k] for k in now}
        if not any(left.values()) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert not any(left.values()), f"left behind: {left}"


def make_run(method="fork", n=400, batch=4):
    return PipelineRun(pipeline(n=n, workers=2, procs=True, fn=slow, batch=batch), 1,
                       opts(multiprocessing_start_method=method))


def busy_rows(run, n=3, pause=0.05):
    """Reads ``n`` rows like a training loop (time spent between rows), so prefetching starts."""
    for _ in range(n):
        run.next_row()
        time.sleep(pause)


def test_helpers_see_workers():
    before = snapshot()
    run = make_run()
    busy_rows(run)
    assert set(run.tree.pool.pids) <= workers_and_children() - before["children"]
    assert our_threads() - before["threads"]  # the prefetch thread
    run.close()
    assert_all_released(before)


@pytest.mark.parametrize("method", FORK_AND_SPAWN)
def test_stop_mid_epoch_releases_everything(method):
    before = snapshot()
    run = make_run(method)
    for _ in range(3):
        run.next_row()
    run.close()
    run.close()  # idempotent
    assert_all_released(before)


def test_break_out_of_a_public_style_loop_then_drop_the_iterator():
    before = snapshot()

    class It:  # what the public iterator does: a finalizer closes the run
        def __init__(self):
            self.run = make_run()

        def __iter__(self):
            return self

        def __next__(self):
            return self.run.next_row()

        def __del__(self):
            self.run.close()

    for i, _ in enumerate(It()):
        if i == 2:
            break
    assert_all_released(before)


def test_dropping_a_run_without_close_is_caught_by_its_finalizer():
    before = snapshot()
    run = make_run()
    run.next_row()
    del run
    assert_all_released(before)


def test_a_run_in_a_reference_cycle_is_released_by_gc():
    before = snapshot()
    holder: dict = {}
    holder["self"] = holder
    holder["run"] = make_run()
    holder["run"].next_row()
    del holder
    gc.collect()
    assert_all_released(before)


def blocks_until_released(folder, x):
    """A map function that says it started (a file in ``folder``), then waits for the test to let
    it go (another file): the consumer is then surely waiting for its row."""
    open(os.path.join(folder, f"started-{os.getpid()}"), "w").close()
    deadline = time.monotonic() + 60
    while not os.path.exists(os.path.join(folder, "release")) and time.monotonic() < deadline:
        time.sleep(0.005)
    return x


def test_keyboard_interrupt_while_waiting_for_a_row(tmp_path):
    main = threading.main_thread().ident
    if threading.get_ident() != main:
        pytest.skip("signals reach the main thread only")
    # a suite started as a background job has SIGINT ignored: Ctrl-C is what this test is about
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    before = snapshot()
    fn = functools.partial(blocks_until_released, str(tmp_path))
    run = PipelineRun(pipeline(n=40, workers=2, procs=True, fn=fn, batch=20), 1, opts())

    def interrupt_once_a_worker_runs():
        deadline = time.monotonic() + 60
        while not any(n.startswith("started-") for n in os.listdir(tmp_path)) and time.monotonic() < deadline:
            time.sleep(0.005)
        signal.pthread_kill(main, signal.SIGINT)

    interrupter = threading.Thread(target=interrupt_once_a_worker_runs)
    interrupter.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            while True:
                run.next_row()
    finally:
        interrupter.join()
        (tmp_path / "release").touch()
        signal.signal(signal.SIGINT, previous)
    assert any(n.startswith("started-") for n in os.listdir(tmp_path))  # it came while a worker ran
    run.close()
    assert_all_released(before)


def test_an_interrupted_consumer_loop_then_stop():
    before = snapshot()
    run = make_run()
    with pytest.raises(KeyboardInterrupt):
        for _ in range(100):
            run.next_row()
            raise KeyboardInterrupt
    run.close()
    assert_all_released(before)


def test_thread_workers_and_prefetch_thread_end_on_close():
    before = snapshot()
    run = PipelineRun(pipeline(n=400, workers=3, procs=False, fn=slow, batch=4), 1, opts())
    busy_rows(run)
    assert len(our_threads() - before["threads"]) >= 4
    run.close()
    assert_all_released(before)


def test_a_failed_run_releases_everything_on_close():
    before = snapshot()
    run = make_run()
    os.kill(run.tree.pool.pids[0], signal.SIGKILL)
    with pytest.raises(RuntimeError, match="SIGKILL"):
        for _ in range(500):
            run.next_row()
    run.close()
    assert_all_released(before)


@pytest.mark.parametrize("method", FORK_AND_SPAWN)
@pytest.mark.parametrize("where", ["main", "thread"])
def test_a_killed_parent_leaves_no_orphan_workers_and_no_shared_memory(method, where):
    # From the main thread workers also get PR_SET_PDEATHSIG; from another thread they rely on
    # their task pipe's EOF and on polling their parent's pid. Either way the last word is theirs:
    # they unlink the segments (and spawn payload) the dead parent made under its pool prefix.
    script = textwrap.dedent(f"""
        import sys, threading, time
        sys.path.insert(0, {ROOT!r})
        from tests.engine.exec.test_process_pool import pipeline, opts, slow
        from headrace._engine.run import PipelineRun
        def start():
            run = PipelineRun(pipeline(n=10000, workers=2, procs=True, fn=slow, batch=4), 1,
                              opts(multiprocessing_start_method={method!r}))
            run.next_row()
            print(*run.tree.pool.pids, flush=True)
            time.sleep(60)
        if {where!r} == "main":
            start()
        else:
            threading.Thread(target=start).start()
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2 and all(alive(p) for p in pids)
    finally:
        proc.kill()
        proc.wait()
    assert not still_alive(pids, 10)
    prefix = f"hr{proc.pid:x}_"
    assert not [n for n in os.listdir("/dev/shm") if n.startswith(prefix)]


def test_stopping_ends_thread_workers_between_rows_not_after_their_whole_batch():
    # A task of a stage topped by a batch is the whole batch (here 40 rows of 5 ms): stopping used
    # to wait for each worker's task (W2's 128 images: a closing loader took 0.3-0.7 s).
    import numpy as np

    import headrace.dataset as ds
    calls = []

    def slow_row(x):
        calls.append(int(x))
        time.sleep(0.005)
        return x

    data = ds.NumpySlicesDataset({"x": np.arange(400)}, shuffle=False).map(
        slow_row, input_columns="x", num_parallel_workers=2).batch(40)
    it = data.create_tuple_iterator(num_epochs=1, output_numpy=True)
    assert next(it)[0].tolist() == list(range(40))
    deadline = time.monotonic() + 30
    while len(calls) < 130 and time.monotonic() < deadline:  # the workers are inside later batches
        time.sleep(0.001)
    before = len(calls)
    it.stop()
    after = len(calls)
    assert after - before <= 2  # each worker ends the row it is in, and starts no other
    assert not [t.name for t in threading.enumerate() if t.name.startswith("headrace-stage")]
    time.sleep(0.05)
    assert len(calls) == after
