"""TextFileDataset (one row per line) and CSVDataset (one row per CSV record).

Both index their files on first use (one pass per file, NumPy scans for line ends and, for CSV,
quotes) and then read rows by index; orders, shuffling and sharding follow ``headrace/_engine/samplers/files.py``.
"""
from __future__ import annotations

import math
import re
from typing import Any, Sequence

import numpy as np

from headrace._util import checks
from headrace._util.errors import PipelineError, syntax_error
from headrace._util.files import open_regular
from headrace.dataset._sources._docs import with_args
from headrace.dataset._sources._files import NO_DATA, RowFilesDataset, RowsOfFiles, read_bytes
from headrace.dataset.samplers import Shuffle
from headrace._engine import plan as P
from headrace.dataset._sources._files import NoDataStream

__all__ = ["CSVDataset", "TextFileDataset", "index_lines"]

_CHUNK = 1 << 24
_NL, _QUOTE, _CR = 10, 34, 13

# The Args lines of the arguments TextFileDataset and CSVDataset take after their own, in place of
# the line ``{read_args}`` of their docstrings.
_with_read_args = with_args("read_args", (
    "num_samples (int, optional): Rows to read. Default: None, all.",
    "num_parallel_workers (int, optional): Reader threads. Default: None, the configured number.",
    "shuffle (Union[bool, Shuffle], optional): ``Shuffle.GLOBAL`` (or True) shuffles files and",
    "    rows, ``Shuffle.FILES`` the file order only, False none. Default: ``Shuffle.GLOBAL``.",
    "num_shards (int, optional): Split the rows into this many shards. Default: None.",
    "shard_id (int, optional): The shard to read. Default: None.",
    "cache (DatasetCache, optional): cache the rows (``headrace.dataset.cache``). Default: None.",
))


def index_lines(path: str, quote_aware: bool, op: str, delim: str = ",") -> tuple[np.ndarray, np.ndarray]:
    """(start, end) byte offsets of the non-empty lines of a file (end excludes the newline).

    With ``quote_aware``, a newline inside a double-quoted CSV field does not end the record, and
    lines holding only "\\r" count as empty. Raises PipelineError naming the file when it cannot be
    read or a quoted field is never closed.
    """
    newlines, quotes = [], []
    size = 0
    try:
        with open_regular(path) as f:
            while True:
                chunk = f.read(_CHUNK)
                if not chunk:
                    break
                arr = np.frombuffer(chunk, dtype=np.uint8)
                newlines.append(np.flatnonzero(arr == _NL) + size)
                if quote_aware:
                    quotes.append(np.flatnonzero(arr == _QUOTE) + size)
                size += len(chunk)
    except OSError as e:
        raise PipelineError(op, f"Invalid file, failed to open {path}: {e.strerror or e}.", file=path) from e
    nl = np.concatenate(newlines) if newlines else np.zeros(0, np.int64)
    if quote_aware and quotes:
        q = np.concatenate(quotes)
        if q.size:
            inside = np.searchsorted(q, nl) % 2 == 1
            if q.size % 2:
                _unclosed_quote(path, nl, inside, op, delim)
            nl = nl[~inside]
    ends = np.concatenate([nl, [size]]).astype(np.int64)
    starts = np.concatenate([[0], nl + 1]).astype(np.int64)
    keep = ends > starts
    if quote_aware and keep.any():
        one = (ends - starts == 1) & keep
        if one.any():
            with open_regular(path) as f:
                for i in np.flatnonzero(one):
                    f.seek(int(starts[i]))
                    if f.read(1) == b"\r":
                        keep[i] = False
    return starts[keep], ends[keep]


def _unclosed_quote(path: str, nl: np.ndarray, inside: np.ndarray, op: str, delim: str) -> None:
    """Raises for a file whose quotes never balance: names the line where the open record starts,
    and says why when that line has a quote where CSV allows none."""
    outside = np.flatnonzero(~inside)
    start = int(nl[outside[-1]]) + 1 if outside.size else 0
    line = (int(outside[-1]) + 2) if outside.size else 1
    end = int(nl[np.searchsorted(nl, start)]) if np.searchsorted(nl, start) < nl.size else None
    text = read_bytes(path, start, -1 if end is None else end - start).decode("utf-8", "replace").rstrip("\r")
    reason = "a quoted field is never closed"
    try:
        split_csv(text, delim)
    except CsvParseError as e:
        reason = str(e)
    # MindSpore's sentence for it (its own when no record comes before the open one), then where and why
    if start and read_bytes(path, 0, start).strip():
        head = (f"Invalid file, failed to parse csv file: {path} at line {line}. Error message: Invalid csv file, "
                f"reach the end of file in quote field, check {path}.")
    else:
        head = ("Invalid data, CSVDataset API can't read the data file (interface mismatch or no data found). "
                f"Check csv file path:  {path}.")
    raise PipelineError(op, f"{head} Invalid csv file, line {line} of {path}: {reason}.", file=path)


