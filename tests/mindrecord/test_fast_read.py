"""MindDataset's fast row path (one data file, {int label, bytes data}): the same values and the
same errors as the general path, row by row, on good, unusual and damaged files."""
import os
import pickle
import shutil
import struct

import msgpack
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from headrace.dataset._sources.mindrecord import MindRecordSource
from headrace.mindrecord._format import fast_read as fast_read_mod
from headrace.mindrecord._format import reader as reader_mod
from headrace.mindrecord._format.errors import MindRecordFormatError
from headrace.mindrecord._format.header import read_header_path
from headrace.mindrecord._format.fast_read import fast_row_reader

from .conftest import write

SCHEMA32 = {"label": {"type": "int32"}, "data": {"type": "bytes"}}
SCHEMA64 = {"label": {"type": "int64"}, "data": {"type": "bytes"}}
# labels in every MessagePack integer width, both signs
LABELS = [0, 5, 127, 128, 255, 256, 65535, 65536, 2**31 - 1, -1, -32, -33, -128, -129, -32768, -32769,
          -2**31, 1000, 70000]
LABELS64 = LABELS + [2**31, 2**32, 2**63 - 1, -2**31 - 1, -2**63]


def _rows(labels):
    return [{"label": v, "data": bytes([(i * 7 + 1) % 256]) * (i * 37 % 300) + b"\x00" * (i % 3)}
            for i, v in enumerate(labels)]


def _outcome(fn, i):
    try:
        row = fn(i)
    except Exception as e:  # noqa: BLE001 - compared below
        return ("error", type(e), str(e), getattr(e, "file", None), getattr(e, "row", None))
    return ("row", tuple((a.dtype.str, a.shape, a.flags.writeable, a.tobytes()) for a in row))


def _counting(src):
    """A fast reader over ``src`` whose hand-offs to the general path are counted."""
    calls = []

    def general(i):
        calls.append(i)
        return src._read(i)
    return fast_row_reader(src._reader, src._decoder, general), calls


def _assert_same(path, columns=("data", "label"), rows=None):
    src = MindRecordSource(path, list(columns))
    n = len(src)
    idx = list(range(n)) if rows is None else rows
    for i in idx:            # caches the raw pages, so the fast path takes over where it can
        _outcome(src._read, i)
    for i in list(idx) + [-1, n, n + 5]:
        assert _outcome(src.read, i) == _outcome(src._read, i), i
    return src


@pytest.fixture(params=[(SCHEMA32, LABELS), (SCHEMA64, LABELS64)], ids=["int32", "int64"])
def good(request, tmp_path):
    schema, labels = request.param
    path = str(tmp_path / "w.mr")
    write(path, _rows(labels), schema=schema)
    return path, labels


@pytest.mark.parametrize("columns", [("data", "label"), ("label", "data"), ("label",), ("data",)])
def test_values_match_general_path_and_fast_path_is_taken(good, columns):
    path, labels = good
    src = _assert_same(path, columns)
    fast, calls = _counting(src)
    rows = [fast(i) for i in range(len(labels))]
    # the raw page is cached already; only the empty payloads go to the general path
    assert calls == [i for i in range(len(labels)) if len(_rows(labels)[i]["data"]) == 0]
    for i, row in enumerate(rows):
        got = dict(zip(columns, row))
        if "label" in got:
            assert got["label"].shape == () and got["label"].item() == labels[i]
            assert got["label"].dtype == np.dtype("<i4" if labels is LABELS else "<i8")
        if "data" in got:
            want = _rows(labels)[i]["data"]
            assert got["data"].shape == (1,) and got["data"].flags.writeable
            assert got["data"].tobytes() == (want or b"\x00")


def test_other_layouts_use_general_path(tmp_path):
    path = str(tmp_path / "o.mr")
    write(path, [{"label": 1, "x": 2.5, "data": b"ab"}], schema={"label": {"type": "int32"}, "x": {"type": "float32"},
                                                                 "data": {"type": "bytes"}})
    src = MindRecordSource(path, ["data", "label"])
    fast, calls = _counting(src)
    fast(0)
    fast(0)
    assert calls == [0, 0]
    path = str(tmp_path / "s.mr")
    write(path, _rows(LABELS[:6]), schema=SCHEMA32, shard_num=2)
    src = MindRecordSource(path + "0", ["data", "label"])
    fast, calls = _counting(src)
    for i in range(len(src)):
        assert _outcome(fast, i) == _outcome(src._read, i)
    assert len(calls) == len(src)


