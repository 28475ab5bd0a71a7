"""The SQLite index (``<data file>.db``): writing, loading and rebuilding from the data file.

One ``INDEXES`` row per data row gives the page and byte range of its raw and blob records
(including their 8-byte length prefixes) plus the values of the index fields; ``SHARD_NAME`` holds
the data file's base name (MINDRECORD.md §6). The tables are created with the same SQL text as
MindSpore's, so both systems read each other's index files.
"""
from __future__ import annotations

import dataclasses
import itertools
import os
import sqlite3
import struct
from typing import Any, Iterable, Sequence
from urllib.parse import quote

import numpy as np

from .errors import MindRecordFormatError, REINDEX_HINT
from .header import BLOB, RAW, Header, Page
from .rows import decode_raw
from .schema import SQL_TYPES
from headrace._util.errors import add_note

_LEN = struct.Struct("<Q")
BASE_COLUMNS = ("ROW_ID", "PAGE_ID_RAW", "PAGE_OFFSET_RAW", "PAGE_OFFSET_RAW_END", "ROW_GROUP_ID",
                "PAGE_ID_BLOB", "PAGE_OFFSET_BLOB", "PAGE_OFFSET_BLOB_END")


@dataclasses.dataclass
class ShardIndex:
    """Per-row record locations of one shard, as int64 arrays indexed by row id.

    Attributes:
        raw_page, raw_start, raw_end: raw record page and byte range within it (prefix included).
        group, blob_page, blob_start, blob_end: row group id, blob page and byte range.
        values: per index field, the row's value (a Python list), when known.
    """

    raw_page: np.ndarray
    raw_start: np.ndarray
    raw_end: np.ndarray
    group: np.ndarray
    blob_page: np.ndarray
    blob_start: np.ndarray
    blob_end: np.ndarray
    values: dict[str, list] = dataclasses.field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.raw_page.shape[0])

    @classmethod
    def empty(cls) -> "ShardIndex":
        z = np.zeros(0, dtype=np.int64)
        return cls(z, z, z, z, z, z, z)

    @classmethod
    def from_rows(cls, rows: np.ndarray, values: dict[str, list] | None = None) -> "ShardIndex":
        """From an (n, 7) array of (raw_page, raw_start, raw_end, group, blob_page, blob_start, blob_end)."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1, 7)
        cols = [np.ascontiguousarray(rows[:, k]) for k in range(7)]
        return cls(*cols, values=values or {})  # type: ignore[misc,arg-type]  # the seven columns

    def concat(self, other: "ShardIndex") -> "ShardIndex":
        vals = {k: self.values.get(k, []) + other.values.get(k, []) for k in set(self.values) | set(other.values)}
        return ShardIndex(*(np.concatenate([getattr(self, f), getattr(other, f)]) for f in  # type: ignore[misc,arg-type]
                            ("raw_page", "raw_start", "raw_end", "group", "blob_page", "blob_start", "blob_end")),
                          values=vals)


def field_column(name: str) -> str:
    """The INDEXES column of an index field (schema id is always 0)."""
    return name.replace("-", "_").replace(".", "_") + "_0"


def create_sql(header: Header) -> str:
    """``CREATE TABLE INDEXES`` with MindSpore's exact text."""
    sql = ("CREATE TABLE INDEXES(  ROW_ID               INT  NOT NULL, PAGE_ID_RAW          INT  NOT NULL"
           ", PAGE_OFFSET_RAW      INT  NOT NULL, PAGE_OFFSET_RAW_END  INT  NOT NULL"
           ", ROW_GROUP_ID         INT  NOT NULL, PAGE_ID_BLOB         INT  NOT NULL"
           ", PAGE_OFFSET_BLOB     INT  NOT NULL, PAGE_OFFSET_BLOB_END INT  NOT NULL")
    for k, name in enumerate(header.index_fields):
        sql += f",INC_{k} INT, {field_column(name)} {SQL_TYPES[header.schema.fields[name].type]}"
    sql += ", PRIMARY KEY(ROW_ID" + "".join(f",INC_{k}" for k in range(len(header.index_fields))) + "));"
    return sql


