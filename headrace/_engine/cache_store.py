"""A row cache shared by every process on a host, through files they map: no daemon.

Layout. A cache lives under two roots: the memory tier (``$HEADRACE_CACHE_SHM``, default
``/dev/shm/headrace-cache-<uid>``, a tmpfs whose pages every process maps) and the spill tier
(``$HEADRACE_CACHE_SPILL``, default ``<tmp>/headrace-cache-<uid>``, on disk). Under each root a
session is a folder ``s<id>`` and a cached pipeline prefix is a folder named by its key (a
fingerprint of the source, of every operation and parameter up to the cache point, and of the
shard; see ``headrace/_util/fingerprint.py``), so a changed input can only miss, never be served
stale. The session folder in the memory tier holds ``session.json`` (its settings).

Chunks. Rows are appended to chunk files. A writer fills ``w-<pid>-<start>-<seq>.tmp`` (pid and
start time of the writing process) with row records, then an index (row id, offset, length per
row) and a trailer (row count, magic), and renames it to ``r-<pid>-<start>-<seq>.chunk``: the
rename is the commit. A reader maps only ``r-*.chunk`` files, whose index is complete by
construction, so a process killed during fill (even by SIGKILL) leaves nothing that is served: its
``.tmp`` is removed by the next process that opens the cache once its pid is gone (a pid with a
different start time is another process). Committed chunks survive, so the next run resumes the
fill. A chunk is committed when it reaches ``CHUNK_BYTES``, when ``CHUNK_SECONDS`` passed since its
first row, and when the process exits (``flush_all``; worker processes call it on their way out).

Write-behind, while a core is idle. ``put`` copies the row into a reused staging buffer and
queues it for the store's writer thread (one per store and process), so the write overlaps the
next rows' work; the queue holds at most ``WRITE_QUEUE`` rows and ``WRITE_BYTES`` bytes, past which
``put`` waits (a row not queued within ``WRITE_WAIT`` seconds is not stored). That overlap needs a
free core: where the machine had less than ``BEHIND_IDLE[0]`` idle cores over the last
``IDLE_LOOK`` seconds, ``put`` writes the row itself, from the row's own arrays (one copy instead
of two, no hand-off; about 70 us of CPU less per 562 KB row, measured), until ``BEHIND_IDLE[1]``
cores are idle again (``_Idle``). Either way the row is written before the pipeline can change it
and comes back exact. A row is stored whole or not at all: a write that fails (no room, a
destroyed session) cuts the chunk after its last whole row and commits that, and a value that
cannot be encoded is skipped. An epoch's end and the exit drain the queue (each wait bounded); a
worker process leaving commits what is written. A store's thread ends when its store is collected.

Row record: a 4-byte header length, a pickled header ((dtype, shape) per column, or ``None`` for a
column stored pickled), then each column's bytes, each part 8-byte aligned. Readers copy the
arrays out of the mapping (the mapping stays read-only and shared; the copy is the caller's).

Filling. One process at a time fills a key: it holds ``fill.lock`` (pid, start time, token). A
lock whose pid is gone is stale and is taken over. Worker processes of the holder carry its token
and write too (each its own chunks). Any other process reads what is committed and computes its
misses without storing them (no duplicate copies), picking up chunks as they are committed.

Capacity. The memory tier of a session holds at most ``mem_cap`` bytes (and never more than the
free space of its file system less a margin); past it a cache with ``spilling`` writes chunks to
the spill tier, and one without stops storing. Eviction: when full, what is stored stays and the
rest streams (computed every epoch): under a fresh random order each epoch an LRU would replace
rows just before they are needed again, keeping the hit rate near size/total at best, while a
fixed set keeps exactly that hit rate with no churn.

Users. A process that opens a store marks its session with an empty file
``users/s<id>-<pid>-<start>`` under the memory root (beside the session folders, whose listing
stays the session's), and removes it when its last store of that session is collected and at
exit (a worker process: on its way out); a killed process leaves a marker whose pid is gone or reused, which counts
for nothing (``is_alive``). ``cache_sessions.users`` reads them: ``headrace cache --stop`` refuses
to remove a session another live process uses unless forced.
"""
from __future__ import annotations

