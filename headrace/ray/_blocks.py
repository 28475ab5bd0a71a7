"""Rows as Ray blocks and back: headrace's row values (tuples of NumPy arrays, as MindDataset yields
them) to Arrow tables, and the columns of a NumPy batch from Ray to the values a headrace op
receives in a local pipeline.

Column values by MindRecord field type:

* ``bytes``: Arrow ``binary`` (the full bytes; MindDataset's ``S`` array of shape (1,) holds the
  same bytes, ``.tobytes()``);
* ``string``: Arrow ``string``;
* ``int32`` / ``int64`` / ``float32`` / ``float64`` scalars: the Arrow type of that name;
* arrays of a fixed shape: Ray's fixed-shape tensor column; arrays with a -1 in their shape: Ray's
  variable-shaped tensor column (every block, whatever shapes it happens to hold).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np
import pyarrow as pa
import ray
from ray.data.extensions import ArrowTensorArray, ArrowVariableShapedTensorArray

from headrace._util.forksafe import fork_safe

#: the column carrying each row's position in its pass (the index headrace keys random draws with)
SAMPLE_COLUMN = "__sample__"
#: the column carrying the pass (epoch) the row was read in
EPOCH_COLUMN = "__epoch__"
KEY_COLUMNS = (SAMPLE_COLUMN, EPOCH_COLUMN)

_SOURCES: OrderedDict[str, Any] = OrderedDict()   # the sources this worker process has read from
_SOURCES_LOCK = fork_safe(threading.Lock())


def shared_source(ref: Any) -> Any:
    """The source behind ``ref`` (an ObjectRef of a ``ray.put`` source), fetched once per worker
    process: a source's row tables travel once to the object store, not with every read task, and
    a worker keeps its open files from one task to the next."""
    key = ref.hex()
    with _SOURCES_LOCK:
        src = _SOURCES.get(key)
        if src is not None:
            _SOURCES.move_to_end(key)
            return src
    src = ray.get(ref)
    with _SOURCES_LOCK:
        _SOURCES[key] = src
        while len(_SOURCES) > 4:
            _SOURCES.popitem(last=False)
    return src


_SCALARS = {"int32": pa.int32(), "int64": pa.int64(), "float32": pa.float32(), "float64": pa.float64()}


def field_kind(field: Any) -> str:
    """'bytes', 'string', 'scalar', 'fixed' or 'ragged' for a MindRecord schema field."""
    if field.type == "bytes":
        return "bytes"
    if field.type == "string":
        return "string"
    if field.shape is None:
        return "scalar"
    return "ragged" if any(int(d) < 0 for d in field.shape) else "fixed"


_BINARY_LIMIT = 2**31 - 1   # the bytes an Arrow ``binary`` array can hold (int32 offsets)


def binary_array(values: Sequence[np.ndarray]) -> pa.Array:
    """An Arrow ``binary`` array of the bytes of ``values`` (each ``S`` array's whole buffer, as
    ``.tobytes()`` gives it), built in one copy: the rows' buffers joined into one Arrow data
    buffer, with their offsets (not a Python bytes object per row, copied again by Arrow)."""
    if not values:
        return pa.array([], type=pa.binary())
    parts = [np.ascontiguousarray(v).reshape(-1).view(np.uint8) for v in values]
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum([p.size for p in parts], out=offsets[1:])
    if offsets[-1] > _BINARY_LIMIT:   # (Arrow splits such a column into chunks itself)
        return pa.array([p.tobytes() for p in parts], type=pa.binary())
    data = np.concatenate(parts)
    return pa.Array.from_buffers(pa.binary(), len(parts),
                                 [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)])


def column_array(kind: str, field_type: str, values: Sequence[np.ndarray]) -> pa.Array:
    """One Arrow column from the values of one column of several rows (MindRecordSource's values)."""
    if kind == "bytes":
        return binary_array(values)
    if kind == "string":
        return pa.array([str(v) for v in values], type=pa.string())
    if kind == "scalar":
        return pa.array(np.array([v[()] for v in values], dtype=_SCALARS[field_type].to_pandas_dtype()),
                        type=_SCALARS[field_type])
    if kind == "fixed":
        return ArrowTensorArray.from_numpy(np.stack(values) if len(values) else np.zeros((0,)))
    arr = np.empty(len(values), dtype=object)
    arr[:] = list(values)
    return ArrowVariableShapedTensorArray.from_numpy(arr)


def rows_to_table(names: Sequence[str], kinds: Sequence[tuple[str, str]], rows: Sequence[tuple],
                  positions: np.ndarray, epoch: int) -> pa.Table:
    """An Arrow table of ``rows`` (tuples in ``names`` order) plus the two key columns."""
    cols = [column_array(kind, ftype, [r[j] for r in rows]) for j, (kind, ftype) in enumerate(kinds)]
    cols.append(pa.array(np.asarray(positions, dtype=np.int64), type=pa.int64()))
    cols.append(pa.array(np.full(len(rows), epoch, dtype=np.int64), type=pa.int64()))
    return pa.Table.from_arrays(cols, names=[*names, *KEY_COLUMNS])


def row_value(value: Any) -> np.ndarray:
    """One cell of a Ray NumPy batch as a local headrace pipeline hands it to an op: bytes as an
    ``S`` array of shape (1,) (MindDataset's bytes), str as a 0-d ``U`` array, numbers as 0-d arrays."""
    if isinstance(value, (bytes, bytearray)):
        b = bytes(value)
        return np.frombuffer(b, dtype=f"S{len(b)}") if b else np.zeros(1, dtype="S1")
    if isinstance(value, str):
        return np.array(value)
    return np.asarray(value)


def batch_column(values: Sequence[np.ndarray]) -> np.ndarray:
    """A column of a NumPy batch for Ray from per-row op outputs: one stacked array when every row
    has the same shape and dtype, else an object array of the rows' arrays (a variable-shaped
    tensor column). Bytes (``S`` arrays of shape (1,) or 0-d) become Python bytes."""
    if values and all(v.dtype.kind == "S" and v.size == 1 for v in values):
        out = np.empty(len(values), dtype=object)
        out[:] = [v.tobytes() for v in values]
        return out
    if values and all(v.dtype.kind == "U" and v.ndim == 0 for v in values):
        return np.array([str(v) for v in values], dtype=object)
    first = values[0] if values else None
    if first is not None and all(v.shape == first.shape and v.dtype == first.dtype for v in values):
        return np.stack(values)
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out
