"""The cache's write-behind (issue 42 item 3): rows go to a bounded queue that a writer thread
empties into chunk files; every entry a reader sees is whole, whatever the timing or failure."""
import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headrace._engine import cache_store
from tests.cache.conftest import chunk_files

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(autouse=True)
def behind(monkeypatch):
    """Rows go to the writer thread whatever the machine's load (counters that never move keep
    ``_Idle`` on write-behind); the tests of writing on put's own thread pin the other way."""
    monkeypatch.setattr(cache_store, "_IDLE", cache_store._Idle(times=lambda: (0, 0)))


def pin_here(monkeypatch):
    """No idle core, ever: put writes its rows itself."""
    gauge = cache_store._Idle(times=lambda: (0, 0))
    gauge.behind = False
    monkeypatch.setattr(cache_store, "_IDLE", gauge)


def row_of(i, size=512):
    """Row ``i``: an int32 vector whose every value names the row, a label, and a pickled column."""
    return (np.full(size + i % 7, i, np.int32), np.array(i * 3, np.int64), {"i": i})


def assert_row(got, i, size=512):
    assert got is not None, i
    want = row_of(i, size)
    assert got[0].dtype == np.int32 and got[0].shape == want[0].shape
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1].dtype == np.int64 and got[1].shape == () and int(got[1]) == i * 3
    assert got[2] == {"i": i}


def new_store(key="k", n=64, session=5):
    return cache_store.CacheStore(key, n, session=session, mem_cap=1 << 30, spilling=False)


def reader(store):
    """A second store of the same key (another token: it never fills), as another process has."""
    return new_store(store.key, store.num_rows, store.session)


def no_tmp(shm):
    return [f for f in chunk_files(shm) if f.endswith(".tmp")] == []


def writer_threads():
    return [t for t in threading.enumerate() if t.name == "headrace-cache-write"]


@pytest.mark.parametrize("here", [False, True], ids=["behind", "here"])
def test_rows_from_threads_come_back_exact(cache_roots, monkeypatch, here):
    """Four threads put rows, written behind or (no idle core) by put itself: all come back exact."""
    if here:
        pin_here(monkeypatch)
    monkeypatch.setattr(cache_store, "CHUNK_BYTES", 5000)  # a chunk every few rows
    before = set(writer_threads())
    store, n = new_store(n=200), 200

    def fill(part):
        for i in range(part, n, 4):
            store.put(i, row_of(i))

    threads = [threading.Thread(target=fill, args=(p,)) for p in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (store.written_behind, store.written_here) == ((0, n) if here else (n, 0))
    if here:  # no writer thread, no staging copy
        assert not set(writer_threads()) - before and store._staging._free == []
    store.flush()
    assert store.cached_rows() == n and store.queued() == (0, 0)
    other = reader(store)
    for i in range(n):
        assert_row(other.get(i), i)
    assert other.misses == 0 and no_tmp(cache_roots[0])


def test_a_reader_racing_the_writer_sees_whole_rows_or_none(cache_roots, monkeypatch):
    """A reader polls while the writer commits chunk after chunk: each row it sees is exact
    (bounded: the writer's 300 rows, the reader until it has them all or 2,000 rounds)."""
    monkeypatch.setattr(cache_store, "CHUNK_BYTES", 3000)
    monkeypatch.setattr(cache_store, "_TICK_NS", 0)  # look at every refresh
    n = 300
    store = new_store(n=n)
    seen: set[int] = set()
    bad: list[str] = []

    def read():
        other = reader(store)
        for _ in range(2000):
            other.refresh()
            for i in range(n):
                got = other.get(i)
                if got is None:
                    continue
                try:
                    assert_row(got, i)
                except AssertionError as e:
                    bad.append(f"row {i}: {e}")
                seen.add(i)
            if len(seen) == n:
                return

    t = threading.Thread(target=read)
    t.start()
    for i in range(n):
        store.put(i, row_of(i))
    store.flush()
    t.join(timeout=120)
    assert not t.is_alive() and bad == [] and seen == set(range(n))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["u1", "<i2", "<f4", "<f8", "|b1"]),
                          st.lists(st.integers(0, 5), min_size=0, max_size=3)), min_size=1, max_size=4),
       st.integers(1, 12))
