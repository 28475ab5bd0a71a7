"""WordpieceTokenizer and BertTokenizer (BasicTokenizer then WordPiece).

BertTokenizer runs HF ``tokenizers`` (Rust) for text on which its output is MindSpore's: ASCII
text without control characters other than tab/newline/CR/VT/FF, no ``[`` when unused tokens are
preserved, and a non-empty unknown token that is in the vocab. Anything else goes through this
module's own code, which follows MindSpore (ICU case folding, byte limits, offsets).
Each text goes through ``Tokenizer.encode_batch([text])`` (:func:`hf_encode`): unlike ``encode``,
it runs without the GIL, so a map's thread workers tokenize in parallel (see :func:`hf_encode`).
It counts as using HF's thread pool, after which tokenizers prints a warning in every child of a
fork ("The current process just got forked...") and turns its threads off there; while
``TOKENIZERS_PARALLELISM`` is unset, a fork made after headrace used HF sets it to ``false`` for
the child (what tokenizers would do, without the warning): see :func:`_quiet_forks`.
"""
from __future__ import annotations

import os
import re
import threading
from itertools import chain
from typing import Any

import numpy as np

from headrace._util.checks import check_type
from headrace.dataset.text._common import (
    NormalizeForm, TextOperation, byte_offsets, check_bool, check_str, decode_item, str_array,
)
from headrace.dataset.text._tokenizers import BasicTokenizer
from headrace.dataset.text._vocab import Vocab

__all__ = ["BertTokenizer", "WordpieceTokenizer"]

UINT32_MAX = 2**32 - 1
_chain = chain.from_iterable
_HF_UNSAFE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
# The words of an ASCII text as BasicTokenizer splits it (no control character but the five
# whitespace ones, see _HF_UNSAFE): runs of letters and digits, and each other visible character
# (all ASCII punctuation) alone; whitespace separates.
_ASCII_WORDS = re.compile(r"[0-9A-Za-z]+|[^0-9A-Za-z\s]")
# Whitespace-separated parts ("movie," "(the") whose ids a BertTokenizer remembers (ascii_ids);
# the cache starts again when full. Only parts of up to CACHED_PART characters are kept, so an
# entry takes at most ~300 bytes: at most ~40 MB per tokenizer.
WORD_CACHE = 1 << 17
CACHED_PART = 64


class _PartIds(dict[str, tuple[int, ...]]):
    """Whitespace-separated part of an ASCII text -> the ids of its tokens; a missing part is
    split and WordPiece'd (this module's MindSpore algorithm) once, then remembered."""

    def __init__(self, wp: _WordPiece) -> None:
        super().__init__()
        self.wp = wp

    def __missing__(self, part: str) -> tuple[int, ...]:
        wp = self.wp
        table = wp.words
        ids = tuple(table[p] for w in _ASCII_WORDS.findall(part) for p, _, _ in wp.pieces(w) if p is not None)
        if len(part) > CACHED_PART:
            return ids
        if len(self) >= WORD_CACHE:
            self.clear()
        self[part] = ids
        return ids

    def __reduce__(self) -> Any:
        return _PartIds, (self.wp,)  # travels empty


PARALLELISM = "TOKENIZERS_PARALLELISM"
_fork_hook = threading.Lock()
_hooked = False


def hf_encode(tok: Any, text: str) -> Any:
    """HF's ``Encoding`` of one ``text`` (no special tokens), computed without holding the GIL.

    ``Tokenizer.encode`` holds the GIL and ``encode_batch`` releases it: on the text workload's
    reviews (2 cores, 2026-11-27) two threads made 1.04x one thread's tokens with ``encode`` and
    2.0x with a batch of one, whose single-thread rate is encode's (2,089 vs 2,005 reviews/s).
    """
    if not _hooked:
        _quiet_forks()
    return tok.encode_batch([text], add_special_tokens=False)[0]


def _quiet_forks() -> None:
    """Registers (once) fork handlers that give a child of this process
    ``TOKENIZERS_PARALLELISM=false`` when the variable is unset, and leave the parent's
    environment as it was."""
    global _hooked
    with _fork_hook:
        if _hooked:
            return
        set_here: list[bool] = []

        def before() -> None:
            if PARALLELISM not in os.environ:
                os.environ[PARALLELISM] = "false"
                set_here.append(True)

        def after_in_parent() -> None:
            if set_here:
                set_here.clear()
                os.environ.pop(PARALLELISM, None)

        def after_in_child() -> None:
            set_here.clear()  # the child keeps "false": HF's threads stay off in it, as HF decides

        os.register_at_fork(before=before, after_in_parent=after_in_parent, after_in_child=after_in_child)
        _hooked = True


