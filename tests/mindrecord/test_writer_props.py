"""FileWriter property tests: any schema of field types x shapes, written and read back unchanged.

The MindSpore side of the same cases is tests/compat/test_writer_props_compat.py.
"""
from __future__ import annotations

import json
import os
import struct
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headrace.mindrecord import FileReader, FileWriter

from .mr_strategies import assert_rows_equal, cases, expected


def write_case(path, case, shard_num=1, fixed=False):
    w = FileWriter(path, shard_num)
    w.add_schema(case["schema"], "props")
    if fixed:
        w.set_page_size(1 << 15)
        w.set_header_size(1 << 14)
    for batch in case["batches"]:
        w.write_raw_data(batch)
    w.commit()


def read_all(path):
    r = FileReader(path)
    try:
        return list(r.get_next())
    finally:
        r.close()


def header_json(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), fixed=st.booleans(), shards=st.booleans())
def test_round_trip(case, fixed, shards):
    rows = [r for b in case["batches"] for r in b]
    want = [expected(case["schema"], r) for r in rows]
    with tempfile.TemporaryDirectory(prefix="hr-mrprops-") as d:
        path = os.path.join(d, "p.mindrecord")
        if shards:  # one batch: its rows go to the shards in contiguous runs, shard 0 first
            case = {"schema": case["schema"], "batches": [rows]}
        write_case(path, case, 2 if shards else 1, fixed)
        first = path + "0" if shards else path
        assert_rows_equal(read_all(first), want)
        assert header_json(first)["compression_size"] >= 0


@pytest.mark.parametrize("schema,row", [
    ({"a": {"type": "int32", "shape": [1]}}, {"a": np.array([7], np.int32)}),
    ({"a": {"type": "int32", "shape": [1]}, "b": {"type": "bytes"}}, {"a": np.array([-3], np.int32), "b": b"xy"}),
    ({"a": {"type": "int32", "shape": [1]}, "n": {"type": "int32"}}, {"a": np.array([1 << 30], np.int32), "n": 5}),
    ({"a": {"type": "int64", "shape": [-1]}}, {"a": np.zeros(0, np.int64)}),
])
def test_int_array_that_grows_when_compressed(tmp_path, schema, row):
    """Compressing a 1-element int32 array makes it longer (4 -> 6+ bytes): the header's
    compression_size was written negative and headrace refused its own file. MindSpore stores
    the total clamped at 0."""
    path = str(tmp_path / "grow.mindrecord")
    write_case(path, {"schema": schema, "batches": [[row] * 3]})
    assert header_json(path)["compression_size"] == 0
    assert_rows_equal(read_all(path), [expected(schema, row)] * 3)


def test_compression_size_is_the_signed_total_clamped_at_zero(tmp_path):
    """Savings and losses add up over batches before clamping (MindSpore 2.10: 7 - 10 + 7 = 4)."""
    schema = {"a": {"type": "int32", "shape": [-1]}}
    loss = [{"a": np.array([1], np.int32)}] * 5         # 5 x (4 -> 6 bytes) = -10
    gain = [{"a": np.array([1, 2, 3, 4], np.int32)}]    # 16 -> 9 bytes = +7
    for batches, total in (([loss, gain], 0), ([gain, loss], 0), ([gain, loss, gain], 4), ([gain], 7)):
        path = str(tmp_path / f"c{len(os.listdir(tmp_path))}.mindrecord")
        write_case(path, {"schema": schema, "batches": batches})
        assert header_json(path)["compression_size"] == total, batches


def test_reader_accepts_a_negative_compression_size(tmp_path):
    """Files that older headrace wrote (compression_size < 0) stay readable, as in MindSpore."""
    path = str(tmp_path / "neg.mindrecord")
    schema = {"a": {"type": "int32", "shape": [1]}}
    write_case(path, {"schema": schema, "batches": [[{"a": np.array([2], np.int32)}] * 3]})
    with open(path, "r+b") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        text = f.read(n)
        new = text.replace(b'"compression_size":0', b'"compression_size":-6')
        assert new != text
        f.seek(0)
        f.write(struct.pack("<Q", len(new)) + new)
    assert header_json(path)["compression_size"] == -6
    assert_rows_equal(read_all(path), [{"a": np.array([2], np.int32)}] * 3)


def test_empty_int_array_counts_like_mindspore(tmp_path):
    """An empty array compresses to 4 bytes: MindSpore 2.10 counts that as 0 saved when the array
    is the only blob field (7 + 0 = 7) and as -4 when there are others (7 + 7 + 7 - 4 = 17)."""
    pos, empty = np.arange(1, 5, dtype=np.int32), np.zeros(0, np.int32)
    one = {"n": {"type": "int32"}, "x": {"type": "int32", "shape": [-1]}}
    two = {"x": {"type": "int32", "shape": [-1]}, "y": {"type": "int32", "shape": [-1]}}
    for schema, batches, total in (
            (one, [[{"n": 1, "x": pos}], [{"n": 2, "x": empty}]], 7),
            (two, [[{"x": pos, "y": pos}, {"x": pos, "y": empty}]], 17)):
        path = str(tmp_path / f"e{len(os.listdir(tmp_path))}.mindrecord")
        write_case(path, {"schema": schema, "batches": batches})
        assert header_json(path)["compression_size"] == total
        assert_rows_equal(read_all(path), [expected(schema, r) for b in batches for r in b])
