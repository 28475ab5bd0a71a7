"""Shared pieces of the file-format sources: argument checks for paths, file lists and usage,
a base class for sources over files, and reading helpers that name the file when they fail.
"""
from __future__ import annotations

import glob
import os
import threading
from typing import Any, BinaryIO, Iterator, Sequence, TextIO

import numpy as np

from headrace._engine import plan as P
from headrace._util import checks
from headrace._util.errors import PipelineError
from headrace._util.files import file_kind, open_regular, open_regular_text, read_regular
from headrace._util.forksafe import fork_safe
from headrace._util.pickling import FreshLock
from headrace._engine.samplers.files import FileRowsPlan
from headrace.dataset._sources.base import MappableDataset
from headrace.dataset.samplers import shuffle_mode
from headrace.dataset._sampler_args import check_sampler_shuffle_shard_options

NO_DATA = ("Invalid data, {op} API can't read the data file (interface mismatch or no data found). "
           "Check {what}: {path}")


def check_dir(path: Any, name: str = "dataset_dir") -> str:
    """``path`` as a str naming an existing folder; TypeError / ValueError otherwise."""
    checks.check_type(path, (str, os.PathLike), name)
    path = os.fspath(path)
    if not os.path.isdir(path) or not os.access(path, os.R_OK):
        raise ValueError(f"The folder {path} does not exist or is not a directory or permission denied!")
    return path


def check_file(path: Any, name: str = "dataset_file") -> str:
    """``path`` as a str naming an existing readable file; TypeError / ValueError otherwise."""
    checks.check_type(path, (str, os.PathLike), name)
    path = os.fspath(path)
    if os.path.exists(path) and not os.path.isfile(path):
        raise ValueError(f"The file {path} is {file_kind(os.stat(path).st_mode)}, not a regular file.")
    if not os.path.isfile(path) or not os.access(path, os.R_OK):
        raise ValueError(f"The file {path} does not exist or permission denied!")
    return path


def expand_files(dataset_files: Any, name: str = "dataset_files") -> list[str]:
    """A file pattern or a list of them, expanded with ``glob`` and sorted (MindSpore sorts too).

    A file named twice is read twice. Raises TypeError for other kinds of value, ValueError for an
    empty list or for patterns that match no file.
    """
    if isinstance(dataset_files, (str, os.PathLike)):
        patterns = [os.fspath(dataset_files)]
        if not patterns[0]:  # (an empty pattern in a list is a pattern that matches nothing, as in MindSpore)
            raise ValueError(f"Input {name} can not be empty, but got '{patterns[0]}'.")
    elif isinstance(dataset_files, (list, tuple)):
        if not dataset_files:
            raise ValueError(f"Input {name} can not be empty, but got '{list(dataset_files)}'.")
        for p in dataset_files:
            if not isinstance(p, (str, os.PathLike)):
                raise TypeError(f"{name} should be type str or a list of strings.")
        patterns = [os.fspath(p) for p in dataset_files]
    else:
        raise TypeError(f"{name} should be type str or a list of strings.")
    files, missing = [], []
    for pattern in patterns:
        if os.path.isfile(pattern):
            files.append(pattern)
            continue
        found = sorted(f for f in glob.glob(pattern) if os.path.isfile(f))
        if not found:
            missing.append(pattern)
        files.extend(found)
    if missing:
        raise ValueError(f"The following patterns did not match any files: {missing}.")
    return sorted(files)


def check_usage(usage: Any, valid: Sequence[str], default: str, name: str = "usage") -> str:
    """``usage`` (None means ``default``) checked against ``valid``."""
    if usage is None:
        return default
    checks.check_type(usage, str, name)
    if usage not in valid:
        raise ValueError(f"Input {name} is not within the valid set of {list(valid)}.")
    return usage


def check_decode(decode: Any) -> bool:
    return checks.check_bool(decode, "decode")


def check_decrypt(decrypt: Any) -> Any:
    if decrypt is not None and not callable(decrypt):
        raise TypeError(f"Argument decrypt is not a callable object, but got {type(decrypt)}")
    return decrypt


