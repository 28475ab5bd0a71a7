"""Damaged and crafted files (issue 12 items 14, 15, 21): sizes are checked against the file before
anything is allocated, the .db row table is read without SQLite's own index and checked against the
header's pages, MindPage never puts a name from a file into SQL, and its queries are bounded."""
import json
import os
import sqlite3
import struct
import subprocess
import sys
import textwrap

import pytest

from headrace.mindrecord import FileReader
from headrace.mindrecord._format.errors import MindRecordFormatError

from .conftest import damageable, make_rows

ROWS = make_rows(40)
TIB = 1 << 40
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # the repository
pristine, path = damageable(ROWS)


def _edit_header(path, edit):
    """Rewrites the header JSON of ``path`` after ``edit(obj)`` (the file keeps its layout)."""
    with open(path, "r+b") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        obj = json.loads(f.read(n))
        edit(obj)
        text = json.dumps(obj, separators=(",", ":")).encode()
        f.seek(0)
        f.write(struct.pack("<Q", len(text)) + text + b"\0" * max(0, n - len(text)))


def _sql(path, *statements):
    con = sqlite3.connect(path + ".db")
    for s in statements:
        con.execute(s)
    con.commit()
    con.close()


def _values(rows):
    return [(r["label"], r["name"], r["data"], r["vec"].tolist(), r["mat"].tolist()) for r in rows]


def _run_limited(code, limit_gib=2, timeout=120):
    """Runs ``code`` in a fresh interpreter whose address space is capped (an attempt to allocate
    a TiB fails there at once instead of swapping); returns its stdout."""
    prog = (f"import resource, sys; resource.setrlimit(resource.RLIMIT_AS, ({limit_gib << 30}, {limit_gib << 30}))\n"
            f"sys.path.insert(0, {ROOT!r})\n" + textwrap.dedent(code))
    proc = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


_TRY = """
    from headrace.mindrecord import FileReader, reindex
    from headrace.mindrecord._format.errors import MindRecordFormatError
    path, how = PATH, HOW
    try:
        if how == "read":
            list(FileReader(path).get_next())
        else:
            reindex(path)
    except MindRecordFormatError as exc:
        print("ERROR", exc.file, "|", exc.plain)
    else:
        print("NO ERROR")
"""


def _try(path, how="read"):
    return _run_limited(_TRY.replace("PATH", repr(path)).replace("HOW", repr(how))).strip()


def test_tib_page_size_is_refused_before_allocating(path):
    def edit(h):
        h["page_size"] = TIB
        h["page"][0]["page_size"] = TIB
    _edit_header(path, edit)
    _sql(path, "UPDATE INDEXES SET PAGE_OFFSET_BLOB_END = 1099511627776 WHERE ROW_ID = 0")
    for how in ("read", "reindex"):
        assert _try(path, how) == (f"ERROR {path} | Invalid file, the page_size {TIB} is above the limit 268435456; "
                                   f"the header is damaged.")


def test_tib_header_size_is_refused(path):
    _edit_header(path, lambda h: h.update(header_size=TIB))
    assert _try(path) == (f"ERROR {path} | Invalid file, the header_size {TIB} is above the limit 134217728; the "
                          f"header is damaged.")


def test_page_claiming_more_bytes_than_the_file_has(path):
    size = os.path.getsize(path)

    def edit(h):
        h["page"][-1]["page_size"] = 1 << 28      # a raw page of 256 MiB (the largest allowed) in a small file
        h["page_size"] = 1 << 28
    _edit_header(path, edit)
    out = _try(path, "reindex")
    assert out.startswith(f"ERROR {path} | Invalid file, page ") and f"runs past the end of the file of {size} bytes; " \
        f"the file is truncated or its header is damaged." in out


def test_blob_page_claiming_2_40_rows(path):
    _edit_header(path, lambda h: h["page"][0].update(end_row_id=TIB))
    for how in ("read", "reindex"):
        out = _try(path, how)
        assert out.startswith(f"ERROR {path} | Invalid file, blob page 0 claims rows 0..{TIB} but holds only "), out


def test_row_locations_must_be_distinct_and_in_order(path):
    # row 5 pointed at row 4's records (both raw and blob): every length prefix still matches
    _sql(path, "UPDATE INDEXES SET (PAGE_ID_RAW, PAGE_OFFSET_RAW, PAGE_OFFSET_RAW_END, PAGE_ID_BLOB, PAGE_OFFSET_BLOB, "
               "PAGE_OFFSET_BLOB_END) = (SELECT PAGE_ID_RAW, PAGE_OFFSET_RAW, PAGE_OFFSET_RAW_END, PAGE_ID_BLOB, "
               "PAGE_OFFSET_BLOB, PAGE_OFFSET_BLOB_END FROM INDEXES WHERE ROW_ID = 4) WHERE ROW_ID = 5")
    with pytest.raises(MindRecordFormatError) as info:
        list(FileReader(path).get_next())
    assert info.value.file == path + ".db"
    assert "row 5's blob record (bytes " in info.value.plain
    assert "the row locations are not distinct and in order" in info.value.plain


