import re
import numpy as np
import pytest

import headrace.dataset as ds
from tests.helpers import rows


def ten():
    return ds.NumpySlicesDataset(list(range(10)), column_names=["x"], shuffle=False)


def flat(d, epochs=1):
    return [r[0] for r in rows(d, epochs)]


def test_repeat_take_skip():
    assert flat(ten().repeat(2).skip(3).take(12)) == [3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4]
    assert ten().repeat(3).get_dataset_size() == 30
    assert ten().take(-1).get_dataset_size() == 10
    assert ten().skip(15).get_dataset_size() == 0
    assert flat(ten().skip(15)) == []
    assert ten().repeat(-1).get_dataset_size() == 10  # MindSpore reports one round for an endless repeat
    assert flat(ten().repeat().take(25))[-5:] == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("call, exc, text", [
    (lambda d: d.repeat(0), ValueError, r"count should be either -1 or positive integer, range\[1, INT32_MAX\]."),
    (lambda d: d.repeat(-2), ValueError, "count should be either -1 or positive integer"),
    (lambda d: d.take(0), ValueError, r"count should be either -1 or within the required interval of \(0, 2147483647\], got 0."),
    (lambda d: d.skip(-1), ValueError, r"Input count is not within the required interval of \[0, 2147483647\]."),
    (lambda d: d.shuffle(1), ValueError, r"Input buffer_size is not within the required interval of \[2, 2147483647\]."),
    (lambda d: d.shuffle("a"), TypeError,
     re.escape("Argument buffer_size with value a is not of type [<class 'int'>], but got <class 'str'>.")),
    (lambda d: d.filter(3), TypeError, "Predicate should be a Python function or a callable Python object."),
    (lambda d: d.project([]), ValueError, "columns should not be empty."),
    (lambda d: d.rename(["x"], ["a", "b"]), ValueError, "Number of column in input_columns and output_columns is not equal."),
    (lambda d: d.zip(5), TypeError, "Argument datasets with value 5 is not of type"),
    (lambda d: d.concat(5), TypeError, "Argument datasets with value 5 is not of type"),
    (lambda d: ds.zip((d,)), ValueError, "Can't zip empty or just one dataset!"),
    (lambda d: d.apply(lambda x: 5), TypeError, "apply_func must return a dataset."),
])
def test_argument_errors(call, exc, text):
    with pytest.raises(exc, match=text):
        call(ten())


def test_zip_concat_project_rename():
    a = ds.NumpySlicesDataset({"a": [1, 2, 3]}, shuffle=False)
    b = ds.NumpySlicesDataset({"b": [4, 5]}, shuffle=False)
    z = ds.zip((a, b))
    assert z.get_col_names() == ["a", "b"] and z.get_dataset_size() == 2
    assert rows(z) == [[1, 4], [2, 5]]
    assert rows(a + a.take(1)) == [[1], [2], [3], [1]]
    assert (a + a).get_dataset_size() == 6
    with pytest.raises(ValueError, match="duplicate column a already exists when zipping datasets"):
        ds.zip((a, a)).get_col_names()
    c = ds.zip((a, b)).project(["b", "a"])
    assert c.get_col_names() == ["b", "a"] and rows(c) == [[4, 1], [5, 2]]
    assert a.rename("a", "q").get_col_names() == ["q"]
    with pytest.raises(ValueError, match="does not exist"):
        a.project(["z"]).get_col_names()


def test_filter_and_exact_size():
    d = ten().filter(lambda x: x % 3 == 0)
    assert flat(d) == [0, 3, 6, 9]
    assert d.get_dataset_size() == 4


def test_flat_map():
    d = ds.NumpySlicesDataset([[1, 2], [3, 4]], shuffle=False).flat_map(
        lambda x: ds.NumpySlicesDataset(x, shuffle=False))
    assert flat(d) == [1, 2, 3, 4]


def test_split_consecutive_and_random():
    a, b = ten().split([0.7, 0.3], randomize=False)
    assert (flat(a), flat(b)) == ([0, 1, 2, 3, 4, 5, 6], [7, 8, 9])
    a, b = ten().split([3, 7], randomize=False)
    assert (flat(a), flat(b)) == ([0, 1, 2], [3, 4, 5, 6, 7, 8, 9])
    ds.config.set_seed(1)
    a, b = ten().split([0.7, 0.3])
    assert sorted(flat(a) + flat(b)) == list(range(10)) and len(flat(a)) == 7
    with pytest.raises(ValueError, match="do not sum up to 1"):
        ten().split([0.5, 0.6])
    with pytest.raises(RuntimeError, match="Sum of split sizes 11 is not equal to dataset size 10."):
        ten().split([5, 6])
    with pytest.raises(ValueError, match="there should be no negative or zero numbers"):
        ten().split([0, 10])


def test_shuffle_buffer_is_a_seeded_permutation_per_epoch():
    ds.config.set_seed(1)
    d = ten().shuffle(4)
    out = flat(d, 2)
    assert sorted(out[:10]) == list(range(10)) and sorted(out[10:]) == list(range(10))
    ds.config.set_seed(1)
    assert flat(ten().shuffle(4), 2) == out
    assert d.is_shuffled()


def test_info_methods():
    d = ds.GeneratorDataset(lambda: ((np.zeros((2, 3), np.float32), np.array(1), np.array("s"), np.array(b"x"))
                                     for _ in range(4)), ["a", "b", "c", "d"])
    assert d.output_types() == [np.dtype("float32"), np.dtype("int64"), np.dtype("<U"), np.dtype("S")]
    assert d.batch(3).output_shapes() == [[3, 2, 3], [3], [3], [3]]
    assert ten().batch(4).get_batch_size() == 4 and ten().get_batch_size() == 1
    assert ten().repeat(3).get_repeat_count() == 3 and ten().get_repeat_count() == 1
    assert ten().get_class_indexing() == {} and ten().num_classes() is None
    assert len(ten().batch(3)) == 4


def test_concat_use_sampler_shards_the_joined_rows():
    a = ds.NumpySlicesDataset([0, 1, 2, 3, 4], shuffle=False)
    b = ds.NumpySlicesDataset([10, 11, 12], shuffle=False)
    shards = []
    for s in range(2):
        c = a + b
        assert c.use_sampler(ds.DistributedSampler(2, s, shuffle=False)) is None
        shards.append(flat(c))
        assert c.get_dataset_size() == 4 and c.is_sharded()
    assert shards == [[0, 2, 4, 11], [1, 3, 10, 12]]  # [0, 2, 4, 11] is MindSpore's shard 0
    with pytest.raises(ValueError, match="The parameter shuffle of DistributedSampler must be False!"):
        (a + b).use_sampler(ds.DistributedSampler(2, 0, shuffle=True))


def test_use_sampler_changes_the_dataset_in_place():
    d = ds.NumpySlicesDataset(list(range(6)), shuffle=False)
    assert d.use_sampler(ds.SubsetSampler([4, 1])) is None
    assert flat(d) == [4, 1]
    d.add_sampler(ds.SequentialSampler(num_samples=1))
    assert flat(d) == [4]