def test_any_columns_round_trip_through_the_writer(cache_roots, columns, rows):
    """Whatever the columns' dtypes and shapes (empty and 0-d included), rows put come back equal."""
    key = f"h{abs(hash((tuple((d, tuple(s)) for d, s in columns), rows)))}"
    store = new_store(key, rows)
    rng = np.random.default_rng(rows)
    made = []
    for i in range(rows):
        row = tuple((rng.integers(0, 100, s) if d != "|b1" else rng.integers(0, 2, s)).astype(d)
                    for d, s in columns)
        made.append(row)
        store.put(i, row)
    store.flush()
    other = reader(store)
    for i, row in enumerate(made):
        got = other.get(i)
        assert got is not None and len(got) == len(row)
        for g, w in zip(got, row):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


def test_the_queue_is_bounded_in_bytes_and_rows(cache_roots, monkeypatch):
    monkeypatch.setattr(cache_store, "WRITE_BYTES", 3 * 2100)  # three rows of 2,048 + label bytes
    store = new_store(n=40)
    gate = threading.Event()
    real = store.write

    def slow_write(index, row):
        gate.wait(30)
        real(index, row)

    store.write = slow_write
    peak = []

    def fill():
        for i in range(40):
            store.put(i, row_of(i))
            peak.append(store.queued())

    t = threading.Thread(target=fill)
    t.start()
    time.sleep(0.5)
    assert t.is_alive()  # waiting for room: the writer holds the gate
    rows, nbytes = store.queued()
    assert nbytes <= cache_store.WRITE_BYTES and rows <= cache_store.WRITE_QUEUE + 1
    gate.set()
    t.join(timeout=60)
    assert not t.is_alive()
    assert max(b for _, b in peak) <= cache_store.WRITE_BYTES
    store.flush()
    assert store.cached_rows() == 40 and store.queued() == (0, 0)
    other = reader(store)
    for i in range(40):
        assert_row(other.get(i), i)


def test_a_row_that_waits_too_long_is_not_stored(cache_roots, monkeypatch):
    monkeypatch.setattr(cache_store, "WRITE_BYTES", 2100)
    monkeypatch.setattr(cache_store, "WRITE_WAIT", 0.3)
    store = new_store(n=4)
    gate = threading.Event()
    real = store.write
    store.write = lambda index, row: (gate.wait(30), real(index, row))
    store.put(0, row_of(0))
    t0 = time.monotonic()
    store.put(1, row_of(1))  # no room behind row 0 while the writer is held: given up
    assert 0.25 <= time.monotonic() - t0 < 10
    rows, nbytes = store.queued()
    assert rows == 1 and 0 < nbytes <= 2100
    gate.set()
    store.flush()
    assert store.queued() == (0, 0)
    other = reader(store)
    assert_row(other.get(0), 0)
    assert other.get(1) is None


@pytest.mark.parametrize("here", [False, True], ids=["behind", "here"])
def test_a_failed_write_keeps_the_whole_rows_before_it(cache_roots, monkeypatch, here):
    """The file system fails in the middle of row 3: rows 0-2 are committed whole, row 3 is
    absent, and the rows after it go to a new chunk (written behind, or by put itself)."""
    if here:
        pin_here(monkeypatch)
    store = new_store(n=8)
    fail_at = {"row": 3}
    real_new = store._new_chunk

    def new_chunk(need):
        w = real_new(need)
        if w is not None:
            real_file = w.file

            class Torn:
                def __init__(self):
                    self.rows = 0

                def writelines(self, parts):
                    if store._seq == 1 and self.rows == fail_at["row"]:
                        real_file.write(bytes(parts[1])[:5])  # part of the row reaches the file
                        raise OSError(28, "No space left on device")
                    self.rows += 1
                    real_file.writelines(parts)

                def __getattr__(self, name):
                    return getattr(real_file, name)

            w.file = Torn()
        return w

    store._new_chunk = new_chunk
    for i in range(8):
        store.put(i, row_of(i))
    store.flush()
    other = reader(store)
    for i in (0, 1, 2, 4, 5, 6, 7):
        assert_row(other.get(i), i)
    assert other.get(3) is None
    assert no_tmp(cache_roots[0])
    assert len([f for f in chunk_files(cache_roots[0]) if f.endswith(".chunk")]) == 2


@pytest.mark.parametrize("here", [False, True], ids=["behind", "here"])
def test_a_value_that_does_not_encode_is_skipped(cache_roots, monkeypatch, here):
    if here:
        pin_here(monkeypatch)
    before = set(writer_threads())
    store = new_store(n=3)
    store.put(0, row_of(0))
    store.put(1, (np.zeros(3, np.int32), np.int64(1), threading.Lock()))  # a lock does not pickle
    store.put(2, row_of(2))
    store.flush()
    assert (not set(writer_threads()) - before) if here else writer_threads()  # (the thread lived on)
    other = reader(store)
    assert_row(other.get(0), 0)
    assert other.get(1) is None
    assert_row(other.get(2), 2)


