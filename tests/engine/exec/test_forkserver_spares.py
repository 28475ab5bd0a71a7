"""Start-up cost of process pools: the fork server's spare workers and the kept program blob.

A pool used to pay a fork of the server per worker and a copy of its in-memory source per start;
now the server keeps idle spares forked after each burst of starts, and the blob of a program with
large buffers is reused while those buffers hold the same bytes (issue 12, item 1's cost).
"""
from __future__ import annotations

import gc
import mmap
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headrace._engine.exec import forkserver, launch
from headrace._engine.run import PipelineRun
from tests.engine.exec.test_shutdown import alive, children, still_alive
from tests.engine.exec.test_process_pool import ROOT, opts, pipeline, read_all, rows_of


def spares_within(server: forkserver.ForkServer, count: int, within: float = 20.0) -> set[int]:
    """The server's spares once there are at least ``count`` and none came or went for 0.5 s."""
    deadline = time.monotonic() + within
    seen, since = server.spares, time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.02)
        now = server.spares
        if now != seen:
            seen, since = now, time.monotonic()
        elif len(now) >= count and time.monotonic() - since >= 0.5:
            break
    return seen


def pool_pids(n: int = 40) -> tuple[list[int], list]:
    run = PipelineRun(pipeline(n=n, workers=2, procs=True, batch=4), 1, opts())
    try:
        assert run.tree.pool.launcher == "server"
        return list(run.tree.pool.pids), read_all(run)
    finally:
        run.close()


def test_after_a_pool_starts_the_server_forks_spares_and_the_next_pool_uses_them():
    server = forkserver.get()
    first, rows = pool_pids()
    spares = spares_within(server, 2)
    assert len(spares) >= 2 and not spares & set(first)
    assert spares <= children(server.pid)  # the server's own children, idle
    second, rows_again = pool_pids()
    assert set(second) <= spares  # taken, not forked
    assert rows_again == rows and len(rows) == 11 and rows[-1] == "END"
    assert not set(second) & server.spares


def test_spares_are_retired_when_the_parents_directory_or_environment_changes(tmp_path, monkeypatch):
    server = forkserver.get()
    pool_pids()
    old = spares_within(server, 2)
    assert len(old) >= 2
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HR_TEST_CONTEXT", "y" * 5)

    def where(x):
        return np.array([len(os.getcwd()), len(os.environ.get("HR_TEST_CONTEXT", ""))], np.int64) + 0 * x[:2]

    got = rows_of(pipeline(n=3, workers=2, procs=True, fn=where, batch=0), epochs=1)
    assert [r[0] for r in got[:-1]] == [[len(str(tmp_path)), 5]] * 3
    assert not still_alive(sorted(old), 10)  # a spare forked before the change would start elsewhere


def test_a_killed_main_process_takes_the_spares_along():
    script = f"""
        import sys, time
        sys.path.insert(0, {ROOT!r})
        from tests.engine.exec.test_process_pool import pipeline, opts, read_all
        from headrace._engine.exec import forkserver
        from headrace._engine.run import PipelineRun
        run = PipelineRun(pipeline(n=40, workers=2, procs=True, batch=4), 1, opts())
        read_all(run)
        run.close()
        server = forkserver.current()
        deadline = time.monotonic() + 20
        while len(server.spares) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        print(server.pid, *sorted(server.spares), flush=True)
        time.sleep(60)
    """
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE,
                            text=True, cwd=ROOT)
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) >= 3 and all(alive(p) for p in pids)
    finally:
        proc.kill()
        proc.wait()
    assert not still_alive(pids, 15)


class Big:
    """A random-access source over an in-memory array large enough for its blob to be kept."""

    def __init__(self, data: np.ndarray) -> None:
        self.data = data

    def __len__(self) -> int:
        return 6

    def __getitem__(self, i: int):
        return self.data[i * 1000: i * 1000 + 3].copy(), np.int64(i)


def big_rows(data: np.ndarray) -> list:
    import headrace.dataset as ds  # noqa: PLC0415 - the surface, as a user runs it

    source = ds.GeneratorDataset(Big(data), ["x", "i"], shuffle=False, num_parallel_workers=2,
                                 python_multiprocessing=True)
    return [x.tolist() for x, _ in source.create_tuple_iterator(output_numpy=True, num_epochs=1)]


def kept_inodes() -> list[int]:
    return [os.fstat(entry[1]).st_ino for entry in launch._CACHE._entries]