import atexit
import mmap
import os
import queue
import secrets
import threading
import time
import weakref
from typing import Any, Callable

import numpy as np

from headrace._engine.cache_files import (
    MAGIC, claim_lock, decode_row, destroy, encode_row, free_bytes, is_alive, me, memory_root, owner_of,
    process_start, read_lock, release_lock, remove_stale, session_dir, spill_root, tier_usage, unlink_quiet,
    write_json,
)
from headrace._engine.machine import cpu_times

__all__ = [  # the store, and the file helpers its users reach through it
    "CHUNK_BYTES", "CHUNK_SECONDS", "CacheStore", "MAGIC", "USERS", "claim_lock", "decode_row", "destroy",
    "encode_row", "flush_all", "is_alive", "me", "memory_root", "owner_of", "process_start", "read_lock",
    "release_lock", "remove_stale", "session_dir", "spill_root", "tier_usage", "unlink_quiet", "user_marker",
    "write_json",
]

CHUNK_BYTES = 8 << 20
CHUNK_SECONDS = 1.0
WRITE_QUEUE = 8          # rows waiting for a process's writer thread ...
WRITE_BYTES = 64 << 20   # ... and their bytes (one larger row may wait alone)
WRITE_WAIT = 30.0        # a row whose turn does not come in this many seconds is not stored
IDLE_LOOK = 0.5          # seconds between two looks at the machine's idle time (``_Idle``)
BEHIND_IDLE = (0.1, 0.5)  # idle cores below which put writes its rows itself, and from which it writes behind again
_TRAILER = 16            # row count (8 bytes) + MAGIC
_FREE_MARGIN = 64 << 20  # never fill a file system closer than this to full
REFRESH_FILLING = 0.5
USAGE_LOOK = 1.0          # a scan of the session's memory use stands this many seconds ...
USAGE_SLACK = 256 << 20   # ... while it left more than this below the cap (closer: a scan per chunk)
_TICK_NS = 50_000_000    # a folder mtime this much older than our last scan was seen by it


# ---- the store -------------------------------------------------------------------------------
_LIVE: "weakref.WeakSet[CacheStore]" = weakref.WeakSet()
USERS = "users"  # the folder of the session users' markers, in the memory root
_USING: dict[str, int] = {}  # session folder -> this process's opened stores of that session
_using_lock = threading.Lock()
atexit.register(lambda: flush_all(wait=True, final=True))

# A flush by the flusher thread and flush_all do not overlap, and after the final flush_all (the
# process is on its way out) the flusher commits nothing: a worker's os._exit, or the interpreter's
# end, in the middle of the flusher's write left a half-written file behind (a counts-*.tmp, seen
# in 2 of 10 runs of test_worker_processes_fill_and_commit_on_exit).
_flush_lock = threading.Lock()
_exiting = False
# flush_all goes on without the lock after this many seconds: it may run in a signal handler that
# interrupted a flush_all of the same thread, where waiting for good would deadlock.
LOCK_WAIT = 5.0


def flush_all(wait: bool = False, final: bool = False, drain: float | None = None) -> None:
    """Commits the open chunk of every store of this process (at an epoch's end and at exit with
    ``wait``: the queued rows first; in workers on their way out, without waiting). ``final``:
    the process is leaving; the flusher thread commits nothing after this. ``drain``: wait up to
    this many seconds for the queued rows (a worker leaving at its pool's close, which has 2 s
    before it is signalled: on a busy machine its writer thread may not have caught up yet, and
    not waiting dropped the rows still queued), then commit what is written."""
    global _exiting
    locked = _flush_lock.acquire(timeout=LOCK_WAIT)
    try:
        if final:
            _exiting = True
        for store in list(_LIVE):
            store.flush(blocking=wait if drain is None else store.drain(drain))
        if final:
            _leave_sessions()
    finally:
        if locked:
            _flush_lock.release()


def _after_fork_in_child() -> None:
    global _flush_lock, _exiting, _using_lock, _IDLE
    _flush_lock = threading.Lock()  # another thread of the parent may have held it at the fork
    _IDLE = _Idle()  # (its lock too)
    _exiting = False
    _using_lock = threading.Lock()
    _USING.clear()  # the parent's markers are the parent's; this process marks what it opens itself


