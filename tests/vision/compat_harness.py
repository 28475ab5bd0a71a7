"""Runs the same expressions under MindSpore (oracle) and headrace and compares the results.

A case is ``(expr, check)``: ``expr`` is evaluated with ``v`` (vision), ``t`` (transforms),
``mt`` (dtype module), ``Inter``, ``Border``, ``R`` (Relational), ``np``, ``Image`` and ``I`` (the
shared inputs) bound to either library. ``check`` is "exact", an absolute tolerance (int/float),
"rel" (1e-6 relative), "errtype" (both raise, same type) or "err" (same type, and headrace's
message is MindSpore's, possibly followed by a space and more detail).
Exceptions from MindSpore's C++ layer are compared on their "[ERROR]" line.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.oracles.oracle import run_ms

# A result as a comparable value (an image as ("PIL", mode, array), another object as its type's
# name); the same text runs in the oracle and here.
PLAIN = """
def _plain(r):
    if hasattr(r, "mode") and hasattr(r, "getbands"):
        return ("PIL", r.mode, np.asarray(r))
    if isinstance(r, (tuple, list)):
        return type(r)(_plain(x) for x in r)
    if not isinstance(r, (np.ndarray, np.generic, int, float, str, bytes, type(None))):
        return ("OBJ", type(r).__name__)
    return r
"""
_LOCAL = {"np": np}
exec(PLAIN, _LOCAL)
_plain = _LOCAL["_plain"]

# The oracle's ending: RESULT is the ``_plain`` result of each expression in INPUTS["exprs"], or the
# exception it raised (as ``run_headrace`` does here).
RUN_EXPRS = """
def _run(expr):
    try:
        return _plain(eval(expr))
    except Exception as e:
        return e
RESULT = [_run(e) for e in INPUTS["exprs"]]
"""

ORACLE_PRELUDE = """
import mindspore.dataset.vision as v
import mindspore.dataset.transforms as t
import mindspore.common.dtype as mt
from mindspore.dataset.vision import Inter, Border, ImageReadMode, SliceMode
from mindspore.dataset.transforms import Relational as R
from PIL import Image
I = INPUTS["inputs"]
""" + PLAIN + RUN_EXPRS


def oracle_results(cases, inputs):
    return run_ms(ORACLE_PRELUDE, {"inputs": inputs, "exprs": [c[0] for c in cases]})


def case_tests(cases, inputs, id_width=90):
    """The module-scoped ``oracle`` and ``env`` fixtures and the parametrized ``test_case`` of a
    list of cases, for a test module to bind: ``oracle, env, test_case = case_tests(CASES, INPUTS)``.
    One oracle run computes every case; each case's id is its expression's first ``id_width`` characters."""
    @pytest.fixture(scope="module")
    def oracle():
        return oracle_results(cases, inputs)

    @pytest.fixture(scope="module")
    def env():
        return headrace_env(inputs)

    @pytest.mark.parametrize("case", cases, ids=[c[0][:id_width] for c in cases])
    def test_case(case, oracle, env):
        compare(oracle[cases.index(case)], run_headrace(case[0], env), case[1])

    return oracle, env, test_case


def headrace_env(inputs):
    from PIL import Image

    import headrace.common.dtype as mt
    import headrace.dataset.transforms as t
    import headrace.dataset.vision as v
    from headrace.dataset.transforms import Relational as R
    from headrace.dataset.vision import Border, ImageReadMode, Inter, SliceMode
    return {"v": v, "t": t, "mt": mt, "Inter": Inter, "Border": Border, "ImageReadMode": ImageReadMode,
            "SliceMode": SliceMode,
            "R": R, "np": np, "Image": Image, "I": inputs}


def run_headrace(expr, env, plain=_plain):
    """``expr`` evaluated in ``env`` as a comparable value (``plain`` of it), or the exception it raised."""
    try:
        return plain(eval(expr, dict(env)))
    except Exception as e:  # noqa: BLE001 - compared as a value
        return e


def _ms_message(msg: str) -> str:
    if "[ERROR] " in msg:
        return msg.split("[ERROR] ", 1)[1].split("\n")[0].strip()
    return msg.strip()


def compare(expected, got, check):
    """Asserts that headrace's ``got`` matches MindSpore's ``expected`` under ``check``."""
    exp_err = type(expected).__name__ == "OracleException"
    if exp_err or check in ("err", "errtype"):
        assert exp_err, f"MindSpore returned {expected!r} but the case expects an error"
        assert isinstance(got, BaseException), f"expected {expected.type_name}: {expected.msg[:300]!r}, got {got!r}"
        assert type(got).__name__ == expected.type_name, (type(got).__name__, str(got), expected.msg[:300])
        if check != "errtype":
            want = _ms_message(expected.msg)
            assert str(got) == want or str(got).startswith(want + " "), (str(got), want)
        return
    if isinstance(got, BaseException):
        raise AssertionError(f"headrace raised {type(got).__name__}: {got}") from got
    _compare_values(expected, got, check)


def _compare_values(expected, got, check):
    if isinstance(expected, tuple) and expected and isinstance(expected[0], str) and expected[0] == "PIL":
        assert isinstance(got, tuple) and got[0] == "PIL", got
        assert got[1] == expected[1], (got[1], expected[1])
        return _compare_values(expected[2], got[2], check)
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected), (type(got), got)
        for e, g in zip(expected, got):
            _compare_values(e, g, check)
        return
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), type(got)
        assert got.shape == expected.shape, (got.shape, expected.shape)
        assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
        if check == "exact" or expected.dtype.kind not in "iuf" or expected.size == 0:
            np.testing.assert_array_equal(got, expected)
        elif check == "rel":
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
        else:
            diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
            assert diff.max() <= check, f"max difference {diff.max()} > {check}"
        return
    assert got == expected, (got, expected)
