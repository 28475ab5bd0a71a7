"""Fuzzing of damaged MindRecord files (issue 12 items 14, 15), run by test_fuzz_integrity.py in a
child process whose address space is capped and whose run time is bounded.

A small dataset is written once; each example damages a copy (bit flips anywhere, size fields
overwritten with absurd or off-by-one values, header numbers rewritten, truncation; or byte changes
in the ``.db``), then reads every row. The reader must raise a MindRecord error naming the file, or
return rows that differ from the originals only where the format cannot tell (with verification on:
inside the payload of a blob field of a row whose blob payload was changed); never another
exception, an absurd allocation or a hang. With verification on, MindPage over a damaged ``.db``
gives the pristine categories or an error.

Run: ``python -m tests.mindrecord.fuzz_integrity WORKDIR EXAMPLES``.
"""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import struct
import sys
import tempfile

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from headrace.mindrecord import FileReader, FileWriter, MindPage
from headrace.mindrecord._format.errors import MindRecordFormatError, MindRecordRuntimeError
from headrace.mindrecord._format.header import read_header_path

SCHEMA = {"label": {"type": "int32"}, "name": {"type": "string"}, "data": {"type": "bytes"},
          "vec": {"type": "int64", "shape": [-1]}, "mat": {"type": "float32", "shape": [2, -1]}}
BLOB_FIELDS = ["data", "mat", "vec"]           # sorted: their order inside a blob record
RAW_FIELDS = ["label", "name"]
N = 50
SIZES = (0, 1, 7, 8, 9, 255, 1 << 31, 1 << 40, (1 << 63) - 1, (1 << 64) - 1)
PRISTINE_INFO = None          # MindPage's category info of the pristine file, grouped by "name"


def rows():
    return [{"label": i * 7 - 20, "name": f"row{i}" * (i % 4), "data": bytes([i]) * ((i * 37) % 1500),
             "vec": (np.arange(i % 6, dtype=np.int64) - 3) * (1 << (i % 40)), "mat": np.full((2, i % 3), i, np.float32)}
            for i in range(N)]


def write(path, schema=SCHEMA, make_rows=rows):
    """The pristine dataset: ``make_rows()`` in one file of 32 KiB pages and a 16 KiB header."""
    w = FileWriter(path)
    w.add_schema(schema, "fuzz")
    w.set_page_size(1 << 15)
    w.set_header_size(1 << 14)
    w.write_raw_data(make_rows())
    w.commit()


class Layout:
    """Where each byte of the pristine data file belongs: size fields, header text, per-row payloads."""

    def __init__(self, path, blob_fields=BLOB_FIELDS):
        data = open(path, "rb").read()
        self.size = len(data)
        (n,) = struct.unpack("<Q", data[:8])
        self.header = (8, 8 + n)
        self.sizes = [(0, "<")]                 # (offset, byte order) of every 8-byte size field
        self.raw = {}                           # row -> (start, end) of its raw payload
        self.blob = {}                          # row -> list of (start, end) of its blob fields' payloads
        con = sqlite3.connect(path + ".db")
        locs = con.execute("SELECT ROW_ID, PAGE_ID_RAW, PAGE_OFFSET_RAW, PAGE_OFFSET_RAW_END, PAGE_ID_BLOB, "
                           "PAGE_OFFSET_BLOB, PAGE_OFFSET_BLOB_END FROM INDEXES").fetchall()
        con.close()
        h = read_header_path(path)
        for row, rp, rs, re_, bp, bs, be in locs:
            a = h.header_size + rp * h.page_size + rs
            self.sizes.append((a, "<"))
            self.raw[row] = (a + 8, h.header_size + rp * h.page_size + re_)
            b = h.header_size + bp * h.page_size + bs
            self.sizes.append((b, "<"))
            end = h.header_size + bp * h.page_size + be
            pos, parts = b + 8, []
            if len(blob_fields) == 1:       # one blob field: its bytes without an inner length
                parts.append((pos, end))
                pos = end
            for _ in blob_fields if len(blob_fields) > 1 else ():
                (m,) = struct.unpack(">Q", data[pos:pos + 8])
                self.sizes.append((pos, ">"))
                parts.append((pos + 8, pos + 8 + m))
                pos += 8 + m
            assert pos == end
            self.blob[row] = parts

    def blob_row(self, offset):
        """The row whose blob field payload holds ``offset``, or None."""
        for row, parts in self.blob.items():
            if any(a <= offset < b for a, b in parts):
                return row
        return None


