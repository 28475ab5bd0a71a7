"""What the audio tests that compare with MindSpore 2.10 share: the skip mark without the oracle,
the first line of MindSpore's error text, the oracle snippet's runner of case expressions, and the
error of an output relative to the reference's peak."""
from __future__ import annotations

import numpy as np
import pytest

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


def peak_error(got: np.ndarray, ref: np.ndarray) -> float:
    """max |got - ref| over the peak of |ref| (1e-12 for an all-zero reference), in float64."""
    scale = max(float(np.abs(ref.astype(np.float64)).max(initial=0)), 1e-12)
    return float(np.abs(got.astype(np.float64) - ref).max(initial=0)) / scale
