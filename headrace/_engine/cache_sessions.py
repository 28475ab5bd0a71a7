"""Sessions and host settings of the row cache (``cache_store.py``), for the API and the CLI.

A session is the folder ``s<id>`` under the memory root (with ``session.json``) and under the
spill root; the host's settings (spill directory, memory cap ratio, the values ``--start`` was
given) are ``settings.json`` in the memory root. Nothing runs in the background: "starting" writes
the settings, "stopping" removes every session's files and the stale files of dead processes,
unless another live process uses a session (``users``: the processes with a store of the session
open, see ``cache_store.py``), which only a forced stop removes.
"""
from __future__ import annotations

import json
import os
import secrets
from typing import Any

from headrace._engine import cache_store

SETTINGS = "settings.json"
SESSION = "session.json"
MAX_SESSION = 2**32 - 1


def _read(path: str) -> dict | None:
    try:
        with open(path) as f:
            value = json.load(f)
        return value if isinstance(value, dict) else None
    except (OSError, ValueError):
        return None


def settings() -> dict:
    """The host's cache settings (empty before ``start``)."""
    return _read(os.path.join(cache_store.memory_root(), SETTINGS)) or {}


def start(**values: Any) -> dict:
    """Creates the memory root and records ``values`` (None values are left out) as the settings."""
    root = cache_store.memory_root()
    os.makedirs(root, exist_ok=True)
    merged = dict(settings(), **{k: v for k, v in values.items() if v is not None})
    cache_store.write_json(os.path.join(root, SETTINGS), merged)
    return merged


def _spill_roots() -> list[str]:
    roots = {cache_store.spill_root(None)}
    spill = settings().get("spill_dir")
    if spill:
        roots.add(cache_store.spill_root(spill))
    return sorted(roots)


def sessions() -> list[int]:
    """The ids of the existing sessions, sorted."""
    try:
        names = os.listdir(cache_store.memory_root())
    except OSError:
        return []
    return sorted(int(n[1:]) for n in names if n.startswith("s") and n[1:].isdigit()
                  and os.path.isdir(os.path.join(cache_store.memory_root(), n)))


def read_session(session: int) -> dict | None:
    return _read(os.path.join(cache_store.session_dir(cache_store.memory_root(), session), SESSION))


def ensure_session(session: int) -> dict:
    """Creates ``session`` unless it exists; returns its description."""
    meta = read_session(session)
    if meta is None:
        folder = cache_store.session_dir(cache_store.memory_root(), session)
        os.makedirs(folder, exist_ok=True)
        meta = {"session": session}
        cache_store.write_json(os.path.join(folder, SESSION), meta)
    return meta


def generate_session() -> int:
    """A new session with a random id that no session has."""
    existing = set(sessions())
    while True:
        sid = 1 + secrets.randbelow(MAX_SESSION)
        if sid not in existing:
            ensure_session(sid)
            return sid


def destroy_session(session: int) -> bool:
    """Removes ``session``'s files in both tiers; False when it did not exist."""
    found = False
    for root in [cache_store.memory_root()] + _spill_roots():
        folder = cache_store.session_dir(root, session)
        if os.path.isdir(folder):
            found = True
            cache_store.destroy(folder)
    return found


class SessionsInUse(RuntimeError):
    """A stop that would remove sessions other live processes use; ``busy``: session -> pids."""

    def __init__(self, busy: dict[int, list[int]]) -> None:
        self.busy = busy
        parts = [f"session {sid} by process{'es' if len(pids) > 1 else ''} "
                 + ", ".join(f"{pid} ({_command(pid)})" for pid in pids) for sid, pids in sorted(busy.items())]
        super().__init__(f"sessions in use: {'; '.join(parts)}")


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip() or "?"
    except OSError:
        return "?"


def users(session: int) -> list[int]:
    """The pids of the live processes other than this one that use ``session`` now (have one of
    its stores open), sorted."""
    out = set()
    for sid, pid, start in _markers():
        if sid == session and pid != os.getpid() and cache_store.is_alive(pid, start):
            out.add(pid)
    return sorted(out)


def _users_dir() -> str:
    return os.path.join(cache_store.memory_root(), cache_store.USERS)


