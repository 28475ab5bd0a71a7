"""Writer locks: one FileWriter at a time per MindRecord file, from open to commit.

A lock is ``flock(LOCK_EX | LOCK_NB)`` on a hidden file next to the data file
(``.NAME.hrlock``; it covers the data file and its ``.db``). The kernel drops an ``flock`` when
the process holding it dies, however it dies, so a killed writer never blocks the next one: the
lock file it leaves behind is an unlocked file that the next writer takes over. The file holds a
line naming its holder (pid, host, program, start time) so a refused writer can say who holds it.

Releasing unlinks the file while still holding the lock; a writer that opened the old file just
before checks after locking that the name still points at the file it locked, and retries if not.
Two writers in one process conflict too (each lock is its own open file description). When the
holder is this process, a garbage collection runs once before refusing: a writer that its user
dropped lives only in a reference cycle, and collecting it releases its lock (its finalizer does);
a writer still in use keeps the lock. See NOTE [ errors do not hold writers ] for the writers an
exception's traceback would keep alive.
The descriptor is close-on-exec, but a child forked while a writer is open holds the lock until
the child exits or closes it.
"""
from __future__ import annotations

import datetime
import fcntl
import functools
import gc
import inspect
import os
import socket
import sys
import time
import types
import weakref
from typing import Any, Callable, Sequence, TypeVar

from .errors import MindRecordRuntimeError

_SUFFIX = ".hrlock"
_MAX_INFO = 4096


def lock_path(path: str) -> str:
    """The lock file of data file ``path``."""
    directory, name = os.path.split(path)
    return os.path.join(directory, f".{name}{_SUFFIX}")


def _holder_line() -> str:
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    program = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
    return f"pid {os.getpid()} on {socket.gethostname()} ({program}), since {started}"


NAME_WAIT = 1.0  # seconds a refused writer waits for the holder to write its name (it does so at once)


def _read_holder(fd: int) -> str:
    """Who holds the lock, as it wrote it. The holder writes its name just after taking the lock,
    so a writer refused in between waits briefly for it rather than naming nobody."""
    deadline = time.monotonic() + NAME_WAIT
    while True:
        try:
            text = os.pread(fd, _MAX_INFO, 0).decode("utf-8", "replace").strip()
        except OSError:
            text = ""
        if text or time.monotonic() > deadline:
            return text or "a writer that has not written its name yet"
        time.sleep(0.005)


class WriterLock:
    """Exclusive locks on the lock files of ``paths`` (all or none)."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = list(paths)
        self._held: list[tuple[str, int]] = []
        # the object whose life the lock is for, with a method ``_abandon()`` that closes it
        # (NOTE [ errors do not hold writers ]); None: always in use
        self.owner: weakref.ref | None = None

    def acquire(self) -> None:
        """Takes every lock, or none and raises ``MindRecordRuntimeError`` naming the file and its holder."""
        try:
            for path in sorted(set(self.paths)):
                self._held.append((lock_path(path), self._lock_one(path)))
        except BaseException:
            self.release()
            raise
        _HELD.add(self)
        line = (_holder_line() + "\n").encode("utf-8")
        for _, fd in self._held:
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, line, 0)
            except OSError:
                pass  # the name is a courtesy; the lock itself is held

    @staticmethod
    def _lock_one(path: str) -> int:
        lpath = lock_path(path)
        collected = looked = False
        for _ in range(100):
            try:
                fd = os.open(lpath, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
            except OSError as exc:
                raise MindRecordRuntimeError(f"Invalid file, cannot create the writer lock file {lpath} for "
                                             f"{path}: {exc.strerror or exc}.") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                ours = holder.startswith(f"pid {os.getpid()} on {socket.gethostname()} ")
                if ours and not collected:
                    collected = True  # maybe a dropped writer waiting in a reference cycle
                    gc.collect()
                    continue
                if ours and not looked:
                    looked = True     # maybe a writer that only a kept exception's traceback refers to
                    if _abandon_unreachable(lpath):
                        continue
                raise MindRecordRuntimeError(
                    f"Invalid file, another FileWriter is writing {path} ({holder}). Wait until it commits, "
                    f"or write to another file name.") from None
            except OSError as exc:
                os.close(fd)
                raise MindRecordRuntimeError(f"Invalid file, cannot lock {lpath} for writing {path}: "
                                             f"{exc.strerror or exc}.") from None
            try:
                same = os.fstat(fd).st_ino == os.stat(lpath).st_ino
            except FileNotFoundError:
                same = False
            if same:
                return fd
            os.close(fd)  # released and unlinked by its holder in between: lock the new file
        raise MindRecordRuntimeError(f"Invalid file, could not lock {lpath} for writing {path}.")  # pragma: no cover

    def release(self) -> None:
        """Removes the lock files and drops the locks. Idempotent."""
        _HELD.discard(self)
        while self._held:
            lpath, fd = self._held.pop()
            try:
                os.unlink(lpath)
            except OSError:
                pass
            try:
                os.close(fd)
            except OSError:
                pass

    @property
    def held(self) -> bool:
        return bool(self._held)


# NOTE [ errors do not hold writers ]
# A FileWriter holds its lock from its first write to its commit, and releases it when it is
# collected. An exception raised by one of its methods would keep it alive for as long as the
# exception lives: the traceback holds the method's frame, and the frame holds ``self`` (and the
# core writer, in locals of the frames below). Tests keep exceptions (``pytest.raises(...) as e``),
# so do ``except ... as e: errors.append(e)`` loops and notebooks (``sys.last_value``): the writer
# its user replaced by a new one on the same files would then block that new one at its first
# write, although nothing can use the old one any more (MindSpore, which has no lock, lets the next
# writer go ahead). So a method's exception leaves carrying no reference to its writer: the
# finished frames of this package in its traceback (and in those of its causes and contexts) are
# cleared, and the method's own frame drops ``self`` before the exception leaves it. The writer
# then lives exactly as long as its user's references to it: still referenced, it keeps its lock
# and can go on (MindSpore's writer stays usable after an argument error); dropped, it is freed at
# once and its finalizer removes its temporary files and releases the lock. The cost: a debugger
# opened on such an exception sees no local variables in headrace's frames (file, line and code
# are still there).
# The user's own frames are not ours to clear: a function that made a writer and returned the error
# its writer raised leaves the writer in its finished frame, which the error's traceback holds.
# So a writer refused by a lock that this process holds (after the garbage collection above) looks
# at the holder (``WriterLock.owner``): when finished frames are all that refer to it, counted
# exactly (``sys.getrefcount`` against the references the collector shows, less what the
# measurement itself adds, measured on a probe by the same code), nothing can use it but through
# a traceback, and it is closed (``_abandon``: temporary files removed, lock released, later calls
# refused saying why). A reference the collector cannot show (a running function's local, C code)
# leaves the count short, and the holder keeps its lock; frame locals are never read (on 3.11 that
# would make a lasting copy of them).

_F = TypeVar("_F", bound=Callable[..., Any])
_PACKAGE = __name__.rsplit(".", 2)[0]     # headrace.mindrecord


def _clear_package_frames(exc: BaseException) -> None:
    """Clears the finished frames of this package in the tracebacks of ``exc`` and of its causes
    and contexts (frames still running are left as they are)."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        tb = e.__traceback__
        while tb is not None:
            frame = tb.tb_frame
            if str(frame.f_globals.get("__name__", "")).startswith(_PACKAGE):
                try:
                    frame.clear()
                except RuntimeError:    # still running: the caller's own frame
                    pass
            tb = tb.tb_next
        todo += [e.__cause__, e.__context__]


