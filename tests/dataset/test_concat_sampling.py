"""ConcatDataset: column/type checks, use_sampler(DistributedSampler / RandomSampler) over nested
concats, streams and shuffled children, PaddedDataset padding. Expected rows are MindSpore 2.10's
(tests/compat/test_concat_compat.py checks them against the oracle)."""
import numpy as np
import pytest

import headrace.dataset as ds
from tests.sources.makers import write_tfrecord


class R:
    def __init__(self, a, b):
        self.d = list(range(a, b))

    def __getitem__(self, i):
        return (np.array(self.d[i]),)

    def __len__(self):
        return len(self.d)


def M(a, b, **kw):
    return ds.GeneratorDataset(R(a, b), ["c"], shuffle=kw.pop("shuffle", False), **kw)


def G(a, b, name="c", dtype=np.int64, shape=()):
    return ds.GeneratorDataset(lambda: (np.full(shape, i, dtype) for i in range(a, b)), [name])


def P(*values):
    return ds.PaddedDataset([{"c": np.array(v)} for v in values])


def shards(make, n, epochs=1):
    out = []
    for k in range(n):
        d = make()
        assert d.use_sampler(ds.DistributedSampler(n, k, shuffle=False)) is None
        it = d.create_tuple_iterator(num_epochs=epochs, output_numpy=True)
        rows = [[r[0].item() for r in it] for _ in range(epochs)]
        out.append((rows[0] if epochs == 1 else rows, d.get_dataset_size()))
    return out


@pytest.mark.parametrize("make, n, expected", [
    (lambda: G(0, 3) + G(10, 17), 3, [([0, 10, 13, 16], 4), ([1, 11, 14], 3), ([2, 12, 15], 3)]),
    (lambda: M(0, 3) + M(10, 17), 3, [([0, 10, 13, 16], 4), ([1, 11, 14], 3), ([2, 12, 15], 3)]),
    (lambda: M(0, 7) + P(-1, -2), 3, [([0, 3, 6], 3), ([1, 4, -1], 3), ([2, 5, -2], 3)]),
    # the child's own shuffle is dropped: MindSpore replaces the sampler of a child read by index
    (lambda: M(0, 7, shuffle=True) + P(-1, -2), 3, [([0, 3, 6], 3), ([1, 4, -1], 3), ([2, 5, -2], 3)]),
    (lambda: (G(0, 3) + G(10, 17)) + (M(20, 30) + G(30, 39)), 3,
     [([0, 10, 13, 16, 22, 25, 28, 31, 34, 37], 10), ([1, 11, 14, 20, 23, 26, 29, 32, 35, 38], 10),
      ([2, 12, 15, 21, 24, 27, 30, 33, 36], 9)]),
    (lambda: (M(0, 5) + M(10, 14)) + P(-1, -2), 4, [([0, 4, 13], 3), ([1, 10, -1], 3), ([2, 11, -2], 3), ([3, 12], 2)]),
    (lambda: G(0, 3).concat([M(10, 14), G(20, 25)]), 3, [([0, 10, 13, 22], 4), ([1, 11, 20, 23], 4), ([2, 12, 21, 24], 4)]),
    (lambda: M(0, 4).map(lambda x: x + 100) + M(10, 15), 3, [([100, 103, 12], 3), ([101, 10, 13], 3), ([102, 11, 14], 3)]),
    (lambda: M(0, 2) + M(10, 11), 4, [([0], 1), ([1], 1), ([10], 1), ([], 0)]),
    (lambda: M(0, 5) + M(10, 11) + G(20, 24), 4, [([0, 4, 22], 3), ([1, 10, 23], 3), ([2, 20], 2), ([3, 21], 2)]),
])
def test_distributed_sampler_shards_positions_of_the_whole_concat(make, n, expected):
    assert shards(make, n) == expected


def test_every_epoch_is_sharded_as_the_first():
    # MindSpore's counter runs on into epoch 2 here (a difference on purpose, see _concat_sampling.py)
    assert shards(lambda: G(0, 3) + G(10, 17), 3, epochs=2) == [
        ([[0, 10, 13, 16]] * 2, 4), ([[1, 11, 14]] * 2, 3), ([[2, 12, 15]] * 2, 3)]


def test_generator_before_padding_counts_its_rows():
    # MindSpore gives 4, 3, 2 rows here (it counts the plain generator as 0 rows when placing the pad)
    assert shards(lambda: G(0, 7) + P(-1, -2), 3) == [([0, 3, 6], 3), ([1, 4, -1], 3), ([2, 5, -2], 3)]


def test_index_read_children_are_read_only_at_their_shard():
    reads = []

    class Counting(R):
        def __getitem__(self, i):
            reads.append(i)
            return super().__getitem__(i)

    d = ds.GeneratorDataset(Counting(0, 9), ["c"], shuffle=False) + P(-1)
    d.use_sampler(ds.DistributedSampler(5, 3, shuffle=False))
    assert [r[0].item() for r in d.create_tuple_iterator(num_epochs=1, output_numpy=True)] == [3, 8]
    assert sorted(reads) == [3, 8]


