"""Datasets that one function text builds, read under MindSpore 2.10 (the oracle) and headrace, and
compared row for row.

A test module writes ``MAKE``, the text of ``make(case, root)``: the dataset of one case (a list or
tuple) over the files below the folder ``root``; it sees ``ds``, ``np`` and ``os``. One oracle run
reads every case (``oracle_rows``), a test reads its own here (``local_rows``) and compares the two
with ``assert_same_rows``; ``rows_tests`` makes that fixture and test. A case is read as
``[column names, dataset size, rows]``.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.oracles.oracle import run_ms
from tests.oracles.snippets import local_functions

READ = '''
import os
def read(case, root):
    x = make(case, root)
    return [x.get_col_names(), x.get_dataset_size(),
            [list(r) for r in x.create_tuple_iterator(output_numpy=True, num_epochs=1)]]
'''

# The oracle's ending: RESULT holds each case's reading, or the exception that made or read it.
_READ_ALL = '''
def _read_or_error(case):
    try:
        return read(case, INPUTS["root"])
    except Exception as e:
        return e
RESULT = [_read_or_error(c) for c in INPUTS["cases"]]
'''


def oracle_rows(make, cases, root):
    """MindSpore's reading of each case of ``cases`` (in order), or the exception it raised."""
    return run_ms(make + READ + _READ_ALL, {"cases": [list(c) for c in cases], "root": root})


def local_rows(make, case, root):
    """headrace's reading of ``case``."""
    return local_functions(make + READ)["read"](list(case), root)


def assert_same_rows(got, expected, size=True):
    """Asserts that headrace's reading ``got`` is MindSpore's ``expected``: the same column names,
    dataset size (unless ``size`` is false) and rows, each value of the same dtype, shape and items."""
    assert not isinstance(expected, BaseException) and type(expected).__name__ != "OracleException", expected
    assert got[0] == expected[0], (got[0], expected[0])
    if size:
        assert got[1] == expected[1], (got[1], expected[1])
    assert len(got[2]) == len(expected[2]), (got, expected)
    for g, e in zip(got[2], expected[2]):
        for a, b in zip(g, e):
            assert a.dtype == b.dtype and a.shape == b.shape, (a, b)
            np.testing.assert_array_equal(a, b)


def rows_tests(make, cases, ids, size=lambda case: True):
    """The module-scoped ``oracle`` fixture and the parametrized test of ``cases`` (named by ``ids``),
    for a test module to bind: ``oracle, test_x_rows = rows_tests(MAKE, CASES, ids)``. The module
    gives the folder as a fixture ``root``; ``size(case)`` says whether the case's sizes must agree."""
    @pytest.fixture(scope="module")
    def oracle(root):
        return oracle_rows(make, cases, root)

    @pytest.mark.compat
    @pytest.mark.parametrize("case", cases, ids=ids)
    def test_rows(case, oracle, root):
        assert_same_rows(local_rows(make, case, root), oracle[cases.index(case)], size=size(case))

    return oracle, test_rows
