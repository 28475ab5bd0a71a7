"""Tensor.dtype is MindSpore's type (issue 39, item 3): ``== mstype.float32``, ``str()`` gives
``Float32``; NumPy functions given a Tensor keep working. (Against MindSpore itself:
tests/compat/test_issue39_fidelity_compat.py::test_tensor_dtype_same_as_mindspore.)"""
import copy
import pickle

import numpy as np
import pytest

import headrace.common.dtype as mstype
import headrace.dataset as ds
import headrace.dataset.transforms as T
from headrace.dataset import Tensor

TYPES = [(np.float32, mstype.float32, "Float32"), (np.float64, mstype.float64, "Float64"),
         (np.float16, mstype.float16, "Float16"), (np.int8, mstype.int8, "Int8"), (np.int16, mstype.int16, "Int16"),
         (np.int32, mstype.int32, "Int32"), (np.int64, mstype.int64, "Int64"), (np.uint8, mstype.uint8, "UInt8"),
         (np.uint16, mstype.uint16, "UInt16"), (np.uint32, mstype.uint32, "UInt32"),
         (np.uint64, mstype.uint64, "UInt64"), (np.bool_, mstype.bool_, "Bool")]


@pytest.mark.parametrize(("np_type", "ms_type", "text"), TYPES)
def test_iterator_tensors_carry_mindspore_types(np_type, ms_type, text):
    d = ds.NumpySlicesDataset({"x": np.ones((2, 3), np_type)}, shuffle=False)
    (t,) = next(d.create_tuple_iterator())
    assert type(t) is Tensor
    assert t.dtype == ms_type and ms_type == t.dtype and hash(t.dtype) == hash(ms_type)
    assert str(t.dtype) == text and repr(t.dtype) == repr(ms_type)
    assert all(t.dtype != other for _, other, _ in TYPES if other is not ms_type)
    assert type(t.asnumpy()) is np.ndarray and t.asnumpy().dtype == np.dtype(np_type)
    # NumPy's view of it: attributes, conversion, and equality with the NumPy dtype
    assert (t.dtype.kind, t.dtype.itemsize, t.dtype.type) == (np.dtype(np_type).kind, np.dtype(np_type).itemsize,
                                                              np.dtype(np_type).type)
    assert np.dtype(t.dtype) == np.dtype(np_type) and t.dtype == np.dtype(np_type) and np.dtype(np_type) == t.dtype
    assert {ms_type: "found"}[t.dtype] == "found"
    assert next(d.create_dict_iterator())["x"].dtype == ms_type


def test_numpy_functions_keep_working_on_tensors():
    t = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    i = Tensor(np.arange(6).reshape(2, 3))
    assert float(t.mean()) == 2.5 and float(np.mean(i)) == 2.5 and int(i.sum()) == 15
    assert float(np.median(i)) == 2.5 and float(np.percentile(t, 50)) == 2.5
    np.testing.assert_array_equal(t, t.asnumpy())
    np.testing.assert_allclose(i, i.asnumpy())
    assert np.pad(t, 1).shape == (4, 5) and np.concatenate([t, t]).shape == (4, 3)
    assert t.astype(np.float16).dtype == mstype.float16
    assert t.view(np.int32).dtype == mstype.int32 and t.view(np.int32).asnumpy().tolist()[0][1] == 1065353216
    assert np.zeros(2, t.dtype).dtype == np.float32 and np.iinfo(i.dtype).max == 2**63 - 1
    assert np.issubdtype(i.dtype, np.integer) and not np.issubdtype(t.dtype, np.integer)
    assert pickle.loads(pickle.dumps(t)).dtype == mstype.float32 and copy.deepcopy(i).dtype == mstype.int64
    assert repr(Tensor([1, 2], mstype.int32)) == "Tensor([1, 2], dtype=int32)"


def test_a_dtype_mindspore_has_no_type_for_stays_numpys():
    t = np.array([1 + 2j]).view(Tensor)
    assert t.dtype == np.complex128 and isinstance(t.dtype, np.dtype)


def test_transforms_take_tensors():
    v = Tensor(np.array([1, 2], np.int32))
    assert T.Concatenate(0, v, v)(v).tolist() == [1, 2, 1, 2, 1, 2]
    assert T.TypeCast(mstype.float32)(v).dtype == np.float32


def test_a_tensors_dtype_finds_both_spellings_in_dicts_and_sets():
    t = Tensor(np.ones(2, np.uint8))
    assert {np.dtype(np.uint8): "numpy"}[t.dtype] == "numpy" and {mstype.uint8: "ms"}[t.dtype] == "ms"
    assert t.dtype in {np.dtype(np.uint8), np.dtype(np.float32)} and t.dtype not in {mstype.int8}
