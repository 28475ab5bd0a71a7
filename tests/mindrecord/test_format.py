"""Header bytes, page layout and the .db index of files headrace writes."""
import json
import os
import sqlite3
import struct

import numpy as np
import pytest

from headrace.mindrecord import FileWriter
from headrace.mindrecord._format.errors import MindRecordFormatError
from headrace.mindrecord._format.header import parse_header_json, read_header_path

from .conftest import write


def _header_json(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    return data[8:8 + n].decode(), data


def test_tiny_file_literal_header_and_pages(tmp_path):
    path = tmp_path / "t.mr"
    w = FileWriter(str(path))
    w.add_schema({"a": {"type": "int32"}, "b": {"type": "bytes"}}, "d")
    w.set_header_size(1 << 14)
    w.set_page_size(1 << 15)
    w.write_raw_data([{"a": 1, "b": b"xy"}, {"a": -2, "b": b""}])
    w.commit()
    text, data = _header_json(path)
    assert text == (
        '{"header_size":16384,"index_fields":[{"index_field":"a","schema_id":0}],"page":['
        '{"end_row_id":2,"page_id":0,"page_size":18,"page_type":"BLOB_DATA","page_type_id":0,'
        '"row_group_ids":[{"id":0,"offset":0}],"shard_id":0,"start_row_id":0},'
        '{"end_row_id":0,"page_id":1,"page_size":24,"page_type":"RAW_DATA","page_type_id":0,'
        '"row_group_ids":[{"id":0,"offset":0}],"shard_id":0,"start_row_id":0}],"page_size":32768,'
        '"compression_size":0,"schema":[{"blob_fields":["b"],"desc":"d","schema":{"a":{"type":"int32"},'
        '"b":{"type":"bytes"}}}],"shard_addresses":["t.mr"],"shard_id":0,"statistics":null,"version":"3.0"}')
    blob_page = data[16384:16384 + 18]
    assert blob_page == struct.pack("<Q", 2) + b"xy" + struct.pack("<Q", 0)
    raw_page = data[16384 + 32768:]
    assert raw_page == struct.pack("<Q", 4) + b"\x81\xa1a\x01" + struct.pack("<Q", 4) + b"\x81\xa1a\xfe"
    assert len(data) == 16384 + 32768 + 24
    con = sqlite3.connect(str(path) + ".db")
    assert con.execute("SELECT * FROM INDEXES ORDER BY ROW_ID").fetchall() == [
        (0, 1, 0, 12, 0, 0, 0, 10, 0, 1), (1, 1, 12, 24, 0, 0, 10, 18, 0, -2)]
    assert con.execute("SELECT NAME FROM SHARD_NAME").fetchall() == [("t.mr",)]
    assert con.execute("SELECT sql FROM sqlite_master WHERE name='INDEXES'").fetchone()[0] == (
        "CREATE TABLE INDEXES(  ROW_ID               INT  NOT NULL, PAGE_ID_RAW          INT  NOT NULL, "
        "PAGE_OFFSET_RAW      INT  NOT NULL, PAGE_OFFSET_RAW_END  INT  NOT NULL, ROW_GROUP_ID         INT  NOT NULL, "
        "PAGE_ID_BLOB         INT  NOT NULL, PAGE_OFFSET_BLOB     INT  NOT NULL, PAGE_OFFSET_BLOB_END INT  NOT NULL,"
        "INC_0 INT, a_0 INTEGER, PRIMARY KEY(ROW_ID,INC_0))")
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"


def test_empty_dataset_is_just_a_header(tmp_path):
    path = tmp_path / "e.mr"
    w = FileWriter(str(path))
    w.add_schema({"a": {"type": "int32"}})
    w.commit()
    text, data = _header_json(path)
    assert len(data) == 8 + len(text.encode())
    h = json.loads(text)
    assert h["page"] is None and h["index_fields"] == [{"index_field": "a", "schema_id": 0}]
    assert sqlite3.connect(str(path) + ".db").execute("SELECT COUNT(*) FROM INDEXES").fetchone() == (0,)


def test_auto_layout_is_small_for_small_data(tmp_path):
    path = tmp_path / "small.mr"
    write(path, [{"label": i, "name": "x", "data": b"\x00" * 100, "vec": np.arange(3), "mat": np.zeros((2, 1), np.float32)}
                 for i in range(50)])
    h = read_header_path(str(path))
    assert (h.header_size, h.page_size) == (16384, 32768)
    assert os.path.getsize(path) < 16384 + 32768 + 4096
    assert h.num_rows == 50


def test_no_blob_and_only_blob_schemas(tmp_path):
    write(tmp_path / "raw.mr", [{"a": 5}], schema={"a": {"type": "int64"}})
    _, data = _header_json(tmp_path / "raw.mr")
    h = read_header_path(str(tmp_path / "raw.mr"))
    blob = h.pages[0]
    start = h.header_size
    assert data[start:start + blob.size] == struct.pack("<Q", 4) + bytes(4)   # the 4-byte dummy blob
    write(tmp_path / "blob.mr", [{"b": b"q"}], schema={"b": {"type": "bytes"}})
    h = read_header_path(str(tmp_path / "blob.mr"))
    _, data = _header_json(tmp_path / "blob.mr")
    raw = h.pages[1]
    off = h.header_size + h.page_size
    assert data[off:off + raw.size] == struct.pack("<Q", 5) + bytes.fromhex("81a2696400")   # {"id": 0}
    assert h.index_fields == []
    assert json.loads(_header_json(tmp_path / "blob.mr")[0])["index_fields"] is None


def _valid_header():
    return {"header_size": 16384, "index_fields": None, "page": None, "page_size": 32768, "compression_size": 0,
            "schema": [{"blob_fields": [], "desc": "", "schema": {"a": {"type": "int32"}}}],
            "shard_addresses": ["x"], "shard_id": 0, "statistics": None, "version": "3.0"}


@pytest.mark.parametrize("change, message", [
    (lambda h: h.update(version="4.0"), 'the version of mindrecord files"4.0" is not supported'),
    (lambda h: h.pop("version"), "has no valid 'version'"),
    (lambda h: h.update(header_size="big"), "invalid 'header_size'"),
    (lambda h: h.update(page_size=0), "invalid 'page_size'"),
    (lambda h: h.update(schema=[]), "schema in the header is damaged"),
    (lambda h: h["schema"][0]["schema"].update(b={"type": "int9"}), "contain illegal attribute 'int9'"),
    (lambda h: h.update(index_fields=[{"index_field": "zz", "schema_id": 0}]), "index field 'zz'"),
    (lambda h: h.update(hndex_fields=h.pop("index_fields")), "the header has no 'index_fields'"),
    (lambda h: h.pop("page"), "the header has no 'page'"),
    (lambda h: h.update(page=[{"page_id": 1}]), "invalid 'page_type'"),
    (lambda h: h.update(shard_addresses=[]), "invalid 'shard_addresses'"),
    (lambda h: h.update(shard_addresses=["a/b"]), "invalid 'shard_addresses'"),
    (lambda h: h.update(shard_id=3), "shard_id 3 is not below the number of shards 1"),
])
def test_header_checks(change, message):
    h = _valid_header()
    parse_header_json(json.dumps(h).encode(), "f")  # the base is valid
    change(h)
    with pytest.raises(MindRecordFormatError, match=message):
        parse_header_json(json.dumps(h).encode(), "f")


def test_header_page_checks():
    h = _valid_header()
    page = {"end_row_id": 1, "page_id": 0, "page_size": 40000, "page_type": "BLOB_DATA", "page_type_id": 0,
            "row_group_ids": [{"id": 0, "offset": 0}], "shard_id": 0, "start_row_id": 0}
    h["page"] = [page]
    with pytest.raises(MindRecordFormatError, match="page 0 claims 40000 bytes, more than the page size 32768"):
        parse_header_json(json.dumps(h).encode(), "f")
    page.update(page_size=10, page_id=2)
    with pytest.raises(MindRecordFormatError, match="has page_id 2; page ids must be 0, 1, 2"):
        parse_header_json(json.dumps(h).encode(), "f")
    page.update(page_id=0, start_row_id=5)
    with pytest.raises(MindRecordFormatError, match="ends before it starts"):
        parse_header_json(json.dumps(h).encode(), "f")
    with pytest.raises(MindRecordFormatError, match="not valid JSON"):
        parse_header_json(b"{not json", "f")
    with pytest.raises(MindRecordFormatError, match="not a JSON object"):
        parse_header_json(b"[1]", "f")


def test_version_2_files_read_uncompressed(tmp_path):
    """A 2.0 file keeps integer arrays plain little-endian and has no compression_size."""
    from headrace.mindrecord import FileReader
    path = tmp_path / "v2.mr"
    write(path, [{"v": np.array([1, -2, 300], np.int32)}], schema={"v": {"type": "int32", "shape": [-1]}},
          header_size=1 << 14, page_size=1 << 15)
    text, data = _header_json(path)
    h = json.loads(text)
    h.pop("compression_size")
    h["version"] = "2.0"
    page = h["page"][0]
    plain = np.array([1, -2, 300], "<i4").tobytes()
    page["page_size"] = 8 + len(plain)
    new = json.dumps(h, separators=(",", ":")).encode()
    body = bytearray(data)
    body[:8 + len(new)] = struct.pack("<Q", len(new)) + new
    body[8 + len(new):8 + len(text.encode())] = bytes(len(text.encode()) - len(new))
    body[16384:16384 + 8 + len(plain)] = struct.pack("<Q", len(plain)) + plain
    open(path, "wb").write(body)
    con = sqlite3.connect(str(path) + ".db")
    con.execute("UPDATE INDEXES SET PAGE_OFFSET_BLOB_END = ?", (8 + len(plain),))
    con.commit()
    con.close()
    assert [r["v"].tolist() for r in FileReader(str(path)).get_next()] == [[1, -2, 300]]
    assert read_header_path(str(path)).compression_size is None
