"""TFRecordDataset: ``tf.train.Example`` records from TFRecord files, without TensorFlow.

A TFRecord file is a sequence of records: a little-endian uint64 length, the masked CRC-32C of
those 8 bytes, the data, and the masked CRC-32C of the data. The first read of a dataset makes
one pass over each file to index its records (offsets only; headers are CRC-checked then), so
rows are read by index; each record's data CRC is checked when it is read. GZIP / ZLIB
compressed files are decompressed into memory on first use (a compressed stream cannot be
read by offset).
"""
from __future__ import annotations

import gzip
import os
import struct
import threading
import zlib
from typing import Any, Sequence

import numpy as np

from headrace._util import checks
from headrace._util.errors import PipelineError
from headrace.dataset._schema import ColumnSpec, Schema, load_schema_file
from headrace.dataset._sources import _crc32c
from headrace.dataset._sources._files import NO_DATA, RowFilesDataset, read_bytes
from headrace.dataset._sources._tfexample import BYTES, FLOAT, INT64, ExampleError, parse_example

__all__ = ["TFRecordDataset", "TFRecordSource", "scan_records"]

_OP = "TFRecordDataset"
_HEADER = 12
_COMPRESSIONS = ("", "ZLIB", "GZIP")
_KIND_TYPE = {INT64: "int64", FLOAT: "float32", BYTES: "uint8"}
_KIND_NAME = {INT64: "int64", FLOAT: "float32", BYTES: "string"}


class TFRecordError(PipelineError):
    """A damaged TFRecord file: names the file and the record."""

    def __init__(self, path: str, record: int | None, detail: str) -> None:
        where = f", record {record}" if record is not None else ""
        super().__init__(_OP, f"Invalid TFRecord file{where}: {detail}", file=path)


def scan_records(data: bytes | memoryview | None, path: str) -> tuple[np.ndarray, np.ndarray]:
    """(data offsets, data lengths) of the records in a TFRecord file, headers CRC-checked.

    Reads ``data`` (a decompressed file in memory) or, when None, the file at ``path``.
    Raises TFRecordError naming the file and the first damaged record.
    """
    offsets: list[int] = []
    lengths: list[int] = []
    heads = bytearray()
    if data is None:
        size = os.path.getsize(path)
        with open(path, "rb", buffering=1 << 16) as f:
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
        got = _crc32c.mask_many(_crc32c.crc32c_many(table[:, :8]))
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


def _decompress(path: str, compression: str) -> bytes:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise TFRecordError(path, None, f"cannot be opened: {e.strerror or e}.") from e
    try:
        return gzip.decompress(raw) if compression == "GZIP" else zlib.decompress(raw)
    except (OSError, EOFError, zlib.error) as e:
        raise TFRecordError(path, None, f"{compression} decompression failed: {e}.") from e


