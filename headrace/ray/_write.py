"""A Ray Data ``Datasink`` writing MindRecord files.

A MindRecord file cannot be renamed after it is written: its header (``shard_addresses``) and its
``.db`` (``SHARD_NAME``) name it. So each write task writes one 1-shard file under its final name,
``<prefix>-<task index:05d>.mindrecord`` (and its ``.db``), into a staging folder inside the
target directory; the commit, on the driver once every task has succeeded, moves the files into
place (a rename inside one file system: same name, other folder); in mode "set" it first
rewrites each staged header to name all the files and its own shard id (the header's slot has
room: ``header_size``), so the files form one set. A job that fails removes the
staging folder: the target directory never holds a partial set. A retried task writes its file
again under the same name. The directory must be visible under the same path to every node that
runs a write task (a shared file system) for a job on several nodes.

The schema is the one given, or read from the rows' Arrow schema when the job starts:
``binary`` -> ``bytes``, ``string`` -> ``string``, int32 / int64 / float32 / float64 scalars ->
that type, fixed-shape tensors of those dtypes -> an array of that shape, 1-d variable-shaped
tensors -> shape ``[-1]``. Any other type is refused with the column named (MindRecord has no
such type; headrace does not change values' types silently). The key columns ``__sample__`` and
``__epoch__`` of ``read_mindrecord`` are not written.
"""
from __future__ import annotations

import dataclasses
import glob
import os
import re
import shutil
import uuid
from typing import Any, Iterable

import numpy as np
import pyarrow as pa
from ray.data.block import BlockAccessor
from ray.data.datasource import Datasink
from ray.data.extensions import ArrowVariableShapedTensorType, get_arrow_extension_tensor_types

from headrace.mindrecord import FileReader, FileWriter
from headrace.mindrecord._format.header import (MAX_HEADER_SIZE, MAX_PAGE_SIZE, MAX_SHARD_COUNT, MIN_HEADER_SIZE,
                                                MIN_PAGE_SIZE, read_header_path)
from headrace.ray._blocks import KEY_COLUMNS

__all__ = ["MindRecordDatasink"]

_TYPES = {pa.int32(): "int32", pa.int64(): "int64", pa.float32(): "float32", pa.float64(): "float64"}
_DTYPES = {"int32", "int64", "float32", "float64"}
DEFAULT_HEADER_SIZE = 1 << 20   # (not the format's 16 MiB / 32 MiB: every part's slots are written out)
DEFAULT_PAGE_SIZE = 1 << 22
MAX_SHARDS = MAX_SHARD_COUNT
_PREFIX = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.-]*$")


def part_name(prefix: str, task_idx: int) -> str:
    """The base name of write task ``task_idx``'s file."""
    return f"{prefix}-{task_idx:05d}.mindrecord"


def schema_from_arrow(schema: pa.Schema) -> dict:
    """A MindRecord schema for rows of this Arrow schema (see the module notes); ValueError names a
    column whose type MindRecord cannot hold."""
    out: dict[str, dict] = {}
    tensor_types = get_arrow_extension_tensor_types()
    for field in schema:
        if field.name in KEY_COLUMNS:
            continue
        t = field.type
        if t in (pa.binary(), pa.large_binary()):
            out[field.name] = {"type": "bytes"}
        elif t in (pa.string(), pa.large_string()):
            out[field.name] = {"type": "string"}
        elif t in _TYPES:
            out[field.name] = {"type": _TYPES[t]}
        elif isinstance(t, tensor_types):
            dtype = np.dtype(t.to_pandas_dtype().element_dtype if hasattr(t.to_pandas_dtype(), "element_dtype")
                             else t.scalar_type.to_pandas_dtype())
            if dtype.name not in _DTYPES:
                raise ValueError(f"MindRecordDatasink: column '{field.name}' holds {dtype.name} arrays; MindRecord "
                                 f"arrays are int32, int64, float32 or float64: cast the column, or write it as "
                                 f"bytes (e.g. encoded images), or give a schema.")
            if isinstance(t, ArrowVariableShapedTensorType):
                if t.ndim != 1:
                    raise ValueError(f"MindRecordDatasink: column '{field.name}' holds arrays of varying shape with "
                                     f"{t.ndim} dimensions; MindRecord allows one -1 in a shape: give a schema "
                                     f"with the shape (e.g. [-1, 3]).")
                out[field.name] = {"type": dtype.name, "shape": [-1]}
            else:
                out[field.name] = {"type": dtype.name, "shape": [int(d) for d in t.shape]}
        else:
            raise ValueError(f"MindRecordDatasink: column '{field.name}' has Arrow type {t}; MindRecord holds "
                             f"bytes, string, int32, int64, float32, float64 and arrays of those numbers: cast "
                             f"the column or give a schema.")
    if not out:
        raise ValueError("MindRecordDatasink: the rows have no column to write.")
    return out


