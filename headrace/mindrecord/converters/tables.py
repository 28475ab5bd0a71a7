"""Tabular and TFRecord data to MindRecord: CsvToMR, TFRecordToMR (no pandas, no TensorFlow)."""
from __future__ import annotations

import csv
import math
import os
import string
from typing import Any, Iterator, Sequence

import numpy as np

from .._status import SUCCESS
from ._common import check_filename, write_rows
from headrace._codecs.tfexample import BYTES, ExampleError, parse_example
from headrace._codecs.tfrecord import TFRecordError, read_record, scan_records

__all__ = ["CsvToMR", "FixedLenFeature", "TFRecordToMR"]

# Texts pandas reads as missing values (its default ``na_values``).
_NA = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A",
       "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}
_BOOLS = {"True": True, "TRUE": True, "true": True, "False": False, "FALSE": False, "false": False}
_INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1


def _as_int(text: str) -> int | None:
    try:
        value = int(text.strip())
    except ValueError:
        return None
    return value if _INT64_MIN <= value <= _INT64_MAX else None


def _as_float(text: str) -> float | None:
    try:
        return float(text.strip())
    except ValueError:
        return None


def infer_column(values: Sequence[str]) -> tuple[str, list[Any]]:
    """The MindRecord type and values of a CSV column, inferred the way ``pandas.read_csv`` types it:
    all integers -> int64; numbers with gaps or decimals -> float64 (gaps become NaN); all
    True/False -> int32 (1/0); otherwise string (gaps become "")."""
    present = [v for v in values if v not in _NA]
    if present and len(present) == len(values):
        ints = [_as_int(v) for v in values]
        if all(i is not None for i in ints):
            return "int64", ints
    if present and all(_as_float(v) is not None for v in present):
        return "float64", [math.nan if v in _NA else _as_float(v) for v in values]
    if present and len(present) == len(values) and all(v in _BOOLS for v in values):
        return "int32", [int(_BOOLS[v]) for v in values]
    return "string", [v if v not in _NA else "" for v in values]


