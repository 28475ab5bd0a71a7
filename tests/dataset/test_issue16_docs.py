"""The docstring examples of the debug hooks, the dataset callbacks and the iterators (error
samples) run as written (issue 16)."""
import doctest
import importlib
import warnings

import pytest

MODULES = ["headrace.dataset.debug._hooks", "headrace.dataset.callback._callbacks", "headrace.dataset._iterators"]


@pytest.mark.parametrize("name", MODULES)
def test_examples(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
