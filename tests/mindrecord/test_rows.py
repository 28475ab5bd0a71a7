"""Raw records (MessagePack as nlohmann writes it), integer-array compression and blob records."""
import struct

import msgpack
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from headrace.mindrecord._format.rows import (DUMMY_RAW, compress_ints, decode_raw, decompress_ints, encode_raw,
                                              is_whole, join_blob, split_blob)


def test_raw_record_literal_bytes():
    # MINDRECORD.md §3.1: the record MindSpore writes for this row
    row = {"f32": 1.5, "f64": 4.0, "i32": -1, "i64": 1 << 40, "s": "str0"}
    assert encode_raw(row, sorted(row)) == bytes.fromhex(
        "85a3663332ca3fc00000a3663634ca40800000a3693332ffa3693634cf0000010000000000a173a473747230")


@pytest.mark.parametrize("value, hexbytes", [
    (0, "00"), (127, "7f"), (128, "cc80"), (255, "ccff"), (256, "cd0100"), (65535, "cdffff"),
    (65536, "ce00010000"), (2**32, "cf0000000100000000"), (2**64 - 1, "cfffffffffffffffff"),
    (-1, "ff"), (-32, "e0"), (-33, "d0df"), (-128, "d080"), (-129, "d1ff7f"), (-32769, "d2ffff7fff"),
    (-(2**31) - 1, "d3ffffffff7fffffff"),
    (2.25, "ca40100000"), (0.1, "cb3fb999999999999a"), (1e300, "cb7e37e43c8800759c"),
    (float("inf"), "cb7ff0000000000000"), (-0.0, "ca80000000"),
    ("", "a0"), ("a" * 31, "bf" + "61" * 31), ("a" * 32, "d920" + "61" * 32), ("é", "a2c3a9"),
])
def test_scalar_encodings(value, hexbytes):
    out = encode_raw({"k": value}, ["k"])
    assert out == bytes.fromhex("81a16b" + hexbytes)
    assert decode_raw(out) == {"k": value}


def test_long_strings_and_rejections():
    assert encode_raw({"k": "x" * 300}, ["k"])[3:6] == b"\xda\x01\x2c"
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        encode_raw({"k": 2**64}, ["k"])
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        encode_raw({"k": -(2**63) - 1}, ["k"])
    with pytest.raises(ValueError, match="bool values cannot be stored"):
        encode_raw({"k": True}, ["k"])
    with pytest.raises(ValueError, match="type bytes cannot be stored"):
        encode_raw({"k": b"x"}, ["k"])
    assert DUMMY_RAW == bytes.fromhex("81a2696400")


def test_decode_raw_rejects_garbage():
    for bad in (b"", b"\xc1", b"\x81\xa1", b"\x81\xa1k\x01\x02"):
        with pytest.raises(ValueError, match="not valid MessagePack"):
            decode_raw(bad)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.from_regex(r"[a-z_]{1,8}", fullmatch=True),
                       st.one_of(st.integers(-(2**63), 2**64 - 1), st.floats(allow_nan=False), st.text(max_size=40)),
                       min_size=1, max_size=20))
def test_raw_round_trip_and_size(row):
    keys = sorted(row)
    out = encode_raw(row, keys)
    assert decode_raw(out) == row
    # same bytes as the msgpack package for everything but floats (which it always writes as float64)
    if not any(isinstance(v, float) for v in row.values()):
        assert out == msgpack.packb({k: row[k] for k in keys}, use_bin_type=True)


@pytest.mark.parametrize("values, dtype, hexbytes", [
    ([1, -2], np.int32, "00000002" "00" "01fe"),
    ([5, 1 << 40], np.int64, "00000002" "30" "05" "0000000000010000"),
    ([1, -2, 300], np.int32, "00000003" "04" "01fe2c01"),
    ([], np.int32, "00000000"),
    ([-129, 40000, -(2**31), 2**31 - 1, 7], np.int32, "00000005" "6a" "00" "7fff" "409c0000" "00000080" "ffffff7f" "07"),
])
def test_compression_literal_bytes(values, dtype, hexbytes):
    arr = np.array(values, dtype=dtype)
    data = compress_ints(arr)
    assert data == bytes.fromhex(hexbytes)
    back = decompress_ints(data, dtype)
    assert back.dtype == dtype and back.tolist() == values


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=300), st.sampled_from(["int32", "int64"]))
def test_compression_round_trip(values, dtype):
    if dtype == "int32":
        values = [v % 2**32 - 2**31 for v in values]
    arr = np.array(values, dtype=dtype)
    data = compress_ints(arr)
    n = len(values)
    widths = [1 if -128 <= v < 128 else 2 if -2**15 <= v < 2**15 else 4 if -2**31 <= v < 2**31 else 8 for v in values]
    assert len(data) == 4 + (n + 3) // 4 + sum(widths)
    assert struct.unpack(">I", data[:4])[0] == n
    out = decompress_ints(data, np.dtype(dtype))
    assert out.dtype == np.dtype(dtype) and out.tolist() == values


def test_decompression_errors():
    with pytest.raises(ValueError, match="shorter than its 4-byte count"):
        decompress_ints(b"\x00\x00", np.int32)
    with pytest.raises(ValueError, match="width bitmap is truncated"):
        decompress_ints(b"\x00\x00\x00\x09\x00", np.int32)
    with pytest.raises(ValueError, match="needs 2 data bytes, found 1"):
        decompress_ints(bytes.fromhex("00000002" "00" "01"), np.int32)
    with pytest.raises(ValueError, match="needs 1 data bytes, found 2"):
        decompress_ints(bytes.fromhex("00000001" "00" "0101"), np.int32)
    with pytest.raises(ValueError, match="out of the int32 range"):
        decompress_ints(compress_ints(np.array([2**40], np.int64)), np.int32)


def test_blob_join_split():
    assert join_blob([b"abc"]) == [b"abc"]
    parts = join_blob([b"ab", b"", b"xyz"])
    data = b"".join(parts)
    assert data == bytes.fromhex("0000000000000002") + b"ab" + bytes(8) + bytes.fromhex("0000000000000003") + b"xyz"
    assert [bytes(p) for p in split_blob(data, 3)] == [b"ab", b"", b"xyz"]
    assert [bytes(p) for p in split_blob(b"whole", 1)] == [b"whole"]
    with pytest.raises(ValueError, match="truncated before the length of blob field 1"):
        split_blob(data[:10], 3)
    with pytest.raises(ValueError, match="claims 3 bytes but only 2 remain"):
        split_blob(data[:-1], 3)
    with pytest.raises(ValueError, match="1 bytes after its last field"):
        split_blob(data + b"!", 3)


def test_is_whole_matches_mindspore_rule():
    # FileReader returns floats within 1e-7 above an integer as int (MindSpore's FromJsonImpl)
    assert [is_whole(v) for v in (3.0, 3 + 1e-7, 3 + 1e-6, 3 - 1e-7, 1e-7, 5e-8, -2.5, 2.0**53)] == \
        [True, True, False, False, False, True, False, True]
    assert not is_whole(float("nan")) and not is_whole(float("inf")) and not is_whole(1e20)
