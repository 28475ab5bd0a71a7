"""Verification of MindRecord files (issue 12 item 14): ``headrace.mindrecord.verify``, the CLI's
``mindrecord verify``, ``verify=`` on the readers and ``set_verify_on_open``. The format has no
checksum: what verification can see is the redundancy between header, .db and records."""
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

import headrace.dataset as ds
from headrace.mindrecord import (FileReader, FileWriter, MindPage, get_verify_on_open, set_verify_on_open, verify)
from headrace.mindrecord._format.errors import MindRecordFormatError
from headrace.mindrecord._format.header import read_header_path

from .conftest import copy_dataset

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
N = 60


def _rows():
    return [{"label": i, "s": f"{i:04d}" * 200, "data": bytes([i]) * 3000} for i in range(N)]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """Six blob pages of 10 rows and two raw pages of 30 rows, all of equal sizes (fixed-size rows)."""
    d = tmp_path_factory.mktemp("verify")
    w = FileWriter(str(d / "s.mr"))
    w.add_schema({"label": {"type": "int32"}, "s": {"type": "string"}, "data": {"type": "bytes"}}, "t")
    w.set_page_size(1 << 15)
    w.set_header_size(1 << 14)
    w.write_raw_data(_rows())
    w.commit()
    return d


@pytest.fixture
def path(pristine, tmp_path):
    return copy_dataset(pristine, tmp_path, "s.mr")


def _read(path, **kw):
    return [(r["label"], r["s"], r["data"]) for r in FileReader(path, **kw).get_next()]


def _want():
    return [(r["label"], r["s"], r["data"]) for r in _rows()]


def _slot(path, page_id):
    h = read_header_path(path)
    return h.header_size + page_id * h.page_size, h.pages[page_id].size


def _swap_pages(path, a, b):
    (oa, size), (ob, size_b) = _slot(path, a), _slot(path, b)
    assert size == size_b
    with open(path, "r+b") as f:
        f.seek(oa)
        da = f.read(size)
        f.seek(ob)
        db = f.read(size)
        f.seek(oa)
        f.write(db)
        f.seek(ob)
        f.write(da)


def _raw_offset(path, row):
    con = sqlite3.connect(path + ".db")
    page, start = con.execute("SELECT PAGE_ID_RAW, PAGE_OFFSET_RAW FROM INDEXES WHERE ROW_ID = ?", (row,)).fetchone()
    con.close()
    return _slot(path, page)[0] + start, page


def test_pristine_files_pass(path):
    reports = verify(path)
    assert [(os.path.basename(r.file), r.rows, r.pages) for r in reports] == [("s.mr", N, 8)]
    h = read_header_path(path)
    assert reports[0].bytes == sum(p.size for p in h.pages)
    assert _read(path, verify=True) == _want()


def test_changed_raw_value_is_seen_only_when_verifying(path):
    # row 7's label is a positive fixint right after the 8-byte prefix, the map byte and the key "label"
    at, page = _raw_offset(path, 7)
    raw = open(path, "rb").read()[at:at + 16]
    assert raw[8:15] == b"\x82\xa5label" and raw[15] == 7
    with open(path, "r+b") as f:
        f.seek(at + 15)
        f.write(bytes([6]))
    assert _read(path)[7][0] == 6            # without verification: silently wrong (no checksum)
    with pytest.raises(MindRecordFormatError) as info:
        _read(path, verify=True)
    assert info.value.file == path + ".db" and info.value.row == 7
    assert info.value.plain == (f"Verification failed: the .db keeps 7 for index field 'label', but the row's raw "
                                f"record (page {page}) holds 6.")


def test_swapped_raw_pages_are_seen(path):
    _swap_pages(path, 6, 7)
    assert [r[0] for r in _read(path)][:3] == [30, 31, 32]      # silently wrong rows without verification
    with pytest.raises(MindRecordFormatError) as info:
        verify(path)
    assert info.value.file == path + ".db" and info.value.row == 0
    assert info.value.plain == ("Verification failed: the .db keeps 0 for index field 'label', but the row's raw "
                                "record (page 6) holds 30.")


def test_swapped_blob_pages_cannot_be_seen(path):
    # the documented limit: blob pages carry no row ids and the format no hash
    _swap_pages(path, 0, 1)
    assert [r.rows for r in verify(path)] == [N]
    assert [r[2][0] for r in _read(path, verify=True)][:2] == [10, 11]


def test_changed_db_value_is_seen(path):
    con = sqlite3.connect(path + ".db")
    con.execute("UPDATE INDEXES SET s_0 = 'x' WHERE ROW_ID = 12")
    con.commit()
    con.close()
    assert _read(path) == _want()            # reading never uses the .db's values
    with pytest.raises(MindRecordFormatError) as info:
        MindPage(path, verify=True)
    assert info.value.file == path + ".db" and info.value.row == 12
    assert info.value.plain.startswith("Verification failed: the .db keeps 'x' for index field 's', but the row's raw "
                                       "record (page 6) holds '0012")


def test_undecodable_raw_record_names_file_page_and_row(path):
    # row 3's label fixint becomes 0xc1, a byte MessagePack never uses
    at, page = _raw_offset(path, 3)
    with open(path, "r+b") as f:
        f.seek(at + 15)
        f.write(b"\xc1")
    with pytest.raises(MindRecordFormatError) as info:
        verify(path)
    assert info.value.file == path and info.value.row == 3
    assert info.value.plain.startswith("Invalid file, the raw record is not valid MessagePack") and \
        info.value.plain.endswith(f"(page {page}).")


