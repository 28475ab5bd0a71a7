"""Row encoding: the MessagePack raw record, integer-array compression and blob records.

* Raw record: a MessagePack map of the row's scalar fields, keys sorted, integers in their smallest
  encoding, floats as float32 when that is exact and float64 otherwise (MINDRECORD.md §3.1). The
  encoder below writes exactly those bytes; decoding uses the ``msgpack`` package.
* Integer arrays (files of version 3.0): big-endian element count, a 2-bit-per-element width
  bitmap, then each element little-endian in its smallest width (§5).
* Blob record: one blob field's bytes as they are, or, with several blob fields, each one prefixed
  with its big-endian 64-bit length, in ``blob_fields`` order (§3.2).
"""
from __future__ import annotations

import functools
import math
import struct
from typing import Any, Mapping, Sequence

import msgpack
import numpy as np

_pack_f = struct.Struct(">f").pack
_pack_d = struct.Struct(">d").pack
_unpack_f = struct.Struct(">f").unpack
_BE_U64 = struct.Struct(">Q")
_BE_U32 = struct.Struct(">I")

DUMMY_RAW = b"\x81\xa2id\x00"       # {"id": 0}: the raw record of rows whose schema has no raw field
DUMMY_BLOB = b"\x00\x00\x00\x00"    # the blob record of rows whose schema has no blob field


class EncodeError(ValueError):
    """A value cannot be stored in a raw record."""


# MessagePack's sized forms, smallest first: (the largest size a form holds, its tag, its width in
# bytes). The value follows the tag big-endian; a negative integer's size is its magnitude.
_UINT_FORMS = ((0xFF, b"\xcc", 1), (0xFFFF, b"\xcd", 2), (0xFFFFFFFF, b"\xce", 4),
               (0xFFFFFFFFFFFFFFFF, b"\xcf", 8))
_NEG_INT_FORMS = ((0x80, b"\xd0", 1), (0x8000, b"\xd1", 2), (0x80000000, b"\xd2", 4),
                  (0x8000000000000000, b"\xd3", 8))
_STR_LEN_FORMS = ((0xFF, b"\xd9", 1), (0xFFFF, b"\xda", 2), (0xFFFFFFFF, b"\xdb", 4))
_MAP_LEN_FORMS = ((0xFFFF, b"\xde", 2), (0xFFFFFFFF, b"\xdf", 4))


def _pack_sized(v: int, size: int, forms: tuple[tuple[int, bytes, int], ...], out: bytearray) -> bool:
    """Appends ``v`` in the first of ``forms`` that holds ``size``; False when none does."""
    for most, tag, width in forms:
        if size <= most:
            out += tag + v.to_bytes(width, "big", signed=v < 0)
            return True
    return False


def _pack_int(v: int, out: bytearray) -> None:
    if -32 <= v < 0x80:  # positive and negative fixint
        out.append(v & 0xFF)
    elif not (_pack_sized(v, v, _UINT_FORMS, out) if v >= 0 else _pack_sized(v, -v, _NEG_INT_FORMS, out)):
        raise EncodeError(f"integer {v} does not fit in 64 bits")


def _pack_float(v: float, out: bytearray) -> None:
    # float32 when the value survives the round trip exactly (NaN never compares equal: float64)
    if -3.4028234663852886e38 <= v <= 3.4028234663852886e38:
        try:
            single = _pack_f(v)
        except OverflowError:  # pragma: no cover - guarded by the range test
            single = None
        if single is not None and _unpack_f(single)[0] == v:
            out += b"\xca" + single
            return
    out += b"\xcb" + _pack_d(v)


def _pack_str(s: str, out: bytearray) -> None:
    b = s.encode("utf-8")
    n = len(b)
    if n < 32:
        out.append(0xA0 | n)
    elif not _pack_sized(n, n, _STR_LEN_FORMS, out):
        raise EncodeError("string longer than 4 GiB")
    out += b


@functools.lru_cache(maxsize=4096)
def _packed_key(key: str) -> bytes:
    out = bytearray()
    _pack_str(key, out)
    return bytes(out)


def encode_raw(values: Mapping[str, Any], keys: Sequence[str]) -> bytes:
    """Encodes ``{key: values[key]}`` for ``keys`` (already sorted) as the raw MessagePack map.

    Values are Python int, float or str (NumPy scalars are converted by the caller).
    """
    n = len(keys)
    out = bytearray()
    if n < 16:
        out.append(0x80 | n)
    else:  # a schema has at most 100 fields: the first form holds them
        _pack_sized(n, n, _MAP_LEN_FORMS, out)
    for key in keys:
        out += _packed_key(key)
        v = values[key]
        if isinstance(v, bool):
            raise EncodeError(f"field '{key}': bool values cannot be stored")
        if isinstance(v, int):
            _pack_int(v, out)
        elif isinstance(v, float):
            _pack_float(v, out)
        elif isinstance(v, str):
            _pack_str(v, out)
        else:
            raise EncodeError(f"field '{key}': values of type {type(v).__name__} cannot be stored")
    return bytes(out)


def decode_raw(data: bytes | memoryview) -> Any:
    """Decodes a raw record; raises ``ValueError`` (with the cause) when it is not valid MessagePack."""
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=False)
    except (msgpack.ExtraData, msgpack.FormatError, msgpack.StackError, ValueError, TypeError,
            UnicodeDecodeError) as exc:
        raise ValueError(f"the raw record is not valid MessagePack ({type(exc).__name__}: {exc})") from None


