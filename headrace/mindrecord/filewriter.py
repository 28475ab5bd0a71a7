"""``FileWriter``: write rows described by a schema into MindRecord files."""
from __future__ import annotations

import dataclasses
import os
import warnings
import weakref
from typing import Any

from ._checks import check_filename
from ._format import crypto, integrity
from ._format.encode import DroppedRow, RowEncoder, check_rows
from ._format.errors import (MRMAddSchemaError, MRMDefineIndexError, MRMGetMetaError, MRMValidateDataError,
                             MindRecordRuntimeError, ParamTypeError, ParamValueError)
from ._format.header import (MAX_HEADER_SIZE, MAX_PAGE_SIZE, MAX_SHARD_COUNT, MIN_HEADER_SIZE, MIN_PAGE_SIZE,
                             MIN_SHARD_COUNT)
from ._format.lock import drops_writer_on_error
from ._format.schema import Schema, build_schema, check_index_fields
from ._format.store import shard_names
from ._format.writer import ShardSetWriter

__all__ = ["DroppedRow", "FileWriter", "InvalidRowWarning", "WriteReport"]

INVALID_ROW_MODES = ("warn", "error")
_LISTED = 10   # dropped rows named in one warning or error message

_NO_VALID_DATA = ("There is no valid data which can be written by 'write_raw_data' to mindrecord file. Please check "
                  "the abnormal input data indicated in the warning log above.")
_FLUSHED = ("Not allowed to call `write_raw_data` on flushed MindRecord files.When creating new MindRecord files, "
            "please remove `commit` before `write_raw_data`. In other cases, when appending to existing MindRecord "
            "files, please call `open_for_append` first and then `write_raw_data`.")
_NO_SCHEMA = ("Invalid data, schema is not found in header, please use 'add_schema' to add a schema for new "
              "mindrecord files.")


class InvalidRowWarning(UserWarning):
    """``FileWriter.write_raw_data`` dropped rows that do not fit the schema."""


@dataclasses.dataclass(frozen=True, repr=False)
class WriteReport:
    """What ``FileWriter.write_raw_data`` (one call) or ``commit`` (the writer's whole life) did.

    Attributes:
        written: rows written.
        dropped: rows dropped because they do not fit the schema.
        dropped_rows: one ``DroppedRow`` (batch, index, field, reason) per dropped row.
    """

    written: int
    dropped: int
    dropped_rows: tuple[DroppedRow, ...] = ()

    def __repr__(self) -> str:  # short: an interactive session echoes it after each call
        return f"WriteReport(written={self.written}, dropped={self.dropped})"


def _check_invalid_rows(value: Any) -> str:
    if not isinstance(value, str) or value not in INVALID_ROW_MODES:
        raise ParamValueError(f"Parameter invalid_rows must be one of {list(INVALID_ROW_MODES)}, but got {value!r}.")
    return value


def _listing(dropped: list[DroppedRow]) -> str:
    text = "; ".join(str(d) for d in dropped[:_LISTED])
    if len(dropped) > _LISTED:
        text += f"; and {len(dropped) - _LISTED} more"
    return text


