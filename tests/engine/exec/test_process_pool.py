"""Worker pools at the engine level: same rows in every mode, failures named, transport fallbacks.

Pipelines are built from plan nodes with a tiny index sampler, so these tests depend on the
engine only. Functions and sources live at module level (spawned workers import this module).
"""
from __future__ import annotations

import json
import mmap
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from headrace._engine import options
from headrace._engine import plan as P
from headrace._engine.exec import launch, native_threads, process_pool, process_wire, shm, stage
from headrace._engine.run import PipelineRun
from headrace._util import rng

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


class Seq:
    """Index sampler: every row in order."""

    def num_samples(self, n, labels=None):
        return n

    def indices(self, ctx):
        return np.arange(ctx.num_rows)


class Rows:
    """Random-access source: row i is (float32 [i]*width, int32 i % 7); fails at ``fail_at``."""

    column_names = ("x", "y")

    def __init__(self, n=40, width=3, fail_at=None):
        self.n, self.width, self.fail_at = n, width, fail_at

    def __len__(self):
        return self.n

    def read(self, i):
        if i == self.fail_at:
            raise ValueError(f"bad row {i}")
        return np.full(self.width, i, np.float32), np.asarray(i % 7, np.int32)


class Stream:
    """Stream source with the same rows (read front to back, shipped to map workers)."""

    column_names = ("x", "y")

    def __init__(self, n=40, width=3):
        self.rows = Rows(n, width)

    def iterate(self):
        for i in range(self.rows.n):
            yield self.rows.read(i)


def noisy(x):
    return x * 10 + rng.sample_rng().integers(0, 1000)


def boom_at_5(x):
    if int(x.flat[0]) == 5:
        raise ValueError("boom at 5")
    return x


def slow(x):
    time.sleep(0.02)
    return x


def die_at_7(x):
    if int(x.flat[0]) == 7:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


def thread_caps(x):
    import ctypes  # noqa: PLC0415

    import cv2  # noqa: PLC0415 - the worker may load it late

    blas = 1
    for path in native_threads._loaded_native_pools():  # OpenBLAS's own count, where NumPy bundles it
        try:
            blas = ctypes.c_int.in_dll(ctypes.CDLL(path), "blas_cpu_number").value
            break
        except (OSError, ValueError):
            pass
    np.ones((64, 64)) @ np.ones((64, 64))
    return np.array([int(os.environ.get("OMP_NUM_THREADS", "0")), cv2.getNumThreads(), blas,
                     len(os.listdir("/proc/self/task")), os.getpid()])


def pipeline(n=40, workers=1, procs=False, batch=4, fn=noisy, source=None, src_workers=None, stream=False):
    if stream:
        src = P.StreamNode((), ("x", "y"), source or Stream(n), "GeneratorDataset", None, n)
    else:
        src = P.RandomAccessNode((), ("x", "y"), source or Rows(n), Seq(), "GeneratorDataset",
                                 src_workers or workers)
    node = P.MapNode((src,), ("x", "y"), fn, (0,), ("x",), (("out", 0), ("in", 1)), "map operation: [PyFunc]",
                     workers, procs)
    if batch:
        node = P.BatchNode((node,), ("x", "y"), batch)
    return node


def opts(**kw):
    return options.Options(seed=kw.pop("seed", 7), **kw)


def read_all(run, epochs=1):
    out = []
    for _ in range(epochs):
        while True:
            try:
                row = run.next_row()
            except StopIteration:
                out.append("END")
                break
            out.append([v.tolist() for v in row])
    return out


def read_all_from(launcher, run):
    """``read_all(run)``, once it is checked that ``run``'s process pool started its workers with
    ``launcher``; then closes ``run``."""
    try:
        assert run.tree.pool.launcher == launcher
        return read_all(run)
    finally:
        run.close()


def failure_within(run, rows):
    """The text of the RuntimeError that reading at most ``rows`` more rows of ``run`` raises."""
    with pytest.raises(RuntimeError) as e:
        for _ in range(rows):
            run.next_row()
    return str(e.value)