_HELD: "weakref.WeakSet[WriterLock]" = weakref.WeakSet()   # this process's locks, while held


class _Probe:
    pass


# A generator's or coroutine's frame is not running while it is suspended, yet it goes on when
# resumed (on 3.10 its writer is referred to by that frame itself): never taken as finished.
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def _running_frames() -> set[int]:
    running = set()
    for frame in sys._current_frames().values():
        f: types.FrameType | None = frame
        while f is not None:
            running.add(id(f))
            f = f.f_back
    return running


def _unseen(obj: Any) -> tuple[int, list]:
    """References to ``obj`` that the garbage collector does not show (locals of running frames,
    C code, and this measurement's own), and the objects it shows referring to ``obj``."""
    total = sys.getrefcount(obj)
    referrers = gc.get_referrers(obj)
    shown = 0
    for referrer in referrers:     # loops, not a generator expression: its cell would refer to obj
        for x in gc.get_referents(referrer):
            shown += x is obj
    return total - shown, referrers


def _only_in_finished_frames(ref: weakref.ref) -> bool:
    """Whether the object of ``ref`` is referred to by finished frames (the frames a kept
    exception's traceback holds) and nothing else. Exact: every reference is counted, so a
    reference the collector cannot show (a running function's local) makes it False."""
    probe = _Probe()
    keep = [probe]
    own, _ = _unseen(probe)        # what the measurement adds: the same code on an object of known referrers
    del keep, probe
    obj = ref()
    if obj is None:
        return False
    unseen, referrers = _unseen(obj)
    del obj
    running = _running_frames()
    return unseen == own and bool(referrers) and all(
        isinstance(r, types.FrameType) and id(r) not in running and not r.f_code.co_flags & _RESUMABLE
        for r in referrers)


def _abandon_unreachable(lpath: str) -> bool:
    """Closes the holder of ``lpath`` in this process if only finished frames refer to it."""
    for lock in list(_HELD):
        owner = lock.owner
        if owner is not None and any(p == lpath for p, _ in lock._held) and _only_in_finished_frames(owner):
            holder = owner()
            if holder is not None:
                holder._abandon()
                return True
    return False


def drops_writer_on_error(method: _F) -> _F:
    """Decorates a writer's method so that an exception it raises holds no reference to the writer
    (NOTE [ errors do not hold writers ])."""
    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except BaseException as exc:
            _clear_package_frames(exc)
            del self
            raise
    return call  # type: ignore[return-value]
