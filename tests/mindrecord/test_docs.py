"""The examples in the public docstrings run as written."""
import doctest
import importlib
import tempfile

import pytest

MODULES = ["headrace.mindrecord.filewriter", "headrace.mindrecord.filereader", "headrace.mindrecord.mindpage",
           "headrace.mindrecord._reindex", "headrace.mindrecord._save", "headrace.dataset._sources.mindrecord"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the examples' tempfile.mkdtemp()
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