def rows_of(plan, epochs=2, **kw):
    run = PipelineRun(plan, epochs, opts(**kw))
    try:
        return read_all(run, epochs)
    finally:
        run.close()


MODES = [
    pytest.param(2, False, "fork", id="threads2"),
    pytest.param(3, False, "fork", id="threads3"),
    pytest.param(1, True, "fork", id="fork1"),
    pytest.param(3, True, "fork", id="fork3"),
    pytest.param(2, True, "spawn", id="spawn2"),
]


@pytest.mark.parametrize("nworkers, procs, method", MODES)
@pytest.mark.parametrize("shape", ["batched", "rows", "stream"])
def test_same_rows_as_serial_in_every_mode(nworkers, procs, method, shape):
    kw = dict(batch=4 if shape == "batched" else 0, stream=shape == "stream", n=23)
    serial = rows_of(pipeline(**kw))
    assert rows_of(pipeline(workers=nworkers, procs=procs, **kw), multiprocessing_start_method=method) == serial
    assert len(serial) == (2 * (6 + 1) if shape == "batched" else 2 * (23 + 1))


def test_source_maps_and_batch_run_as_one_stage_in_the_workers():
    run = PipelineRun(pipeline(workers=2, procs=True), 1, opts())
    try:
        tree = run.tree
        assert isinstance(tree, stage.StageIter) and tree.mode == stage.PROCESSES
        assert [type(m).__name__ for m in tree.members] == ["ReadStep", "MapStep", "BatchStep"]
        assert [m.op_id for m in tree.members] == [1, 2, 3]  # the ids the ops get one by one
        assert read_all(run)[0][1] == [0, 1, 2, 3]
    finally:
        run.close()


def test_a_serial_source_is_not_read_by_parallel_map_threads():
    # One reader means the source may not bear concurrent reads: it stays out of the 2-thread stage.
    run = PipelineRun(pipeline(workers=2, src_workers=1, batch=0), 1, opts())
    try:
        assert run.tree.source is None and run.tree.parents[0].mode == stage.INLINE
    finally:
        run.close()


def test_spawn_sends_lambdas_and_closures():
    offset = np.float32(100)

    def closure(x):
        return x + offset

    plan = pipeline(workers=2, procs=True, fn=lambda x: closure(x) * 2, n=9, batch=0)
    got = rows_of(plan, epochs=1, multiprocessing_start_method="spawn")
    assert got[:2] == [[[200.0] * 3, 0], [[202.0] * 3, 1]] and got[-1] == "END"


class Unpicklable:
    def __init__(self):
        self.lock = threading.Lock()

    def __call__(self, x):
        return x


def test_an_object_that_cannot_be_sent_is_named_when_the_pipeline_starts():
    with pytest.raises(TypeError) as e:
        PipelineRun(pipeline(workers=2, procs=True, fn=Unpicklable()), 1, opts(multiprocessing_start_method="spawn"))
    msg = str(e.value)
    assert "map operation: [PyFunc]" in msg and "Unpicklable" in msg and "spawn" in msg
    assert "lock" in msg


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_error_in_a_worker_process_comes_back_with_its_traceback(method):
    run = PipelineRun(pipeline(workers=2, procs=True, fn=boom_at_5, batch=0), 1,
                      opts(multiprocessing_start_method=method))
    try:
        got = [int(run.next_row()[0][0]) for _ in range(5)]
        assert got == [0, 1, 2, 3, 4]  # the rows before the failing one are delivered
        with pytest.raises(RuntimeError) as e:
            run.next_row()
    finally:
        run.close()
    msg = str(e.value)
    assert msg.startswith("Exception thrown from user defined Python function in dataset. \n\n" + "-" * 66)
    assert "map operation: [PyFunc] failed at column: ['x'], sample index: 5. Error description:" in msg
    assert 'raise ValueError("boom at 5")' in msg and "ValueError: boom at 5" in msg
    assert "in boom_at_5" in msg
    assert isinstance(e.value.__cause__, ValueError)
    assert any("in worker" in n and "pid" in n for n in e.value.__notes__)