def _line_number(path: str, offset: int) -> int:
    """1-based number of the line holding byte ``offset`` (for error messages)."""
    data = read_bytes(path, 0, offset)
    return data.count(b"\n") + 1


class LineFiles(RowsOfFiles):
    """Byte ranges of the records (lines or CSV records) of a list of files, indexed lazily: the
    index holds each file's (starts, ends), and ``headers`` / ``header_offsets`` each file's first
    record and its offset when ``skip_first`` (a CSV header)."""

    def __init__(self, files: Sequence[str], quote_aware: bool, op: str, skip_first: bool = False,
                 delim: str = ",") -> None:
        super().__init__(files)
        self.delim = delim
        self.quote_aware = quote_aware
        self.op = op
        self.skip_first = skip_first
        self.headers: list[bytes | None] = []
        self.header_offsets: list[int] = []   # byte offset of each file's header (0 without one)

    def _build_files(self) -> list[tuple[np.ndarray, np.ndarray, bytes | None, int]]:
        built = []
        for path in self.files:
            starts, ends = index_lines(path, self.quote_aware, self.op, self.delim)
            header, offset = None, 0
            if self.skip_first:
                header = read_bytes(path, int(starts[0]), int(ends[0] - starts[0])) if len(starts) else None
                offset = int(starts[0]) if len(starts) else 0
                starts, ends = starts[1:], ends[1:]
            built.append((starts, ends, header, offset))
        return built

    def _adopt(self, index: list) -> None:
        self.headers = [e[2] for e in index]
        self.header_offsets = [e[3] for e in index]

    def raw(self, index: int) -> tuple[bytes, int, int]:
        """(record bytes, file number, byte offset) of row ``index``."""
        k, j = self.locate(index)
        starts, ends = self.ensure()[k][:2]
        off, end = int(starts[j]), int(ends[j])
        path = self.files[k]
        try:
            data = read_bytes(path, off, end - off)
        except OSError as e:
            raise PipelineError(self.op, f"Invalid file, failed to read {path}: {e.strerror or e}.", file=path) from e
        if len(data) != end - off:
            raise PipelineError(self.op, f"Invalid file, {path} is shorter than when it was indexed; it changed or "
                                "was truncated.", file=path)
        return data, k, off


class _RecordsSource:
    """What the text and CSV sources share: one row per record of their ``LineFiles``; the row
    counts, the length and the file of a row are the records'. Each reads its rows its own way."""

    def __init__(self, lines: LineFiles, op: str) -> None:
        self.lines = lines
        self.op = op

    def counts(self) -> np.ndarray:
        return self.lines.counts()

    def __len__(self) -> int:
        return len(self.lines)

    def file_of(self, index: int) -> str | None:
        return self.lines.file_of(index)


# --------------------------------------------------------------------------------------------
# TextFileDataset
# --------------------------------------------------------------------------------------------

class TextLinesSource(_RecordsSource):
    """Rows ``(text,)`` from the non-empty lines of text files (a line keeps a trailing "\\r")."""

    column_names = ("text",)

    def __init__(self, files: Sequence[str], op: str) -> None:
        super().__init__(LineFiles(files, False, op), op)

    def read(self, index: int) -> tuple:
        data, k, off = self.lines.raw(index)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            path = self.lines.files[k]
            raise PipelineError(self.op, f"Invalid text file, line {_line_number(path, off)} of {path} is not UTF-8 "
                                f"text ({e.reason} at byte {off + e.start} of the file).", file=path) from e
        return (np.array(text),)


