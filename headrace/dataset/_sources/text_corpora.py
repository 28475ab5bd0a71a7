"""Text corpora read from local files in MindSpore's layouts.

* CSV corpora (AGNews, AmazonReview, DBpedia, SogouNews, YelpReview, YahooAnswers):
  ``dataset_dir/train.csv`` and ``test.csv`` without a header; string columns. They are
  ``CSVDataset``s over those files, so orders, shuffling and sharding are CSVDataset's. For
  ``usage="all"`` the files are read test first, except SogouNews and YelpReview (train first),
  as MindSpore 2.10 does with one reader.
* Line corpora: WikiText (``wiki.{train,valid,test}.tokens``) and PennTreebank
  (``ptb.{train,valid,test}.txt``) are ``TextFileDataset``s over the usage's files (empty lines
  skipped); EnWik9 reads ``dataset_dir/enwik9`` keeping empty lines.
* IMDB (``dataset_dir/{train,test}/{pos,neg}/*``): one row per file, ``text`` (the file's last
  non-empty line, as MindSpore reads it; IMDB reviews are one line) and ``label``
  (int32, pos 1, neg 0), in the order train/pos, train/neg, test/pos, test/neg with each folder's
  files in sorted name order; a mappable source (sampler, shuffle and shards as MindSpore).
"""
from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from headrace._util.errors import PipelineError
from headrace.dataset._sources._files import NO_DATA, FileSourceDataset, check_dir, check_usage, read_bytes
from headrace.dataset._sources.text_files import CSVDataset, TextFileDataset, _line_number
from headrace.dataset.samplers import Shuffle

__all__ = ["AGNewsDataset", "AmazonReviewDataset", "DBpediaDataset", "EnWik9Dataset", "IMDBDataset",
           "PennTreebankDataset", "SogouNewsDataset", "WikiTextDataset", "YahooAnswersDataset",
           "YelpReviewDataset"]

_TRAIN_TEST = ("train", "test", "all")
_TRAIN_VALID_TEST = ("train", "valid", "test", "all")


def _usage_files(dataset_dir: str, usage: str, names: dict[str, str], order: Sequence[str]) -> list[str]:
    wanted = order if usage == "all" else (usage,)
    return [os.path.join(dataset_dir, names[u]) for u in wanted]


class _CsvCorpus(CSVDataset):
    _columns: tuple[str, ...] = ()
    _all_order: tuple[str, ...] = ("test", "train")

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=Shuffle.GLOBAL,
                 num_shards=None, shard_id=None, cache=None):
        self.dataset_dir = check_dir(dataset_dir)
        self.usage = check_usage(usage, _TRAIN_TEST, "all")
        files = _usage_files(self.dataset_dir, self.usage, {"train": "train.csv", "test": "test.csv"},
                             self._all_order)
        super().__init__(files, ",", None, list(self._columns), num_samples, num_parallel_workers, shuffle,
                         num_shards, shard_id, cache)
        self.dataset_files = files  # in the corpus's order, not sorted


class AGNewsDataset(_CsvCorpus):
    """AG News: columns ``index``, ``title``, ``description`` (strings) from ``train.csv`` / ``test.csv``.

    Args:
        dataset_dir (str): The folder holding the CSV files.
        usage (str, optional): "train", "test" or "all". Default: None ("all").
        num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache: as CSVDataset.
    """

    _columns = ("index", "title", "description")


class AmazonReviewDataset(_CsvCorpus):
    """Amazon reviews (polarity or full): columns ``label``, ``title``, ``content``."""

    _columns = ("label", "title", "content")


class DBpediaDataset(_CsvCorpus):
    """DBpedia ontology: columns ``class``, ``title``, ``content``."""

    _columns = ("class", "title", "content")


class SogouNewsDataset(_CsvCorpus):
    """Sogou News: columns ``index``, ``title``, ``content``; "all" reads train.csv first."""

    _columns = ("index", "title", "content")
    _all_order = ("train", "test")

    def __init__(self, dataset_dir, usage=None, num_samples=None, shuffle=Shuffle.GLOBAL, num_shards=None,
                 shard_id=None, num_parallel_workers=None, cache=None):
        super().__init__(dataset_dir, usage, num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache)


class YelpReviewDataset(_CsvCorpus):
    """Yelp reviews (polarity or full): columns ``label``, ``text``; "all" reads train.csv first."""

    _columns = ("label", "text")
    _all_order = ("train", "test")

    def __init__(self, dataset_dir, usage=None, num_samples=None, shuffle=Shuffle.GLOBAL, num_shards=None,
                 shard_id=None, num_parallel_workers=None, cache=None):
        super().__init__(dataset_dir, usage, num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache)


class YahooAnswersDataset(_CsvCorpus):
    """Yahoo! Answers: columns ``class``, ``title``, ``content``, ``answer``."""

    _columns = ("class", "title", "content", "answer")


class _LinesCorpus(TextFileDataset):
    _names: dict[str, str] = {}

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=Shuffle.GLOBAL,
                 num_shards=None, shard_id=None, cache=None):
        self.dataset_dir = check_dir(dataset_dir)
        self.usage = check_usage(usage, _TRAIN_VALID_TEST, "all")
        files = sorted(_usage_files(self.dataset_dir, self.usage, self._names, ("train", "valid", "test")))
        super().__init__(files, num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache)


