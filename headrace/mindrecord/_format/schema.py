"""The MindRecord schema: field types, shapes, blob/raw split and index fields.

A schema maps field names to ``{"type": T}`` (a scalar, stored in the row's MessagePack "raw"
record) or ``{"type": T, "shape": [...]}`` (an array, stored in the row's "blob" record together
with every ``bytes`` field). See MINDRECORD.md §2.1, §4.
"""
from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, Mapping, Sequence

import numpy as np

from .errors import MRMBuildSchemaError, MRMInvalidSchemaError, MindRecordFormatError, MindRecordRuntimeError

SCALAR_TYPES = ("int32", "int64", "float32", "float64", "string", "bytes")
ARRAY_TYPES = ("int32", "int64", "float32", "float64")
INDEXABLE_TYPES = ("int32", "int64", "float32", "float64", "string")
MAX_FIELDS = 100
_NAME_RE = re.compile(r"^[0-9a-zA-Z_]+$")
SQL_TYPES = {"int32": "INTEGER", "int64": "INTEGER", "float32": "REAL", "float64": "REAL", "string": "TEXT"}


@dataclasses.dataclass(frozen=True)
class Field:
    """One schema field.

    Attributes:
        name: field name (``[0-9a-zA-Z_]+``).
        type: one of ``SCALAR_TYPES``.
        shape: the declared shape (one ``-1`` allowed), or None for a scalar field.
    """

    name: str
    type: str
    shape: tuple[int, ...] | None = None

    @property
    def is_blob(self) -> bool:
        """Whether the value lives in the blob record (bytes fields and arrays)."""
        return self.type == "bytes" or self.shape is not None

    @property
    def dtype(self) -> np.dtype:
        """NumPy dtype of a numeric field (bytes: ``S``, string: ``U``)."""
        return np.dtype({"string": "U", "bytes": "S"}.get(self.type, self.type))

    def to_json(self) -> dict[str, Any]:
        if self.shape is None:
            return {"type": self.type}
        return {"shape": list(self.shape), "type": self.type}


@dataclasses.dataclass(frozen=True)
class Schema:
    """A validated schema.

    Attributes:
        fields: fields by name, sorted by name (MindRecord's column order).
        desc: free-text description stored with the schema.
    """

    fields: Mapping[str, Field]
    desc: str = ""

    @property
    def names(self) -> list[str]:
        return list(self.fields)

    @property
    def blob_fields(self) -> list[str]:
        """Blob fields in storage order (sorted by name)."""
        return [n for n, f in self.fields.items() if f.is_blob]

    @property
    def raw_fields(self) -> list[str]:
        return [n for n, f in self.fields.items() if not f.is_blob]

    @property
    def has_integer_array(self) -> bool:
        """Whether integer arrays in this schema are stored compressed (files of version >= 3.0)."""
        return any(f.shape is not None and f.type in ("int32", "int64") for f in self.fields.values())

    def default_index_fields(self) -> list[str]:
        """The fields MindSpore indexes when ``add_index`` is never called: every scalar field."""
        return [n for n, f in self.fields.items() if not f.is_blob and f.type in INDEXABLE_TYPES]

    def to_json(self) -> dict[str, Any]:
        """The ``schema`` entry of a file header (``blob_fields``, ``desc``, ``schema``)."""
        return {"blob_fields": self.blob_fields, "desc": self.desc,
                "schema": {n: f.to_json() for n, f in self.fields.items()}}

    def content(self) -> dict[str, dict[str, Any]]:
        """The user-facing schema dict (what ``FileReader.schema()`` returns)."""
        return {n: f.to_json() for n, f in self.fields.items()}


def validate_content(content: Any) -> str | None:
    """MindSpore's first-level schema check; returns the error detail, or None when valid."""
    if not content:
        return "Schema content is empty."
    if not isinstance(content, dict):
        return "Schema content should be dict."
    for name, value in content.items():
        if not isinstance(name, str) or not _NAME_RE.match(name):
            return f"Field '{name}' should be composed of '0-9' or 'a-z' or 'A-Z' or '_'."
        if not value or not isinstance(value, dict):
            return f"Field '{name}' should be dict."
        if len(value) == 1 and "type" in value:
            if value["type"] not in SCALAR_TYPES:
                return f"Field '{name}' contain illegal attribute '{value['type']}'."
        elif len(value) == 2 and "type" in value:
            if value["type"] not in ARRAY_TYPES:
                return f"Field '{name}' contain illegal attribute '{value['type']}'."
            if "shape" not in value:
                return f"Field '{value}' contains illegal attributes."
            if not isinstance(value["shape"], list):
                return f"Field '{name}' contain illegal attribute '{value['shape']}'."
        else:
            return f"Field '{value}' contains illegal attributes."
    return None


