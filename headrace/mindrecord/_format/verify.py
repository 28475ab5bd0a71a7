"""Full verification of MindRecord files: every check the format allows, on every byte it can.

The format (MindSpore 2.10) stores no checksum or hash: MindSpore's ``mindrecord.config`` declares a
``HASH_MODE`` but nothing sets or writes it, and encryption (``set_enc_key``) is the only integrity
mechanism it has. So what can be checked is the redundancy the format carries:

* the header: sizes within the writer's limits and inside the file, pages of the right shape;
* the ``.db``: SQLite's own ``PRAGMA integrity_check`` (b-trees, and SQLite's index against its
  table), the file name it names, one row per data row, ``INC_k`` zero, and the row table equal,
  entry for entry, to the one rebuilt by walking the data file's pages through their length prefixes;
* every record: length prefixes that tile each page exactly; raw records that decode, hold exactly
  the schema's scalar fields, are encoded byte for byte as the writer encodes them, and whose values
  equal the index-field values the ``.db`` keeps for the row (a second copy of every indexed scalar);
  blob records that split into the schema's blob fields, compressed integer arrays that decode
  exactly, arrays whose sizes fit their shapes;

The header's ``compression_size`` is not checked: MindSpore 2.10 writes 0 where its arrays grew when
compressed (small int32 arrays), so its rule is not "the bytes saved".

What no check can see: a change inside the payload of a ``bytes`` field or of a float array (or in
the values of an int array that keeps each element's width), and a change to a scalar field that is
not an index field, when the result is still well formed; two blob pages with identical record
lengths swapped. Those need a hash, which the format does not have: headrace's opt-in CRC sidecar
(``integrity.py``, written by ``FileWriter(..., checksum=True)``) is checked first where a data file
has one, and names the damaged pages and their rows.
"""
from __future__ import annotations

import dataclasses
import os
import sqlite3
import struct
from typing import Any, Sequence

import numpy as np

from . import integrity
from .errors import MindRecordFormatError
from .header import Header, check_same_dataset, read_header, shard_paths
from .index import QueryTooLong, ShardIndex, _open_db, bounded_query, field_column, load_index, scan_shard
from .rows import DUMMY_RAW, EncodeError, decode_raw, decompress_ints, encode_raw, split_blob
from .schema import Schema

__all__ = ["ShardReport", "get_verify_on_open", "resolve_verify", "set_verify_on_open", "verify_dataset",
           "verify_shard"]

_LEN = struct.Struct("<Q")
_verify_on_open: bool | str = False


CHECKSUM = "checksum"  # verify only the CRC sidecars (integrity.py): every byte read once, nothing decoded


def set_verify_on_open(verify: bool | str) -> None:
    """Whether ``FileReader``, ``MindPage`` and ``MindDataset`` verify their files in full when they
    open them (see ``verify_dataset``), for objects made without an explicit ``verify`` argument.

    Args:
        verify (Union[bool, str]): True to verify on open; ``"checksum"`` to check only each data
            file's CRC sidecar (``FileWriter(..., checksum=True)``; a file without one is an
            error). Default (before any call): False.

    Raises:
        TypeError: ``verify`` is not a bool or ``"checksum"``.
    """
    global _verify_on_open
    if not isinstance(verify, bool) and verify != CHECKSUM:
        raise TypeError(f"set_verify_on_open: 'verify' must be a bool (True or False), got {type(verify).__name__} "
                        f"{verify!r:.40}; or 'checksum' to check only the CRC sidecars.")
    _verify_on_open = verify


def get_verify_on_open() -> bool | str:
    """The current ``set_verify_on_open`` value."""
    return _verify_on_open


def resolve_verify(verify: bool | str | None) -> bool | str:
    """``verify`` checked, or the process-wide setting when it is None."""
    if verify is None:
        return _verify_on_open
    if not isinstance(verify, bool) and verify != CHECKSUM:
        raise TypeError(f"'verify' must be True, False or None (use headrace.mindrecord.set_verify_on_open), or "
                        f"'checksum' to check only the CRC sidecars, got {verify!r}.")
    return verify


@dataclasses.dataclass
class ShardReport:
    """What ``verify_dataset`` checked in one data file.

    Attributes:
        file: the data file.
        rows: rows verified.
        pages: pages walked.
        bytes: bytes of pages read and checked (records and their length prefixes).
        index: the verified row table (the same as the ``.db``'s).
        saved: bytes the integer-array compression saved in this file.
        checksum: whether the file's CRC sidecar was checked too (it has one).
    """

    file: str
    rows: int
    pages: int
    bytes: int
    index: ShardIndex = dataclasses.field(repr=False)
    saved: int = dataclasses.field(default=0, repr=False)
    checksum: bool = dataclasses.field(default=False, repr=False)


def _fail(what: str, file: str, page: int | None = None, row: int | None = None) -> MindRecordFormatError:
    where = f" (page {page})" if page is not None else ""
    return MindRecordFormatError(f"Verification failed: {what}{where}.", file, row)


