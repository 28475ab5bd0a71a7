"""Damaged input: a clear MindRecordFormatError naming file and row; never a crash, hang or wrong bytes."""
import os
import sqlite3
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from headrace.mindrecord import FileReader
from headrace.mindrecord._format.errors import MindRecordFormatError
from headrace.mindrecord._format.header import BLOB, RAW, read_header_path
from headrace.mindrecord._format.index import scan_shard

from .conftest import copy_dataset, damageable, make_rows

ROWS = make_rows(12)
pristine, copy = damageable(ROWS)


def _read_all(path):
    return list(FileReader(path).get_next())


def _patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def test_truncated_file_names_file_and_row(copy):
    h = read_header_path(copy)
    blob = h.pages[0]
    os.truncate(copy, h.header_size + blob.size // 2)
    with pytest.raises(MindRecordFormatError) as info:
        _read_all(copy)
    # the header's pages are checked against the file size on open: the first one cut short is named
    assert info.value.file == copy and info.value.row is None
    assert info.value.plain == (f"Invalid file, page 0 ({blob.size} bytes at offset {h.header_size}) runs past the end "
                                f"of the file of {h.header_size + blob.size // 2} bytes; the file is truncated or its "
                                f"header is damaged.")
    os.truncate(copy, 5)
    with pytest.raises(RuntimeError, match="Invalid file, the size of mindrecord file: 5 is smaller than the lower limit: 8"):
        _read_all(copy)


def test_not_a_mindrecord_file(copy):
    open(copy, "wb").write(os.urandom(4096))
    with pytest.raises(MindRecordFormatError, match="header length .* is above|header length .* does not fit in the file of 4096 bytes|not valid JSON"):
        _read_all(copy)
    open(copy, "wb").write(struct.pack("<Q", 10) + b"[1,2,3,45]")
    with pytest.raises(MindRecordFormatError, match="the header is not a JSON object"):
        _read_all(copy)


def test_damaged_header_json(copy):
    _patch(copy, 8, b"[")
    with pytest.raises(MindRecordFormatError, match=r"the header is not valid JSON .*\(file: .*c.mr\)"):
        _read_all(copy)


def test_index_past_the_end_of_a_page(copy):
    con = sqlite3.connect(copy + ".db")
    con.execute("UPDATE INDEXES SET PAGE_OFFSET_BLOB_END = 999999 WHERE ROW_ID = 4")
    con.commit()
    con.close()
    with pytest.raises(MindRecordFormatError, match=r"the blob record of row 4 \(page 0, bytes \d+..999999\) lies "
                                                    r"outside a blob page"):
        _read_all(copy)


def test_index_with_missing_rows(copy):
    con = sqlite3.connect(copy + ".db")
    con.execute("DELETE FROM INDEXES WHERE ROW_ID = 7")
    con.commit()
    con.close()
    with pytest.raises(MindRecordFormatError, match="INDEXES has 11 rows with ROW_IDs that are not 0..11"):
        _read_all(copy)


def test_bad_messagepack_names_the_row(copy):
    h = read_header_path(copy)
    raw = next(p for p in h.pages if p.page_type == "RAW_DATA")
    con = sqlite3.connect(copy + ".db")
    start, = con.execute("SELECT PAGE_OFFSET_RAW FROM INDEXES WHERE ROW_ID = 3").fetchone()
    _patch(copy, h.header_size + raw.page_id * h.page_size + start + 8, b"\xc1")   # never-used msgpack byte
    with pytest.raises(MindRecordFormatError, match=r"the raw record is not valid MessagePack .*\(file: .*, row: 3\)"):
        _read_all(copy)


def test_bad_length_prefix(copy):
    h = read_header_path(copy)
    _patch(copy, h.header_size, struct.pack("<Q", 7777))
    with pytest.raises(MindRecordFormatError, match=r"blob record's length prefix says 7777 bytes .*row: 0"):
        _read_all(copy)


def _regions(path):
    """(offset, length, is_payload) of the parts of a data file (header and record payloads are "payload":
    a change there can be a different but well-formed value, which no checksum-free format can notice)."""
    h = read_header_path(path)
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    regions = [(0, 8, False), (8, n, True)]
    for p in h.pages:
        start = h.header_size + p.page_id * h.page_size
        pos = 0
        while pos < p.size:
            (m,) = struct.unpack("<Q", data[start + pos:start + pos + 8])
            regions.append((start + pos, 8, False))
            regions.append((start + pos + 8, m, True))
            pos += 8 + m
    return regions


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_fuzz_mutated_files(pristine, tmp_path_factory, data):
    path = copy_dataset(pristine, tmp_path_factory.mktemp("fuzz"), "c.mr")
    regions = _regions(path)
    size = os.path.getsize(path)
    mutations = data.draw(st.lists(st.tuples(st.integers(0, len(regions) - 1), st.integers(0, 2**16),
                                             st.binary(min_size=1, max_size=4)), min_size=1, max_size=3))
    touched_payload = False
    for region, pos, patch in mutations:
        off, length, payload = regions[region]
        at = off + pos % max(length, 1)
        touched_payload |= payload
        _patch(path, at, patch[:max(1, min(len(patch), size - at))])
    if data.draw(st.booleans()):
        os.truncate(path, data.draw(st.integers(0, size)))
    try:
        rows = _read_all(path)
    except MindRecordFormatError as exc:
        assert exc.file and str(exc)
        return
    except RuntimeError as exc:        # MindSpore-style errors, e.g. a schema that no longer fits
        assert "[ERROR]" in str(exc) or str(exc).startswith("Invalid file, the size of mindrecord file")
        return
    assert len(rows) == len(ROWS)
    if not touched_payload:            # only lengths changed and nothing complained: values must be intact
        for got, want in zip(rows, ROWS):
            assert got["label"] == want["label"] and got["name"] == want["name"] and got["data"] == want["data"]
            assert np.array_equal(got["vec"], want["vec"]) and np.array_equal(got["mat"], want["mat"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_fuzz_mutated_index(pristine, tmp_path_factory, data):
    path = copy_dataset(pristine, tmp_path_factory.mktemp("fuzzdb"), "c.mr")
    size = os.path.getsize(path + ".db")
    for at, patch in data.draw(st.lists(st.tuples(st.integers(0, size - 1), st.binary(min_size=1, max_size=8)),
                                        min_size=1, max_size=4)):
        _patch(path + ".db", at, patch[:size - at])
    try:
        rows = _read_all(path)
    except MindRecordFormatError as exc:
        assert exc.file and str(exc)
        return
    assert len(rows) == len(ROWS)


@pytest.mark.parametrize("kind", ["raw", "blob"])
def test_scan_names_a_record_length_past_its_page(copy, kind):
    # A damaged length prefix of row 0's raw or blob record: the scan (reindex, verify) names the
    # record, the row and the page instead of reading past it.
    h = read_header_path(copy)
    page = next(p for p in h.pages if p.page_type == (RAW if kind == "raw" else BLOB))
    start = page.row_group_ids[0][1] if kind == "raw" else 0
    _patch(copy, h.header_size + page.page_id * h.page_size + start, struct.pack("<Q", 1 << 40))
    fd = os.open(copy, os.O_RDONLY)
    try:
        with pytest.raises(MindRecordFormatError) as info:
            scan_shard(fd, h, copy)
    finally:
        os.close(fd)
    assert info.value.file == copy and info.value.row == 0
    assert info.value.plain == (f"Invalid file, the {kind} record of row 0 ({1 << 40} bytes) runs past {kind} page "
                                f"{page.page_id}.")