def user_marker(session_folder: str, pid: int, start: int) -> str:
    """The file that says process (``pid``, ``start``) uses the session in ``session_folder``
    (``<root>/s<id>``): ``<root>/users/s<id>-<pid>-<start>``."""
    root, name = os.path.split(session_folder)
    return os.path.join(root, USERS, f"{name}-{pid}-{start}")


def _use(session_folder: str) -> None:
    with _using_lock:
        count = _USING.get(session_folder, 0)
        _USING[session_folder] = count + 1
        if count == 0:
            marker = user_marker(session_folder, *me())
            for _ in range(3):  # another process may remove the folder, empty, in between
                try:
                    os.makedirs(os.path.dirname(marker), exist_ok=True)
                    with open(marker, "wb"):
                        pass
                    break
                except FileNotFoundError:
                    continue
                except OSError:  # no room, no rights: the session goes unmarked
                    break


def _leave_sessions() -> None:
    """This process is leaving (a worker's ``os._exit`` runs no finalizer): its markers go now."""
    with _using_lock:
        for session_folder in list(_USING):
            _unmark(user_marker(session_folder, *me()))
        _USING.clear()


def _unuse(session_folder: str, pid: int) -> None:
    if pid != os.getpid():
        return  # a store inherited by a forked child: the parent's count
    with _using_lock:
        count = _USING.get(session_folder, 0) - 1
        if count > 0:
            _USING[session_folder] = count
            return
        _USING.pop(session_folder, None)
        _unmark(user_marker(session_folder, *me()))


def _unmark(marker: str) -> None:
    """Removes a marker, and the markers' folder once empty (a stopped cache leaves no folder)."""
    unlink_quiet(marker)
    try:
        os.rmdir(os.path.dirname(marker))
    except OSError:  # others' markers are there, or it is gone
        pass


os.register_at_fork(after_in_child=_after_fork_in_child)


_Item = tuple[int, tuple, int, "np.ndarray | None"]  # a queued row: id, row, array bytes, staging buffer


def _stop_writer(q: "queue.Queue[_Item | None]") -> None:
    try:
        q.put_nowait(None)
    except queue.Full:  # the thread is busy; it finds the store gone at its next idle second
        pass


def _write_loop(ref: "weakref.ref[CacheStore]", q: "queue.Queue[_Item | None]") -> None:
    """A store's writer thread: writes the queued rows until the store is gone (told by a None, or
    found gone within a second of idling: no thread outlives its store for long)."""
    while True:
        try:
            item = q.get(timeout=1.0)
        except queue.Empty:
            if ref() is None:
                return
            continue
        if item is None:
            q.task_done()
            return
        index, row, nbytes, buf = item
        store = ref()
        try:
            if store is not None:
                store.write(index, row)
        except Exception:  # noqa: BLE001 - a full disk, a destroyed session, a value that does not
            pass           # encode: the row is not stored (it streams); the chunk holds whole rows only
        finally:
            if store is not None:
                store._written(index, nbytes, buf)
            del store, row, buf
            q.task_done()


def _discard(w: "_Chunk") -> None:
    """Closes and removes a chunk that could not be committed (closing may fail too)."""
    try:
        w.file.close()
    except OSError:
        pass
    unlink_quiet(w.path)


def _join(q: "queue.Queue[Any]", timeout: float) -> bool:
    """``q.join()`` that gives up after ``timeout`` seconds (a writer stuck on a full or gone file
    system never hangs an epoch's end or the exit); True when the queue was drained."""
    deadline = time.monotonic() + timeout
    with q.all_tasks_done:
        while q.unfinished_tasks:
            left = deadline - time.monotonic()
            if left <= 0 or not q.all_tasks_done.wait(left):
                return not q.unfinished_tasks
    return True


_FLUSHER: list[int] = []  # the pid whose flusher thread runs


