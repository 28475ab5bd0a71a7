"""JiebaTokenizer against MindSpore 2.10 (cppjieba): MP, HMM and MIX modes, offsets, user words,
with a hand-made dictionary/HMM and with jieba's full dictionary and HMM (when jieba is installed)."""
from __future__ import annotations

import pytest

from tests.oracles.oracle import run_ms
from tests.text.jieba_files import jieba_files, small_files

SENTENCES = ["我爱北京天安门", "今天天气不错，我们去北京大学玩。", "小明硕士毕业于中国科学院计算所，后在日本京都大学深造",
             "Hello world 你好 123.45 abc123 x1y 3.1.4 a.b", "  空格  测试\t制表\n换行", "", "我", "，。", "IBM和微软",
             "他来到了网易杭研大厦", "é北京ü", "😀北京", "北京的杭研小明们", "的的的的", "Ａ北京①"]
CODE = """
import mindspore.dataset.text as text
def run(hmm, dic):
    out = []
    for mode in (text.JiebaMode.MP, text.JiebaMode.HMM, text.JiebaMode.MIX):
        t = text.JiebaTokenizer(hmm, dic, mode, with_offsets=True)
        out.append([tuple(t(s)) for s in INPUTS["s"]])
    t = text.JiebaTokenizer(hmm, dic)
    t.add_word("门北")
    t.add_word("杭研", 1000)
    t.add_dict({"网易杭": 5})
    out.append([t(s) for s in INPUTS["s"]])
    return out
RESULT = [run(*INPUTS["small"])] + ([run(*INPUTS["full"])] if INPUTS["full"] else [])
"""


def _run_headrace(hmm, dic, sentences):
    import headrace.dataset.text as text
    out = []
    for mode in (text.JiebaMode.MP, text.JiebaMode.HMM, text.JiebaMode.MIX):
        t = text.JiebaTokenizer(hmm, dic, mode, with_offsets=True)
        out.append([tuple(t(s)) for s in sentences])
    t = text.JiebaTokenizer(hmm, dic)
    t.add_word("门北")
    t.add_word("杭研", 1000)
    t.add_dict({"网易杭": 5})
    out.append([t(s) for s in sentences])
    return out


def _same(expected, got):
    import numpy as np
    assert len(expected) == len(got)
    for mode_e, mode_g in zip(expected, got):
        for e, g in zip(mode_e, mode_g):
            e = e if isinstance(e, tuple) else (e,)
            g = g if isinstance(g, tuple) else (g,)
            for a, b in zip(e, g):
                assert a.dtype == b.dtype and a.shape == b.shape, (a, b)
                np.testing.assert_array_equal(a, b)


@pytest.mark.compat
def test_jieba_matches_mindspore(tmp_path):
    small = small_files(tmp_path)
    full = jieba_files(tmp_path)
    expected = run_ms(CODE, {"s": SENTENCES, "small": small, "full": full})
    _same(expected[0], _run_headrace(*small, SENTENCES))
    if full is None:
        pytest.skip("jieba (the source of the full dictionary) is not installed")
    _same(expected[1], _run_headrace(*full, SENTENCES))
