"""Sending a stage program to worker processes that do not share the main process's memory.

Spawned workers and workers forked by the fork server (``forkserver.py``) get the program as a
*blob*: cloudpickle (lambdas and closures travel) with protocol 5, its large buffers (NumPy arrays
of an in-memory source) out of band. The blob is written once into an anonymous memory file
(``memfd_create``; a deleted temporary file where there is none) whose descriptor every worker
inherits. A worker maps it copy-on-write and unpickles with the buffers pointing into that
mapping: N workers share one copy of a large source in memory, as forked workers would, and
nothing is ever named in ``/dev/shm`` or the temp dir.
"""
from __future__ import annotations

import copyreg
import functools
import io
import mmap
import os
import pickle
import struct
import subprocess
import tempfile
import types
import weakref
from typing import Any

from headrace._engine.exec import forkserver
from headrace._engine.exec.native_threads import _load_libc
from headrace._engine.exec.shm import _memory_room
from headrace._util.pickling import reduce_code, set_attributes
from headrace._util.wording import setting
from headrace._util.errors import add_note

OUT_OF_BAND = 1 << 16  # buffers at least this large are shared through the mapping, not copied
ALIGN = 64
_HEADER = struct.Struct("<Q")


def dumps_program(program: Any, name: str, method: str = "spawn") -> tuple[bytes, list[pickle.PickleBuffer]]:
    """(pickle stream, out-of-band buffers) of the program (cloudpickle).

    An object that cannot be sent is named here, when the pipeline starts, not at the first batch.
    """
    import cloudpickle  # noqa: PLC0415 - only workers outside this process need it

    bufs: list[pickle.PickleBuffer] = []

    def out_of_band(pb: pickle.PickleBuffer) -> bool:
        if pb.raw().nbytes < OUT_OF_BAND:
            return True
        bufs.append(pb)
        return False

    try:
        out = io.BytesIO()
        _pickler_class(cloudpickle)(out, protocol=5, buffer_callback=out_of_band).dump(program)
        stream = out.getvalue()
        # Rebuilt once here: an object that pickles but cannot be unpickled (a ctypes function
        # pointer held by a user function, say) is named now, not as a worker that failed to start.
        pickle.loads(stream, buffers=bufs)
        return stream, bufs
    except Exception as e:  # noqa: BLE001 - find the part that failed and name it
        culprit = None
        for part_name, obj in getattr(program, "parts", lambda: [])():
            try:
                pickle.loads(cloudpickle.dumps(obj, protocol=5))
            except Exception:  # noqa: BLE001
                culprit = (part_name, obj)
                break
        what = f"{culprit[0]} ({_short_repr(culprit[1])})" if culprit else name
        err = TypeError(f"{what} cannot be sent to a worker process (start method {method!r}): "
                        f"{type(e).__name__}: {e}")
        fork = (f", use {setting('multiprocessing_start_method', repr('fork'))}" if method == "spawn" else "")
        add_note(err, "Make it picklable (e.g. a module-level function or class instead of an object "
                     f"holding a lock, file or C handle){fork}, or run this op in threads "
                     "(python_multiprocessing=False).")
        raise err from e


# NOTE [ attributes of unpickled objects ]
# Python 3.11+ keeps a plain object's attributes in "inline values" until something asks for its
# ``__dict__``; attribute reads of such an object are specialised and fast. Unpickling the usual way
# (``__dict__.update(state)``) materialises the dict, and every ``self.x`` on the object is then
# about 1.7x slower: worker processes that got their program as a pickle ran W1's per-row code
# ~7% slower than forked ones. So plain objects travel with a state setter that sets each
# attribute (``set_attributes``), which keeps them inline. "Plain": an instance of Python classes
# only (no built-in base but object), no ``__slots__``, no custom reduce, ``__getstate__``,
# ``__setstate__`` or ``__getnewargs__``, no copyreg entry, str attribute names, none of them a
# data descriptor of the class. Everything else pickles as before.

_NEWOBJ: Any = getattr(copyreg, "__newobj__")  # what object.__reduce_ex__ rebuilds plain objects with
_PLAIN: dict[type, frozenset[str] | None] = {}  # class -> names of its data descriptors, None: not plain
_HEAPTYPE = 1 << 9