def _flip(path, offset, bit):
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        if b:
            f.seek(offset)
            f.write(bytes([b[0] ^ (1 << bit)]))


def _put(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def _header_number(path, pick, value):
    """Sets one number of the header JSON (a size, a row id or an offset) to ``value``."""
    with open(path, "r+b") as f:
        try:
            (n,) = struct.unpack("<Q", f.read(8))
            obj = json.loads(f.read(min(n, 1 << 14)))
            assert isinstance(obj, dict) and isinstance(obj.get("page"), list)
        except (struct.error, ValueError, AssertionError):
            return      # an earlier mutation already broke the header
        slots = [(obj, "header_size"), (obj, "page_size")]
        try:
            for p in obj["page"]:
                slots += [(p, "page_size"), (p, "start_row_id"), (p, "end_row_id"), (p, "page_id")]
                slots += [(g, "offset") for g in p["row_group_ids"]] + [(g, "id") for g in p["row_group_ids"]]
            d, key = slots[pick % len(slots)]
            d[key] = value if value >= 0 else d[key] + value + 2    # -1: one more than before, -3: one less
        except (KeyError, TypeError):
            return      # an earlier mutation already changed the header's shape
        text = json.dumps(obj, separators=(",", ":")).encode()
        if len(text) > (1 << 14) - 8:
            return
        f.seek(0)
        f.write(struct.pack("<Q", len(text)) + text)
        f.write(b"\0" * max(0, n - len(text)))


MUTATION = st.one_of(
    st.tuples(st.just("flip_header"), st.integers(0, 1 << 20), st.integers(0, 7)),
    st.tuples(st.just("flip_raw"), st.integers(0, N - 1), st.integers(0, 1 << 20), st.integers(0, 7)),
    st.tuples(st.just("flip_blob"), st.integers(0, N - 1), st.integers(0, 1 << 20), st.integers(0, 7)),
    st.tuples(st.just("flip_any"), st.integers(0, 1 << 30), st.integers(0, 7)),
    st.tuples(st.just("size"), st.integers(0, 1 << 20), st.sampled_from(SIZES + (-1, -3))),
    st.tuples(st.just("header_number"), st.integers(0, 1 << 20), st.sampled_from(SIZES + (-1, -3))),
    st.tuples(st.just("truncate"), st.integers(0, 1 << 30)),
)


def mutate(path, layout, mutation):
    """Applies one mutation; returns the row whose blob payload it may have changed (or None) and
    whether it changed a payload byte at all (raw, blob or header text)."""
    kind = mutation[0]
    if kind == "flip_header":
        a, b = layout.header
        at = a + mutation[1] % (b - a)
        _flip(path, at, mutation[2])
        return None, True
    if kind == "flip_raw":
        a, b = layout.raw[mutation[1]]
        _flip(path, a + mutation[2] % max(1, b - a), mutation[3])
        return None, True
    if kind == "flip_blob":
        parts = [p for p in layout.blob[mutation[1]] if p[1] > p[0]]
        if not parts:
            return None, False
        total = sum(b - a for a, b in parts)
        k = mutation[2] % total
        for a, b in parts:
            if k < b - a:
                _flip(path, a + k, mutation[3])
                break
            k -= b - a
        return mutation[1], True
    if kind == "flip_any":
        at = mutation[1] % layout.size
        _flip(path, at, mutation[2])
        a, b = layout.header
        raw = any(x <= at < y for x, y in layout.raw.values())
        return layout.blob_row(at), raw or a <= at < b or layout.blob_row(at) is not None
    if kind == "size":
        at, order = layout.sizes[mutation[1] % len(layout.sizes)]
        value = mutation[2]
        if value < 0:
            with open(path, "rb") as f:
                f.seek(at)
                (old,) = struct.unpack(order + "Q", f.read(8).ljust(8, b"\0"))   # (the file may be truncated)
            value = (old + value + 2) % (1 << 64)             # -1: one more than before, -3: one less
        _put(path, at, struct.pack(order + "Q", value))
        return None, False
    if kind == "header_number":
        _header_number(path, mutation[1], mutation[2])
        return None, False
    os.truncate(path, mutation[1] % layout.size)
    return None, False


def read_all(path, verify):
    reader = FileReader(path, verify=verify)
    try:
        return list(reader.get_next())
    finally:
        reader.close()


def _named(exc, path):
    """The error names the damaged file, its .db or (a damaged shard list) a shard next to it."""
    if isinstance(exc, MindRecordFormatError) and exc.file:
        return exc.file in (path, path + ".db") or os.path.dirname(exc.file) == os.path.dirname(path)
    return path in str(exc)


def _same(got, want, fields):
    for f in fields:
        a, b = got[f], want[f]
        if isinstance(b, np.ndarray):
            if not (isinstance(a, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)):
                return False
        elif type(a) is not type(b) or a != b:
            return False
    return True


def _damaged_copy(pristine, work, mutations, blob_fields=BLOB_FIELDS):
    """A copy of the pristine dataset in ``work`` with ``mutations`` applied: (its path, the rows
    whose blob record a mutation changed, whether one changed a payload byte)."""
    path = os.path.join(work, "f.mr")
    shutil.copy(pristine, path)
    shutil.copy(pristine + ".db", path + ".db")
    layout = Layout(pristine, blob_fields)
    blob_rows, payload = set(), False
    for m in mutations:
        row, touched = mutate(path, layout, m)
        payload |= touched
        if row is not None:
            blob_rows.add(row)
    return path, blob_rows, payload


def _read_or_refused(read, path, mutations):
    """``read()``, or None when it raised an error naming the damaged file (checked)."""
    try:
        return read()
    except MindRecordRuntimeError as exc:
        assert _named(exc, path), (mutations, str(exc))
    except RuntimeError as exc:   # MindSpore's own texts for files too small to hold a header
        assert "Invalid file, the size of mindrecord file" in str(exc), (mutations, str(exc))
    return None


def check_data_file(pristine, work, mutations, verify):
    path, blob_rows, payload = _damaged_copy(pristine, work, mutations)
    got = _read_or_refused(lambda: read_all(path, verify), path, mutations)
    if got is None:
        return
    want = rows()
    assert len(got) == N, mutations
    for i, (g, w) in enumerate(zip(got, want)):
        assert sorted(g) == sorted(w), (mutations, i, sorted(g))
        if verify:
            # raw fields are all index fields: a changed one is caught; blob payloads carry no redundancy
            assert _same(g, w, RAW_FIELDS), (mutations, i, g)
            if i not in blob_rows:
                assert _same(g, w, BLOB_FIELDS), (mutations, i, g)
        elif not payload:
            assert _same(g, w, RAW_FIELDS + BLOB_FIELDS), (mutations, i, g)


FAST_SCHEMA = {"label": {"type": "int64"}, "data": {"type": "bytes"}}


def fast_rows():
    return [{"label": (i - 25) << (i % 60), "data": bytes([i]) * ((i * 53) % 2000 + 1)} for i in range(N)]


def write_fast(path):
    """A dataset in the layout MindDataset's fast row path takes (one int scalar, one bytes field)."""
    write(path, FAST_SCHEMA, fast_rows)


def check_fast_path(pristine, work, mutations, verify):
    """As check_data_file, reading through MindDataset's source (its fast row path) instead."""
    from headrace.dataset._sources.mindrecord import MindRecordSource   # noqa: PLC0415
    path, blob_rows, payload = _damaged_copy(pristine, work, mutations, ["data"])

    def read():
        src = MindRecordSource(path, verify=verify)
        try:
            return [src.read(i) for i in range(len(src))]
        finally:
            src.close()
    got = _read_or_refused(read, path, mutations)
    if got is None:
        return
    want = fast_rows()
    assert len(got) == N, mutations
    for i, ((data, label), w) in enumerate(zip(got, want)):
        same_label = label.dtype == np.int64 and label.shape == () and int(label) == w["label"]
        same_data = data.dtype.kind == "S" and data.shape == (1,) and data.tobytes() == w["data"]
        if verify:
            assert same_label, (mutations, i, label)
            assert same_data or i in blob_rows, (mutations, i)
        elif not payload:
            assert same_label and same_data, (mutations, i)


def check_db(pristine, work, changes, verify):
    path = os.path.join(work, "f.mr")
    shutil.copy(pristine, path)
    shutil.copy(pristine + ".db", path + ".db")
    size = os.path.getsize(path + ".db")
    for at, data in changes:
        at %= size
        _put(path + ".db", at, data[:size - at])
    try:
        got = read_all(path, verify)
    except MindRecordRuntimeError as exc:
        assert _named(exc, path), (changes, str(exc))
        return
    want = rows()
    assert len(got) == N
    for g, w in zip(got, want):      # the reader takes no value from the .db: locations are checked
        assert _same(g, w, RAW_FIELDS + BLOB_FIELDS), changes
    if verify:
        # MindPage groups rows by the .db's values: once verified, they are the records' values
        try:
            page = MindPage(path, verify=True)
            page.category_field = "name"
            info = page.read_category_info()
            first = page.read_at_page_by_name("row1", 0, 100)
        except MindRecordRuntimeError as exc:
            assert _named(exc, path), (changes, str(exc))
            return
        assert info == PRISTINE_INFO, changes
        assert [r["label"] for r in first] == [r["label"] for r in want if r["name"] == "row1"], changes


def main(workdir, examples):
    global PRISTINE_INFO
    pristine = os.path.join(workdir, "pristine", "f.mr")
    os.makedirs(os.path.dirname(pristine))
    write(pristine)
    page = MindPage(pristine)
    page.category_field = "name"
    PRISTINE_INFO = page.read_category_info()
    assert [r["label"] for r in read_all(pristine, True)] == [r["label"] for r in rows()]
    common = dict(deadline=None, database=None, derandomize=False, suppress_health_check=list(HealthCheck))

    @settings(max_examples=examples, **common)
    @given(st.lists(MUTATION, min_size=1, max_size=3), st.booleans())
    def data_file(mutations, verify):
        with tempfile.TemporaryDirectory(dir=workdir) as work:
            check_data_file(pristine, work, mutations, verify)

    @settings(max_examples=max(1, examples // 2), **common)
    @given(st.lists(st.tuples(st.integers(0, 1 << 24), st.binary(min_size=1, max_size=8)), min_size=1, max_size=4),
           st.booleans())
    def db_file(changes, verify):
        with tempfile.TemporaryDirectory(dir=workdir) as work:
            check_db(pristine, work, changes, verify)

    fast = os.path.join(workdir, "pristine", "fast.mr")
    write_fast(fast)

    @settings(max_examples=max(1, examples // 2), **common)
    @given(st.lists(MUTATION, min_size=1, max_size=3), st.booleans())
    def fast_path(mutations, verify):
        with tempfile.TemporaryDirectory(dir=workdir) as work:
            check_fast_path(fast, work, mutations, verify)

    data_file()
    db_file()
    fast_path()
    print("fuzz ok")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
