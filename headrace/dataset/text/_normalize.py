"""String-to-string ops: CaseFold, NormalizeUTF8, RegexReplace (any shape of string array)."""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from headrace._util.checks import check_type
from headrace.dataset.text._common import (
    NormalizeForm, TextOperation, check_form, map_strings, nonempty, string_input,
)
from headrace.dataset.text._unicode import casefold, compile_icu, icu_template, normalize, require_icu

__all__ = ["CaseFold", "FilterWikipediaXML", "NormalizeUTF8", "RegexReplace"]


class CaseFold(TextOperation):
    """Folds case the way ICU's NFKC_Casefold does (``"Straße ＡＢ" -> "strasse ab"``), on a string or
    an array of strings of any shape. Needs ICU (``headrace[text]``) for non-ASCII text.

    Examples:
        >>> CaseFold()("Hello WORLD").item()
        'hello world'
    """

    def __init__(self) -> None:
        require_icu("CaseFold")

    def __call__(self, *args: Any) -> np.ndarray:
        a = nonempty(string_input(_one(args), "CaseFold"))
        return map_strings(a, casefold)


class NormalizeUTF8(TextOperation):
    """Applies a Unicode normalisation form (NFC, NFKC, NFD, NFKD; NONE keeps the text).

    Args:
        normalize_form (NormalizeForm): the form. Default: ``NormalizeForm.NFKC``.

    Examples:
        >>> NormalizeUTF8()("ＡＢ ①").item()
        'AB 1'
    """

    def __init__(self, normalize_form: NormalizeForm = NormalizeForm.NFKC) -> None:
        check_form(normalize_form, "normalization_form")
        self.normalize_form = normalize_form
        self._form = int(normalize_form)

    def __call__(self, *args: Any) -> np.ndarray:
        a = nonempty(string_input(_one(args), "NormalizeUTF8"))
        form = self._form
        return map_strings(a, lambda s: normalize(form, s))


class RegexReplace(TextOperation):
    """Replaces the matches of an ICU regular expression in every string.

    Args:
        pattern (str): the regular expression (ICU syntax).
        replace (str): the replacement; ``$1`` / ``${name}`` insert groups, ``\\c`` is a literal c.
        replace_all (bool): replace every match, or only the first. Default: True.

    Note: MindSpore 2.10 garbles arrays of more than one string (it writes all the results into the
    first element); this op replaces in each element.

    Examples:
        >>> RegexReplace(r"\\s+", "_")("a  b c").item()
        'a_b_c'
    """

    def __init__(self, pattern: str, replace: str, replace_all: bool = True) -> None:
        check_type(pattern, str, "pattern")
        check_type(replace, str, "replace")
        check_type(replace_all, bool, "replace_all")
        self.pattern, self.replace, self.replace_all = pattern, replace, replace_all
        self._regex = compile_icu(pattern, "RegexReplace",
                                  "create icu RegexMatcher failed, you may input one error pattern.")
        try:
            template = icu_template(replace)
        except ValueError:
            template = None
        self._template = template
        self._count = 0 if replace_all else 1

    def __call__(self, *args: Any) -> np.ndarray:
        a = string_input(_one(args), "RegexReplace")
        if self._template is None:
            raise RuntimeError("RegexReplace: RegexReplace failed.")
        sub, template, count = self._regex.sub, self._template, self._count
        try:
            return map_strings(a, lambda s: sub(template, s, count))
        except (IndexError, Exception) as exc:  # noqa: BLE001 - a bad group reference
            if isinstance(exc, RuntimeError):
                raise
            raise RuntimeError("RegexReplace: RegexReplace failed.") from exc


def _one(args: tuple) -> Any:
    if len(args) != 1:
        raise RuntimeError("The op is OneToOne, can only accept one tensor as input.")
    return args[0]


_DIGITS = {str(i): f" {w} " for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"])}
# Upper-case A-Z become lower case, except R, which MindSpore 2.10's filter deletes.
_CASE = {ord(c): (None if c == "R" else c.lower()) for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}
_CASE.update({ord(d): w for d, w in _DIGITS.items()})


class FilterWikipediaXML(TextOperation):
    """Cleans Wikipedia XML dump text into lower-case letters a-z and single spaces, as MindSpore's
    op does: a text containing ``#redirect`` / ``#REDIRECT`` becomes empty; XML tags (greedy on a
    line, then ``<...>`` spans) and ``&...;`` entities are removed; a newline followed by a character other than a
    letter or digit is deleted with it (list and table markup at line starts); A-Z is
    lowered (MindSpore deletes upper-case R, and so does this op); digits are spelled out; every
    other character becomes a space; spaces are squeezed and trimmed.

    Arrays of several strings are cleaned element by element (MindSpore 2.10 garbles them).

    Examples:
        >>> FilterWikipediaXML()("<b>Hi</b> [[Link|text]] 42").item()
        'link text four two'
    """

    def __init__(self) -> None:
        self._line_tag = re.compile(r"<.*>")
        self._tag = re.compile(r"<[^>]*>")
        self._entity = re.compile(r"&[^;]*;")
        self._line_mark = re.compile(r"\n[^A-Za-z0-9]")
        self._other = re.compile(r"[^a-z]+")

    def __call__(self, *args: Any) -> np.ndarray:
        a = string_input(_one(args), "RegexReplace", "input is not of type string.")
        return map_strings(a, self._clean)

    def _clean(self, s: str) -> str:
        if "#redirect" in s or "#REDIRECT" in s:
            return ""
        s = self._tag.sub("", self._line_tag.sub("", s))
        s = self._line_mark.sub("", self._entity.sub(" ", s)).translate(_CASE)
        return self._other.sub(" ", s).strip()