def _check_wordpiece(vocab: Any, suffix_indicator: Any, max_bytes_per_token: Any, unknown_token: Any,
                     with_offsets: Any) -> None:
    if not isinstance(vocab, Vocab):
        raise TypeError("Wrong input type for vocab, should be text.Vocab object.")
    check_str(suffix_indicator, "suffix_indicator")
    check_type(max_bytes_per_token, int, "")
    if not 0 <= max_bytes_per_token <= UINT32_MAX:
        raise ValueError(f"Input is not within the required interval of [0, {UINT32_MAX}].")
    check_str(unknown_token, "unknown_token")
    check_bool(with_offsets, "with_offsets")


class _WordPiece:
    """Greedy longest-match-first WordPiece over a vocab's words (code point steps, byte limit)."""

    def __init__(self, words: dict, suffix: str, max_bytes: int, unk: str) -> None:
        self.words, self.suffix, self.max_bytes, self.unk = words, suffix, max_bytes, unk

    def pieces(self, word: str) -> list[tuple[str, int, int]]:
        """(piece, start byte, end byte) of one word. When the word cannot be split, the pieces found
        before the failure stay in the list with ``None`` as their piece (MindSpore 2.10 keeps their
        offsets, not their tokens), followed by the unknown token spanning the word."""
        nbytes = len(word.encode("utf-8")) if not word.isascii() else len(word)
        if nbytes > self.max_bytes:
            # MindSpore 2.10 gives a too-long word the limit offset max_bytes_per_token + 1
            return [(self.unk or word, 0, self.max_bytes + 1)]
        words, suffix = self.words, self.suffix
        out: list[tuple[Any, int, int]] = []
        start, n = 0, len(word)
        bstart = 0
        while start < n:
            end = n
            found = None
            while end > start:
                piece = word[start:end]
                if start > 0:
                    piece = suffix + piece
                if piece in words:
                    found = piece
                    break
                end -= 1
            if found is None:
                out = [(None, a, b) for _, a, b in out]
                out.append((self.unk or word, 0, nbytes))
                return out
            blen = end - start if word.isascii() else len(word[start:end].encode("utf-8"))
            out.append((found, bstart, bstart + blen))
            bstart += blen
            start = end
        return out


def _outputs(pieces: list, with_offsets: bool) -> Any:
    tokens = str_array([p[0] for p in pieces if p[0] is not None])
    if not with_offsets:
        return tokens
    if not pieces:
        return tokens, np.zeros(1, np.uint32), np.zeros(1, np.uint32)
    return tokens, np.array([p[1] for p in pieces], np.uint32), np.array([p[2] for p in pieces], np.uint32)


class WordpieceTokenizer(TextOperation):
    """Splits words (a 1-D string array or one string) into WordPiece sub-words of a vocab.

    A word longer than `max_bytes_per_token` UTF-8 bytes, or one that cannot be split into vocab
    pieces, becomes `unknown_token` (or stays whole when `unknown_token` is "").

    Args:
        vocab (Vocab): the sub-word vocab.
        suffix_indicator (str): prefix of non-initial pieces. Default: "##".
        max_bytes_per_token (int): longest word split. Default: 100.
        unknown_token (str): the token for unknown words. Default: "[UNK]".
        with_offsets (bool): also return start/limit byte offsets inside each word. Default: False.

    Examples:
        >>> v = Vocab.from_list(["play", "##ing", "[UNK]"])
        >>> WordpieceTokenizer(v)(np.array(["playing", "xyz"])).tolist()
        ['play', '##ing', '[UNK]']
    """

    def __init__(self, vocab: Vocab, suffix_indicator: str = "##", max_bytes_per_token: int = 100,
                 unknown_token: str = "[UNK]", with_offsets: bool = False) -> None:
        _check_wordpiece(vocab, suffix_indicator, max_bytes_per_token, unknown_token, with_offsets)
        self.vocab, self.suffix_indicator = vocab, suffix_indicator
        self.max_bytes_per_token, self.unknown_token, self.with_offsets = (
            max_bytes_per_token, unknown_token, with_offsets)
        self._wp = _WordPiece(vocab._built(), suffix_indicator, max_bytes_per_token, unknown_token)

    def __call__(self, *args: Any) -> Any:
        if len(args) != 1:
            raise RuntimeError("WordpieceTokenizer: input should be one column data.")
        value = args[0]
        a = np.array(value) if isinstance(value, str) else np.asarray(value)
        if a.dtype.kind not in "US" or a.ndim > 1:
            raise RuntimeError("WordpieceTokenizer: The input shape should be 1D scalar the input datatype should "
                               "be string.")
        pieces = [p for w in a.reshape(-1).tolist() for p in self._wp.pieces(decode_item(w))]
        return _outputs(pieces, self.with_offsets)