def test_pickle_and_close(good):
    path, labels = good
    src = MindRecordSource(path, ["data", "label"])
    before = [_outcome(src.read, i) for i in range(len(labels))]
    clone = pickle.loads(pickle.dumps(src))
    assert [_outcome(clone.read, i) for i in range(len(labels))] == before
    src.close()
    assert [_outcome(src.read, i) for i in range(len(labels))] == before


def _raw_record_spans(path):
    """(offset, length) in the file of every raw record, prefix included."""
    src = MindRecordSource(path, ["label"])
    src._reader.ensure_loaded()
    return [(int(r[0]), int(r[1])) for r in src._reader._locs], [(int(r[2]), int(r[3])) for r in src._reader._locs]


def _patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def test_other_integer_encodings_and_bad_raw_records(tmp_path):
    path = str(tmp_path / "e.mr")
    write(path, _rows([100000] * 8), schema=SCHEMA32)          # value: ce 00 01 86 a0 (5 bytes)
    raws, _ = _raw_record_spans(path)
    key = b"\x81\xa5label"
    same_length = [
        b"\xca" + struct.pack(">f", 100000.0),                   # float32, integral: decoded as int
        b"\xca" + struct.pack(">f", 0.5),                         # float32, not integral: error
        b"\xd2" + struct.pack(">i", -7),                          # int32 form
        b"\xa4" + b"1234",                                        # a string value (parsed as int)
        b"\xa4" + b"12x4",                                        # a string that is no int
        b"\xc1" + b"0000",                                        # never-used byte: bad MessagePack
    ]
    for k, value in enumerate(same_length):
        off, n = raws[k]
        _patch(path, off + 8, key + value)
    off, n = raws[6]
    _patch(path, off + 8, b"\x81\xa5lbael" + b"\xce\x00\x01\x86\xa0")   # another key
    off, n = raws[7]
    _patch(path, off, struct.pack("<Q", n - 9))                     # bad length prefix
    _assert_same(path)
    outs = [_outcome(MindRecordSource(path, ["label"]).read, i) for i in range(8)]
    assert outs[0][0] == "row" and outs[2][0] == "row" and outs[3][0] == "row"
    for k in (1, 4, 5, 6, 7):
        assert outs[k][0] == "error" and outs[k][1] is MindRecordFormatError and outs[k][4] == k, outs[k]


def test_int32_value_out_of_range(tmp_path):
    path = str(tmp_path / "r.mr")
    write(path, _rows([100000] * 2), schema=SCHEMA32)
    raws, _ = _raw_record_spans(path)
    off, n = raws[1]
    _patch(path, off + 8 + 7, b"\xce" + struct.pack(">I", 2**31))
    src = _assert_same(path)
    with pytest.raises(MindRecordFormatError, match="out of range of int32"):
        src.read(1)