class FileWriter:
    """Writes rows into MindRecord files (a data file and a ``.db`` index per shard).

    Files appear only at ``commit``: until then data goes to hidden temporary files (or memory,
    for small datasets), so an interrupted writer never leaves a file that looks like a dataset.
    With ``overwrite=True`` the old files stay readable until ``commit`` replaces them, and shards
    of the old dataset that the new one does not have (fewer shards) are removed then.

    Rows that do not fit the schema are dropped, as in MindSpore, but never silently: each
    ``write_raw_data`` call that drops rows issues an ``InvalidRowWarning`` naming each row's
    index, field and reason, and returns a ``WriteReport`` with the counts; ``commit`` returns the
    totals. ``invalid_rows="error"`` raises instead (and writes nothing of that call).

    Args:
        file_name (str): Path of the data file; with ``shard_num > 1`` the shard index is appended
            (``name0``, ``name1``, ... zero-padded to the width of ``shard_num - 1``).
        shard_num (int, optional): Number of data files, in [1, 1000]. Default: ``1``.
        overwrite (bool, optional): Replace existing files of the same names. Default: ``False``.
        invalid_rows (str, optional, keyword-only): What to do with rows that do not fit the schema:
            ``"warn"`` drops them with an ``InvalidRowWarning`` (MindSpore drops them with a log
            line only), ``"error"`` raises ``MRMValidateDataError``. Default: ``"warn"``.
        checksum (bool, optional, keyword-only): headrace only. Also write, at ``commit``, a CRC
            sidecar ``<data file>.crc`` per shard: the CRC-32C of the header and of every page, and
            of the ``.db`` (see docs/mindrecord-integrity.md). The data files and indexes are the
            same as without it, so MindSpore reads them as before; ``headrace mindrecord verify``,
            ``verify()`` and readers made with ``verify=True`` or ``verify="checksum"`` check it.
            Not with encryption (``set_enc_key``), which authenticates every block already.
            Default: ``False``.

    Raises:
        ParamValueError: ``file_name``, ``shard_num``, ``overwrite``, ``invalid_rows`` or
            ``checksum`` is invalid.

    Examples:
        >>> import os, tempfile
        >>> from headrace.mindrecord import FileWriter, FileReader
        >>> path = os.path.join(tempfile.mkdtemp(), "demo.mindrecord")
        >>> writer = FileWriter(path)
        >>> writer.add_schema({"label": {"type": "int32"}, "data": {"type": "bytes"}}, "demo")
        >>> writer.write_raw_data([{"label": i, "data": bytes([i])} for i in range(3)])
        WriteReport(written=3, dropped=0)
        >>> writer.commit()
        WriteReport(written=3, dropped=0)
        >>> [row["label"] for row in FileReader(path).get_next()]
        [0, 1, 2]
    """

    def __init__(self, file_name, shard_num=1, overwrite=False, *, invalid_rows="warn", checksum=False):
        file_name = _check_utf8(check_filename(file_name))
        if shard_num is None:
            raise ParamValueError("Parameter shard_num is None.")
        if not isinstance(shard_num, int):
            raise ParamValueError("Parameter shard_num's type is not int.")
        if shard_num < MIN_SHARD_COUNT or shard_num > MAX_SHARD_COUNT:
            raise ParamValueError(f"Parameter shard_num's value: {shard_num} should between {MIN_SHARD_COUNT} and "
                                  f"{MAX_SHARD_COUNT}.")
        if not isinstance(overwrite, bool):
            raise ParamValueError("Parameter overwrite's type is not bool.")
        if shard_num > 1 and crypto.get_enc_key() is not None:
            raise RuntimeError(f"When encode mode is enabled, the automatic sharding function is unavailable. "
                               f"Write shard_num=1 (got {shard_num}) or call set_enc_key(None).")
        invalid_rows = _check_invalid_rows(invalid_rows)
        encrypt = crypto.get_enc_key() is not None
        checksum = _check_checksum(checksum, encrypt)
        names = shard_names(os.path.basename(file_name), int(shard_num))
        self._setup(file_name, [os.path.join(os.path.dirname(file_name), n) for n in names], overwrite,
                    invalid_rows, checksum, encrypt)

    def _setup(self, file_name: str, paths: list[str], overwrite: bool, invalid_rows: str, checksum: bool,
               encrypt: bool, core: ShardSetWriter | None = None) -> None:
        """The writer's state before its first row: a new dataset's, or (``core``) one appending."""
        self._invalid_rows = invalid_rows
        self._checksum = checksum
        self._file_name = file_name
        self._shard_num = len(paths)
        self._overwrite = overwrite
        self._paths = paths
        self._schema: Schema | None = None if core is None else core.schema
        self._index_fields: list[str] = [] if core is None else core.index_fields
        self._header_size: int | None = None
        self._page_size: int | None = None
        self._parallel_writer: bool | None = None
        self._batches = 0
        self._calls = 0
        self._written = 0
        self._dropped: list[DroppedRow] = []
        self._core: ShardSetWriter | None = None
        self._encoder: RowEncoder | None = None
        self._flushed = False
        self._append = core is not None
        self._finalizer: weakref.finalize | None = None
        self._encrypt = encrypt
        if core is not None:
            self._set_core(core)

    # ------------------------------------------------------------------ setup

    @classmethod
    def open_for_append(cls, file_name, *, invalid_rows="warn", checksum=None):
        """Opens an existing dataset to add rows; ``commit`` rewrites headers and indexes.

        The rows already there stay readable by anyone until ``commit``. A missing or damaged
        ``.db`` is rebuilt from the data file.

        Args:
            file_name (str): One data file of the dataset (all its shards are opened).
            invalid_rows (str, optional, keyword-only): ``"warn"`` or ``"error"``, as for
                ``FileWriter``. Default: ``"warn"``.
            checksum (bool, optional, keyword-only): write CRC sidecars at ``commit``, as for
                ``FileWriter``; None keeps them where the dataset has them. Default: ``None``.

        Returns:
            FileWriter, a writer that appends.

        Raises:
            ParamValueError: ``file_name``, ``invalid_rows`` or ``checksum`` is invalid.
            RuntimeError: the file does not exist or is not a valid MindRecord file.

        Examples:
            >>> import os, tempfile
            >>> from headrace.mindrecord import FileWriter, FileReader
            >>> path = os.path.join(tempfile.mkdtemp(), "append.mindrecord")
            >>> w = FileWriter(path); w.add_schema({"x": {"type": "int64"}}); w.write_raw_data([{"x": 1}]); w.commit()
            WriteReport(written=1, dropped=0)
            WriteReport(written=1, dropped=0)
            >>> w = FileWriter.open_for_append(path); w.write_raw_data([{"x": 2}]); w.commit()
            WriteReport(written=1, dropped=0)
            WriteReport(written=1, dropped=0)
            >>> [r["x"] for r in FileReader(path).get_next()]
            [1, 2]
        """
        file_name = _check_utf8(check_filename(file_name))
        invalid_rows = _check_invalid_rows(invalid_rows)
        if checksum is not None:
            checksum = _check_checksum(checksum, crypto.get_enc_key() is not None)
        if not os.path.exists(file_name):
            raise RuntimeError(f"The input: {file_name} is not exists.")
        encrypted = _decrypt_for_append(file_name)
        core = ShardSetWriter.for_append(file_name)
        if checksum is None:
            checksum = not encrypted and any(integrity.has_sidecar(p) for p in core.paths)
        self = cls.__new__(cls)
        self._setup(file_name, core.paths, False, invalid_rows, checksum, encrypted, core)
        return self

    def _set_core(self, core: ShardSetWriter) -> None:
        self._core = core
        core.lock.owner = weakref.ref(self)
        self._encoder = RowEncoder(core.schema, core.index_fields, compress=core.version >= "3.0")
        self._finalizer = weakref.finalize(self, ShardSetWriter.close, core)

    def _abandon(self) -> None:
        """Closes the writer that another FileWriter of this process found referred to only by
        a kept exception's traceback (NOTE [ errors do not hold writers ])."""
        if self._core is not None:
            self._core.abort(MindRecordRuntimeError(
                "another FileWriter took its files while only an exception's traceback referred to it"))

    @drops_writer_on_error
    def add_schema(self, content, desc=None):
        """Sets the schema: ``{field: {"type": T}}`` or ``{field: {"type": T, "shape": [...]}}``.

        Types: int32, int64, float32, float64, string, bytes; arrays (with ``shape``, one ``-1``
        allowed) of int32, int64, float32, float64.

        Args:
            content (dict): The schema.
            desc (str, optional): A description stored with it. Default: ``None``.

        Raises:
            MRMInvalidSchemaError: the schema is malformed.
            MRMBuildSchemaError: a shape is invalid.
            MRMAddSchemaError: a schema was already added.
        """
        schema = build_schema(content, desc)
        if self._schema is not None:
            raise MRMAddSchemaError()
        self._schema = schema

    @drops_writer_on_error
    def add_index(self, index_fields):
        """Chooses the scalar fields to index (columns of the ``.db``).

        Without a call every scalar field is indexed.

        Args:
            index_fields (list[str]): Scalar fields of the schema.

        Raises:
            ParamTypeError: ``index_fields`` is not a non-empty list of str.
            MRMDefineIndexError: a field is a blob (bytes or array) field.
            MRMGetMetaError: no schema was added yet.
            RuntimeError: a field is not in the schema or is added twice.
        """
        if not index_fields or not isinstance(index_fields, list):
            raise ParamTypeError("index_fields", "list")
        if self._schema is None:
            raise MRMGetMetaError()
        blobs = self._schema.blob_fields
        for field in index_fields:
            if field in blobs:
                raise MRMDefineIndexError(f"Failed to set field {field} since it's not primitive type.")
            if not isinstance(field, str):
                raise ParamTypeError("index field", "str")
        if self._core is not None:
            raise MindRecordRuntimeError("Index fields can only be added before the first `write_raw_data`.")
        self._index_fields = check_index_fields(self._schema, self._index_fields, index_fields)

    @drops_writer_on_error
    def set_header_size(self, header_size):
        """Sets the header size (bytes, in [16384, 134217728], a multiple of 4).

        Without a call the size is chosen to fit. A header that outgrows the size is moved to a
        larger slot at commit (with a warning) instead of failing.

        Args:
            header_size (int): Size in bytes.

        Raises:
            TypeError: ``header_size`` is not an int.
            RuntimeError: the size is out of range or not a multiple of 4.
        """
        self._header_size = _check_size(header_size, "header_size", "header size", MIN_HEADER_SIZE, MAX_HEADER_SIZE)

    @drops_writer_on_error
    def set_page_size(self, page_size):
        """Sets the page size (bytes, in [32768, 268435456], a multiple of 4).

        Without a call small datasets get pages that just fit and larger ones 32 MiB pages. A row
        larger than the page size makes the pages larger (with a warning) instead of failing.

        Args:
            page_size (int): Size in bytes.

        Raises:
            TypeError: ``page_size`` is not an int.
            RuntimeError: the size is out of range or not a multiple of 4.
        """
        self._page_size = _check_size(page_size, "page_size", "page size", MIN_PAGE_SIZE, MAX_PAGE_SIZE)

    # ------------------------------------------------------------------ writing

    def _open(self) -> ShardSetWriter:
        if self._core is None:
            if self._schema is None:
                raise MindRecordRuntimeError(_NO_SCHEMA)
            index = self._index_fields or self._schema.default_index_fields()
            core = ShardSetWriter(self._paths, self._schema, index, header_size=self._header_size,
                                  page_size=self._page_size, overwrite=self._overwrite)
            core.open()
            self._set_core(core)
        return self._core

    @drops_writer_on_error
    def write_raw_data(self, raw_data, parallel_writer=False):
        """Checks rows against the schema and writes them.

        A row that does not fit the schema (missing field, wrong type or dtype, array that does not
        fit the shape, integer out of range) is dropped: MindSpore's WARNING line goes to the
        ``headrace.mindrecord`` logger and one ``InvalidRowWarning`` names every dropped row's
        index, field and reason (with ``invalid_rows="error"``, ``MRMValidateDataError`` is raised
        instead and no row of the call is written). Rows are spread over the shards in contiguous
        runs; with ``parallel_writer=True`` each call's rows go to one shard, shard after shard.

        Args:
            raw_data (list[dict]): Rows, ``{field: value}``.
            parallel_writer (bool, optional): Send each call's rows to one shard in turn. Default: ``False``.

        Returns:
            WriteReport, the rows written and dropped by this call (MindSpore returns None).

        Raises:
            ParamTypeError: ``raw_data`` is not a list of dict.
            TypeError: ``parallel_writer`` is not a bool.
            MRMValidateDataError: a row does not fit the schema and ``invalid_rows="error"``.
            RuntimeError: no row is valid, the files already exist, the writer was committed, or
                ``parallel_writer`` changed between calls.
        """
        if not isinstance(parallel_writer, bool):
            raise TypeError("The parameter `parallel_writer` must be bool.")
        if self._parallel_writer is None:
            self._parallel_writer = parallel_writer
        if self._parallel_writer != parallel_writer:
            raise RuntimeError("The parameter `parallel_writer` must be consistent during use.")
        if self._flushed and not self._append:
            raise RuntimeError(_FLUSHED)
        if self._flushed and self._append:
            self._set_core(ShardSetWriter.for_append(self._file_name))
            self._flushed = False
        core = self._open()
        if not isinstance(raw_data, list):
            raise ParamTypeError("raw_data", "list")
        for row in raw_data:
            if not isinstance(row, dict):
                raise ParamTypeError("raw_data item", "dict")
        batch = self._calls
        self._calls += 1
        strict = self._invalid_rows == "error"
        rows, dropped = check_rows(core.schema, raw_data, batch, log=not strict)
        if dropped:
            self._report_dropped(dropped, len(raw_data), strict)
            self._dropped.extend(dropped)
        if not rows:
            raise RuntimeError(_NO_VALID_DATA)
        encoded = self._encoder.encode_many(rows)
        if parallel_writer:
            core.write(encoded, shard_id=self._batches % len(core.shards))
        else:
            core.write(encoded)
        self._batches += 1
        self._written += len(rows)
        return WriteReport(len(rows), len(dropped), tuple(dropped))

    def _report_dropped(self, dropped: list[DroppedRow], total: int, strict: bool) -> None:
        what = (f"{len(dropped)} of {total} rows given to write_raw_data (call {dropped[0].batch}) do not fit "
                f"the schema of {self._file_name}: {_listing(dropped)}.")
        if strict:
            raise MRMValidateDataError(f"{what} No row of this call was written.")
        warnings.warn(f"FileWriter dropped {what} Pass invalid_rows='error' to FileWriter to raise instead; "
                      f"the WriteReport returned lists every dropped row.", InvalidRowWarning,
                      stacklevel=4)   # the user's call: past write_raw_data and drops_writer_on_error

    @drops_writer_on_error
    def commit(self):
        """Writes headers and indexes and puts the files in place (data files first, indexes last),
        then, with ``checksum``, each data file's CRC sidecar (an old sidecar is removed first).

        Returns:
            WriteReport, the rows this writer wrote and dropped over all its ``write_raw_data``
            calls (MindSpore returns None).

        Raises:
            RuntimeError: no schema was added, the files already exist, or the writer was committed.
        """
        if self._flushed:
            raise RuntimeError("The MindRecord files were already committed; use `FileWriter.open_for_append` "
                               "to add more rows.")
        core = self._open()
        for path in self._paths:  # a sidecar never outlives the bytes it describes
            integrity.remove_sidecar(path)
        core.commit()
        self._flushed = True
        if self._encrypt:     # as MindSpore does: the committed files are encrypted in place
            for path in self._paths:
                crypto.encrypt_in_place(path)
                crypto.encrypt_in_place(path + ".db")
        if self._checksum:
            for path in self._paths:
                integrity.write_sidecar(path)
        return WriteReport(self._written, len(self._dropped), tuple(self._dropped))


