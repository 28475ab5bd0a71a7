"""The files of the row cache (``cache_store.py``): where the tiers live, which process wrote a
file and whether it still runs, the record of one row, and the fill lock.

A process is named by its pid and its start time (``/proc/<pid>/stat``), so a pid reused by a
new process never passes for the old one. The fill lock is a file holding "pid start token",
made whole with ``link`` (it appears complete or not at all) and taken over from a dead holder by
renaming it aside first, so two processes cannot both take it.
"""
from __future__ import annotations

import json
import os
import pickle
import shutil
import tempfile
import threading
from typing import Any

import numpy as np

MAGIC = b"HRCACHE1"
_ALIGN = 8

# ---- places ----------------------------------------------------------------------------------
def memory_root() -> str:
    """Root of the memory tier (a tmpfs when there is one)."""
    env = os.environ.get("HEADRACE_CACHE_SHM")
    if env:
        return env
    base = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    return os.path.join(base, f"headrace-cache-{os.getuid()}")


def spill_root(spill_dir: str | None = None) -> str:
    """Root of the spill tier: ``spill_dir``, else ``$HEADRACE_CACHE_SPILL``, else the temp dir."""
    base = spill_dir or os.environ.get("HEADRACE_CACHE_SPILL") or tempfile.gettempdir()
    return os.path.join(base, f"headrace-cache-{os.getuid()}")


def session_dir(root: str, session: int) -> str:
    return os.path.join(root, f"s{session}")


# ---- processes ---------------------------------------------------------------------------------
def process_start(pid: int) -> int | None:
    """Start time (clock ticks since boot) of a live process; None when gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    if fields[0] in (b"Z", b"X"):
        return None
    return int(fields[19])


def is_alive(pid: int, start: int | None) -> bool:
    """Whether process ``pid`` runs and is the one that started at ``start`` (not a reused pid)."""
    now = process_start(pid)
    return now is not None and (start is None or start == now)


_ME: tuple[int, int] | None = None


def me() -> tuple[int, int]:
    """(pid, start time) of this process (recomputed after a fork)."""
    global _ME
    if _ME is None or _ME[0] != os.getpid():
        pid = os.getpid()
        _ME = (pid, process_start(pid) or 0)
    return _ME


def owner_of(name: str) -> tuple[int, int] | None:
    """(pid, start) from a chunk file name ``x-<pid>-<start>-<seq>.ext``."""
    parts = name.split(".", 1)[0].split("-")
    if len(parts) != 4:
        return None
    try:
        return int(parts[1]), int(parts[2])
    except ValueError:
        return None


# ---- row records ---------------------------------------------------------------------------------
def _pad(n: int) -> int:
    return -n % _ALIGN


def encode_row(row: tuple) -> tuple[list[Any], int]:
    """The buffers of one row record and its length."""
    spec: list[Any] = []
    bodies: list[Any] = []
    for value in row:
        a = value if isinstance(value, np.ndarray) else None
        if a is None or a.dtype.hasobject:
            blob = pickle.dumps(value, protocol=5)
            spec.append(("P", len(blob)))
            bodies.append(blob)
        else:
            spec.append((a.dtype.str, a.shape))
            a = a if a.flags.c_contiguous else np.ascontiguousarray(a)  # (which makes a 0-d array 1-d)
            bodies.append(memoryview(a).cast("B") if a.ndim and a.size else a.tobytes())  # (cast refuses a 0 in the shape)
    head = pickle.dumps(tuple(spec), protocol=5)
    parts: list[Any] = [len(head).to_bytes(4, "little"), head, b"\0" * _pad(4 + len(head))]
    total = 4 + len(head) + _pad(4 + len(head))
    for body in bodies:
        n = len(body)
        parts.append(body)
        parts.append(b"\0" * _pad(n))
        total += n + _pad(n)
    return parts, total


def decode_row(buf: Any, off: int) -> tuple:
    """The row whose record starts at ``off`` of ``buf`` (arrays copied out)."""
    hlen = int.from_bytes(buf[off:off + 4], "little")
    spec = pickle.loads(buf[off + 4:off + 4 + hlen])
    pos = off + 4 + hlen
    pos += _pad(pos - off)
    out = []
    for kind, shape in spec:
        if kind == "P":
            out.append(pickle.loads(buf[pos:pos + shape]))
            n = shape
        else:
            dt = np.dtype(kind)
            count = int(np.prod(shape, dtype=np.int64)) if shape else 1
            n = count * dt.itemsize
            out.append(np.frombuffer(buf, dt, count, pos).reshape(shape).copy())
        pos += n + _pad(n)
    return tuple(out)


# ---- files, locks, usage ------------------------------------------------------------------------
def write_json(path: str, obj: dict) -> None:
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def unlink_quiet(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def free_bytes(folder: str) -> int:
    try:
        st = os.statvfs(folder)
    except OSError:
        return 0
    return st.f_bavail * st.f_frsize


def tier_usage(folder: str) -> int:
    """Bytes of every chunk (committed or being written) under ``folder``."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            if name.endswith((".chunk", ".tmp")):
                try:
                    total += os.stat(os.path.join(root, name)).st_size
                except OSError:
                    pass
    return total


def remove_stale(folder: str) -> list[str]:
    """Removes the ``.tmp`` chunks and the fill lock of dead processes in ``folder``; returns the
    removed names."""
    removed: list[str] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        owner = owner_of(name) if name.endswith(".tmp") else None
        if owner is not None and not is_alive(*owner):
            unlink_quiet(os.path.join(folder, name))
            removed.append(name)
    lock = os.path.join(folder, "fill.lock")
    holder = read_lock(lock)
    if holder is not None and not is_alive(holder[0], holder[1]):
        unlink_quiet(lock)
        removed.append("fill.lock")
    return removed


def read_lock(path: str) -> tuple[int, int, str] | None:
    try:
        with open(path) as f:
            pid, start, token = f.read().split()
        return int(pid), int(start), token
    except (OSError, ValueError):
        return None


def claim_lock(path: str, token: str) -> bool:
    """Creates the lock (pid, start, token) or finds it ours; takes over a dead holder's lock."""
    for _ in range(3):
        holder = read_lock(path)
        if holder is not None:
            if holder[2] == token:
                return True
            if is_alive(holder[0], holder[1]):
                return False
            # Stale: move it aside under a unique name first, so two takers cannot both succeed.
            aside = f"{path}.stale-{os.getpid()}"
            try:
                os.rename(path, aside)
                unlink_quiet(aside)
            except OSError:
                continue
        pid, start = me()
        tmp = f"{path}.{pid}.{threading.get_ident()}.{token}"
        try:
            with open(tmp, "w") as f:
                f.write(f"{pid} {start} {token}")
            os.link(tmp, path)  # atomic, and only when nobody holds it: the lock appears whole
            return True
        except FileExistsError:
            continue  # someone took it between our read and our link: read again
        except OSError:
            return False
        finally:
            unlink_quiet(tmp)
    return False


def release_lock(path: str, token: str) -> None:
    holder = read_lock(path)
    if holder is not None and holder[2] == token:
        unlink_quiet(path)


def destroy(folder: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)