def test_bad_blob_prefix_and_truncation(tmp_path):
    path = str(tmp_path / "b.mr")
    write(path, _rows(LABELS), schema=SCHEMA32)
    _, blobs = _raw_record_spans(path)
    off, n = blobs[3]
    _patch(path, off, struct.pack("<Q", n))
    _assert_same(path)
    with pytest.raises(MindRecordFormatError, match="blob record's length prefix") as info:
        MindRecordSource(path, ["data", "label"]).read(3)
    assert info.value.row == 3
    # truncate inside the last blob record (the raw page, read first, must stay whole: it is cached)
    src = MindRecordSource(path, ["data", "label"])
    for i in range(len(src)):
        _outcome(src._read, i)
    h = read_header_path(path)
    off, n = blobs[-2]
    os.truncate(path, off + n // 2)
    for i in range(len(src)):
        assert _outcome(src.read, i) == _outcome(src._read, i)
    with pytest.raises(MindRecordFormatError, match="truncated"):
        src.read(len(src) - 2)
    assert h.num_rows == len(src)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    d = tmp_path_factory.mktemp("fastpristine")
    write(d / "f.mr", _rows(LABELS), schema=SCHEMA32, page_size=1 << 15, header_size=1 << 14)
    return d


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzzed_files_same_outcome(pristine, tmp_path_factory, data):
    d = tmp_path_factory.mktemp("fz")
    path = str(d / "f.mr")
    shutil.copy(pristine / "f.mr", path)
    shutil.copy(pristine / "f.mr.db", path + ".db")
    raws, blobs = _raw_record_spans(path)
    spans = raws + [(o, 8) for o, _ in blobs]      # raw records whole, blob length prefixes
    for _ in range(data.draw(st.integers(1, 4))):
        off, n = data.draw(st.sampled_from(spans))
        at = off + data.draw(st.integers(0, n - 1))
        _patch(path, at, bytes([data.draw(st.integers(0, 255))]))
    _assert_same(path, data.draw(st.sampled_from([("data", "label"), ("label",)])))


def test_msgpack_agrees_on_accepted_encodings():
    # every encoding the fast path decodes itself, checked against msgpack
    key = b"\x81\xa5label"
    for v in LABELS64:
        enc = msgpack.packb(v)
        assert msgpack.unpackb(key + enc) == {"label": v}
        for width, signed, tag in ((1, False, 0xCC), (2, False, 0xCD), (4, False, 0xCE), (8, False, 0xCF),
                                   (1, True, 0xD0), (2, True, 0xD1), (4, True, 0xD2), (8, True, 0xD3)):
            assert fast_read_mod._INT_WIDTHS[tag] == (width, signed)


def test_row_table_cache_follows_the_db_bytes(tmp_path):
    import sqlite3
    path = str(tmp_path / "t.mr")
    write(path, _rows(LABELS), schema=SCHEMA32)
    first = MindRecordSource(path, ["data", "label"])
    want = [_outcome(first.read, i) for i in range(len(first))]
    again = MindRecordSource(path, ["data", "label"])            # a hit: same rows
    assert [_outcome(again.read, i) for i in range(len(again))] == want
    assert reader_mod._TABLE_CACHE[os.path.abspath(path)][2] is not None
    con = sqlite3.connect(path + ".db")                           # another file's name: must raise again
    con.execute("UPDATE SHARD_NAME SET NAME = 'other.mr'")
    con.commit()
    con.close()
    with pytest.raises(MindRecordFormatError, match=r"can not match \[other.mr\]"):
        len(MindRecordSource(path, ["data", "label"]))
    con = sqlite3.connect(path + ".db")
    con.execute("UPDATE SHARD_NAME SET NAME = 't.mr'")
    con.execute("UPDATE INDEXES SET PAGE_OFFSET_BLOB = PAGE_OFFSET_BLOB + 1 WHERE ROW_ID = 2")
    con.commit()
    con.close()
    src = MindRecordSource(path, ["data", "label"])
    assert _outcome(src.read, 2)[0] == "error"
    shutil.copy(path + ".db", path + ".db.bak")
    write(path, _rows(LABELS[::-1]), schema=SCHEMA32, overwrite=True)   # rewritten: new rows
    src = MindRecordSource(path, ["label"])
    assert [int(src.read(i)[0]) for i in range(len(src))] == LABELS[::-1]


def _minstd_shuffle_reference(n, seed):
    """libstdc++'s std::shuffle over minstd_rand0, one draw at a time (the two-positions branch)."""
    from headrace._util import mtshuffle
    from headrace._util.mtshuffle import MinStd0
    gen = MinStd0(seed)
    j = [0] * n
    i = 1
    if n % 2 == 0:
        j[1] = gen.uniform(1)
        i = 2
    while i < n:
        b1 = i + 2
        x = gen.uniform((i + 1) * b1 - 1)
        j[i], j[i + 1] = x // b1, x % b1
        i += 2
    return mtshuffle._apply_swaps(np.array(j, dtype=np.int64))


@pytest.mark.parametrize("n", [2, 3, 4, 5, 16, 17, 1000, 1001, 20000, 30001, 46339, 46340])
def test_vectorised_minstd_shuffle_matches_draw_by_draw(n):
    # near 46340 most draws are rejected at least once, so the chunked re-draw is exercised
    from headrace._util.mtshuffle import minstd_shuffle
    for seed in (0, 1, 2, 9, 2**31 - 1, 123456789):
        assert np.array_equal(minstd_shuffle(n, seed), _minstd_shuffle_reference(n, seed)), (n, seed)
