"""The wire between a process pool and its workers: pipe sizes and framing, how many tasks and result
bytes are in flight per worker, when a worker holds quick results back to send them with the next
one, the progress page that says which task a worker runs, and the pool-side pipe ends and pools a
forked child must drop (see NOTE [ worker shutdown ] in process_pool.py)."""
from __future__ import annotations
import math
import multiprocessing.connection as mpc
import select
import struct
import weakref
from typing import Any, Callable

try:
    import fcntl
    import termios
except ImportError:  # pragma: no cover - not POSIX
    fcntl = termios = None  # type: ignore[assignment]


__all__ = ["DEPTH_BYTES", "HOLD_BYTES", "HOLD_SECONDS", "MAX_DEPTH", "MAX_HELD", "PIPE_SIZE", "fcntl", "termios"]

PIPE_SIZE = 1 << 20


MAX_DEPTH = 16           # tasks in flight per worker, at most


HOLD_SECONDS = 0.001     # a worker writes the results of tasks this quick (together) with the next one's


HOLD_BYTES = 4096        # (when that task is queued already and the message is at most this long)


# Results a worker holds back at most, while the tasks they came from took under HOLD_SECONDS in all:
# one write (and one wake-up of the main process) then carries up to MAX_HELD + 1 results. W1's
# tasks (~0.37 ms) travel three to a write: the median of 25 epochs over 2 workers was 175.0 and
# 178.8 ms against 179.0 and 182.5 with one result held (runs in turns, 2026-11-29); holding up to
# 2 or 4 ms of tasks gave the same within noise. A worker without a progress page (below) holds
# one, so that a death names at most two tasks.
MAX_HELD = 3
_PROGRESS = struct.Struct("q")  # a worker's progress page: seq + 1 while it runs task seq, -(seq + 1) after


def running_task(page: Any) -> int | None:
    """The task a worker runs, from its progress page (a mapping it writes before and after each
    task): its ``seq``, or None between tasks and before the first."""
    try:
        value = _PROGRESS.unpack_from(page, 0)[0]
    except (ValueError, struct.error):  # the page was closed
        return None
    return value - 1 if value > 0 else None


def set_progress(page: Any, seq: int, running: bool) -> None:
    _PROGRESS.pack_into(page, 0, seq + 1 if running else -(seq + 1))


_FRAME_HEADER = struct.Struct("!i")  # multiprocessing.connection's length prefix


DEPTH_BYTES = 32 << 20   # results in flight per worker, roughly (small results: deeper queues)


_PARENT_FDS: set[int] = set()  # our ends of every live pool's pipes; a forked child closes them
_LIVE: "weakref.WeakSet[Any]" = weakref.WeakSet()  # this process's live pools; a forked child forgets them


def _poller(conn: mpc.Connection) -> Callable[[float], bool]:
    """``conn.poll`` for one connection, made once: ``Connection.poll`` builds and tears down a
    selector in Python on every call (tens of microseconds, once per task on each side)."""
    if not hasattr(select, "poll"):  # pragma: no cover - platforms without poll(2)
        return conn.poll
    p = select.poll()
    p.register(conn.fileno(), select.POLLIN)

    def readable(timeout: float) -> bool:
        return bool(p.poll(math.ceil(max(0.0, timeout) * 1000)))

    return readable


def _pipe_size(fd: int) -> int:
    """The pipe's capacity in bytes (F_GETPIPE_SZ); 0 when it cannot be told."""
    if fcntl is None:  # pragma: no cover
        return 0
    try:
        return fcntl.fcntl(fd, getattr(fcntl, "F_GETPIPE_SZ", 1032))
    except OSError:
        return 0


def _grow_pipe(fd: int) -> None:
    """A 1 MiB pipe (Linux's default is 64 KiB): results queue up in the pipe instead of
    blocking a worker while the main process is busy."""
    try:
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_SIZE)
    except (AttributeError, OSError):
        pass