def _plain_descriptors(cls: type) -> frozenset[str] | None:
    if cls in _PLAIN:
        return _PLAIN[cls]
    plain = (all(c is object or (c.__flags__ & _HEAPTYPE and "__slots__" not in c.__dict__) for c in cls.__mro__)
             and all(getattr(cls, n, None) is getattr(object, n, None)
                     for n in ("__reduce_ex__", "__reduce__", "__getstate__"))
             and not any(hasattr(cls, n) for n in ("__setstate__", "__getnewargs__", "__getnewargs_ex__"))
             and cls not in copyreg.dispatch_table)
    names = None
    if plain:
        names = frozenset(n for c in cls.__mro__ if c is not object for n, v in c.__dict__.items()
                          if n not in ("__dict__", "__weakref__") and hasattr(type(v), "__set__"))
    _PLAIN[cls] = names
    return names


_PICKLERS: dict[Any, type] = {}


def _pickler_class(cloudpickle: Any) -> type:
    """cloudpickle's pickler, sending plain objects with :func:`set_attributes` (see the NOTE) and
    code objects with their filename and lines (:func:`reduce_code`)."""
    cls = _PICKLERS.get(cloudpickle)
    if cls is None:
        class Pickler(cloudpickle.Pickler):  # type: ignore[misc]
            def reducer_override(self, obj: Any) -> Any:
                kind = type(obj)
                if kind is types.CodeType:  # NOTE [ code objects keep their file and lines ]
                    return reduce_code(obj)
                if kind.__flags__ & _HEAPTYPE and not isinstance(obj, type):
                    descriptors = _plain_descriptors(kind)
                    if descriptors is not None:
                        state = obj.__dict__
                        if all(type(k) is str and k not in descriptors for k in state):
                            return _NEWOBJ, (kind,), dict(state), None, None, set_attributes
                return super().reducer_override(obj)

        cls = _PICKLERS[cloudpickle] = Pickler
    return cls


_STRING_OPS = frozenset(("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"))
_MEMO_GETS = frozenset(("BINGET", "LONG_BINGET", "GET"))


def referenced_modules(stream: bytes, limit: int = 1 << 20) -> list[str]:
    """Modules whose names the pickle stream imports (its ``GLOBAL``/``STACK_GLOBAL`` opcodes).

    The fork server imports them before forking, so that each worker need not import them
    after every fork. Streams over ``limit`` bytes are not scanned (their data would dominate)."""
    if len(stream) > limit:
        return []
    known = _MODULES.get(stream)
    if known is None:
        known = _MODULES[stream] = _scan_modules(stream)
        while len(_MODULES) > 8:  # a program started again (a new iterator per epoch) is not rescanned
            del _MODULES[next(iter(_MODULES))]
    return list(known)


_MODULES: dict[bytes, list[str]] = {}


def _scan_modules(stream: bytes) -> list[str]:
    import pickletools  # noqa: PLC0415

    memo: dict[int, Any] = {}
    recent: list[Any] = []  # values pushed by the latest string / memo-get opcodes
    mods: set[str] = set()
    try:
        for op, arg, _ in pickletools.genops(stream):
            name = op.name
            if name in _STRING_OPS:
                recent.append(arg)
            elif name in _MEMO_GETS:
                recent.append(memo.get(arg))  # type: ignore[arg-type]
            elif name == "MEMOIZE":
                memo[len(memo)] = recent[-1] if recent else None
            elif name in ("BINPUT", "LONG_BINPUT", "PUT"):
                memo[arg] = recent[-1] if recent else None  # type: ignore[index]
            elif name == "STACK_GLOBAL":
                if len(recent) >= 2 and isinstance(recent[-2], str):
                    mods.add(recent[-2])
                recent.clear()
            elif name == "GLOBAL":
                mods.add(arg.split(" ", 1)[0])  # type: ignore[union-attr]
                recent.clear()
            else:
                recent.clear()
    except Exception:  # noqa: BLE001 - a hint only
        pass
    return sorted(mods)


def _short_repr(obj: Any) -> str:
    try:
        text = repr(obj)
    except Exception:  # noqa: BLE001
        text = f"<{type(obj).__name__}>"
    return text if len(text) <= 120 else text[:117] + "..."


