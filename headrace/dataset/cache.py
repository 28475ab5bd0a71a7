"""MindSpore's ``DatasetCache`` on headrace's daemon-free row cache.

``cache=ds.DatasetCache(...)`` on a source read by index, or on a ``map`` over such a source,
keeps the rows produced up to that point in files every process of the host maps (see
``headrace/_engine/cache_store.py``): the first epoch fills it, later epochs and other processes
running the same pipeline read it. No server, session or swap is needed; ``headrace cache`` (alias
``cache_admin``) manages sessions with MindSpore's flags.

Parameters keep MindSpore's meaning where one host gives them one: ``session_id`` names the
session (None: the default session 0, which needs no ``cache_admin -g``), ``size`` caps the
session's memory in MB (0: half of the host's RAM or the ratio ``cache_admin --start -m`` set,
bounded by the free space of /dev/shm),
``spilling`` lets the rows past the cap go to the spill directory on disk. ``hostname`` must name
this host; ``port``, ``num_connections`` and ``prefetch_size`` are checked and otherwise unused
(there are no connections).
"""
from __future__ import annotations

import os
import socket
from typing import Any

from headrace._engine import cache_sessions, cache_store
from headrace._util import checks

__all__ = ["CacheStat", "DatasetCache"]

UINT64_MAX = 2**64 - 1
_LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "0.0.0.0")
DEFAULT_SESSION = 0
DEFAULT_RATIO = 0.5


def _check_interval(value: Any, lo: int, hi: int, name: str) -> None:
    checks.check_type(value, int, name)
    checks.check_range(value, (lo, hi), name)


class CacheStat:
    """What ``DatasetCache.get_stat()`` returns: rows cached in memory and on disk, and the average
    size of a cached row in bytes (``hits`` / ``misses``: this process's lookups)."""

    __slots__ = ("num_mem_cached", "num_disk_cached", "avg_cache_sz", "hits", "misses")

    def __init__(self, num_mem_cached: int, num_disk_cached: int, avg_cache_sz: int, hits: int, misses: int) -> None:
        self.num_mem_cached = num_mem_cached
        self.num_disk_cached = num_disk_cached
        self.avg_cache_sz = avg_cache_sz
        self.hits = hits
        self.misses = misses

    def __repr__(self) -> str:
        return (f"CacheStat(num_mem_cached={self.num_mem_cached}, num_disk_cached={self.num_disk_cached}, "
                f"avg_cache_sz={self.avg_cache_sz})")


