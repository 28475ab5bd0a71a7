"""``tf.train.Example`` protobuf messages, decoded by hand (no TensorFlow, no protobuf package).

The messages involved::

    Example   { Features features = 1; }
    Features  { map<string, Feature> feature = 1; }     // map entry: key = 1, value = 2
    Feature   { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3; } }
    BytesList { repeated bytes value = 1; }
    FloatList { repeated float value = 1 [packed = true]; }
    Int64List { repeated int64 value = 1 [packed = true]; }

Only varints (wire type 0), 64-bit (1), length-delimited (2) and 32-bit (5) fields occur; unknown
fields are skipped. Packed and unpacked repeated numbers are both accepted.
"""
from __future__ import annotations

from typing import Iterator, Union

import numpy as np

__all__ = ["BYTES", "FLOAT", "INT64", "ExampleError", "parse_example", "encode_example"]

BYTES, FLOAT, INT64 = "bytes", "float", "int64"
Feature = tuple[str, Union[list, np.ndarray]]  # (kind, values)


class ExampleError(ValueError):
    """The bytes are not a well-formed tf.train.Example."""


def _varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= end:
            raise ExampleError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ExampleError("varint longer than 10 bytes")


def _fields(buf: bytes, pos: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """Yields (field number, wire type, value start, value end or varint value) for a message."""
    while pos < end:
        key, pos = _varint(buf, pos, end)
        field, wire = key >> 3, key & 7
        if wire == 2:
            n, pos = _varint(buf, pos, end)
            if pos + n > end:
                raise ExampleError(f"field {field} runs past the end of its message")
            yield field, wire, pos, pos + n
            pos += n
        elif wire == 0:
            value, pos = _varint(buf, pos, end)
            yield field, wire, value, pos
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            if pos + width > end:
                raise ExampleError(f"field {field} runs past the end of its message")
            yield field, wire, pos, pos + width
            pos += width
        else:
            raise ExampleError(f"unsupported wire type {wire} (field {field})")


def _packed_varints(buf: bytes, start: int, end: int) -> np.ndarray:
    """Decodes a run of varints into int64 (two's complement, as protobuf stores negatives)."""
    raw = np.frombuffer(buf, dtype=np.uint8, count=end - start, offset=start)
    if raw.size == 0:
        return np.zeros(0, dtype=np.int64)
    last = raw < 0x80
    if not last[-1]:
        raise ExampleError("truncated packed varint")
    ends = np.flatnonzero(last)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    if int((ends - starts).max()) >= 10:
        raise ExampleError("varint longer than 10 bytes")
    pos_in = np.arange(raw.size) - np.repeat(starts, ends - starts + 1)
    parts = (raw & 0x7F).astype(np.uint64) << (7 * pos_in).astype(np.uint64)
    return np.add.reduceat(parts, starts).view(np.int64)


def _int64_list(buf: bytes, start: int, end: int) -> np.ndarray:
    chunks = []
    singles = []
    for field, wire, a, b in _fields(buf, start, end):
        if field != 1:
            continue
        if wire == 2:
            if b - a <= 16:
                pos, vals = a, []
                while pos < b:
                    v, pos = _varint(buf, pos, b)
                    vals.append(v - (1 << 64) if v >= 1 << 63 else v)
                chunks.append(np.array(vals, dtype=np.int64))
            else:
                chunks.append(_packed_varints(buf, a, b))
        elif wire == 0:
            v = a & 0xFFFFFFFFFFFFFFFF
            singles.append(v - (1 << 64) if v >= 1 << 63 else v)
        else:
            raise ExampleError(f"Int64List value with wire type {wire}")
    if singles:
        chunks.append(np.array(singles, dtype=np.int64))
    if not chunks:
        return np.zeros(0, dtype=np.int64)
    return chunks[0] if len(chunks) == 1 else np.concatenate(chunks)


def _float_list(buf: bytes, start: int, end: int) -> np.ndarray:
    chunks = []
    for field, wire, a, b in _fields(buf, start, end):
        if field != 1:
            continue
        if wire == 2:
            if (b - a) % 4:
                raise ExampleError("packed FloatList length is not a multiple of 4")
            chunks.append(np.frombuffer(buf, dtype="<f4", count=(b - a) // 4, offset=a))
        elif wire == 5:
            chunks.append(np.frombuffer(buf, dtype="<f4", count=1, offset=a))
        else:
            raise ExampleError(f"FloatList value with wire type {wire}")
    if not chunks:
        return np.zeros(0, dtype=np.float32)
    out = chunks[0] if len(chunks) == 1 else np.concatenate(chunks)
    return out.astype(np.float32)  # native byte order, own memory


def _bytes_list(buf: bytes, start: int, end: int) -> list[bytes]:
    out = []
    for field, wire, a, b in _fields(buf, start, end):
        if field != 1:
            continue
        if wire != 2:
            raise ExampleError(f"BytesList value with wire type {wire}")
        out.append(buf[a:b])
    return out


def _feature(buf: bytes, start: int, end: int) -> Feature:
    kind: Feature = (INT64, np.zeros(0, dtype=np.int64))  # a Feature with no kind set holds nothing
    for field, wire, a, b in _fields(buf, start, end):
        if wire != 2 or field not in (1, 2, 3):
            continue
        if field == 1:
            kind = (BYTES, _bytes_list(buf, a, b))
        elif field == 2:
            kind = (FLOAT, _float_list(buf, a, b))
        else:
            kind = (INT64, _int64_list(buf, a, b))
    return kind


def parse_example(buf: bytes) -> dict[str, Feature]:
    """Features of one serialised ``tf.train.Example``: name -> (kind, values).

    Values are an int64 array (``"int64"``), a float32 array (``"float"``) or a list of bytes
    (``"bytes"``). Raises :class:`ExampleError` for malformed input.

    Examples:
        >>> parse_example(encode_example({"x": ("int64", [1, -2]), "s": ("bytes", [b"hi"])}))["x"][1].tolist()
        [1, -2]
    """
    features: dict[str, Feature] = {}
    end = len(buf)
    for field, wire, a, b in _fields(buf, 0, end):
        if field != 1 or wire != 2:
            continue
        for f2, w2, c, d in _fields(buf, a, b):
            if f2 != 1 or w2 != 2:
                continue
            key, value = None, None
            for f3, w3, e, g in _fields(buf, c, d):
                if w3 != 2:
                    continue
                if f3 == 1:
                    try:
                        key = buf[e:g].decode("utf-8")
                    except UnicodeDecodeError:
                        raise ExampleError("feature name is not UTF-8") from None
                elif f3 == 2:
                    value = (e, g)
            if key is None:
                raise ExampleError("feature map entry without a name")
            features[key] = _feature(buf, *value) if value is not None else (INT64, np.zeros(0, np.int64))
    return features


# --------------------------------------------------------------------------------------------
# Encoding (used by tests and by tools that write TFRecord files)
# --------------------------------------------------------------------------------------------

def _enc_varint(n: int) -> bytes:
    n &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _ld(field: int, payload: bytes) -> bytes:
    return _enc_varint(field << 3 | 2) + _enc_varint(len(payload)) + payload


def encode_example(features: dict[str, Feature]) -> bytes:
    """Serialises ``{name: (kind, values)}`` (kinds "bytes", "float", "int64") as a tf.train.Example."""
    entries = bytearray()
    for name, (kind, values) in features.items():
        if kind == BYTES:
            inner = b"".join(_ld(1, bytes(v)) for v in values)
            feat = _ld(1, inner)
        elif kind == FLOAT:
            vals = np.asarray(values, dtype="<f4")
            feat = _ld(2, _ld(1, vals.tobytes()))
        elif kind == INT64:
            feat = _ld(3, _ld(1, b"".join(_enc_varint(int(v)) for v in values)))
        else:
            raise ValueError(f"unknown feature kind {kind!r}")
        entries += _ld(1, _ld(1, name.encode("utf-8")) + _ld(2, feat))
    return _ld(1, bytes(entries))

