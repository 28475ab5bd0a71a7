"""The examples in the docstrings of the transforms and vision modules run as written."""
import doctest
import importlib
import tempfile

import pytest

MODULES = ["headrace.common.dtype", "headrace.dataset.transforms._base", "headrace.dataset.transforms._fusion",
           "headrace.dataset.transforms.transforms", "headrace.dataset.transforms._compound",
           "headrace.dataset.vision._ops_geometry", "headrace.dataset.vision._ops_flip_pad",
           "headrace.dataset.vision._ops_warp", "headrace.dataset.vision._ops_patches",
           "headrace.dataset.vision._ops_convert", "headrace.dataset.vision._ops_decode",
           "headrace.dataset.vision.utils"]


@pytest.mark.parametrize("name", MODULES)
def test_examples(name, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the examples' tempfile.mkdtemp()
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