def test_damaged_sqlite_index_is_reported(path):
    # change a key inside SQLite's own index (table intact): only SQLite's integrity check sees it
    db = path + ".db"
    con = sqlite3.connect(db)
    (root,) = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_INDEXES_1'").fetchone()
    con.close()
    data = bytearray(open(db, "rb").read())
    entry = bytes([5, 1, 8, 8, 1, 7, 8])     # the index record of ROW_ID 7 (table rowid 8)
    at = data.index(entry, (root - 1) * 4096, root * 4096)
    data[at + 5] = 9                         # ROW_ID 7 -> 9 in the index only
    open(db, "wb").write(bytes(data))
    assert _read(path) == _want()            # the reader never walks that index
    with pytest.raises(MindRecordFormatError) as info:
        verify(path)
    assert info.value.file == db
    assert info.value.plain.startswith("Verification failed: SQLite's integrity check of the .db reports: ")


def test_verify_on_open_setting(path):
    assert get_verify_on_open() is False
    _swap_pages(path, 6, 7)
    dataset = ds.MindDataset(path, shuffle=False)          # made before the setting: not verified
    set_verify_on_open(True)
    try:
        assert get_verify_on_open() is True
        with pytest.raises(MindRecordFormatError, match=r"Verification failed: the .db keeps 0 for index field"):
            next(ds.MindDataset(path, shuffle=False).create_tuple_iterator(output_numpy=True))
        with pytest.raises(MindRecordFormatError, match="Verification failed"):
            FileReader(path)
        assert _read(path, verify=False)[0][0] == 30          # an explicit verify=False wins
    finally:
        set_verify_on_open(False)
    assert int(next(dataset.create_tuple_iterator(output_numpy=True))[1]) == 30   # columns: data, label, s
    assert [int(r[1]) for r in ds.MindDataset(path, shuffle=False, verify=False).create_tuple_iterator(
        output_numpy=True)][:1] == [30]


def test_minddataset_verify_argument(path):
    rows = [(int(r[1]), bytes(r[0].tobytes())) for r in ds.MindDataset(path, columns_list=["data", "label"],
                                                                        shuffle=False, verify=True)
            .create_tuple_iterator(output_numpy=True)]
    assert rows == [(i, bytes([i]) * 3000) for i in range(N)]
    _swap_pages(path, 6, 7)
    with pytest.raises(MindRecordFormatError, match="Verification failed"):
        list(ds.MindDataset(path, shuffle=False, verify=True).create_tuple_iterator(output_numpy=True))


def test_parameters_are_checked(path):
    with pytest.raises(TypeError, match=r"set_verify_on_open: 'verify' must be a bool \(True or False\), got str."):
        set_verify_on_open("yes")
    with pytest.raises(TypeError, match=r"'verify' must be True, False or None .*got 1."):
        FileReader(path, verify=1)
    with pytest.raises(TypeError, match=r"'verify' must be True, False or None"):
        ds.MindDataset(path, verify="no")
    with pytest.raises(TypeError, match=r"verify: 'all_shards' must be a bool, got int."):
        verify(path, all_shards=1)
    with pytest.raises(ValueError, match="File path is not allowed None or empty!"):
        verify("")


def _cli(*args):
    code = "import sys; from headrace.cli import main; sys.exit(main())"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, env=env)


def test_cli_verify(path, tmp_path):
    ok = _cli("mindrecord", "verify", path)
    h = read_header_path(path)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout == f"{path}: OK ({N} rows, 8 pages, {sum(p.size for p in h.pages)} bytes checked)\n"
    (tmp_path / "other").mkdir()
    other = str(tmp_path / "other" / "s.mr")    # a copy keeps its name: the header and the .db name it
    shutil.copy(path, other)
    shutil.copy(path + ".db", other + ".db")
    with open(other, "r+b") as f:
        f.seek(_raw_offset(other, 7)[0] + 15)
        f.write(bytes([6]))
    bad = _cli("mindrecord", "verify", other, path)
    assert bad.returncode == 1
    assert bad.stdout == ok.stdout             # the good file is still verified after the bad one
    assert bad.stderr == (f"headrace mindrecord verify: {other}: Verification failed: the .db keeps 7 for index "
                          f"field 'label', but the row's raw record (page 6) holds 6. (file: {other}.db, row: 7)\n")


def test_raw_record_with_a_non_text_key():
    # a damaged key byte can turn a key into a number: reported, not a TypeError from sorting mixed keys
    from headrace.mindrecord._format.schema import schema_from_header
    from headrace.mindrecord._format.verify import _check_raw
    schema = schema_from_header([{"blob_fields": [], "desc": "", "schema": {"label": {"type": "int32"},
                                                                            "s": {"type": "string"}}}], "f.mr")
    with pytest.raises(MindRecordFormatError) as info:
        _check_raw({37: 1, "s": "x"}, b"", ["label", "s"], schema, "f.mr", 4, 9)
    assert info.value.file == "f.mr" and info.value.row == 9
    assert info.value.plain == ("Verification failed: the raw record holds ['37', \"'s'\"], not the schema's scalar "
                                "fields ['label', 's'] (page 4).")
