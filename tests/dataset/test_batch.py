import numpy as np
import pytest

import headrace.dataset as ds
from tests.helpers import parametrize_execution, rows


def ten():
    return ds.NumpySlicesDataset(list(range(10)), column_names=["x"], shuffle=False)


def ragged():
    return ds.GeneratorDataset(lambda: (np.arange(n) for n in (1, 2, 3, 4)), ["v"])


def test_batch_sizes_and_remainder():
    assert rows(ten().batch(3)) == [[[0, 1, 2]], [[3, 4, 5]], [[6, 7, 8]], [[9]]]
    assert ten().batch(3).get_dataset_size() == 4
    assert ten().batch(3, drop_remainder=True).get_dataset_size() == 3
    assert len(rows(ten().batch(3, drop_remainder=True))) == 3
    assert ten().repeat(2).batch(4).get_dataset_size() == 5


def test_batch_stacks_dtype_and_shape():
    d = ds.NumpySlicesDataset(np.ones((5, 2, 3), np.float32), shuffle=False).batch(2)
    out = list(d.create_tuple_iterator(output_numpy=True))
    assert [o[0].shape for o in out] == [(2, 2, 3), (2, 2, 3), (1, 2, 3)]
    assert out[0][0].dtype == np.float32
    assert d.output_shapes() == [[2, 2, 3]]


def test_callable_batch_size_gets_batch_info_per_epoch():
    seen = []

    def size(info):
        seen.append((info.get_batch_num(), info.get_epoch_num()))
        return info.get_batch_num() + 1
    d = ten().repeat(2).batch(size)
    assert [len(r[0]) for r in rows(d)] == [1, 2, 3, 4, 5, 5]
    seen.clear()
    it = ds.NumpySlicesDataset(list(range(4)), shuffle=False).batch(lambda i: seen.append(
        (i.get_batch_num(), i.get_epoch_num())) or 2).create_tuple_iterator(num_epochs=2)
    for _ in range(2):
        list(it)
    assert seen == [(0, 0), (1, 0), (0, 1), (1, 1)]


def test_per_batch_map_receives_lists_and_replaces_columns():
    src = ds.GeneratorDataset(lambda: ((np.array([i]), np.array(i)) for i in range(5)), ["x", "y"])

    def pbm(x, y, info):
        assert isinstance(x, list) and isinstance(x[0], np.ndarray)
        return [a * 2 for a in x], y
    assert rows(src.batch(2, per_batch_map=pbm, input_columns=["x", "y"])) == [
        [[[0], [2]], [0, 1]], [[[4], [6]], [2, 3]], [[[8]], [4]]]

    def pbm2(x, info):
        return x, [np.array(len(x))] * len(x)
    d = src.batch(2, per_batch_map=pbm2, input_columns=["x"], output_columns=["x", "n"])
    assert d.get_col_names() == ["x", "n", "y"]
    assert rows(d)[2] == [[[4]], [1], [4]]


def test_ragged_batch_error_names_column_and_shapes():
    with pytest.raises(RuntimeError, match=r"Cannot batch tensors with different shapes in column 0 \('v'\). "
                                           r"First element had shape <1> and this element had shape <2>"):
        rows(ragged().batch(2))


def test_padded_batch():
    assert rows(ragged().padded_batch(2, pad_info={"v": ([None], -1)})) == [[[[0, -1], [0, 1]]], [[[0, 1, 2, -1], [0, 1, 2, 3]]]]
    assert rows(ragged().padded_batch(2, pad_info={"v": ([5], 9)}))[0] == [[[0, 9, 9, 9, 9], [0, 1, 9, 9, 9]]]
    assert rows(ragged().padded_batch(2, pad_info={"v": None}))[0] == [[[0, 0], [0, 1]]]
    assert rows(ragged().padded_batch(2, pad_info={}))[1] == [[[0, 1, 2, 0], [0, 1, 2, 3]]]
    with pytest.raises(RuntimeError, match="Cannot batch tensors with different shapes"):
        rows(ragged().padded_batch(2))  # no pad_info: nothing is padded


def test_bucket_batch_by_length():
    src = ds.GeneratorDataset(lambda: (np.arange(n) for n in (1, 3, 2, 4, 1, 5)), ["v"])
    d = src.bucket_batch_by_length(["v"], [3], [2, 2], pad_info={"v": ([None], 0)})
    assert rows(d) == [[[[0, 0], [0, 1]]], [[[0, 1, 2, 0], [0, 1, 2, 3]]], [[[0]]], [[[0, 1, 2, 3, 4]]]]
    d = src.bucket_batch_by_length(["v"], [3], [2, 2], pad_info={"v": ([None], 0)}, drop_remainder=True)
    assert len(rows(d)) == 2


@pytest.mark.parametrize("call, exc, text", [
    (lambda d: d.batch(0), ValueError, r"Input batch_size is not within the required interval of \[1, 2147483647\]."),
    (lambda d: d.batch("a"), TypeError, "batch_size should either be an int or a callable."),
    (lambda d: d.batch(2, drop_remainder=1), TypeError, "Argument drop_remainder with value 1 is not of type"),
    (lambda d: d.batch(2, pad_info={}), TypeError, "unexpected keyword argument 'pad_info'"),
    (lambda d: d.padded_batch(2, pad_info=[1]), TypeError, "pad_info"),
    (lambda d: d.bucket_batch_by_length(["x"], [3, 2], [1, 1, 1]), ValueError, "strictly increasing"),
    (lambda d: d.bucket_batch_by_length(["x"], [3], [1]), ValueError, "one element more"),
])
def test_batch_argument_errors(call, exc, text):
    with pytest.raises(exc, match=text):
        call(ten())


@parametrize_execution
def test_per_batch_map_with_workers_keeps_order(mode):
    d = ten().batch(3, per_batch_map=lambda x, info: ([v + info.get_batch_num() * 100 for v in x],), **mode)
    assert rows(d) == [[[0, 1, 2]], [[103, 104, 105]], [[206, 207, 208]], [[309]]]


@pytest.mark.parametrize("procs", [False, True])
def test_batch_info_epoch_counts_epochs_not_repeats(procs):
    """MindSpore 2.10: under repeat(3), every repeat of epoch e says get_epoch_num() == e and
    get_batch_num() starts again at 0 (checked in the oracle)."""
    seen = []

    def pbm(col, info):
        return ([np.full_like(c, info.get_epoch_num() * 10 + info.get_batch_num()) for c in col],)

    d = ds.NumpySlicesDataset(list(range(4)), column_names=["n"], shuffle=False)
    d = d.batch(2, per_batch_map=pbm, num_parallel_workers=2 if procs else 1, python_multiprocessing=procs)
    d = d.repeat(3)
    it = d.create_tuple_iterator(num_epochs=2, output_numpy=True)
    for _ in range(2):
        seen.append([int(r[0][0]) for r in it])
    assert seen == [[0, 1] * 3, [10, 11] * 3]