def test_the_writer_thread_ends_with_its_store(cache_roots):
    before = set(writer_threads())
    store = new_store(n=4)
    store.put(0, row_of(0))
    store.flush()
    (mine,) = set(writer_threads()) - before
    del store
    mine.join(timeout=10)
    assert not mine.is_alive()


# A child that fills a cache through a map with threads or processes and either reads the whole
# epoch or stops after `stop` rows, then leaves (the store's exit path); prints the rows it read.
CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import headrace.dataset as ds
    from headrace._engine import cache_store
    cache_store.CHUNK_BYTES = 6 * 4200
    n, mode, stop = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    def grow(x):
        return np.full(1024, x, np.int32), np.full((2, 3), x * 2, np.float64)
    cache = ds.DatasetCache(session_id=7)
    d = ds.NumpySlicesDataset(np.arange(n), ["x"], shuffle=False).map(
        grow, input_columns=["x"], output_columns=["a", "b"], cache=cache, num_parallel_workers=3,
        python_multiprocessing=(mode == "processes"))
    got = []
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=1)
    for a, b in it:
        assert (a == a[0]).all() and a.shape == (1024,) and (b == a[0] * 2).all() and b.shape == (2, 3)
        got.append(int(a[0]))
        if len(got) == stop:
            break
    print(json.dumps(got), flush=True)
