"""W3 "records": MindRecord write and read of 20,000 rows {label int32, data 100 KiB} (MB/s,
1 MB = 10^6 bytes of payload), beside plain sequential file I/O of the same bytes."""
from __future__ import annotations

import os

import numpy as np

from .config import Config

ROWS = 20_000
RECORD = 102_400
CHUNK = 1_000            # write_raw_data chunk (records)
READ_CHUNK = 16 * 2**20  # readinto chunk of the plain reference


def payloads(rows: int = ROWS) -> list[bytes]:
    """Record i's payload is the i-th call of default_rng(3).bytes(102400)."""
    rng = np.random.default_rng(3)
    return [rng.bytes(RECORD) for _ in range(rows)]


def w3_dir(root: str) -> str:
    return os.path.join(root, "w3")


def _marker(path: str) -> str:
    return path + ".rows"


def mark_complete(path: str, rows: int) -> None:
    with open(_marker(path), "w") as f:
        f.write(str(rows))


def is_complete(path: str, rows: int) -> bool:
    try:
        with open(_marker(path)) as f:
            return os.path.exists(path) and int(f.read()) == rows
    except (OSError, ValueError):
        return False


def drop_cache(paths: list[str]) -> None:
    """Cold page cache for these files: fsync, then POSIX_FADV_DONTNEED (needs no root)."""
    for p in paths:
        if not os.path.exists(p):
            continue
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


class FreshPaths:
    """Where each timed write epoch writes, the same for every system (MindSpore, headrace, plain).

    Epoch k writes ``<directory>/e<k>/<name>``, a path nothing has used. ``next()`` is the untimed
    step before each epoch: it deletes every file earlier epochs wrote (so no epoch pays for
    unlinking a 2 GB file, and their dirty pages are dropped instead of written back), calls
    ``os.sync()`` (so writeback of anything else does not land in the timing), then moves on to
    the next fresh path. ``fsync`` is not part of any timed write. ``cleanup()`` removes all.
    """

    def __init__(self, directory: str, name: str) -> None:
        self.directory, self.name, self.k = directory, name, -1
        self.cleanup()

    @property
    def path(self) -> str:
        return os.path.join(self.directory, f"e{self.k}", self.name)

    def cleanup(self) -> None:
        if os.path.isdir(self.directory):
            for root, dirs, files in os.walk(self.directory, topdown=False):
                for f in files:
                    os.unlink(os.path.join(root, f))
                for d in dirs:
                    os.rmdir(os.path.join(root, d))

    def next(self) -> None:
        self.cleanup()
        self.k += 1
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        os.sync()


# ------------------------------------------------------------- the plain-file reference (python)

def plain_write(path: str, data: list[bytes], fsync: bool) -> tuple[int, int]:
    with open(path, "wb") as f:
        for b in data:
            f.write(b)
        if fsync:
            f.flush()
            os.fsync(f.fileno())
    return len(data), len(data) * RECORD


def plain_read_records(path: str) -> tuple[int, int]:
    n = nbytes = 0
    with open(path, "rb") as f:
        while b := f.read(RECORD):
            n += 1
            nbytes += len(b)
    return n, nbytes


def plain_read_chunks(path: str, view: memoryview) -> tuple[int, int]:
    """readinto a caller-owned buffer of READ_CHUNK bytes (allocated once, outside the timing)."""
    nbytes = 0
    with open(path, "rb") as f:
        while k := f.readinto(view):
            nbytes += k
    return nbytes // RECORD, nbytes


_SYS = ("headrace", "mindspore")
CONFIGS = [
    *[Config("w3", s, "write", (0,), compare="write", note="FileWriter, chunks of 1,000, commit")
      for s in _SYS],
    *[Config("w3", s, v, compare=v) for s in _SYS for v in ("read", "read shuffle")],
    *[Config("w3", s, "read cold", (1,), compare="read cold", note="fadvise DONTNEED per epoch")
      for s in _SYS],
    Config("w3", "python", "plain write", (0,), compare="write", note="f.write per record"),
    Config("w3", "python", "plain write+fsync", (0,), compare="write"),
    Config("w3", "python", "plain read 100 KiB", (0,), compare="read", note="f.read per record"),
    Config("w3", "python", "plain readinto 16 MiB", (0,), compare="read"),
    Config("w3", "python", "plain read 100 KiB cold", (0,), compare="read cold"),
    Config("w3", "python", "plain readinto 16 MiB cold", (0,), compare="read cold"),
]
