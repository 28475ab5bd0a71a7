"""``headrace cache --stop`` / ``cache_admin --stop`` and sessions other processes use (issue 38 item 8).

A process with a store of a session open marks the session (``users/s<id>-<pid>-<start>`` in the
memory root); a stop that
would remove a session another live process uses is refused, removing nothing, unless ``--force``.
"""
from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from headrace._engine import cache_sessions, cache_store
from tests.cli.test_cache_cli import ROOT, cli

ROWS = 200

# Fills a cache of session argv[1] with one epoch, says "ready", then per line of stdin reads an
# epoch again ("go": prints the rows' sum and this process's hits) until "exit".
HOLDER = textwrap.dedent(f"""
    import sys
    import numpy as np
    import headrace.dataset as ds
    cache = ds.DatasetCache(session_id=int(sys.argv[1]), size=16)
    d = ds.NumpySlicesDataset(np.arange({ROWS}, dtype=np.int64), ["x"], shuffle=False).map(
        lambda x: x * 3, cache=cache)

    def epoch():
        return sum(int(r[0]) for r in d.create_tuple_iterator(output_numpy=True, num_epochs=1))

    epoch()
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() == "exit":
            break
        total = epoch()
        print(total, cache.get_stat().hits, flush=True)
""")
TOTAL = 3 * sum(range(ROWS))


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("HEADRACE_CACHE_SHM", str(tmp_path / "shm"))
    monkeypatch.setenv("HEADRACE_CACHE_SPILL", str(tmp_path / "spill"))
    return dict(os.environ, PYTHONPATH=ROOT)


class Holder:
    """A process that holds a session open while the test runs the CLI."""

    def __init__(self, env: dict, sid: int) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(sid)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert self.line() == "ready", self.proc.stderr.read()[-2000:]
        self.pid = self.proc.pid

    def line(self) -> str:
        return self.proc.stdout.readline().strip()

    def epoch(self) -> tuple[int, int]:
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        out = self.line()
        assert out, self.proc.stderr.read()[-2000:]
        total, hits = map(int, out.split())
        return total, hits

    def exit(self) -> int:
        self.proc.stdin.write("exit\n")
        self.proc.stdin.close()
        return self.proc.wait(120)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(120)


def marks(tmp_path, sid: int) -> list[str]:
    """The session's user markers: ``s<sid>-<pid>-<start>``."""
    try:
        names = os.listdir(tmp_path / "shm" / cache_store.USERS)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if n.startswith(f"s{sid}-"))


def new_session(env: dict) -> int:
    assert cli(env, "--start").returncode == 0
    return int(cli(env, "-g").stdout.split(":")[-1])


@pytest.mark.parametrize("alias", [False, True], ids=["headrace-cache", "cache_admin"])
def test_stop_refuses_a_session_another_process_uses_until_forced(env, tmp_path, alias):
    sid = new_session(env)
    other = new_session(env)  # unused: no reason to refuse, but nothing is removed with the other
    holder = Holder(env, sid)
    try:
        assert cache_sessions.users(sid) == [holder.pid] and cache_sessions.users(other) == []
        out = cli(env, "--stop", alias=alias)
        prog = "cache_admin" if alias else "headrace cache"
        assert out.returncode == 1 and out.stdout == ""
        assert out.stderr.startswith(f"{prog} --stop: refused, nothing removed: sessions in use: session {sid} by "
                                     f"process {holder.pid} (python")
        assert "--stop --force" in out.stderr
        assert cache_sessions.sessions() == sorted([sid, other])
        assert holder.epoch() == (TOTAL, ROWS)  # the session still serves every row from the cache
        forced = cli(env, "--stop", "--force", alias=alias)
        assert forced.returncode == 0, forced.stderr
        assert forced.stdout.strip() == "Cache on this host stopped: 2 session(s) and their rows removed."
        assert not (tmp_path / "shm").exists() and cache_sessions.sessions() == []
        total, _ = holder.epoch()  # its pipeline goes on without the removed rows
        assert total == TOTAL
        assert holder.exit() == 0
    finally:
        holder.kill()


def test_stop_goes_ahead_once_the_user_has_exited_or_was_killed(env, tmp_path):
    sid = new_session(env)
    holder = Holder(env, sid)
    try:
        assert cli(env, "--stop").returncode == 1
        assert holder.exit() == 0
    finally:
        holder.kill()
    assert marks(tmp_path, sid) == []  # removed at its exit
    assert cli(env, "--stop").returncode == 0 and not (tmp_path / "shm").exists()

    sid = new_session(env)
    holder = Holder(env, sid)
    os.kill(holder.pid, signal.SIGKILL)
    holder.kill()
    stale = marks(tmp_path, sid)
    assert len(stale) == 1 and stale[0].startswith(f"s{sid}-{holder.pid}-")
    assert cache_sessions.users(sid) == []  # a killed process's marker counts for nothing
    start = cli(env, "--start")
    assert "stale file(s) of dead processes" in start.stdout
    assert marks(tmp_path, sid) == []
    stop = cli(env, "--stop")
    assert stop.returncode == 0 and stop.stdout.strip() == "Cache on this host stopped: 1 session(s) and their rows removed."


def test_a_process_marks_the_sessions_it_has_open_and_unmarks_them_when_done(env, tmp_path):
    import headrace.dataset as ds  # noqa: PLC0415

    sid = new_session(env)
    cache = ds.DatasetCache(session_id=sid, size=16)
    d = ds.NumpySlicesDataset(np.arange(20, dtype=np.int64), ["x"], shuffle=False).map(lambda x: x + 1, cache=cache)
    assert [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True, num_epochs=1)] == list(range(1, 21))
    pid, start = cache_store.me()
    assert marks(tmp_path, sid) == [f"s{sid}-{pid}-{start}"]
    sdir = cache_store.session_dir(str(tmp_path / "shm"), sid)  # the session's folder holds its keys only
    assert all(n == "session.json" or os.path.isdir(os.path.join(sdir, n)) for n in os.listdir(sdir))
    assert cache_sessions.users(sid) == []  # this process's own use never stops itself
    assert cache_sessions.stop() == 1  # so the API's stop goes ahead here
    del cache, d
    gc.collect()  # the stores go, and the (already removed) marker with them: no error


def test_worker_processes_remove_their_marks_when_they_exit(env, tmp_path):
    import headrace.dataset as ds  # noqa: PLC0415

    sid = new_session(env)
    cache = ds.DatasetCache(session_id=sid, size=16)
    d = ds.NumpySlicesDataset(np.arange(40, dtype=np.int64), ["x"], shuffle=False).map(
        np.negative, cache=cache, num_parallel_workers=2, python_multiprocessing=True)
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=1)
    assert [int(r[0]) for r in it] == [-i for i in range(40)]
    it.stop()
    pid, start = cache_store.me()
    assert set(marks(tmp_path, sid)) <= {f"s{sid}-{pid}-{start}"}  # the workers' own marks went with them
    del cache, d, it
    gc.collect()
    deadline = time.monotonic() + 10  # (the cache's flusher thread may be looking at the store this instant)
    while marks(tmp_path, sid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marks(tmp_path, sid) == []  # and ours with our stores


def test_force_is_only_for_stop_and_stop_checks_its_argument(env):
    out = cli(env, "--force", "--list_sessions")
    assert out.returncode == 2 and "--force only applies to --stop" in out.stderr
    with pytest.raises(TypeError, match="force must be of type bool, but got str."):
        cache_sessions.stop(force="yes")
    assert "--force" in cli(env, "--help").stdout
