"""Schema: column names, types and shapes for TFRecordDataset and RandomDataset.

The JSON layout is MindSpore's: ``{"columns": [...], "datasetType": ..., "numRows": ...}`` where a
column is ``{"name", "type", "rank", "shape"}``, or ``"columns"`` is a dict from name to
``{"type", "rank", "shape"}``. A list keeps its order; a dict's columns come in name order
(code point order), as MindSpore reads them. Column types are MindSpore's names: ``int8`` ... ``uint64``,
``float16`` / ``float32`` / ``float64``, ``bool`` and ``string``.

A column's shape is a list (``[]`` for a scalar; -1 for one unknown dimension) or None, meaning
"whatever the data holds" (a 1-D array for TFRecord features). ``add_column`` without a shape
gives None; columns read from JSON without a shape get ``[]``, as in MindSpore. A schema file
given by path to ``TFRecordDataset`` keeps such columns free (rank 0 still means a scalar); see
:func:`load_schema_file`.
"""
from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from headrace._util import checks

__all__ = ["Schema", "ColumnSpec", "load_schema_file"]

TYPE_NAMES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32",
              "float64", "bool", "string")
_TOP_KEYS = ("columns", "datasetType", "numRows")


class ColumnSpec:
    """One column: ``name``, ``type`` (a MindSpore type name) and ``shape`` (list or None)."""

    __slots__ = ("name", "type", "shape")

    def __init__(self, name: str, type_name: str, shape: list[int] | None) -> None:
        self.name = name
        self.type = type_name
        self.shape = shape

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype of the column (``<U`` for strings)."""
        return np.dtype(np.str_) if self.type == "string" else np.dtype(self.type)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "rank": 1 if self.shape is None else len(self.shape)}
        if self.shape is not None:
            out["shape"] = list(self.shape)
        out["type"] = self.type
        return out

    def __repr__(self) -> str:
        return f"ColumnSpec({self.name!r}, {self.type!r}, {self.shape!r})"


def type_name(de_type: Any) -> str:
    """MindSpore's name for a column type given as a name, an ``mstype`` or a NumPy dtype."""
    if isinstance(de_type, str):
        if de_type in TYPE_NAMES:
            return de_type
        raise TypeError(f"Unknown column type. Got {de_type!r}; use one of {list(TYPE_NAMES)} or an mstype.")
    name = getattr(de_type, "name", None)
    if getattr(de_type, "np_dtype", None) is not None and name in TYPE_NAMES:
        return name  # headrace.common.dtype / mstype objects
    try:
        dt = np.dtype(de_type)
    except TypeError:
        dt = None
    if dt is not None and not isinstance(de_type, (int, float)):
        if dt.kind in "US":
            return "string"
        if dt.name in TYPE_NAMES:
            return dt.name
    raise TypeError(f"Unknown column type. Got {de_type!r}; use one of {list(TYPE_NAMES)} or an mstype.")


def _check_shape(shape: Any, where: str) -> list[int]:
    checks.check_type(shape, list, where)
    for i, d in enumerate(shape):
        checks.check_int(d, f"{where}[{i}]")
        if d < -1:
            raise ValueError(f"{where}[{i}] must be -1 or a non-negative int, but got {d}.")
    if sum(1 for d in shape if d == -1) > 1:
        raise ValueError(f"{where} may hold at most one -1, but got {shape}.")
    return [int(d) for d in shape]


def _column_from_json(entry: Any, name: str | None, *, free_shapes: bool) -> ColumnSpec:
    if not isinstance(entry, dict):
        raise RuntimeError("columns must be dict or list, columns contain name, type, shape(optional).")
    if name is None:
        if "name" not in entry:
            raise RuntimeError("Column's name is missing")
        name = entry["name"]
    if not isinstance(name, str):
        raise RuntimeError(f"Column's name must be a string, but got {name!r}.")
    if "type" not in entry:
        raise RuntimeError("Column's type is missing")
    try:
        tname = type_name(entry["type"])
    except TypeError:
        raise RuntimeError(f"Type is unknown. Column {name!r} has type {entry['type']!r}; use one of "
                           f"{list(TYPE_NAMES)}.") from None
    if "shape" in entry:
        try:
            shape: list[int] | None = _check_shape(entry["shape"], f"shape of column {name!r}")
        except (TypeError, ValueError) as e:
            raise RuntimeError(str(e)) from None
    elif free_shapes and entry.get("rank", 1) != 0:
        shape = None
    else:
        shape = []
    return ColumnSpec(name, tname, shape)


def _columns_from_json(columns: Any, *, free_shapes: bool = False) -> list[ColumnSpec]:
    if isinstance(columns, dict):  # MindSpore reads the object form in name order (a list keeps its order)
        return [_column_from_json(columns[k], k, free_shapes=free_shapes) for k in sorted(columns)]
    if isinstance(columns, list):
        return [_column_from_json(v, None, free_shapes=free_shapes) for v in columns]
    raise RuntimeError("columns must be dict or list, columns contain name, type, shape(optional).")