""")


def run_child(*args):
    proc = subprocess.run([sys.executable, "-c", CHILD, *map(str, args)], capture_output=True, text=True,
                          timeout=180, env=dict(os.environ, PYTHONPATH=ROOT))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def stored(shm, n):
    """Row id -> (a, b) of every committed row of the one key of session 7, read by a new store."""
    folder = shm / "s7"
    (key,) = [p.name for p in folder.iterdir() if p.is_dir()]
    store = cache_store.CacheStore(key, n, session=7, mem_cap=1 << 30, spilling=False)
    store.refresh()
    return {i: r for i in range(n) if (r := store.get(i)) is not None}


def assert_valid(rows):
    for i, (a, b) in rows.items():
        assert a.dtype == np.int32 and a.shape == (1024,) and (a == i).all(), i
        assert b.dtype == np.float64 and b.shape == (2, 3) and (b == i * 2).all(), i


@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_fill_under_threads_and_processes_gives_exact_rows(cache_roots, mode):
    n = 60
    assert run_child(n, mode, -1) == list(range(n))
    rows = stored(cache_roots[0], n)
    assert sorted(rows) == list(range(n))
    assert_valid(rows)
    assert no_tmp(cache_roots[0])
    assert run_child(n, mode, -1) == list(range(n))  # the second run reads them back


@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_closing_during_the_fill_leaves_only_valid_entries(cache_roots, mode):
    """A run that stops after 17 of 60 rows and exits: what it committed is whole and exact,
    nothing half-written is left, and the next run completes the cache."""
    n = 60
    assert run_child(n, mode, 17) == list(range(17))
    rows = stored(cache_roots[0], n)
    assert set(range(17)) <= set(rows) or mode == "processes"  # workers may leave queued rows unstored
    assert_valid(rows)
    assert no_tmp(cache_roots[0])
    assert run_child(n, mode, -1) == list(range(n))
    rows = stored(cache_roots[0], n)
    assert sorted(rows) == list(range(n))
    assert_valid(rows)


def test_a_row_changed_in_place_after_put_is_stored_as_it_was(cache_roots):
    """The pipeline may change its row in place once the cache has it: the queued copy (in a
    reused staging buffer) keeps the values of the moment of ``put``, also when buffers are reused."""
    store = new_store(n=30)
    gate = threading.Event()
    real = store.write
    store.write = lambda index, row: (gate.wait(30), real(index, row))
    rows = []
    for i in range(30):
        row = row_of(i)
        rows.append(row)
        store.put(i, row)
        row[0][:] = -1  # the pipeline's next op writes into the array
        row[1][...] = -1
        if i == 3:
            gate.set()
    store.flush()
    other = reader(store)
    for i in range(30):
        assert_row(other.get(i), i)
    free = store._staging._free
    assert 1 <= len(free) <= cache_store.WRITE_QUEUE + 1  # buffers were reused, not one per row
    assert all(b.dtype == np.uint8 and b.nbytes >= 4 * 512 for b in free)


def test_staging_keeps_odd_columns_apart():
    """Arrays of several dtypes (unaligned sizes, 0-d, empty, non-contiguous, big-endian) land in
    one buffer, each at a multiple of 64 bytes from its start; arrays of objects and other values are copied as they are."""
    staging = cache_store._Staging()
    src = np.arange(24, dtype=np.float64).reshape(4, 6)
    row = (np.arange(5, dtype=np.uint8), src[:, ::2], np.array(7, np.int16), np.zeros((0, 3), np.float32),
           np.arange(3, dtype=">i4"), np.array([{"a": 1}], dtype=object), "text")
    nbytes = sum(v.nbytes for v in row if type(v) is np.ndarray)
    copy, buf = staging.stage(row, nbytes)
    assert buf is not None and buf.dtype == np.uint8
    for got, want in zip(copy[:6], row[:6]):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    for got in copy[:5]:
        assert got.base is not None and np.shares_memory(got, buf) or got.size == 0
        assert (got.ctypes.data - buf.ctypes.data) % 64 == 0 or got.size == 0
    assert not np.shares_memory(copy[5], buf) and copy[5] is not row[5] and copy[6] == "text"
    staging.give(buf)
    again, buf2 = staging.stage(row, nbytes)
    assert buf2 is buf  # reused
    assert staging.stage(("x", 1), 0) == (("x", 1), None)


class _NoCopy(np.ndarray):
    def copy(self, *args, **kwargs):
        raise RuntimeError("this array does not copy")


def test_a_row_that_does_not_copy_is_not_stored_and_frees_its_place(cache_roots):
    store = new_store(n=3)
    store.put(0, row_of(0))
    store.put(1, (np.full(512, 1, np.int32), np.zeros(3).view(_NoCopy)))
    assert 1 not in store._queued
    store.put(2, row_of(2))
    store.flush()
    assert store.queued() == (0, 0)
    other = reader(store)
    assert_row(other.get(0), 0)
    assert other.get(1) is None
    assert_row(other.get(2), 2)


# ---- no idle core: put writes the row itself (``_Idle``) ---------------------------------------
class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_the_idle_gauge_switches_with_hysteresis(monkeypatch):
    """Write-behind stops below BEHIND_IDLE[0] idle cores and resumes from BEHIND_IDLE[1]; the
    counters are read once per IDLE_LOOK seconds, and counters that do not move change nothing."""
    monkeypatch.setattr(cache_store, "BEHIND_IDLE", (0.1, 0.5))
    clock, reads = _Clock(), []
    counters = [(0, 0)]

    def times():
        reads.append(clock.now)
        return counters[0]

    gauge = cache_store._Idle(times=times, clock=clock, cores=2)
    steps = [  # (idle jiffies added, total jiffies added) per look -> idle cores -> behind
        (0, 100, False),    # 0 cores idle: the row is written by put
        (20, 100, False),   # 0.4: between the thresholds, stays
        (25, 100, True),    # 0.5: resumes
        (10, 100, True),    # 0.2: stays
        (4, 100, False),    # 0.08: stops
        (0, 0, False),      # counters that did not move: unchanged
        (50, 100, True),    # 1.0
    ]
    assert gauge.write_behind() is True and reads == [100.0]  # first look: nothing to compare yet
    for idle, total, want in steps:
        clock.now += cache_store.IDLE_LOOK
        counters[0] = (counters[0][0] + idle, counters[0][1] + total)
        assert gauge.write_behind() is want, (idle, total)
        clock.now += cache_store.IDLE_LOOK / 2  # within the look: the last answer, no read
        n = len(reads)
        assert gauge.write_behind() is want and len(reads) == n
    assert len(reads) == 1 + len(steps)


def test_the_idle_gauge_reads_the_machine(monkeypatch):
    """The real counters (/proc/stat): a first look gives write-behind and keeps the machine's
    jiffies; a second look compares with them (the answer depends on the load)."""
    gauge = cache_store._Idle()
    assert gauge.write_behind() is True
    first = gauge._last
    assert first is not None and 0 <= first[0] < first[1]
    time.sleep(0.05)
    gauge._next = 0.0
    assert gauge.write_behind() in (True, False)
    assert gauge._last[1] >= first[1] and gauge._next > 0


def test_a_row_written_by_put_is_written_before_put_returns(cache_roots, monkeypatch):
    """The pipeline changes its row in place right after put: the stored row is the row as put
    (no copy was taken: the write itself happened inside put), and the writer's own rows serve."""
    pin_here(monkeypatch)
    store = new_store(n=6)
    for i in range(6):
        row = row_of(i)
        store.put(i, row)
        row[0][:] = -1
        row[1][...] = -1
        assert_row(store.get(i), i)  # its own uncommitted row: committed and served at once
    other = reader(store)
    for i in range(6):
        assert_row(other.get(i), i)


