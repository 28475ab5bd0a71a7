"""TFRecordDataset: ``tf.train.Example`` records from TFRecord files, without TensorFlow.

The file format lives in ``headrace._codecs.tfrecord``. The first read of a dataset makes
one pass over each file to index its records (offsets only; headers are CRC-checked then), so
rows are read by index; each record's data CRC is checked when it is read. GZIP / ZLIB
compressed files are decompressed into memory on first use (a compressed stream cannot be
read by offset).
"""
from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from headrace._util import checks
from headrace._util.errors import PipelineError
from headrace.dataset._schema import ColumnSpec, Schema, load_schema_file
from headrace.dataset._sources._files import NO_DATA, RowFilesDataset, RowsOfFiles
from headrace.dataset.samplers import Shuffle
from headrace._codecs.tfexample import BYTES, FLOAT, INT64, ExampleError, parse_example
from headrace._codecs.tfrecord import (
    TFRecordError, check_compression, decompress, read_record, scan_records, write_tfrecord,
)

__all__ = ["TFRecordDataset", "TFRecordSource", "write_tfrecord"]

_OP = "TFRecordDataset"
_KIND_TYPE = {INT64: "int64", FLOAT: "float32", BYTES: "uint8"}
_KIND_NAME = {INT64: "int64", FLOAT: "float32", BYTES: "string"}
# a damaged first record, or a file that cannot be opened or decompressed: not a TFRecord file
_NOT_TFRECORD = ("Invalid TFRecord file, record 0:", "Invalid TFRecord file:")


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