def _start_flusher() -> None:
    """A daemon thread per process committing chunks left open longer than CHUNK_SECONDS (a
    worker process of a pool kept across epochs stops writing without exiting)."""
    if _FLUSHER and _FLUSHER[0] == os.getpid():
        return
    _FLUSHER[:] = [os.getpid()]

    def loop() -> None:
        while True:
            time.sleep(CHUNK_SECONDS / 2)
            with _flush_lock:
                if _exiting:
                    return
                now = time.monotonic()
                for store in list(_LIVE):
                    w = store._writer
                    if w is not None and now - w.opened > CHUNK_SECONDS:
                        store.flush(blocking=False)
                    del store, w  # held while sleeping, the last one would outlive its users

    threading.Thread(target=loop, name="headrace-cache-flush", daemon=True).start()


class _Idle:
    """Whether the writer thread has a free core to run on: the machine's idle cores over the last
    ``IDLE_LOOK`` seconds (``/proc/stat``, every CPU of the machine), with hysteresis: write-behind
    stops below ``BEHIND_IDLE[0]`` idle cores and resumes from ``BEHIND_IDLE[1]``. Without a free
    core the writer's work runs in CPU time the pipeline needed anyway, so the staging copy and the
    hand-off to it are pure cost. Where the counters cannot be read, rows are written behind."""

    def __init__(self, times: Callable[[], tuple[int, int]] = cpu_times,
                 clock: Callable[[], float] = time.monotonic, cores: int | None = None) -> None:
        self.behind = True
        self._times, self._clock = times, clock
        self._cores = cores or os.cpu_count() or 1
        self._last: tuple[int, int] | None = None
        self._next = 0.0
        self._lock = threading.Lock()

    def write_behind(self) -> bool:
        """True: stage the row for the writer thread; False: write it on the caller's thread."""
        if self._clock() < self._next or not self._lock.acquire(blocking=False):
            return self.behind  # (another thread is looking: its answer comes soon enough)
        try:
            self._next = self._clock() + IDLE_LOOK
            idle, total = self._times()
            last, self._last = self._last, (idle, total)
            if last is not None and total > last[1]:
                cores = self._cores * (idle - last[0]) / (total - last[1])
                if cores < BEHIND_IDLE[0]:
                    self.behind = False
                elif cores >= BEHIND_IDLE[1]:
                    self.behind = True
            return self.behind
        finally:
            self._lock.release()


_IDLE = _Idle()


STAGING_BYTES = 16 << 20  # free staging buffers a store keeps for its next rows