def test_bert_eval_padding_of_a_shuffled_tfrecord(tmp_path):
    path = str(tmp_path / "v.tfrecord")
    write_tfrecord(path, [{"v": ("int64", [i])} for i in range(10)])
    got = []
    for k in range(4):
        t = ds.TFRecordDataset(path, shuffle=False)
        d = t + ds.PaddedDataset([{"v": np.array([-1], np.int64)}] * (4 - t.get_dataset_size() % 4))
        d.use_sampler(ds.DistributedSampler(4, k, shuffle=False))
        got.append(([r[0].tolist() for r in d.create_tuple_iterator(num_epochs=1, output_numpy=True)],
                    d.get_dataset_size()))
    assert got == [([[0], [4], [8]], 3), ([[1], [5], [9]], 3), ([[2], [6], [-1]], 3), ([[3], [7], [-1]], 3)]
    ds.config.set_seed(5)
    rows = []
    for k in range(4):
        t = ds.TFRecordDataset(path, shuffle=True)
        d = t + ds.PaddedDataset([{"v": np.array([-1], np.int64)}] * 2)
        d.use_sampler(ds.DistributedSampler(4, k, shuffle=False))
        part = [r[0].item() for r in d.create_tuple_iterator(num_epochs=1, output_numpy=True)]
        assert len(part) == 3 == d.get_dataset_size()
        rows += part
    assert sorted(rows) == [-1, -1] + list(range(10)) and d.is_sharded()


def test_random_sampler_interleaves_children_in_their_own_order():
    def build():
        d = M(0, 5) + (M(10, 13) + G(20, 22))
        assert d.use_sampler(ds.RandomSampler()) is None
        return d
    ds.config.set_seed(3)
    d = build()
    it = d.create_tuple_iterator(num_epochs=2, output_numpy=True)
    epochs = [[r[0].item() for r in it] for _ in range(2)]
    assert d.get_dataset_size() == 10 and d.is_shuffled() and not d.is_sharded()
    for rows in epochs:
        assert sorted(rows) == [0, 1, 2, 3, 4, 10, 11, 12, 20, 21]
        for lo, hi in ((0, 5), (10, 13), (20, 22)):
            assert [v for v in rows if lo <= v < hi] == list(range(lo, hi))
    assert epochs[0] != epochs[1]
    assert epochs[0] != [0, 1, 2, 3, 4, 10, 11, 12, 20, 21]
    ds.config.set_seed(3)
    again = build().create_tuple_iterator(num_epochs=2, output_numpy=True)
    assert [[r[0].item() for r in again] for _ in range(2)] == epochs
    # the nested concat got the sampler too, as in MindSpore
    assert isinstance(build().children[1].__dict__["_sampler"], ds.RandomSampler)


@pytest.mark.parametrize("sampler, exc, msg", [
    (ds.SequentialSampler(), TypeError, "of concat must be DistributedSampler or RandomSampler!"),
    (None, TypeError, "The parameter None of concat must be DistributedSampler or RandomSampler!"),
    (ds.RandomSampler(replacement=True), ValueError, "The parameter replacement of RandomSampler must be False!"),
    (ds.RandomSampler(num_samples=3), ValueError, "The parameter num_samples of RandomSampler is not support to be set!"),
    (ds.DistributedSampler(2, 0), ValueError, "The parameter shuffle of DistributedSampler must be False!"),
    (ds.DistributedSampler(2, 0, shuffle=False, num_samples=2), ValueError,
     "The parameter num_samples of DistributedSampler is not support to be set!"),
])
def test_use_sampler_rejects(sampler, exc, msg):
    with pytest.raises(exc, match=msg.replace("(", r"\(").replace(")", r"\)")):
        (M(0, 4) + M(10, 13)).use_sampler(sampler)


def test_use_sampler_rejects_children():
    with pytest.raises(TypeError, match="of concat must not be BatchDataset or PaddedBatchDataset!"):
        (M(0, 4).batch(2) + M(10, 13).batch(2)).use_sampler(ds.DistributedSampler(2, 0, shuffle=False))
    with pytest.raises(ValueError, match="The parameter NumSamples of .* is not support to be set!"):
        (M(0, 4, num_samples=3) + M(10, 13)).use_sampler(ds.DistributedSampler(2, 0, shuffle=False))


def test_mismatched_columns_fail_when_read_but_size_is_known():
    d = G(0, 2, "a") + G(3, 5, "b")
    assert d.get_dataset_size() == 4
    for action in (d.get_col_names, lambda: list(d)):
        with pytest.raises(RuntimeError, match="'column name' or 'column order' of concat datasets should be the "
                                               r"same. Got \['a'\] and \['b'\]"):
            action()


@pytest.mark.parametrize("second, msg", [
    (G(3, 5, dtype=np.float32), "the data types of the two datasets to be concatenated should be the same, "
                                "but got: int64 and float32"),
    (G(3, 5, shape=(1, 1)), "the data tensor rank of the two datasets to be concatenated should be the same, "
                            "but got: 0 and 2"),
])
def test_mismatched_types_fail_when_read(second, msg):
    d = G(0, 2) + second
    with pytest.raises(RuntimeError, match=msg):
        list(d)


def test_shapes_may_differ():
    d = G(0, 2, shape=(1,)) + G(3, 5, shape=(2,))
    assert [r[0].tolist() for r in d.create_tuple_iterator(output_numpy=True)] == [[0], [1], [3, 3], [4, 4]]


def test_mappable_use_sampler_checks_its_argument():
    d = ds.NumpySlicesDataset([1, 2], shuffle=False)
    for bad, msg in ((1, "not an instance of a sampler"), ("sampler", "not an instance of a sampler"),
                     (None, "can not be None")):
        with pytest.raises(TypeError, match=msg):
            d.use_sampler(bad)
        with pytest.raises(TypeError, match=msg):
            d.add_sampler(bad)