def write_index(db_path: str, header: Header, shard_name: str, index: ShardIndex) -> None:
    """Writes a fresh ``.db`` at ``db_path`` (which must not exist)."""
    con = sqlite3.connect(db_path, isolation_level=None)
    try:
        con.execute("PRAGMA journal_mode=DELETE")
        con.execute("PRAGMA synchronous=OFF")
        con.execute("BEGIN")
        con.execute(create_sql(header))
        con.execute("CREATE TABLE SHARD_NAME(NAME TEXT NOT NULL);")
        con.execute("INSERT INTO SHARD_NAME (NAME) VALUES (?)", (shard_name,))
        k = len(header.index_fields)
        cols = ",".join(("ROW_ID", "ROW_GROUP_ID", "PAGE_ID_RAW", "PAGE_OFFSET_RAW", "PAGE_OFFSET_RAW_END",
                         "PAGE_ID_BLOB", "PAGE_OFFSET_BLOB", "PAGE_OFFSET_BLOB_END")
                        + tuple(c for j, f in enumerate(header.index_fields) for c in (f"INC_{j}", field_column(f))))
        sql = f"INSERT INTO INDEXES ({cols}) VALUES ({','.join('?' * (8 + 2 * k))})"
        n = len(index)
        # one tuple per row, zipped from whole columns (no per-row Python work)
        columns: list[Iterable[Any]] = [range(n)]
        columns += [a.tolist() for a in (index.group, index.raw_page, index.raw_start, index.raw_end,
                                         index.blob_page, index.blob_start, index.blob_end)]
        for f in header.index_fields:
            columns += [itertools.repeat(0, n), index.values[f]]
        con.executemany(sql, zip(*columns, strict=True))
        con.execute("COMMIT")
    finally:
        con.close()


def _open_db(db_path: str) -> sqlite3.Connection:
    uri = "file:" + _quote_uri(db_path) + "?mode=ro"
    con = sqlite3.connect(uri, uri=True, check_same_thread=False)
    con.text_factory = _text   # damaged text must not surface as UnicodeDecodeError
    return con


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _quote_uri(path: str) -> str:
    return quote(os.path.abspath(path), safe="/")


_PROGRESS_EVERY = 1000        # SQLite virtual-machine steps between calls of the progress handler
_STEPS_BASE = 20_000          # a query may take (2e7 + 2e5 per row of the shard) steps
_STEPS_PER_ROW = 200


class QueryTooLong(sqlite3.Error):
    """A query on a ``.db`` did far more work, or returned far more rows, than its shard's rows need."""


def bounded_query(con: sqlite3.Connection, sql: str, args: tuple, rows: int, max_results: int | None = None) -> list:
    """``con.execute(sql, args).fetchall()``, but stopped with ``QueryTooLong`` after a number of
    SQLite steps proportional to ``rows`` (the shard's row count from its header), or once more
    than ``max_results`` rows came back: a damaged or crafted ``.db`` (a view over an endless
    recursive query, a table far larger than the data file) cannot hang or exhaust memory."""
    budget = [_STEPS_BASE + _STEPS_PER_ROW * rows]

    def progress() -> int:
        budget[0] -= 1
        return 1 if budget[0] < 0 else 0   # non-zero interrupts the statement

    con.set_progress_handler(progress, _PROGRESS_EVERY)
    try:
        cur = con.execute(sql, args)
        if max_results is None:
            return cur.fetchall()
        out = cur.fetchmany(max_results + 1)
        if len(out) > max_results:
            raise QueryTooLong(f"it returned more than {max_results} rows")
        return out
    except sqlite3.OperationalError:
        if budget[0] < 0:
            raise QueryTooLong(f"it took more than {_PROGRESS_EVERY * (_STEPS_BASE + _STEPS_PER_ROW * rows)} steps "
                               f"for {rows} rows") from None
        raise
    finally:
        con.set_progress_handler(None, 0)


def _damaged(db_path: str, data_path: str, why: str) -> MindRecordFormatError:
    exc = MindRecordFormatError(f"Invalid file, the mindrecord meta file {db_path} is damaged or does not "
                                f"belong to this data file: {why}.", db_path)
    add_note(exc, REINDEX_HINT.format(path=data_path))
    return exc