def check_class_indexing(class_indexing: Any) -> dict[str, int] | None:
    """The checked ``class_indexing`` (folder or annotation name -> label); None or {} give None."""
    if class_indexing is None:
        return None
    checks.check_type(class_indexing, dict, "class_indexing")
    for k, v in class_indexing.items():
        checks.check_type(k, str, "class_indexing key")
        checks.check_int(v, f"class_indexing[{k!r}]")
        checks.check_range(v, (-checks.INT32_MAX - 1, checks.INT32_MAX), f"class_indexing[{k!r}]")
    # an empty dict names no class: as MindSpore, every class is read, numbered as without one
    return {k: int(v) for k, v in class_indexing.items()} or None


def check_extensions(extensions: Any) -> list[str] | None:
    if extensions is None:
        return None
    checks.check_type(extensions, (list, tuple), "extensions")
    for i, e in enumerate(extensions):
        checks.check_type(e, str, f"extensions[{i}]")
    return list(extensions)


def file_extension(name: str) -> str:
    """The part of ``name`` from its last dot (``'.JPG'``; ``''`` without a dot), case kept."""
    dot = name.rfind(".")
    return name[dot:] if dot >= 0 else ""


def read_bytes(path: str, offset: int = 0, length: int = -1) -> bytes:
    """``length`` bytes of ``path`` from ``offset`` (-1: to the end); opens and closes the file.

    Every source reads its data files through this module (``read_bytes``, ``open_data``,
    ``open_text``): a FIFO, a device or a socket, even behind a symlink, is refused with an
    ``OSError`` naming it (``headrace._util.files``) instead of blocking or reading forever.
    """
    return read_regular(path, offset, length)


def open_data(path: str, op: str) -> BinaryIO:
    """``path`` opened for binary reading, or a PipelineError naming it (missing, unreadable, not a
    regular file)."""
    try:
        return open_regular(path)
    except OSError as e:
        raise PipelineError(op, f"Invalid file, failed to open {path}: {e.strerror or e}.", file=path) from e


def open_text(path: str, op: str) -> TextIO:
    """``path`` opened for reading UTF-8 text, or a PipelineError naming it."""
    try:
        return open_regular_text(path)
    except OSError as e:
        raise PipelineError(op, f"Invalid file, failed to open {path}: {e.strerror or e}.", file=path) from e


def read_exact(path: str, offset: int, length: int, op: str, what: str = "record") -> bytes:
    """Exactly ``length`` bytes at ``offset``, or a PipelineError naming the file (it shrank)."""
    try:
        data = read_bytes(path, offset, length)
    except OSError as e:
        raise PipelineError(op, f"Invalid file, failed to read {path}: {e.strerror or e}.", file=path) from e
    if len(data) != length:
        raise PipelineError(op, f"Invalid file, {path} ended inside a {what}: expected {length} bytes at "
                                f"offset {offset}, got {len(data)}; the file changed or is truncated.", file=path)
    return data


def as_uint8(data: bytes) -> np.ndarray:
    """A writable 1-D uint8 array holding ``data``."""
    return np.frombuffer(bytearray(data), dtype=np.uint8)


class RowsOfFiles(FreshLock):
    """Rows numbered across a list of files, file by file: file ``k`` holds rows ``starts[k]`` to
    ``starts[k + 1] - 1``, from an index with one entry per file, built once on first use from any
    thread (the sources of TFRecord, text and parsed text files).

    A subclass builds the entries in ``_build_files()`` (outside the lock: where two threads build
    at once, the first to finish is kept), says how many rows an entry holds in ``_rows_in`` (by
    default the length of its first item) and may take more from the kept entries in ``_adopt``.
    """

    def __init__(self, files: Sequence[str]) -> None:
        self.files = list(files)
        self._lock = fork_safe(threading.Lock())
        self._index: list | None = None
        self._starts: np.ndarray | None = None

    def _build_files(self) -> list:
        raise NotImplementedError

    @staticmethod
    def _rows_in(entry: Any) -> int:
        return len(entry[0])

    def _adopt(self, index: list) -> None:
        """Called under the lock with the entries kept, before they are published."""

    def ensure(self) -> list:
        """The entries, one per file (built on the first call)."""
        index = self._index
        if index is None:
            built = self._build_files()
            with self._lock:
                if self._index is None:
                    self._adopt(built)
                    self._starts = np.concatenate([[0], np.cumsum([self._rows_in(e) for e in built],
                                                                  dtype=np.int64)])
                    self._index = built
                index = self._index
        return index

    def counts(self) -> np.ndarray:
        """Rows of each file."""
        self.ensure()
        return np.diff(self._starts)

    def __len__(self) -> int:
        self.ensure()
        return int(self._starts[-1])

    def locate(self, index: int) -> tuple[int, int]:
        """(file number, row in that file) of row ``index``."""
        self.ensure()
        k = int(np.searchsorted(self._starts, index, side="right")) - 1
        return k, index - int(self._starts[k])

    def file_of(self, index: int) -> str | None:
        """The file of row ``index``; None before the index is built or for a row out of range."""
        if self._index is None or not 0 <= index < int(self._starts[-1]):
            return None
        return self.files[self.locate(index)[0]]


