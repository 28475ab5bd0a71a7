"""Moving payloads between processes: NumPy data in shared memory, a small header in the pipe.

Rows of plain arrays (:func:`pack_rows`) are written as raw *frames* into a :class:`Slot`, a
shared-memory segment that its writer reuses from one message to the next and grows on demand;
the header lists (dtype, shape, offset) per array. Anything else (:func:`pack`) is pickled with
protocol 5, contiguous buffers of at least ``threshold`` bytes going *out of band* into the slot
(and, where plain pickle fails, once more naming the user's classes: NOTE [ classes of the main script ]).
Only the header, the segment name and the offsets travel through the pipe. The receiver copies
the data out at once, so a slot is free again as soon as its message has been read, and nothing
the consumer holds points into shared memory.

Segments are anonymous where Linux allows it (``memfd_create``): the writer keeps the file
descriptor and sends a reference ``/proc/<writer pid>/fd/<fd>#<tag>``; the reader opens that path
and maps it. Nothing is ever named, so nothing can outlive the processes that map it, whatever
kills them (SIGKILL of a whole process group included). Without memfd (or where it fails, e.g. at
the fd limit) a segment is a ``/dev/shm`` name with the owning pool's prefix
(``hr<pid>_<pool>_``): the receiver unlinks it the first time it maps it, the pool's ``close()``
and a leaving worker remove any name still carrying the prefix (see NOTE [ worker shutdown ] in
process_pool.py).

Creating a segment reserves its pages (``posix_fallocate``): a full ``/dev/shm`` shows up as
:class:`ShmFull` when the slot is created or grown, never as a SIGBUS when it is written. An
anonymous segment is bounded by the memory left (``MemAvailable`` and the cgroup's limit: an
unbounded ``fallocate`` there would wake the OOM killer instead of failing). A writer that meets
:class:`ShmFull` falls back to pickling the payload in band (through the pipe).
"""
from __future__ import annotations

import io
import mmap
import os
import pickle
import sys
from typing import Any, Callable

import numpy as np

from headrace._util.arrays import ALIGN_FROM, empty_aligned

try:  # the private module multiprocessing.shared_memory uses; we skip its resource tracker
    import _posixshmem
except ImportError:  # pragma: no cover - non-POSIX platforms use the pipe transport
    _posixshmem = None

SHM_DIR = "/dev/shm"
ALIGN = 64
MIN_SEGMENT = 1 << 16
THRESHOLD = 1 << 12  # smaller buffers travel in band, through the pipe (not worth a slot)


class ShmFull(OSError):
    """``/dev/shm`` has no room for a segment of the requested size."""


def available() -> bool:
    return _posixshmem is not None or memfd_usable()


def free_bytes() -> int | None:
    """Free bytes in ``/dev/shm``, or None when it cannot be told (no such mount)."""
    try:
        st = os.statvfs(SHM_DIR)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def unlink(name: str) -> None:
    try:
        _posixshmem.shm_unlink("/" + name)
    except (FileNotFoundError, OSError):
        pass


def unlink_prefix(prefix: str) -> int:
    """Unlinks every segment whose name starts with ``prefix`` (Linux lists them in /dev/shm)."""
    try:
        names = os.listdir(SHM_DIR)
    except OSError:
        return 0
    n = 0
    for name in names:
        if name.startswith(prefix):
            unlink(name)
            n += 1
    return n