def test_a_programs_blob_is_reused_only_while_its_buffers_hold_the_same_bytes():
    launch._CACHE.clear()
    data = np.arange(600_000, dtype=np.float32)  # 2.4 MB: out of band, worth keeping
    assert big_rows(data)[1] == [1000.0, 1001.0, 1002.0]
    kept = kept_inodes()
    assert len(kept) == 1
    assert big_rows(data)[1] == [1000.0, 1001.0, 1002.0]
    assert kept_inodes() == kept  # the same file: not written again
    data[1000] = -7.0  # changed in place: the kept copy is stale and must not be used
    assert big_rows(data)[1] == [-7.0, 1001.0, 1002.0]
    assert len(kept_inodes()) == 1 and kept_inodes() != kept
    del data
    gc.collect()
    assert launch._CACHE._entries == []  # it lives only as long as the array it copied


def test_small_programs_are_not_kept():
    launch._CACHE.clear()
    assert big_rows(np.arange(6000, dtype=np.float32))[5] == [5000.0, 5001.0, 5002.0]
    assert launch._CACHE._entries == []


def test_building_a_process_map_has_the_server_import_the_functions_module_before_it_runs(tmp_path, monkeypatch):
    import importlib  # noqa: PLC0415

    import headrace.dataset as ds  # noqa: PLC0415

    marker = tmp_path / "imported_by.txt"
    name = f"hr_warm_{os.getpid()}_{time.monotonic_ns()}"
    (tmp_path / f"{name}.py").write_text(
        "import os\n"
        f"with open({str(marker)!r}, 'a') as f:\n"
        "    f.write(f'{os.getpid()}\\n')\n"
        "def triple(x):\n"
        "    return x * 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    server = forkserver.get()
    data = ds.NumpySlicesDataset(np.arange(4, dtype=np.int64), column_names=["x"], shuffle=False)
    data = data.map(module.triple, python_multiprocessing=True, num_parallel_workers=2)
    deadline = time.monotonic() + 30
    while len(marker.read_text().split()) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert marker.read_text().split() == [str(os.getpid()), str(server.pid)]  # no pipeline has run yet
    assert [int(r[0]) for r in data.create_tuple_iterator(output_numpy=True)] == [0, 3, 6, 9]


def test_a_spares_rehearsal_of_the_worker_start_leaves_nothing_behind():
    # A spare runs process_worker.rehearse() while it waits (forkserver_proc._wait_as_spare): the
    # worker it becomes must find its descriptors, settings, environment and shared memory as a
    # spare that did not rehearse would. Run where the server runs: a process with THREAD_ENV set.
    code = textwrap.dedent("""
        import os
        from headrace._engine import options
        from headrace._engine.exec import process_worker, shm

        def state():
            return (sorted(os.listdir("/proc/self/fd")), options.snapshot(), dict(os.environ),
                    sorted(n for n in os.listdir("/dev/shm") if n.startswith("hrrehearse")))

        before = state()
        process_worker.rehearse()
        process_worker.rehearse()
        assert state() == before, (before, state())
        print("probed memfd:", shm._memfd)
    """)
    from headrace._engine.exec.native_threads import THREAD_ENV

    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=dict(os.environ, **THREAD_ENV),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "probed memfd: True"  # the probe's answer is kept for the worker


@pytest.mark.parametrize("with_memcmp", [True, False])
@settings(max_examples=60, deadline=None)
@given(data=st.binary(min_size=0, max_size=3000), where=st.integers(0, 10_000), lead=st.integers(0, 9))
def test_the_kept_copys_check_finds_any_changed_byte(with_memcmp, data, where, lead):
    # _same_bytes compares a buffer with its copy in the kept file at any offset, by memcmp or,
    # without a C library, by NumPy: equal bytes pass, one byte changed anywhere fails.
    mm = mmap.mmap(-1, max(1, lead + len(data)))
    mm[lead:lead + len(data)] = data
    try:
        with pytest.MonkeyPatch.context() as patched:
            if not with_memcmp:
                patched.setattr(launch, "_memcmp", lambda: None)
            assert (launch._memcmp() is not None) == with_memcmp
            now = bytearray(data)
            assert launch._same_bytes(mm, lead, memoryview(now))
            if data:
                now[where % len(data)] ^= 0x01
                assert not launch._same_bytes(mm, lead, memoryview(now))
    finally:
        mm.close()