@_with_read_args
class TextFileDataset(RowFilesDataset):
    """One row per non-empty line of text files; the column ``text`` holds the line as a string.

    Lines end at "\\n" (a "\\r" before it is kept, as in MindSpore); empty lines are skipped.

    Args:
        dataset_files (Union[str, list[str]]): Files or glob patterns; read in sorted order.
        {read_args}

    Raises:
        ValueError: If a pattern matches no file.
        RuntimeError: When iterating, if the files hold no line or a line is not UTF-8 (the message
            names the file and line).

    Examples:
        >>> import os, tempfile, headrace.dataset as ds
        >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
        >>> _ = open(path, "w").write("first line\\n\\nsecond line\\n")
        >>> [str(r[0]) for r in ds.TextFileDataset(path, shuffle=False).create_tuple_iterator(output_numpy=True)]
        ['first line', 'second line']
    """

    def __init__(self, dataset_files, num_samples=None, num_parallel_workers=None, shuffle=Shuffle.GLOBAL,
                 num_shards=None, shard_id=None, cache=None):
        super().__init__(dataset_files, num_samples, num_parallel_workers, True if shuffle is None else shuffle,
                         num_shards, shard_id, cache)

    def _make_source(self) -> TextLinesSource:
        return TextLinesSource(self.dataset_files, self._source_name())

    def _no_data_detail(self) -> str:
        return NO_DATA.format(op=self._source_name(), what="text file", path=" " + ", ".join(self.dataset_files))


# --------------------------------------------------------------------------------------------
# CSVDataset
# --------------------------------------------------------------------------------------------

class CsvParseError(ValueError):
    pass


def split_csv(text: str, delim: str) -> list[str]:
    """Splits one CSV record: fields in double quotes may hold the delimiter, newlines and "" for a
    quote; a quote inside an unquoted field, or text after a closing quote, is an error."""
    if '"' not in text:
        return text.split(delim)
    fields = []
    i, n = 0, len(text)
    while True:
        if i < n and text[i] == '"':
            buf = []
            i += 1
            while True:
                j = text.find('"', i)
                if j < 0:
                    raise CsvParseError("a quoted field is never closed")
                buf.append(text[i:j])
                if j + 1 < n and text[j + 1] == '"':
                    buf.append('"')
                    i = j + 2
                    continue
                i = j + 1
                break
            fields.append("".join(buf))
            if i == n:
                return fields
            if text[i] != delim:
                raise CsvParseError("receive unquote char in quote field")
            i += 1
            if i == n:
                fields.append("")
                return fields
        else:
            j = text.find(delim, i)
            field = text[i:] if j < 0 else text[i:j]
            if '"' in field:
                raise CsvParseError("unexpected quote in unquote field")
            fields.append(field)
            if j < 0:
                return fields
            i = j + 1


_INT_PREFIX = re.compile(r"\s*[+-]?\d+")
_FLOAT_PREFIX = re.compile(
    r"\s*[+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?"
    r"|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)", re.IGNORECASE)
_INT32_MIN, _INT32_MAX = -2**31, 2**31 - 1


class _OutOfRange(ValueError):
    pass


def parse_int32(text: str) -> int:
    """C++ ``std::stoi``: leading blanks, a sign and digits; the rest of the text is ignored."""
    m = _INT_PREFIX.match(text)
    if m is None:
        raise CsvParseError("type does not match")
    value = int(m.group())
    if not _INT32_MIN <= value <= _INT32_MAX:
        raise _OutOfRange("value out of range")
    return value


def parse_float32(text: str) -> float:
    """C++ ``std::stof``: the longest decimal, hexadecimal, inf or nan prefix; the rest is ignored."""
    m = _FLOAT_PREFIX.match(text)
    if m is None:
        raise CsvParseError("type does not match")
    s = m.group().strip()
    value = float.fromhex(s) if s.lstrip("+-")[:2].lower() == "0x" else float(s)
    if not math.isfinite(value):
        return value
    with np.errstate(over="ignore", under="ignore"):
        f32 = np.float32(value)
    if np.isinf(f32) or (value != 0.0 and f32 == 0.0):
        raise _OutOfRange("value out of range")
    return float(f32)


_INT, _FLOAT, _STR = 0, 1, 2


def _check_defaults(column_defaults: Any) -> list[Any] | None:
    if column_defaults is None:
        return None
    checks.check_type(column_defaults, list, "column_defaults")
    for i, v in enumerate(column_defaults):
        if type(v) not in (int, float, str, bool):
            raise TypeError(f"column type in column_defaults is invalid: column_defaults[{i}] with value {v!r} is "
                            f"of type {type(v)}; use int, float or str.")
    return list(column_defaults)