def _check_checksum(checksum: Any, encrypted: bool) -> bool:
    if not isinstance(checksum, bool):
        raise ParamValueError(f"Parameter checksum must be True or False, but got {checksum!r}.")
    if checksum and encrypted:
        raise ParamValueError("Parameter checksum=True cannot be used with encryption (set_enc_key): AES-GCM "
                              "authenticates every block of an encrypted file already.")
    return checksum


def _check_utf8(file_name: str) -> str:
    """``file_name`` if its absolute path is UTF-8 text; ParamValueError naming it otherwise.

    A path holding bytes that are not UTF-8 (Python shows them as ``\\udcXX``) cannot be
    written: the header records its files' paths as UTF-8 text and the index is opened by a UTF-8
    name. MindSpore 2.10 takes the name and fails when it writes (a TypeError from its C++ layer).
    """
    try:
        os.path.abspath(file_name).encode("utf-8")
    except UnicodeEncodeError as e:
        raw = os.fsencode(file_name)
        raise ParamValueError(f"file_name {file_name!r} holds bytes that are not UTF-8 ({raw!r}; "
                              f"{e.object[e.start:e.end]!r} in its absolute path): a MindRecord file records the paths of its "
                              "files as UTF-8 text, so it cannot be written there. Rename the file or the "
                              "directory.") from None
    return file_name


def _decrypt_for_append(file_name: str) -> bool:
    """Decrypts an encrypted file and its ``.db`` in place for appending (``commit`` encrypts them
    again); returns whether it did. Raises if the key setting and the file disagree."""
    if not crypto.needs_decrypt(file_name):
        return False
    for path in (file_name, file_name + ".db"):
        tmp = path + ".decrypt"
        try:
            crypto.decrypt_to(path, tmp)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
    return True


def _check_size(value: Any, arg: str, what: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"Argument {arg} with value {value!r} is not of type [int], but got {type(value)}.")
    if value < lo or value > hi:
        raise MindRecordRuntimeError(f"Invalid data, {what}: {value} should be in range [{lo} bytes, {hi} bytes].")
    if value % 4:
        raise MindRecordRuntimeError(f"Invalid data, {what} {value} should be divided by four.")
    return value