def missing_db_error(data_path: str) -> MindRecordFormatError:
    """MindSpore's text for a missing ``.db``, with a hint to rebuild it."""
    exc = MindRecordFormatError(
        f"Invalid file, failed to open mindrecord meta file. Please check whether the meta file: {data_path}.db "
        f"exists and do not rename the mindrecord file and meta file.", data_path + ".db")
    add_note(exc, REINDEX_HINT.format(path=data_path))
    return exc


def load_index(data_path: str, header: Header) -> ShardIndex:
    """Loads and checks the row locations of one shard from its ``.db``.

    Raises:
        MindRecordFormatError: the ``.db`` is missing, is not SQLite, names another file, or its
            rows disagree with the header (row count, page ids, byte ranges past a page's end).
    """
    db_path = data_path + ".db"
    if not os.path.isfile(db_path):
        raise missing_db_error(data_path)
    try:
        con = _open_db(db_path)
    except sqlite3.Error as exc:
        raise _damaged(db_path, data_path, str(exc)) from None
    n = header.num_rows
    try:
        try:
            names = bounded_query(con, "SELECT NAME FROM SHARD_NAME", (), n, 1)
            # NOT INDEXED: a full scan of the table itself; SQLite's own index over ROW_ID is never
            # trusted (a damaged index page can return one row twice, with every later check passing)
            rows = bounded_query(con, "SELECT ROW_ID, PAGE_ID_RAW, PAGE_OFFSET_RAW, PAGE_OFFSET_RAW_END, "
                                      "ROW_GROUP_ID, PAGE_ID_BLOB, PAGE_OFFSET_BLOB, PAGE_OFFSET_BLOB_END FROM INDEXES "
                                      "NOT INDEXED", (), n, n)
        except (sqlite3.Error, ValueError) as exc:
            raise _damaged(db_path, data_path, str(exc)) from None
    finally:
        con.close()
    base = os.path.basename(data_path)
    if not names or names[0][0] != base:
        got = names[0][0] if names else None
        err = MindRecordFormatError(f"Invalid database file, shard name [{base}] can not match [{got}].", db_path)
        add_note(err, REINDEX_HINT.format(path=data_path))
        raise err
    try:
        arr = np.array(rows, dtype=np.int64).reshape(-1, 8)
    except (TypeError, ValueError, OverflowError):
        raise _damaged(db_path, data_path, "INDEXES holds non-integer locations") from None
    if arr.shape[0] == n and n:
        arr = arr[np.argsort(arr[:, 0], kind="stable")]
    if arr.shape[0] != n or (n and not np.array_equal(arr[:, 0], np.arange(n))):
        raise _damaged(db_path, data_path, f"INDEXES has {arr.shape[0]} rows with ROW_IDs that are not 0..{n - 1} "
                                           f"as the header's {n} rows require")
    index = ShardIndex.from_rows(arr[:, 1:])
    check_index(index, header, db_path, data_path)
    return index


def check_index(index: ShardIndex, header: Header, db_path: str, data_path: str) -> None:
    """Raises unless every location lies inside a page of the right type."""
    n = len(index)
    if n == 0:
        return
    npages = len(header.pages)
    kinds = np.array([p.page_type == BLOB for p in header.pages] + [False], dtype=bool)
    sizes = np.array([p.size for p in header.pages] + [0], dtype=np.int64)
    group_of = np.full(npages + 1, -1, dtype=np.int64)
    for p in header.pages:
        if p.page_type == BLOB:
            group_of[p.page_id] = p.page_type_id
    for name, page, start, end, want_blob in (("raw", index.raw_page, index.raw_start, index.raw_end, False),
                                              ("blob", index.blob_page, index.blob_start, index.blob_end, True)):
        bad_page = (page < 0) | (page >= npages)
        safe = np.where(bad_page, npages, page)
        bad = bad_page | (kinds[safe] != want_blob) | (start < 0) | (end < start + 8) | (end > sizes[safe])
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise _damaged(db_path, data_path, f"the {name} record of row {row} (page {int(page[row])}, bytes "
                                               f"{int(start[row])}..{int(end[row])}) lies outside a {name} page")
    bad = group_of[np.where((index.blob_page >= 0) & (index.blob_page < npages), index.blob_page, npages)] != index.group
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise _damaged(db_path, data_path, f"row {row} names row group {int(index.group[row])}, but its blob page "
                                           f"{int(index.blob_page[row])} holds another group")
    _check_blob_tiling(index, header, db_path, data_path)
    _check_raw_tiling(index, header, db_path, data_path)


