"""Padding of bucket_batch_by_length and padded_batch (issue 39, item 2), as MindSpore 2.10 pads:
without pad_info every column goes to the bucket's longest row with 0; a pad shape smaller than a
row cuts the row. (Compared with MindSpore itself in tests/compat/test_issue39_fidelity_compat.py.)"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace.dataset as ds
from headrace._util.errors import PipelineError


def _src(lengths=(1, 3, 2, 5, 4, 2)):
    def gen():
        for n in lengths:
            yield (np.arange(n, dtype=np.int32) + 1, np.ones((n, 2), np.float32) * n, np.array(n, np.int64))
    return ds.GeneratorDataset(gen, ["a", "b", "c"], shuffle=False)


def _rows(d):
    return [[x.tolist() for x in r] for r in d.create_tuple_iterator(output_numpy=True)]


@pytest.mark.parametrize("kw", [{}, {"pad_info": None}, {"pad_info": {}}])
def test_bucket_batch_without_pad_info_pads_every_column_with_zeros(kw):
    out = _rows(_src().bucket_batch_by_length(["a"], [3], [2, 3], **kw))
    # MindSpore 2.10's batches
    assert out == [
        [[[1, 0], [1, 2]], [[[1.0, 1.0], [0.0, 0.0]], [[2.0, 2.0], [2.0, 2.0]]], [1, 2]],
        [[[1, 2, 3, 0, 0], [1, 2, 3, 4, 5], [1, 2, 3, 4, 0]],
         [[[3.0] * 2] * 3 + [[0.0] * 2] * 2, [[5.0] * 2] * 5, [[4.0] * 2] * 4 + [[0.0] * 2]], [3, 5, 4]],
        [[[1, 2]], [[[2.0, 2.0], [2.0, 2.0]]], [2]],
    ]


def test_bucket_batch_pads_only_the_named_columns():
    with pytest.raises(PipelineError, match="Cannot batch tensors with different shapes in column 1"):
        _rows(_src().bucket_batch_by_length(["a"], [3], [2, 3], pad_info={"a": ([None], -1)}))


def test_bucket_boundary_padding_of_a_row_in_the_last_bucket_is_an_error():
    d = _src((1, 7)).project(["a"]).bucket_batch_by_length(["a"], [3, 6], [2, 2, 2], pad_info={"a": ([None], -1)},
                                                          pad_to_bucket_boundary=True)
    with pytest.raises(PipelineError, match=r"requested to pad to bucket boundary failed: a row of length 7 "
                                            r"fell in the last bucket \(index 2\)"):
        _rows(d)


def test_bucket_boundary_padding_applies_to_named_columns_only():
    d = _src((1, 4)).project(["a"]).bucket_batch_by_length(["a"], [3, 6], [2, 2, 2], pad_to_bucket_boundary=True)
    assert _rows(d) == [[[[1]]], [[[1, 2, 3, 4]]]]  # MindSpore: no pad_info, no boundary padding
    d = _src((1, 4)).project(["a"]).bucket_batch_by_length(["a"], [3, 6], [2, 2, 2], pad_info={"a": ([None], -1)},
                                                          pad_to_bucket_boundary=True)
    assert _rows(d) == [[[[1, -1]]], [[[1, 2, 3, 4, -1]]]]


def test_padded_batch_cuts_where_the_pad_shape_is_smaller():
    d = _src().padded_batch(3, pad_info={"a": ([2], 9), "b": ([3, 3], 0)})
    out = _rows(d)
    # MindSpore 2.10's batches
    assert [r[0] for r in out] == [[[1, 9], [1, 2], [1, 2]], [[1, 2], [1, 2], [1, 2]]]
    assert out[0][1] == [[[1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
                         [[3.0, 3.0, 0.0], [3.0, 3.0, 0.0], [3.0, 3.0, 0.0]],
                         [[2.0, 2.0, 0.0], [2.0, 2.0, 0.0], [0.0, 0.0, 0.0]]]


def test_padded_batch_pads_strings_with_the_pad_value():
    d = ds.GeneratorDataset(lambda: iter([(np.array(["ab"]),), (np.array(["c", "d", "e"]),)]), ["s"])
    out = [r[0].tolist() for r in d.padded_batch(2, pad_info={"s": ([2], "pad")}).create_tuple_iterator(
        output_numpy=True)]
    assert out == [[["ab", "pad"], ["c", "d"]]]


@settings(max_examples=30, deadline=None)
@given(shapes=st.lists(st.tuples(st.integers(1, 5), st.integers(1, 4)), min_size=1, max_size=5),
       pad=st.tuples(st.one_of(st.none(), st.integers(1, 6)), st.one_of(st.none(), st.integers(1, 6))),
       value=st.integers(-5, 5))
def test_padded_batch_is_cut_then_padded(shapes, pad, value):
    arrays = [np.arange(h * w, dtype=np.int64).reshape(h, w) + 100 * k for k, (h, w) in enumerate(shapes)]
    d = ds.GeneratorDataset(lambda: ((a,) for a in arrays), ["x"])
    (got,) = [r[0] for r in d.padded_batch(len(arrays), pad_info={"x": (list(pad), value)})
              .create_tuple_iterator(output_numpy=True)]
    target = [max(a.shape[i] for a in arrays) if pad[i] is None else pad[i] for i in range(2)]
    want = np.full([len(arrays)] + target, value, np.int64)
    for k, a in enumerate(arrays):
        h, w = min(a.shape[0], target[0]), min(a.shape[1], target[1])
        want[k, :h, :w] = a[:h, :w]
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)