class WikiTextDataset(_LinesCorpus):
    """WikiText-2 / -103: one row (``text``) per non-empty line of ``wiki.<usage>.tokens``.

    Args:
        dataset_dir (str): The folder holding the files.
        usage (str, optional): "train", "valid", "test" or "all". Default: None ("all").
        num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache: as TextFileDataset.
    """

    _names = {"train": "wiki.train.tokens", "valid": "wiki.valid.tokens", "test": "wiki.test.tokens"}


class PennTreebankDataset(_LinesCorpus):
    """Penn Treebank: one row (``text``) per non-empty line of ``ptb.<usage>.txt``."""

    _names = {"train": "ptb.train.txt", "valid": "ptb.valid.txt", "test": "ptb.test.txt"}


class _AllLinesSource:
    """Rows ``(text,)`` from every line of a file, empty ones included."""

    column_names = ("text",)

    def __init__(self, path: str, op: str) -> None:
        self.path, self.op = path, op
        self._index: tuple[np.ndarray, np.ndarray] | None = None

    def _lines(self) -> tuple[np.ndarray, np.ndarray]:
        if self._index is None:
            data = np.fromfile(self.path, dtype=np.uint8)
            nl = np.flatnonzero(data == 10).astype(np.int64)
            starts = np.concatenate([[0], nl + 1]).astype(np.int64)
            ends = np.concatenate([nl, [data.size]]).astype(np.int64)
            if starts[-1] == data.size:  # nothing after the last newline
                starts, ends = starts[:-1], ends[:-1]
            self._index = (starts, ends)
        return self._index

    def counts(self) -> np.ndarray:
        return np.array([len(self)], dtype=np.int64)

    def __len__(self) -> int:
        return len(self._lines()[0])

    def read(self, index: int) -> tuple:
        starts, ends = self._lines()
        off = int(starts[index])
        data = read_bytes(self.path, off, int(ends[index]) - off)
        try:
            return (np.array(data.decode("utf-8")),)
        except UnicodeDecodeError as e:
            raise PipelineError(self.op, f"Invalid text file, line {_line_number(self.path, off)} of {self.path} is "
                                f"not UTF-8 text.", file=self.path) from e

    def file_of(self, index: int) -> str:
        return self.path


class EnWik9Dataset(TextFileDataset):
    """enwik9 (the first 10^9 bytes of an English Wikipedia dump): one row (``text``) per line of
    ``dataset_dir/enwik9``, empty lines included. (MindSpore 2.10 reads the empty lines too but leaves
    them out of ``get_dataset_size()`` and of the row count it shards by; headrace counts every row.)

    Args:
        dataset_dir (str): The folder holding ``enwik9``.
        num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache: as TextFileDataset
            (``shuffle`` defaults to True).
    """

    def __init__(self, dataset_dir, num_samples=None, num_parallel_workers=None, shuffle=True, num_shards=None,
                 shard_id=None, cache=None):
        self.dataset_dir = check_dir(dataset_dir)
        super().__init__(os.path.join(self.dataset_dir, "enwik9"), num_samples, num_parallel_workers, shuffle,
                         num_shards, shard_id, cache)

    def _make_source(self) -> _AllLinesSource:
        return _AllLinesSource(self.dataset_files[0], self._source_name())


class _TextFilesSource:
    """Rows ``(text, label)``: the whole content of each file and its int32 label."""

    column_names = ("text", "label")

    def __init__(self, paths: list[str], labels: list[int], op: str) -> None:
        self.paths, self.labels, self.op = paths, labels, op

    def __len__(self) -> int:
        return len(self.paths)

    def read(self, index: int) -> tuple:
        path = self.paths[index]
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise PipelineError(self.op, f"Invalid file, failed to open {path}: {e.strerror or e}.", file=path) from e
        # MindSpore reads the file line by line and keeps the last non-empty line (a review is one line).
        lines = [ln for ln in data.decode("utf-8", errors="replace").split("\n") if ln]
        text = lines[-1] if lines else ""
        return np.array(text), np.array(self.labels[index], dtype=np.int32)

    def file_of(self, index: int) -> str:
        return self.paths[index]


class IMDBDataset(FileSourceDataset):
    """IMDB movie reviews from ``dataset_dir/{train,test}/{pos,neg}/``: one row per file, ``text`` and
    ``label`` (int32: 1 pos, 0 neg).

    Args:
        dataset_dir (str): The ``aclImdb`` folder.
        usage (str, optional): "train", "test" or "all". Default: None ("all").
        num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache: as the
            other mappable sources.
    """

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):
        self.dataset_dir = check_dir(dataset_dir)
        self.usage = check_usage(usage, _TRAIN_TEST, "all")
        super().__init__(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache)

    def _listing(self) -> tuple[list[str], list[int]]:
        cached = self.__dict__.get("_listing_cache")
        if cached is None:
            paths, labels = [], []
            for part in (("train", "test") if self.usage == "all" else (self.usage,)):
                for folder, label in (("pos", 1), ("neg", 0)):
                    d = os.path.join(self.dataset_dir, part, folder)
                    if not os.path.isdir(d):
                        continue
                    for name in sorted(os.listdir(d)):
                        p = os.path.join(d, name)
                        if os.path.isfile(p):
                            paths.append(p)
                            labels.append(label)
            cached = self.__dict__["_listing_cache"] = (paths, labels)
        return cached

    def _make_source(self) -> _TextFilesSource:
        return _TextFilesSource(*self._listing(), self._source_name())

    def _labels(self) -> np.ndarray:
        return np.array(self._listing()[1], dtype=np.int64)

    def _no_data_detail(self) -> str:
        return NO_DATA.format(op=self._source_name(), what="file path", path=self.dataset_dir)