class CsvSource(_RecordsSource):
    """Rows of CSV files: one column per field, typed by the column defaults."""

    def __init__(self, files: Sequence[str], delim: str, kinds: list[int], names: list[str] | None, op: str) -> None:
        super().__init__(LineFiles(files, True, op, skip_first=names is None, delim=delim), op)
        self.delim = delim
        self._kinds = kinds
        self._given_names = names
        self.column_names = list(names) if names is not None else []
        self.header_file: str | None = None  # "<file> (its header, line N)" the names come from
        self.header_path: str | None = None

    def resolve_names(self) -> None:
        """Reads the header of every file when the names come from the files."""
        if self._given_names is not None:
            return
        self.lines.ensure()
        names = None
        for path, head, offset in zip(self.lines.files, self.lines.headers, self.lines.header_offsets):
            if head is None:
                continue
            at = f"{path} (its header, line {_line_number(path, offset)})"
            try:
                fields = split_csv(head.decode("utf-8").rstrip("\r"), self.delim)
            except (UnicodeDecodeError, CsvParseError) as e:
                raise PipelineError(self.op, f"Invalid file, failed to get column name list from csv file: {at}: "
                                    f"{e}.", file=path) from e
            if len(set(fields)) != len(fields):
                twice = sorted({f for f in fields if fields.count(f) > 1})
                raise PipelineError(self.op, f"Invalid file, failed to get column name list from csv file: {at}: "
                                    f"the header repeats the column name(s) {twice}.", file=path)
            if names is None:
                names, self.header_file, self.header_path = fields, at, path
            elif fields != names:
                raise PipelineError(self.op, f"Invalid file, the header of {at} ({fields}) differs from the first "
                                    f"file's ({names}); all files must have the same columns.", file=path)
        self.column_names = names or []

    def read(self, index: int) -> tuple:
        data, k, off = self.lines.raw(index)
        path = self.lines.files[k]
        j = index - int(self.lines._starts[k])
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise self._error(path, j, off, f"it is not UTF-8 text ({e.reason})", parse=True) from e
        if text.endswith("\r"):
            text = text[:-1]
        try:
            fields = split_csv(text, self.delim)
        except CsvParseError as e:
            raise self._error(path, j, off, f"Invalid csv file, {e}, check {path}.", parse=True) from e
        ncols = len(self.column_names)
        if len(fields) != ncols:
            raise self._error(path, j, off, f"the record has {len(fields)} field(s), but there are {ncols} columns "
                                            f"{self.column_names}", parse=True)
        out = []
        for i, field in enumerate(fields):
            kind = self._kinds[i] if i < len(self._kinds) else _STR
            try:
                if kind == _INT:
                    out.append(np.array(parse_int32(field), dtype=np.int32))
                elif kind == _FLOAT:
                    out.append(np.array(parse_float32(field), dtype=np.float32))
                else:
                    out.append(np.array(field))
            except _OutOfRange as e:
                raise self._error(path, j, off, f"Column {self.column_names[i]!r}: {e} ({field!r})") from e
            except CsvParseError as e:
                raise self._error(path, j, off, f"Column {self.column_names[i]!r}: {field!r} is not "
                                                f"{'an int' if kind == _INT else 'a float'}") from e
        return tuple(out)

    def _error(self, path: str, record: int, offset: int, detail: str, parse: bool = False) -> PipelineError:
        """MindSpore's sentence (``parse``: a record it cannot split into the columns; else a value
        that is not of its column's type; ``line`` counts the records), then what headrace saw."""
        line = _line_number(path, offset)
        number = record + 1
        if parse:
            head = f"Invalid file, failed to parse csv file: {path} at line {number}. Error message:"
        else:
            head = f"Invalid csv, csv file: {path} parse failed at line {number}, type does not match."
        return PipelineError(self.op, f"{head} {detail} (line {line} of the file).", file=path)


def _check_names_when_built(names: Sequence[str] | None, op: str) -> None:
    """MindSpore's check of ``column_names`` when it builds the pipeline (its constructor takes
    empty and repeated names): the first empty name, else the first name seen twice."""
    for i, name in enumerate(names or ()):
        if not name:
            raise syntax_error(op, f"'column_names' [{i}] must not be empty")
    seen: set[str] = set()
    for name in names or ():
        if name in seen:
            raise syntax_error(op, f"'column_names' : Invalid parameter, duplicate column names are not allowed: {name}")
        seen.add(name)


