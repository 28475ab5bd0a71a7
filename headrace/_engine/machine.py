"""What autotune reads about the machine and the rows: the CPU and RAM budgets, a process's
resident memory, the machine's CPU counters (``/proc``) and the bytes of a row."""
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