def _rows(block: Any, names: list[str], schema: dict) -> list[dict]:
    """The rows of one block as dicts for ``FileWriter.write_raw_data``."""
    cols = BlockAccessor.for_block(block).to_numpy(names)
    if not isinstance(cols, dict):
        cols = {names[0]: cols}
    n = len(cols[names[0]]) if names else 0
    out = []
    for i in range(n):
        row = {}
        for name in names:
            v = cols[name][i]
            spec = schema[name]
            if spec["type"] in ("bytes", "string"):
                row[name] = v
            elif "shape" in spec:
                row[name] = np.asarray(v)   # FileWriter checks it against the schema (no cast here)
            else:
                row[name] = v.item() if isinstance(v, np.generic) else v
        out.append(row)
    return out


class MindRecordDatasink(Datasink):
    """Writes a Ray Dataset as MindRecord files, for ``Dataset.write_datasink``.

    The files are ``<directory>/<prefix>-00000.mindrecord``, ``-00001``, ... (one per write task
    that had rows, each with its ``.db``); in mode "parts" each is a 1-shard MindRecord file (read
    them together with ``MindDataset(sorted(glob(...)))`` or one by one), in mode "set" they are
    the shards of one set. See the module notes for the commit.

    Args:
        directory (str): an existing directory to write into.
        prefix (str): the files' name prefix (letters, digits, ``_``, ``.``, ``-``).
        schema (dict, optional): the MindRecord schema (``FileWriter.add_schema``'s). Default:
            None (from the rows' Arrow schema).
        mode (str, optional): "parts": independent 1-shard files; "set": the files joined into one
            MindRecord set (each header lists them all, so ``MindDataset(any one file)`` reads
            all of them, as a ``FileWriter(shard_num=n)`` set). Default: "parts".
        overwrite (bool, optional): replace files of an earlier job with this prefix when the
            commit succeeds. Default: False (refuse to start if any exists).
        header_size (int, optional): every file's header size, bytes. Default: 1 MiB.
        min_rows_per_file (int, optional): Ray gives each write task, so each file, at least
            this many rows (the last file may hold fewer). Default: None (Ray's bundles: about a
            block per file).
        page_size (int, optional): every file's page size, bytes. Default: 4 MiB (a row larger
            than a page makes that file's pages larger, and the commit then fails: MindSpore reads
            several files together only when their header and page sizes agree).

    Raises:
        TypeError, ValueError: an argument is of the wrong type or value.
        FileExistsError: (when the job starts) files with this prefix exist and ``overwrite`` is False.

    Examples:
        >>> ds.write_datasink(MindRecordDatasink("/data/out", "train"))  # doctest: +SKIP
    """

    def __init__(self, directory: str, prefix: str, schema: dict | None = None, *, mode: str = "parts",
                 overwrite: bool = False, header_size: int = DEFAULT_HEADER_SIZE,
                 page_size: int = DEFAULT_PAGE_SIZE, min_rows_per_file: int | None = None) -> None:
        if not isinstance(directory, (str, os.PathLike)):
            raise TypeError(f"directory must be a str path, but got {directory!r}.")
        directory = os.fspath(directory)
        if not os.path.isdir(directory):
            raise ValueError(f"directory {directory!r} does not exist or is not a directory.")
        if not isinstance(prefix, str) or not _PREFIX.match(prefix):
            raise ValueError(f"prefix must be a non-empty name of letters, digits, '_', '.' and '-' (not starting "
                             f"with '-'), but got {prefix!r}.")
        if schema is not None and not isinstance(schema, dict):
            raise TypeError(f"schema must be a dict (FileWriter.add_schema's) or None, but got {type(schema).__name__}.")
        if mode not in ("parts", "set"):
            raise ValueError(f"mode must be 'parts' or 'set', but got {mode!r}.")
        if not isinstance(overwrite, bool):
            raise TypeError(f"overwrite must be a bool, but got {overwrite!r}.")
        for name, value, (low, high) in (("header_size", header_size, (MIN_HEADER_SIZE, MAX_HEADER_SIZE)),
                                         ("page_size", page_size, (MIN_PAGE_SIZE, MAX_PAGE_SIZE))):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, but got {value!r}.")
            if not low <= value <= high or value % 4:
                raise ValueError(f"{name} must be a multiple of 4 in [{low}, {high}], but got {value}.")
        self.header_size, self.page_size = header_size, page_size
        if min_rows_per_file is not None and (isinstance(min_rows_per_file, bool)
                                              or not isinstance(min_rows_per_file, int) or min_rows_per_file < 1):
            raise ValueError(f"min_rows_per_file must be a positive int or None, but got {min_rows_per_file!r}.")
        self.min_rows_per_file = min_rows_per_file
        self.directory = os.path.abspath(directory)
        self.prefix = prefix
        self.schema = dict(schema) if schema is not None else None
        self.overwrite = overwrite
        self.mode = mode
        self.staging = os.path.join(self.directory, f".{prefix}.staging-{uuid.uuid4().hex[:12]}")

    def existing(self) -> list[str]:
        """Files of this prefix in the directory (data files and their ``.db``)."""
        pattern = os.path.join(glob.escape(self.directory), glob.escape(self.prefix) + "-[0-9][0-9][0-9][0-9][0-9]")
        return sorted(glob.glob(pattern + ".mindrecord") + glob.glob(pattern + ".mindrecord.db"))

    # ------------------------------------------------------------------ Ray's interface

    def get_name(self) -> str:
        return "MindRecord"

    @property
    def min_rows_per_write(self) -> int | None:
        return self.min_rows_per_file

    def on_write_start(self, schema: pa.Schema | None = None) -> None:
        old = self.existing()
        if old and not self.overwrite:
            count = sum(1 for f in old if not f.endswith(".db"))
            raise FileExistsError(f"MindRecordDatasink: {count} MindRecord file(s) with prefix '{self.prefix}' exist in "
                                  f"{self.directory} (e.g. {os.path.basename(old[0])}); pass overwrite=True or "
                                  f"another prefix.")
        if self.schema is None and schema is not None:
            self.schema = schema_from_arrow(schema)
        os.makedirs(self.staging, exist_ok=False)

    def write(self, blocks: Iterable[Any], ctx: Any) -> tuple[str, int] | None:
        name = part_name(self.prefix, ctx.task_idx)
        path = os.path.join(self.staging, name)
        writer = None
        written = 0
        for block in blocks:
            if BlockAccessor.for_block(block).num_rows() == 0:
                continue
            if writer is None:
                schema = self.schema if self.schema is not None else schema_from_arrow(
                    BlockAccessor.for_block(block).schema())
                names = list(schema)
                writer = FileWriter(path, shard_num=1, overwrite=True, invalid_rows="error")   # fail, never drop
                writer.add_schema(schema, self.prefix)
                writer.set_header_size(self.header_size)   # the same layout in every part: MindSpore
                writer.set_page_size(self.page_size)       # reads files of one layout together only
            rows = _rows(block, names, schema)
            writer.write_raw_data(rows)
            written += len(rows)
        if writer is None:
            return None
        writer.commit()
        return name, written

    def on_write_complete(self, write_result: Any) -> None:
        names = [r[0] for r in write_result.write_returns if r is not None]
        schemas = {}
        for name in names:   # every part reads back, with one schema, before anything moves
            reader = FileReader(os.path.join(self.staging, name))
            try:
                schemas[name] = reader.schema()
            finally:
                reader.close()
        layouts = {name: read_header_path(os.path.join(self.staging, name)) for name in names}
        for name, h in sorted(layouts.items()):
            if (h.header_size, h.page_size) != (self.header_size, self.page_size):
                raise ValueError(f"MindRecordDatasink: {name} was written with header_size={h.header_size} and "
                                 f"page_size={h.page_size} (a row or the page list outgrew header_size="
                                 f"{self.header_size}, page_size={self.page_size}); MindSpore reads files together "
                                 f"only when these agree: give a larger page_size or header_size.")
        if len({repr(sorted(s.items())) for s in schemas.values()}) > 1:
            a, b = sorted(schemas)[0], next(n for n in sorted(schemas) if schemas[n] != schemas[sorted(schemas)[0]])
            raise ValueError(f"MindRecordDatasink: the write tasks found different schemas in their rows ({a}: "
                             f"{schemas[a]}, {b}: {schemas[b]}); give MindRecordDatasink a schema.")
        ordered = sorted(names)
        if self.mode == "set":
            self._join(ordered)
        if self.overwrite:
            for old in self.existing():
                os.remove(old)
        moved: list[str] = []
        try:
            for name in ordered:
                for suffix in ("", ".db"):   # the index last: a data file without it does not open
                    target = os.path.join(self.directory, name + suffix)
                    os.replace(os.path.join(self.staging, name + suffix), target)
                    moved.append(target)
        except OSError:
            for target in moved:   # no partial set in the directory
                os.remove(target)
            raise
        shutil.rmtree(self.staging, ignore_errors=True)

    def _join(self, names: list[str]) -> None:
        """Makes the staged 1-shard files one set of ``len(names)`` shards: each header names every
        file (``shard_addresses``) and its own place (``shard_id``, in the header and in each of its
        pages); the ``.db`` files already name their own file."""
        if len(names) > MAX_SHARDS:
            raise ValueError(f"MindRecordDatasink: mode='set' joins at most {MAX_SHARDS} files (MindSpore's limit), "
                             f"but the job wrote {len(names)}; use mode='parts' or fewer write tasks "
                             f"(Dataset.repartition).")
        for i, name in enumerate(names):
            path = os.path.join(self.staging, name)
            header = read_header_path(path)
            pages = [dataclasses.replace(page, shard_id=i) for page in header.pages]   # each page names its shard too
            blob = dataclasses.replace(header, pages=pages, shard_addresses=list(names), shard_id=i).to_bytes()
            if len(blob) > header.header_size:
                raise ValueError(f"MindRecordDatasink: the header of a set of {len(names)} files needs {len(blob)} "
                                 f"bytes, more than header_size={header.header_size}; give a larger header_size.")
            old = len(header.to_bytes())
            fd = os.open(path, os.O_WRONLY)
            try:
                os.pwrite(fd, blob + bytes(max(0, old - len(blob))), 0)
                os.fsync(fd)
            finally:
                os.close(fd)

    def on_write_failed(self, error: Exception) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)
