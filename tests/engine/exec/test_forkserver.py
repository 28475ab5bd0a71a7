"""Workers never forked from a process with threads; nothing named in /dev/shm; honest exit reports.

Scenarios that used to hang run in a subprocess with a hard timeout (issue 12 items 1, 2, 8).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import types

import numpy as np
import pytest

from headrace._engine.exec import forkserver, launch, process_pool, process_start
from headrace._engine.run import PipelineRun
from tests.engine.exec.test_shutdown import alive, children, still_alive
from tests.engine.exec.test_process_pool import (ROOT, Unpicklable, failure_within, opts, pipeline, read_all,
                                                  read_all_from, rows_of, slow)


def run_script(body: str, timeout: float = 120, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    script = f"import sys\nsys.path.insert(0, {ROOT!r})\nimport numpy as np\n" + body
    env = dict(os.environ, PYTHONPATH=ROOT, **(env_extra or {}))
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, env=env)


MAP_64 = """
    import headrace.dataset as ds
    def double(x):
        return x * 2
    data = ds.NumpySlicesDataset(np.arange(64, dtype=np.int64), column_names=["x"], shuffle=False)
    data = data.map(double, input_columns=["x"], python_multiprocessing=True, num_parallel_workers=2)
    got = [int(r[0]) for r in data.create_tuple_iterator(output_numpy=True)]
    assert got == [2 * i for i in range(64)], got
    print("OK", len(got), flush=True)
