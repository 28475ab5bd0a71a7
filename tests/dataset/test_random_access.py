"""``dataset[i]`` on GeneratorDataset and NumpySlicesDataset (MindSpore 2.x random access): the
source's own value for the i-th row of a first pass, with the sampler, shuffle, shards and
num_samples applied; other datasets are not subscriptable."""
import numpy as np
import pytest

import headrace.dataset as ds


class Rows:
    def __init__(self, n=5):
        self.n = n
        self.calls = []

    def __getitem__(self, i):
        self.calls.append(i)
        return np.array([i]), np.array([i * 10])

    def __len__(self):
        return self.n


@pytest.fixture
def seed():
    old = ds.config.get_seed()
    yield
    ds.config.set_seed(old)


def _first_col(d):
    return [int(r[0][0]) for r in d.create_tuple_iterator(num_epochs=1, output_numpy=True)]


def test_returns_the_source_value_untouched():
    src = Rows()
    d = ds.GeneratorDataset(src, ["a", "b"], shuffle=False)
    row = d[3]
    assert type(row) is tuple
    assert [type(v) for v in row] == [np.ndarray, np.ndarray]
    assert [v.tolist() for v in row] == [[3], [30]]
    assert src.calls == [3]
    assert ds.GeneratorDataset([7, 8, 9], ["a"], shuffle=False)[1] == 8
    assert ds.GeneratorDataset([[1, 2], [3, 4]], ["a", "b"], shuffle=False)[1] == [3, 4]
    assert ds.GeneratorDataset(Rows(), ["a", "b"], shuffle=False)[np.int64(2)][1].tolist() == [20]


def test_dict_row_comes_back_as_the_dict():
    class D:
        def __getitem__(self, i):
            return {"k": i}

        def __len__(self):
            return 3

    assert ds.GeneratorDataset(D(), ["a"], shuffle=False)[2] == {"k": 2}


@pytest.mark.parametrize("kwargs,expected", [
    ({"sampler": ds.SequentialSampler(start_index=1)}, [1, 2, 3, 4]),
    ({"sampler": ds.SubsetSampler([3, 1, 2])}, [3, 1, 2]),
    ({"sampler": [4, 1]}, [4, 1]),
    ({"num_shards": 2, "shard_id": 1, "shuffle": False}, [1, 3, 0]),  # shards are padded to one size
    ({"shuffle": False, "num_samples": 3}, [0, 1, 2]),
])
def test_sampler_picks_the_source_index(kwargs, expected):
    d = ds.GeneratorDataset(Rows(), ["a", "b"], **kwargs)
    assert [int(d[i][0][0]) for i in range(len(expected))] == expected
    with pytest.raises(RuntimeError, match=r"Index \[%d\] exceeded the number of data samples\." % len(expected)):
        d[len(expected)]


@pytest.mark.parametrize("kwargs", [
    {"shuffle": True},
    {"shuffle": True, "num_shards": 3, "shard_id": 0},
    {"shuffle": True, "num_samples": 4},
    {"sampler": ds.WeightedRandomSampler([0.9, 0.01, 0.4, 0.8, 0.1], 4)},
    {"sampler": ds.SubsetRandomSampler([3, 1, 2, 0])},
])
def test_random_orders_match_the_first_epoch(seed, kwargs):
    ds.config.set_seed(200)
    d = ds.GeneratorDataset(Rows(), ["a", "b"], **kwargs)
    first = _first_col(d)
    assert [int(d[i][0][0]) for i in range(len(first))] == first


def test_shuffle_order_is_mindspores_and_kept_after_reseeding(seed):
    ds.config.set_seed(5)
    d = ds.GeneratorDataset(Rows(), ["a", "b"], shuffle=True)
    assert [int(d[i][0][0]) for i in range(5)] == [3, 4, 0, 1, 2]  # MindSpore 2.10's order
    ds.config.set_seed(6)
    assert [int(d[i][0][0]) for i in range(5)] == [3, 4, 0, 1, 2]  # drawn once, as in MindSpore
    d.use_sampler(ds.SequentialSampler(2))
    assert [int(d[i][0][0]) for i in range(3)] == [2, 3, 4]  # a new sampler is followed