def verify_dataset(files: Sequence[str], load_dataset: bool = True, *, sidecar: bool = True) -> list[ShardReport]:
    """Verifies data files and their ``.db`` indexes in full (see the module docstring).

    Args:
        files: a data file (all shards of its dataset, when ``load_dataset``) or a list of files.
        load_dataset: read the sibling shards of a single file too.
        sidecar: check the CRC sidecars of the files that have one.

    Returns:
        list[ShardReport], one per data file, in order.

    Raises:
        MindRecordFormatError: the first problem found, naming the file and, where they apply, the
            page and the row (within that file).
    """
    files = [os.fspath(f) for f in files]
    headers = [_read_header(files[0])]
    if load_dataset and len(files) == 1:
        files = shard_paths(files[0], headers[0])
        headers = []
    for p in files[len(headers):]:
        headers.append(_read_header(p))
    check_same_dataset(headers, files)
    reports = [verify_shard(p, h, sidecar=sidecar) for p, h in zip(files, headers)]
    return reports


def _read_header(path: str) -> Header:
    if not os.path.isfile(path):
        raise MindRecordFormatError(f"Invalid file, the mindrecord file {path} does not exist.", path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        return read_header(fd, path)
    finally:
        os.close(fd)


def verify_shard(path: str, header: Header, *, sidecar: bool = True) -> ShardReport:
    """Verifies one data file and its ``.db`` (see ``verify_dataset``); returns its report. A CRC
    sidecar, where there is one (and ``sidecar``), is checked first: it names damaged pages that
    decode well."""
    checksum = sidecar and integrity.has_sidecar(path)
    if checksum:
        integrity.check_sidecar(path, header)
    _check_db(path, header)
    index = load_index(path, header)             # row table checked against the header's pages
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        scanned = scan_shard(fd, header, path, header.index_fields)
        for name in ("raw_page", "raw_start", "raw_end", "group", "blob_page", "blob_start", "blob_end"):
            a, b = getattr(index, name), getattr(scanned, name)
            if not np.array_equal(a, b):
                row = int(np.flatnonzero(a != b)[0])
                raise _fail(f"the .db gives row {row} the location {name}={int(a[row])}, but walking the data file's "
                            f"pages puts it at {name}={int(b[row])}", path + ".db", row=row)
        report = _check_records(fd, path, header, scanned)
    finally:
        os.close(fd)
    _check_index_values(path, header, scanned)
    report.checksum = checksum
    return report


def _check_db(path: str, header: Header) -> None:
    db = path + ".db"
    if not os.path.isfile(db):
        return   # load_index reports it with MindSpore's text
    try:
        con = _open_db(db)
        try:
            result = bounded_query(con, "PRAGMA integrity_check", (), max(header.num_rows, 1) * 20, 100)
        finally:
            con.close()
    except QueryTooLong as exc:
        raise _fail(f"SQLite's integrity check of the .db was stopped ({exc})", db) from None
    except (sqlite3.Error, ValueError) as exc:   # ValueError: undecodable text in SQLite's answer
        raise _fail(f"SQLite cannot check the .db ({exc})", db) from None
    if result != [("ok",)]:
        raise _fail(f"SQLite's integrity check of the .db reports: {'; '.join(str(r[0]) for r in result[:5])}", db)


def _check_records(fd: int, path: str, header: Header, index: ShardIndex) -> ShardReport:
    """Decodes every record of every row, checks it, and checks that the records tile their pages.
    Pages are read one raw and one blob page at a time (rows visit them in page order)."""
    schema = header.schema
    raw_fields = schema.raw_fields
    blob_fields = schema.blob_fields
    n = len(index)
    # every byte of every page belongs to exactly one record
    covered = np.zeros(len(header.pages) + 1, dtype=np.int64)
    np.add.at(covered, index.raw_page, index.raw_end - index.raw_start)
    np.add.at(covered, index.blob_page, index.blob_end - index.blob_start)
    for p in header.pages:
        if covered[p.page_id] != p.size:
            raise _fail(f"the rows' records cover {int(covered[p.page_id])} of the page's {p.size} used bytes",
                        path, p.page_id)
    cache: dict[str, tuple[int, bytes]] = {}

    def page(kind: str, page_id: int) -> bytes:
        hit = cache.get(kind)
        if hit is None or hit[0] != page_id:
            p = header.pages[page_id]
            data = os.pread(fd, p.size, header.page_offset(page_id))
            if len(data) != p.size:
                raise _fail(f"page {page_id} is cut short by the end of the file", path, page_id)
            hit = cache[kind] = (page_id, data)
        return hit[1]

    saved = 0
    int_arrays = [k for k, f in enumerate(blob_fields) if schema.fields[f].type in ("int32", "int64")
                  and header.compressed]
    for row in range(n):
        rpage, bpage = int(index.raw_page[row]), int(index.blob_page[row])
        raw = memoryview(page("raw", rpage))[int(index.raw_start[row]) + 8:int(index.raw_end[row])]
        try:
            rec = decode_raw(raw)
        except ValueError as exc:
            raise _fail(str(exc), path, rpage, row) from None
        _check_raw(rec, bytes(raw), raw_fields, schema, path, rpage, row)
        blob = memoryview(page("blob", bpage))[int(index.blob_start[row]) + 8:int(index.blob_end[row])]
        saved += _check_blob(blob, blob_fields, int_arrays, schema, path, bpage, row)
    used = sum(p.size for p in header.pages)
    return ShardReport(path, n, sum(1 for p in header.pages if p.size), used, index, saved)


def _check_raw(rec: Any, raw: bytes, raw_fields: list[str], schema: Schema, path: str, page: int, row: int) -> None:
    if not raw_fields:
        if raw != DUMMY_RAW:
            raise _fail(f"the raw record of a schema without scalar fields is {raw[:40]!r}, not the writer's "
                        f"{DUMMY_RAW!r}", path, page, row)
        return
    if not isinstance(rec, dict) or set(rec) != set(raw_fields):   # (keys may be of any type: no sorting)
        keys = [repr(k) for k in rec][:20] if isinstance(rec, dict) else type(rec).__name__
        raise _fail(f"the raw record holds {keys}, not the schema's scalar fields {sorted(raw_fields)}", path, page, row)
    for name in raw_fields:
        v, t = rec[name], schema.fields[name].type
        ok = (isinstance(v, str) if t == "string" else
              isinstance(v, int) and not isinstance(v, bool) and (
                  -(1 << 31) <= v < (1 << 31) if t == "int32" else -(1 << 63) <= v < (1 << 63)) if t.startswith("int")
              else isinstance(v, (int, float)) and not isinstance(v, bool))
        if not ok:
            raise _fail(f"field '{name}' ({t}) holds {v!r}", path, page, row)
    try:
        again = encode_raw(rec, sorted(raw_fields))
    except EncodeError as exc:
        raise _fail(f"the raw record cannot be re-encoded ({exc})", path, page, row) from None
    if again != raw:
        raise _fail("the raw record is not encoded as a MindRecord writer encodes it (a changed byte)", path, page, row)


def _check_blob(blob: memoryview, blob_fields: list[str], int_arrays: list[int], schema: Schema, path: str, page: int,
                row: int) -> int:
    """Checks one blob record; returns the bytes its compressed integer arrays save."""
    if not blob_fields:
        if bytes(blob) != b"\0\0\0\0":
            raise _fail("the blob record of a schema without blob fields is not 4 zero bytes", path, page, row)
        return 0
    try:
        parts = split_blob(blob, len(blob_fields))
    except ValueError as exc:
        raise _fail(str(exc), path, page, row) from None
    saved = 0
    for k, (name, part) in enumerate(zip(blob_fields, parts)):
        f = schema.fields[name]
        if f.type == "bytes":
            continue
        try:
            if k in int_arrays:
                arr = decompress_ints(part, np.dtype("<i4" if f.type == "int32" else "<i8"))
                saved += arr.nbytes - part.nbytes
            else:
                item = 4 if f.type in ("int32", "float32") else 8
                if part.nbytes % item:
                    raise ValueError(f"{part.nbytes} bytes is not a whole number of {f.type} elements")
                arr = np.empty(part.nbytes // item)
            arr.reshape(f.shape)
        except ValueError as exc:
            raise _fail(f"field '{name}': {exc}", path, page, row) from None
    return saved


def _check_index_values(path: str, header: Header, scanned: ShardIndex) -> None:
    """The ``.db``'s index-field values (and ``INC_k`` zeros) against the raw records."""
    fields = header.index_fields
    if not fields:
        return
    db = path + ".db"
    cols = ", ".join(f'"INC_{k}", "{field_column(f)}"' for k, f in enumerate(fields))
    n = header.num_rows
    try:
        con = _open_db(db)
        try:
            rows = bounded_query(con, f"SELECT ROW_ID, {cols} FROM INDEXES NOT INDEXED", (), n, n)
        finally:
            con.close()
    except (sqlite3.Error, ValueError) as exc:
        raise _fail(f"the .db's index-field columns cannot be read ({exc})", db) from None
    for r in rows:
        row = r[0]
        for k, f in enumerate(fields):
            inc, got = r[1 + 2 * k], r[2 + 2 * k]
            want = scanned.values[f][row]
            if inc != 0:
                raise _fail(f"INC_{k} is {inc!r}, not 0", db, row=row)
            nan = isinstance(want, float) and want != want and got is None   # SQLite stores NaN as NULL
            same = nan or (got == want and type(got) is type(want)) or (
                isinstance(got, float) and isinstance(want, int) and not isinstance(want, bool) and got == want) or (
                isinstance(got, int) and isinstance(want, float) and got == want)
            if not same:
                raise _fail(f"the .db keeps {got!r} for index field '{f}', but the row's raw record (page "
                            f"{int(scanned.raw_page[row])}) holds {want!r}", db, row=row)