"""


def test_process_workers_start_while_opencv_threads_are_busy():
    # At 9fc2929 every forked worker blocked in cv2.setNumThreads(1): OpenCV's pool state was
    # copied mid-use by the fork (3 of 3 runs hung).
    pytest.importorskip("cv2")
    res = run_script(textwrap.dedent("""
        import threading
        import cv2
        cv2.setNumThreads(4)
        img = np.random.default_rng(0).random((1500, 1500), dtype=np.float32)
        stop = threading.Event()
        def busy():
            while not stop.is_set():
                cv2.GaussianBlur(img, (31, 31), 0)
                cv2.resize(img, (2500, 2500))
        cv2.GaussianBlur(img, (31, 31), 0)
        t = threading.Thread(target=busy)
        t.start()
        try:
    """) + textwrap.indent(textwrap.dedent(MAP_64), "    ") + textwrap.dedent("""
        finally:
            stop.set()
            t.join()
    """), timeout=120)
    assert res.returncode == 0 and "OK 64" in res.stdout, res.stderr[-3000:]


def test_process_workers_start_after_a_busy_threaded_pipeline_was_abandoned():
    pytest.importorskip("cv2")
    res = run_script(textwrap.dedent("""
        import cv2
        import headrace.dataset as ds
        cv2.setNumThreads(4)
        def blur(x):
            img = np.full((600, 600), float(x), np.float32)
            return np.float32(cv2.GaussianBlur(cv2.resize(img, (900, 900)), (15, 15), 0).mean())
        busy = ds.NumpySlicesDataset(np.arange(10000, dtype=np.int64), column_names=["x"], shuffle=False)
        busy = busy.map(blur, input_columns=["x"], num_parallel_workers=4)
        it = busy.create_tuple_iterator(output_numpy=True)
        for _ in range(20):
            next(it)
        del it  # abandoned mid-epoch, without stop(): its threads may still be running
    """) + textwrap.dedent(MAP_64), timeout=120)
    assert res.returncode == 0 and "OK 64" in res.stdout, res.stderr[-3000:]


def test_a_killed_main_process_takes_the_fork_server_and_its_workers_along():
    script = f"""
        import sys, time
        sys.path.insert(0, {ROOT!r})
        from tests.engine.exec.test_process_pool import pipeline, opts, slow
        from headrace._engine.exec import forkserver
        from headrace._engine.run import PipelineRun
        run = PipelineRun(pipeline(n=10000, workers=2, procs=True, fn=slow, batch=4), 1, opts())
        run.next_row()
        assert run.tree.pool.launcher == "server", run.tree.pool.launcher
        print(forkserver.current().pid, *run.tree.pool.pids, flush=True)
        time.sleep(60)
    """
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE,
                            text=True, cwd=ROOT)
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 3 and all(alive(p) for p in pids)
        assert set(pids[1:]) <= children(pids[0])  # the workers are the server's children
    finally:
        proc.kill()
        proc.wait()
    assert not still_alive(pids, 15)


def test_sigkill_of_the_whole_process_group_leaves_no_shared_memory():
    # Rows flow through shared memory both ways (rows to the map, results back); then the job
    # is killed the way a scheduler does it: SIGKILL to every process of the group at once.
    script = f"""
        import os, sys, time
        sys.path.insert(0, {ROOT!r})
        from tests.engine.exec.test_process_pool import Stream, pipeline, opts
        from headrace._engine.run import PipelineRun
        run = PipelineRun(pipeline(n=100000, workers=2, procs=True, stream=True, batch=0,
                                   source=Stream(100000, 20000)), 1, opts())
        for _ in range(20):
            run.next_row()
        maps = [open(f"/proc/{{p}}/maps").read() for p in [os.getpid(), *run.tree.pool.pids]]
        print(*run.tree.pool.pids, sum(m.count("memfd:hr") for m in maps),
              sum(m.count("/dev/shm/") for m in maps), flush=True)
        while True:
            run.next_row()
    """
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE,
                            text=True, cwd=ROOT, start_new_session=True)
    try:
        line = proc.stdout.readline().split()
        assert len(line) == 4, line
        memfds, named = int(line[2]), int(line[3])
        assert memfds >= 2 and named == 0  # anonymous segments, mapped on both sides; no names
        time.sleep(0.3)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    pids = [proc.pid] + [int(p) for p in line[:2]]
    still_alive(pids, 10)  # the group is gone (or going): what it left is checked next
    prefix = f"hr{proc.pid:x}_"
    assert not [n for n in os.listdir("/dev/shm") if n.startswith(prefix)]


@pytest.mark.parametrize("launcher", ["server", "spawn", "fork"])
def test_a_worker_killed_by_sigterm_is_reported_as_killed_by_sigterm(launcher, monkeypatch):
    if launcher == "fork":
        monkeypatch.setattr(launch, "single_threaded", lambda: True)
    method = "spawn" if launcher == "spawn" else "fork"
    run = PipelineRun(pipeline(n=400, workers=2, procs=True, fn=slow, batch=2), 1,
                      opts(multiprocessing_start_method=method))
    try:
        run.next_row()
        assert run.tree.pool.launcher == launcher
        victim = run.tree.pool.pids[0]
        os.kill(victim, signal.SIGTERM)
        msg = failure_within(run, 400)
    finally:
        run.close()
    assert f"worker process {victim} (worker 0) was killed by signal 15 (SIGTERM)" in msg, msg
    assert "exited with code" not in msg


def test_fork_sends_lambdas_and_closures_through_the_fork_server():
    offset = np.float32(100)

    def closure(x):
        return x + offset

    big = np.arange(300_000, dtype=np.float32)  # out of band: shared copy-on-write by the workers

    def with_big(x):
        return closure(x) * 2 + big[-1] * 0

    got = read_all_from("server", PipelineRun(pipeline(workers=2, procs=True, fn=with_big, n=9, batch=0), 1, opts()))
    assert got[:2] == [[[200.0] * 3, 0], [[202.0] * 3, 1]] and got[-1] == "END"


def test_an_unpicklable_op_under_fork_warns_naming_it_and_still_runs():
    process_pool._warned.clear()
    with pytest.warns(RuntimeWarning) as rec:
        got = rows_of(pipeline(n=8, workers=2, procs=True, fn=Unpicklable(), batch=0), epochs=1)
    msg = " ".join(str(w.message) for w in rec)
    assert "map operation: [PyFunc] (" in msg and "Unpicklable" in msg and "'fork'" in msg
    assert "deadlock" in msg
    assert len(got) == 9 and got[-1] == "END"


def _refuse_to_load():
    raise RuntimeError("cannot be rebuilt here")


class PicklesButWontLoad:
    """Pickles fine, fails when unpickled (like a ctypes function pointer held by a user function)."""

    def __reduce__(self):
        return (_refuse_to_load, ())

    def __call__(self, x):
        return x


def test_an_op_that_pickles_but_cannot_be_unpickled_is_named_when_the_pipeline_starts():
    with pytest.raises(TypeError) as info:
        launch.dumps_program(workers_program(PicklesButWontLoad()), "map operation: [PyFunc]", "spawn")
    text = str(info.value)
    assert text.startswith("map operation: [PyFunc] (<tests.engine.exec.test_forkserver.PicklesButWontLoad object at "), text
    assert text.endswith(") cannot be sent to a worker process (start method 'spawn'): "
                         "RuntimeError: cannot be rebuilt here"), text
    process_pool._warned.clear()
    with pytest.warns(RuntimeWarning, match="cannot be rebuilt here"):  # under 'fork': forked directly
        got = rows_of(pipeline(n=8, workers=2, procs=True, fn=PicklesButWontLoad(), batch=0), epochs=1)
    assert len(got) == 9 and got[-1] == "END"


def workers_program(fn):
    class Program:
        def parts(self):
            return [("map operation: [PyFunc]", fn)]

        def __reduce__(self):
            return (list, ([fn],))
    return Program()


def test_a_single_threaded_process_forks_its_workers_itself():
    res = run_script(textwrap.dedent("""
        from tests.engine.exec.test_process_pool import pipeline, opts, read_all
        from headrace._engine.exec import forkserver, launch
        from headrace._engine.run import PipelineRun
        assert launch.single_threaded()
        run = PipelineRun(pipeline(n=40, workers=2, procs=True, batch=4), 1, opts())
        print(len(read_all(run)), run.tree.pool.launcher, forkserver.current(), flush=True)
        run.close()
    """), env_extra={"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.split() == ["11", "fork", "None"]


def test_the_fork_server_is_one_single_threaded_child_per_process():
    import cv2  # noqa: PLC0415, F401 - loaded here, so the server preloads it

    forkserver.get().close()
    server = forkserver.get()
    assert server is forkserver.get() and not server.dead
    assert server.pid in children()
    run = PipelineRun(pipeline(n=40, workers=2, procs=True, batch=4), 1, opts())
    try:
        read_all(run)
        assert set(run.tree.pool.pids) <= children(server.pid)
    finally:
        run.close()
    assert len(os.listdir(f"/proc/{server.pid}/task")) == 1  # it has a single thread to fork from
    with open(f"/proc/{server.pid}/maps") as f:
        assert "cv2" in f.read()  # preloaded: the workers do not load OpenCV after each fork

THREADED_MODULE = '''
import threading, time
threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()  # a thread at import

def triple(x):
    return x * 3
'''


def test_a_module_that_starts_threads_on_import_is_not_preloaded_twice(tmp_path, monkeypatch):
    # The server preloads the modules a program names; this one leaves it with a thread, so the
    # server refuses to fork, is replaced by one that never preloads the module, and the rows come.
    (tmp_path / "hr_threaded_mod.py").write_text(THREADED_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(forkserver, "_refused", set())
    import hr_threaded_mod  # noqa: PLC0415

    first = forkserver.get()
    got = rows_of(pipeline(n=8, workers=2, procs=True, fn=hr_threaded_mod.triple, batch=0), epochs=1)
    assert got[:2] == [[[0.0] * 3, 0], [[3.0] * 3, 1]] and len(got) == 9
    assert forkserver._refused == {"hr_threaded_mod"}  # the culprit only: numpy, cv2... still preload
    second = forkserver.get()
    assert second is not first and first.dead and not alive(first.pid)
    assert len(os.listdir(f"/proc/{second.pid}/task")) == 1
    got = rows_of(pipeline(n=4, workers=2, procs=True, fn=hr_threaded_mod.triple, batch=0), epochs=1)
    assert len(got) == 5 and forkserver.get() is second


def test_a_killed_fork_server_fails_its_pipelines_and_the_next_pipeline_gets_a_new_one():
    run = PipelineRun(pipeline(n=400, workers=2, procs=True, fn=slow, batch=2), 1, opts())
    try:
        run.next_row()
        server = forkserver.current()
        pids = list(run.tree.pool.pids)
        os.kill(server.pid, signal.SIGKILL)
        with pytest.raises(RuntimeError, match=r"worker process \d+ \(worker \d\)"):
            for _ in range(400):
                run.next_row()
    finally:
        run.close()
    assert not still_alive(pids, 10)  # its workers follow it (PR_SET_PDEATHSIG)
    got = rows_of(pipeline(n=8, workers=2, procs=True, batch=0), epochs=1)
    assert len(got) == 9 and forkserver.current() is not server and not forkserver.current().dead


def test_data_too_large_to_copy_is_shared_by_forking_with_a_warning(monkeypatch):
    from headrace._engine.exec import shm  # noqa: PLC0415

    monkeypatch.setattr(shm, "_memory_room", lambda: 4 * 300_000)  # room for 300 kB, 1.2 MB of data
    process_pool._warned.clear()
    big = np.arange(300_000, dtype=np.float32)

    def with_big(x):
        return x + big[1]

    with pytest.warns(RuntimeWarning, match=r"its data \(1 MiB.*too large to copy.*deadlock"):
        run = PipelineRun(pipeline(workers=2, procs=True, fn=with_big, n=6, batch=0), 1, opts())
    got = read_all_from("fork", run)
    assert got[:2] == [[[1.0] * 3, 0], [[2.0] * 3, 1]] and len(got) == 7


def where_and_what(x):
    return np.array([len(os.getcwd()), len(os.environ.get("HR_TEST_CONTEXT", ""))], np.int64) + 0 * x[:2]


def test_workers_start_in_the_parents_current_directory_and_environment(tmp_path, monkeypatch):
    forkserver.get()  # started before the changes below, as a warmed-up server would be
    (tmp_path / "deeper").mkdir()
    monkeypatch.chdir(tmp_path / "deeper")
    monkeypatch.setenv("HR_TEST_CONTEXT", "x" * 17)
    got = rows_of(pipeline(n=3, workers=2, procs=True, fn=where_and_what, batch=0), epochs=1)
    assert [r[0] for r in got[:-1]] == [[len(str(tmp_path / "deeper")), 17]] * 3
    assert process_start.THREAD_ENV["OMP_NUM_THREADS"] == "1"


def test_a_process_with_threads_never_forks_itself(monkeypatch):
    def no_fork():
        raise AssertionError("os.fork() in a process with threads")

    monkeypatch.setattr(os, "fork", no_fork)  # multiprocessing's fork context calls os.fork too
    got = rows_of(pipeline(n=10, workers=2, procs=True, batch=3), epochs=2)
    assert got == rows_of(pipeline(n=10, batch=3), epochs=2)


def test_the_adapters_are_never_preloaded(monkeypatch):
    # they import frameworks that start threads (ray, pyarrow, JAX, torch): each would taint a server
    fake = types.ModuleType("fake")
    for name in ("headrace.ray._read", "headrace.jax._loader", "headrace.torch._loader", "headrace._util.rng"):
        monkeypatch.setitem(sys.modules, name, sys.modules.get(name) or fake)
    names = forkserver.preload_list()
    assert "headrace._util.rng" in names
    assert not [n for n in names if n.startswith(("headrace.ray", "headrace.jax", "headrace.torch"))]


def test_the_preload_list_follows_modules_loaded_and_dropped_between_calls(monkeypatch):
    # (listed again whenever sys.modules changed size: a pipeline's start asks three times)
    before = forkserver.preload_list()
    assert "headrace._engine.exec.process_worker" in before and before == forkserver.preload_list()
    monkeypatch.setitem(sys.modules, "headrace._not_a_module", types.ModuleType("headrace._not_a_module"))
    grown = forkserver.preload_list()
    assert len(grown) == len(before) + 1 and set(grown) == set(before) | {"headrace._not_a_module"}
    monkeypatch.delitem(sys.modules, "headrace._not_a_module")
    assert forkserver.preload_list() == before
