import numpy as np
import pytest

import headrace.dataset as ds
from tests.helpers import rows


def test_list_rows_convert_one_by_one():
    out = list(ds.NumpySlicesDataset([1.5, 2], shuffle=False).create_tuple_iterator(output_numpy=True))
    assert [(r[0].dtype, r[0].item()) for r in out] == [(np.float64, 1.5), (np.int64, 2)]
    assert rows(ds.NumpySlicesDataset([[1, 2], [3, 4]], shuffle=False)) == [[[1, 2]], [[3, 4]]]
    assert rows(ds.NumpySlicesDataset(["ab", "c"], shuffle=False)) == [["ab"], ["c"]]


def test_tuple_dict_and_array_inputs():
    d = ds.NumpySlicesDataset(([1, 2], [3.0, 4.0]), shuffle=False)
    assert d.get_col_names() == ["column_0", "column_1"]
    assert rows(d) == [[1, 3.0], [2, 4.0]]
    d = ds.NumpySlicesDataset({"b": [1, 2], "a": [3, 4]}, shuffle=False)
    assert d.get_col_names() == ["b", "a"]
    arr = np.arange(6, dtype=np.float32).reshape(3, 2)
    out = list(ds.NumpySlicesDataset(arr, column_names=["x"], shuffle=False).create_tuple_iterator(output_numpy=True))
    assert [r[0].tolist() for r in out] == arr.tolist()
    assert out[0][0].dtype == np.float32


def test_errors():
    with pytest.raises(TypeError, match="Argument data with value 5 is not of type"):
        ds.NumpySlicesDataset(5)
    with pytest.raises(ValueError, match="Data length in each column is not equal."):
        ds.NumpySlicesDataset(([1, 2], [3]))
    with pytest.raises(ValueError, match="Num of input column names is 1, but required is 2."):
        ds.NumpySlicesDataset(([1, 2], [3, 4]), column_names=["x"])


def test_size_without_reading_and_num_samples():
    d = ds.NumpySlicesDataset(list(range(10)), shuffle=False, num_samples=4)
    assert d.get_dataset_size() == 4
    assert rows(d) == [[0], [1], [2], [3]]