def test_source_read_error_in_a_worker_names_the_index():
    plan = pipeline(workers=2, procs=True, source=Rows(20, fail_at=7), batch=0)
    run = PipelineRun(plan, 1, opts())
    try:
        assert [int(run.next_row()[1]) for _ in range(7)] == [i % 7 for i in range(7)]
        with pytest.raises(RuntimeError, match=r"GeneratorDataset failed at sample index: 7[\s\S]*ValueError: bad row 7"):
            run.next_row()
        with pytest.raises(RuntimeError, match="bad row 7"):  # a failed run keeps saying why
            run.next_row()
    finally:
        run.close()


def test_a_killed_worker_is_reported_with_pid_signal_and_op():
    run = PipelineRun(pipeline(n=400, workers=2, procs=True, fn=slow, batch=2), 1, opts())
    try:
        run.next_row()
        victim = run.tree.pool.pids[1]
        os.kill(victim, signal.SIGKILL)
        t0 = time.monotonic()
        msg = failure_within(run, 400)
        assert time.monotonic() - t0 < 10
    finally:
        run.close()
    assert f"worker process {victim}" in msg and "SIGKILL" in msg
    assert "GeneratorDataset -> map operation: [PyFunc] -> batch operation" in msg


def test_a_worker_killed_before_its_segment_is_opened_is_reported_killed(monkeypatch):
    # The result's memfd is opened through /proc/<writer>/fd/<n>: a writer killed just after sending
    # is gone from /proc before the fork server reports its exit. That is a death, not a broken segment.
    real = shm.unpack_rows
    killed = []

    def kill_writer_first(head, name, spans, reader, key):
        if not killed and name is not None and name.startswith("/proc/"):
            pid = int(name.split("/")[2])
            os.kill(pid, signal.SIGKILL)
            while os.path.exists(f"/proc/{pid}/fd/0"):  # until the kernel has closed its files
                time.sleep(0.01)
            killed.append(pid)
            unreported.append(pid)
        return real(head, name, spans, reader, key)

    # The window the race opens: the server has not reported the death yet, so the pool's next
    # look at the worker still sees it alive (once).
    unreported: list[int] = []
    real_alive = process_pool._Worker.alive

    def alive_until_reported(self):
        if unreported and self.pid == unreported[0]:
            unreported.pop()
            return True
        return real_alive(self)

    monkeypatch.setattr(shm, "unpack_rows", kill_writer_first)
    monkeypatch.setattr(process_pool._Worker, "alive", alive_until_reported)
    run = PipelineRun(pipeline(n=40, workers=2, procs=True, fn=slow, batch=2), 1, opts())
    try:
        assert run.tree.pool.launcher == "server"
        msg = failure_within(run, 40)
    finally:
        run.close()
    assert killed and f"worker process {killed[0]}" in msg, msg
    assert "was killed by signal 9 (SIGKILL)" in msg, msg


def test_workers_start_once_and_serve_every_epoch_and_a_restore():
    run = PipelineRun(pipeline(workers=2, procs=True), 3, opts())
    try:
        read_all(run, 1)
        pids = list(run.tree.pool.pids)
        state = run.get_state()
        read_all(run, 1)
        assert run.tree.pool.pids == pids
        run.set_state(state)
        assert run.tree.pool.pids == pids  # the rebuilt tree took over the same processes
        assert read_all(run, 1)[-1] == "END"
    finally:
        run.close()


@pytest.mark.parametrize("procs", [False, True])
def test_resume_from_any_step_with_workers(procs):
    plan = pipeline(n=13, workers=2, procs=procs, batch=3)
    run = PipelineRun(plan, 2, opts())
    full, states = [], []
    for _ in range(2):
        while True:
            states.append((len(full), json.loads(json.dumps(run.get_state()))))
            try:
                full.append([v.tolist() for v in run.next_row()])
            except StopIteration:
                full.append("END")
                break
    run.close()
    for pos, state in states[::2]:
        fresh = PipelineRun(plan, 2, opts(seed=99))  # the seed comes from the state
        fresh.set_state(state)
        rest = read_all(fresh, full[pos:].count("END"))
        fresh.close()
        assert rest == full[pos:], pos