def _first_bad(bad: np.ndarray) -> int:
    return int(np.flatnonzero(bad)[0])


def _check_blob_tiling(index: ShardIndex, header: Header, db_path: str, data_path: str) -> None:
    """Row r's blob record is in the blob page whose rows include r, and each blob page's records
    follow one another from byte 0 to the page's used size, in row order (as the writer lays them
    out): so the locations are distinct and increasing, and the row table agrees with the header."""
    n = len(index)
    blobs = [p for p in header.pages if p.page_type == BLOB]
    page_of = np.full(n, -1, dtype=np.int64)
    last = np.zeros(n, dtype=bool)
    size_of = np.zeros(n, dtype=np.int64)
    for p in blobs:
        a, b = min(p.start_row_id, n), min(p.end_row_id, n)
        page_of[a:b] = p.page_id
        if b > a:
            last[b - 1] = True
            size_of[b - 1] = p.size
    bad = page_of != index.blob_page
    if bad.any():
        row = _first_bad(bad)
        raise _damaged(db_path, data_path, f"row {row}'s blob record is in page {int(index.blob_page[row])}, but "
                                           f"the header puts row {row} in page {int(page_of[row])}")
    want_start = np.zeros(n, dtype=np.int64)
    same = np.zeros(n, dtype=bool)
    same[1:] = index.blob_page[1:] == index.blob_page[:-1]
    want_start[1:] = np.where(same[1:], index.blob_end[:-1], 0)
    bad = (index.blob_start != want_start) | (last & (index.blob_end != size_of))
    if bad.any():
        row = _first_bad(bad)
        raise _damaged(db_path, data_path, f"row {row}'s blob record (bytes {int(index.blob_start[row])}.."
                                           f"{int(index.blob_end[row])} of page {int(index.blob_page[row])}) does not "
                                           f"follow the previous row's record in that page or end the page's "
                                           f"used bytes: the row locations are not distinct and in order")


def _check_raw_tiling(index: ShardIndex, header: Header, db_path: str, data_path: str) -> None:
    """Raw records: each row group starts at the offset its raw page's ``row_group_ids`` gives, and
    the rows of a group follow one another in that page, in row order."""
    n = len(index)
    starts = {}
    for p in header.pages:
        if p.page_type == RAW:
            for g, off in p.row_group_ids:
                starts[(p.page_id, g)] = off
    first = np.ones(n, dtype=bool)
    first[1:] = (index.group[1:] != index.group[:-1]) | (index.raw_page[1:] != index.raw_page[:-1])
    rows = np.flatnonzero(first)
    want = np.empty(n, dtype=np.int64)
    want[1:] = index.raw_end[:-1]
    group_heads = [starts.get((int(index.raw_page[r]), int(index.group[r])), -1) for r in rows]
    want[rows] = group_heads
    bad = index.raw_start != want
    if bad.any():
        row = _first_bad(bad)
        raise _damaged(db_path, data_path, f"row {row}'s raw record (bytes {int(index.raw_start[row])}.."
                                           f"{int(index.raw_end[row])} of page {int(index.raw_page[row])}) does not "
                                           f"follow the previous row's record or start its row group where raw page "
                                           f"{int(index.raw_page[row])} says: the row locations are not distinct and "
                                           f"in order")
    raw_abs = index.raw_page * header.page_size + index.raw_start
    if n > 1 and not (raw_abs[1:] >= raw_abs[:-1] + (index.raw_end[:-1] - index.raw_start[:-1])).all():
        row = _first_bad(~(raw_abs[1:] >= raw_abs[:-1] + (index.raw_end[:-1] - index.raw_start[:-1]))) + 1
        raise _damaged(db_path, data_path, f"row {row}'s raw record does not come after row {row - 1}'s: the row "
                                           f"locations are not distinct and in order")


