"""Text corpora whose files are parsed whole (they are small): SST2 (TSV with a header),
CoNLL2000 and UDPOS (one token a line, sentences ended by blank lines; a row is a sentence as
1-D string arrays; as in MindSpore 2.10, a last sentence with no blank line after it is not read),
Multi30k (two parallel files, a row is a line of each).

Rows are read in the file orders of ``_filerows.py`` (shuffle, shards and num_samples as the other
MindSpore stream sources); the files are parsed on first use.
"""
from __future__ import annotations

import json
import os
from typing import Any, Callable, Sequence

import numpy as np

from headrace._util.errors import PipelineError
from headrace._util import checks
from headrace.dataset._sources._files import NO_DATA, RowFilesDataset, RowsOfFiles, check_dir, check_usage
from headrace.dataset.samplers import Shuffle

__all__ = ["CLUEDataset", "SQuADDataset", "CoNLL2000Dataset", "Multi30kDataset", "SST2Dataset", "UDPOSDataset"]


class ParsedRowsSource(RowsOfFiles):
    """Rows made by ``parse(path) -> list[tuple]`` for each file, parsed once on first use."""

    def __init__(self, files: Sequence[str], parse: Callable[[str], list[tuple]], names: Sequence[str],
                 op: str) -> None:
        super().__init__(files)
        self.parse, self.column_names, self.op = parse, tuple(names), op

    def _build_files(self) -> list[list[tuple]]:
        rows = []
        for path in self.files:
            try:
                rows.append(self.parse(path))
            except OSError as e:
                raise PipelineError(self.op, f"Invalid file, failed to open {path}: {e.strerror or e}.",
                                    file=path) from e
            except UnicodeDecodeError as e:
                raise PipelineError(self.op, f"Invalid file, {path} is not UTF-8 text.", file=path) from e
        return rows

    @staticmethod
    def _rows_in(entry: Any) -> int:
        return len(entry)

    def read(self, index: int) -> tuple:
        k, j = self.locate(index)
        return tuple(np.array(v) if isinstance(v, str)
                     else np.array(v, dtype=np.uint32) if isinstance(v, (int, _UInt32List))
                     else np.array(v, dtype=str) for v in self.ensure()[k][j])


def _lines(path: str) -> list[str]:
    """The lines of a file, as ``getline`` reads them (a final newline ends the last line)."""
    with open(path, "rb") as f:
        lines = f.read().decode("utf-8").split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


class _ParsedCorpus(RowFilesDataset):
    _columns: tuple[str, ...] = ()

    def _parse(self, path: str) -> list[tuple]:
        raise NotImplementedError

    def _make_source(self) -> ParsedRowsSource:
        return ParsedRowsSource(self.dataset_files, self._parse, self._columns, self._source_name())

    def _no_data_detail(self) -> str:
        return NO_DATA.format(op=self._source_name(), what="file path", path=getattr(self, "dataset_dir", ""))

    def _set_files(self, files: list[str]) -> None:
        missing = [f for f in files if not os.path.isfile(f)]
        if missing:
            raise ValueError(f"The following patterns did not match any files: {missing}.")
        self.dataset_files = files


class SST2Dataset(_ParsedCorpus):
    """SST-2 from ``train.tsv`` / ``dev.tsv`` (``sentence``, ``label`` columns) or ``test.tsv``
    (``sentence`` only); the header line is skipped, fields are tab-separated strings.

    Args:
        dataset_dir (str): The folder holding the TSV files.
        usage (str, optional): "train", "dev" or "test". Default: None ("train").
        num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache: as TextFileDataset.
    """

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=Shuffle.GLOBAL,
                 num_shards=None, shard_id=None, cache=None):
        self.dataset_dir = check_dir(dataset_dir)
        self.usage = check_usage(usage, ("train", "test", "dev"), "train")
        files = [os.path.join(self.dataset_dir, f"{self.usage}.tsv")]
        super().__init__(files, num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache)
        self._set_files(files)
        self._columns = ("sentence",) if self.usage == "test" else ("sentence", "label")

    def _parse(self, path: str) -> list[tuple]:
        rows = []
        for line in _lines(path)[1:]:
            if not line:
                continue
            fields = line.split("\t")
            rows.append((fields[1],) if self.usage == "test" else (fields[0], fields[1]))
        return rows


class _TaggedCorpus(_ParsedCorpus):
    _sep = " "
    _names: dict[str, str] = {}
    _usages: tuple[str, ...] = ()

    def __init__(self, dataset_dir, usage=None, num_samples=None, shuffle=Shuffle.GLOBAL, num_shards=None,
                 shard_id=None, num_parallel_workers=None, cache=None):
        self.dataset_dir = check_dir(dataset_dir)
        self.usage = check_usage(usage, self._usages + ("all",), "all")
        wanted = sorted((u for u in self._usages if self.usage in ("all", u)), key=lambda u: self._names[u])
        files = [os.path.join(self.dataset_dir, self._names[u]) for u in wanted]
        super().__init__(files, num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache)
        self._set_files(files)

    def _parse(self, path: str) -> list[tuple]:
        rows, sentence = [], []
        width = len(self._columns)
        for line in _lines(path):
            fields = line.rstrip("\r").split(self._sep)
            if not line.strip():
                if sentence:
                    rows.append(tuple(list(col) for col in zip(*sentence)))
                    sentence = []
                continue
            sentence.append((fields + [""] * width)[:width])
        # As MindSpore 2.10, a sentence ends at a blank line: one the file ends without is not read.
        return rows


