"""Crash safety, sharing between processes, capacity: the cache's files under real processes."""
import json
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
from headrace._engine import cache_store
from tests.cache.conftest import chunk_files

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A child: N rows of 1 KB (row i filled with i % 251) through a slow deterministic map, cached in
# chunks of ~4 rows; it prints each row id as it finishes and a JSON summary at the end.
CHILD = textwrap.dedent("""
    import json, os, sys, time
    import numpy as np
    import headrace.dataset as ds
    from headrace._engine import cache_store
    cache_store.CHUNK_BYTES = 4 * 1100
    n, workers = int(sys.argv[1]), int(sys.argv[3])
    os.environ["HR_TEST_DELAY"] = sys.argv[2]  # read by the function at run time: not part of its key
    data = np.repeat((np.arange(n) % 251).astype(np.uint8)[:, None], 1024, axis=1)
    def slow(x):
        time.sleep(float(os.environ["HR_TEST_DELAY"]))
        return x + np.uint8(1)
    cache = ds.DatasetCache(session_id=9, size=int(sys.argv[4]) if len(sys.argv) > 4 else 0,
                            spilling=len(sys.argv) > 5)
    d = ds.NumpySlicesDataset(data, ["x"], shuffle=False, num_parallel_workers=workers).map(
        slow, cache=cache, num_parallel_workers=workers)
    out = []
    for (x,) in d.create_tuple_iterator(output_numpy=True, num_epochs=1):
        out.append(int(x[0]))
        assert (x == x[0]).all() and x.shape == (1024,)
        print("row", len(out), flush=True)
    st = cache.get_stat()
    print(json.dumps({"values": out, "hits": st.hits, "misses": st.misses, "mem": st.num_mem_cached,
                      "disk": st.num_disk_cached}), flush=True)
""")


def run_child(*args, timeout=120):
    proc = subprocess.run([sys.executable, "-c", CHILD, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, PYTHONPATH=ROOT))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def key_dir(shm):
    s = shm / "s9"
    keys = [p for p in s.iterdir() if p.is_dir()]
    assert len(keys) == 1
    return keys[0]


def expected(n):
    return [(i % 251 + 1) % 256 for i in range(n)]


def test_sigkill_during_fill_serves_only_committed_rows_then_resumes(cache_roots):
    shm, _ = cache_roots
    n = 40
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(n), "0.02", "1"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
    try:
        for line in proc.stdout:  # kill it mid-fill: some chunks committed, one being written
            if line.strip() == "row 18":
                break
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    folder = key_dir(shm)
    names = sorted(os.listdir(folder))
    committed = [f for f in names if f.endswith(".chunk")]
    pending = [f for f in names if f.endswith(".tmp")]
    assert committed and all(cache_store.owner_of(f)[0] == proc.pid for f in committed + pending)
    assert "fill.lock" in names  # the dead filler's lock is still there...
    store = cache_store.CacheStore(folder.name, n, session=9, mem_cap=1 << 30, spilling=False)
    store.refresh()
    have = store.cached_rows()
    assert 4 <= have <= 18 and have % 4 == 0  # whole committed chunks only (4 rows each)
    for i in range(n):
        row = store.get(i)
        assert row is None or (row[0] == expected(n)[i]).all()
    again = run_child(n, "0", "1")  # ...until the next run finds its pid gone
    assert again["values"] == expected(n)
    assert again["hits"] == have and again["misses"] == n - have  # resumed: committed rows read back
    after = sorted(os.listdir(folder))
    assert not [f for f in after if f.endswith(".tmp") or f == "fill.lock"]
    assert not [f for f in after if cache_store.owner_of(f) and cache_store.owner_of(f)[0] == proc.pid
                and f.endswith(".tmp")]
    third = run_child(n, "0", "1")
    assert third["values"] == expected(n) and third["hits"] == n and third["misses"] == 0


def test_torn_chunk_is_never_served(cache_roots, tmp_path):
    shm, _ = cache_roots
    run_child(8, "0", "1")
    folder = key_dir(shm)
    chunk = next(f for f in os.listdir(folder) if f.endswith(".chunk"))
    data = (folder / chunk).read_bytes()
    (folder / chunk).write_bytes(data[:-5])  # a chunk without its trailer: not a commit
    store = cache_store.CacheStore(folder.name, 8, session=9, mem_cap=1 << 30, spilling=False)
    store.refresh()
    assert store.cached_rows() < 8
    assert all(store.get(i) is None or (store.get(i)[0] == expected(8)[i]).all() for i in range(8))