# ---------------------------------------------------------------------------------------------
# Integer-array compression
# ---------------------------------------------------------------------------------------------

_WIDTH_DTYPES = (np.dtype("<i1"), np.dtype("<i2"), np.dtype("<i4"), np.dtype("<i8"))


def compress_ints(arr: np.ndarray) -> bytes:
    """Compresses an int32/int64 array (any shape, C order) into MindRecord's variable-width form."""
    flat = np.ascontiguousarray(arr).reshape(-1).astype(np.int64, copy=False)
    n = flat.size
    cls = np.full(n, 3, dtype=np.uint8)
    cls[(flat >= -(1 << 31)) & (flat < (1 << 31))] = 2
    cls[(flat >= -(1 << 15)) & (flat < (1 << 15))] = 1
    cls[(flat >= -(1 << 7)) & (flat < (1 << 7))] = 0
    padded = np.zeros(((n + 3) // 4) * 4, dtype=np.uint8)
    padded[:n] = cls
    quads = padded.reshape(-1, 4)
    bitmap = (quads[:, 0] << 6) | (quads[:, 1] << 4) | (quads[:, 2] << 2) | quads[:, 3]
    as_bytes = flat.astype("<i8", copy=False).view(np.uint8).reshape(n, 8)
    mask = np.arange(8, dtype=np.uint8)[None, :] < (np.uint8(1) << cls)[:, None]
    return _BE_U32.pack(n) + bitmap.astype(np.uint8).tobytes() + as_bytes[mask].tobytes()


def decompress_ints(data: bytes | memoryview, dtype: np.dtype) -> np.ndarray:
    """Inverse of ``compress_ints``; returns a 1-D array of ``dtype``.

    Raises:
        ValueError: the bytes are not a well-formed compressed array (truncated, trailing bytes,
            values out of range for ``dtype``).
    """
    buf = np.frombuffer(data, dtype=np.uint8)
    if buf.size < 4:
        raise ValueError(f"compressed integer array of {buf.size} bytes is shorter than its 4-byte count")
    n = int.from_bytes(bytes(buf[:4]), "big")
    nbitmap = (n + 3) // 4
    if buf.size < 4 + nbitmap:
        raise ValueError(f"compressed integer array claims {n} elements but its width bitmap is truncated")
    bitmap = buf[4:4 + nbitmap]
    cls = np.empty(nbitmap * 4, dtype=np.uint8)
    cls[0::4] = bitmap >> 6
    cls[1::4] = (bitmap >> 4) & 3
    cls[2::4] = (bitmap >> 2) & 3
    cls[3::4] = bitmap & 3
    cls = cls[:n]
    widths = np.uint8(1) << cls
    body = buf[4 + nbitmap:]
    total = int(widths.sum(dtype=np.int64))
    if body.size != total:
        raise ValueError(f"compressed integer array of {n} elements needs {total} data bytes, found {body.size}")
    out = np.empty(n, dtype=np.int64)
    if n:
        starts = np.zeros(n, dtype=np.int64)
        np.cumsum(widths[:-1], out=starts[1:])
        for c in range(4):
            sel = np.flatnonzero(cls == c)
            if sel.size == 0:
                continue
            w = 1 << c
            gather = starts[sel][:, None] + np.arange(w)[None, :]
            out[sel] = body[gather].reshape(-1).view(_WIDTH_DTYPES[c]).astype(np.int64)
    dtype = np.dtype(dtype)
    if dtype == np.int32 and n and (out.min() < -(1 << 31) or out.max() >= (1 << 31)):
        raise ValueError("compressed integer array holds a value out of the int32 range")
    return out.astype(dtype, copy=False)


# ---------------------------------------------------------------------------------------------
# Blob records
# ---------------------------------------------------------------------------------------------

def join_blob(parts: Sequence[bytes | memoryview]) -> list[bytes | memoryview]:
    """The pieces of a blob record for the given per-field payloads (in ``blob_fields`` order).

    Returns a list of buffers to be written back to back (no copy of the payloads).
    """
    if len(parts) == 1:
        return [parts[0]]
    out: list[bytes | memoryview] = []
    for p in parts:
        out.append(_BE_U64.pack(len(p)))
        out.append(p)
    return out


def split_blob(data: bytes | memoryview, count: int) -> list[memoryview]:
    """Splits a blob record into its ``count`` per-field payloads (views, no copy).

    Raises:
        ValueError: a length prefix points past the end, or bytes are left over.
    """
    mv = memoryview(data)
    if count == 1:
        return [mv]
    out = []
    pos = 0
    end = len(mv)
    for i in range(count):
        if pos + 8 > end:
            raise ValueError(f"blob record of {end} bytes is truncated before the length of blob field {i}")
        n = _BE_U64.unpack_from(mv, pos)[0]
        pos += 8
        if n > end - pos:
            raise ValueError(f"blob field {i} claims {n} bytes but only {end - pos} remain in the record")
        out.append(mv[pos:pos + n])
        pos += n
    if pos != end:
        raise ValueError(f"blob record has {end - pos} bytes after its last field")
    return out


def is_whole(x: float) -> bool:
    """MindSpore's rule for returning a float as a Python int from FileReader/MindPage."""
    return math.isfinite(x) and abs(x - math.floor(x)) < 1e-7 and -9.2e18 < x < 9.2e18