class BertTokenizer(TextOperation):
    """BERT tokenization of one string: :class:`BasicTokenizer`, then WordPiece on each word.

    Arguments are those of the two tokenizers; offsets are byte positions in the normalised text.

    Examples:
        >>> v = Vocab.from_list(["[UNK]", "hello", "world", "##s", "!"])
        >>> BertTokenizer(v, lower_case=True)("Hello worlds!").tolist()
        ['hello', 'world', '##s', '!']
    """

    def __init__(self, vocab: Vocab, suffix_indicator: str = "##", max_bytes_per_token: int = 100,
                 unknown_token: str = "[UNK]", lower_case: bool = False, keep_whitespace: bool = False,
                 normalization_form: NormalizeForm = NormalizeForm.NONE, preserve_unused_token: bool = True,
                 with_offsets: bool = False) -> None:
        _check_wordpiece(vocab, suffix_indicator, max_bytes_per_token, unknown_token, with_offsets)
        self._basic = BasicTokenizer(lower_case, keep_whitespace, normalization_form, preserve_unused_token,
                                     with_offsets)
        self.vocab, self.suffix_indicator = vocab, suffix_indicator
        self.max_bytes_per_token, self.unknown_token = max_bytes_per_token, unknown_token
        self.lower_case, self.keep_whitespace = lower_case, keep_whitespace
        self.normalization_form, self.preserve_unused_token = normalization_form, preserve_unused_token
        self.with_offsets = with_offsets
        self._wp = _WordPiece(vocab._built(), suffix_indicator, max_bytes_per_token, unknown_token)
        self._hf: Any = None
        self._hf_ok = (not keep_whitespace and not with_offsets and unknown_token != "" and unknown_token in self._wp.words)
        self._ids_ok = self._hf_ok  # ascii_ids: the same texts, without HF
        self._part_ids = _PartIds(self._wp)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_hf"] = None
        return state

    def ascii_ids(self, text: str) -> list[int] | None:
        """The vocab ids of ``text``'s tokens, or None where this path does not apply (then use
        ``__call__`` or ``tokenize_slow``): without offsets and kept whitespace, with an unknown
        token in the vocab, for ASCII text without control characters other than whitespace (and
        without ``[`` when unused tokens are preserved).

        On such text (ASCII is its own normal form in every NormalizeForm) BasicTokenizer lowers
        the case (``lower_case``) and splits runs of letters and digits from each punctuation
        character, and whitespace separates them; so the ids of each whitespace-separated part are
        computed once (this module's WordPiece) and remembered (up to ``WORD_CACHE`` parts), and a
        text is one ``split`` and one pass over that cache. The ids are those that ``Lookup`` of the
        same vocab gives for this op's tokens. An empty list means no token (MindSpore then gives
        ``[""]``).
        """
        if not (self._ids_ok and text.isascii()) or _HF_UNSAFE.search(text) is not None \
                or (self.preserve_unused_token and "[" in text):
            return None
        parts = (text.lower() if self.lower_case else text).split()
        return list(_chain(map(self._part_ids.__getitem__, parts)))

    def _fast(self) -> Any:
        if self._hf is None:
            try:
                import tokenizers  # noqa: PLC0415 - the optional extra, loaded on first use
            except ImportError:
                self._hf_ok = False
                return None
            from tokenizers import models, normalizers, pre_tokenizers  # noqa: PLC0415
            tok = tokenizers.Tokenizer(models.WordPiece(
                vocab=dict(self._wp.words), unk_token=self.unknown_token,
                max_input_chars_per_word=self.max_bytes_per_token,
                continuing_subword_prefix=self.suffix_indicator))
            if self.lower_case:
                tok.normalizer = normalizers.Lowercase()
            tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
            self._hf = tok
        return self._hf

    def _hf_eligible(self, text: str) -> bool:
        return (self._hf_ok and text.isascii() and not _HF_UNSAFE.search(text)
                and not (self.preserve_unused_token and "[" in text))

    def __call__(self, *args: Any) -> Any:
        if len(args) != 1:
            raise RuntimeError("BertTokenizer: input should be one column data.")
        text = self._basic._scalar(args[0])
        if self._hf_eligible(text):
            tok = self._fast()
            if tok is not None:
                return self._from_hf(hf_encode(tok, text))
        return self.tokenize_slow(text)

    def _from_hf(self, enc: Any) -> Any:
        tokens = str_array(enc.tokens)
        return tokens

    def tokenize_slow(self, text: str) -> Any:
        """MindSpore's algorithm in Python (used where the HF fast path would differ)."""
        basic = self._basic
        text = basic.prepare(text)
        words, spans = basic._spans(text)
        pieces = []
        if not words:
            pieces = []
        elif self.with_offsets:
            starts, _ = byte_offsets(text, spans)
            for w, s in zip(words, starts.tolist()):
                pieces.extend((p, s + a, s + b) for p, a, b in self._wp.pieces(w))
        else:
            pieces = [p for w in words for p in self._wp.pieces(w)]
        return _outputs(pieces, self.with_offsets)
