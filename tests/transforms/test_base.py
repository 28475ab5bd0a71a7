"""The operation base classes: eager dispatch, the PIL rule, outputs of map, function wrappers."""
import numpy as np
import pytest
from PIL import Image

from headrace.common import dtype as mstype
from headrace.dataset.transforms import (FuncWrapper, Implementation, PyTensorOperation,
                                         TensorOperation, not_random, to_output)
from headrace.dataset.transforms._base import as_operation
from headrace.dataset.vision._base import ImageTensorOperation, require_image


class _Both(ImageTensorOperation):
    def _run(self, img):
        return ("numpy", img)

    def _run_pil(self, img):
        return ("pil", img)


class _NumpyOnly(ImageTensorOperation):
    def _run(self, img):
        return img


def test_pil_input_runs_the_pillow_kernel_and_arrays_the_numpy_one():
    op = _Both()
    im = Image.new("RGB", (3, 2))
    assert op(im)[0] == "pil"
    kind, arr = op(np.zeros((2, 3), np.uint8))
    assert kind == "numpy" and arr.shape == (2, 3)


def test_implementation_py_forces_the_pillow_kernel():
    op = _Both()
    op.implementation = Implementation.PY
    assert op(np.zeros((2, 2), np.uint8))[0] == "pil"


def test_numpy_only_op_gets_the_pil_image_as_an_array():
    out = _NumpyOnly()(Image.new("L", (4, 2), color=7))
    assert isinstance(out, np.ndarray) and out.shape == (2, 4) and out.dtype == np.uint8
    assert int(out[0, 0]) == 7


def test_image_op_rejects_other_inputs_with_mindspore_message():
    with pytest.raises(TypeError, match=r"^Input should be NumPy or PIL image, got <class 'list'>\.$"):
        _NumpyOnly()([1, 2])


def test_require_image_messages():
    with pytest.raises(RuntimeError, match="^X: the image tensor should have at least two dimensions"):
        require_image(np.zeros(3), "X")
    with pytest.raises(RuntimeError, match="rank: 4"):
        require_image(np.zeros((1, 1, 1, 1)), "X")
    with pytest.raises(RuntimeError, match="is not 3, but got: 4"):
        require_image(np.zeros((2, 2, 4)), "X", channels=(3,))


def test_tensor_operation_converts_lists_and_reports_unconvertible_input():
    class Ident(TensorOperation):
        def _run(self, a):
            return a
    assert Ident()([1, 2]).tolist() == [1, 2]
    with pytest.raises(TypeError, match="Invalid user input"):
        Ident()([[1], [1, 2]])  # ragged: NumPy cannot make an array of it


def test_py_tensor_operation_always_runs_pillow():
    class P(PyTensorOperation):
        def _run_pil(self, x):
            return "pil"
    assert P().implementation == Implementation.PY
    assert P()(np.zeros(1)) == "pil"


def test_to_output_turns_pil_images_into_arrays():
    out = to_output(Image.new("RGB", (4, 2), color=(1, 2, 3)))
    assert out.shape == (2, 4, 3) and out.dtype == np.uint8 and out[0, 0].tolist() == [1, 2, 3]
    pair = to_output((Image.new("L", (2, 2)), np.ones(3)))
    assert isinstance(pair, tuple) and pair[0].shape == (2, 2) and pair[1].tolist() == [1, 1, 1]
    arr = np.ones(2)
    assert to_output(arr) is arr


def test_func_wrapper_randomness_flag_and_not_random():
    assert FuncWrapper(lambda x: x).random is True

    @not_random
    def double(x):
        return x * 2
    assert double.random is False and FuncWrapper(double).random is False
    with pytest.raises(TypeError, match="callable"):
        FuncWrapper(3)


def test_as_operation():
    op = _NumpyOnly()
    assert as_operation(op) is op
    assert isinstance(as_operation(abs), FuncWrapper)
    with pytest.raises(TypeError, match="^transforms\\[2\\] is neither a transforms op"):
        as_operation(3, "transforms[2]")


def test_dtype_normalisation():
    assert mstype.to_numpy_dtype(mstype.int16) == np.int16
    assert mstype.to_numpy_dtype(np.float32) == np.float32
    assert mstype.to_numpy_dtype("uint8") == np.uint8
    assert mstype.to_numpy_dtype(bool) == np.bool_
    assert mstype.to_numpy_dtype(mstype.string).kind == "U"
    assert mstype.dtype_to_nptype(mstype.float64) is np.float64
    assert mstype.pytype_to_dtype(np.int8) is mstype.int8
    assert str(mstype.uint8) == "UInt8" and repr(mstype.bool_) == "mindspore.bool"
    assert mstype.double is mstype.float64 and mstype.intc is mstype.int32
    with pytest.raises(TypeError, match="^Argument data_type with value 3 is not of type"):
        mstype.to_numpy_dtype(3)


def test_dtype_objects_pickle_to_the_same_singletons():
    import pickle
    assert pickle.loads(pickle.dumps(mstype.float32)) is mstype.float32