class DatasetCache:
    """A cache for the rows of a pipeline prefix, shared by the processes of this host.

    Args:
        session_id (int, optional): the session, 1 to 4294967295 (from ``cache_admin -g``), or
            None for the default session. Default: None.
        size (int, optional): memory for the session's rows, in MB; 0 means half the host's RAM
            (never more than /dev/shm can hold). Default: 0.
        spilling (bool, optional): write the rows past ``size`` to the spill directory on disk
            (else they are computed each epoch). Default: False.
        hostname (str, optional): must name this host (the cache is the host's). Default: None.
        port (int, optional): 1025 to 65535; checked, not used. Default: None.
        num_connections (int, optional): positive int32; checked, not used. Default: None.
        prefetch_size (int, optional): positive int32; checked, not used. Default: None.

    Raises:
        TypeError / ValueError: a parameter of the wrong type or out of range (MindSpore's texts).
        RuntimeError: ``hostname`` names another host.

    Examples:
        >>> import headrace.dataset as ds
        >>> cache = ds.DatasetCache(session_id=None, size=64)
        >>> cache.size
        64
    """

    def __init__(self, session_id=None, size=0, spilling=False, hostname=None, port=None, num_connections=None,
                 prefetch_size=None):
        if session_id is not None:
            _check_interval(session_id, 1, checks.UINT32_MAX, "session_id")
        checks.check_type(size, int, "size")
        if size != 0:
            if size < 0:
                raise ValueError("Input size must be greater than 0.")
            checks.check_range(size, (0, UINT64_MAX), "size")
        checks.check_type(spilling, bool, "spilling")
        if hostname is not None:
            checks.check_type(hostname, str, "hostname")
            if not _is_this_host(hostname):
                raise RuntimeError(f"DatasetCache: hostname {hostname!r} is not this host: the cache client has "
                                   "to be on the same host as the cache (headrace shares it through this host's "
                                   "memory). Use hostname=None.")
        if port is not None:
            _check_interval(port, 1025, 65535, "port")
        if num_connections is not None:
            _check_interval(num_connections, 1, checks.INT32_MAX, "num_connections")
        if prefetch_size is not None:
            _check_interval(prefetch_size, 1, checks.INT32_MAX, "prefetch_size")
        self.session_id = session_id
        self.size = size
        self.spilling = spilling
        self.hostname = hostname
        self.port = port
        self.num_connections = num_connections
        self.prefetch_size = prefetch_size
        self._stores: list[cache_store.CacheStore] = []

    @property
    def session(self) -> int:
        """The session number the rows live under (the default session is 0)."""
        return DEFAULT_SESSION if self.session_id is None else self.session_id

    def memory_cap(self) -> int:
        """The session's memory cap in bytes: ``size`` MB, else the host's RAM times the ratio
        ``cache_admin --start -m`` set (default 0.5)."""
        if self.size:
            return self.size << 20
        ratio = float(cache_sessions.settings().get("memory_cap_ratio") or DEFAULT_RATIO)
        return int(_ram_bytes() * ratio)

    def spill_dir(self) -> str | None:
        """The spill directory ``cache_admin --start -s`` set, if any."""
        return cache_sessions.settings().get("spill_dir")

    def new_store(self, key: str, num_rows: int, meta: dict) -> cache_store.CacheStore:
        """The store of one cached pipeline prefix (one per key: pipelines built again, e.g. each
        epoch, share it and its mappings; ``get_stat`` counts each key once)."""
        for store in self._stores:
            if store.key == key and store.num_rows == num_rows:
                return store
        cache_sessions.ensure_session(self.session)
        store = cache_store.CacheStore(key, num_rows, session=self.session, mem_cap=self.memory_cap(),
                                       spilling=self.spilling, spill_dir=self.spill_dir(), meta=meta)
        self._stores.append(store)
        return store

    def get_stat(self):
        """Rows cached in memory (``num_mem_cached``) and on disk (``num_disk_cached``) and the
        average row size in bytes (``avg_cache_sz``), over the pipelines using this cache.

        Raises:
            RuntimeError: no pipeline has used this cache yet.
        """
        if not self._stores:
            raise RuntimeError("GetStat called but the cache is not in use yet: iterate a pipeline with "
                               "cache=this DatasetCache first.")
        stats = [s.stat() for s in self._stores]
        mem = sum(s["num_mem_cached"] for s in stats)
        disk = sum(s["num_disk_cached"] for s in stats)
        rows = mem + disk
        avg = sum(s["avg_cache_sz"] * (s["num_mem_cached"] + s["num_disk_cached"]) for s in stats) // rows if rows else 0
        return CacheStat(mem, disk, avg, sum(s["hits"] for s in stats), sum(s["misses"] for s in stats))

    def __deepcopy__(self, memodict):
        return self  # one cache, as in MindSpore (copies of a pipeline share its client)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_stores"] = []
        return state

    def __repr__(self) -> str:
        return f"DatasetCache(session_id={self.session_id}, size={self.size}, spilling={self.spilling})"


def _is_this_host(hostname: str) -> bool:
    if hostname in _LOCAL_HOSTS or hostname == socket.gethostname():
        return True
    try:
        return socket.gethostbyname(hostname).startswith("127.")
    except OSError:
        return False


def _ram_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 8 << 30