def _markers() -> list[tuple[int, int, int]]:
    """(session, pid, start) of every marker ``s<id>-<pid>-<start>`` (see ``cache_store.py``)."""
    try:
        names = os.listdir(_users_dir())
    except OSError:
        return []
    out = []
    for name in names:
        parts = name[1:].split("-") if name.startswith("s") else []
        if len(parts) == 3 and all(p.isdigit() for p in parts):
            out.append((int(parts[0]), int(parts[1]), int(parts[2])))
    return out


def stop(force: bool = False) -> int:
    """Removes every session (both tiers) and the settings; returns how many sessions there were.

    Raises :class:`SessionsInUse` (removing nothing) when another live process uses a session,
    unless ``force``: its pipelines go on, computing the rows they can no longer read from the
    cache (a store keeps reading the chunks it had mapped)."""
    if not isinstance(force, bool):
        raise TypeError(f"force must be of type bool, but got {type(force).__name__}.")
    if not force:
        busy = {sid: pids for sid in sessions() if (pids := users(sid))}
        if busy:
            raise SessionsInUse(busy)
    count = len(sessions())
    for root in [cache_store.memory_root()] + _spill_roots():
        cache_store.destroy(root)
    return count


def clean_stale() -> list[str]:
    """Removes the unfinished chunks, fill locks and session markers of dead processes everywhere;
    their names."""
    removed = []
    for root in [cache_store.memory_root()] + _spill_roots():
        for sid in sessions():
            sdir = cache_store.session_dir(root, sid)
            try:
                keys = os.listdir(sdir)
            except OSError:
                continue
            for key in keys:
                removed += cache_store.remove_stale(os.path.join(sdir, key))
    for sid, pid, start in _markers():  # of processes that left without removing them (killed)
        if not cache_store.is_alive(pid, start):
            name = f"s{sid}-{pid}-{start}"
            cache_store.unlink_quiet(os.path.join(_users_dir(), name))
            removed.append(name)
    try:
        os.rmdir(_users_dir())  # when no marker is left
    except OSError:
        pass
    return removed


def key_rows(session: int) -> list[dict]:
    """Per cached pipeline prefix of ``session``: key, rows in memory and on disk, average row
    bytes, hits and misses recorded by the processes that read it."""
    out: list[dict] = []
    mem_sdir = cache_store.session_dir(cache_store.memory_root(), session)
    try:
        keys = sorted(k for k in os.listdir(mem_sdir) if os.path.isdir(os.path.join(mem_sdir, k)))
    except OSError:
        return out
    for key in keys:
        meta = _read(os.path.join(mem_sdir, key, "meta.json")) or {}
        counts = {"memory": 0, "disk": 0}
        total_bytes = 0
        folders = [(os.path.join(mem_sdir, key), "memory")]
        folders += [(os.path.join(cache_store.session_dir(r, session), key), "disk") for r in _spill_roots()]
        for folder, tier in folders:
            for n_rows, n_bytes in chunk_summaries(folder):
                counts[tier] += n_rows
                total_bytes += n_bytes
        hits, misses = _counters(os.path.join(mem_sdir, key))
        rows = counts["memory"] + counts["disk"]
        out.append({"key": key, "rows": meta.get("rows"), "mem_cached": counts["memory"], "disk_cached": counts["disk"],
                    "avg_size": total_bytes // rows if rows else 0, "hits": hits, "misses": misses,
                    "source": meta.get("source"), "maps": meta.get("maps", [])})
    return out


def chunk_summaries(folder: str) -> list[tuple[int, int]]:
    """(rows, row bytes) of each committed chunk in ``folder``."""
    out: list[tuple[int, int]] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return out
    for name in names:
        if not name.endswith(".chunk"):
            continue
        try:
            with open(os.path.join(folder, name), "rb") as f:
                f.seek(-16, os.SEEK_END)
                tail = f.read(16)
                n = int.from_bytes(tail[:8], "little")
                size = f.tell()
        except OSError:
            continue
        if tail[8:] == cache_store.MAGIC:
            out.append((n, size - 16 - 24 * n))
    return out


def _counters(folder: str) -> tuple[int, int]:
    hits = misses = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0, 0
    for name in names:
        if name.startswith("counts-") and name.endswith(".json"):
            c = _read(os.path.join(folder, name)) or {}
            hits += int(c.get("hits", 0))
            misses += int(c.get("misses", 0))
    return hits, misses
