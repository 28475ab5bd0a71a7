"""Writing MindRecord shards: page packing, layout, crash-safe commit and appends.

Page packing follows MindSpore's writer exactly (MINDRECORD.md §3.3), so with the same header and
page sizes the same rows produce the same bytes. What differs is where bytes go until ``commit``:

* New datasets are written under hidden temporary names next to the targets. ``commit`` writes
  the headers, renames the data files into place and only then the ``.db`` indexes (also written
  under temporary names). A writer that dies earlier leaves no file under a MindRecord name; its
  temporary files are removed by the next writer of the same name.
* Small datasets stay in memory until ``commit`` and are then laid out tightly (no 48 MiB of
  sparse holes for three rows). Larger ones go to disk with MindSpore's 32 MiB pages.
* A row larger than the page size grows the page size (pages already on disk move) instead of
  failing; a header that outgrows its slot is moved the same way.
* Appends (``open_for_append``) write past the bytes the old header describes, so until
  ``commit`` rewrites the header and index, readers see the old dataset intact.
"""
from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import stat
from typing import Any, Sequence

import numpy as np

from .encode import EncodedRow
from .errors import MindRecordFormatError, MindRecordRuntimeError, MindRecordWriteError, write_error
from .header import (BLOB, DEFAULT_PAGE_SIZE, MIN_HEADER_SIZE, MIN_PAGE_SIZE, RAW, Header, Page, check_same_dataset,
                     read_header_path, shard_paths)
from .index import ShardIndex, _open_db, field_column, load_index, scan_shard, write_index
from .lock import WriterLock
from .schema import Schema
from .store import (_FileStore, _make_temp, _MemoryStore, _remove_if_there, _remove_stale_temps, _round_up, _Shard,
                    _stale_shards)

logger = logging.getLogger("headrace.mindrecord")

MEMORY_LIMIT = 64 << 20          # buffered page bytes (all shards) before switching to files
FILE_HEADER_SIZE = 4 << 20       # provisional header slot once data goes to disk (auto layout)
MAX_GROWN_PAGE_SIZE = 1 << 40


