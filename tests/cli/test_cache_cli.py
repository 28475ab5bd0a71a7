"""``headrace cache`` / ``cache_admin``: MindSpore's flags over the daemon-free cache."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def env(tmp_path):
    return dict(os.environ, PYTHONPATH=ROOT, HEADRACE_CACHE_SHM=str(tmp_path / "shm"),
                HEADRACE_CACHE_SPILL=str(tmp_path / "spill"))


def cli(env, *args, alias=False):
    cmd = ([sys.executable, "-c", "import sys; from headrace.cli.cache import admin_main; sys.exit(admin_main())"]
           if alias else [sys.executable, "-m", "headrace", "cache"])
    return subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=120, env=env)


FILL = textwrap.dedent("""
    import sys
    import numpy as np
    import headrace.dataset as ds
    sid = int(sys.argv[1])
    cache = ds.DatasetCache(session_id=sid, size=1, spilling=True)
    d = ds.NumpySlicesDataset(np.ones((1500, 1000), np.uint8), ["x"], shuffle=False).map(lambda x: x + 1, cache=cache)
    for _ in range(2):
        assert sum(1 for _ in d.create_tuple_iterator(output_numpy=True, num_epochs=1)) == 1500
    st = cache.get_stat()
    print(st.num_mem_cached, st.num_disk_cached)
""")


def test_session_lifecycle_and_listing(env, tmp_path):
    spill = tmp_path / "spilldir"
    spill.mkdir()
    out = cli(env, "--start", "-s", str(spill), "-m", "0.25", "-w", "3", alias=True)
    assert out.returncode == 0, out.stderr
    assert "Cache ready on this host" in out.stdout and str(spill) in out.stdout
    gen = cli(env, "-g")
    assert gen.returncode == 0 and gen.stdout.startswith("Session created for server on port 50052: ")
    sid = int(gen.stdout.split(":")[-1])
    assert 1 <= sid <= 2**32 - 1
    fill = subprocess.run([sys.executable, "-c", FILL, str(sid)], capture_output=True, text=True, timeout=120, env=env)
    assert fill.returncode == 0, fill.stderr[-2000:]
    mem, disk = map(int, fill.stdout.split())
    assert mem + disk == 1500 and disk > 0  # 1.5 MB over a 1 MB cap spilled into -s's directory
    assert any(name.startswith("headrace-cache-") for name in os.listdir(spill))
    listing = cli(env, "--list_sessions")
    assert listing.returncode == 0
    lines = listing.stdout.splitlines()
    assert lines[0] == "Listing sessions for the cache on port 50052"
    assert lines[2].split() == ["Session", "Cache", "Id", "Mem", "cached", "Disk", "cached", "Avg", "cache", "size",
                                "Hit", "rate", "Pipeline"]
    row = lines[3].split()
    assert row[0] == str(sid) and int(row[2]) == mem and int(row[3]) == disk and int(row[4]) >= 1000
    assert row[5] == "50.0%"  # the first epoch missed every row, the second hit every one
    info = cli(env, "--server_info")
    assert "spill               " + str(spill) in info.stdout and "memory cap ratio    0.25" in info.stdout
    assert "number of workers   3" in info.stdout and f"Active sessions: [{sid}]" in info.stdout
    drop = cli(env, "-d", str(sid))
    assert drop.returncode == 0 and drop.stdout.strip() == "Drop session successfully for server on port 50052"
    assert not any(os.scandir(os.path.join(spill, next(iter(os.listdir(spill))))))
    again = cli(env, "--destroy_session", str(sid))
    assert again.returncode == 1 and f"Session {sid} not found." in again.stderr
    assert "No active sessions" in cli(env, "--list_sessions").stdout


def test_stop_removes_everything_and_port_env(env, tmp_path):
    cli(env, "--start")
    sid = int(cli(env, "--generate_session").stdout.split(":")[-1])
    subprocess.run([sys.executable, "-c", FILL, str(sid)], capture_output=True, text=True, timeout=120, env=env,
                   check=True)
    stop = cli(dict(env, MS_CACHE_PORT="50060"), "--stop")
    assert stop.returncode == 0 and stop.stdout.strip() == "Cache on this host stopped: 1 session(s) and their rows removed."
    assert not (tmp_path / "shm").exists()
    assert "port 50060" in cli(dict(env, MS_CACHE_PORT="50060"), "-g").stdout


@pytest.mark.parametrize("args, text", [
    (["-p", "80", "--list_sessions"], "-p/--port must be between 1025 and 65535, but got 80"),
    (["-w", "0", "--start"], "-w/--workers must be between 1 and 100, but got 0"),
    (["-m", "1.5", "--start"], "-m/--memory_cap_ratio must be in (0, 1], but got 1.5"),
    (["-h", "10.0.0.2", "--start"], "-h/--hostname '10.0.0.2': the cache is this host's"),
    (["-s", "/nonexistent/dir", "--start"], "-s/--spilldir '/nonexistent/dir' is not a directory"),
    (["--start", "--stop"], "not allowed with argument"),
    ([], "give one of --start, --stop, -g, -d ID, --list_sessions, --server_info"),
])
def test_usage_errors(env, args, text):
    out = cli(env, *args)
    assert out.returncode == 2 and text in out.stderr


def test_start_removes_stale_files_of_dead_processes(env, tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    key = tmp_path / "shm" / "s5" / "k"
    key.mkdir(parents=True)
    (tmp_path / "shm" / "s5" / "session.json").write_text('{"session": 5}')
    (key / f"w-{dead.pid}-1-1.tmp").write_bytes(b"partial")
    (key / "fill.lock").write_text(f"{dead.pid} 1 tok")
    out = cli(env, "--start")
    assert "removed 2 stale file(s) of dead processes" in out.stdout
    assert sorted(os.listdir(key)) == []


def test_help_and_pyproject_alias(env):
    out = cli(env, "--help")
    assert out.returncode == 0 and "--generate_session" in out.stdout and "--spilldir" in out.stdout
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        assert 'cache_admin = "headrace.cli.cache:admin_main"' in f.read()