class TFRecordSource(RowsOfFiles):
    """Rows by index from TFRecord files: one column per ``ColumnSpec``. The index holds each
    file's record (offsets, lengths)."""

    def __init__(self, files: Sequence[str], compression: str, specs: Sequence[ColumnSpec], strict: bool) -> None:
        super().__init__(files)
        self.compression = compression
        self.specs = list(specs)
        self.column_names = [s.name for s in self.specs]
        self.strict = strict  # True: columns come from a schema (its messages differ)
        self._data: dict[int, bytes] = {}
        # (num_samples, num_shards) of a read of compressed files with a row count, for the message
        # of check_files (the files of each pass are checked as MindSpore checks them)
        self.compressed_rows: tuple[int, int] = (0, 1)

    def set_columns(self, specs: Sequence[ColumnSpec], strict: bool) -> None:
        """Sets the columns to read (once the schema is known)."""
        self.specs = list(specs)
        self.column_names = [s.name for s in self.specs]
        self.strict = strict

    def __getstate__(self) -> dict:
        return self._state(_data={})  # decompressed files are re-read by each process

    # -- index -------------------------------------------------------------------------------
    def _file_data(self, k: int) -> bytes | None:
        if not self.compression:
            return None
        data = self._data.get(k)
        if data is None:
            with self._lock:
                data = self._data.get(k)
                if data is None:
                    data = self._data[k] = decompress(self.files[k], self.compression)
        return data

    def _build_files(self) -> list[tuple[np.ndarray, np.ndarray]]:
        built, bad = [], []
        for k, path in enumerate(self.files):
            try:
                built.append(scan_records(self._file_data(k), path))
            except TFRecordError as e:
                if not str(e.detail).startswith(_NOT_TFRECORD):
                    raise
                bad.append((path, e.detail))
        if bad:
            # files MindSpore would not open as TFRecord at all: its message naming every one, then
            # headrace's reason for each
            listed = "".join(f"\n    {path}: {detail}" for path, detail in bad)
            raise PipelineError(_OP, "Invalid file. The following files either cannot be opened, or are not valid "
                                     f"TFRecordDataset files:{listed}", file=bad[0][0])
        return built

    # -- records -----------------------------------------------------------------------------
    def record(self, k: int, j: int) -> bytes:
        """The data of record ``j`` of file ``k``, CRC-checked."""
        offsets, lengths = self.ensure()[k]
        return read_record(self.files[k], self._file_data(k), int(offsets[j]), int(lengths[j]), j)

    def example(self, k: int, j: int) -> dict:
        body = self.record(k, j)
        try:
            return parse_example(body)
        except ExampleError as e:
            raise TFRecordError(self.files[k], j, f"the record is not a valid tf.train.Example ({e}).") from e

    def check_files(self, keys: np.ndarray, need: int) -> None:
        """MindSpore's check of a pass over compressed files with a row count: each file the pass
        reads (``keys``, in its order) must hold the ``need`` rows taken from it. Its message gives
        ``num_samples // num_shards`` as the rows per file."""
        counts = self.counts()
        num_samples, shards = self.compressed_rows
        for k in keys:
            if counts[k] < need:
                path = self.files[int(k)]
                raise PipelineError(_OP, f"This tfrecord file: {path}, does not meet minimum rows per shard requirement: "
                                         f"{num_samples} and {num_samples // shards} number of rows per file, but got "
                                         f"{int(counts[k])} number of rows in this file.", file=path)

    def read(self, index: int) -> tuple:
        k, j = self.locate(index)
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
        num_samples (int, optional): Rows to read; default: the schema's numRows, else all. With
            ``compression_type``, as MindSpore: each shard reads ``len(files) // num_shards`` files (at
            positions ``shard_id, shard_id + num_shards, ...`` of the pass's file order) and
            ``num_samples // that`` rows of each; a file holding fewer is an error.
        num_parallel_workers (int, optional): Reader threads. Default: None, the configured number.
        shuffle (Union[bool, Shuffle], optional): ``Shuffle.GLOBAL`` (or True) shuffles files and
            rows, ``Shuffle.FILES`` the file order only, False none. Default: ``Shuffle.GLOBAL``.
        num_shards (int, optional): Split the data into this many shards. Default: None.
        shard_id (int, optional): The shard to read. Default: None.
        shard_equal_rows (bool, optional): Shard by rows, every shard the same size (True), or by
            files (False; needs at least ``num_shards`` files). Default: False.
        cache (DatasetCache, optional): cache the rows (``headrace.dataset.cache``). Default: None.
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
                 shuffle=Shuffle.GLOBAL, num_shards=None, shard_id=None, shard_equal_rows=False, cache=None,
                 compression_type=None):
        if schema is not None:
            checks.check_type(schema, (str, os.PathLike, Schema), "schema")
        if columns_list is not None:
            checks.check_type(columns_list, list, "columns_list")
            columns_list = checks.check_columns(columns_list, "columns_list") if columns_list else None
        self.shard_equal_rows = checks.check_bool(shard_equal_rows, "shard_equal_rows")
        self.compression_type = check_compression(compression_type)
        self.columns_list = columns_list
        self.schema = schema
        self._schema_specs, self._schema_rows = self._read_schema(schema)
        if shuffle is None:
            shuffle = True
        super().__init__(dataset_files, num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache)
        if (self.compression_type and self.num_samples and self.num_shards is not None
                and len(self.dataset_files) < self.num_shards):
            raise ValueError("When compression_type is provided, the number of dataset files cannot be less than "
                             f"num_shards, but the actual number of files is {len(self.dataset_files)} and actual "
                             f"num_shards is {self.num_shards}.")
        self._check_rows_per_file()
        if self.num_shards is not None and not self.shard_equal_rows and len(self.dataset_files) < self.num_shards:
            raise RuntimeError("Invalid file, numbers of tfrecord file should not less than num_shards when "
                               f"shard_equal_rows is false, but got numbers of tfrecord file: "
                               f"{len(self.dataset_files)}, num_shards: {self.num_shards}")

    def _check_rows_per_file(self) -> None:
        """Compressed files with a row count give ``row count // files per shard`` rows of each file
        (``headrace/_engine/samplers/files.py``): a count below the files per shard would give none.
        MindSpore 2.10 then yields no rows (its size says the count) or, shuffled, fails in its
        shuffle ("Unable to fetch a single row for shuffle buffer"); headrace refuses it here."""
        limit = self._row_limit()
        files = len(self.dataset_files) // (self.num_shards or 1)
        if self.compression_type and limit and files and limit < files:
            what = "num_samples" if self.num_samples else "the schema's numRows"
            raise ValueError(f"When compression_type is provided, each shard reads {files} files and "
                             f"{what} // {files} rows of each, but {what} is {limit}, so no row would be read: "
                             f"{what} must be at least {files}.")

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

    def _per_file_layout(self, src: TFRecordSource) -> tuple[bool, Any]:
        return bool(self.compression_type), src.check_files

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
        limit = self._row_limit()
        if self.compression_type and limit:
            src.compressed_rows = (int(limit), int(self.num_shards or 1))
        specs, strict = self._specs(src)
        src.set_columns(specs, strict)
        return src

    def _no_data_detail(self) -> str:
        return NO_DATA.format(op=_OP, what="tfrecord files", path=self.dataset_files)
