"""The CRC sidecar: an opt-in checksum of MindRecord files, in a file of its own.

The MindRecord format has no checksum (MindSpore 2.10 writes none), so a flipped bit inside a
``bytes`` field or a float array reads back as another value. ``FileWriter(..., checksum=True)``
writes, next to each data file ``NAME``, a sidecar ``NAME.crc``: JSON holding the CRC-32C of the
header block and of every page slot of the data file, and of the whole ``.db``. The data file and
the ``.db`` are unchanged, so MindSpore reads them as before (it never opens the sidecar).

The sidecar (version 1)::

    {"format": "headrace-mindrecord-crc", "version": 1, "algorithm": "crc32c",
     "file": "NAME", "size": <bytes of the data file>, "header_size": H, "page_size": P,
     "blocks": [<crc of bytes [0, H)>, <crc of page slot 0: [H, H + P)>, ...],
     "db": {"file": "NAME.db", "size": <bytes>, "crc32c": <crc>}}

Blocks follow the data file's layout: the header slot, then one slot of ``page_size`` bytes per
page (the last one ends with the file). A mismatch therefore names the page and the rows it holds.

``check_sidecar`` recomputes every CRC and raises ``MindRecordFormatError`` listing each block that
differs (the header, or page k with its rows), a data file or ``.db`` of another size than recorded
(changed after the sidecar was written: an append by a writer that does not know sidecars, as
MindSpore's, or a truncation), or a sidecar that is itself damaged. It reads every byte once (about
80 MB/s with headrace's NumPy CRC-32C on one core).
"""
from __future__ import annotations

import json
import os
from typing import Any

from headrace._codecs.crc32c import crc32c

from .errors import MindRecordFormatError
from .header import Header, read_header
from .store import _make_temp, _remove_if_there

__all__ = ["SUFFIX", "check_sidecar", "has_sidecar", "remove_sidecar", "sidecar_path", "write_sidecar"]

SUFFIX = ".crc"
FORMAT = "headrace-mindrecord-crc"
VERSION = 1
_LISTED = 10  # blocks named in one error


def sidecar_path(path: str) -> str:
    """The sidecar of the data file ``path``."""
    return path + SUFFIX


def has_sidecar(path: str) -> bool:
    return os.path.isfile(sidecar_path(path))


def remove_sidecar(path: str) -> None:
    """Removes the sidecar of ``path`` if there is one (before the file changes)."""
    _remove_if_there(sidecar_path(path))


def _open(path: str) -> int:
    return os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))


def _layout(fd: int, path: str) -> tuple[int, int]:
    """(header_size, page_size) of a data file from its header."""
    header = read_header(fd, path)
    return header.header_size, header.page_size


def _block_crcs(fd: int, size: int, header_size: int, page_size: int) -> list[int]:
    """CRC-32C of the header slot and of each page slot of an open file of ``size`` bytes."""
    out = []
    start, end = 0, min(header_size, size)
    while True:
        out.append(crc32c(os.pread(fd, end - start, start)))
        if end >= size:
            return out
        start, end = end, min(end + page_size, size)


def _file_crc(path: str) -> tuple[int, int]:
    """(size, CRC-32C) of a whole file."""
    fd = _open(path)
    try:
        size = os.fstat(fd).st_size
        return size, _crc_of(fd, size)
    finally:
        os.close(fd)


def _crc_of(fd: int, size: int) -> int:
    """CRC-32C of a whole open file (an index: far smaller than the data file's pages)."""
    return crc32c(os.pread(fd, size, 0))


def write_sidecar(path: str) -> str:
    """Writes the sidecar of the committed data file ``path`` (and its ``.db``); returns its path.
    Written under a temporary name and renamed, like the data files."""
    fd = _open(path)
    try:
        size = os.fstat(fd).st_size
        header_size, page_size = _layout(fd, path)
        blocks = _block_crcs(fd, size, header_size, page_size)
    finally:
        os.close(fd)
    db = path + ".db"
    db_size, db_crc = _file_crc(db)
    record = {"format": FORMAT, "version": VERSION, "algorithm": "crc32c", "file": os.path.basename(path),
              "size": size, "header_size": header_size, "page_size": page_size, "blocks": blocks,
              "db": {"file": os.path.basename(db), "size": db_size, "crc32c": db_crc}}
    target = sidecar_path(path)
    tfd, tmp = _make_temp(target)
    try:
        with os.fdopen(tfd, "w") as f:
            json.dump(record, f, separators=(",", ":"))
            f.write("\n")
        os.replace(tmp, target)
    except BaseException:
        _remove_if_there(tmp)
        raise
    return target