def _shape_of(spec: ColumnSpec, count: int) -> tuple[int, ...] | None:
    shape = spec.shape
    if shape is None:
        return (count,)
    known = 1
    for d in shape:
        if d != -1:
            known *= d
    if -1 in shape:
        if known == 0 or count % known:
            return None
        return tuple(count // known if d == -1 else d for d in shape)
    return tuple(shape) if known == count else None


class TFRecordSource:
    """Rows by index from TFRecord files: one column per ``ColumnSpec``."""

    def __init__(self, files: Sequence[str], compression: str, specs: Sequence[ColumnSpec], strict: bool) -> None:
        self.files = list(files)
        self.compression = compression
        self.specs = list(specs)
        self.column_names = [s.name for s in self.specs]
        self.strict = strict  # True: columns come from a schema (its messages differ)
        self._lock = threading.Lock()
        self._index: list[tuple[np.ndarray, np.ndarray]] | None = None
        self._starts: np.ndarray | None = None
        self._data: dict[int, bytes] = {}

    def set_columns(self, specs: Sequence[ColumnSpec], strict: bool) -> None:
        """Sets the columns to read (once the schema is known)."""
        self.specs = list(specs)
        self.column_names = [s.name for s in self.specs]
        self.strict = strict

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_lock"] = None
        state["_data"] = {}  # decompressed files are re-read by each process
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    # -- index -------------------------------------------------------------------------------
    def _file_data(self, k: int) -> bytes | None:
        if not self.compression:
            return None
        data = self._data.get(k)
        if data is None:
            with self._lock:
                data = self._data.get(k)
                if data is None:
                    data = self._data[k] = _decompress(self.files[k], self.compression)
        return data

    def _ensure_index(self) -> list[tuple[np.ndarray, np.ndarray]]:
        index = self._index
        if index is None:
            built = [scan_records(self._file_data(k), path) for k, path in enumerate(self.files)]
            with self._lock:
                if self._index is None:
                    self._starts = np.concatenate([[0], np.cumsum([len(o) for o, _ in built], dtype=np.int64)])
                    self._index = built
                index = self._index
        return index

    def counts(self) -> np.ndarray:
        return np.asarray([len(o) for o, _ in self._ensure_index()], dtype=np.int64)

    def __len__(self) -> int:
        self._ensure_index()
        return int(self._starts[-1])

    def _locate(self, index: int) -> tuple[int, int]:
        self._ensure_index()
        k = int(np.searchsorted(self._starts, index, side="right")) - 1
        return k, index - int(self._starts[k])

    def file_of(self, index: int) -> str | None:
        if self._index is None or not 0 <= index < int(self._starts[-1]):
            return None
        return self.files[self._locate(index)[0]]

    # -- records -----------------------------------------------------------------------------
    def record(self, k: int, j: int) -> bytes:
        """The data of record ``j`` of file ``k``, CRC-checked."""
        offsets, lengths = self._ensure_index()[k]
        off, length = int(offsets[j]), int(lengths[j])
        path = self.files[k]
        data = self._file_data(k)
        if data is None:
            try:
                blob = read_bytes(path, off, length + 4)
            except OSError as e:
                raise TFRecordError(path, j, f"cannot be read: {e.strerror or e}.") from e
        else:
            blob = data[off:off + length + 4]
        if len(blob) != length + 4:
            raise TFRecordError(path, j, "the file is shorter than when it was indexed; it changed or was truncated.")
        body = blob[:length]
        if _crc32c.masked_crc32c(body) != struct.unpack_from("<I", blob, length)[0]:
            raise TFRecordError(path, j, f"the CRC of the record's data (offset {off}, {length} bytes) does not "
                                         "match; the file is damaged.")
        return body

    def example(self, k: int, j: int) -> dict:
        body = self.record(k, j)
        try:
            return parse_example(body)
        except ExampleError as e:
            raise TFRecordError(self.files[k], j, f"the record is not a valid tf.train.Example ({e}).") from e

    def read(self, index: int) -> tuple:
        k, j = self._locate(index)
        features = self.example(k, j)
        path = self.files[k]
        return tuple([self._column(spec, features, path, j) for spec in self.specs])

    def _column(self, spec: ColumnSpec, features: dict, path: str, j: int) -> np.ndarray:
        feature = features.get(spec.name)
        if feature is None:
            if self.strict:
                raise TFRecordError(path, j, f"Feature name: {spec.name} is required in schema but could not be "
                                             "found in tfrecord file.")
            raise TFRecordError(path, j, f"Invalid columns_list, column name: {spec.name} does not exist in "
                                         "tfrecord file, check tfrecord files.")
        kind, values = feature
        tname = spec.type
        if kind == BYTES:
            if tname == "string":
                try:
                    arr = np.array([v.decode("utf-8") for v in values], dtype=np.str_)
                except UnicodeDecodeError as e:
                    raise TFRecordError(path, j, f"feature {spec.name} holds bytes that are not UTF-8 text, so it "
                                                 "cannot be a string column; declare it uint8.") from e
            elif tname == "uint8":
                arr = np.frombuffer(bytearray(b"".join(values)), dtype=np.uint8)
            else:
                raise self._type_error(path, j, spec, kind)
        elif tname == "string":
            raise self._type_error(path, j, spec, kind)
        else:
            arr = values.astype(spec.dtype)
        shape = _shape_of(spec, arr.size)
        if shape is None:
            raise TFRecordError(path, j, f"Column shape of {spec.name} defined in schema does not match the shape "
                                         f"actually load: schema {spec.shape}, {arr.size} value(s) in the record.")
        return arr.reshape(shape)

    @staticmethod
    def _type_error(path: str, j: int, spec: ColumnSpec, kind: str) -> TFRecordError:
        return TFRecordError(path, j, f"The data type loaded from the example for feature name: {spec.name} does not "
                                      f"match the predefined type in schema, the actual type: {_KIND_NAME[kind]}, "
                                      f"but the predefined type: {spec.type}")


def _check_compression(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or value not in _COMPRESSIONS:
        raise ValueError(f"Input compression_type can only be either '' (no compression), 'ZLIB', or 'GZIP', "
                         f"but got '{value}'.")
    return value


class TFRecordDataset(RowFilesDataset):
    """Rows from TFRecord files of ``tf.train.Example`` records.

    Columns come from ``schema`` (a ``Schema`` or the path of a schema JSON file) or, without one,
    from the features of the first record of the first file, in sorted name order: int64 lists as
    int64, float lists as float32 and bytes lists as uint8 (the values' bytes joined), each a 1-D
    array. A schema column may also be any numeric type (values are cast), "string" (bytes lists,
    one string per value) or carry a shape (-1 for one unknown dimension).

    Args:
        dataset_files (Union[str, list[str]]): Files or glob patterns; read in sorted order.
        schema (Union[str, Schema], optional): Column names, types and shapes. Default: None.
        columns_list (list[str], optional): Columns to read, in this order. Default: None, all.
        num_samples (int, optional): Rows to read; default: the schema's numRows, else all.
        num_parallel_workers (int, optional): Reader threads. Default: None, the configured number.
        shuffle (Union[bool, Shuffle], optional): ``Shuffle.GLOBAL`` (or True) shuffles files and
            rows, ``Shuffle.FILES`` the file order only, False none. Default: ``Shuffle.GLOBAL``.
        num_shards (int, optional): Split the data into this many shards. Default: None.
        shard_id (int, optional): The shard to read. Default: None.
        shard_equal_rows (bool, optional): Shard by rows, every shard the same size (True), or by
            files (False; needs at least ``num_shards`` files). Default: False.
        cache (DatasetCache, optional): Not used by headrace. Default: None.
        compression_type (str, optional): "", "GZIP" or "ZLIB". Default: None, uncompressed.

    Raises:
        TypeError, ValueError: For bad arguments; ValueError if a pattern matches no file.
        RuntimeError: If a file or record is damaged (the message names the file and record),
            a column is missing, or there are fewer files than shards.

    Examples:
        >>> import os, tempfile, headrace.dataset as ds
        >>> from headrace.dataset._sources.tfrecord import write_tfrecord
        >>> path = os.path.join(tempfile.mkdtemp(), "data.tfrecord")
        >>> write_tfrecord(path, [{"label": ("int64", [i]), "x": ("float", [0.5 * i, 1.0])} for i in range(3)])
        >>> d = ds.TFRecordDataset(path, shuffle=False)
        >>> d.get_col_names(), [(int(r[0][0]), r[1].tolist()) for r in d.create_tuple_iterator(output_numpy=True)]
        (['label', 'x'], [(0, [0.0, 1.0]), (1, [0.5, 1.0]), (2, [1.0, 1.0])])
    """

    def __init__(self, dataset_files, schema=None, columns_list=None, num_samples=None, num_parallel_workers=None,
                 shuffle=None, num_shards=None, shard_id=None, shard_equal_rows=False, cache=None,
                 compression_type=None):
        if schema is not None and not isinstance(schema, (str, os.PathLike, Schema)):
            raise TypeError(f"Argument schema with value {schema!r} is not of type [str, Schema], "
                            f"but got {type(schema)}.")
        if columns_list is not None:
            checks.check_type(columns_list, list, "columns_list")
            columns_list = checks.check_columns(columns_list, "columns_list") if columns_list else None
        self.shard_equal_rows = checks.check_bool(shard_equal_rows, "shard_equal_rows")
        self.compression_type = _check_compression(compression_type)
        self.columns_list = columns_list
        self.schema = schema
        self._schema_specs, self._schema_rows = self._read_schema(schema)
        if shuffle is None:
            shuffle = True
        super().__init__(dataset_files, num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache)
        if self.num_shards is not None and not self.shard_equal_rows and len(self.dataset_files) < self.num_shards:
            raise RuntimeError("Invalid file, numbers of tfrecord file should not less than num_shards when "
                               f"shard_equal_rows is false, but got numbers of tfrecord file: "
                               f"{len(self.dataset_files)}, num_shards: {self.num_shards}")

    @staticmethod
    def _read_schema(schema: Any) -> tuple[list[ColumnSpec] | None, int | None]:
        if schema is None:
            return None, None
        if isinstance(schema, Schema):
            if not schema.columns:
                raise RuntimeError('Invalid data, "columns" field is missing in JSON schema string.')
            return list(schema.columns), schema.num_rows
        return load_schema_file(os.fspath(schema))

    def _equal_rows(self) -> bool:
        return self.shard_equal_rows

    def _row_limit(self) -> int | None:
        return self.num_samples if self.num_samples else self._schema_rows

    def _specs(self, src: TFRecordSource) -> tuple[list[ColumnSpec], bool]:
        if self._schema_specs is not None:
            specs = self._schema_specs
            if self.columns_list is not None:
                by_name = {s.name: s for s in specs}
                for name in self.columns_list:
                    if name not in by_name:
                        raise PipelineError(_OP, f"Invalid data, failed to find column: {name} in JSON schema file.")
                specs = [by_name[n] for n in self.columns_list]
            return specs, True
        counts = src.counts()
        first = next((k for k in range(len(counts)) if counts[k]), None)
        if first is None:
            return [], False
        features = src.example(first, 0)
        specs = [ColumnSpec(name, _KIND_TYPE[features[name][0]], None) for name in sorted(features)]
        if self.columns_list is not None:
            by_name = {s.name: s for s in specs}
            for name in self.columns_list:
                if name not in by_name:
                    raise PipelineError(_OP, f"Invalid columns_list, tfrecord file failed to find column name: {name}",
                                        file=self.dataset_files[first])
            specs = [by_name[n] for n in self.columns_list]
        return specs, False

    def _make_source(self) -> TFRecordSource:
        src = TFRecordSource(self.dataset_files, self.compression_type, [], True)
        specs, strict = self._specs(src)
        src.set_columns(specs, strict)
        return src

    def _no_data_detail(self) -> str:
        return NO_DATA.format(op=_OP, what="tfrecord files", path=self.dataset_files)


def write_tfrecord(path: str, rows: Sequence[dict], compression_type: str = "") -> None:
    """Writes ``rows`` (each ``{name: (kind, values)}``, kinds "int64", "float", "bytes") as a
    TFRecord file of tf.train.Example records, optionally GZIP or ZLIB compressed.

    A small writer for tests, examples and tools; it checks nothing beyond the encodings.
    """
    from headrace.dataset._sources._tfexample import encode_example  # noqa: PLC0415
    out = bytearray()
    for row in rows:
        data = encode_example(row)
        head = struct.pack("<Q", len(data))
        out += head + struct.pack("<I", _crc32c.masked_crc32c(head)) + data + \
            struct.pack("<I", _crc32c.masked_crc32c(data))
    compression = _check_compression(compression_type)
    blob = bytes(out)
    if compression == "GZIP":
        blob = gzip.compress(blob)
    elif compression == "ZLIB":
        blob = zlib.compress(blob)
    with open(path, "wb") as f:
        f.write(blob)