def test_big_rows_travel_both_ways_through_shared_memory(monkeypatch):
    used = []
    real = shm.create
    monkeypatch.setattr(shm, "create", lambda name, size: used.append(size) or real(name, size))
    plan = pipeline(n=12, workers=2, procs=True, stream=True, batch=0, source=Stream(12, 40000))
    assert rows_of(plan, epochs=1) == rows_of(pipeline(n=12, stream=True, batch=0, source=Stream(12, 40000)),
                                              epochs=1)
    assert used  # the main process wrote task slots (rows for the map workers)


def test_pipes_when_shared_memory_is_off_or_short(monkeypatch):
    plan = pipeline(n=10, workers=2, procs=True, batch=5, source=Rows(10, 20000))
    expected = rows_of(pipeline(n=10, batch=5, source=Rows(10, 20000)))
    assert rows_of(plan, enable_shared_mem=False) == expected
    monkeypatch.setattr(shm, "_memfd", False)  # anonymous segments do not live in /dev/shm
    monkeypatch.setattr(shm, "free_bytes", lambda: 1 << 20)
    process_pool._warned.clear()
    with pytest.warns(RuntimeWarning, match=r"/dev/shm has only 1 MiB free.*--shm-size"):
        assert rows_of(plan) == expected


def test_a_full_dev_shm_falls_back_to_pipes_instead_of_a_bus_error(monkeypatch):
    def full(name, size):
        raise shm.ShmFull(28, "no room")

    monkeypatch.setattr(shm, "create", full)
    monkeypatch.setattr(launch, "single_threaded", lambda: True)  # fork here: workers inherit the patch
    process_pool._warned.clear()
    plan = pipeline(n=10, workers=2, procs=True, batch=5, source=Rows(10, 20000))
    with pytest.warns(RuntimeWarning, match="/dev/shm is full"):
        assert rows_of(plan) == rows_of(pipeline(n=10, batch=5, source=Rows(10, 20000)))


def test_fallocate_reserves_pages_so_a_full_dev_shm_raises_early():
    with pytest.raises(shm.ShmFull):
        shm.create(f"hrtest{os.getpid():x}_huge", (shm.free_bytes() or 0) + (1 << 40))
    assert not [n for n in os.listdir(shm.SHM_DIR) if n.startswith(f"hrtest{os.getpid():x}")]


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_native_thread_pools_are_capped_inside_workers(method):
    cv2 = pytest.importorskip("cv2")
    before = cv2.getNumThreads()
    cv2.setNumThreads(2)
    try:
        got = rows_of(pipeline(n=4, workers=2, procs=True, fn=thread_caps, batch=0), epochs=1,
                      multiprocessing_start_method=method)
    finally:
        cv2.setNumThreads(before)
    # OMP env, OpenCV, OpenBLAS: 1 each; threads: the worker's main thread, its pipe watcher and
    # its stall doctor (watchdog.start_doctor).
    assert {tuple(r[0][:4]) for r in got[:-1]} == {(1, 1, 1, 3)}
    assert {r[0][4] for r in got[:-1]} - {os.getpid()}  # it did run in other processes