def _autoindex_page(db):
    con = sqlite3.connect(db)
    (root,) = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_INDEXES_1'").fetchone()
    (page_size,) = con.execute("PRAGMA page_size").fetchone()
    con.close()
    return (root - 1) * page_size, page_size


def test_damaged_sqlite_index_page_is_not_trusted(path):
    # SQLite's index over (ROW_ID, INC_0) stores, per row, the key and the table rowid. Make the entry
    # of ROW_ID 7 point at the table row of ROW_ID 6: a query that walks the index (ORDER BY ROW_ID)
    # then returns row 6's locations as row 7's, with ROW_IDs 0..n-1 and every prefix matching.
    db = path + ".db"
    start, size = _autoindex_page(db)
    data = bytearray(open(db, "rb").read())
    # the index record of ROW_ID 7: a 5-byte record header (serial types int8, 0, 0, int8), then ROW_ID 7
    # and the table rowid 8 (rowids count from 1)
    entry = bytes([5, 1, 8, 8, 1, 7, 8])
    at = data.index(entry, start, start + size)
    data[at + 6] = 7                       # rowid 8 -> 7 (ROW_ID 6's table row)
    open(db, "wb").write(bytes(data))
    con = sqlite3.connect(db)
    walked = con.execute("SELECT ROW_ID, PAGE_OFFSET_BLOB FROM INDEXES ORDER BY ROW_ID").fetchall()
    con.close()
    assert walked[7][1] == walked[6][1]    # the damage is real: through the index row 7 is row 6
    assert _values(FileReader(path).get_next()) == _values(ROWS)


def test_mindpage_column_names_from_the_db_never_reach_sql(path):
    evil = ("ROW_ID AS TEXT), COUNT(1) FROM INDEXES a, INDEXES b, INDEXES c, INDEXES d, INDEXES e, INDEXES f, "
            "INDEXES g GROUP BY 1 --_0")
    _sql(path, f'ALTER TABLE INDEXES RENAME COLUMN label_0 TO "{evil}"')
    code = f"""
        from headrace.mindrecord import MindPage
        from headrace.mindrecord._format.errors import MindRecordFormatError
        try:
            page = MindPage({path!r})
            page.category_field = page.candidate_fields[0]
            print(page.read_category_info())
        except MindRecordFormatError as exc:
            print("ERROR", exc.file, "|", exc.plain)
    """
    out = _run_limited(code, timeout=60).strip()
    assert out == (f"ERROR {path}.db | Invalid file, the mindrecord meta file {path}.db has an index column named "
                   f"{evil!r}, which is not a field name followed by '_0' (letters, digits and '_' only); the file is "
                   f"damaged or crafted.")


def _endless_view(path):
    """Replaces INDEXES by a view over an endless recursive query (same columns)."""
    con = sqlite3.connect(path + ".db")
    cols = [r[1] for r in con.execute("PRAGMA table_info(INDEXES)")]
    con.execute("DROP TABLE INDEXES")
    body = ", ".join(f"x AS {c}" for c in cols)
    con.execute(f"CREATE VIEW INDEXES AS WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c) "
                f"SELECT {body} FROM c")
    con.commit()
    con.close()


def test_endless_db_view_is_stopped(path):
    _endless_view(path)
    code = f"""
        from headrace.mindrecord import FileReader
        from headrace.mindrecord._format.errors import MindRecordFormatError
        try:
            FileReader({path!r})
        except MindRecordFormatError as exc:
            print("ERROR", exc.file, "|", exc.plain)
    """
    out = _run_limited(code, timeout=60).strip()
    assert out == (f"ERROR {path}.db | Invalid file, the mindrecord meta file {path}.db is damaged or does not belong "
                   f"to this data file: it returned more than 40 rows.")


def test_mindpage_query_is_bounded(path):
    # the .db is replaced after MindPage opened it: the category query itself meets the endless view
    code = f"""
        from headrace.mindrecord import MindPage
        from headrace.mindrecord._format.errors import MindRecordFormatError
        from tests.mindrecord.test_integrity import _endless_view
        page = MindPage({path!r})
        page.category_field = "label"
        _endless_view({path!r})
        try:
            page.read_category_info()
        except MindRecordFormatError as exc:
            print("ERROR", exc.file, "|", exc.plain)
    """
    out = _run_limited(code, timeout=60).strip()
    assert out.startswith(f"ERROR {path}.db | Invalid file, the query [ ") and (
        f"on the mindrecord meta file {path}.db was stopped: it took more than 28000000 steps for 40 rows, far more "
        f"than the file's rows need; the file is damaged or was not written by a MindRecord writer.") in out