def test_two_processes_share_one_copy(cache_roots):
    shm, _ = cache_roots
    n = 24
    first = run_child(n, "0", "1")
    assert first["misses"] == n and first["mem"] == n
    before = chunk_files(shm)
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(n), "0", "1"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
             for _ in range(2)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-2000:]
        outs.append(json.loads(out.strip().splitlines()[-1]))
    assert all(o["values"] == expected(n) and o["hits"] == n and o["misses"] == 0 for o in outs)
    def chunks(names):
        return [n for n in names if n.endswith((".chunk", ".tmp"))]

    assert chunks(chunk_files(shm)) == chunks(before)  # readers stored nothing


def test_concurrent_cold_fill_stores_each_row_once(cache_roots):
    shm, _ = cache_roots
    n = 30
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(n), "0.01", "1"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
             for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-2000:]
        assert json.loads(out.strip().splitlines()[-1])["values"] == expected(n)
    folder = key_dir(shm)
    ids = []
    for f in os.listdir(folder):
        if f.endswith(".chunk"):
            raw = (folder / f).read_bytes()
            k = int.from_bytes(raw[-16:-8], "little")
            ids += np.frombuffer(raw, np.int64, k * 3, len(raw) - 16 - k * 24).reshape(k, 3)[:, 0].tolist()
    assert sorted(ids) == list(range(n))  # one filler: no row twice
    assert not [f for f in os.listdir(folder) if f.endswith(".tmp") or f == "fill.lock"]


def test_spill_past_memory_cap(cache_roots):
    shm, spill = cache_roots
    n = 2500  # 2500 rows of ~1.1 KB: about 2.7 MB, over a 1 MB cap
    out = run_child(n, "0", "1", 1, "spill")
    assert out["values"] == expected(n)
    assert out["mem"] + out["disk"] == n and 500 < out["mem"] < 1000 and out["disk"] > 1500
    assert cache_store.tier_usage(str(shm / "s9")) <= 1 << 20
    assert cache_store.tier_usage(str(spill)) > 1 << 20
    again = run_child(n, "0", "1", 1, "spill")
    assert again["values"] == expected(n) and again["hits"] == n


def test_full_cache_keeps_its_rows_and_streams_the_rest(cache_roots):
    shm, spill = cache_roots
    n = 2500
    out = run_child(n, "0", "1", 1)
    assert out["values"] == expected(n) and out["disk"] == 0 and 500 < out["mem"] < 1000
    again = run_child(n, "0", "1", 1)
    assert again["values"] == expected(n)
    assert again["hits"] == out["mem"] and again["misses"] == n - out["mem"]
    assert not spill.exists() or cache_store.tier_usage(str(spill)) == 0


def test_worker_processes_fill_and_commit_on_exit(cache_roots):
    shm, _ = cache_roots
    code = textwrap.dedent("""
        import json, sys
        import numpy as np
        import headrace.dataset as ds
        cache = ds.DatasetCache(session_id=9)
        def plus(x):
            return x + 1
        d = ds.NumpySlicesDataset(np.arange(50), ["x"], shuffle=False).map(
            plus, cache=cache, num_parallel_workers=2, python_multiprocessing=True)
        vals = [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True, num_epochs=1)]
        print(json.dumps(vals))
    """)
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, PYTHONPATH=ROOT))
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert json.loads(proc.stdout.strip().splitlines()[-1]) == list(range(1, 51))
    folder = key_dir(shm)
    store = cache_store.CacheStore(folder.name, 50, session=9, mem_cap=1 << 30, spilling=False)
    store.refresh()
    assert store.cached_rows() == 50
    assert not [f for f in os.listdir(folder) if f.endswith(".tmp")]


def test_stale_lock_of_dead_pid_is_taken_over(tmp_path):
    lock = str(tmp_path / "fill.lock")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with open(lock, "w") as f:
        f.write(f"{dead.pid} 1 deadtoken")
    assert cache_store.claim_lock(lock, "mine")
    assert cache_store.read_lock(lock)[2] == "mine"
    assert not cache_store.claim_lock(lock, "other")  # we are alive: the lock is ours
    # A live pid with another start time is a reused pid: stale too.
    with open(lock, "w") as f:
        f.write(f"{os.getpid()} 1 reused")
    assert cache_store.claim_lock(lock, "mine2")
    cache_store.release_lock(lock, "mine2")
    assert not os.path.exists(lock)
    assert sorted(os.listdir(tmp_path)) == []


def test_no_segment_or_file_outside_the_roots(cache_roots, tmp_path):
    shm, spill = cache_roots
    mine = [n for n in os.listdir("/dev/shm") if "headrace-cache" in n] if os.path.isdir("/dev/shm") else []
    run_child(10, "0", "1")
    after = [n for n in os.listdir("/dev/shm") if "headrace-cache" in n] if os.path.isdir("/dev/shm") else []
    assert after == mine  # the test's cache lives under its own roots only
    assert chunk_files(shm) and not os.path.exists(spill)