class CsvToMR:
    """Converts a CSV file (first line: column names) to MindRecord.

    Each column becomes an indexed field typed as pandas would read it: int64, float64, int32 for
    True/False, else string. (MindSpore uses pandas; headrace infers the same types itself.)

    Args:
        source (str): The CSV file.
        destination (str): The MindRecord file to write.
        columns_list (list[str], optional): Columns to keep, in this order. Default: None, all.
        partition_number (int, optional): Number of files to split the output into. Default: 1.

    Raises:
        ValueError: If an argument is invalid.

    Examples:
        >>> from headrace.mindrecord import CsvToMR
        >>> CsvToMR("/path/to/data.csv", "/path/to/data.mindrecord").transform()  # doctest: +SKIP
    """

    def __init__(self, source, destination, columns_list=None, partition_number=1):
        if not isinstance(source, str):
            raise ValueError("The parameter source must be str.")
        check_filename(source)
        if columns_list:
            if not isinstance(columns_list, list) or not all(isinstance(c, str) for c in columns_list):
                raise ValueError("The parameter columns_list must be list of str.")
        elif columns_list is not None and not isinstance(columns_list, list):
            raise ValueError("The parameter columns_list must be list of str.")
        if not isinstance(destination, str):
            raise ValueError("The parameter destination must be str.")
        check_filename(destination)
        if partition_number is None or isinstance(partition_number, bool) or not isinstance(partition_number, int):
            raise ValueError("The parameter partition_number must be int")
        self.source = source
        self.destination = destination
        self.columns_list = columns_list or None
        self.partition_number = partition_number

    def _table(self) -> tuple[list[str], dict[str, tuple[str, list]]]:
        if not os.path.exists(self.source):
            raise IOError(f"Csv file {self.source} do not exist.")
        with open(self.source, newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                raise RuntimeError(f"Failed to generate schema from csv file: {self.source} is empty.")
            records = [r for r in reader if r]
        for k, rec in enumerate(records, 2):
            if len(rec) != len(header):
                raise ValueError(f"Line {k} of {self.source} has {len(rec)} fields, but the header names "
                                 f"{len(header)} columns.")
        columns = self.columns_list or header
        for col in columns:
            if col not in header:
                raise RuntimeError(f"The parameter columns_list is illegal, column {col} does not exist.")
        for col in columns:
            if col.isdigit():
                raise ValueError(f"The first line content: {col} of the CSV file is used as a column name and does "
                                 "not allow starting with a number.")
        typed = {col: infer_column([r[header.index(col)] for r in records]) for col in columns}
        return list(columns), typed

    def run(self):
        """Converts and returns SUCCESS."""
        columns, typed = self._table()
        schema = {c: {"type": typed[c][0]} for c in columns}
        count = len(typed[columns[0]][1]) if columns else 0
        rows = ({c: typed[c][1][i] for c in columns} for i in range(count))
        write_rows(self.destination, self.partition_number, schema, "csv_schema", rows, count, columns,
                   label="CSV", header_size=1 << 24, page_size=1 << 26)
        return SUCCESS

    def transform(self):
        """Writes the MindRecord files."""
        self.run()


# --------------------------------------------------------------------------------------------
# TFRecord
# --------------------------------------------------------------------------------------------

class FixedLenFeature:
    """A fixed-length feature of a tf.train.Example, like ``tf.io.FixedLenFeature`` (which
    ``TFRecordToMR`` also accepts, without needing TensorFlow for anything else).

    Args:
        shape (list[int]): ``[]`` for a scalar, ``[n]`` for n values.
        dtype (str or dtype): "string", "int64", "float32", ... (TensorFlow or NumPy dtypes work too).
        default_value (optional): Used when a record lacks the feature. Default: None (an error).
    """

    def __init__(self, shape, dtype, default_value=None):
        self.shape = shape
        self.dtype = dtype
        self.default_value = default_value

    def __repr__(self) -> str:
        return f"FixedLenFeature(shape={self.shape}, dtype={_dtype_name(self.dtype)}, default_value={self.default_value})"


_TF_TO_MR = {"string": "string", "int8": "int32", "int16": "int32", "int32": "int32", "int64": "int64",
             "uint8": "int32", "uint16": "int32", "uint32": "int64", "uint64": "int64", "float16": "float32",
             "half": "float32", "float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
             "bool": "int32"}
_MR_NP = {"int32": np.int32, "int64": np.int64, "float32": np.float32, "float64": np.float64}


def _dtype_name(dtype: Any) -> str:
    if isinstance(dtype, str):
        return dtype
    name = getattr(dtype, "name", None)  # tf.DType and numpy dtypes
    if isinstance(name, str):
        return name
    try:
        return np.dtype(dtype).name
    except TypeError:
        return str(dtype)


def _cast_name(key: str) -> str:
    """A field name with every punctuation mark or space except '_' replaced by '_'."""
    special = set(string.punctuation + " ") - {"_"}
    return "".join("_" if ch in special else ch for ch in key)


class TFRecordToMR:
    """Converts a TFRecord file of tf.train.Example records to MindRecord.

    ``feature_dict`` maps feature names to fixed-length features (``FixedLenFeature`` from
    ``headrace.mindrecord``, or ``tf.io.FixedLenFeature``): a scalar (``shape=[]``) becomes a
    scalar field, ``shape=[n]`` an array field of n values. Types map as in MindSpore: string ->
    string (or bytes for the names in ``bytes_fields``), int8/16/32, uint8/16 and bool -> int32,
    int64 and uint32/64 -> int64, float16/32 -> float32, float64 -> float64. Field names have
    punctuation and spaces replaced by "_". Records are CRC-checked; a damaged one names the file
    and record.

    Args:
        source (str): The TFRecord file.
        destination (str): The MindRecord file to write.
        feature_dict (dict[str, FixedLenFeature]): The features to convert.
        bytes_fields (list[str], optional): String features to store as raw bytes (images). Default: None.

    Raises:
        ValueError: If an argument is invalid or a record does not match ``feature_dict``.

    Examples:
        >>> from headrace.mindrecord import FixedLenFeature, TFRecordToMR
        >>> features = {"image": FixedLenFeature([], "string"), "label": FixedLenFeature([], "int64")}
        >>> TFRecordToMR("/path/to/data.tfrecord", "/path/to/data.mindrecord", features, ["image"]).transform()  # doctest: +SKIP
    """

    def __init__(self, source, destination, feature_dict, bytes_fields=None):
        if not isinstance(source, str):
            raise ValueError("Parameter source must be string.")
        check_filename(source, "source")
        if not isinstance(destination, str):
            raise ValueError("Parameter destination must be string.")
        check_filename(destination, "destination")
        if feature_dict is None or not isinstance(feature_dict, dict):
            raise ValueError("Parameter feature_dict is None or not dict.")
        for _, val in feature_dict.items():
            if not (hasattr(val, "shape") and hasattr(val, "dtype")):
                raise ValueError(f"Parameter feature_dict: {feature_dict} only support FixedLenFeature.")
        self.source = source
        self.destination = destination
        self.feature_dict = feature_dict
        casted = []
        if bytes_fields is not None:
            if not isinstance(bytes_fields, list):
                raise ValueError(f"Parameter bytes_fields: {bytes_fields} must be list(str).")
            for item in bytes_fields:
                if not isinstance(item, str):
                    raise ValueError(f"Parameter bytes_fields's item: {item} is not str.")
                if item not in feature_dict:
                    raise ValueError(f"Parameter bytes_fields's item: {item} is not in feature_dict: {feature_dict}.")
                if not isinstance(feature_dict[item].shape, (list, tuple)):
                    raise ValueError(f"Parameter feature_dict[{item}].shape should be a list.")
                if _dtype_name(feature_dict[item].dtype) != "string":
                    raise ValueError(f"Parameter bytes_field: {item} should be tf.string in feature_dict.")
                casted.append(_cast_name(item))
        self.bytes_fields_list = casted
        self.scalar_set: set[str] = set()
        self.list_set: set[str] = set()
        self.mindrecord_schema = self._schema()

    def _mr_type(self, key: str, dtype: Any) -> str:
        name = _dtype_name(dtype)
        if name not in _TF_TO_MR:
            raise ValueError(f"Type {name} of feature {key} is not supported in MindRecord.")
        return _TF_TO_MR[name]

    def _schema(self) -> dict:
        schema = {}
        for key, val in self.feature_dict.items():
            name = _cast_name(key)
            shape = list(val.shape) if val.shape is not None else []
            if not shape:
                self.scalar_set.add(name)
                schema[name] = {"type": "bytes"} if name in self.bytes_fields_list else \
                    {"type": self._mr_type(key, val.dtype)}
                continue
            if len(shape) != 1:
                raise ValueError(f"Parameter len(feature_dict[{key}].shape) should be 1.")
            if not isinstance(shape[0], int) or isinstance(shape[0], bool):
                raise ValueError("Invalid parameter feature_dict, value and type mismatch, please check item of "
                                 f"feature_dict[\"{key}\"].")
            if shape[0] < 1:
                raise ValueError(f"Parameter feature_dict[{key}].shape[0] should > 0")
            if _dtype_name(val.dtype) == "string":
                raise ValueError(f"Parameter feature_dict[{key}].dtype is tf.string which shape[0] is not None. It is "
                                 "not supported.")
            self.list_set.add(name)
            schema[name] = {"type": self._mr_type(key, val.dtype), "shape": [shape[0]]}
        return schema

    def _convert(self, features: dict, path: str, record: int) -> dict:
        out = {}
        for key, spec in self.feature_dict.items():
            name = _cast_name(key)
            shape = list(spec.shape) if spec.shape is not None else []
            want = int(np.prod(shape)) if shape else 1
            feat = features.get(key)
            if feat is None:
                if spec.default_value is None:
                    raise ValueError(f"TFRecord feature_dict parameter error: record {record} of {path} has no "
                                     f"feature {key!r}.")
                values = list(np.ravel(spec.default_value)) if shape else [spec.default_value]
                kind = BYTES if _dtype_name(spec.dtype) == "string" else "number"
            else:
                kind, values = feat
            if len(values) != want:
                raise ValueError(f"TFRecord feature_dict parameter error: feature {key!r} of record {record} in {path} "
                                 f"has {len(values)} value(s), but feature_dict says shape {shape}.")
            is_string = _dtype_name(spec.dtype) == "string"
            if is_string != (kind == BYTES):
                raise ValueError(f"TFRecord feature_dict parameter error: feature {key!r} of record {record} in {path} "
                                 f"holds {'bytes' if kind == BYTES else 'numbers'}, but feature_dict says "
                                 f"{_dtype_name(spec.dtype)}.")
            mr = self.mindrecord_schema[name]["type"]
            if name in self.scalar_set:
                v = values[0]
                if is_string:
                    v = bytes(v) if isinstance(v, (bytes, bytearray)) else str(v).encode()
                    out[name] = v if name in self.bytes_fields_list else v.decode("utf-8")
                elif mr.startswith("int"):
                    out[name] = int(v)
                else:
                    out[name] = float(v)
            else:
                out[name] = np.asarray(values, dtype=_MR_NP[mr])
        return out

    def _index(self) -> tuple[np.ndarray, np.ndarray]:
        if not os.path.isfile(self.source):
            raise ValueError(f"TFRecord file {self.source} does not exist.")
        return scan_records(None, self.source)

    def tfrecord_iterator(self) -> Iterator[dict]:
        """The records of ``source`` as MindRecord rows (dicts), in file order."""
        offsets, lengths = self._index()
        for j, (off, length) in enumerate(zip(offsets.tolist(), lengths.tolist())):
            body = read_record(self.source, None, off, length, j)
            try:
                features = parse_example(body)
            except ExampleError as e:
                raise TFRecordError(self.source, j, f"the record is not a valid tf.train.Example ({e}).",
                                    op="TFRecordToMR") from e
            yield self._convert(features, self.source, j)

    tfrecord_iterator_oldversion = tfrecord_iterator

    def run(self):
        """Converts and returns SUCCESS."""
        total = len(self._index()[0])
        write_rows(self.destination, 1, self.mindrecord_schema, "TFRecord to MindRecord", self.tfrecord_iterator(),
                   total, None, label="TFRecord", parallel=True)
        return SUCCESS

    def transform(self):
        """Writes the MindRecord file."""
        self.run()