class _Staging:
    """The buffers queued rows wait in, reused: a fresh copy of each row cost as much CPU as its
    write (the new pages' faults), a reused buffer only the copy. Buffers are taken from ``put``'s
    thread and given back by the writer thread."""

    def __init__(self) -> None:
        self._free: list[np.ndarray] = []
        self._lock = threading.Lock()

    def stage(self, row: tuple, nbytes: int) -> tuple[tuple, np.ndarray | None]:
        """A copy of ``row`` whose arrays live in one buffer of the pool (arrays of objects, and
        other values, are copied or kept as they are); the copy and its buffer."""
        arrays = [v for v in row if type(v) is np.ndarray and not v.dtype.hasobject]
        if not arrays:
            return tuple(v.copy() if isinstance(v, np.ndarray) else v for v in row), None
        buf = self._take(nbytes + 64 * len(arrays))
        out: list[Any] = []
        pos = 0
        for v in row:
            if type(v) is np.ndarray and not v.dtype.hasobject:
                view = buf[pos:pos + v.nbytes].view(v.dtype).reshape(v.shape)
                np.copyto(view, v)
                out.append(view)
                pos += v.nbytes + (-v.nbytes % 64)  # the next array starts 64 bytes on (aligned for any dtype)
            else:
                out.append(v.copy() if isinstance(v, np.ndarray) else v)  # (a subclass, too, may change)
        return tuple(out), buf

    def _take(self, need: int) -> np.ndarray:
        with self._lock:
            fits = [k for k, b in enumerate(self._free) if b.nbytes >= need]
            if fits:
                return self._free.pop(min(fits, key=lambda k: self._free[k].nbytes))
        return np.empty(need + need // 8, np.uint8)  # room for rows a little larger than this one

    def give(self, buf: np.ndarray) -> None:
        with self._lock:
            self._free.append(buf)
            self._free.sort(key=lambda b: b.nbytes)
            while sum(b.nbytes for b in self._free) > STAGING_BYTES:
                self._free.pop(0)  # the smallest: the ones the next rows are least likely to fit

    def clear(self) -> None:
        with self._lock:
            self._free.clear()


class _Chunk:
    __slots__ = ("file", "path", "final", "index", "ids", "size", "limit", "opened", "tier")

    def __init__(self, folder: str, seq: int, limit: int, tier: str) -> None:
        pid, start = me()
        self.path = os.path.join(folder, f"w-{pid}-{start}-{seq}.tmp")
        self.final = os.path.join(folder, f"r-{pid}-{start}-{seq}.chunk")
        self.file: Any = open(self.path, "wb")  # noqa: SIM115 - closed on commit
        self.index: list[tuple[int, int, int]] = []
        self.ids: set[int] = set()
        self.size = 0
        self.limit = limit
        self.opened = time.monotonic()
        self.tier = tier


class CacheStore:
    """The rows of one cache key: ``get(i)`` a committed row or None, ``put(i, row)`` to store one.

    Safe from several threads; picklable into worker processes (which then write their own chunks
    under the same fill lock).
    """

    def __init__(self, key: str, num_rows: int, *, session: int, mem_cap: int, spilling: bool,
                 spill_dir: str | None = None, meta: dict | None = None) -> None:
        self.key, self.num_rows, self.session = key, int(num_rows), int(session)
        self.mem_cap, self.spilling, self.spill_dir = int(mem_cap), bool(spilling), spill_dir
        self.meta = dict(meta or {})
        self.token = secrets.token_hex(8)
        self._init_local()

    # -- process-local state (rebuilt after unpickling) --
    def _init_local(self) -> None:
        self.mem_dir = os.path.join(session_dir(memory_root(), self.session), self.key)
        self.spill_path = os.path.join(session_dir(spill_root(self.spill_dir), self.session), self.key)
        self._lock = threading.Lock()
        self._wlock = threading.Lock()
        self._claim_lock = threading.Lock()
        self._queue: queue.Queue[_Item | None] | None = None
        self._queue_pid = 0
        self._queued: set[int] = set()
        self._queued_bytes = 0
        self._room = threading.Condition(threading.Lock())  # signalled as the writer frees bytes
        self._staging = _Staging()
        self._chunk_of = np.full(self.num_rows, -1, np.int32)
        self._off = np.zeros(self.num_rows, np.int64)
        self._maps: list[Any] = []
        self._tiers: list[str] = []
        self._bytes: list[int] = []
        self._loaded: set[str] = set()
        self._stamps: tuple[int | None, ...] = ()
        self._scanned = 0
        self._next_look = 0.0
        self._writer: _Chunk | None = None
        self._seq = 0
        self._present = 0
        self._full = False
        self._may_fill: bool | None = None
        self._next_claim = 0.0
        self._usage = 0           # the session's memory tier in bytes, as of the last scan ...
        self._usage_next = 0.0    # ... and when the next is due (``_memory_used``)
        self.hits = 0
        self.misses = 0
        self.written_behind = 0  # rows put for the writer thread ...
        self.written_here = 0    # ... and written by put itself (no idle core)
        self._opened = False
        _LIVE.add(self)

    def __getstate__(self) -> dict:
        self.claim()  # the process handing the store to its workers fills (if it may)
        keep = ("key", "num_rows", "session", "mem_cap", "spilling", "spill_dir", "meta", "token")
        return {k: self.__dict__[k] for k in keep}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._init_local()

    # -- opening --
    def _open(self) -> None:
        if self._opened:
            return
        with self._lock:
            if self._opened:
                return
            os.makedirs(self.mem_dir, exist_ok=True)
            meta_path = os.path.join(self.mem_dir, "meta.json")
            if not os.path.exists(meta_path):
                write_json(meta_path, dict(self.meta, rows=self.num_rows, created=time.time()))
            for folder in (self.mem_dir, self.spill_path):
                remove_stale(folder)
            session_folder = os.path.dirname(self.mem_dir)
            _use(session_folder)
            weakref.finalize(self, _unuse, session_folder, os.getpid())  # also run at exit
            self._opened = True

    # -- reading --
    def get(self, index: int) -> tuple | None:
        if not self._opened:
            self._open()
            self.refresh()
        c = self._chunk_of[index]
        if c < 0:
            w = self._writer
            if index in self._queued or (w is not None and index in w.ids):  # ours, not committed yet
                self.flush()
                c = self._chunk_of[index]
            # While this process fills, nobody else commits rows (but its own worker processes):
            # look for new chunks at most every REFRESH_FILLING seconds instead of at every miss.
            now = time.monotonic()
            if c < 0 and (not self._may_fill or now >= self._next_look):
                self._next_look = now + REFRESH_FILLING
                if self.refresh():
                    c = self._chunk_of[index]
        if c < 0:
            self.misses += 1
            return None
        self.hits += 1
        return decode_row(self._maps[c], int(self._off[index]))

    def _dir_stamps(self) -> tuple[int | None, ...]:
        out: list[int | None] = []
        for folder in (self.mem_dir, self.spill_path):
            try:
                out.append(os.stat(folder).st_mtime_ns)
            except OSError:
                out.append(None)
        return tuple(out)

    def refresh(self) -> bool:
        """Maps chunks committed since the last look; True when any was added."""
        stamps = self._dir_stamps()
        # A folder's mtime moves in coarse ticks (a few ms): two commits within one tick leave it
        # unchanged, so an unchanged stamp proves nothing until the tick has passed before our scan.
        if stamps == self._stamps and all(s is None or s < self._scanned - _TICK_NS for s in stamps):
            return False
        with self._lock:
            self._stamps = stamps
            self._scanned = time.time_ns()
            added = False
            for folder, tier in ((self.mem_dir, "memory"), (self.spill_path, "disk")):
                try:
                    names = sorted(os.listdir(folder))
                except OSError:
                    continue
                for name in names:
                    if name.endswith(".chunk") and name not in self._loaded:
                        added |= self._load(os.path.join(folder, name), tier)
                        self._loaded.add(name)
            return added

    def _load(self, path: str, tier: str) -> bool:
        try:
            with open(path, "rb") as f:
                mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # removed meanwhile (destroyed session), or empty
            return False
        n = int.from_bytes(mm[-_TRAILER:-8], "little")
        if mm[-8:] != MAGIC or n * 24 + _TRAILER > len(mm):
            return False
        end = len(mm) - _TRAILER - n * 24
        table = np.frombuffer(mm, np.int64, n * 3, end).reshape(n, 3).copy()
        if n and (table[:, 1:].min() < 0 or int((table[:, 1] + table[:, 2]).max()) > end):
            return False  # not a chunk this code wrote: its rows would read outside their bytes
        ids = table[:, 0]
        ok = (ids >= 0) & (ids < self.num_rows)
        c = len(self._maps)
        self._maps.append(mm)
        self._tiers.append(tier)
        self._bytes.append(int(table[:, 2].sum()))
        self._present += int(np.count_nonzero(self._chunk_of[ids[ok]] < 0))
        self._off[ids[ok]] = table[ok, 1]
        self._chunk_of[ids[ok]] = c
        return True

    # -- writing --
    def claim(self) -> bool:
        """Takes the fill lock for this process (or finds it held by our token); False when
        another live process fills this key."""
        if self._may_fill is not None and (self._may_fill or time.monotonic() < self._next_claim):
            return self._may_fill
        self._open()
        with self._claim_lock:  # one thread of this process asks; the others take its answer
            if self._may_fill is None or (not self._may_fill and time.monotonic() >= self._next_claim):
                self._may_fill = claim_lock(os.path.join(self.mem_dir, "fill.lock"), self.token)
                self._next_claim = time.monotonic() + 1.0
        return bool(self._may_fill)

    def put(self, index: int, row: tuple) -> None:
        """Queues a copy of ``row`` for this process's writer thread (the copy: the pipeline may
        change its row in place; the thread: the write overlaps the next rows' work), or, while
        the machine has no idle core (``_Idle``), writes ``row`` itself before returning.

        Write-behind, bounded: at most WRITE_QUEUE rows and WRITE_BYTES bytes wait (a larger row
        waits alone); past that ``put`` waits for the writer, and a row that cannot be queued
        within WRITE_WAIT seconds is not stored (it streams). A row is stored whole or not at all."""
        if self._full or not self.claim():
            return
        behind = _IDLE.write_behind()
        with self._room:  # (counted under a lock: several map threads may put at once)
            if behind:
                self.written_behind += 1
            else:
                self.written_here += 1
        if not behind:
            try:
                self.write(index, row)
            except Exception:  # noqa: BLE001 - as in the writer thread: the row is not stored (it streams)
                pass
            return
        q = self._queue
        if q is None or self._queue_pid != os.getpid():
            q = self._start_writer()
        nbytes = sum(v.nbytes for v in row if type(v) is np.ndarray)
        deadline = time.monotonic() + WRITE_WAIT
        with self._room:
            while self._queued_bytes and self._queued_bytes + nbytes > WRITE_BYTES:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._room.wait(left)
            self._queued_bytes += nbytes
            self._queued.add(index)
        try:
            copy, buf = self._staging.stage(row, nbytes)
        except Exception:  # noqa: BLE001 - a value that does not copy: the row is not stored (it streams)
            self._written(index, nbytes, None)
            return
        try:
            q.put((index, copy, nbytes, buf), timeout=max(deadline - time.monotonic(), 0.001))
        except queue.Full:
            self._written(index, nbytes, buf)

    def _written(self, index: int, nbytes: int, buf: np.ndarray | None) -> None:
        """Row ``index`` has left the queue (written, or not stored); its buffer is free again."""
        if buf is not None:
            self._staging.give(buf)
        with self._room:
            self._queued.discard(index)
            self._queued_bytes -= nbytes
            self._room.notify_all()

    def queued(self) -> tuple[int, int]:
        """(rows, bytes) waiting for this process's writer thread."""
        with self._room:
            return len(self._queued), self._queued_bytes

    def _start_writer(self) -> "queue.Queue[_Item | None]":
        with self._claim_lock:
            if self._queue is None or self._queue_pid != os.getpid():
                q: queue.Queue[_Item | None] = queue.Queue(WRITE_QUEUE)
                threading.Thread(target=_write_loop, args=(weakref.ref(self), q), name="headrace-cache-write",
                                 daemon=True).start()
                self._queue, self._queue_pid = q, os.getpid()
                weakref.finalize(self, _stop_writer, q).atexit = False  # at exit flush_all drains it
        return q if self._queue is None else self._queue

    def _drain(self) -> None:
        self.drain(WRITE_WAIT)

    def drain(self, seconds: float) -> bool:
        """Waits up to ``seconds`` for this process's queued rows to be written; True when none is left."""
        q = self._queue
        if q is not None and self._queue_pid == os.getpid():
            return _join(q, seconds)
        return True

    def write(self, index: int, row: tuple) -> None:
        """Appends ``row`` to this process's open chunk (the writer thread's work)."""
        parts, n = encode_row(row)
        if not self._wlock.acquire(timeout=30):
            return
        done = False
        try:
            w = self._writer
            if w is not None and w.index and (w.size + n > w.limit or time.monotonic() - w.opened > CHUNK_SECONDS):
                self._commit()
                w = None
            if w is None:
                w = self._writer = self._new_chunk(n)
                if w is None:
                    return
            try:
                w.file.writelines(parts)
            except Exception:  # no room, the session is gone, ...: keep the whole rows written so far
                self._writer = None
                self._commit_whole(w)
                raise
            w.index.append((index, w.size, n))
            w.ids.add(index)
            w.size += n
            if self._present + len(w.ids) >= self.num_rows:
                self._commit()  # the last rows: commit at once
                done = True
        finally:
            self._wlock.release()
        if done:
            self._release_if_complete()

    def _memory_used(self) -> int:
        """Bytes of the session's memory tier, all keys and processes: a scan of its files (which
        costs a stat per chunk, so scanning at every chunk made a fill quadratic in its chunks) at
        most every USAGE_LOOK seconds while the last scan left more than USAGE_SLACK bytes below the
        cap, and at every chunk closer to it; in between, the last scan plus the limits of the
        chunks this store opened since."""
        now = time.monotonic()
        if now >= self._usage_next or self.mem_cap - self._usage < USAGE_SLACK:
            self._usage = tier_usage(session_dir(memory_root(), self.session))
            self._usage_next = now + USAGE_LOOK
        return self._usage

    def _new_chunk(self, need: int) -> _Chunk | None:
        _start_flusher()
        room = min(self.mem_cap - self._memory_used(), free_bytes(self.mem_dir) - _FREE_MARGIN)
        self._seq += 1
        if room >= need:
            limit = min(CHUNK_BYTES, room)
            self._usage += limit  # (it may grow to its limit before the next scan)
            return _Chunk(self.mem_dir, self._seq, limit, "memory")
        if self.spilling:
            os.makedirs(self.spill_path, exist_ok=True)
            room = free_bytes(self.spill_path) - _FREE_MARGIN
            if room >= need:
                return _Chunk(self.spill_path, self._seq, min(CHUNK_BYTES, room), "disk")
        self._full = True  # keep what is stored; the rest streams
        return None

    def _commit(self) -> None:
        w, self._writer = self._writer, None
        if w is None:
            return
        try:
            self._finish(w)
        except OSError:  # the session was destroyed meanwhile, or the disk is full
            _discard(w)
            return
        self._serve(w)

    def _finish(self, w: _Chunk) -> None:
        """Index and trailer after the rows, then the rename that commits the chunk."""
        table = np.asarray(w.index, np.int64).reshape(-1, 3)
        w.file.write(table.tobytes())
        w.file.write(len(w.index).to_bytes(8, "little") + MAGIC)
        w.file.close()
        os.rename(w.path, w.final)

    def _commit_whole(self, w: _Chunk) -> None:
        """Commits the rows of ``w`` written in full before a write failed (its file may end in
        part of a row: cut there), or removes the chunk when even that fails."""
        try:
            w.file.close()  # flushing the rest of the buffer may fail again: the cut below drops it
        except OSError:
            pass
        if not w.index:
            unlink_quiet(w.path)
            return
        try:
            w.file = open(w.path, "r+b")  # noqa: SIM115 - closed by _finish
            w.file.truncate(w.size)
            w.file.seek(w.size)
            self._finish(w)
        except OSError:
            _discard(w)
            return
        self._serve(w)

    def _serve(self, w: _Chunk) -> None:
        with self._lock:  # serve our own rows at once
            name = os.path.basename(w.final)
            if name not in self._loaded:
                self._load(w.final, w.tier)
                self._loaded.add(name)

    def flush(self, blocking: bool = True) -> None:
        """Writes the queued rows and commits the open chunk (``blocking=False``: commits what is
        written, and only when no thread is writing)."""
        if blocking:
            self._drain()
        if not self._wlock.acquire(blocking, 30 if blocking else -1):
            return
        try:
            self._commit()
        finally:
            self._wlock.release()
        self._save_counts()
        self._release_if_complete()

    def _save_counts(self) -> None:
        """Records this process's hits and misses next to the rows (``cache_admin --list_sessions``)."""
        if self._opened and self.hits + self.misses:
            pid, start = me()
            try:
                write_json(os.path.join(self.mem_dir, f"counts-{pid}-{start}-{self.token}.json"),
                           {"hits": self.hits, "misses": self.misses})
            except OSError:  # the session is gone
                pass

    def _release_if_complete(self) -> None:
        if self._may_fill:
            self.refresh()
            if self.cached_rows() >= self.num_rows:
                release_lock(os.path.join(self.mem_dir, "fill.lock"), self.token)
                self._may_fill, self._full = False, True  # complete: nothing more to store
                self._staging.clear()

    # -- statistics --
    def cached_rows(self) -> int:
        return self._present

    def stat(self) -> dict:
        """Rows in memory and on disk, average row bytes, hits and misses of this process."""
        if not self._opened:
            self._open()
        self.refresh()
        present = self._chunk_of[self._chunk_of >= 0]
        tiers = np.asarray([t == "memory" for t in self._tiers], bool)
        mem = int(np.count_nonzero(tiers[present])) if len(present) else 0
        total_bytes = sum(self._bytes)
        rows = len(present)
        return {"num_mem_cached": mem, "num_disk_cached": len(present) - mem,
                "avg_cache_sz": total_bytes // rows if rows else 0, "hits": self.hits, "misses": self.misses}