def write_blob(stream: bytes, bufs: list[pickle.PickleBuffer], tag: str) -> int:
    """An anonymous file holding the program; returns its descriptor (the caller closes it).

    Layout: [u64 length of meta][meta: pickle of (stream, spans)] then each buffer at an aligned
    offset, ``spans`` listing (offset, nbytes). A program with large buffers is kept (see
    :class:`_BlobCache`): the next pool of the same program reuses the file when every buffer
    still holds the same bytes."""
    views = [pb.raw() for pb in bufs]
    fd = _CACHE.take(stream, views)
    if fd is not None:
        return fd
    spans = []
    off = 0
    for v in views:
        spans.append((off, v.nbytes))
        off += (v.nbytes + ALIGN - 1) // ALIGN * ALIGN
    meta = pickle.dumps((stream, spans), protocol=5)
    base = (_HEADER.size + len(meta) + mmap.PAGESIZE - 1) // mmap.PAGESIZE * mmap.PAGESIZE
    fd = _anonymous_file(tag)
    try:
        with os.fdopen(os.dup(fd), "wb") as f:
            f.write(_HEADER.pack(len(meta)))
            f.write(meta)
            for (o, _), v in zip(spans, views):
                f.seek(base + o)
                f.write(v)
            f.truncate(base + off)
        _CACHE.keep(fd, stream, views, [base + o for o, _ in spans])
    except BaseException:
        os.close(fd)
        raise
    return fd


class _BlobCache:
    """The blobs of recent programs with large buffers (an in-memory source), so that a program
    run again (a new iterator each epoch, as in W1) is not copied again: writing W1's 13 MB into a
    fresh anonymous file took 5-6 ms per pool; comparing them with the kept copy takes 1.4 ms.

    An entry is found by the exact pickle stream and the buffers' addresses and sizes, and used
    only if every buffer still holds the bytes in the file (a source changed in place is written
    anew). It lives while the arrays it copied do (a weak reference to each drops it), and at most
    ``ENTRIES`` entries are kept, newest first, none larger than an eighth of the memory left."""

    ENTRIES = 2
    MIN_BYTES = 1 << 20  # below this, copying is cheap: not worth a kept file

    def __init__(self) -> None:
        self._entries: list[tuple[tuple, int, mmap.mmap, list[int]]] = []  # key, fd, mapping, offsets

    @staticmethod
    def _key(stream: bytes, views: list[memoryview]) -> tuple:
        return (stream, tuple((_address(v), v.nbytes) for v in views))

    def take(self, stream: bytes, views: list[memoryview]) -> int | None:
        if not views:
            return None
        key = self._key(stream, views)
        for entry in self._entries:
            if entry[0] == key:
                _, fd, mm, offsets = entry
                if all(_same_bytes(mm, o, v) for o, v in zip(offsets, views)):
                    return os.dup(fd)
                self._drop(key)
                return None
        return None

    def keep(self, fd: int, stream: bytes, views: list[memoryview], offsets: list[int]) -> None:
        size = sum(v.nbytes for v in views)
        if size < self.MIN_BYTES or size > _memory_room() // 8:
            return
        try:
            owners = [v.obj for v in views]
            key = self._key(stream, views)
            for owner in owners:
                weakref.finalize(owner, self._drop, key)
        except TypeError:  # an owner without weak references: it could die unnoticed
            return
        mm = mmap.mmap(fd, os.fstat(fd).st_size, access=mmap.ACCESS_READ)
        self._entries.insert(0, (key, os.dup(fd), mm, offsets))
        while len(self._entries) > self.ENTRIES:
            self._close(self._entries.pop())

    def _drop(self, key: tuple) -> None:
        for entry in list(self._entries):
            if entry[0] == key:
                self._entries.remove(entry)
                self._close(entry)

    @staticmethod
    def _close(entry: tuple) -> None:
        try:
            entry[2].close()
        except BufferError:  # pragma: no cover - a comparison still holds a view
            pass
        os.close(entry[1])

    def clear(self) -> None:
        while self._entries:
            self._close(self._entries.pop())


