"""Issue 14 item 9: ds.Tensor(data) as mindspore.Tensor(data); ds.text/vision/transforms attributes."""
import pickle
import subprocess
import sys

import numpy as np
import pytest

import headrace.common.dtype as mstype
import headrace.dataset as ds
from headrace.dataset import Tensor


@pytest.mark.parametrize("data, dtype, shape, values", [
    (3, "int64", (), 3),
    (1.5, "float32", (), 1.5),
    (True, "bool", (), True),
    ([1, 2, 3], "int64", (3,), [1, 2, 3]),
    ([1.0, 2.0], "float32", (2,), [1.0, 2.0]),
    ([1, 2.5], "float32", (2,), [1.0, 2.5]),
    ([[1, 2], [3, 4]], "int64", (2, 2), [[1, 2], [3, 4]]),
    ((1, 2), "int64", (2,), [1, 2]),
    ([], "float32", (0,), []),
    (np.array([1.0, 2.0]), "float64", (2,), [1.0, 2.0]),
    (np.array([1, 2], np.int32), "int32", (2,), [1, 2]),
    (np.float64(2.0), "float64", (), 2.0),
    (np.int64(2), "int64", (), 2),
])
def test_tensor_from_data_uses_mindspore_default_types(data, dtype, shape, values):
    x = Tensor(data)
    assert type(x) is Tensor and x.asnumpy().dtype == np.dtype(dtype) and x.shape == shape
    assert x.dtype == mstype.pytype_to_dtype(np.dtype(dtype))  # MindSpore's type (issue 39)
    assert x.asnumpy().tolist() == values and type(x.asnumpy()) is np.ndarray


def test_tensor_with_dtype_casts_and_copies():
    src = np.ones((2, 3))
    x = Tensor(src, mstype.float32)
    assert x.dtype == mstype.float32 and x.shape == (2, 3)
    assert Tensor(1.7, mstype.int32).tolist() == 1 and Tensor(1.7, mstype.int32).dtype == mstype.int32
    assert Tensor(input_data=[1, 2], dtype=mstype.int32).dtype == mstype.int32
    y = Tensor(src)
    src[0, 0] = 5
    assert y[0, 0] == 1.0
    assert Tensor(Tensor([1, 2])).tolist() == [1, 2]


def test_tensor_compares_and_pickles_like_an_array():
    assert bool(Tensor(3) == Tensor(3)) and not bool(Tensor(3) == Tensor(4))
    back = pickle.loads(pickle.dumps(Tensor([1.5, 2.0])))
    assert type(back) is Tensor and back.dtype == mstype.float32 and back.tolist() == [1.5, 2.0]


@pytest.mark.parametrize("data, dtype, message", [
    ("abc", None, "For 'Tensor', the type of 'input_data' should be one of"),
    (None, None, "For 'Tensor', the type of 'input_data' should be one of"),
    ([[1], [2, 3]], None, "For Tensor, the input_data is [[1], [2, 3]] that contain unsupported element."),
    ([1, 2], np.float32, "For 'Tensor', the 'dtype' should be a mindspore dtype"),
])
def test_tensor_refuses_what_mindspore_refuses(data, dtype, message):
    with pytest.raises(TypeError) as info:
        Tensor(data, dtype)
    assert message in str(info.value)


def test_generator_rows_of_tensors():
    def gen():
        for i in range(4):
            yield Tensor(i)

    data = ds.GeneratorDataset(gen, ["data"], shuffle=False)
    assert [bool(r["data"] == Tensor(i)) for i, r in enumerate(data.create_dict_iterator(num_epochs=1))] == [True] * 4


def test_submodules_are_attributes_after_importing_dataset():
    code = ("import headrace.dataset as ds; import types; "
            "print(all(isinstance(m, types.ModuleType) for m in (ds.text, ds.vision, ds.transforms)), "
            "ds.text.__name__, ds.vision.__name__, ds.transforms.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["True", "headrace.dataset.text", "headrace.dataset.vision",
                                  "headrace.dataset.transforms"]