@_with_read_args
class CSVDataset(RowFilesDataset):
    """Rows from CSV files: one column per field.

    Column names come from ``column_names`` or, without it, from the first line of each file
    (a header, which must be the same in every file). Fields are strings unless
    ``column_defaults`` gives a column an int (read as int32, like C++ ``std::stoi``) or float
    (float32, like ``std::stof``) default; an empty numeric field is an error, as in MindSpore.
    Fields in double quotes may hold the delimiter, line breaks and ``""`` for a quote. Lines that
    are empty are skipped; a trailing "\\r" is dropped.

    Args:
        dataset_files (Union[str, list[str]]): Files or glob patterns; read in sorted order.
        field_delim (str, optional): The one-character field delimiter; None is ','. Default: ','.
        column_defaults (list, optional): Per column, an int, float or str giving its type.
            Default: None, all strings.
        column_names (list[str], optional): Column names. Default: None, read from the header.
        {read_args}

    Raises:
        TypeError, ValueError: For bad arguments; ValueError if a pattern matches no file.
        RuntimeError: When iterating, if a record cannot be parsed (the message names the file and
            line), the headers differ or there is no data.

    Examples:
        >>> import os, tempfile, headrace.dataset as ds
        >>> path = os.path.join(tempfile.mkdtemp(), "a.csv")
        >>> _ = open(path, "w").write('id,score,name\\n1,0.5,"Smith, J"\\n2,1.5,Lee\\n')
        >>> d = ds.CSVDataset(path, column_defaults=[0, 0.0, ""], shuffle=False)
        >>> d.get_col_names(), [(int(a), float(b), str(c)) for a, b, c in d.create_tuple_iterator(output_numpy=True)]
        (['id', 'score', 'name'], [(1, 0.5, 'Smith, J'), (2, 1.5, 'Lee')])
    """

    def __init__(self, dataset_files, field_delim=',', column_defaults=None, column_names=None, num_samples=None,
                 num_parallel_workers=None, shuffle=Shuffle.GLOBAL, num_shards=None, shard_id=None, cache=None):
        if field_delim is None:  # as in MindSpore: the default
            field_delim = ','
        checks.check_type(field_delim, str, "field delim")  # MindSpore's name for it in this message
        if len(field_delim) != 1 or field_delim in '"\r\n':
            raise ValueError(f"field_delim is invalid. It must be one character other than '\"', '\\r' and '\\n', "
                             f"but got {field_delim!r}.")
        self.field_delim = field_delim
        self.column_defaults = _check_defaults(column_defaults)
        # empty and repeated names are refused when the pipeline is built, as MindSpore does
        self.column_names = checks.check_columns(column_names, "column_names", distinct=False) \
            if column_names is not None else None
        if self.column_names is not None and self.column_defaults is not None and \
                len(self.column_defaults) > len(self.column_names):
            raise ValueError(f"column_defaults has {len(self.column_defaults)} entries but column_names names only "
                             f"{len(self.column_names)} columns.")
        super().__init__(dataset_files, num_samples, num_parallel_workers, True if shuffle is None else shuffle,
                         num_shards, shard_id, cache)

    def _make_source(self) -> CsvSource:
        _check_names_when_built(self.column_names, self._source_name())
        kinds = [] if self.column_defaults is None else [
            _INT if isinstance(v, int) else _FLOAT if isinstance(v, float) else _STR for v in self.column_defaults]
        src = CsvSource(self.dataset_files, self.field_delim, kinds, self.column_names, self._source_name())
        src.resolve_names()
        if self.column_defaults is not None and len(self.column_defaults) > len(src.column_names) > 0:
            raise PipelineError(self._source_name(), f"column_defaults has {len(self.column_defaults)} entries but the "
                                f"header of {src.header_file} names only {len(src.column_names)} columns "
                                f"{src.column_names}.", file=src.header_path)
        return src

    def _make_plan(self):
        src = self._source()
        if not src.column_names:
            stream = NoDataStream((), self._source_name(), self._no_data_detail())
            return P.StreamNode((), (), stream, self._source_name(), None, 0)
        return super()._make_plan()

    def _no_data_detail(self) -> str:
        return NO_DATA.format(op=self._source_name(), what="csv file path", path=" " + ", ".join(self.dataset_files))
