"""What the engine reads about the machine and the rows: the CPU and RAM budgets, a process's
resident memory, the machine's CPU counters (``/proc``), the bytes of a row (autotune), and the
NUMA nodes' CPUs (``numa_enable``)."""
from __future__ import annotations

import os
from typing import Any

import numpy as np


def cpu_budget() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def ram_budget() -> int:
    """Half the machine's RAM, in bytes."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):
        return 4 << 30


def rss(pid: int) -> int:
    """Resident bytes of process ``pid`` (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def cpu_times() -> tuple[int, int]:
    """(idle, total) jiffies of the machine's CPUs so far; (0, 0) where unknown."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        return fields[3] + (fields[4] if len(fields) > 4 else 0), sum(fields)
    except (OSError, ValueError, IndexError):
        return 0, 0


def row_bytes(row: Any) -> int:
    """Bytes of the arrays in a row (a list or tuple of columns)."""
    total = 0
    for v in row if isinstance(row, (list, tuple)) else (row,):
        if isinstance(v, np.ndarray):
            total += v.nbytes
        elif isinstance(v, (bytes, bytearray)):
            total += len(v)
    return total


# ---- NUMA (the numa_enable setting) ---------------------------------------------------------------

NODE_DIR = "/sys/devices/system/node"


def parse_cpulist(text: str) -> frozenset[int]:
    """The CPUs of a kernel CPU list such as ``"0-3,8,10-11"``.

    Raises:
        ValueError: if ``text`` is not such a list.
    """
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        a, b = int(lo), int(hi or lo)
        if a < 0 or b < a:
            raise ValueError(f"not a CPU list: {text!r}")
        cpus.update(range(a, b + 1))
    return frozenset(cpus)


def format_cpulist(cpus: frozenset[int]) -> str:
    """``cpus`` as a kernel CPU list (ranges joined), the inverse of :func:`parse_cpulist`."""
    runs: list[tuple[int, int]] = []
    for c in sorted(cpus):
        if runs and runs[-1][1] == c - 1:
            runs[-1] = (runs[-1][0], c)
        else:
            runs.append((c, c))
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def numa_nodes(root: str = NODE_DIR) -> list[frozenset[int]]:
    """The CPUs of each NUMA node that has any, in node order; empty where the kernel does not say."""
    try:
        names = [n for n in os.listdir(root) if n.startswith("node") and n[4:].isdigit()]
    except OSError:
        return []
    nodes = []
    for name in sorted(names, key=lambda n: int(n[4:])):
        try:
            with open(os.path.join(root, name, "cpulist"), encoding="ascii") as f:
                cpus = parse_cpulist(f.read())
        except (OSError, ValueError):
            continue
        if cpus:
            nodes.append(cpus)
    return nodes


def rank_on_host() -> int:
    """This process's rank, for choosing its NUMA node: ``RANK_ID`` (MindSpore's), else
    ``LOCAL_RANK`` (torchrun's), else 0."""
    for name in ("RANK_ID", "LOCAL_RANK"):
        try:
            return max(0, int(os.environ[name]))
        except (KeyError, ValueError):
            continue
    return 0


def numa_cpus(rank: int) -> frozenset[int] | None:
    """The CPUs of the NUMA node for ``rank`` (node ``rank % nodes``, counting the nodes with CPUs
    this process may use), limited to those; None when no node is known."""
    try:
        allowed = frozenset(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
    nodes = [n & allowed for n in numa_nodes()]
    nodes = [n for n in nodes if n]
    return nodes[rank % len(nodes)] if nodes else None


def bind_thread(cpulist: str) -> None:
    """Runs the calling thread (and the threads it starts) on the CPUs of ``cpulist`` ("" or an
    impossible set: no change)."""
    if cpulist:
        try:
            os.sched_setaffinity(0, parse_cpulist(cpulist))
        except (AttributeError, OSError, ValueError):
            pass
