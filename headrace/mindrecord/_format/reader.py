"""Random access to the rows of a set of MindRecord shards.

``ShardSetReader.locate`` finds a row's raw and blob records through a table loaded once from the
``.db`` indexes (or rebuilt from the data files); reading a row is then one ``os.pread`` of its
blob record (length prefix included, so a mismatched index is caught) plus a raw record that comes
from a cached raw page. Reads are thread-safe. Files are opened lazily, per process: after a fork
the child opens its own descriptors, and pickling carries the tables but no descriptor.
"""
from __future__ import annotations

import bisect
import copy
import os
import struct
import threading
from typing import Any, Callable, Sequence

import numpy as np

from headrace._util.forksafe import fork_safe
from headrace._util.pickling import FreshLock

from .crypto import DecryptedCopies
from .errors import MindRecordFormatError, MindRecordRuntimeError
from .header import Header, check_same_dataset, read_header, shard_paths
from .index import ShardIndex, load_index, scan_shard
from .rows import decode_raw, decompress_ints, is_whole, split_blob
from .schema import Field, Schema
from .integrity import check_sidecar
from .verify import CHECKSUM, verify_shard

_LEN = struct.Struct("<Q")
RAW_CACHE_LIMIT = 256 << 20   # raw pages are cached in memory when they total at most this
_O_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
_LE = {"int32": np.dtype("<i4"), "int64": np.dtype("<i8"), "float32": np.dtype("<f4"), "float64": np.dtype("<f8")}
_INT_BOUNDS = {"int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1)}

# Descriptors belong to the process that opened them. Instead of calling os.getpid() on every read
# (a system call), readers remember the fork generation they opened their files in; a hook that the
# first reader installs bumps the generation in every forked child.
_fork_generation = 0
_hook_installed = False
_hook_lock = fork_safe(threading.Lock())


def _forked() -> None:
    global _fork_generation
    _fork_generation += 1


def _install_fork_hook() -> None:
    global _hook_installed
    if not _hook_installed:
        with _hook_lock:
            if not _hook_installed and hasattr(os, "register_at_fork"):
                os.register_at_fork(after_in_child=_forked)
            _hook_installed = True


def expand_files(file_name: str | Sequence[str]) -> tuple[list[str], bool]:
    """The data files to read: all shards of ``file_name`` (a str), or exactly the listed files."""
    if isinstance(file_name, str):
        return [file_name], True
    return list(file_name), False


class ShardSetReader(FreshLock):
    """Reads rows by global row id from a set of shards.

    Args:
        files: a data file (all shards of its dataset are read) or a list of data files (only those).
        load_dataset: True when ``files`` is a single file whose sibling shards are to be loaded.
        rebuild_missing_index: build the row table from the data files when a ``.db`` is missing
            or damaged, instead of raising.
        verify: verify every file in full when the row tables are loaded (``verify.verify_shard``:
            every record decoded and checked, the ``.db`` against the data file), raising
            ``MindRecordFormatError`` naming file, page and row on the first problem; ``"checksum"``:
            check only each file's CRC sidecar (``integrity.check_sidecar``).
    """

    def __init__(self, files: Sequence[str], load_dataset: bool = True, *, rebuild_missing_index: bool = False,
                 verify: bool | str = False) -> None:
        files = [os.fspath(f) for f in files]
        # Encrypted files (MindSpore's set_enc_key) are read from plain copies that live as long as
        # this reader; without encryption this only checks each file's last bytes.
        self._plain = DecryptedCopies(files)
        files = self._plain.paths
        first = files[0]
        fd = _open(first)
        try:
            header = read_header(fd, first)
        finally:
            os.close(fd)
        if load_dataset and len(files) == 1:
            paths = shard_paths(first, header)
        else:
            paths = files
        headers = []
        for p in paths:
            if not os.path.isfile(p):
                raise MindRecordFormatError(f"Invalid file, the mindrecord shard {p} listed in the header of "
                                            f"{first} does not exist. Please check that no shard was removed or "
                                            f"renamed.", p)
            fd = _open(p)
            try:
                headers.append(read_header(fd, p))
            finally:
                os.close(fd)
        check_same_dataset(headers, paths, layout=False)
        self.paths = paths
        self.headers = headers
        self.schema: Schema = headers[0].schema
        self.blob_fields = self.schema.blob_fields
        self.raw_fields = self.schema.raw_fields
        self.index_fields = headers[0].index_fields
        self.compressed = headers[0].compressed
        self._rebuild = rebuild_missing_index
        self.verify = verify
        self._lock = fork_safe(threading.Lock())
        self._pid = -1
        self._gen = -1
        self._fds: list[int] = []
        self._loaded = False
        self._locs: np.ndarray | None = None
        self._starts: list[int] = []
        self._raw_pages: dict[tuple[int, int], bytes] = {}
        self._cache_raw = False

    # ------------------------------------------------------------------ lifecycle

    def _load(self) -> None:
        """Loads the row tables (once per object, not per process)."""
        tables = []
        for path, header in zip(self.paths, self.headers):
            if self.verify == CHECKSUM:
                check_sidecar(path, header)
            elif self.verify:
                tables.append(_absolute(verify_shard(path, header).index, header))
                continue
            try:
                table = _load_table(path, header)
            except MindRecordFormatError:
                if not self._rebuild:
                    raise
                fd = _open(path)
                try:
                    table = _absolute(scan_shard(fd, header, path), header)
                finally:
                    os.close(fd)
            tables.append(table)
        counts = [len(t) for t in tables]
        self._starts = list(np.concatenate([[0], np.cumsum(counts)]).astype(int)) if counts else [0]
        self._locs = np.concatenate(tables) if tables else np.zeros((0, 4), dtype=np.int64)
        raw_total = sum(p.size for h in self.headers for p in h.pages if p.page_type == "RAW_DATA")
        self._cache_raw = raw_total <= RAW_CACHE_LIMIT
        self._loaded = True

    def _fd(self, shard: int) -> int:
        if self._gen != _fork_generation:
            self._reopen()
        return self._fds[shard]

    def _reopen(self) -> None:
        _install_fork_hook()
        with self._lock:
            if self._gen == _fork_generation:
                return
            old = self._fds
            fds = [_open(p) for p in self.paths]
            if self._pid not in (-1, os.getpid()):   # inherited through fork: the child closes its copies
                for fd in old:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            self._fds = fds
            self._pid = os.getpid()
            self._gen = _fork_generation

    def ensure_loaded(self) -> None:
        if not self._loaded:
            with self._lock:
                if not self._loaded:
                    self._load()

    def close(self) -> None:
        """Closes this process's descriptors. The reader reopens them if used again."""
        with self._lock:
            if self._pid == os.getpid():
                for fd in self._fds:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            self._fds = []
            self._pid = -1
            self._gen = -1
            self._raw_pages = {}

    def release_copies(self) -> None:
        """Closes the descriptors and removes the decrypted copies of encrypted files, if any."""
        self.close()
        self._plain.release()

    def __getstate__(self) -> dict:
        return self._state(_fds=[], _pid=-1, _gen=-1, _raw_pages={})

    def __del__(self) -> None:
        try:
            if self._pid == os.getpid():
                for fd in self._fds:
                    os.close(fd)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    # ------------------------------------------------------------------ access

    def __len__(self) -> int:
        self.ensure_loaded()
        return self._starts[-1]

    @property
    def num_rows(self) -> int:
        return len(self)

    def locate(self, i: int) -> tuple[int, int]:
        """(shard, row within shard) of global row ``i``."""
        s = bisect.bisect_right(self._starts, i) - 1
        return s, i - self._starts[s]

    def read_records(self, i: int) -> tuple[Any, np.ndarray]:
        """The decoded raw record (a dict) and the blob payload (a writable uint8 array) of global row ``i``."""
        self.ensure_loaded()
        n = self._starts[-1]
        if not 0 <= i < n:
            raise IndexError(f"row {i} is out of range for a dataset of {n} rows")
        shard = bisect.bisect_right(self._starts, i) - 1
        raw_off, raw_len, blob_off, blob_len = self._locs[i].tolist()  # type: ignore[index]
        fd = self._fd(shard)
        blob = np.empty(blob_len, dtype=np.uint8)  # not zero-filled (a bytearray is): pread fills it
        got = os.preadv(fd, [blob], blob_off)
        if got != blob_len:
            self._short_read(shard, i, "blob", blob_off, blob_len, got)
        if _LEN.unpack_from(blob, 0)[0] != blob_len - 8:
            self._bad_prefix(shard, i, "blob", _LEN.unpack_from(blob, 0)[0], blob_len - 8)
        raw = self._raw_bytes(shard, i, fd, raw_off, raw_len)
        if _LEN.unpack_from(raw, 0)[0] != raw_len - 8:
            self._bad_prefix(shard, i, "raw", _LEN.unpack_from(raw, 0)[0], raw_len - 8)
        try:
            rec = decode_raw(memoryview(raw)[8:])
        except ValueError as exc:
            raise MindRecordFormatError(f"Invalid file, {exc}.", self.paths[shard], i - self._starts[shard]) from None
        if not isinstance(rec, dict):
            raise MindRecordFormatError("Invalid file, the raw record is not a map.", self.paths[shard],
                                        i - self._starts[shard])
        return rec, blob

    def _raw_bytes(self, shard: int, i: int, fd: int, off: int, length: int) -> bytes | memoryview:
        if not self._cache_raw:
            data = os.pread(fd, length, off)
            if len(data) != length:
                self._short_read(shard, i, "raw", off, length, len(data))
            return data
        header = self.headers[shard]
        page = (off - header.header_size) // header.page_size
        page_start = header.header_size + page * header.page_size
        key = (shard, page)
        data = self._raw_pages.get(key)  # type: ignore[assignment]
        if data is None:
            size = header.pages[page].size
            data = os.pread(fd, size, page_start)
            if len(data) != size:
                self._short_read(shard, i, "raw", off, length, max(0, len(data) - (off - page_start)))
            with self._lock:
                self._raw_pages[key] = data
        rel = off - page_start
        return memoryview(data)[rel:rel + length]

    def _short_read(self, shard: int, i: int, what: str, off: int, length: int, got: int) -> None:
        raise MindRecordFormatError(f"Invalid file, the {what} record ({length} bytes at offset {off}) runs past "
                                    f"the end of the file (got {got} bytes); the file is truncated.",
                                    self.paths[shard], i - self._starts[shard])

    def _bad_prefix(self, shard: int, i: int, what: str, got: int, want: int) -> None:
        exc = MindRecordFormatError(f"Invalid file, the {what} record's length prefix says {got} bytes but the index "
                                    f"says {want}; the .db does not belong to this data file or the file is damaged.",
                                    self.paths[shard], i - self._starts[shard])
        raise exc

    def where(self, i: int) -> tuple[str, int]:
        """(file, row within file) of global row ``i``, for error messages."""
        s = bisect.bisect_right(self._starts, i) - 1
        return self.paths[s], i - self._starts[s]


def _open(path: str) -> int:
    try:
        return os.open(path, _O_FLAGS)
    except FileNotFoundError:
        raise MindRecordRuntimeError(f"Invalid file, failed to open mindrecord file: {path}, it does not "
                                     f"exist.") from None


# Row tables loaded from ``.db`` files, by data file: (the .db's bytes, the header, the table). A
# dataset made again over the same files (each epoch of a loop that builds its pipeline anew) finds
# its table here instead of querying SQLite again, but only when the ``.db`` it reads now holds
# exactly the same bytes and the data file's header is the same: ``load_index`` is a function of
# those two (and of the file's name), so a hit returns what loading would. Bounded in bytes.
_TABLE_CACHE: dict[str, tuple[bytes, Header, np.ndarray]] = {}
_TABLE_CACHE_LIMIT = 64 << 20
_table_lock = fork_safe(threading.Lock())


def _load_table(path: str, header: Header) -> np.ndarray:
    """(raw offset, raw length, blob offset, blob length) of every row of one shard, from its ``.db``
    (read-only array). Raises what ``load_index`` raises."""
    key = os.path.abspath(path)
    db = path + ".db"
    content = None
    if not (os.path.exists(db + "-wal") or os.path.exists(db + "-journal")):   # SQLite state beside the file
        try:
            with open(db, "rb") as f:
                if os.fstat(f.fileno()).st_size <= _TABLE_CACHE_LIMIT // 4:   # larger: not cached
                    content = f.read(_TABLE_CACHE_LIMIT // 4 + 1)
        except OSError:
            content = None   # load_index reports it
        if content is not None and len(content) > _TABLE_CACHE_LIMIT // 4:
            content = None
    if content is not None:
        with _table_lock:
            hit = _TABLE_CACHE.get(key)
        if hit is not None and hit[0] == content and hit[1] == header:
            return hit[2]
    table = _absolute(load_index(path, header), header)
    table.flags.writeable = False
    if content is not None:
        try:
            with open(db, "rb") as f:
                again = f.read(len(content) + 1)
        except OSError:
            again = None
        if again == content:   # unchanged while SQLite read it
            with _table_lock:
                _TABLE_CACHE.pop(key, None)
                total = sum(len(c) + t.nbytes for c, _, t in _TABLE_CACHE.values())
                while _TABLE_CACHE and total + len(content) + table.nbytes > _TABLE_CACHE_LIMIT:
                    c, _, t = _TABLE_CACHE.pop(next(iter(_TABLE_CACHE)))
                    total -= len(c) + t.nbytes
                if len(content) + table.nbytes <= _TABLE_CACHE_LIMIT:
                    _TABLE_CACHE[key] = (content, copy.deepcopy(header), table)
    return table


def _absolute(index: ShardIndex, header: Header) -> np.ndarray:
    """(raw offset, raw length, blob offset, blob length) in the file, prefixes included."""
    H, P = header.header_size, header.page_size
    out = np.empty((len(index), 4), dtype=np.int64)
    out[:, 0] = H + index.raw_page * P + index.raw_start
    out[:, 1] = index.raw_end - index.raw_start
    out[:, 2] = H + index.blob_page * P + index.blob_start
    out[:, 3] = index.blob_end - index.blob_start
    return out


# ---------------------------------------------------------------------------------------------
# Field decoders
# ---------------------------------------------------------------------------------------------

class ColumnDecoder:
    """Turns a row's records into values of selected columns.

    Args:
        schema: the dataset schema.
        columns: columns to produce, in output order.
        compressed: whether integer arrays are stored compressed.
        flavor: ``"numpy"`` (MindDataset: every value a NumPy array, bytes as ``S`` arrays of shape
            (1,)) or ``"python"`` (FileReader/MindPage: Python int/float/str/bytes for scalars,
            integral floats as int as MindSpore returns them, arrays for shaped fields).
    """

    def __init__(self, schema: Schema, columns: Sequence[str], compressed: bool, flavor: str = "numpy") -> None:
        self.schema = schema
        self.columns = list(columns)
        self.blob_fields = schema.blob_fields
        self.compressed = compressed
        self.flavor = flavor
        self._blob_pos = {n: k for k, n in enumerate(self.blob_fields)}
        self._decoders: list[tuple[str, bool, Callable]] = []
        for c in self.columns:
            f = schema.fields[c]
            self._decoders.append((c, f.is_blob, self._blob_decoder(f) if f.is_blob else self._raw_decoder(f)))
        self._need_blob = any(is_blob for _, is_blob, _ in self._decoders)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:   # the per-column closures are rebuilt, not pickled
        return (ColumnDecoder, (self.schema, self.columns, self.compressed, self.flavor))

    def decode(self, rec: dict, blob: np.ndarray, where: Callable[[], tuple[str, int]]) -> list:
        """Values of the selected columns, in order."""
        parts = None
        if self._need_blob:
            try:
                parts = split_blob(memoryview(blob)[8:], len(self.blob_fields)) if self.blob_fields else []
            except ValueError as exc:
                file, row = where()
                raise MindRecordFormatError(f"Invalid file, {exc}.", file, row) from None
        out = []
        for name, is_blob, fn in self._decoders:
            try:
                if is_blob:
                    out.append(fn(parts[self._blob_pos[name]]))  # type: ignore[index]
                else:
                    if name not in rec:
                        raise ValueError("the raw record has no value for it")
                    out.append(fn(rec[name]))
            except (ValueError, TypeError, OverflowError) as exc:
                file, row = where()
                raise MindRecordFormatError(f"Invalid data, field '{name}': {exc}.", file, row) from None
        return out

    def _raw_decoder(self, f: Field) -> Callable:
        t = f.type
        numpy = self.flavor == "numpy"
        if t in _INT_BOUNDS:
            lo, hi = _INT_BOUNDS[t]
            dtype = _LE[t]

            def dec_int(v: Any) -> Any:
                if isinstance(v, float):
                    if not v.is_integer():
                        raise ValueError(f"column value {v} is not an integer")
                    v = int(v)
                elif isinstance(v, str):
                    v = int(v)
                elif not isinstance(v, int) or isinstance(v, bool):
                    raise TypeError(f"column value {v!r} is not a number")
                if not lo <= v <= hi:
                    raise ValueError(f"column value: {v} is out of range of {t}")
                return np.array(v, dtype=dtype) if numpy else v  # type: ignore[call-overload]
            return dec_int
        if t in ("float32", "float64"):
            dtype = _LE[t]

            def dec_float(v: Any) -> Any:
                if isinstance(v, str):
                    v = float(v)
                elif not isinstance(v, (int, float)) or isinstance(v, bool):
                    raise TypeError(f"column value {v!r} is not a number")
                if numpy:
                    return np.array(v, dtype=dtype)  # type: ignore[call-overload]
                if isinstance(v, int):
                    return v
                return int(v) if is_whole(v) else v
            return dec_float
        if t == "string":
            def dec_str(v: Any) -> Any:
                if not isinstance(v, str):
                    if isinstance(v, (int, float)) and not isinstance(v, bool):
                        v = repr(v)
                    else:
                        raise TypeError(f"column value {v!r} is not a string")
                return np.array(v) if numpy else v
            return dec_str
        raise ValueError(f"a raw field of type {t}")  # pragma: no cover - schemas forbid it

    def _blob_decoder(self, f: Field) -> Callable:
        numpy = self.flavor == "numpy"
        if f.type == "bytes":
            if numpy:
                def dec_bytes(mv: memoryview) -> np.ndarray:
                    n = mv.nbytes
                    if n == 0:
                        return np.zeros(1, dtype="S1")
                    return np.frombuffer(mv, dtype=f"S{n}")
                return dec_bytes
            return bytes
        dtype = _LE[f.type]
        shape = f.shape
        # MindDataset (MindSpore 2.10) reads an array that has no elements as a 0-d tensor, whatever
        # its schema shape ([-1] or [2, -1]); its value there is whatever memory held, here 0.
        # FileReader and MindPage give the empty array of the schema's shape.
        if f.type in ("int32", "int64") and self.compressed:
            def dec_ints(mv: memoryview) -> np.ndarray:
                arr = _reshape(decompress_ints(mv, dtype), shape)  # type: ignore[arg-type]
                return np.zeros((), dtype) if numpy and not arr.size else arr  # type: ignore[call-overload]
            return dec_ints

        def dec_array(mv: memoryview) -> np.ndarray:
            if mv.nbytes % dtype.itemsize:  # type: ignore[attr-defined]
                raise ValueError(f"{mv.nbytes} bytes is not a whole number of {f.type} elements")
            arr = _reshape(np.frombuffer(mv, dtype=dtype), shape)  # type: ignore[arg-type,call-overload]
            return np.zeros((), dtype) if numpy and not arr.size else arr  # type: ignore[call-overload]
        return dec_array


def _reshape(arr: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    try:
        return arr.reshape(shape)
    except ValueError:
        raise ValueError(f"{arr.size} elements do not fit the schema shape {list(shape)}") from None


# ---------------------------------------------------------------------------------------------
# Fast path for the common layout
# ---------------------------------------------------------------------------------------------