def _address(view: memoryview) -> int:
    import numpy as np  # noqa: PLC0415 - loaded wherever a program has large buffers

    return int(np.frombuffer(view, np.uint8).ctypes.data) if view.nbytes else 0


def _same_bytes(mm: mmap.mmap, offset: int, view: memoryview) -> bool:
    import numpy as np  # noqa: PLC0415

    n = view.nbytes
    kept = np.frombuffer(mm, np.uint8, n, offset)
    now = np.frombuffer(view, np.uint8)
    memcmp = _memcmp()
    if memcmp is not None:  # half of array_equal's time on W1's 13 MB, and no temporary array
        return n == 0 or memcmp(kept.ctypes.data, now.ctypes.data, n) == 0
    if n % 8 == 0 and offset % 8 == 0 and now.ctypes.data % 8 == 0:
        kept, now = kept.view(np.uint64), now.view(np.uint64)
    return bool(np.array_equal(kept, now))


@functools.cache
def _memcmp() -> Any:
    """The C library's ``memcmp`` (through ctypes), or None where there is none."""
    import ctypes  # noqa: PLC0415

    fn = getattr(_load_libc() or None, "memcmp", None)
    if fn is not None:
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    return fn


_CACHE = _BlobCache()


def load_blob(fd: int) -> Any:
    """The program from :func:`write_blob`'s file; large buffers stay in a copy-on-write mapping."""
    size = os.fstat(fd).st_size
    mm = mmap.mmap(fd, size, access=mmap.ACCESS_COPY)
    (n,) = _HEADER.unpack_from(mm, 0)
    stream, spans = pickle.loads(mm[_HEADER.size:_HEADER.size + n])
    base = (_HEADER.size + n + mmap.PAGESIZE - 1) // mmap.PAGESIZE * mmap.PAGESIZE
    view = memoryview(mm)
    return pickle.loads(stream, buffers=[view[base + o:base + o + k] for o, k in spans])


def _anonymous_file(tag: str) -> int:
    if hasattr(os, "memfd_create"):
        try:
            return os.memfd_create(tag, getattr(os, "MFD_CLOEXEC", 1))
        except OSError:
            pass
    fd, path = tempfile.mkstemp(prefix=tag)  # pragma: no cover - no memfd: unlinked at once
    os.unlink(path)
    return fd


def single_threaded() -> bool:
    """True when this process provably has one thread (Linux lists them in /proc/self/task).

    Only then is a plain fork safe: no other thread can hold a lock the child would inherit held,
    and none can start while this thread is busy forking."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


# ---- handles on started workers (used by workers._Worker) ---------------------------------------

class MpProc:
    """A worker this process forked itself (multiprocessing's fork context)."""

    def __init__(self, proc: Any) -> None:
        self.proc, self.pid = proc, proc.pid

    def alive(self) -> bool:
        try:
            return self.proc.is_alive()
        except ValueError:  # released by close()
            return False

    def returncode(self, wait: float) -> int | None:
        try:
            self.proc.join(wait)
            return self.proc.exitcode
        except ValueError:  # released by close()
            return None

    def release(self) -> None:
        """Frees the process handle's own pipes (multiprocessing keeps two per child)."""
        if not self.alive():
            try:
                self.proc.close()
            except ValueError:  # pragma: no cover - still running after SIGKILL; the GC frees it
                pass

    def signal(self, sig: int) -> None:
        try:
            os.kill(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


class PopenProc(MpProc):
    """A spawned worker."""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def returncode(self, wait: float) -> int | None:
        try:
            self.proc.wait(wait)
        except subprocess.TimeoutExpired:
            pass
        return self.proc.returncode

    def release(self) -> None:
        pass


class ServedProc:
    """A worker the fork server forked: the server reaps it, reports its status and signals it
    (only the server can tell that the pid is still its worker's)."""

    def __init__(self, server: forkserver.ForkServer, pid: int) -> None:
        self.server, self.pid = server, pid

    def alive(self) -> bool:
        return self.server.alive(self.pid)

    def returncode(self, wait: float) -> int | None:
        return self.server.returncode(self.pid, wait)

    def release(self) -> None:
        if not self.alive():
            self.server.forget(self.pid)

    def signal(self, sig: int) -> None:
        self.server.kill(self.pid, sig)
