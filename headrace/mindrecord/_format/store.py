"""Where a MindRecord writer's bytes go: pages buffered in memory or written to a temporary file
(``_MemoryStore`` / ``_FileStore``), one shard's pages and rows (``_Shard``), and the temporary names that
make a crash leave nothing that looks valid (``_make_temp``, ``_remove_stale_temps``)."""
from __future__ import annotations
import errno
import os
import re
import secrets
from typing import Sequence
from .errors import MindRecordFormatError
from .header import (Page, read_header)
from .index import ShardIndex


_IOV_MAX = 512


_WRITE_CHUNK = 1 << 19      # bytes per pwritev call: calls of many MB were often several times slower here


_TMP_RE = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}\.hrtmp$")


def _round_up(n: int, k: int) -> int:
    return -(-n // k) * k


class _MemoryStore:
    """Pages held in memory (slot layout not chosen yet)."""

    def __init__(self) -> None:
        self.pages: dict[int, bytearray] = {}
        self.nbytes = 0

    def write(self, page_id: int, offset: int, bufs: Sequence) -> None:
        page = self.pages.setdefault(page_id, bytearray())
        if len(page) < offset:
            page.extend(b"\x00" * (offset - len(page)))
        for b in bufs:
            n = len(b) if not isinstance(b, memoryview) else b.nbytes
            page[offset:offset + n] = b
            offset += n
            self.nbytes += n

    def read(self, page_id: int, offset: int, n: int) -> bytes:
        return bytes(self.pages[page_id][offset:offset + n])


class _FileStore:
    """Pages at ``header_size + page_id * page_size`` of an open file."""

    def __init__(self, fd: int, path: str, header_size: int, page_size: int) -> None:
        self.fd, self.path, self.header_size, self.page_size = fd, path, header_size, page_size

    def write(self, page_id: int, offset: int, bufs: Sequence) -> None:
        pos = self.header_size + page_id * self.page_size + offset
        chunk: list = []
        want = 0
        for b in bufs:
            chunk.append(b)
            want += b.nbytes if isinstance(b, memoryview) else len(b)
            if want >= _WRITE_CHUNK or len(chunk) >= _IOV_MAX:
                pos = self._pwritev(chunk, want, pos)
                chunk, want = [], 0
        if chunk:
            self._pwritev(chunk, want, pos)

    def _pwritev(self, chunk: list, want: int, pos: int) -> int:
        done = os.pwritev(self.fd, chunk, pos)
        if done != want:  # short write: finish it piece by piece
            data = b"".join(bytes(b) for b in chunk)
            while done < want:
                done += os.pwrite(self.fd, data[done:], pos + done)
        return pos + want

    def read(self, page_id: int, offset: int, n: int) -> bytes:
        pos = self.header_size + page_id * self.page_size + offset
        data = os.pread(self.fd, n, pos)
        if len(data) != n:
            raise MindRecordFormatError(f"Invalid file, page {page_id} is truncated.", self.path)
        return data

    def move(self, pages: Sequence[Page], header_size: int, page_size: int) -> None:
        """Moves every page to the slots of a larger header and/or page size (last page first)."""
        assert header_size >= self.header_size and page_size >= self.page_size
        for page in sorted(pages, key=lambda p: -p.page_id):
            old = self.header_size + page.page_id * self.page_size
            new = header_size + page.page_id * page_size
            if old == new or page.size == 0:
                continue
            data = os.pread(self.fd, page.size, old)
            if len(data) != page.size:
                raise MindRecordFormatError(f"Invalid file, page {page.page_id} is truncated.", self.path)
            os.pwrite(self.fd, data, new)
        self.header_size, self.page_size = header_size, page_size


class _Shard:
    """The pages, index rows and storage of one shard being written."""

    def __init__(self, shard_id: int, path: str) -> None:
        self.shard_id = shard_id
        self.path = path
        self.pages: list[Page] = []
        self.store: _MemoryStore | _FileStore = _MemoryStore()
        self.tmp_path: str | None = None
        self.fd: int | None = None
        self.locs: list[tuple] = []        # one (raw_page, raw_start, raw_end, group, blob_page, b_start, b_end) per row
        self.values: list[tuple] = []      # index-field values per row
        self.base_index: ShardIndex | None = None   # rows already in the file (appends)
        self.rows_before = 0
        self.orig_size = 0                 # appends: the file's size before this writer,
        self.orig_tails: list[tuple[Page, int, int]] = []   # and (page, its size, slot offset) of the
                                                             # pages an append continues

    def memory(self) -> _MemoryStore:
        """The store while pages are buffered in memory (before the switch to files)."""
        assert isinstance(self.store, _MemoryStore), "the shard's pages are no longer in memory"
        return self.store

    def file(self) -> _FileStore:
        """The store once pages go to the temporary data file."""
        assert isinstance(self.store, _FileStore), "the shard's pages are not in a file yet"
        return self.store

    def last_of(self, kind: str) -> Page | None:
        for p in reversed(self.pages):
            if p.page_type == kind:
                return p
        return None

    @property
    def num_rows(self) -> int:
        return self.rows_before + len(self.locs)


def _make_temp(path: str) -> tuple[int, str]:
    directory, name = os.path.split(path)
    for _ in range(100):
        tmp = os.path.join(directory, f".{name}.{os.getpid()}.{secrets.token_hex(4)}.hrtmp")
        try:
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        except FileExistsError:
            continue
        return fd, tmp
    raise OSError(errno.EEXIST, "could not create a temporary file", path)  # pragma: no cover


def _remove_if_there(path: str) -> bool:
    """Removes the file ``path``: True if it did, False if there was none (other errors raise)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale_temps(path: str) -> None:
    """Removes temporary files that dead writers of ``path`` (or its ``.db``) left behind."""
    directory, name = os.path.split(path)
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for entry in entries:
        m = _TMP_RE.match(entry)
        if m and m.group("name") in (name, name + ".db") and not _pid_alive(int(m.group("pid"))):
            try:
                os.unlink(os.path.join(directory, entry))
            except OSError:
                pass


def _stale_shards(paths: Sequence[str]) -> list[str]:
    """Shards of the dataset being overwritten that the new dataset does not replace.

    A file counts as a shard of "the same name" when its header lists exactly the names a
    ``FileWriter`` with that name gives its shards (``NAME`` alone, or ``NAME0..NAME{m-1}``
    zero-padded), so unrelated datasets whose names merely start the same are never touched.
    """
    targets = set(paths)
    directory = os.path.dirname(paths[0])
    base = os.path.basename(paths[0])
    if len(paths) > 1:
        base = base[:len(base) - len(str(len(paths) - 1))]
    pattern = re.compile(re.escape(base) + r"\d*")
    stale: set[str] = set()
    try:
        entries = os.listdir(directory)
    except OSError:
        return []
    for entry in entries:
        if not pattern.fullmatch(entry):
            continue
        candidate = os.path.join(directory, entry)
        try:
            fd = os.open(candidate, os.O_RDONLY)
        except OSError:
            continue
        try:
            header = read_header(fd, candidate)
        except (MindRecordFormatError, OSError):
            continue
        finally:
            os.close(fd)
        if header.shard_addresses != shard_names(base, len(header.shard_addresses)):
            continue
        for a in header.shard_addresses:
            p = os.path.join(directory, a)
            if p not in targets:
                stale.add(p)
    return sorted(stale)


def shard_names(name: str, shard_num: int) -> list[str]:
    """The file names ``FileWriter(name, shard_num)`` writes (suffix = zero-padded shard index)."""
    if shard_num == 1:
        return [name]
    width = len(str(shard_num - 1))
    return [f"{name}{str(i).rjust(width, '0')}" for i in range(shard_num)]
