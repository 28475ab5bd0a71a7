"""Dictionary and HMM files in MindSpore's (cppjieba's) formats, written for the Jieba tests."""
from __future__ import annotations

import pathlib

SMALL_DICT = ["北京 100 ns", "大学 80 n", "北京大学 50 nt", "我 200 r", "爱 150 v", "天安门 60 ns", "今天 70 t",
              "天气 60 n", "不错 40 a", "科学院 30 n", "中国 90 ns"]
STATES = "BEMS"
# A hand-made HMM: a few characters with made-up log-probabilities (the format is what matters).
_SMALL_EMIT = {
    "B": {"我": -3.0, "北": -2.0, "小": -2.5, "明": -6.0, "杭": -4.0, "研": -5.0, "天": -3.5},
    "E": {"们": -1.5, "京": -2.0, "明": -2.2, "研": -3.0, "厦": -2.0, "门": -2.5},
    "M": {"安": -2.0, "大": -3.0},
    "S": {"我": -2.0, "爱": -2.0, "的": -1.0, "杭": -3.0, "好": -2.5, "北": -6.0},
}
_SMALL_START = {"B": -0.26, "S": -1.47}
_SMALL_TRANS = {"B": {"E": -0.51, "M": -0.92}, "E": {"B": -0.59, "S": -0.81},
                "M": {"E": -0.33, "M": -1.26}, "S": {"B": -0.72, "S": -0.67}}


def write_hmm(path: pathlib.Path, start: dict, trans: dict, emit: dict) -> pathlib.Path:
    lines = ["#", "# HMM model for the tests: start, transitions, emissions of B E M S", "#"]
    lines.append(" ".join(repr(float(start.get(s, -3.14e100))) for s in STATES))
    for s in STATES:
        lines.append(" ".join(repr(float(trans.get(s, {}).get(t, -3.14e100))) for t in STATES))
    for s in STATES:
        lines.append("#" + s)
        lines.append(",".join(f"{ch}:{p!r}" for ch, p in emit.get(s, {}).items()))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def small_files(folder: pathlib.Path) -> tuple[str, str]:
    hmm = write_hmm(folder / "small_hmm.utf8", _SMALL_START, _SMALL_TRANS, _SMALL_EMIT)
    dic = folder / "small.dict.utf8"
    dic.write_text("\n".join(SMALL_DICT) + "\n", encoding="utf-8")
    return str(hmm), str(dic)


def jieba_files(folder: pathlib.Path) -> tuple[str, str] | None:
    """The ``jieba`` package's own dictionary and HMM probabilities in MindSpore's file formats
    (the same model MindSpore ships), or None without the package."""
    try:
        import jieba
        from jieba.finalseg import prob_emit, prob_start, prob_trans
    except ImportError:
        return None
    hmm = write_hmm(folder / "hmm_model.utf8", prob_start.P, prob_trans.P, prob_emit.P)
    dict_txt = pathlib.Path(jieba.__file__).parent / "dict.txt"
    return str(hmm), str(dict_txt)
