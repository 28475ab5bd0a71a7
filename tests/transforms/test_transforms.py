"""General transforms: behaviour beyond the oracle (cases MindSpore crashes on or rejects),
properties, and randomness keyed by sample."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from headrace._util import rng
from headrace.common import dtype as mstype
from headrace.dataset import transforms as t
from headrace.dataset.transforms._cast import c_cast

INT_TARGETS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def _x86_cast(x: float, target) -> int:
    """What static_cast<target>(double) gives on x86-64 with GCC (the reference for c_cast)."""
    bits = np.dtype(target).itemsize * 8
    signed = np.dtype(target).kind == "i"

    def cvtt(v, width):  # cvttsd2si: truncate, or the minimum int when out of range / NaN
        if not math.isfinite(v) or not (-2.0**(width - 1) <= math.trunc(v) <= 2.0**(width - 1) - 1):
            return -2**(width - 1)
        return math.trunc(v)
    if np.dtype(target) == np.uint64:
        if x >= 2.0**63:
            return (cvtt(x - 2.0**63, 64) ^ -2**63) % 2**64
        return cvtt(x, 64) % 2**64
    wide = 64 if (bits == 64 or (bits == 32 and not signed)) else 32
    r = cvtt(x, wide) % 2**bits
    return r - 2**bits if signed and r >= 2**(bits - 1) else r


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 20),
                  elements=st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                                     st.floats(-5e9, 5e9), st.floats(-300, 300))),
       st.sampled_from(INT_TARGETS))
def test_c_cast_matches_x86_static_cast(values, target):
    got = c_cast(values, np.dtype(target))
    want = [_x86_cast(float(v), target) for v in values]
    assert got.dtype == target
    assert got.tolist() == want


@pytest.mark.parametrize("labels, expected", [
    (np.array([-1, 2]), [[0, 0, 0], [0, 0, 1]]),
    (np.zeros((0,), np.int64), np.zeros((0, 3), np.int64).tolist()),
])
def test_onehot_cases_mindspore_crashes_on(labels, expected):
    # MindSpore 2.10 writes out of bounds for negative labels and refuses empty input eagerly
    assert t.OneHot(3)(labels).tolist() == expected


def test_onehot_smoothing_formula_for_several_labels():
    # MindSpore 2.10 crashes here (heap corruption); the documented formula:
    out = t.OneHot(4, 0.2)(np.array([1, 3], np.int32))
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, [[0.05, 0.85, 0.05, 0.05], [0.05, 0.05, 0.05, 0.85]])
    assert t.OneHot(1)(np.array([0, 0])).tolist() == [[1], [1]]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 9).flatmap(lambda n: st.tuples(
    st.just(n), hnp.arrays(np.int64, st.integers(2, 12), elements=st.integers(0, n - 1)))))
def test_onehot_rows_sum_to_one_and_point_at_the_label(case):
    n, labels = case
    out = t.OneHot(n)(labels)
    assert out.shape == (labels.size, n)
    assert out.sum(axis=1).tolist() == [1] * labels.size
    assert out.argmax(axis=1).tolist() == labels.tolist()


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.int32, st.tuples(st.integers(1, 5), st.integers(1, 6)), elements=st.integers(-4, 4)))
def test_unique_reconstructs_its_input(a):
    values, index, counts = t.Unique()(a)
    assert index.dtype == np.int32 and counts.dtype == np.int32
    assert values[index].tolist() == a.reshape(-1).tolist()
    assert counts.sum() == a.size and len(set(values.tolist())) == values.size
    firsts = [int(np.argmax(a.reshape(-1) == v)) for v in values]
    assert firsts == sorted(firsts)  # order of first occurrence


def test_slice_accepts_python_slices_with_open_ends():
    a = np.arange(6).reshape(2, 3)
    assert t.Slice(slice(1, None))(np.array([1, 2, 3])).tolist() == [2, 3]
    assert t.Slice(slice(None, None, -1))(np.array([1, 2, 3])).tolist() == [3, 2, 1]
    assert t.Slice(None, slice(None, None, 2))(a).tolist() == [[0, 2], [3, 5]]
    with pytest.raises(RuntimeError, match="^Wrong slice object$"):
        t.Slice(slice(0, 3, 0))(np.array([1, 2, 3]))


def test_fill_and_padend_on_empty_arrays():
    assert t.Fill(3)(np.zeros((0, 2), np.int32)).shape == (0, 2)
    assert t.PadEnd([2])(np.zeros((0,), np.int64)).tolist() == [0, 0]
    assert t.PadEnd([None, 3], pad_value=-1)(np.array([[1], [2]])).tolist() == [[1, -1, -1], [2, -1, -1]]


def test_typecast_keeps_strings_and_rejects_numbers_to_string():
    s = np.array(["a", "bc"])
    assert t.TypeCast(mstype.string)(s) is s
    with pytest.raises(RuntimeError, match="number of elements should be 0"):
        t.TypeCast(mstype.string)(np.array([1]))
    with pytest.raises(RuntimeError, match="^TypeCast: TypeCast does not support cast from bytes to int32$"):
        t.TypeCast(mstype.int32)(np.array([b"1"]))


def _keyed(op, x, key):
    with rng.sample_key(key):
        return op(x)


def test_random_compound_ops_are_functions_of_the_sample_key():
    x = np.arange(4)
    apply_ = t.RandomApply([lambda a: a + 100], prob=0.5)
    choice = t.RandomChoice([lambda a: a * 2, lambda a: a * 3, lambda a: a - 1])
    order = t.RandomOrder([lambda a: a * 2, lambda a: a + 1])
    for op in (apply_, choice, order):
        outs = [_keyed(op, x, (5, 1, 0, i)).tolist() for i in range(30)]
        again = [_keyed(op, x, (5, 1, 0, i)).tolist() for i in range(30)]
        assert outs == again
        assert len({tuple(o) for o in outs}) > 1  # the key does change the choice


def test_random_apply_extremes_and_choice_of_multi_output_ops():
    x = np.array([1, 2])
    assert t.RandomApply([t.Fill(0)], prob=0.0)(x).tolist() == [1, 2]
    assert t.RandomApply([t.Fill(0)], prob=1.0)(x).tolist() == [0, 0]
    a, b = t.RandomChoice([t.Duplicate()])(x)
    assert a.tolist() == b.tolist() == [1, 2]


def test_compose_flattens_and_marks_randomness():
    inner = t.Compose([t.Fill(2)])
    outer = t.Compose([inner, t.TypeCast(mstype.float32)])
    assert len(outer.transforms) == 2 and outer(np.array([5])).tolist() == [2.0]
    assert t.Compose([t.Fill(1), t.TypeCast(mstype.int8)]).random is False
    assert t.Compose([t.Fill(1), t.RandomApply([t.Fill(2)])]).random is True
    # MindSpore 2.10: a Compose of C ops called with no input fails in its C executor (RuntimeError)
    with pytest.raises(RuntimeError, match="^Input Tensor is not valid.$"):
        outer()


def test_compose_reports_a_function_returning_none():
    with pytest.raises(RuntimeError, match="^Got None from Python object"):
        t.Compose([lambda x: None])(np.array([1]))


def test_mask_compares_text_and_casts_the_constant():
    assert t.Mask(t.Relational.GE, "b")(np.array(["a", "b", "c"])).tolist() == [False, True, True]
    assert t.Mask(t.Relational.EQ, 257)(np.array([1, 2], np.uint8)).tolist() == [True, False]