class ShardSetWriter:
    """Writes (or appends to) one set of MindRecord shards.

    Args:
        paths: final paths of the data files, in shard order.
        schema: the schema to store.
        index_fields: indexed fields (``.db`` columns).
        header_size: fixed header size, or None to choose it automatically.
        page_size: fixed page size, or None to choose it automatically.
        overwrite: replace existing files (at commit) instead of refusing to start.
    """

    def __init__(self, paths: Sequence[str], schema: Schema, index_fields: Sequence[str], *,
                 header_size: int | None = None, page_size: int | None = None, overwrite: bool = False) -> None:
        self.paths = [os.path.abspath(p) for p in paths]
        self.names = [os.path.basename(p) for p in paths]
        self.schema = schema
        self.index_fields = list(index_fields)
        self.fixed_header = header_size
        self.fixed_page = page_size
        self.capacity = page_size or DEFAULT_PAGE_SIZE
        self.overwrite = overwrite
        self.compression_size = 0
        self.version = "3.0"
        self.append = False
        self.shards = [_Shard(i, p) for i, p in enumerate(self.paths)]
        self._next_extra = 0
        self._closed = False
        self._opened = False
        self._lock = WriterLock(self.paths)
        self._db_tmps: dict[int, str] = {}   # shard id -> temporary .db being written
        self._failure: str | None = None
        self._in_place_committed = False     # appends: a header was rewritten in place

    @property
    def lock(self) -> WriterLock:
        """The lock on the targets (held from ``open`` to ``close``)."""
        return self._lock

    # ------------------------------------------------------------------ opening

    def open(self) -> None:
        """Locks the targets against other writers until ``close``, checks them (existing files
        refused unless overwriting) and removes dead writers' leftovers."""
        if self._opened:
            return
        for path in self.paths:
            directory = os.path.dirname(path)
            if not os.path.isdir(directory):
                raise MindRecordRuntimeError(f"Invalid dir, failed to get the realpath of mindrecord file dir. "
                                             f"Please check path: {directory}")
        self._lock.acquire()
        try:
            for path in self.paths:
                if not self.overwrite and (os.path.lexists(path) or os.path.lexists(path + ".db")):
                    raise MindRecordRuntimeError(
                        f"Invalid file, mindrecord files already exist. Please check file path: {path}.\nIf you "
                        f"do not want to keep the files, set the 'overwrite' parameter to True and try again.")
                _remove_stale_temps(path)
        except BaseException:
            self._lock.release()
            raise
        self._opened = True

    @classmethod
    def for_append(cls, path: str) -> "ShardSetWriter":
        """A writer that appends to the dataset ``path`` belongs to (all its shards)."""
        first = read_header_path(path)
        paths = shard_paths(path, first)
        lock = WriterLock([os.path.abspath(p) for p in paths])
        lock.acquire()
        try:
            return cls._open_append(path, paths, lock)
        except BaseException:
            lock.release()
            raise

    @classmethod
    def _open_append(cls, path: str, paths: Sequence[str], lock: WriterLock) -> "ShardSetWriter":
        headers = [read_header_path(p) for p in paths]   # read again under the lock
        check_same_dataset(headers, paths)
        h0 = headers[0]
        self = cls(paths, h0.schema, h0.index_fields, header_size=h0.header_size, page_size=h0.page_size)
        self._lock = lock
        try:
            self._load_append(path, headers)
        except BaseException:
            self.close()   # closes the shards opened so far and releases the lock
            raise
        return self

    def _load_append(self, path: str, headers: Sequence[Header]) -> None:
        h0 = headers[0]
        self.append = True
        self.version = h0.version
        if h0.version < "3.0" and h0.schema.has_integer_array:
            raise MindRecordRuntimeError(f"Appending to version {h0.version} files with integer arrays is not "
                                         f"supported (they are stored uncompressed): {path}")
        self.compression_size = h0.compression_size or 0
        for shard, header, p in zip(self.shards, headers, self.paths):
            shard.pages = header.pages
            try:
                shard.base_index = load_index(p, header)
                shard.base_index.values = _load_values(p, header)
            except MindRecordFormatError:
                fd = os.open(p, os.O_RDONLY)
                try:
                    shard.base_index = scan_shard(fd, header, p, header.index_fields)
                finally:
                    os.close(fd)
            shard.rows_before = len(shard.base_index)
            shard.fd = os.open(p, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
            shard.orig_size = os.fstat(shard.fd).st_size
            for page in filter(None, (shard.last_of(BLOB), shard.last_of(RAW))):
                shard.orig_tails.append((page, page.size, header.header_size + page.page_id * header.page_size))
            shard.store = _FileStore(shard.fd, p, header.header_size, header.page_size)
        self._opened = True

    # ------------------------------------------------------------------ writing

    def write(self, rows: Sequence[EncodedRow], shard_id: int | None = None) -> None:
        """Writes encoded rows: split over all shards, or all to ``shard_id``.

        An operating-system failure (disk full...) closes the writer, removes its temporary files
        and raises ``MindRecordWriteError`` naming the file. Any other failure once rows are being
        placed (an interrupt, memory) closes it the same way: its pages may hold part of the rows,
        so it could only ever commit a damaged dataset.
        """
        if not rows:
            return
        self._check_usable()
        self.open()
        biggest = max(max(len(r.raw), r.blob_len) for r in rows) + 8
        _check_row_size(biggest)   # refused before anything changes: the writer stays usable
        try:
            self._write(rows, shard_id, biggest)
        except BaseException as exc:
            self.abort(exc)
            raise

    def _write(self, rows: Sequence[EncodedRow], shard_id: int | None, biggest: int) -> None:
        if biggest > self.capacity:
            self._grow(biggest)
        self.compression_size += sum(r.saved for r in rows)
        if not self.append and isinstance(self.shards[0].store, _MemoryStore):
            # rows that will take the buffer past the limit go straight to files (no copy in memory
            # first); the switch happens for exactly the datasets it would happen for after writing
            incoming = sum(16 + len(r.raw) + r.blob_len for r in rows)
            if sum(s.memory().nbytes for s in self.shards) + incoming > MEMORY_LIMIT:
                self._to_files()
        if shard_id is not None:
            with self._io(self.shards[shard_id]):
                self._write_shard(self.shards[shard_id], rows)
        else:
            n, k = len(rows), len(self.shards)
            base, extra = divmod(n, k)
            gets_extra = {(self._next_extra + j) % k for j in range(extra)}
            self._next_extra = (self._next_extra + extra) % k
            start = 0
            for shard in self.shards:
                end = start + base + (1 if shard.shard_id in gets_extra else 0)
                if end > start:
                    with self._io(shard):
                        self._write_shard(shard, rows[start:end])
                start = end
        if not self.append and isinstance(self.shards[0].store, _MemoryStore):
            if sum(s.memory().nbytes for s in self.shards) > MEMORY_LIMIT:
                self._to_files()

    def _grow(self, need: int) -> None:
        new = max(MIN_PAGE_SIZE, 1 << (need - 1).bit_length())
        logger.warning("A row of %d bytes does not fit in pages of %d bytes; using pages of %d bytes.",
                       need, self.capacity, new)
        self.capacity = new
        for shard in self.shards:
            if isinstance(shard.store, _FileStore):
                with self._io(shard):
                    if self.append:
                        self._copy_for_layout(shard, shard.store.header_size, new)
                    else:
                        shard.store.move(shard.pages, shard.store.header_size, new)

    def _to_files(self) -> None:
        header_size = self.fixed_header or FILE_HEADER_SIZE
        for shard in self.shards:
            with self._io(shard):
                mem = shard.memory()
                fd, tmp = _make_temp(shard.path)
                shard.fd, shard.tmp_path = fd, tmp
                store = _FileStore(fd, tmp, header_size, self.capacity)
                for pid, data in mem.pages.items():
                    store.write(pid, 0, [data])
                shard.store = store

    def _write_shard(self, shard: _Shard, rows: Sequence[EncodedRow]) -> None:
        """MindSpore's page packing for one batch of rows of one shard."""
        P = self.capacity
        store = shard.store
        raw_sz = [8 + len(r.raw) for r in rows]
        blob_sz = [8 + r.blob_len for r in rows]
        last_blob = shard.last_of(BLOB)
        last_raw = shard.last_of(RAW)
        n_blob = last_blob.size if last_blob else 0
        n_raw = (last_raw.size - last_raw.row_group_ids[-1][1]) if last_raw and last_raw.row_group_ids else 0
        groups: list[tuple[int, int]] = []
        start = 0
        for i in range(len(rows)):
            if n_blob == 0 or n_blob + blob_sz[i] > P or n_raw + raw_sz[i] > P:
                groups.append((start, i))
                start = i
                n_blob, n_raw = blob_sz[i], raw_sz[i]
            else:
                n_blob += blob_sz[i]
                n_raw += raw_sz[i]
        groups.append((start, len(rows)))
        first_row = shard.num_rows
        blob_loc: list[tuple[int, int, int]] = [None] * len(rows)  # type: ignore[list-item]

        def put_blobs(page: Page, a: int, b: int) -> None:
            bufs = []
            off = page.size
            for j in range(a, b):
                bufs.append(rows[j].blob_len.to_bytes(8, "little"))
                bufs.extend(rows[j].blob)
                blob_loc[j] = (page.page_type_id, page.page_id, off)
                off += blob_sz[j]
            store.write(page.page_id, page.size, bufs)
            page.size = off

        # 1. the first group continues the last blob page
        g0 = groups[0]
        if g0[1] > g0[0]:
            put_blobs(last_blob, g0[0], g0[1])  # type: ignore[arg-type]
            last_blob.end_row_id += g0[1] - g0[0]  # type: ignore[union-attr]
        # 2. every further group opens a blob page
        next_id = len(shard.pages)
        type_id = last_blob.page_type_id if last_blob else -1
        row = last_blob.end_row_id if last_blob else first_row
        for a, b in groups[1:]:
            type_id += 1
            page = Page(next_id, shard.shard_id, BLOB, type_id, row, row + (b - a), [], 0)
            shard.pages.append(page)
            put_blobs(page, a, b)
            next_id += 1
            row += b - a
        # 3. if the first group's raw records overflow the last raw page, move that page's last
        #    row group to a new raw page
        if g0[1] > g0[0] and last_raw is not None and sum(raw_sz[g0[0]:g0[1]]) + last_raw.size > P:
            off = last_raw.row_group_ids[-1][1]
            moved = store.read(last_raw.page_id, off, last_raw.size - off)
            last_raw.size = off
            last_raw.row_group_ids.pop()
            moved_group = last_raw.row_group_ids[-1][0] + 1 if last_raw.row_group_ids else last_blob.page_type_id  # type: ignore[union-attr]
            page = Page(len(shard.pages), shard.shard_id, RAW, last_raw.page_id + 1, 0, 0, [(moved_group, 0)],
                        len(moved))
            shard.pages.append(page)
            store.write(page.page_id, 0, [moved])
            # rows of the moved group now live in the new page
            self._relocate_raw(shard, last_raw.page_id, off, page.page_id)
            last_raw = page
        # 4. raw records, one row group after another
        last_group = last_raw.row_group_ids[-1][0] if last_raw and last_raw.row_group_ids else -1
        for gi, (a, b) in enumerate(groups):
            if b == a:
                continue
            size = sum(raw_sz[a:b])
            if last_raw is None or last_raw.size + size > P:
                type_id_raw = last_raw.page_id + 1 if last_raw else 0
                last_raw = Page(len(shard.pages), shard.shard_id, RAW, type_id_raw, 0, 0, [], 0)
                shard.pages.append(last_raw)
            if gi > 0:
                last_group += 1
                last_raw.row_group_ids.append((last_group, last_raw.size))
            bufs = []
            off = last_raw.size
            for j in range(a, b):
                bufs.append(len(rows[j].raw).to_bytes(8, "little"))
                bufs.append(rows[j].raw)
                group_id, blob_page, b_off = blob_loc[j]
                shard.locs.append((last_raw.page_id, off, off + raw_sz[j], group_id, blob_page, b_off,
                                   b_off + blob_sz[j]))
                shard.values.append(rows[j].index_values)
                off += raw_sz[j]
            store.write(last_raw.page_id, last_raw.size, bufs)
            last_raw.size = off

    @staticmethod
    def _relocate_raw(shard: _Shard, old_page: int, old_off: int, new_page: int) -> None:
        """Points rows whose raw record moved (page ``old_page`` from ``old_off`` on) to ``new_page``."""
        for k in range(len(shard.locs) - 1, -1, -1):
            loc = shard.locs[k]
            if loc[0] != old_page or loc[1] < old_off:
                break
            shard.locs[k] = (new_page, loc[1] - old_off, loc[2] - old_off) + loc[3:]
        base = shard.base_index
        if base is not None and len(base):
            sel = (base.raw_page == old_page) & (base.raw_start >= old_off)
            if sel.any():
                base.raw_start = np.where(sel, base.raw_start - old_off, base.raw_start)
                base.raw_end = np.where(sel, base.raw_end - old_off, base.raw_end)
                base.raw_page = np.where(sel, new_page, base.raw_page)

    # ------------------------------------------------------------------ commit

    def _header(self, shard: _Shard, header_size: int, page_size: int) -> Header:
        # "compressing" a short int array can make it longer (an int32 of shape [1]: 4 bytes plain,
        # 6 compressed), so the signed total can be negative; MindSpore stores it clamped at 0
        compression = max(0, self.compression_size) if self.version >= "3.0" else None
        return Header(header_size, page_size, self.schema, self.index_fields, shard.pages, self.names,
                      shard.shard_id, compression, self.version)

    def _auto_layout(self) -> tuple[int, int]:
        """Header and page size for data still in memory: as small as MindSpore accepts."""
        used = max((p.size for s in self.shards for p in s.pages), default=0)
        page_size = self.capacity if self.fixed_page else max(MIN_PAGE_SIZE, _round_up(used, 4096))
        header_size = self.fixed_header or MIN_HEADER_SIZE
        if not self.fixed_header:
            for _ in range(3):
                need = max(len(self._header(s, header_size, page_size).to_bytes()) for s in self.shards)
                header_size = max(MIN_HEADER_SIZE, _round_up(2 * need, 4096))
        return header_size, page_size

    def commit(self) -> None:
        """Writes headers and indexes and moves every file into place (indexes last).

        An operating-system or SQLite failure (disk full...) removes every temporary file (an
        append also gives the data files back their old size) and raises ``MindRecordWriteError``
        naming the file; any failure leaves the writer closed, refusing further use.
        """
        self._check_usable()
        self.open()
        try:
            if self.append:
                self._commit_append()
            else:
                self._commit_new()
        except BaseException as exc:
            self.abort(exc)
            raise
        finally:
            self.close()

    def _commit_new(self) -> None:
        if isinstance(self.shards[0].store, _MemoryStore):
            header_size, page_size = self._auto_layout()
            for shard in self.shards:
                with self._io(shard):
                    mem = shard.memory()
                    fd, tmp = _make_temp(shard.path)
                    shard.fd, shard.tmp_path = fd, tmp
                    shard.store = _FileStore(fd, tmp, header_size, page_size)
                    for pid, data in mem.pages.items():
                        shard.store.write(pid, 0, [data])
        for shard in self.shards:
            with self._io(shard):
                self._finish_data_file(shard)
        self._write_indexes()
        stale = _stale_shards(self.paths) if self.overwrite else []
        for shard in self.shards:
            with self._io(shard):
                if self.overwrite and os.path.lexists(shard.path + ".db"):
                    os.unlink(shard.path + ".db")  # never leave a new data file next to an old index
                os.replace(shard.tmp_path, shard.path)  # type: ignore[arg-type]
                shard.tmp_path = None
        self._move_indexes()
        for path in stale:
            for p in (path + ".db", path):
                if _remove_if_there(p):
                    logger.warning("Removed stale mindrecord file of the overwritten dataset: %s", p)

    def _write_indexes(self) -> None:
        """Writes every shard's ``.db`` under a temporary name."""
        for shard in self.shards:
            with self._io(shard, db=True):
                fd, tmp = _make_temp(shard.path + ".db")
                os.close(fd)
                os.unlink(tmp)
                self._db_tmps[shard.shard_id] = tmp
                store = shard.file()
                header = self._header(shard, store.header_size, store.page_size)
                write_index(tmp, header, os.path.basename(shard.path), self._shard_index(shard))
                os.chmod(tmp, stat.S_IRUSR | stat.S_IWUSR)

    def _move_indexes(self) -> None:
        for shard in self.shards:
            with self._io(shard, db=True):
                os.replace(self._db_tmps[shard.shard_id], shard.path + ".db")
                del self._db_tmps[shard.shard_id]

    @contextlib.contextmanager
    def _io(self, shard: _Shard, db: bool = False) -> Any:
        """Turns an OSError or sqlite3.Error into a MindRecordWriteError naming the shard's file."""
        try:
            yield
        except MindRecordWriteError:
            raise
        except (OSError, sqlite3.Error) as exc:
            if db:
                raise write_error(shard.path + ".db", self._db_tmps.get(shard.shard_id), exc) from exc
            raise write_error(shard.path, shard.tmp_path, exc) from exc

    def _check_usable(self) -> None:
        if self._failure is not None:
            raise MindRecordRuntimeError(f"Invalid operation, this FileWriter was closed after a failure "
                                         f"({self._failure}); start a new FileWriter.")

    def abort(self, exc: BaseException) -> None:
        """After a write failure: appends give the data files back their old size (while no header
        was rewritten yet), then everything temporary goes and the lock is released."""
        self._failure = exc.detail if isinstance(exc, MindRecordRuntimeError) else f"{type(exc).__name__}: {exc}"
        if self.append and not self._in_place_committed:
            for shard in self.shards:
                _restore_append(shard)
        self.close()

    def _finish_data_file(self, shard: _Shard) -> None:
        store = shard.store
        assert isinstance(store, _FileStore)
        header = self._header(shard, store.header_size, store.page_size)
        blob = header.to_bytes()
        if len(blob) > store.header_size:
            if self.fixed_header:
                logger.warning("The header of %s needs %d bytes, more than the header size %d; using a larger "
                               "header size.", shard.path, len(blob), store.header_size)
            new_h = _round_up(2 * len(blob), 1 << 20)
            store.move(shard.pages, new_h, store.page_size)
            header = self._header(shard, store.header_size, store.page_size)
            blob = header.to_bytes()
        os.pwrite(store.fd, blob, 0)
        end = max([store.header_size + p.page_id * store.page_size + p.size for p in shard.pages if p.size]
                  + [len(blob)])
        os.ftruncate(store.fd, end)
        os.fchmod(store.fd, stat.S_IRUSR | stat.S_IWUSR)

    def _shard_index(self, shard: _Shard) -> ShardIndex:
        locs = np.array(shard.locs, dtype=np.int64).reshape(-1, 7)
        values = {f: [v[k] for v in shard.values] for k, f in enumerate(self.index_fields)}
        new = ShardIndex.from_rows(locs, values)
        if shard.base_index is not None:
            return shard.base_index.concat(new)
        return new

    def _copy_for_layout(self, shard: _Shard, header_size: int, page_size: int) -> None:
        """Appends that need a new layout: copy the file with the new layout, swap it in at commit."""
        old = shard.store
        assert isinstance(old, _FileStore)
        fd, tmp = _make_temp(shard.path)
        new = _FileStore(fd, tmp, header_size, page_size)
        for page in shard.pages:
            if page.size:
                new.write(page.page_id, 0, [old.read(page.page_id, 0, page.size)])
        os.close(old.fd)
        if shard.tmp_path is not None:
            os.unlink(shard.tmp_path)
        shard.store, shard.fd, shard.tmp_path = new, fd, tmp

    def _commit_append(self) -> None:
        for shard in self.shards:
            store = shard.file()
            need = len(self._header(shard, store.header_size, store.page_size).to_bytes())
            if need > store.header_size:
                with self._io(shard):
                    self._copy_for_layout(shard, _round_up(2 * need, 1 << 20), store.page_size)
        self._write_indexes()
        for shard in self.shards:
            with self._io(shard):
                if shard.tmp_path is not None:      # relaid out copy
                    self._finish_data_file(shard)
                    os.replace(shard.tmp_path, shard.path)
                    shard.tmp_path = None
                else:                               # in place: the new header is the commit point
                    self._in_place_committed = True
                    self._finish_data_file(shard)
        self._move_indexes()

    def close(self) -> None:
        """Releases files; removes temporary files of an unfinished write. Idempotent."""
        if self._closed:
            return
        self._closed = True
        for shard in self.shards:
            if shard.fd is not None:
                try:
                    os.close(shard.fd)
                except OSError:
                    pass
                shard.fd = None
            if shard.tmp_path is not None:
                _remove_if_there(shard.tmp_path)
                shard.tmp_path = None
        for tmp in self._db_tmps.values():
            for p in (tmp, tmp + "-journal"):
                _remove_if_there(p)
        self._db_tmps.clear()
        self._lock.release()


def _check_row_size(need: int) -> None:
    if need > MAX_GROWN_PAGE_SIZE:
        raise MindRecordRuntimeError(f"Invalid data, a row of {need} bytes is larger than the largest page "
                                     f"size headrace writes ({MAX_GROWN_PAGE_SIZE} bytes).")


def _restore_append(shard: _Shard) -> None:
    """Gives an appended-to data file back its old bytes: its old size, and zeros (what unused slot
    bytes hold in a written file) where this writer continued the last pages within it."""
    try:
        fd = os.open(shard.path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return
    try:
        os.ftruncate(fd, shard.orig_size)
        for page, size, slot in shard.orig_tails:
            end = min(slot + page.size, shard.orig_size)
            if end > slot + size:
                os.pwrite(fd, bytes(end - slot - size), slot + size)
    except OSError:
        pass
    finally:
        os.close(fd)


def _load_values(path: str, header: Header) -> dict[str, list]:
    """Index-field values of the rows already in a shard, read from its ``.db``."""
    if not header.index_fields:
        return {}
    con = _open_db(path + ".db")
    try:
        cols = ",".join(field_column(f) for f in header.index_fields)
        rows = con.execute(f"SELECT {cols} FROM INDEXES ORDER BY ROW_ID").fetchall()
    except sqlite3.Error as exc:
        raise MindRecordFormatError(f"Invalid file, the mindrecord meta file {path}.db is damaged: {exc}.",
                                    path + ".db") from None
    finally:
        con.close()
    return {f: [r[k] for r in rows] for k, f in enumerate(header.index_fields)}
