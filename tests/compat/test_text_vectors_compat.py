"""Vectors / GloVe / FastText / CharNGram and ToVectors against MindSpore 2.10 on vector files made
here (CRLF lines, trailing spaces, a header line, odd numbers such as hex, nan and garbage)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.text.compat_harness import compare, headrace_env, oracle_results, run_headrace

E = "exact"
ROWS = [("ok", "0.418 0.24968 -0.41242 0.1217 0.34527 -0.04445718411"),
        ("!", "0.013441 0.23682 -0.16899 0.40951 0.63812 0.47709 "),
        ("this", "0.15164 0.30177 -0.16763 0.17684 0.31719 0.33973 "),
        ("is", "0.70853 0.57088 -0.4716 0.18048 0.54449 0.72603"),
        ("Home", "0x10 1e50 nan -inf 1.5abc zz"),
        ("é", "1e-45 -0 3.4028235e38 0.1 0.2 0.30000001192092896")]


def _ngram_lines():
    rng = np.random.default_rng(7)
    keys = ["2gram-#BEGIN#t", "2gram-th", "2gram-he", "2gram-e#END#", "3gram-#BEGIN#th", "3gram-the",
            "4gram-the#END#", "2gram-o#END#", "1gram-t", "2gram-#BEGIN#a", "3gram-he#END#"]
    return [f"{k} " + " ".join(f"{x:.6f}" for x in rng.normal(size=5)) for k in keys]


CASES = [(c, E) for c in [
    "text.ToVectors(text.Vectors.from_file(I['v']))(np.array(['ok', 'zz', 'this', 'Home', 'é', '!']))",
    "text.ToVectors(text.Vectors.from_file(I['v']))('ok')", "text.ToVectors(text.Vectors.from_file(I['v']))(np.array([['is']]))",
    "text.ToVectors(text.Vectors.from_file(I['v']))(np.array([['is', 'ok'], ['x', 'this']]))",
    "text.ToVectors(text.Vectors.from_file(I['v']), [1.0] * 6)(np.array(['zz']))",
    "text.ToVectors(text.Vectors.from_file(I['v']), (1, 2, 3, 4, 5, 6))(np.array(['zz', 'ok']))",
    "text.ToVectors(text.Vectors.from_file(I['v']), [1.0] * 5)(np.array(['zz']))",
    "text.ToVectors(text.Vectors.from_file(I['v']), lower_case_backup=True)(np.array(['OK', 'Ok', 'THIS', 'HOME', 'É']))",
    "text.ToVectors(text.Vectors.from_file(I['v'], max_vectors=2))(np.array(['ok', '!', 'this']))",
    "text.ToVectors(text.Vectors.from_file(I['v'], max_vectors=0))(np.array(['is']))",
    "text.ToVectors(text.Vectors.from_file(I['info']))(np.array(['ok', 'this', '6']))",
    "text.Vectors.from_file(I['wrong'])", "text.Vectors.from_file(I['dimdiff'])", "text.Vectors.from_file(I['empty'])",
    "text.Vectors.from_file(I['dim1'])", "text.Vectors.from_file(I['v'] + 'x')",
    "text.Vectors.from_file(I['v'], max_vectors=-1)", "text.Vectors.from_file(I['v'], max_vectors='a')",
    "text.Vectors.from_file(1)",
    "text.ToVectors(text.GloVe.from_file(I['glove']))(np.array(['ok', 'is']))", "text.GloVe.from_file(I['v'])",
    "text.ToVectors(text.FastText.from_file(I['ft']))(np.array(['ok']))", "text.FastText.from_file(I['v'])",
    "text.ToVectors(text.CharNGram.from_file(I['cng']))(np.array(['the', '.', 'to', 'a', 'THE', 'he']))",
    "text.ToVectors(text.CharNGram.from_file(I['cng'], 5))(np.array(['the', 'to']))",
    "text.ToVectors(text.CharNGram.from_file(I['cng']), [-1.0] * 5, True)(np.array(['THE', 'x']))",
    "text.ToVectors(text.Vectors.from_file(I['v']))(np.array([1]))",
    "text.ToVectors(text.Vectors.from_file(I['v']))(np.array([], dtype=str))",
    "text.ToVectors(text.Vectors.from_file(I['v']), None, 1)",
    "text.ToVectors(text.Vectors.from_file(I['v']), 1)", "text.ToVectors(text.Vectors.from_file(I['v']), [1, 'a'])",
    "[r['text'] for r in ds.TextFileDataset(I['words'], shuffle=False)"
    ".map(text.ToVectors(text.Vectors.from_file(I['v']))).create_dict_iterator(output_numpy=True)]",
]]
ERRTYPE = {"text.Vectors.from_file(I['v'] + 'x')"}  # the message names a path MindSpore resolves
CASES = [(c, "errtype" if c in ERRTYPE else k) for c, k in CASES]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("vectors")

    def put(name, lines, end="\r\n"):
        (d / name).write_text("".join(x + end for x in lines), encoding="utf-8")
        return str(d / name)
    plain = [f"{t} {v}" for t, v in ROWS]
    return {
        "v": put("vectors.txt", plain), "info": put("info.txt", ["6 6"] + plain, "\n"),
        "wrong": put("wrong.txt", plain[:3] + ["6 6 "] + plain[3:]),
        "dimdiff": put("dimdiff.txt", plain[:2] + ["x 1 2 3"]), "empty": put("empty.txt", []),
        "dim1": put("dim1.txt", ["x 1", "y 2"]), "glove": put("glove.6B.test.txt", plain),
        "ft": put("fast.vec", plain), "cng": put("cng.txt", _ngram_lines(), "\n"),
        "words": put("words.txt", ["ok", "this", "nope", "é"], "\n"),
    }


@pytest.fixture(scope="module")
def oracle(inputs):
    return oracle_results([c[0] for c in CASES], inputs)


@pytest.mark.compat
@pytest.mark.parametrize("case", CASES, ids=[c[0][:110] for c in CASES])
def test_vectors(case, oracle, inputs, tmp_path, monkeypatch):
    monkeypatch.setenv("HEADRACE_VECTORS_CACHE", str(tmp_path / "cache"))
    compare(oracle[CASES.index(case)], run_headrace(case[0], headrace_env(inputs)), case[1])
