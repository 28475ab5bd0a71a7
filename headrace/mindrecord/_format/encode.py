"""Checking user rows against the schema and turning them into raw and blob records.

``check_rows`` applies MindSpore's rules for which Python values a field accepts (a row that
breaks one is dropped, never written, and reported as a ``DroppedRow``), plus range checks
MindSpore lacks (an int32 field holding 2**40 would otherwise write a file that fails when read).
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Any, Sequence

import msgpack
import numpy as np

from .rows import DUMMY_BLOB, DUMMY_RAW, compress_ints, encode_raw, join_blob
from .schema import Schema

logger = logging.getLogger("headrace.mindrecord")

# Python type name -> schema types it may fill (MindSpore's table; note "str" and the NumPy scalar
# names map to a single type, so np.int32 fills only int32 fields and np.float32 only float32).
_ACCEPTS = {"int": ("int32", "int64"), "float": ("float32", "float64"), "str": ("string",),
            "bytes": ("bytes",), "int32": ("int32",), "int64": ("int64",), "float32": ("float32",),
            "float64": ("float64",), "ndarray": ("int32", "int64", "float32", "float64")}
_NP_SCALARS = (np.int32, np.int64, np.float32, np.float64)
_INT_RANGE = {"int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1)}


@dataclasses.dataclass(frozen=True, slots=True)
class DroppedRow:
    """A row ``FileWriter.write_raw_data`` did not write because it does not fit the schema.

    Attributes:
        batch: which ``write_raw_data`` call of the writer (0 for the first).
        index: the row's position in that call's list.
        field: the first field (in schema order) that does not fit.
        reason: why, in words.
    """

    batch: int
    index: int
    field: str
    reason: str

    def __str__(self) -> str:
        return f"row {self.index}, field '{self.field}': {self.reason}"


def _row_error(row: dict, schema: Schema) -> tuple[str, str, str] | None:
    """The first problem of a row (fields in schema order) as (field, reason, the end of
    MindSpore's log message), or None."""
    for name, field in schema.fields.items():
        if name not in row:
            return name, "the field is missing", f"there is not field: '{name}' in the raw data."
        value = row[name]
        tname = type(value).__name__
        accepted = _ACCEPTS.get(tname)
        if accepted is None:
            return (name, f"a value of type '{tname}' cannot be stored",
                    f"data type: '{tname}' for field: '{name}' is not matched.")
        if field.type not in accepted:
            return (name, f"a value of type '{tname}' does not fit a field of type {field.type}",
                    f"data type: '{field.type}' for field: '{name}' is not matched.")
        if tname == "ndarray":
            if field.shape is None:
                return (name, f"an array does not fit a field of type {field.type} without a shape",
                        f"data shape for field: '{name}' is not specified.")
            if str(value.dtype) != field.type:
                return (name, f"an array of dtype {value.dtype} does not fit a field of type {field.type}",
                        f"data type: '{value.dtype}' for field: '{name}' is not matched.")
            if not _fits_shape(value.size, field.shape):
                return (name, f"an array of shape {value.shape} does not fit the shape {list(field.shape)}",
                        f"data shape: '{value.shape}' for field: '{name}' is not matched.")
        elif field.type in _INT_RANGE:
            lo, hi = _INT_RANGE[field.type]
            if not lo <= int(value) <= hi:
                return (name, f"the value {int(value)} is out of the range of {field.type}",
                        f"data value: {int(value)} for field: '{name}' is out of the range of {field.type}.")
    return None


def _fits_shape(size: int, shape: tuple[int, ...]) -> bool:
    known = 1
    for d in shape:
        if d != -1:
            known *= d
    if -1 in shape:
        return known > 0 and size % known == 0
    return size == known


def check_rows(schema: Schema, rows: Sequence[dict], batch: int = 0,
               log: bool = True) -> tuple[list[dict], list[DroppedRow]]:
    """The rows that fit the schema, and what was dropped; with ``log``, MindSpore's WARNING line
    per dropped row (last row first, as MindSpore does)."""
    good = []
    dropped = []
    messages = []
    for i, row in enumerate(rows):
        problem = _row_error(row, schema)
        if problem is None:
            good.append(row)
        else:
            dropped.append(DroppedRow(batch, i, problem[0], problem[1]))
            messages.append(f"for schema, {i} th data is wrong, {problem[2]}")
    for msg in reversed(messages if log else []):
        logger.warning(msg)
    return good, dropped


@dataclasses.dataclass(slots=True)
class EncodedRow:
    """One row ready for the page writer.

    Attributes:
        raw: the raw record payload (MessagePack).
        blob: buffers that, written back to back, form the blob record payload.
        blob_len: total length of ``blob``.
        index_values: values of the index fields, in index-field order.
        saved: bytes saved by integer-array compression.
    """

    raw: bytes
    blob: list
    blob_len: int
    index_values: tuple
    saved: int = 0


class RowEncoder:
    """Encodes checked rows for one schema and one set of index fields."""

    def __init__(self, schema: Schema, index_fields: Sequence[str], compress: bool = True) -> None:
        self.schema = schema
        self.raw_keys = schema.raw_fields
        self.blob_keys = schema.blob_fields
        self.index_fields = list(index_fields)
        self.compress = compress and schema.has_integer_array
        self._int_arrays = {n for n in self.blob_keys
                            if schema.fields[n].shape is not None and schema.fields[n].type in ("int32", "int64")}
        # the common case "one bytes field": its payload is the value itself
        self._one_bytes = (self.blob_keys[0] if len(self.blob_keys) == 1
                           and schema.fields[self.blob_keys[0]].type == "bytes" else None)
        # without float fields the raw record is what msgpack's own packer writes for the map
        # (same smallest int and str encodings as ours, keys in the order given); floats need
        # the float32-when-exact rule, which only encode_raw applies
        no_floats = not any(schema.fields[k].type in ("float32", "float64") for k in self.raw_keys)
        self._pack = msgpack.Packer(use_bin_type=True, autoreset=True).pack if no_floats else None

    def encode_many(self, rows: Sequence[dict]) -> list[EncodedRow]:
        """``[self.encode(r) for r in rows]``, with a faster loop for the common schemas."""
        one, pack = self._one_bytes, self._pack
        if one is None or pack is None or not self.raw_keys:
            return [self.encode(r) for r in rows]
        index_fields = self.index_fields
        out = []
        for row in rows:
            blob = row[one]
            if type(blob) is not bytes:
                out.append(self._encode(row))
                continue
            raw_vals = self._raw_values(row)
            out.append(EncodedRow(pack(raw_vals), [blob], len(blob), tuple([raw_vals[f] for f in index_fields]), 0))
        return out

    def encode(self, row: dict) -> EncodedRow:
        one = self._one_bytes
        if one is not None and type(row[one]) is bytes:
            blob = row[one]
            raw_vals = self._raw_values(row)
            raw = encode_raw(raw_vals, self.raw_keys) if self.raw_keys else DUMMY_RAW
            return EncodedRow(raw, [blob], len(blob), tuple([raw_vals[f] for f in self.index_fields]), 0)
        return self._encode(row)

    def _raw_values(self, row: dict) -> dict:
        """The row's raw (non-blob) fields, NumPy scalars as Python values, in schema order."""
        raw_vals = {}
        for k in self.raw_keys:
            v = row[k]
            if isinstance(v, _NP_SCALARS):
                v = v.item()
            raw_vals[k] = v
        return raw_vals

    def _encode(self, row: dict) -> EncodedRow:
        raw_vals = self._raw_values(row)
        raw = encode_raw(raw_vals, self.raw_keys) if self.raw_keys else DUMMY_RAW
        saved = 0
        if not self.blob_keys:
            parts: list = [DUMMY_BLOB]
        else:
            payloads = []
            for k in self.blob_keys:
                v = row[k]
                if isinstance(v, np.ndarray):
                    if self.compress and k in self._int_arrays:
                        plain = v.size * v.itemsize
                        v = compress_ints(v)
                        # MindSpore counts an empty array as saving nothing when it is the only
                        # blob field (4 bytes lost when there are others)
                        if plain or len(self.blob_keys) > 1:
                            saved += plain - len(v)
                    elif v.flags.c_contiguous:
                        v = memoryview(v.reshape(-1)).cast("B")
                    else:
                        v = v.tobytes()
                payloads.append(v)
            parts = join_blob(payloads)
        blob_len = sum(len(p) for p in parts)
        index_values = tuple(raw_vals[f] for f in self.index_fields)
        return EncodedRow(raw, parts, blob_len, index_values, saved)


def save_schema(columns: Sequence[str], row: Sequence[np.ndarray]) -> tuple[dict, list[str]]:
    """MindSpore's ``Dataset.save`` type mapping: a schema dict and the index fields for one row.

    Scalars (0-d arrays) of bool/int8/uint8/int16/uint16/int32 become ``int32``; uint32/int64/uint64
    become ``int64``; float16/float32 ``float32``; float64 ``float64``; ``U`` strings ``string`` and
    ``S`` bytes ``bytes`` (also of shape (1,), as MindDataset yields them). Arrays with one or more
    dimensions get shape ``[-1, d1, ...]`` (1-D: ``[-1]``).
    Index fields are the scalar non-bytes columns, in column order.

    Raises:
        ValueError: a column has a type MindRecord cannot hold (multi-dimensional strings or bytes,
            complex numbers, objects).
    """
    schema: dict[str, dict] = {}
    index = []
    for name, value in zip(columns, row):
        arr = np.asarray(value)
        kind = arr.dtype.kind
        if kind in "US":
            # bytes of shape (1,) are what MindDataset yields for a bytes field: stored as bytes
            if arr.ndim > 0 and not (kind == "S" and arr.shape == (1,)):
                what = "string" if kind == "U" else "bytes"
                raise ValueError(f"Currently, multi-dimensional {what} cannot be converted to MindRecord "
                                 f"(column '{name}' has shape {arr.shape}).")
            schema[name] = {"type": "string" if kind == "U" else "bytes"}
            if kind == "U":
                index.append(name)
            continue
        t = save_type(arr.dtype, name)
        if arr.ndim == 0:
            schema[name] = {"type": t}
            index.append(name)
        else:
            schema[name] = {"type": t, "shape": [-1] + list(arr.shape[1:])}
    return schema, index


def save_type(dtype: np.dtype, name: str = "") -> str:
    """The MindRecord type ``Dataset.save`` stores a NumPy dtype as."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_ or dtype in (np.int8, np.uint8, np.int16, np.uint16, np.int32):
        return "int32"
    if dtype in (np.uint32, np.int64, np.uint64):
        return "int64"
    if dtype in (np.float16, np.float32):
        return "float32"
    if dtype == np.float64:
        return "float64"
    raise ValueError(f"Column '{name}' of type {dtype} cannot be stored in MindRecord; supported types are "
                     f"bool, int8-64, uint8-64, float16-64, str and bytes.")


DYNAMIC_SHAPE = ("Tensor with dynamic shape do not currently support saving. Except for the shape of dimension 0, "
                 "the other dimension shapes must be fixed. You can reshape the Tensor to a fixed shape before saving.")


def save_row(schema: dict, columns: Sequence[str], row: Sequence[np.ndarray]) -> dict:
    """Converts one pipeline row to the dict ``FileWriter.write_raw_data`` takes, per ``save_schema``.

    Raises:
        RuntimeError: an array column's shape differs from the first row's beyond dimension 0
            (MindSpore's text, then the column and both shapes).
    """
    out: dict[str, Any] = {}
    for name, value in zip(columns, row):
        spec = schema[name]
        arr = np.asarray(value)
        t = spec["type"]
        if t == "string":
            out[name] = str(arr.item()) if arr.ndim == 0 else str(arr.reshape(-1)[0])
        elif t == "bytes":
            # a 0-d 'S' array's item drops NumPy's trailing-NUL padding (b'' is stored as b'', as in
            # MindSpore); anything else is stored as its raw bytes
            out[name] = arr.item() if arr.ndim == 0 and arr.dtype.kind == "S" else arr.tobytes()
        elif "shape" in spec:
            if arr.shape[1:] != tuple(spec["shape"][1:]) or arr.ndim == 0:
                raise RuntimeError(f"{DYNAMIC_SHAPE} Column '{name}' has shape {arr.shape} here, but "
                                   f"{tuple(spec['shape'])} (-1: any) in the first row.")
            out[name] = np.ascontiguousarray(arr, dtype=t)
        else:
            out[name] = arr.astype(t).item()
    return out
