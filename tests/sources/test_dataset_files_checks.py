"""``dataset_files`` of the file-by-file sources, refused with MindSpore 2.10's texts (oracle): an
empty string or list is "can not be empty"; an empty pattern in a list matches no file."""
import re

import pytest

import headrace.dataset as ds


@pytest.mark.parametrize("cls", [ds.TextFileDataset, ds.CSVDataset, ds.TFRecordDataset])
@pytest.mark.parametrize("value, text", [("", "Input dataset_files can not be empty, but got ''."),
                                         ([], "Input dataset_files can not be empty, but got '[]'."),
                                         ([""], "The following patterns did not match any files: ['']."),
                                         (["", ""], "The following patterns did not match any files: ['', ''].")])
def test_empty_dataset_files(cls, value, text):
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        cls(value)