def _check_shape(name: str, shape: list[Any]) -> tuple[int, ...]:
    dims = []
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise MRMBuildSchemaError(f"Failed to build schema. Field '{name}': the elements of 'shape' "
                                      f"should be int, but got {shape!r}.")
        d = int(d)
        if d != -1 and d <= 0:
            raise MRMBuildSchemaError(f"Failed to build schema. Field '{name}': the element of 'shape' value "
                                      f"should be -1 or greater than 0 but got: {d}.")
        dims.append(d)
    if dims.count(-1) > 1:
        raise MRMBuildSchemaError(f"Failed to build schema. Field '{name}': only 1 variable dimension(-1) "
                                  f"allowed in 'shape' value but got: {shape!r}.")
    return tuple(dims)


def build_schema(content: Any, desc: str | None = None) -> Schema:
    """Validates a user schema dict as ``FileWriter.add_schema`` does and returns a Schema.

    Raises:
        MRMInvalidSchemaError: the dict is malformed (message as MindSpore's).
        MRMBuildSchemaError: a shape is invalid (a non-positive dimension, several ``-1``).
    """
    error = validate_content(content)
    if error is not None:
        raise MRMInvalidSchemaError(error)
    if desc is not None and not isinstance(desc, str):
        raise TypeError(f"Argument desc with value {desc!r} is not of type [str], but got {type(desc)}.")
    if len(content) > MAX_FIELDS:
        raise MRMBuildSchemaError(f"Failed to build schema. The number of fields {len(content)} exceeds "
                                  f"the limit of {MAX_FIELDS}.")
    fields = {}
    for name in sorted(content):
        value = content[name]
        shape = _check_shape(name, value["shape"]) if "shape" in value else None
        fields[name] = Field(name, value["type"], shape)
    return Schema(fields, desc or "")


def check_index_fields(schema: Schema, current: Sequence[str], new: Sequence[str]) -> list[str]:
    """Adds ``new`` index fields to ``current`` as ``add_index`` does; returns the combined list.

    Raises:
        MindRecordRuntimeError: a field is not in the schema, or is added twice (MindSpore's texts).
    """
    out = list(current)
    for name in new:
        if name not in schema.fields:
            content = json.dumps(schema.content(), separators=(",", ":"))
            raise MindRecordRuntimeError(f"Invalid input, 'index_fields': {name} can not found in schema: "
                                         f"{content}.\n Please use 'add_index' function to add proper "
                                         f"'index_fields'.")
        if name in out:
            raise MindRecordRuntimeError(f"The 'index_fields': {name} is added repeatedly. Please remove the "
                                         f"redundant 'add_index' function.")
        out.append(name)
    return out


def schema_from_header(obj: Any, file: str) -> Schema:
    """Parses (and checks) the ``schema`` entry of a file header."""
    def bad(why: str) -> MindRecordFormatError:
        return MindRecordFormatError(f"Invalid file, the schema in the header is damaged: {why}.", file)

    if not isinstance(obj, list) or len(obj) != 1 or not isinstance(obj[0], dict):
        raise bad("expected a list with one schema object")
    entry = obj[0]
    content = entry.get("schema")
    desc = entry.get("desc", "")
    if not isinstance(desc, str):
        raise bad("'desc' is not a string")
    error = validate_content(content)
    if error is not None:
        raise bad(error)
    try:
        schema = build_schema(content, desc)
    except MRMBuildSchemaError as exc:
        raise bad(exc.error_msg) from None
    blob_fields = entry.get("blob_fields")
    if blob_fields is not None and sorted(blob_fields) != schema.blob_fields:
        raise bad(f"'blob_fields' {blob_fields!r} does not match the schema")
    return schema
