"""Tokenizers of one string: Whitespace, UnicodeChar, UnicodeScript, Regex, Basic (BERT) and Python.

Each takes a scalar string (``str`` or a 0-d ``<U`` array) and returns a 1-D ``<U`` token array
(``['']`` when there are no tokens), plus ``uint32`` start/limit UTF-8 byte offsets with
``with_offsets=True``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from headrace.dataset.text._common import (
    NormalizeForm, ScalarTokenizer, TextOperation, as_input, byte_offsets, check_bool, check_form, check_str,
    optional, str_array,
)
from headrace.dataset.text._unicode import casefold, compile_icu, normalize, require_icu, script_of

__all__ = ["BasicTokenizer", "PythonTokenizer", "RegexTokenizer", "UnicodeCharTokenizer",
           "UnicodeScriptTokenizer", "WhitespaceTokenizer"]

_ODD_SPACE = frozenset("\x1c\x1d\x1e\x1f")  # str.isspace() but not Unicode White_Space


class WhitespaceTokenizer(ScalarTokenizer):
    """Splits a string at Unicode White_Space (space, tab, newline, NBSP, ideographic space...).

    Args:
        with_offsets (bool): also return start/limit byte offsets. Default: False.

    Examples:
        >>> WhitespaceTokenizer()("a b\\tc").tolist()
        ['a', 'b', 'c']
    """

    def __init__(self, with_offsets: bool = False) -> None:
        check_bool(with_offsets, "with_offsets")
        self.with_offsets = with_offsets

    def _tokens(self, text: str) -> list[str]:
        if not _ODD_SPACE.intersection(text):
            return text.split()
        return self._spans(text)[0]

    def _spans(self, text: str) -> tuple[list[str], list[tuple[int, int]]]:
        tokens, spans = [], []
        start = None
        for i, ch in enumerate(text):
            if ch.isspace() and ch not in _ODD_SPACE:
                if start is not None:
                    tokens.append(text[start:i])
                    spans.append((start, i))
                    start = None
            elif start is None:
                start = i
        if start is not None:
            tokens.append(text[start:])
            spans.append((start, len(text)))
        return tokens, spans


class UnicodeCharTokenizer(ScalarTokenizer):
    """Splits a string into its code points.

    Examples:
        >>> UnicodeCharTokenizer()("aé").tolist()
        ['a', 'é']
    """

    def __init__(self, with_offsets: bool = False) -> None:
        check_bool(with_offsets, "with_offsets")
        self.with_offsets = with_offsets

    def _tokens(self, text: str) -> list[str]:
        return list(text)

    def _spans(self, text: str) -> tuple[list[str], list[tuple[int, int]]]:
        return list(text), [(i, i + 1) for i in range(len(text))]


class UnicodeScriptTokenizer(ScalarTokenizer):
    """Splits a string where the Unicode script changes (ICU's script of each code point; digits and
    punctuation are script Common, combining marks Inherited), and at white space.

    Args:
        keep_whitespace (bool): keep runs of white space as tokens. Default: False.
        with_offsets (bool): also return start/limit byte offsets. Default: False.

    Examples:
        >>> UnicodeScriptTokenizer()("abc123 北京").tolist()
        ['abc', '123', '北京']
    """

    def __init__(self, keep_whitespace: bool = False, with_offsets: bool = False) -> None:
        check_bool(keep_whitespace, "keep_whitespace")
        check_bool(with_offsets, "with_offsets")
        require_icu("UnicodeScriptTokenizer")
        self.keep_whitespace, self.with_offsets = keep_whitespace, with_offsets

    def _spans(self, text: str) -> tuple[list[str], list[tuple[int, int]]]:
        tokens, spans = [], []
        start, cls = 0, None
        for i, ch in enumerate(text):
            c = -1 if ch.isspace() and ch not in _ODD_SPACE else script_of(ch)
            if c != cls:
                if cls is not None and (cls != -1 or self.keep_whitespace):
                    tokens.append(text[start:i])
                    spans.append((start, i))
                start, cls = i, c
        if cls is not None and (cls != -1 or self.keep_whitespace):
            tokens.append(text[start:])
            spans.append((start, len(text)))
        return tokens, spans


def regex_split(regex: Any, keep: Any, text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """Tokens of ``text`` between the non-empty matches of ``regex``; a match is kept as a token too
    when ``keep`` (a compiled pattern or None) matches all of it."""
    tokens, spans = [], []
    pos = 0
    for m in regex.finditer(text):
        s, e = m.span()
        if s == e:
            continue
        if s > pos:
            tokens.append(text[pos:s])
            spans.append((pos, s))
        if keep is not None and keep.fullmatch(text, s, e):
            tokens.append(text[s:e])
            spans.append((s, e))
        pos = e
    if pos < len(text):
        tokens.append(text[pos:])
        spans.append((pos, len(text)))
    return tokens, spans


class RegexTokenizer(ScalarTokenizer):
    """Splits a string at the matches of an ICU regular expression.

    Args:
        delim_pattern (str): the delimiter pattern.
        keep_delim_pattern (str): delimiters that match this pattern entirely are kept as tokens.
            Default: "" (none kept).
        with_offsets (bool): also return start/limit byte offsets. Default: False.

    Examples:
        >>> RegexTokenizer(r"\\s+|,", ",")("a, b").tolist()
        ['a', ',', 'b']
    """

    def __init__(self, delim_pattern: str, keep_delim_pattern: str = "", with_offsets: bool = False) -> None:
        check_str(delim_pattern, "delim_pattern")
        check_str(keep_delim_pattern, "keep_delim_pattern")
        check_bool(with_offsets, "with_offsets")
        self.delim_pattern, self.keep_delim_pattern = delim_pattern, keep_delim_pattern
        self.with_offsets = with_offsets
        self._delim = compile_icu(delim_pattern, "RegexTokenizer")
        self._keep = compile_icu(keep_delim_pattern, "RegexTokenizer") if keep_delim_pattern else None

    def _spans(self, text: str) -> tuple[list[str], list[tuple[int, int]]]:
        return regex_split(self._delim, self._keep, text)


# --------------------------------------------------------------------------- BasicTokenizer

_COMMON = (r"[!-/]|[:-@]|[\[-`]|[{-~]|\p{P}|[\u4E00-\u9FFF]|[\u3400-\u4DBF]|[\U00020000-\U0002A6DF]"
           r"|[\U0002A700-\U0002B73F]|[\U0002B740-\U0002B81F]|[\U0002B820-\U0002CEAF]|[\uF900-\uFAFF]"
           r"|[\U0002F800-\U0002FA1F]")
_UNUSED = r"\[CLS\]|\[SEP\]|\[UNK\]|\[PAD\]|\[MASK\]|\[unused\d+\]"
_PRESERVED = r"\[CLS\]|\[SEP\]|\[UNK\]|\[PAD\]|\[MASK\]"


def _regex() -> Any:
    return optional("regex", "the text tokenizers")


class BasicTokenizer(ScalarTokenizer):
    """BERT's basic tokenizer: normalises, then splits at white space, punctuation and CJK ideographs.

    With `lower_case` the text is case folded (ICU NFKC_Casefold), decomposed (NFD) and stripped of
    combining marks; otherwise it is normalised with `normalization_form`. Control and format
    characters become spaces. Offsets refer to the normalised text.

    Args:
        lower_case (bool): fold case and strip accents. Default: False.
        keep_whitespace (bool): keep runs of white space as tokens. Default: False.
        normalization_form (NormalizeForm): used when `lower_case` is False. Default: NONE.
        preserve_unused_token (bool): keep ``[CLS]``, ``[SEP]``, ``[UNK]``, ``[PAD]``, ``[MASK]`` and
            ``[unusedN]`` whole. With `lower_case` this reproduces MindSpore 2.10's folding exactly,
            including its repetition of the text before each such token. Default: True.
        with_offsets (bool): also return start/limit byte offsets. Default: False.

    Examples:
        >>> BasicTokenizer(lower_case=True)("Héllo, World!").tolist()
        ['hello', ',', 'world', '!']
    """

    def __init__(self, lower_case: bool = False, keep_whitespace: bool = False,
                 normalization_form: NormalizeForm = NormalizeForm.NONE, preserve_unused_token: bool = True,
                 with_offsets: bool = False) -> None:
        check_bool(lower_case, "lower_case")
        check_bool(keep_whitespace, "keep_whitespace")
        check_form(normalization_form, "normalization_form")
        check_bool(preserve_unused_token, "preserve_unused_token")
        check_bool(with_offsets, "with_offsets")
        self.lower_case, self.keep_whitespace = lower_case, keep_whitespace
        self.normalization_form, self.preserve_unused_token = normalization_form, preserve_unused_token
        self.with_offsets = with_offsets
        if lower_case or normalization_form != NormalizeForm.NONE:
            require_icu("BasicTokenizer")
        regex = _regex()
        unused = _UNUSED + "|" if preserve_unused_token else ""
        self._delim = regex.compile(unused + r"\s+|" + _COMMON)
        self._keep = regex.compile(unused + (r"\s+|" if keep_whitespace else "") + _COMMON)
        self._control = regex.compile(r"[\p{Cc}\p{Cf}]")
        self._marks = regex.compile(r"\p{Mn}+")
        self._preserved = regex.compile(_PRESERVED)
        self._form = int(normalization_form)

    @property
    def _err_name(self) -> str:
        return "BasicTokenizer"

    def _scalar(self, value: Any) -> str:
        if isinstance(value, bytes):
            raise RuntimeError("BasicTokenizer: the input should be string type.")
        if not isinstance(value, str):
            a = as_input(value)
            if a.ndim != 0:
                raise RuntimeError(f"BasicTokenizer: the input should be a scalar, but got a tensor with "
                                   f"rank: {a.ndim}")
            if a.dtype.kind not in "US":
                raise RuntimeError("BasicTokenizer: the input should be string type.")
        return super()._scalar(value)

    def prepare(self, text: str) -> str:
        """The text as it is tokenised: folded or normalised, control characters made spaces."""
        if self.lower_case:
            text = self._fold(text)
            if not text.isascii():
                text = self._marks.sub("", normalize(int(NormalizeForm.NFD), text))
        elif self._form:
            text = normalize(self._form, text)
        if text.isascii() and text.isprintable():
            return text
        return self._control.sub(" ", text)

    def _fold(self, text: str) -> str:
        if not self.preserve_unused_token:
            return casefold(text)
        found = list(self._preserved.finditer(text))
        if not found:
            return casefold(text)
        # MindSpore 2.10 folds text[0:start] (not text[previous end:start]) before each special token,
        # and the whole text after the last one when something follows it.
        parts = []
        for m in found:
            parts.append(casefold(text[:m.start()]))
            parts.append(m.group())
        if found[-1].end() < len(text):
            parts.append(casefold(text))
        return "".join(parts)

    def _spans(self, text: str) -> tuple[list[str], list[tuple[int, int]]]:
        return regex_split(self._delim, self._keep, text)

    def __call__(self, *args: Any) -> Any:
        if len(args) != 1:
            raise RuntimeError("BasicTokenizer: input should be one column data.")
        return self.tokenize(self._scalar(args[0]))

    def tokenize(self, text: str) -> Any:
        text = self.prepare(text)
        tokens, spans = self._spans(text)
        if self.with_offsets:
            starts, limits = byte_offsets(text, spans)
            return str_array(tokens), starts, limits
        return str_array(tokens)


class PythonTokenizer(TextOperation):
    """Tokenizes with a Python function ``str -> list of str`` (applied to each string of an array).

    Examples:
        >>> PythonTokenizer(str.split)(np.array("a b")).tolist()
        ['a', 'b']
    """

    def __init__(self, tokenizer: Callable[[str], Any]) -> None:
        if not callable(tokenizer):
            raise TypeError("tokenizer is not a callable Python function.")
        self.tokenizer = tokenizer
        self.random = False

    def __call__(self, *args: Any) -> np.ndarray:
        if len(args) != 1:
            raise RuntimeError(f"Input should be one column data, but got {len(args)} columns.")
        value = args[0]
        if not isinstance(value, np.ndarray):
            raise TypeError(f"input should be a NumPy array. Got {type(value)}.")
        if value.dtype.kind == "S":
            value = np.char.decode(value, "utf-8")
        try:
            return np.vectorize(self._tokenize, signature="()->(n)")(value)
        except Exception as exc:  # noqa: BLE001 - reported as MindSpore reports a failing Python function
            name = getattr(self.tokenizer, "__name__", type(self.tokenizer).__name__)
            raise RuntimeError(f"Error occurred in Pyfunc [{name}], error message: {exc}") from exc

    def _tokenize(self, s: Any) -> Any:
        out = np.asarray(self.tokenizer(s))
        return out.astype("<U1") if out.size == 0 and out.dtype.kind != "U" else out
