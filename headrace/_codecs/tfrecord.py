"""The TFRecord file format, read and written without TensorFlow.

A TFRecord file is a sequence of records: a little-endian uint64 length, the masked CRC-32C of
those 8 bytes, the data, and the masked CRC-32C of the data. :func:`scan_records` indexes a file
(checking every header's CRC), :func:`read_record` returns one record's data (checking its CRC),
:func:`write_tfrecord` writes one. ``TFRecordDataset`` and ``TFRecordToMR`` build on these.
"""
from __future__ import annotations

import gzip
import os
import struct
import zlib
from typing import Sequence

import numpy as np

from headrace._util.errors import PipelineError
from headrace._util.files import open_regular

from headrace._codecs import crc32c
from headrace._codecs.tfexample import encode_example

__all__ = ["COMPRESSIONS", "TFRecordError", "check_compression", "decompress", "read_record", "scan_records",
           "write_tfrecord"]

_HEADER = 12
COMPRESSIONS = ("", "ZLIB", "GZIP")


class TFRecordError(PipelineError):
    """A damaged TFRecord file: names the file and the record."""

    def __init__(self, path: str, record: int | None, detail: str, op: str = "TFRecordDataset") -> None:
        where = f", record {record}" if record is not None else ""
        super().__init__(op, f"Invalid TFRecord file{where}: {detail}", file=path)


def scan_records(data: bytes | memoryview | None, path: str) -> tuple[np.ndarray, np.ndarray]:
    """(data offsets, data lengths) of the records in a TFRecord file, headers CRC-checked.

    Reads ``data`` (a decompressed file in memory) or, when None, the file at ``path``.
    Raises TFRecordError naming the file and the first damaged record.
    """
    offsets: list[int] = []
    lengths: list[int] = []
    heads = bytearray()
    if data is None:
        try:
            f = open_regular(path, buffering=1 << 16)
        except OSError as e:
            raise TFRecordError(path, None, f"cannot be opened: {e.strerror or e}.") from e
        size = os.fstat(f.fileno()).st_size
        with f:
            pos = 0
            while pos < size:
                head = f.read(_HEADER)
                if len(head) < _HEADER:
                    raise TFRecordError(path, len(offsets), f"the file ends inside a record header at offset {pos}.")
                length = struct.unpack_from("<Q", head)[0]
                heads += head
                offsets.append(pos + _HEADER)
                lengths.append(length)
                pos += _HEADER + length + 4
                if pos > size:
                    break
                f.seek(pos)
    else:
        size = len(data)
        pos = 0
        while pos < size:
            if pos + _HEADER > size:
                raise TFRecordError(path, len(offsets), f"the file ends inside a record header at offset {pos}.")
            head = bytes(data[pos:pos + _HEADER])
            length = struct.unpack_from("<Q", head)[0]
            heads += head
            offsets.append(pos + _HEADER)
            lengths.append(length)
            pos += _HEADER + length + 4
    if heads:
        table = np.frombuffer(bytes(heads), dtype=np.uint8).reshape(-1, _HEADER)
        want = table[:, 8:].copy().view("<u4").ravel()
        got = crc32c.mask_many(crc32c.crc32c_many(table[:, :8]))
        bad = np.flatnonzero(got != want)
        if bad.size:
            k = int(bad[0])
            raise TFRecordError(path, k, f"the CRC of the length field (offset {offsets[k] - _HEADER}) does not "
                                         "match; the file is damaged or not a TFRecord file.")
    if pos > size:
        k = len(offsets) - 1
        raise TFRecordError(path, k, f"the file ends inside the record's data (it needs {lengths[k] + 4} bytes "
                                     f"from offset {offsets[k]}, the file has {size}); the file is truncated.")
    return np.asarray(offsets, dtype=np.int64), np.asarray(lengths, dtype=np.int64)


def decompress(path: str, compression: str) -> bytes:
    try:
        with open_regular(path) as f:
            raw = f.read()
    except OSError as e:
        raise TFRecordError(path, None, f"cannot be opened: {e.strerror or e}.") from e
    try:
        return gzip.decompress(raw) if compression == "GZIP" else zlib.decompress(raw)
    except (OSError, EOFError, zlib.error) as e:
        raise TFRecordError(path, None, f"{compression} decompression failed: {e}.") from e


def read_record(path: str, data: bytes | None, offset: int, length: int, record: int) -> bytes:
    """The data of one record (at ``offset``, ``length`` bytes), its CRC checked; from ``data`` (a
    decompressed file) or, when None, from the file at ``path``."""
    if data is None:
        try:
            with open_regular(path) as f:
                f.seek(offset)
                blob = f.read(length + 4)
        except OSError as e:
            raise TFRecordError(path, record, f"cannot be read: {e.strerror or e}.") from e
    else:
        blob = data[offset:offset + length + 4]
    if len(blob) != length + 4:
        raise TFRecordError(path, record, "the file is shorter than when it was indexed; it changed or was truncated.")
    body = blob[:length]
    if crc32c.masked_crc32c(body) != struct.unpack_from("<I", blob, length)[0]:
        raise TFRecordError(path, record, f"the CRC of the record's data (offset {offset}, {length} bytes) does not "
                                          "match; the file is damaged.")
    return body


def check_compression(value: object) -> str:
    """'' for None; else one of COMPRESSIONS, or ValueError."""
    if value is None:
        return ""
    if not isinstance(value, str) or value not in COMPRESSIONS:
        raise ValueError(f"Input compression_type can only be either '' (no compression), 'ZLIB', or 'GZIP', "
                         f"but got '{value}'.")
    return value


def write_tfrecord(path: str, rows: Sequence[dict], compression_type: str = "") -> None:
    """Writes ``rows`` (each ``{name: (kind, values)}``, kinds "int64", "float", "bytes") as a
    TFRecord file of tf.train.Example records, optionally GZIP or ZLIB compressed.

    A small writer for tests, examples and tools; it checks nothing beyond the encodings.
    """
    out = bytearray()
    for row in rows:
        data = encode_example(row)
        head = struct.pack("<Q", len(data))
        out += head + struct.pack("<I", crc32c.masked_crc32c(head)) + data + \
            struct.pack("<I", crc32c.masked_crc32c(data))
    compression = check_compression(compression_type)
    blob = bytes(out)
    if compression == "GZIP":
        blob = gzip.compress(blob)
    elif compression == "ZLIB":
        blob = zlib.compress(blob)
    with open(path, "wb") as f:
        f.write(blob)