class NoDataStream:
    """A ``StreamSource`` that fails when read: a source that found nothing to read.

    ``get_dataset_size()`` reports 0 (as in MindSpore); iterating raises the reason.
    """

    def __init__(self, names: Sequence[str], op: str, detail: str, file: str | None = None) -> None:
        self.column_names = list(names)
        self._op, self._detail, self._file = op, detail, file

    def iterate(self) -> Iterator[tuple]:
        raise PipelineError(self._op, self._detail, file=self._file)
        yield ()  # pragma: no cover - makes this a generator


class FileSourceDataset(MappableDataset):
    """Base of the sources that read files by index.

    Subclasses implement ``_make_source()`` (a RandomAccessSource); when it has no rows, iterating
    raises ``_no_data_detail()`` instead of yielding nothing, as MindSpore does.
    """

    def __init__(self, num_samples=None, num_parallel_workers=None, shuffle=None, sampler=None,
                 num_shards=None, shard_id=None, cache=None):
        check_sampler_shuffle_shard_options(sampler, shuffle, num_shards, shard_id, num_samples)
        super().__init__(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache)

    def _no_data_detail(self) -> str:
        return NO_DATA.format(op=self._source_name(), what="file path", path=getattr(self, "dataset_dir", ""))

    def _make_plan(self) -> P.Node:
        src = self._source()
        if len(src) == 0:
            name = self._source_name()
            stream = NoDataStream(src.column_names, name, self._no_data_detail())
            return P.StreamNode((), tuple(src.column_names), stream, name, None, 0)
        return super()._make_plan()

    def _class_indexing(self):
        return {}

    def _num_classes(self):
        return None


class RowFilesDataset(FileSourceDataset):
    """Base of the sources MindSpore reads as streams of rows from files (TFRecord, CSV, TextFile).

    headrace indexes the records instead, and reads them in the orders described in
    ``headrace/_engine/samplers/files.py``: ``shuffle`` takes a bool or a ``Shuffle`` mode instead of a sampler.
    Subclasses set ``dataset_files`` and implement ``_make_source()``, whose source also has
    ``counts()`` (rows per file).
    """

    streamed_in_mindspore = True

    def __init__(self, dataset_files, num_samples=None, num_parallel_workers=None, shuffle=None, num_shards=None,
                 shard_id=None, cache=None):
        self.dataset_files = expand_files(dataset_files)
        self._mode = shuffle_mode(shuffle)
        super().__init__(num_samples, num_parallel_workers, False, None, num_shards, shard_id, cache)
        self.shuffle_flag = shuffle
        self.shuffle_level = shuffle

    def _equal_rows(self) -> bool:
        return True

    def _row_limit(self) -> int | None:
        return self.num_samples

    def _per_file_layout(self, src: Any) -> tuple[bool, Any]:
        """(per_file, check_files) of the plan (``headrace/_engine/samplers/files.py``): whether
        a row count is taken file by file (TFRecord's compressed files), and the check of a pass's files."""
        return False, None

    def _file_plan(self) -> FileRowsPlan:
        src = self._source()
        return FileRowsPlan(src.counts, self._mode, self.num_shards, self.shard_id, self._row_limit(),
                            self._equal_rows(), *self._per_file_layout(src))

    def _split_base_plan(self) -> Any:
        split = self.__dict__.get("_split_plan")
        return split if split is not None else self._file_plan()

    def _make_plan(self) -> P.Node:
        # a part of a split reads its own rows (a SplitPlan over the files' order)
        self._sampler_plan = self._split_base_plan()
        return super()._make_plan()

    def is_shuffled(self):
        return self._mode != "false"

    def is_sharded(self):
        return self.num_shards is not None and self.num_shards > 1

    def use_sampler(self, new_sampler):
        raise TypeError(f"{type(self).__name__} reads its files in stream order and takes no sampler; "
                        "use shuffle, num_shards and shard_id.")

    add_sampler = use_sampler