class CoNLL2000Dataset(_TaggedCorpus):
    """CoNLL-2000 chunking: a row per sentence, ``word``, ``pos_tag``, ``chunk_tag`` (1-D strings),
    from ``train.txt`` / ``test.txt``. Fields are split at every single space, as MindSpore does
    (``"word   TAG"`` gives the fields ``word``, ``""``, ``""``)."""

    _columns = ("word", "pos_tag", "chunk_tag")
    _names = {"train": "train.txt", "test": "test.txt"}
    _usages = ("train", "test")


class UDPOSDataset(_TaggedCorpus):
    """UDPOS: a row per sentence, ``word``, ``universal``, ``stanford`` (1-D strings), from
    ``en-ud-tag.v2.{train,dev,test}.txt`` (tab-separated; "valid" reads the dev file)."""

    _columns = ("word", "universal", "stanford")
    _names = {"train": "en-ud-tag.v2.train.txt", "valid": "en-ud-tag.v2.dev.txt", "test": "en-ud-tag.v2.test.txt"}
    _sep = "\t"
    _usages = ("train", "valid", "test")


_MULTI30K = {"train": ("training", "train"), "valid": ("validation", "val"), "test": ("mmt16_task1_test", "test")}


class Multi30kDataset(_ParsedCorpus):
    """Multi30k: a row per line pair, ``text`` (source language) and ``translation`` (target).

    Args:
        dataset_dir (str): The folder holding ``training/``, ``validation/`` and ``mmt16_task1_test/``.
        usage (str, optional): "train", "valid", "test" or "all". Default: None ("all").
        language_pair (Sequence[str], optional): ``["en", "de"]`` or ``["de", "en"]``. Default: en -> de.
        num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache: as TextFileDataset.
    """

    _columns = ("text", "translation")

    def __init__(self, dataset_dir, usage=None, language_pair=None, num_samples=None, num_parallel_workers=None,
                 shuffle=None, num_shards=None, shard_id=None, cache=None):
        self.dataset_dir = check_dir(dataset_dir)
        self.usage = check_usage(usage, ("train", "valid", "test", "all"), "all")
        pair = ["en", "de"] if language_pair is None else language_pair
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not all(isinstance(x, str) for x in pair):
            raise TypeError("language_pair should be a list or tuple of length 2, but got "
                            f"{language_pair!r}.")
        if list(pair) not in (["en", "de"], ["de", "en"]):
            raise ValueError(f"language_pair must be ['en', 'de'] or ['de', 'en'], but got {list(pair)}.")
        self.language_pair = list(pair)
        wanted = [u for u in ("test", "train", "valid") if self.usage in ("all", u)]
        files = [os.path.join(self.dataset_dir, _MULTI30K[u][0], f"{_MULTI30K[u][1]}.{pair[0]}") for u in wanted]
        if shuffle is not None and not isinstance(shuffle, bool):
            raise TypeError(f"Argument shuffle with value {shuffle} is not of type [<class 'bool'>], but got "
                            f"{type(shuffle)}.")
        super().__init__(files, num_samples, num_parallel_workers, True if shuffle is None else shuffle,
                         num_shards, shard_id, cache)
        self._set_files(files)

    def _parse(self, path: str) -> list[tuple]:
        src = _lines(path)
        dst_path = path[: -len(self.language_pair[0])] + self.language_pair[1]
        dst = _lines(dst_path)
        if len(src) != len(dst):
            raise PipelineError(self._source_name(), f"Invalid data, {path} has {len(src)} lines but {dst_path} has "
                                f"{len(dst)}.", file=path)
        return [(a, b) for a, b in zip(src, dst)]


# CLUE: per task, the columns of train/eval files and of test files; "int:" columns are uint32, "list:"
# columns 1-D string arrays, "target." ones come from the nested "target" object. MindSpore orders
# the columns by name.
_CLUE = {
    "AFQMC": (["sentence1", "sentence2", "label"], ["int:id", "sentence1", "sentence2"]),
    "TNEWS": (["label", "label_desc", "sentence", "keywords"], ["int:id", "sentence", "keywords"]),
    "IFLYTEK": (["label", "label_des", "sentence"], ["int:id", "sentence"]),
    "CMNLI": (["sentence1", "sentence2", "label"], ["int:id", "sentence1", "sentence2"]),
    "WSC": (["int:target.span1_index", "int:target.span2_index", "target.span1_text", "target.span2_text", "int:idx",
             "text", "label"],
            ["int:target.span1_index", "int:target.span2_index", "target.span1_text", "target.span2_text", "int:idx",
             "text"]),
    "CSL": (["int:id", "abst", "list:keyword", "label"], ["int:id", "abst", "list:keyword"]),
}