def _load(path: str) -> dict:
    side = sidecar_path(path)
    try:
        with open(side, encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise MindRecordFormatError(f"Integrity check failed: the CRC sidecar cannot be read ({exc}).", side) from None
    ok = (isinstance(record, dict) and record.get("format") == FORMAT and record.get("version") == VERSION
          and record.get("algorithm") == "crc32c" and _ints(record, "size", "header_size", "page_size")
          and isinstance(record.get("blocks"), list) and all(type(c) is int for c in record["blocks"])
          and isinstance(record.get("db"), dict) and _ints(record["db"], "size", "crc32c")
          and record["header_size"] > 0 and record["page_size"] > 0)
    if not ok:
        raise MindRecordFormatError(f"Integrity check failed: the CRC sidecar is damaged or not a {FORMAT} "
                                    f"version {VERSION} file.", side)
    return record


def _ints(d: dict, *keys: str) -> bool:
    return all(type(d.get(k)) is int and d[k] >= 0 for k in keys)


def check_sidecar(path: str, header: Header | None = None, *, db: bool = True) -> int:
    """Checks the data file ``path`` and its ``.db`` against the sidecar; returns the bytes checked.

    ``header``: the file's header, read already (it names each damaged page's rows; without it
    the header is read when a page differs, if it still can be). ``db``: check the ``.db`` too
    (False: only the data file, e.g. before recording a rebuilt ``.db``).

    Raises:
        MindRecordFormatError: no sidecar, a damaged sidecar, or a file that differs from it; the
            message names every differing block (up to ten) and ``row`` the first row of the first
            damaged page.
    """
    side = sidecar_path(path)
    if not os.path.isfile(side):
        raise MindRecordFormatError("Integrity check failed: the data file has no CRC sidecar "
                                    f"({os.path.basename(side)}; FileWriter(..., checksum=True) or "
                                    "`headrace mindrecord checksum` writes one).", path)
    record = _load(path)
    fd = _open(path)
    try:
        size = os.fstat(fd).st_size
        if size != record["size"]:
            raise MindRecordFormatError(
                f"Integrity check failed: the data file has {size} bytes, its CRC sidecar recorded "
                f"{record['size']}: it changed after the sidecar was written (appended to by a writer that does "
                f"not update sidecars, such as MindSpore's, or truncated).", path)
        got = _block_crcs(fd, size, record["header_size"], record["page_size"])
    finally:
        os.close(fd)
    want = record["blocks"]
    bad = [k for k in range(max(len(got), len(want))) if k >= len(got) or k >= len(want) or got[k] != want[k]]
    if bad:
        if header is None:
            header = _header_or_none(path)
        names = [_block_name(k, header) for k in bad[:_LISTED]]
        more = f" and {len(bad) - _LISTED} more" if len(bad) > _LISTED else ""
        first_row = _first_row(bad[0], header)
        raise MindRecordFormatError(
            f"Integrity check failed: CRC-32C differs from the sidecar's in {len(bad)} of {len(want)} blocks: "
            f"{'; '.join(names)}{more}. The bytes changed after they were written (disk, copy or "
            "transfer damage); restore the file from a good copy.", path, first_row)
    if not db:
        return size
    index = path + ".db"
    try:
        db_size, db_crc = _file_crc(index)
    except OSError as exc:
        raise MindRecordFormatError(f"Integrity check failed: the .db cannot be read ({exc}).", index) from None
    if (db_size, db_crc) != (record["db"]["size"], record["db"]["crc32c"]):
        raise MindRecordFormatError(
            f"Integrity check failed: the .db ({db_size} bytes, CRC-32C {db_crc:#010x}) differs from its CRC "
            f"sidecar's record ({record['db']['size']} bytes, {record['db']['crc32c']:#010x}). `headrace "
            "mindrecord reindex` rebuilds it from the data file, then `headrace mindrecord checksum` records "
            "the new one.", index)
    return size + db_size


def _header_or_none(path: str) -> Header | None:
    try:
        fd = _open(path)
        try:
            return read_header(fd, path)
        finally:
            os.close(fd)
    except (OSError, MindRecordFormatError, ValueError):
        return None


def _rows(page: Any, header: Header) -> tuple[int, int] | None:
    """[first, last] rows of a page (a raw page: those of its row groups), or None if none."""
    if page.page_type == "BLOB_DATA":
        return (page.start_row_id, page.end_row_id - 1) if page.end_row_id > page.start_row_id else None
    groups = {g for g, _ in page.row_group_ids}
    spans = [(p.start_row_id, p.end_row_id - 1) for p in header.pages
             if p.page_type == "BLOB_DATA" and p.page_type_id in groups and p.end_row_id > p.start_row_id]
    if not spans:
        return None
    return min(a for a, _ in spans), max(b for _, b in spans)


def _page(k: int, header: Header | None) -> Any:
    if header is None or k == 0:
        return None
    return next((p for p in header.pages if p.page_id == k - 1), None)


def _block_name(k: int, header: Header | None) -> str:
    if k == 0:
        return "the header"
    page = _page(k, header)
    if page is None:
        return f"page {k - 1}"
    kind = "blob" if page.page_type == "BLOB_DATA" else "raw"
    rows = _rows(page, header)  # type: ignore[arg-type]
    held = "no rows" if rows is None else (f"row {rows[0]}" if rows[0] == rows[1] else f"rows {rows[0]} to {rows[1]}")
    return f"page {k - 1} ({kind}, {held})"


def _first_row(k: int, header: Header | None) -> int | None:
    page = _page(k, header)
    rows = None if page is None else _rows(page, header)  # type: ignore[arg-type]
    return None if rows is None else rows[0]
