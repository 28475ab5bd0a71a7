"""What the audio tests that compare with MindSpore 2.10 share: the skip mark without the oracle,
the first line of MindSpore's error text, the oracle snippet's runner of case expressions, the
cases with MindSpore's result of each, the check of inputs MindSpore refuses, and the error of an
output relative to the reference's peak."""
from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np
import pytest

import headrace.dataset.audio as audio  # noqa: F401 (the expressions eval'd below name it)
from tests.oracles.oracle import oracle_python
from tests.oracles.oracle_codec import OracleException

needs_oracle = pytest.mark.skipif(oracle_python() is None, reason="the MindSpore oracle is not set up")

# The head of an oracle snippet: _run(expr, x) applies ``audio.<expr>`` to x and returns the output (a
# tuple of arrays for several), or the exception it raised, as a value.
RUN_CASES = """
import mindspore.dataset.audio as audio
def _plain(r):
    return tuple(np.asarray(a) for a in r) if isinstance(r, (tuple, list)) else np.asarray(r)
def _run(expr, x):
    try:
        return _plain(eval("audio." + expr)(x))
    except Exception as e:
        return e
C = INPUTS["clips"]
"""


def ms_error_line(e: OracleException) -> str:
    """The first line of MindSpore's message, after its ``[ERROR]`` tag when it has one."""
    msg = e.msg
    if "[ERROR]" in msg:
        msg = msg[msg.index("[ERROR]") + 8:]
    return msg.split("\n")[0]


def each_case(cases: Sequence[tuple[str, Sequence[str]]], clips: dict[str, np.ndarray],
              results: Sequence[Any]) -> Iterator[tuple[str, str, np.ndarray, Any]]:
    """(expression, "<expression> on <clip>", the clip, MindSpore's result) of each (expression,
    clip names) case in order: ``results`` as the oracle snippet's ``_run`` gave them, one a clip."""
    assert len(results) == sum(len(names) for _, names in cases)
    expected = iter(results)
    for expr, names in cases:
        for n in names:
            yield expr, f"{expr} on {n}", clips[n], next(expected)


def assert_refused_as_mindspore(bad_inputs: Sequence[tuple[str, str]], results: Sequence[Any],
                                whole_line: bool = True) -> None:
    """Each (expression, input expression) raises a RuntimeError whose message is the first line of
    MindSpore's (``whole_line`` False: starts with it), and MindSpore raised too."""
    assert len(results) == len(bad_inputs)
    for (expr, x), ref in zip(bad_inputs, results):
        assert isinstance(ref, OracleException), expr
        with pytest.raises(RuntimeError) as info:
            eval("audio." + expr)(eval(x))
        line = ms_error_line(ref)
        assert str(info.value) == line if whole_line else str(info.value).startswith(line), expr


def peak_error(got: np.ndarray, ref: np.ndarray) -> float:
    """max |got - ref| over the peak of |ref| (1e-12 for an all-zero reference), in float64."""
    scale = max(float(np.abs(ref.astype(np.float64)).max(initial=0)), 1e-12)
    return float(np.abs(got.astype(np.float64) - ref).max(initial=0)) / scale