class _Alternate:
    """A gauge that answers write-behind and write-here in turn."""

    def __init__(self):
        self.n = 0

    def write_behind(self):
        self.n += 1
        return self.n % 2 == 0


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(1, 60), st.integers(600, 20000))
def test_rows_written_both_ways_in_turn_share_the_chunks(cache_roots, rows, chunk):
    """Modes that change from row to row (the machine's load moves): queued rows and rows put
    writes itself land in the same chunks, every one exact, each stored once."""
    gauge = _Alternate()
    old = (cache_store._IDLE, cache_store.CHUNK_BYTES)
    cache_store._IDLE, cache_store.CHUNK_BYTES = gauge, chunk
    try:
        store = new_store(f"alt{rows}-{chunk}", rows)
        for i in range(rows):
            store.put(i, row_of(i, 64))
        store.flush()
    finally:
        cache_store._IDLE, cache_store.CHUNK_BYTES = old
    assert (store.written_behind, store.written_here) == (rows // 2, rows - rows // 2)
    other = reader(store)
    for i in range(rows):
        assert_row(other.get(i), i, 64)
    assert other.cached_rows() == rows and no_tmp(cache_roots[0])


# ---- the memory tier's usage: scanned once per USAGE_LOOK far from the cap, per chunk near it --------
def counting_usage(monkeypatch):
    scans = []
    real = cache_store.tier_usage

    def scan(folder):
        scans.append(real(folder))
        return scans[-1]

    monkeypatch.setattr(cache_store, "tier_usage", scan)
    return scans


def test_far_from_the_cap_the_tier_is_scanned_once_per_look(cache_roots, monkeypatch):
    """40 chunks in a second: one scan (a stat per chunk file each), not 40; the estimate between
    scans counts each chunk opened at its full limit, so it never reads less than the files hold."""
    pin_here(monkeypatch)
    monkeypatch.setattr(cache_store, "CHUNK_BYTES", 4096)  # a chunk per ~2 rows of 2 KB
    monkeypatch.setattr(cache_store, "USAGE_LOOK", 3600.0)
    scans = counting_usage(monkeypatch)
    store = new_store(n=80)
    for i in range(80):
        store.put(i, row_of(i))
    store.flush()
    assert store._seq >= 40 and len(scans) == 1 and scans[0] == 0
    assert store._usage >= cache_store.tier_usage(os.path.join(str(cache_roots[0]), "s5"))
    other = reader(store)
    for i in range(80):
        assert_row(other.get(i), i)


def test_near_the_cap_every_chunk_scans_and_the_cap_holds(cache_roots, monkeypatch):
    """Within USAGE_SLACK of the cap each new chunk scans the tier, so rows written by another
    store (another process) meanwhile count at once: the tier ends within the cap but for what two
    writers' scans cannot see of each other, the other's open chunk (as with a scan per chunk)."""
    pin_here(monkeypatch)
    monkeypatch.setattr(cache_store, "CHUNK_BYTES", 4096)
    monkeypatch.setattr(cache_store, "USAGE_LOOK", 3600.0)
    cap = 60_000
    monkeypatch.setattr(cache_store, "USAGE_SLACK", cap + 1)
    scans = counting_usage(monkeypatch)
    mine = cache_store.CacheStore("a", 80, session=5, mem_cap=cap, spilling=False)
    theirs = cache_store.CacheStore("b", 80, session=5, mem_cap=cap, spilling=False)
    for i in range(80):
        mine.put(i, row_of(i))
        theirs.put(i, row_of(i))
    mine.flush()
    theirs.flush()
    assert len(scans) == mine._seq + theirs._seq  # one per chunk each
    assert cap - 4096 < cache_store.tier_usage(os.path.join(str(cache_roots[0]), "s5")) <= cap + 4096
    assert 0 < mine.cached_rows() < 80 and 0 < theirs.cached_rows() < 80  # both stopped at the cap
