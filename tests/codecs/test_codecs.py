"""The record codecs in headrace/_codecs: CRC-32C and tf.train.Example (TFRecord framing is tested
through TFRecordDataset in tests/sources/test_tfrecord.py)."""
import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from headrace._codecs import crc32c as _crc32c
from headrace._codecs.tfexample import ExampleError, encode_example, parse_example


def _bitwise_crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


# ---- CRC-32C --------------------------------------------------------------------------------

def test_crc32c_known_values():
    assert _crc32c.crc32c(b"123456789") == 0xE3069283
    assert _crc32c.crc32c(b"") == 0
    assert _crc32c.crc32c(bytes(32)) == 0x8A9136AA           # RFC 3720 test vector
    assert _crc32c.crc32c(b"\xff" * 32) == 0x62A8AB43
    assert _crc32c.masked_crc32c(b"") == 2726488792


@settings(max_examples=60, deadline=None)
@given(st.binary(min_size=0, max_size=9000))
def test_crc32c_matches_bitwise_definition(data):
    assert _crc32c.crc32c(data) == _bitwise_crc32c(data)


def test_crc32c_large_and_many():
    rng = np.random.default_rng(0)
    for n in (2048, 5000, 70001, (1 << 22) + 3):
        data = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        head, tail = data[:1000], data[1000:]
        # CRC of a concatenation from the plain loop continued over the vectorised result
        reg = _crc32c.crc32c(head) ^ 0xFFFFFFFF
        assert _crc32c._raw_small(tail[:3000], reg) == _crc32c._raw_small(data[:4000], 0xFFFFFFFF)
        if n <= 70001:
            assert _crc32c.crc32c(data) == _bitwise_crc32c(data)
    rows8 = rng.integers(0, 256, (7, 8), dtype=np.uint8)
    assert _crc32c.crc32c_many(rows8).tolist() == [_bitwise_crc32c(r.tobytes()) for r in rows8]


# ---- tf.train.Example ------------------------------------------------------------------------

int64s = st.lists(st.integers(-2**63, 2**63 - 1), max_size=40)
floats = st.lists(st.floats(width=32, allow_nan=False), max_size=20)
blobs = st.lists(st.binary(max_size=30), max_size=5)
feature = st.one_of(int64s.map(lambda v: ("int64", v)), floats.map(lambda v: ("float", v)),
                    blobs.map(lambda v: ("bytes", v)))


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=8), feature, max_size=5))
def test_example_round_trip(features):
    got = parse_example(encode_example(features))
    assert set(got) == set(features)
    for name, (kind, values) in features.items():
        gkind, gvalues = got[name]
        assert gkind == kind
        if kind == "bytes":
            assert gvalues == list(values)
        else:
            assert list(np.asarray(gvalues).tolist()) == list(np.asarray(values, dtype=np.float32 if kind == "float"
                                                                         else np.int64).tolist())


def test_example_unpacked_and_unknown_fields():
    # Int64List with unpacked values (wire type 0), FloatList unpacked (wire type 5), an unknown field 9
    int_list = b"\x08\x05\x08\x7f" + b"\x48\x01"
    float_list = b"\x0d" + struct.pack("<f", 2.5)
    feat_i = b"\x1a" + bytes([len(int_list)]) + int_list
    feat_f = b"\x12" + bytes([len(float_list)]) + float_list

    def entry(name, feat):
        body = b"\x0a" + bytes([len(name)]) + name + b"\x12" + bytes([len(feat)]) + feat
        return b"\x0a" + bytes([len(body)]) + body
    entries = entry(b"i", feat_i) + entry(b"f", feat_f)
    msg = b"\x0a" + bytes([len(entries)]) + entries + b"\x10\x01"
    got = parse_example(msg)
    assert got["i"][0] == "int64" and got["i"][1].tolist() == [5, 127]
    assert got["f"][0] == "float" and got["f"][1].tolist() == [2.5]


@pytest.mark.parametrize("blob", [b"\x0a\x05\x0a\x03", b"\x0a", b"\x0b\x00", b"\x0a\x02\x0a\xff"])
def test_example_malformed(blob):
    with pytest.raises(ExampleError):
        parse_example(blob)


# ---- TFRecordDataset -------------------------------------------------------------------------
