"""Unicode services for the text ops: ICU normalisation and case folding, ICU-style regular expressions.

MindSpore's text kernels use ICU 74: ``CaseFold`` is ICU's NFKC_Casefold, ``NormalizeUTF8`` ICU's
normalizers, and the regex ops ICU's regex engine. Here ICU comes from the ``icu`` module (PyICU,
e.g. the ``icukit-pyicu`` wheel that bundles ICU) and regular expressions from the ``regex``
package, after translating ICU-only syntax (``\\x{hhhh}`` escapes, ``$n`` replacement groups).
"""
from __future__ import annotations

import functools
import unicodedata
from typing import Any

from headrace.dataset.text._common import optional

_FORMS = {1: "NFC", 2: "NFKC", 3: "NFD", 4: "NFKD"}


@functools.lru_cache(maxsize=None)
def _icu_normalizer(name: str) -> Any:
    icu = optional("icu", f"{name} normalisation (ICU)")
    n2 = icu.Normalizer2
    return {"NFC": n2.getNFCInstance, "NFKC": n2.getNFKCInstance, "NFD": n2.getNFDInstance,
            "NFKD": n2.getNFKDInstance, "NFKC_CF": n2.getNFKCCasefoldInstance}[name]()


def casefold(text: str) -> str:
    """ICU's NFKC_Casefold of ``text`` (what MindSpore's CaseFold does)."""
    if text.isascii():
        return text.lower()
    return _icu_normalizer("NFKC_CF").normalize(text)


def have_icu() -> bool:
    try:
        import icu  # noqa: F401, PLC0415 - the optional extra, looked up when asked
    except ImportError:
        return False
    return True


def normalize(form: int, text: str) -> str:
    """``text`` in Unicode normalisation form ``form`` (a NormalizeForm value; 0 = unchanged).

    ICU's normalizer when the ``icu`` module is there (as MindSpore), else Python's unicodedata."""
    if form == 0 or text.isascii():
        return text
    name = _FORMS[form]
    if have_icu():
        return _icu_normalizer(name).normalize(text)
    return unicodedata.normalize(name, text)


def require_icu(what: str) -> None:
    """Raises ImportError naming the extra when ICU is missing (checked when an op is built)."""
    optional("icu", what)


@functools.lru_cache(maxsize=4096)
def script_of(ch: str) -> int:
    """ICU's script code of one character (``uscript_getScript``)."""
    icu = optional("icu", "UnicodeScriptTokenizer (ICU scripts)")
    return icu.Script.getScript(ch).getScriptCode()


# --------------------------------------------------------------------------- ICU regex syntax


def icu_pattern(pattern: str) -> str:
    """An ICU regular expression rewritten for the ``regex`` package (``\\x{...}`` escapes)."""
    out = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt == "x" and i + 2 < n and pattern[i + 2] == "{":
                end = pattern.find("}", i + 3)
                if end > 0:
                    out.append("\\U%08x" % int(pattern[i + 3:end], 16))
                    i = end + 1
                    continue
            out.append(pattern[i:i + 2])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def icu_template(replace: str) -> str:
    """An ICU replacement string (``$1``, ``${name}``, ``\\c`` literal) as a ``regex`` template."""
    out = []
    i, n = 0, len(replace)
    while i < n:
        c = replace[i]
        if c == "\\" and i + 1 < n:
            out.append(_literal(replace[i + 1]))
            i += 2
        elif c == "$" and i + 1 < n and replace[i + 1] == "{":
            end = replace.find("}", i + 2)
            if end < 0:
                raise ValueError("bad replacement")
            out.append("\\g<" + replace[i + 2:end] + ">")
            i = end + 1
        elif c == "$" and i + 1 < n and replace[i + 1].isdigit():
            j = i + 1
            while j < n and replace[j].isdigit():
                j += 1
            out.append("\\g<" + replace[i + 1:j] + ">")
            i = j
        elif c == "$":
            raise ValueError("bad replacement")
        else:
            out.append(_literal(c))
            i += 1
    return "".join(out)


def _literal(c: str) -> str:
    return "\\\\" if c == "\\" else c


def compile_icu(pattern: str, op: str, what: str = "create ICU RegexMatcher failed, you may input one "
                                                   "error pattern") -> Any:
    """Compiles an ICU pattern with ``regex`` (V0 semantics, Unicode), RuntimeError ``op: what`` if bad."""
    regex = optional("regex", op)
    try:
        return regex.compile(icu_pattern(pattern))
    except (regex.error, ValueError, OverflowError) as exc:
        raise RuntimeError(f"{op}: {what}") from exc