def create(name: str, size: int) -> tuple[mmap.mmap, str, int]:
    """A new segment of ``size`` bytes with its pages reserved; raises :class:`ShmFull`.

    Returns (mapping, the reference a reader passes to :meth:`Reader.get`, the fd the writer must
    keep open while a reader may still open the reference, or -1 for a named segment).
    """
    if memfd_usable():
        try:
            fd = os.memfd_create(name, getattr(os, "MFD_CLOEXEC", 1))
        except OSError:  # e.g. EMFILE: a named segment needs no fd kept open
            fd = -1
        if fd >= 0:
            try:
                if size > _memory_room() // 2:
                    raise ShmFull(28, f"not enough memory for a {size}-byte shared segment")
                _reserve(fd, size)
                return mmap.mmap(fd, size), f"/proc/{os.getpid()}/fd/{fd}#{name}", fd
            except BaseException:
                os.close(fd)
                raise
    if _posixshmem is None:  # pragma: no cover - neither memfd nor POSIX shared memory
        raise ShmFull(38, "no shared memory on this platform")
    fd = _posixshmem.shm_open("/" + name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    try:
        try:
            _reserve(fd, size)
        except ShmFull:
            unlink(name)
            raise
        return mmap.mmap(fd, size), name, -1
    finally:
        os.close(fd)


def _reserve(fd: int, size: int) -> None:
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as e:
        if e.errno not in (95,):  # EOPNOTSUPP: fall back to a sparse size below
            raise ShmFull(e.errno, f"/dev/shm has no room for a {size}-byte segment") from e
        os.ftruncate(fd, size)


_memfd: bool | None = None


def memfd_usable() -> bool:
    """Anonymous segments work here: memfd_create exists and /proc/<pid>/fd/<n> reopens one."""
    global _memfd
    if _memfd is None:
        _memfd = False
        if hasattr(os, "memfd_create"):
            try:
                fd = os.memfd_create("hrprobe", getattr(os, "MFD_CLOEXEC", 1))
            except OSError:
                return False
            try:
                os.close(os.open(f"/proc/{os.getpid()}/fd/{fd}", os.O_RDWR))
                _memfd = True
            except OSError:
                pass
            finally:
                os.close(fd)
    return _memfd


def _memory_room() -> int:
    """Bytes of memory this process may still use (MemAvailable, capped by a cgroup v2 limit)."""
    room = 1 << 62
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    room = int(line.split()[1]) << 10
                    break
    except (OSError, ValueError):
        pass
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        if limit != "max":
            with open("/sys/fs/cgroup/memory.current") as f:
                room = min(room, int(limit) - int(f.read()))
    except (OSError, ValueError):
        pass
    return max(0, room)


def attach(ref: str) -> mmap.mmap:
    """Maps a segment by the reference :func:`create` returned (a named one is unlinked: both
    sides hold mappings now, nothing needs the name any more)."""
    if ref.startswith("/proc/"):
        fd = os.open(ref.partition("#")[0], os.O_RDWR)
    else:
        fd = _posixshmem.shm_open("/" + ref, os.O_RDWR, 0o600)
        unlink(ref)
    try:
        return mmap.mmap(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)


class Slot:
    """A reusable segment written by one side; grows (under a new name) when a payload is larger."""

    __slots__ = ("base", "gen", "name", "mm", "size", "fd")

    def __init__(self, base: str) -> None:
        self.base = base
        self.gen = 0
        self.name: str | None = None  # the reference a reader maps (see create())
        self.mm: mmap.mmap | None = None
        self.size = 0
        self.fd = -1  # an anonymous segment's fd, kept open so that its reader can open it

    def ensure(self, need: int) -> mmap.mmap:
        if need > self.size:
            size = max(MIN_SEGMENT, need + need // 4)
            size = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE * mmap.PAGESIZE
            self.gen += 1
            name = f"{self.base}g{self.gen}"
            mm, ref, fd = create(name, size)  # may raise ShmFull; the old segment stays usable
            self.close(unlink_name=True)
            self.name, self.mm, self.size, self.fd = ref, mm, size, fd
        return self.mm  # type: ignore[return-value]

    def close(self, unlink_name: bool = True) -> None:
        if self.mm is not None:
            try:
                self.mm.close()
            except BufferError:  # pragma: no cover - a view is still alive; the mapping dies with it
                pass
            if unlink_name and self.name is not None and self.fd < 0:
                unlink(self.name)  # usually already gone: the reader unlinks on first attach
        if self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:  # pragma: no cover
                pass
        self.mm, self.name, self.size, self.fd = None, None, 0, -1


class Reader:
    """The receiving side's mappings, one per sender slot; a new name replaces the old mapping."""

    def __init__(self) -> None:
        self._maps: dict[Any, tuple[str, mmap.mmap]] = {}

    def get(self, key: Any, name: str) -> mmap.mmap:
        cur = self._maps.get(key)
        if cur is not None and cur[0] == name:
            return cur[1]
        if cur is not None:
            _close_map(cur[1])
        mm = attach(name)
        self._maps[key] = (name, mm)
        return mm

    def close(self) -> None:
        for _, mm in self._maps.values():
            _close_map(mm)
        self._maps.clear()


def _close_map(mm: mmap.mmap) -> None:
    try:
        mm.close()
    except BufferError:  # pragma: no cover
        pass


def pack(obj: Any, slot: Slot | None, threshold: int = THRESHOLD,
         on_full: Callable[[], None] | None = None) -> tuple[bytes, str | None, tuple]:
    """(pickle header, segment name or None, ((offset, nbytes), ...)) for ``obj``.

    Without a slot, or when ``/dev/shm`` is full (``on_full`` is told), everything is pickled in band.
    """
    if slot is None:
        return dumps(obj), None, ()
    bufs: list[memoryview] = []

    def out_of_band(pb: pickle.PickleBuffer) -> bool:
        mv = pb.raw()
        if mv.nbytes < threshold:
            return True
        bufs.append(mv)
        return False

    head = dumps(obj, out_of_band, bufs.clear)  # (a second attempt drops what the first put out of band)
    if not bufs:
        return head, None, ()
    spans = []
    off = 0
    for mv in bufs:
        spans.append((off, mv.nbytes))
        off += (mv.nbytes + ALIGN - 1) // ALIGN * ALIGN
    try:
        mm = slot.ensure(off)
    except ShmFull:
        if on_full is not None:
            on_full()
        return dumps(obj), None, ()
    for (o, n), mv in zip(spans, bufs):
        mm[o:o + n] = mv
    return head, slot.name, tuple(spans)


# NOTE [ classes of the main script ]
# A worker started by the fork server or by spawn runs another __main__ than the user's script.
# Its program came by cloudpickle, which sends the script's classes by value: there they are
# classes whose __module__ is "__main__" but that the worker's __main__ does not hold, so plain
# pickle, which writes a class as a module and a name, cannot send back a result holding an
# instance of one (a namedtuple, a dataclass). Such a result is pickled once more, writing those
# classes as their qualified name that the receiving process looks up in its own __main__: the
# caller gets instances of its own classes. Only a failed first attempt pays for the second one.
# A class that the receiver cannot find so (made in a function; nested in a class, whose qualified
# name cloudpickle does not keep) is an error that names it and says to define it at module level.

_MAIN_NAMES = ("__main__", "__mp_main__")  # the script's module, run as such or by multiprocessing's spawn
_NOT_NAMED = (pickle.PicklingError, AttributeError)  # 3.11 says AttributeError for a "<locals>" class


def _attribute(root: Any, qualname: str) -> Any:
    for part in qualname.split("."):
        root = getattr(root, part)
    return root


def main_class(qualname: str) -> Any:
    """The class ``qualname`` of this process's ``__main__``: how a result names a class of the
    main script that its worker could not name (NOTE [ classes of the main script ])."""
    try:
        return _attribute(sys.modules["__main__"], qualname)
    except AttributeError:
        raise AttributeError(f"a worker process returned an instance of the class __main__.{qualname}, "
                             f"but this process's __main__ module has no attribute {qualname!r}: "
                             "define the class at the module level of the main script") from None


class _MainNamingPickler(pickle.Pickler):
    """A pickler that writes the main script's classes it cannot name as :func:`main_class` calls."""

    def reducer_override(self, obj: Any) -> Any:
        if not isinstance(obj, type) or obj.__module__ not in _MAIN_NAMES:
            return NotImplemented
        name = obj.__qualname__
        try:
            if _attribute(sys.modules["__main__"], name) is obj:
                return NotImplemented  # plain pickle names it
        except AttributeError:
            pass
        if "<locals>" in name:
            raise pickle.PicklingError(f"{obj!r} is defined inside a function, so its instances cannot be "
                                       "sent between processes: define it at the module level of the main script")
        return main_class, (name,)


def dumps(obj: Any, buffer_callback: Callable[[pickle.PickleBuffer], bool] | None = None,
          before_retry: Callable[[], None] | None = None) -> bytes:
    """``pickle.dumps(obj, protocol=5, buffer_callback=buffer_callback)``, naming the main script's
    classes where it must (NOTE [ classes of the main script ]); ``before_retry`` is called before
    that second attempt."""
    try:
        return pickle.dumps(obj, protocol=5, buffer_callback=buffer_callback)
    except _NOT_NAMED:
        pass
    if before_retry is not None:  # (outside the handler: an error of the second attempt stands alone)
        before_retry()
    out = io.BytesIO()
    _MainNamingPickler(out, protocol=5, buffer_callback=buffer_callback).dump(obj)
    return out.getvalue()


FRAME = "frame"  # ``spans`` = (FRAME, bytes): the message's rows are raw array frames in the slot

# Frames from this size up are copied by NumPy, which lets go of the GIL while it copies; a
# memoryview assignment holds it. The main process unpacks on several prefetch threads: W2's 77 MB
# a batch, copied under the GIL, held it 39% of the time at 8 workers (py-spy --gil, H100 host).
# Smaller frames keep the memoryview path, whose call costs a third of NumPy's.
NUMPY_COPY_FROM = 1 << 16


def payload_bytes(head: bytes, spans: Any) -> int:
    """Bytes a packed message moves (header plus what sits in the slot)."""
    if spans and spans[0] == FRAME:
        return 64 + len(head[2]) * 24 + spans[1]  # type: ignore[arg-type] # head: the (meta, width, descs) tuple itself
    return len(head) + sum(n for _, n in spans)


def _frameable(rows: Any) -> bool:
    if type(rows) is not list or not rows:
        return False
    width = len(rows[0]) if type(rows[0]) is tuple else -1
    for r in rows:
        if type(r) is not tuple or len(r) != width:
            return False
        for a in r:
            if type(a) is not np.ndarray or a.dtype.hasobject:
                return False
    return True


def pack_rows(meta: Any, rows: Any, slot: Slot | None,
              on_full: Callable[[], None] | None = None) -> tuple[bytes, str | None, Any]:
    """Like :func:`pack` for ``(meta, rows)``; rows of plain arrays go as raw frames.

    A frame is the array's bytes at an aligned offset in the slot, described by (dtype, shape,
    offset) in the header: cheaper than pickling the arrays, on both sides. For frames the header
    is the tuple ``(meta, width, descs)`` itself, not its pickle: it travels inside the message
    the caller pickles anyway (one pickle per message, not two); any other header is bytes.
    """
    if slot is None or not _frameable(rows):
        return pack((meta, rows), slot, on_full=on_full)
    descs = []
    arrays = []
    off = 0
    for r in rows:
        for a in r:
            if not a.flags.c_contiguous:
                a = np.ascontiguousarray(a)
            arrays.append(a)
            descs.append((a.dtype.str if a.dtype.names is None else a.dtype, a.shape, off))
            off += (a.nbytes + ALIGN - 1) // ALIGN * ALIGN
    try:
        mm = slot.ensure(max(off, 1))
    except ShmFull:
        if on_full is not None:
            on_full()
        return dumps((meta, rows)), None, ()
    for a, (_, _, o) in zip(arrays, descs):
        n = a.nbytes
        if n >= NUMPY_COPY_FROM:
            np.copyto(np.frombuffer(mm, np.uint8, n, o), a.reshape(-1).view(np.uint8))
        elif n:
            try:
                mm[o:o + n] = memoryview(a).cast("B")
            except ValueError:  # datetime64 / timedelta64 export no buffer: their bytes as uint8
                mm[o:o + n] = a.reshape(-1).view(np.uint8)
    return (meta, len(rows[0]), descs), slot.name, (FRAME, off)  # type: ignore[return-value]


def unpack_rows(head: Any, name: str | None, spans: Any, reader: Reader | None, key: Any) -> tuple[Any, Any]:
    """(meta, rows) from :func:`pack_rows`; arrays are copied out of shared memory."""
    if not spans or spans[0] != FRAME:
        return unpack(head, name, spans, reader, key)
    meta, width, descs = head
    mm = reader.get(key, name)  # type: ignore[arg-type,union-attr]
    flat = []
    empty = np.empty
    with memoryview(mm) as mv:
        for dt, shape, o in descs:
            a = empty(shape, dt)
            n = a.nbytes
            if n >= ALIGN_FROM:  # 64-byte aligned, as the engine's batches are (small ones skip the call)
                a = empty_aligned(shape, a.dtype)
            if n >= NUMPY_COPY_FROM:
                np.copyto(a.reshape(-1).view(np.uint8), np.frombuffer(mv, np.uint8, n, o))
            elif n:
                try:
                    memoryview(a).cast("B")[:] = mv[o:o + n]
                except ValueError:  # datetime64 / timedelta64 (see pack_rows)
                    a.reshape(-1).view(np.uint8)[:] = mv[o:o + n]
            flat.append(a)
    return meta, [tuple(flat[i:i + width]) for i in range(0, len(flat), width)]


def unpack(head: bytes, name: str | None, spans: tuple, reader: Reader | None, key: Any) -> Any:
    """The object ``pack`` described; buffers are copied out of shared memory."""
    if name is None:
        return pickle.loads(head)
    mm = reader.get(key, name)  # type: ignore[union-attr]
    with memoryview(mm) as mv:
        bufs = [bytearray(mv[o:o + n]) for o, n in spans]
    return pickle.loads(head, buffers=bufs)
