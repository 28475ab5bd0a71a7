"""IWSLT2016 / IWSLT2017 translation corpora from the released folder layout.

A row is a sentence pair: ``text`` (source language) and ``translation`` (target). Training pairs
come from ``train.tags.<src>-<tgt>.<lang>`` (lines that are not ``<tag>`` lines, stripped), the
validation and test sets from the ``<seg>`` elements of ``IWSLT1x.TED.<set>.<src>-<tgt>.<lang>.xml``.
With ``usage="all"`` the train, valid and test files are read in that order.
"""
from __future__ import annotations

import html
import os
import re
import xml.etree.ElementTree as ET

from headrace._util.errors import PipelineError
from headrace.dataset._sources._files import check_dir, check_usage
from headrace.dataset._sources.text_parsed import _lines, _ParsedCorpus
from headrace.dataset.samplers import Shuffle

__all__ = ["IWSLT2016Dataset", "IWSLT2017Dataset"]

_SETS_2016 = ("dev2010", "tst2010", "tst2011", "tst2012", "tst2013", "tst2014")
_PAIRS_2016 = (("en", "fr"), ("en", "de"), ("en", "cs"), ("en", "ar"), ("fr", "en"), ("de", "en"), ("cs", "en"),
               ("ar", "en"))
_LANGS_2017 = ("en", "nl", "de", "it", "ro")
_SEG = re.compile(r"<seg[^>]*>(.*?)</seg>", re.S)


def _check_pair(language_pair, allowed, default):
    pair = default if language_pair is None else language_pair
    if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not all(isinstance(x, str) for x in pair):
        raise TypeError(f"language_pair should be a sequence of two strings, but got {language_pair!r}.")
    if tuple(pair) not in allowed:
        raise ValueError(f"language_pair {tuple(pair)} is not supported; supported: {list(allowed)}.")
    return tuple(pair)


def _check_set(value, name, default, allowed=_SETS_2016):
    value = default if value is None else value
    if not isinstance(value, str):
        raise TypeError(f"Argument {name} with value {value} is not of type [<class 'str'>], but got {type(value)}.")
    if value not in allowed:
        raise ValueError(f"Input {name} is not within the valid set of {list(allowed)}.")
    return value


class _IWSLT(_ParsedCorpus):
    _columns = ("text", "translation")
    _tag = ""

    def _init(self, dataset_dir, usage, folder, valid_set, test_set, rest):
        self.dataset_dir = check_dir(dataset_dir)
        self.usage = check_usage(usage, ("train", "valid", "test", "all"), "all")
        src, tgt = self.language_pair
        files = []
        for u in ("train", "valid", "test"):
            if self.usage not in ("all", u):
                continue
            if u == "train":
                name = f"train.tags.{src}-{tgt}.{src}"
            else:
                name = f"IWSLT{self._tag}.TED.{valid_set if u == 'valid' else test_set}.{src}-{tgt}.{src}.xml"
            files.append(os.path.join(self.dataset_dir, folder, name))
        super().__init__(files, *rest)
        self._set_files(files)

    def _parse(self, path: str) -> list[tuple]:
        src, tgt = self.language_pair
        if path.endswith(".xml"):
            other = path[: -len(f".{src}.xml")] + f".{tgt}.xml"
            a, b = self._segments(path), self._segments(other)
        else:
            other = path[: -len(src)] + tgt
            a, b = self._plain(path), self._plain(other)
        if len(a) != len(b):
            raise PipelineError(self._source_name(), f"Invalid data, {path} has {len(a)} sentences but {other} has "
                                f"{len(b)}.", file=path)
        return list(zip(a, b))

    @staticmethod
    def _plain(path: str) -> list[str]:
        return [ln.strip() for ln in _lines(path) if ln.strip() and not ln.lstrip().startswith("<")]

    def _segments(self, path: str) -> list[str]:
        with open(path, "rb") as f:
            data = f.read().decode("utf-8")
        try:
            ET.fromstring(data)
        except ET.ParseError as e:
            raise PipelineError(self._source_name(), f"Invalid file, failed to load xml file: {path} ({e}).",
                                file=path) from e
        return [html.unescape(s).strip() for s in _SEG.findall(data)]


class IWSLT2016Dataset(_IWSLT):
    """IWSLT 2016 TED talks: ``dataset_dir/texts/<src>/<tgt>/<src>-<tgt>/`` files.

    Args:
        dataset_dir (str): The IWSLT2016 folder.
        usage (str, optional): "train", "valid", "test" or "all". Default: None ("all").
        language_pair (Sequence[str], optional): (source, target). Default: ("de", "en").
        valid_set (str, optional): The validation set. Default: "tst2013".
        test_set (str, optional): The test set. Default: "tst2014".
        num_samples, shuffle, num_shards, shard_id, num_parallel_workers, cache: as TextFileDataset.
    """

    _tag = "16"

    def __init__(self, dataset_dir, usage=None, language_pair=None, valid_set=None, test_set=None,
                 num_samples=None, shuffle=Shuffle.GLOBAL, num_shards=None, shard_id=None, num_parallel_workers=None,
                 cache=None):
        self.language_pair = _check_pair(language_pair, _PAIRS_2016, ("de", "en"))
        self.valid_set = _check_set(valid_set, "valid_set", "tst2013")
        self.test_set = _check_set(test_set, "test_set", "tst2014")
        src, tgt = self.language_pair
        self._init(dataset_dir, usage, os.path.join("texts", src, tgt, f"{src}-{tgt}"), self.valid_set,
                   self.test_set, (num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache))


class IWSLT2017Dataset(_IWSLT):
    """IWSLT 2017 multilingual TED talks: ``dataset_dir/texts/DeEnItNlRo/DeEnItNlRo/DeEnItNlRo-DeEnItNlRo/``
    files; validation is dev2010, test tst2010.

    Args:
        dataset_dir (str): The IWSLT2017 folder.
        usage (str, optional): "train", "valid", "test" or "all". Default: None ("all").
        language_pair (Sequence[str], optional): two different languages of en, nl, de, it, ro.
            Default: ("de", "en").
        num_samples, shuffle, num_shards, shard_id, num_parallel_workers, cache: as TextFileDataset.
    """

    _tag = "17"

    def __init__(self, dataset_dir, usage=None, language_pair=None, num_samples=None, shuffle=Shuffle.GLOBAL,
                 num_shards=None, shard_id=None, num_parallel_workers=None, cache=None):
        pairs = tuple((a, b) for a in _LANGS_2017 for b in _LANGS_2017 if a != b)
        self.language_pair = _check_pair(language_pair, pairs, ("de", "en"))
        folder = os.path.join("texts", "DeEnItNlRo", "DeEnItNlRo", "DeEnItNlRo-DeEnItNlRo")
        self._init(dataset_dir, usage, folder, "dev2010", "tst2010",
                   (num_samples, num_parallel_workers, shuffle, num_shards, shard_id, cache))