def scan_shard(fd: int, header: Header, data_path: str, want_values: Sequence[str] = ()) -> ShardIndex:
    """Rebuilds one shard's row locations by walking its pages, as MindSpore's index generator does.

    Raw pages are visited in page order; each of their row groups names a blob page, whose rows
    are walked record by record through the 8-byte length prefixes. ``want_values`` index fields
    are decoded from the raw records.

    Raises:
        MindRecordFormatError: a record runs past its page, a row group has no blob page, or the
            row ids do not cover the header's rows exactly once.
    """
    blob_by_group = {p.page_type_id: p for p in header.pages if p.page_type == BLOB}
    n = header.num_rows
    locs = np.full((n, 7), -1, dtype=np.int64)
    values: dict[str, list] = {f: [None] * n for f in want_values}
    seen = np.zeros(n, dtype=bool)
    H, P = header.header_size, header.page_size

    def read_page(page: Page) -> bytes:
        data = os.pread(fd, page.size, H + page.page_id * P)
        if len(data) != page.size:
            raise MindRecordFormatError(f"Invalid file, page {page.page_id} ({page.size} bytes at offset "
                                        f"{H + page.page_id * P}) runs past the end of the file; the file is "
                                        f"truncated.", data_path)
        return data

    def record_length(buf: bytes, pos: int, kind: str, row: int, page: Page) -> int:
        """The length prefix of ``row``'s ``kind`` record at ``pos`` of ``page``, checked against the page."""
        if pos + 8 > len(buf):
            raise MindRecordFormatError(f"Invalid file, the {kind} record of row {row} runs past {kind} page "
                                        f"{page.page_id}.", data_path, row)
        length: int = _LEN.unpack_from(buf, pos)[0]
        if length > len(buf) - pos - 8:
            raise MindRecordFormatError(f"Invalid file, the {kind} record of row {row} ({length} bytes) runs "
                                        f"past {kind} page {page.page_id}.", data_path, row)
        return length

    blob_cache: dict[int, bytes] = {}
    for raw_page in (p for p in header.pages if p.page_type == RAW):
        raw = read_page(raw_page)
        for group, offset in raw_page.row_group_ids:
            blob_page = blob_by_group.get(group)
            if blob_page is None:
                if len(raw_page.row_group_ids) == 1 and group == 0 and offset == 0 and raw_page.size == 0:
                    continue  # an empty raw page carries the placeholder group
                raise MindRecordFormatError(f"Invalid file, raw page {raw_page.page_id} names row group {group} "
                                            f"but no blob page holds it.", data_path)
            if blob_page.page_id not in blob_cache:
                blob_cache = {blob_page.page_id: read_page(blob_page)}
            blob = blob_cache[blob_page.page_id]
            rpos, bpos = offset, 0
            for row in range(blob_page.start_row_id, blob_page.end_row_id):
                if row >= n or seen[row]:
                    raise MindRecordFormatError(f"Invalid file, row {row} appears twice or past the header's "
                                                f"{n} rows.", data_path, row)
                rlen = record_length(raw, rpos, "raw", row, raw_page)
                if values:
                    try:
                        rec = decode_raw(memoryview(raw)[rpos + 8:rpos + 8 + rlen])
                    except ValueError as exc:
                        raise MindRecordFormatError(f"Invalid file, {exc} (page {raw_page.page_id}).", data_path,
                                                    row) from None
                    if not isinstance(rec, dict):
                        raise MindRecordFormatError(f"Invalid file, the raw record is not a map (page "
                                                    f"{raw_page.page_id}).", data_path, row)
                    for f in values:
                        if f not in rec:
                            raise MindRecordFormatError(f"Invalid file, the raw record has no field '{f}' (page "
                                                        f"{raw_page.page_id}).", data_path, row)
                        values[f][row] = rec[f]
                blen = record_length(blob, bpos, "blob", row, blob_page)
                locs[row] = (raw_page.page_id, rpos, rpos + 8 + rlen, group, blob_page.page_id, bpos, bpos + 8 + blen)
                seen[row] = True
                rpos += 8 + rlen
                bpos += 8 + blen
    if not seen.all():
        row = int(np.flatnonzero(~seen)[0])
        raise MindRecordFormatError(f"Invalid file, row {row} is in no raw page's row group.", data_path, row)
    return ShardIndex.from_rows(locs, values)