def test_many_workers_and_deep_prefetch_under_a_low_fd_limit():
    script = textwrap.dedent(f"""
        import os, resource, sys
        sys.path.insert(0, {ROOT!r})
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
        from tests.engine.exec.test_process_pool import pipeline, opts, read_all
        from headrace._engine.run import PipelineRun
        runs = [PipelineRun(pipeline(n=200, workers=12, procs=True, batch=2), 1, opts(), prefetch=256)
                for _ in range(3)]
        out = [read_all(r) for r in runs]
        for r in runs:
            r.close()
        assert all(len(o) == 101 for o in out), [len(o) for o in out]
        print("fds", len(os.listdir("/proc/self/fd")))
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 0, res.stderr[-3000:]
    assert int(res.stdout.split()[-1]) < 20


def _mem_available() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


class Huge:
    """Two rows of 1.1 GB each (views of one zero page run: cheap until batched)."""

    column_names = ("x",)

    def __len__(self):
        return 2

    def read(self, i):
        return (np.broadcast_to(np.uint8(i), (1_100_000_000,)),)


@pytest.mark.slow
@pytest.mark.skipif(_mem_available() < (12 << 30), reason="needs ~8 GB of free memory")
def test_a_batch_larger_than_2gib_comes_back_whole():
    src = P.RandomAccessNode((), ("x",), Huge(), Seq(), "GeneratorDataset", 1)
    m = P.MapNode((src,), ("x",), np.ascontiguousarray, (0,), ("x",), (("out", 0),), "map operation: [PyFunc]", 1, True)
    run = PipelineRun(P.BatchNode((m,), ("x",), 2), 1, opts(), prefetch=1)
    try:
        (batch,) = run.next_row()
        assert batch.shape == (2, 1_100_000_000) and batch.nbytes > (2 << 30)
        assert batch[0, -1] == 0 and batch[1, 0] == 1 and batch[1, -1] == 1
        del batch
        with pytest.raises(StopIteration):
            run.next_row()
    finally:
        run.close()


def test_work_in_flight_is_dropped_when_a_pass_restarts_early():
    # take(5) stops each pass early while up to 2 x 16 tasks are in flight; repeat restarts it.
    def plan(procs):
        inner = pipeline(n=40, workers=2, procs=procs, batch=0)
        return P.RepeatNode((P.TakeNode((inner,), ("x", "y"), 5),), ("x", "y"), 3)

    serial = rows_of(P.RepeatNode((P.TakeNode((pipeline(n=40, batch=0),), ("x", "y"), 5),), ("x", "y"), 3))
    assert rows_of(plan(True)) == serial and rows_of(plan(False)) == serial
    assert [r[1] for r in serial[:15]] == [0, 1, 2, 3, 4] * 3 and serial[15] == "END"


def returns_unpicklable(x):
    return {"f": lambda: 0}


def test_a_result_that_cannot_be_sent_back_is_an_error_at_its_row():
    run = PipelineRun(pipeline(n=4, workers=1, procs=True, fn=returns_unpicklable, batch=0), 1, opts())
    try:
        with pytest.raises(RuntimeError, match="a result could not be sent back from the worker process"):
            run.next_row()
    finally:
        run.close()


def marked_for_processes(node):
    """The node with ``processes=True``. RandomAccessNode and BatchNode do not carry the field yet
    (the public layer cannot ask for it); the engine already honours it when present."""
    object.__setattr__(node, "processes", True)
    return node


def add_noise_per_batch(x, y, info):
    return [v + rng.sample_rng().integers(0, 9) for v in x], y


def test_a_source_marked_for_processes_is_read_in_worker_processes():
    src = marked_for_processes(P.RandomAccessNode((), ("x", "y"), Rows(20), Seq(), "GeneratorDataset", 2))
    run = PipelineRun(src, 1, opts())
    try:
        assert run.tree.mode == stage.PROCESSES and len(run.tree.pool.pids) == 2
        assert [int(r[1]) for r in read_all(run)[:-1]] == [i % 7 for i in range(20)]
    finally:
        run.close()
    one = P.RandomAccessNode((), ("x", "y"), Rows(5), Seq(), "GeneratorDataset", 1)
    run = PipelineRun(marked_for_processes(one), 1, opts())  # one worker: read in place, like MindSpore
    assert run.tree.mode == stage.INLINE
    run.close()


def test_a_per_batch_map_marked_for_processes_runs_in_worker_processes():
    def plan(procs):
        src = P.StreamNode((), ("x", "y"), Stream(10), "GeneratorDataset", None, 10)
        b = P.BatchNode((src,), ("x", "y"), 3, per_batch_map=add_noise_per_batch, input_idx=(0, 1),
                        layout=(("out", 0), ("out", 1)), out_count=2, num_workers=2)
        return marked_for_processes(b) if procs else b

    run = PipelineRun(plan(True), 1, opts())
    assert run.tree.mode == stage.PROCESSES
    run.close()
    assert rows_of(plan(True)) == rows_of(plan(False))


def test_close_does_not_hang_on_a_sender_blocked_by_a_full_pipe(monkeypatch):
    # Pipes transport, 1.2 MB rows, 4 KiB pipes, and a worker that stops reading (SIGSTOP): the
    # prefetch thread blocks writing the next task while holding the pool's lock.
    monkeypatch.setattr(process_wire, "PIPE_SIZE", 4096)
    plan = pipeline(n=64, workers=1, procs=True, stream=True, batch=0, source=Stream(64, 300_000))
    run = PipelineRun(plan, 1, opts(enable_shared_mem=False), prefetch=64)
    run.next_row()
    os.kill(run.tree.pool.pids[0], signal.SIGSTOP)
    time.sleep(0.3)
    t0 = time.monotonic()
    run.close()
    assert time.monotonic() - t0 < 8


@pytest.mark.parametrize("batch", [1, 4])
def test_a_killed_worker_names_the_samples_it_was_running(batch):
    run = PipelineRun(pipeline(n=40, workers=2, procs=True, fn=die_at_7, batch=batch), 1, opts())
    try:
        with pytest.raises(RuntimeError) as e:
            while True:
                run.next_row()
    finally:
        run.close()
    msg = str(e.value)
    assert "was killed by signal 9 (SIGKILL)" in msg, msg
    # worker 1 runs tasks 1, 3, 5, 7, ...: it died in the task holding sample 7, or the result of
    # the task before it (quick: held back to travel with the next) is missing too
    one = {1: ["7", "5 or 7", "7 or 9"], 4: ["4 to 7", "4 to 7 or 12 to 15"]}[batch]
    said = re.search(r"running samples? (.+) of pass 0\.", msg)
    assert said and said[1] in one, msg
    assert e.value.index == (7 if said[1] == "7" else None)


def die_at_150(x):
    if int(x.flat[0]) == 150:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


@pytest.mark.parametrize("shared", [True, False])
def test_a_killed_worker_that_held_results_back_names_the_task_it_ran(shared):
    # Quick one-row tasks (batches of one): a worker holds up to MAX_HELD results back, so the first result missing
    # can be several tasks before the one it died in. Its progress page names that one exactly;
    # without shared memory there is no page, a worker holds one result, and two tasks are named.
    run = PipelineRun(pipeline(n=400, workers=2, procs=True, fn=die_at_150, batch=1), 1,
                      opts(enable_shared_mem=shared))
    got = []
    try:
        with pytest.raises(RuntimeError) as e:
            while True:
                got.append(int(run.next_row()[0].flat[0]))
    finally:
        run.close()
    msg = str(e.value)
    assert "was killed by signal 9 (SIGKILL)" in msg, msg
    assert got == list(range(len(got))) and len(got) <= 150  # in order, none after the lost ones
    said = re.search(r"running samples? (.+) of pass 0\.", msg)
    if shared:
        assert said and said[1] == "150", msg
        assert e.value.index == 150
    else:
        assert said and said[1] in ("150", "148 or 150", "150 or 152"), msg


def test_progress_page_reads_the_running_task_only():
    page = bytearray(8)
    assert process_wire.running_task(page) is None  # nothing begun
    process_wire.set_progress(page, 0, True)
    assert process_wire.running_task(page) == 0
    process_wire.set_progress(page, 0, False)
    assert process_wire.running_task(page) is None  # between tasks
    process_wire.set_progress(page, 12345, True)
    assert process_wire.running_task(page) == 12345
    closed = mmap.mmap(-1, 4096)
    process_wire.set_progress(closed, 3, True)
    assert process_wire.running_task(closed) == 3
    closed.close()
    assert process_wire.running_task(closed) is None  # closed (the pool's close unmaps it)
    assert process_wire.running_task(bytearray(4)) is None
