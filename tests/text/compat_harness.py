"""Runs text-op expressions under MindSpore 2.10 (the oracle) and headrace, for comparison.

An expression sees ``text`` (the text module), ``ds`` (the dataset module), ``mt`` (dtypes),
``np``, ``I`` (the shared inputs) and ``V`` (a small BERT-style vocab built from ``VOCAB``).
Results are compared with :func:`tests.vision.compat_harness.compare`.
"""
from __future__ import annotations

import functools

import numpy as np

from tests.oracles.oracle import run_ms
from tests.vision import compat_harness as vision_harness
from tests.vision.compat_harness import RUN_EXPRS
from tests.vision.compat_harness import compare  # noqa: F401 - re-exported for the test files

VOCAB = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]", "hello", "world", "##s", "##ing", "play", "un", "##aff",
         "##able", "北", "京", "!", ",", ".", "'", "i", "m", "the", "a", "caf", "##e", "naive", "straße", "strasse",
         "istanbul", "ı", "##ı", "d", "##i", "##y", "ab", "##c", "😀", "x", "y", "z", "é", "##é"]

# The fixture corpus: English, Chinese, accents, emoji, control characters, NBSP, Turkic i.
CORPUS = [
    "Hello, World! I'm héllo.", "北京欢迎你，我爱中国。", "café naïve Ünïcödé", "emoji 😀👍🏽 ok 👨\u200d👩",
    "ctrl\x01\x07x\ty\r\nz\x1c.", "nbsp\u00a0here\u3000wide\u2009thin", "İstanbul ıi DİYARBAKIR Iı",
    "  lead  trail  ", "", "Straße ﬁ ＡＢＣ ①", "e\u0301t cafe\u0301 soft\u00adhy", "a_b $5+3=8 <x> ©®™ ¿¡ «»",
    "[CLS] Hello [SEP] world [unused3] [MASK]", "playing the unaffable hellos", "𠀀𪜀 ㄅ 가나 かカ ｶ",
    "ΑΒΓ αβγ Привет мир", "x1.5 12:30 1,000 a-b 'q' \"r\" (s)", "\u0085z\u2028w\u200bv",
]

# A result as a comparable value (a vocab as ("VOCAB", its words), another object as its type's
# name); the same text runs in the oracle and here, with ``text`` bound to either library.
PLAIN = """
def _plain(r):
    if isinstance(r, text.Vocab):
        return ("VOCAB", r.vocab())
    if isinstance(r, (tuple, list)):
        return type(r)(_plain(x) for x in r)
    if isinstance(r, dict):
        return r
    if not isinstance(r, (np.ndarray, np.generic, int, float, str, bytes, type(None))):
        return ("OBJ", type(r).__name__)
    return r
"""

ORACLE_PRELUDE = """
import mindspore.dataset.text as text
import mindspore.common.dtype as mt
I = INPUTS["inputs"]
V = text.Vocab.from_list(INPUTS["vocab"])
""" + PLAIN + RUN_EXPRS


def oracle_results(exprs, inputs):
    return run_ms(ORACLE_PRELUDE, {"inputs": inputs, "exprs": list(exprs), "vocab": VOCAB})


def headrace_env(inputs):
    import headrace.common.dtype as mt
    import headrace.dataset as ds
    import headrace.dataset.text as text
    return {"text": text, "ds": ds, "mt": mt, "np": np, "I": inputs, "V": text.Vocab.from_list(VOCAB)}


def run_headrace(expr, env):
    return vision_harness.run_headrace(expr, env, _headrace_plain())


@functools.cache
def _headrace_plain():
    import headrace.dataset.text as text
    local = {"np": np, "text": text}
    exec(PLAIN, local)
    return local["_plain"]