def test_numpy_slices_returns_the_column_elements(seed):
    d = ds.NumpySlicesDataset({"a": [1, 2, 3], "b": [4.0, 5.0, 6.0]}, shuffle=False)
    row = d[1]
    assert row == (2, 5.0) and [type(v) for v in row] == [int, float]
    arr = ds.NumpySlicesDataset(np.arange(6).reshape(3, 2), shuffle=False)[2]
    assert type(arr) is tuple and arr[0].tolist() == [4, 5]
    ds.config.set_seed(7)
    d = ds.NumpySlicesDataset([10, 11, 12, 13], ["x"], shuffle=True)
    assert [d[i][0] for i in range(4)] == _first_col_plain(d)
    with pytest.raises(RuntimeError, match=r"NumpySlicesDataset: Index \[4\] exceeded the number of data samples\."):
        d[4]


def _first_col_plain(d):
    return [int(r[0]) for r in d.create_tuple_iterator(num_epochs=1, output_numpy=True)]


def test_errors():
    d = ds.GeneratorDataset(Rows(), ["a", "b"], shuffle=False)
    with pytest.raises(TypeError, match=r"^Argument index with value x is not of type \[<class 'int'>, "
                                        r"<class 'numpy.number'>\], but got <class 'str'>\.$"):
        d["x"]
    with pytest.raises(TypeError, match="Argument index with value True is not of type"):
        d[True]
    with pytest.raises(TypeError, match=r"Argument index with value slice\(1, 2, None\)"):
        d[1:2]
    with pytest.raises(TypeError, match="Argument index with value 1.0 is not an integer"):
        d[np.float64(1.0)]
    with pytest.raises(RuntimeError, match=r"^GeneratorDataset: Index \[-1\] exceeded the number of data samples\.$"):
        d[-1]
    with pytest.raises(RuntimeError, match=r"Index \[5\] exceeded"):
        d[5]

    def gen():
        yield (np.array(1),)

    with pytest.raises(RuntimeError, match=r"^Dataset don't support randomized access\.$"):
        ds.GeneratorDataset(gen, ["a"])[0]

    class BatchSampler:
        def __iter__(self):
            return iter([[0, 1], [2, 3]])

    with pytest.raises(RuntimeError, match="^GeneratorDataset with batch_sampler does not support random access.$"):
        ds.GeneratorDataset(Rows(), ["a", "b"], batch_sampler=BatchSampler())[0]


@pytest.mark.parametrize("make", [
    lambda d: d.map(lambda x: x, input_columns=["a"]),
    lambda d: d.batch(2),
    lambda d: d.shuffle(2),
    lambda d: d.repeat(2),
    lambda d: d.take(2),
    lambda d: d.project(["a"]),
])
def test_other_datasets_are_not_subscriptable(make):
    d = make(ds.GeneratorDataset(Rows(), ["a", "b"], shuffle=False))
    with pytest.raises(TypeError, match=f"'{type(d).__name__}' object is not subscriptable"):
        d[0]


def test_two_level_pipeline():
    """A source that reads another GeneratorDataset by index (MindSpore's own test case)."""
    class Inner:
        def __init__(self):
            self.d = ds.GeneratorDataset(np.array([1, 2, 3, 4]), ["c"], shuffle=False)

        def __getitem__(self, i):
            return self.d[i]

        def __len__(self):
            return self.d.get_dataset_size()

    d = ds.GeneratorDataset(Inner(), ["c"], shuffle=False)
    assert [int(r[0]) for r in d.create_tuple_iterator(num_epochs=1, output_numpy=True)] == [1, 2, 3, 4]
    assert [int(d[i]) for i in range(4)] == [1, 2, 3, 4]


def test_source_with_getitem_but_no_len_is_refused_when_read():
    class NoLen:
        def __getitem__(self, i):
            if i >= 3:
                raise IndexError(i)
            return (np.array([i]),)

    d = ds.GeneratorDataset(NoLen(), ["a"], shuffle=False)  # building works, as in MindSpore
    message = r"^Attempt to construct a random access dataset, '__len__' method is required!$"
    with pytest.raises(RuntimeError, match=message):
        d.get_dataset_size()
    with pytest.raises(RuntimeError, match=message):
        list(d.create_tuple_iterator(output_numpy=True))
    with pytest.raises(RuntimeError, match=message):
        d[0]