def _read_json_file(path: str) -> dict:
    if not os.path.isfile(path) or not os.access(path, os.R_OK):
        raise ValueError(f"The file {path} does not exist or permission denied!")
    try:
        with open(path, encoding="utf-8") as f:
            content = json.load(f)
    except (ValueError, UnicodeDecodeError) as e:
        raise RuntimeError(f"Schema file failed to load: {path} is not valid JSON ({e}).") from None
    if not isinstance(content, dict):
        raise RuntimeError(f"Schema file failed to load: {path} must hold a JSON object.")
    return content


def _check_top(content: dict, where: str = "JSON") -> None:
    """The top level of a schema; ``where``: "file" (a schema file) or "JSON" (``from_json``), the
    last word of MindSpore's message for a missing "columns"."""
    for key in content:
        if key not in _TOP_KEYS:
            raise RuntimeError(f"Unknown field {key}")
    if "columns" not in content:
        raise RuntimeError(f'"columns" node is required in the schema json {where}.')
    rows = content.get("numRows")
    if rows is not None and (isinstance(rows, bool) or not isinstance(rows, int) or rows < 0):
        raise RuntimeError(f"numRows must be a non-negative int, but got {rows!r}.")


class Schema:
    """Column names, types and shapes of a dataset, and optionally its row count.

    Args:
        schema_file (str, optional): A schema JSON file to load. Default: None, an empty schema.

    Raises:
        TypeError: If ``schema_file`` is not a str.
        ValueError: If the file does not exist.
        RuntimeError: If the file is not a valid schema.

    Examples:
        >>> import headrace.dataset as ds
        >>> schema = ds.Schema()
        >>> schema.add_column("label", "int64", [1])
        >>> schema.add_column("text", "string")
        >>> print(schema.to_json())
        {
          "columns": [
            {
              "name": "label",
              "rank": 1,
              "shape": [
                1
              ],
              "type": "int64"
            },
            {
              "name": "text",
              "rank": 1,
              "type": "string"
            }
          ]
        }
    """

    def __init__(self, schema_file=None):
        self.schema_file = ""
        self.columns: list[ColumnSpec] = []
        self.num_rows: int | None = None
        self.dataset_type: str | None = None
        if schema_file is not None:
            checks.check_type(schema_file, (str, os.PathLike), "schema_file")
            self.schema_file = os.fspath(schema_file)
            content = _read_json_file(self.schema_file)
            _check_top(content, "file")
            self.from_json(content)

    def add_column(self, name, de_type, shape=None):
        """Appends a column.

        Args:
            name (str): Column name.
            de_type (Union[str, mstype, numpy.dtype]): Its type ("int64", mstype.float32, ...).
            shape (list[int], optional): Its shape; -1 for one unknown dimension. Default: None,
                whatever the data holds.

        Raises:
            TypeError: If an argument has the wrong type or the type is unknown.
        """
        checks.check_type(name, str, "name")
        tname = type_name(de_type)
        if shape is not None:
            shape = _check_shape(shape, "shape")
        self.columns.append(ColumnSpec(name, tname, shape))

    def parse_columns(self, columns):
        """Replaces the columns with ``columns``: a list of ``{"name", "type", "shape"}`` dicts, or a
        dict from column name to ``{"type", "shape"}``. A column without "shape" is a scalar.

        Raises:
            RuntimeError: If a column lacks its name or type, or ``columns`` is neither form.
        """
        self.columns = _columns_from_json(columns)

    def from_json(self, json_obj):
        """Replaces this schema with the content of a schema JSON object (a dict).

        Raises:
            RuntimeError: If "columns" is missing, a field is unknown or a column is malformed.
        """
        checks.check_type(json_obj, dict, "json_obj")
        _check_top(json_obj)
        self.columns = _columns_from_json(json_obj["columns"])
        self.num_rows = json_obj.get("numRows")
        self.dataset_type = json_obj.get("datasetType")

    def to_json(self):
        """The schema as a JSON string (two-space indent, keys sorted), MindSpore's layout."""
        out: dict[str, Any] = {"columns": [c.to_dict() for c in self.columns]}
        if self.dataset_type is not None:
            out["datasetType"] = self.dataset_type
        if self.num_rows is not None:
            out["numRows"] = self.num_rows
        return json.dumps(out, indent=2, sort_keys=True, ensure_ascii=False)

    def get_num_rows(self):
        """The row count the schema declares ("numRows"), or None."""
        return self.num_rows

    def get_column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def __str__(self):
        return self.to_json()

    def __repr__(self):
        return f"Schema(columns={[c.name for c in self.columns]}, num_rows={self.num_rows})"

    def __eq__(self, other):
        return isinstance(other, Schema) and self.to_json() == other.to_json()

    __hash__ = None


def load_schema_file(path: str) -> tuple[list[ColumnSpec], int | None]:
    """Columns and numRows of a schema file as ``TFRecordDataset(schema=path)`` reads it: columns
    without "shape" keep the data's own shape unless their "rank" is 0 (a scalar)."""
    content = _read_json_file(path)
    _check_top(content, "file")
    return _columns_from_json(content["columns"], free_shapes=True), content.get("numRows")
