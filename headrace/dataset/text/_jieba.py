"""JiebaTokenizer: Chinese word segmentation with MindSpore's dictionary files (cppjieba's format).

MindSpore segments with cppjieba 5.1: a max-probability path over the dictionary (MP), an HMM over
B/E/M/S states (HMM), or MP with runs of single characters re-cut by the HMM (MIX). The ``jieba``
package has the same ideas but other rules (tie breaking, the weight of unknown characters, how
Latin letters and digits are grouped, which separators split a sentence), so it cannot give
MindSpore's output; this module implements the cppjieba rules, reading MindSpore's files:

* ``mp_path``: one ``word freq tag`` a line (``jieba.dict.utf8``);
* ``hmm_path``: ``#`` comment lines, then the 4 start log-probabilities, the 4x4 transition matrix
  and 4 emission lines ``char:logprob,...`` for B, E, M, S (``hmm_model.utf8``).
"""
from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from headrace.dataset.text._common import JiebaMode, ScalarTokenizer, check_bool, check_str

__all__ = ["JiebaTokenizer"]

MIN_DOUBLE = -3.14e100
MAX_WORD_LENGTH = 512
_SEPARATORS = frozenset(" \t\n\uff0c\u3002")
B, E, M, S = 0, 1, 2, 3


class _Dictionary:
    """Words with log-probability weights; user words can be added."""

    def __init__(self, path: str) -> None:
        freqs: dict[str, float] = {}
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.rstrip("\r\n")
                if not line:
                    continue
                parts = line.split(" ")
                if len(parts) != 3:
                    raise RuntimeError(f"JiebaTokenizer: dictionary line {n} of {path} should be 'word freq tag': "
                                       f"{line!r}")
                freqs[parts[0]] = float(parts[1])
        self.total = sum(freqs.values())
        self.weights = {w: math.log(f / self.total) for w, f in freqs.items()} if self.total > 0 else {}
        ordered = sorted(self.weights.values())
        self.min_weight = ordered[0] if ordered else MIN_DOUBLE
        self.median_weight = ordered[len(ordered) // 2] if ordered else MIN_DOUBLE
        self.prefixes = {w[:i] for w in self.weights for i in range(1, len(w) + 1)}
        self.user_singles: set[str] = set()

    def add(self, word: str, freq: int | None) -> None:
        weight = math.log(freq / self.total) if freq and self.total > 0 else self.median_weight
        self.weights[word] = weight
        self.prefixes.update(word[:i] for i in range(1, len(word) + 1))
        if len(word) == 1:
            self.user_singles.add(word)


class _HMM:
    def __init__(self, path: str) -> None:
        rows = []
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    rows.append(line)
        if len(rows) < 9:
            raise RuntimeError(f"JiebaTokenizer: {path} is not an HMM model file (start, 4 transition and "
                               f"4 emission lines expected).")
        self.start = [float(x) for x in rows[0].split()]
        self.trans = [[float(x) for x in rows[1 + i].split()] for i in range(4)]
        self.emit = [self._emissions(rows[5 + i]) for i in range(4)]

    @staticmethod
    def _emissions(line: str) -> dict[str, float]:
        out = {}
        for item in line.split(","):
            ch, _, p = item.rpartition(":")
            if ch:
                out[ch] = float(p)
        return out

    def viterbi(self, text: str) -> list[str]:
        n = len(text)
        emit, trans = self.emit, self.trans
        weight = [[0.0] * 4 for _ in range(n)]
        path = [[E] * 4 for _ in range(n)]
        for y in range(4):
            weight[0][y] = self.start[y] + emit[y].get(text[0], MIN_DOUBLE)
        for x in range(1, n):
            prev = weight[x - 1]
            for y in range(4):
                best, arg = MIN_DOUBLE, E
                e = emit[y].get(text[x], MIN_DOUBLE)
                for py in range(4):
                    v = prev[py] + trans[py][y] + e
                    if v > best:
                        best, arg = v, py
                weight[x][y], path[x][y] = best, arg
        state = E if weight[n - 1][E] >= weight[n - 1][S] else S
        states = [0] * n
        for x in range(n - 1, -1, -1):
            states[x] = state
            state = path[x][state]
        words, left = [], 0
        for i, st in enumerate(states):
            if st in (E, S):
                words.append(text[left:i + 1])
                left = i + 1
        if left < n:
            words.append(text[left:])
        return words

    def cut(self, text: str) -> list[str]:
        """cppjieba's HMM cut: ASCII letters (then letters/digits), numbers (digits and dots) and other
        ASCII characters are words of their own; the rest goes through Viterbi."""
        words: list[str] = []
        left = i = 0
        n = len(text)
        while i < n:
            if ord(text[i]) < 0x80:
                if left != i:
                    words.extend(self.viterbi(text[left:i]))
                j = _ascii_run(text, i)
                words.append(text[i:j])
                left = i = j
            else:
                i += 1
        if left != n:
            words.extend(self.viterbi(text[left:]))
        return words


def _is_letter(c: str) -> bool:
    return "a" <= c <= "z" or "A" <= c <= "Z"


def _ascii_run(text: str, i: int) -> int:
    n = len(text)
    if _is_letter(text[i]):
        j = i + 1
        while j < n and (_is_letter(text[j]) or "0" <= text[j] <= "9"):
            j += 1
        return j
    if "0" <= text[i] <= "9":
        j = i + 1
        while j < n and ("0" <= text[j] <= "9" or text[j] == "."):
            j += 1
        return j
    return i + 1


def _mp_cut(d: _Dictionary, text: str) -> list[str]:
    n = len(text)
    weights, prefixes, min_w = d.weights, d.prefixes, d.min_weight
    best = [0.0] * (n + 1)
    choice = [1] * n
    for i in range(n - 1, -1, -1):
        top, length = MIN_DOUBLE, 1
        first = text[i]
        top = weights.get(first, min_w) + best[i + 1]
        j = i + 1
        while j < n and j - i < MAX_WORD_LENGTH:
            piece = text[i:j + 1]
            if piece not in prefixes:
                break
            w = weights.get(piece)
            if w is not None:
                v = w + best[j + 1]
                if v > top:
                    top, length = v, j + 1 - i
            j += 1
        best[i], choice[i] = top, length
    words, i = [], 0
    while i < n:
        words.append(text[i:i + choice[i]])
        i += choice[i]
    return words


class JiebaTokenizer(ScalarTokenizer):
    """Segments Chinese text into words with MindSpore's (cppjieba's) dictionary and HMM files.

    Args:
        hmm_path (str): the HMM model file (``hmm_model.utf8``).
        mp_path (str): the dictionary file (``jieba.dict.utf8``: ``word freq tag`` lines).
        mode (JiebaMode): MP, HMM or MIX. Default: MIX.
        with_offsets (bool): also return start/limit byte offsets. Default: False.

    Examples:
        >>> tok = JiebaTokenizer("hmm_model.utf8", "jieba.dict.utf8")  # doctest: +SKIP
        >>> tok("我爱北京天安门").tolist()  # doctest: +SKIP
        ['我', '爱', '北京', '天安门']
    """

    def __init__(self, hmm_path: str, mp_path: str, mode: JiebaMode = JiebaMode.MIX,
                 with_offsets: bool = False) -> None:
        check_str(hmm_path, "hmm_path")
        check_str(mp_path, "mp_path")
        if not isinstance(mode, JiebaMode):
            raise TypeError("Wrong input type for mode, should be JiebaMode.")
        check_bool(with_offsets, "with_offsets")
        for p in (hmm_path, mp_path):
            if not os.path.exists(p):
                raise ValueError(f"jieba mode file {p} is not exist.")
        self.hmm_path, self.mp_path, self.mode, self.with_offsets = hmm_path, mp_path, mode, with_offsets
        self._dict = _Dictionary(mp_path)
        self._hmm = _HMM(hmm_path)

    @property
    def _err_name(self) -> str:
        return "JiebaTokenizerOp"

    def add_word(self, word: str, freq: int | None = None) -> None:
        """Adds a user word; without `freq` it weighs as the dictionary's median word."""
        check_str(word, "word")
        if freq is not None:
            if not isinstance(freq, int) or isinstance(freq, bool):
                raise TypeError("Wrong input type for freq, should be int.")
            if freq < 0:
                raise ValueError("Input freq is not within the required interval of [0, 2147483647].")
        self._dict.add(word, freq)

    def add_dict(self, user_dict: Any) -> None:
        """Adds user words from a dict ``{word: freq}`` or a file of ``word [freq]`` lines."""
        if isinstance(user_dict, str):
            if not os.path.isfile(user_dict):
                raise ValueError(f"user dict file {user_dict} is not exist.")
            with open(user_dict, encoding="utf-8") as f:
                for line in f:
                    parts = line.split()
                    if parts:
                        self.add_word(parts[0], int(parts[1]) if len(parts) > 1 else None)
        elif isinstance(user_dict, dict):
            for w, freq in user_dict.items():
                self.add_word(w, freq)
        else:
            raise TypeError("Wrong input type for user_dict, should be str or dict.")

    def _cut_piece(self, text: str) -> list[str]:
        if self.mode == JiebaMode.MP:
            return _mp_cut(self._dict, text)
        if self.mode == JiebaMode.HMM:
            return self._hmm.cut(text)
        words: list[str] = []
        singles = self._dict.user_singles
        run_start = None
        pos = 0
        for w in _mp_cut(self._dict, text):
            single = len(w) == 1 and w not in singles
            if single and run_start is None:
                run_start = pos
            elif not single:
                if run_start is not None:
                    words.extend(self._hmm.cut(text[run_start:pos]))
                    run_start = None
                words.append(w)
            pos += len(w)
        if run_start is not None:
            words.extend(self._hmm.cut(text[run_start:pos]))
        return words

    def _spans(self, text: str) -> tuple[list[str], list[tuple[int, int]]]:
        words: list[str] = []
        start = 0
        for i, c in enumerate(text):
            if c in _SEPARATORS:
                if start < i:
                    words.extend(self._cut_piece(text[start:i]))
                words.append(c)
                start = i + 1
        if start < len(text):
            words.extend(self._cut_piece(text[start:]))
        spans, pos = [], 0
        for w in words:
            spans.append((pos, pos + len(w)))
            pos += len(w)
        return words, spans

    def __call__(self, *args: Any) -> Any:
        out = super().__call__(*args)
        if self.with_offsets and out[0].shape == (1,) and out[0][0] == "":
            # MindSpore gives no offsets for an empty text (other tokenizers give [0], [0]).
            empty = np.zeros(0, np.uint32)
            return out[0], empty, empty.copy()
        return out