def _clue_field(item: dict, spec: str) -> object:
    kind, _, key = spec.rpartition(":")
    value: object = item
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if kind == "int":
        return int(value) if value not in (None, "") else 0
    if kind == "list":
        return [str(v) for v in value] if isinstance(value, list) else ([] if value is None else [str(value)])
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class CLUEDataset(RowFilesDataset):
    """CLUE classification tasks from JSON-lines files: AFQMC, TNEWS, IFLYTEK, CMNLI, WSC, CSL.

    The columns depend on `task` and `usage` (ids and indexes are uint32, CSL's ``keyword`` a 1-D
    string array, the rest strings) and come in name order, as in MindSpore.

    Args:
        dataset_files (Union[str, list[str]]): Files or glob patterns; read in sorted order.
        task (str, optional): The task. Default: "AFQMC".
        usage (str, optional): "train", "test" or "eval". Default: "train".
        num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache: as TextFileDataset.
    """

    def __init__(self, dataset_files, task="AFQMC", usage="train", num_samples=None, num_parallel_workers=None,
                 shuffle=Shuffle.GLOBAL, num_shards=None, shard_id=None, cache=None):
        checks.check_type(task, str, "task")
        if task not in _CLUE:
            raise ValueError(f"Input task is not within the valid set of {list(_CLUE)}.")
        checks.check_type(usage, str, "usage")
        if usage not in ("train", "test", "eval"):
            raise ValueError("Input usage is not within the valid set of ['train', 'test', 'eval'].")
        self.task, self.usage = task, usage
        specs = _CLUE[task][1 if usage == "test" else 0]
        self._specs = sorted(specs, key=lambda sp: sp.rpartition(":")[2].rpartition(".")[2])
        self._columns = tuple(sp.rpartition(":")[2].rpartition(".")[2] for sp in self._specs)
        super().__init__(dataset_files, num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache)

    def _make_source(self) -> ParsedRowsSource:
        return ParsedRowsSource(self.dataset_files, self._parse, self._columns, self._source_name())

    def _parse(self, path: str) -> list[tuple]:
        rows = []
        for n, line in enumerate(_lines(path), 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError as e:
                raise PipelineError(self._source_name(), f"Invalid file, line {n} of {path} is not JSON: {e}.",
                                    file=path) from e
            rows.append(tuple(_clue_field(item, sp) for sp in self._specs))
        return rows

    def _no_data_detail(self) -> str:
        return NO_DATA.format(op=self._source_name(), what="file path", path=" " + ", ".join(self.dataset_files))


class SQuADDataset(_ParsedCorpus):
    """SQuAD 1.1 / 2.0 from ``train-v1.1.json`` / ``dev-v1.1.json`` (or the ``-v2.0`` files): a row per
    question, ``context``, ``question``, ``text`` (its answers, 1-D strings) and ``answer_start``
    (uint32 1-D); a question without answers gives ``[""]`` and ``[4294967295]``, as MindSpore does.

    Args:
        dataset_dir (str): The folder holding the JSON files.
        usage (str, optional): "train", "dev" or "all" (train then dev). Default: None ("all").
        num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache: as TextFileDataset.
    """

    _columns = ("context", "question", "text", "answer_start")

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=Shuffle.GLOBAL,
                 num_shards=None, shard_id=None, cache=None):
        self.dataset_dir = check_dir(dataset_dir)
        self.usage = check_usage(usage, ("train", "dev", "all"), "all")
        files = []
        for u in ("train", "dev"):
            if self.usage in ("all", u):
                found = [os.path.join(self.dataset_dir, f"{u}-v{v}.json") for v in ("1.1", "2.0")]
                files.append(next((f for f in found if os.path.isfile(f)), found[0]))
        super().__init__(files, num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache)
        self._set_files(files)

    def _parse(self, path: str) -> list[tuple]:
        with open(path, "rb") as f:
            try:
                doc = json.loads(f.read().decode("utf-8"))
            except ValueError as e:
                raise PipelineError(self._source_name(), f"Invalid file, {path} is not JSON: {e}.", file=path) from e
        rows = []
        for article in doc.get("data", []):
            for para in article.get("paragraphs", []):
                context = para.get("context", "")
                for qa in para.get("qas", []):
                    answers = qa.get("answers") or []
                    texts = [a.get("text", "") for a in answers] or [""]
                    starts = [int(a.get("answer_start", -1)) & 0xFFFFFFFF for a in answers] or [0xFFFFFFFF]
                    rows.append((context, qa.get("question", ""), texts, _UInt32List(starts)))
        return rows


class _UInt32List(list):
    """A list read back as a uint32 array."""
