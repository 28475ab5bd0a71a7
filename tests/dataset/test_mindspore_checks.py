"""MindSpore's argument checks, error texts and source behaviours (issue 14, items 4, 6, 7, 9).

Expected texts and values are MindSpore 2.10's (``tests/compat/test_mindspore_checks_compat.py``
compares the same cases with the oracle live).
"""
import os

import numpy as np
import pytest

import headrace.common.dtype as mstype
import headrace.dataset as ds
import headrace.dataset.transforms as T
from headrace._engine.samplers import ChainedPlan, RandomPlan, SequentialPlan
from headrace._util.errors import EarlyTypeError, EarlyValueError
from tests.helpers import Indexed


class RA:
    """A random-access source (``__getitem__`` and ``__len__``)."""

    def __init__(self, data):
        self.data = list(data)

    def __getitem__(self, i):
        return self.data[i]

    def __len__(self):
        return len(self.data)


class TwoBatches:
    def __iter__(self):
        return iter([[0, 1], [2, 3]])

    def __len__(self):
        return 2


def rows(d, epochs=1):
    it = d.create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    out = [[[np.asarray(v).tolist() for v in r] for r in it] for _ in range(epochs)]
    return out[0] if epochs == 1 else out


def first_error(d):
    with pytest.raises(RuntimeError) as e:
        rows(d)
    return str(e.value)


# ------------------------------------------------------------------------------ GeneratorDataset values

@pytest.mark.parametrize("value", [np.array([{1}]), {1}, np.array([1, None])])
def test_a_value_without_a_numpy_type_is_refused_with_mindspore_text(value):
    msg = first_error(ds.GeneratorDataset(lambda: iter([(value,)]), ["data"]))
    assert ("Data type of 1th item of the input or its converted Numpy array is expected to be int or float or "
            "str, but got object.") in msg
    assert "GeneratorDataset failed at sample index: 0" in msg


def test_a_bare_object_array_names_the_input():
    src = RA([np.array([[i, None]]) for i in range(3)])
    msg = first_error(ds.GeneratorDataset(src, ["data"], shuffle=False))
    assert "Data type of the input or its converted Numpy array is expected to be int or float or str, but got " \
           "object." in msg


def test_column_types_none_leaves_its_column_as_returned():
    d = ds.GeneratorDataset(lambda: ((np.array([i], np.int64), np.array([i], np.int64)) for i in range(2)),
                            ["a", "b"], column_types=[None, mstype.int32])
    out = list(d.create_tuple_iterator(output_numpy=True))
    assert [(r[0].dtype, r[1].dtype) for r in out] == [(np.int64, np.int32)] * 2
    assert [r[1].tolist() for r in out] == [[0], [1]]


# ------------------------------------------------------------------------------ batch_sampler, collate_fn

@pytest.mark.parametrize("kwargs", [{"num_samples": 1}, {"shuffle": True}, {"num_shards": 8, "shard_id": 0},
                                    {"shard_id": 0}, {"sampler": ds.RandomSampler()}])
def test_batch_sampler_is_exclusive_with_the_sampling_arguments(kwargs):
    with pytest.raises(ValueError) as e:
        ds.GeneratorDataset(RA(range(4)), ["data"], batch_sampler=TwoBatches(), **kwargs)
    assert str(e.value) == ("batch_sampler is mutually exclusive with num_samples, shuffle, num_shards, shard_id and "
                            "sampler.")


def test_batch_sampler_and_collate_fn_checks():
    with pytest.raises(TypeError) as e:
        ds.GeneratorDataset(RA(range(4)), ["data"], batch_sampler=1)
    assert str(e.value) == "batch_sampler should have __getitem__ or __iter__ method."
    with pytest.raises(ValueError) as e:
        ds.GeneratorDataset(RA(range(4)), ["data"], collate_fn=lambda b: b)
    assert str(e.value) == "collate_fn can be specified only when batch_sampler is set."
    with pytest.raises(ValueError, match="batch_sampler is not supported if source does not have attribute "
                                         "'__getitem__'"):
        ds.GeneratorDataset(lambda: iter([(1,)]), ["data"], batch_sampler=TwoBatches())


def test_batch_sampler_index_lists_are_checked_when_read():
    msg = first_error(ds.GeneratorDataset(RA(range(4)), ["data"], batch_sampler=[1, 2, 3]))
    assert "Batch sampler should return a list, but got an integer." in msg
    msg = first_error(ds.GeneratorDataset(RA(range(4)), ["data"], batch_sampler=[["1"], ["2"]]))
    assert "Python sampler should return index of type integer, but got: string" in msg


def test_batch_sampler_batch_size_is_minus_one():
    d = ds.GeneratorDataset(RA(np.arange(4)), ["data"], batch_sampler=TwoBatches())
    assert d.get_batch_size() == -1
    assert d.output_shapes() == [[2]]
    assert rows(d) == [[[0, 1]], [[2, 3]]]
    assert ds.GeneratorDataset(RA(np.arange(4)), ["data"]).get_batch_size() == 1


# ------------------------------------------------------------------------------ max_rowsize

@pytest.mark.parametrize("value, exc, text", [
    ((12, 20), TypeError, "Argument max_rowsize with value (12, 20) is not of type [<class 'int'>, <class 'list'>], "
                          "but got <class 'tuple'>."),
    ("16", TypeError, "Argument max_rowsize with value 16 is not of type [<class 'int'>, <class 'list'>], but got "
                      "<class 'str'>."),
    (20.5, TypeError, "is not of type [<class 'int'>, <class 'list'>], but got <class 'float'>."),
    (-8, ValueError, "Input max_rowsize is not within the required interval of [-1, 2147483647]."),
    ([12.4, 20], TypeError, "Argument max_rowsize[0] with value 12.4 is not of type [<class 'int'>], but got "
                            "<class 'float'>."),
    ([-2, 16], ValueError, "Input max_rowsize[0] is not within the required interval of [-1, 2147483647]."),
    ([16, -2], ValueError, "Input max_rowsize[1] is not within the required interval of [-1, 2147483647]."),
    ([1, 2, 3], TypeError, "max_rowsize should be a single integer or a list[in_rowsize, out_rowsize] of length 2."),
    (True, TypeError, "Argument max_rowsize with value True is not of type (<class 'int'>, <class 'list'>)"),
])
@pytest.mark.parametrize("where", ["map", "batch"])
def test_max_rowsize_of_map_and_batch(value, exc, text, where):
    d = ds.NumpySlicesDataset([1, 2])
    with pytest.raises(exc) as e:
        if where == "map":
            d.map(lambda x: x, python_multiprocessing=True, max_rowsize=value)
        else:
            d.batch(2, per_batch_map=lambda x, y: (x,), python_multiprocessing=True, max_rowsize=value)
    assert text in str(e.value)


def test_max_rowsize_of_generator_dataset():
    for ok in (None, -1, 0, 64):
        ds.GeneratorDataset(RA([1, 2]), ["data"], max_rowsize=ok)
    ds.NumpySlicesDataset([1, 2]).map(lambda x: x, max_rowsize=[-1, -1])
    with pytest.raises(ValueError) as e:
        ds.GeneratorDataset(RA([1, 2]), ["data"], num_parallel_workers=2, max_rowsize=-2)
    assert str(e.value) == "Input max_rowsize is not within the required interval of [-1, 2147483647]."
    with pytest.raises(TypeError) as e:
        ds.GeneratorDataset(RA([1, 2]), ["data"], max_rowsize=[1, 2])
    assert str(e.value) == ("Argument max_rowsize with value [1, 2] is not of type [<class 'int'>], but got "
                            "<class 'list'>.")


# ------------------------------------------------------------------------------ batch arguments

def test_batch_size_true_is_one_and_minus_one_fails_when_run():
    src = ds.NumpySlicesDataset(list(range(3)), ["x"], shuffle=False)
    assert rows(src.batch(True)) == [[[0]], [[1]], [[2]]] and src.batch(True).get_batch_size() == 1
    d = src.batch(-1)
    with pytest.raises(RuntimeError) as e:
        rows(d)
    assert str(e.value) == "Batch size cannot be -1 without using batch sampler."
    for bad in (-2, 0):
        with pytest.raises(ValueError, match=r"Input batch_size is not within the required interval of \[1, "):
            src.batch(bad)
    with pytest.raises(ValueError, match=r"Input batch_size is not within the required interval of \[1, "):
        src.padded_batch(-1)
    with pytest.raises(TypeError, match="batch_size should either be an int or a callable."):
        src.batch(np.int64(2))


def test_batch_drop_remainder_and_columns_texts():
    src = ds.NumpySlicesDataset(list(range(4)), ["x"], shuffle=False)
    with pytest.raises(TypeError) as e:
        src.batch(True, 1)
    assert str(e.value) == ("Argument drop_remainder with value 1 is not of type [<class 'bool'>], but got "
                            "<class 'int'>.")
    with pytest.raises(ValueError) as e:
        src.batch(2, input_columns=["x"])
    assert str(e.value) == "input_columns can be specified only when per_batch_map is set."
    assert rows(src.batch(2, output_columns=["y"])) == [[[0, 1]], [[2, 3]]]  # ignored without per_batch_map


# ------------------------------------------------------------------------------ columns, slices, map, PadEnd

def test_empty_column_name_and_empty_data_texts():
    with pytest.raises(ValueError) as e:
        ds.NumpySlicesDataset([1, 2], column_names=[""])
    assert str(e.value) == "column_names[0] should not be empty."
    for data in ([], {}, (), np.array([])):
        with pytest.raises(ValueError) as e:
            ds.NumpySlicesDataset(data)
        assert str(e.value) == "Argument data cannot be empty"


def test_map_column_count_text():
    src = ds.NumpySlicesDataset({"a": [1, 2], "b": [3, 4]}, shuffle=False)
    msg = first_error(src.map(lambda x: (x, x * 5), input_columns=["a"]))
    assert ("Invalid columns, the number of columns returned in 'map' operations should match the number of "
            "'output_columns', but got the number of columns returned in 'map' operations: 2, the number of "
            "'output_columns': 1.") in msg
    with pytest.raises(RuntimeError, match="the number of columns returned in 'map' operations: 1, the number of "
                                           "'output_columns': 2"):
        src.map(lambda x: x, input_columns=["a"], output_columns=["c", "d"]).output_shapes()


def test_pad_end_returns_a_scalar_unpadded():
    for x in (np.array(5), np.array(5.0), np.array("a")):
        out = T.PadEnd([100], pad_value=0 if x.dtype.kind != "U" else "")(x)
        assert out.shape == () and out.tolist() == x.tolist() and out.dtype == x.dtype
    assert T.PadEnd([3], pad_value=0)(np.array([1, 2])).tolist() == [1, 2, 0]
    d = ds.NumpySlicesDataset([1, 2], ["x"], shuffle=False).map(T.PadEnd([4], pad_value=0))
    assert rows(d) == [[1], [2]]


# ------------------------------------------------------------------------------ names and small API

def test_transforms_vision_is_the_vision_package_and_reset_is_harmless():
    assert ds.transforms.vision is ds.vision
    assert ds.transforms.vision.Inter.LINEAR == ds.vision.Inter.LINEAR
    d = ds.NumpySlicesDataset([1, 2], ["x"], shuffle=False).batch(1)
    for _ in range(2):
        assert rows(d) == [[[1]], [[2]]]
        assert d.reset() is None


def test_early_errors_are_both_kinds():
    assert issubclass(EarlyValueError, ValueError) and issubclass(EarlyValueError, RuntimeError)
    assert issubclass(EarlyTypeError, TypeError) and issubclass(EarlyTypeError, RuntimeError)
    with pytest.raises(RuntimeError) as e:
        ds.DistributedSampler(num_shards=4, shard_id=0, shuffle=False, offset=5).parse()
    assert type(e.value) is EarlyValueError
    assert str(e.value) == "DistributedSampler: offset must be no more than num_shards(4), but got: 5"


def test_a_parsed_sampler_takes_a_child_and_stays_unchanged():
    parent = ds.RandomSampler().parse()
    chained = parent.add_child(ds.SequentialSampler().parse())
    assert isinstance(chained, ChainedPlan) and chained.parent == RandomPlan() and chained.child == SequentialPlan()
    assert parent == RandomPlan()
    with pytest.raises(TypeError, match="add_child needs a sampler plan"):
        parent.add_child(ds.SequentialSampler())


# ------------------------------------------------------------------------------ samplers on generator sources

def test_an_object_with_getitem_and_len_is_a_sampler():
    data = list("abcdefghijkl")
    d = ds.NumpySlicesDataset(data, column_names=["data"], sampler=Indexed([3, 8, 7, 2, 0, 11, 11]))
    assert d.get_dataset_size() == 7
    it = d.create_tuple_iterator(num_epochs=2, output_numpy=True)
    for _ in range(2):
        assert [str(r[0]) for r in it] == ["d", "i", "h", "c", "a", "l", "l"]


class Ten(ds.Sampler):
    def __iter__(self):
        yield from range(10)


class TenWithLen:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        yield from range(10)

    def __len__(self):
        return self.n


@pytest.mark.parametrize("make", [lambda: Ten(15), lambda: TenWithLen(15)])
def test_a_user_sampler_short_of_its_count_fails_on_generator_sources(make):
    for d in (ds.GeneratorDataset(RA([(str(i),) for i in range(20)]), ["data"], sampler=make()),
              ds.NumpySlicesDataset([str(i) for i in range(20)], ["data"], sampler=make())):
        assert d.get_dataset_size() == 15
        msg = first_error(d)
        assert ("The actual amount of data read from generator 10 is different from generator.len 15, you should "
                "adjust generator.len to make them match.") in msg


def test_a_user_sampler_within_its_count_reads_it():
    d = ds.GeneratorDataset(RA([(str(i),) for i in range(20)]), ["data"], sampler=Ten(5))
    assert [str(r[0]) for r in d.create_tuple_iterator(output_numpy=True)] == ["0", "1", "2", "3", "4"]
    d = ds.NumpySlicesDataset([str(i) for i in range(20)], ["data"], sampler=TenWithLen(10))
    assert len(rows(d)) == 10


# ------------------------------------------------------------------------------ one-shot sources

def test_a_generator_object_is_replayed_every_pass():
    def gen(a, b):
        yield from range(a, b)

    d = ds.GeneratorDataset(gen(3, 6), ["data"])
    assert d.get_dataset_size() == 3 and d.output_shapes() == [[]] and d.output_types() == [np.int64]
    for _ in range(3):
        assert rows(d) == [[3], [4], [5]]
    assert rows(d, epochs=3) == [[[3], [4], [5]]] * 3


def test_a_zip_source_is_read_by_index_and_shuffled():
    features = np.arange(20, dtype=np.float32).reshape(10, 2)
    labels = np.arange(10, dtype=np.float32).reshape(10, 1)
    d = ds.GeneratorDataset(zip(features, labels), ["features", "labels"], shuffle=True).batch(2)
    assert d.get_dataset_size() == 5
    it = d.create_dict_iterator(num_epochs=10, output_numpy=True)
    assert sum(1 for _ in range(10) for _ in it) == 50
    ds.config.set_seed(1)
    got = [int(r[1][0]) for r in ds.GeneratorDataset(zip(features, labels), ["f", "l"]).create_tuple_iterator(
        output_numpy=True)]
    assert sorted(got) == list(range(10)) and got != list(range(10))
    assert got == [9, 0, 2, 5, 7, 4, 6, 3, 1, 8]


# ------------------------------------------------------------------------------ split of streamed datasets

def _gen20():
    for i in range(20):
        yield (np.array(i),)


def test_split_of_a_stream_is_a_fixed_buffer_shuffle_then_parts():
    ds.config.set_seed(5)
    d = ds.GeneratorDataset(_gen20, ["data"], shuffle=False)
    train, val = d.split([0.8, 0.2])
    assert (train.get_dataset_size(), val.get_dataset_size()) == (16, 4)
    want = [2, 1, 19, 13, 4, 17, 18, 15, 0, 5, 6, 14, 10, 11, 7, 3]
    assert [[r[0] for r in e] for e in rows(train, epochs=2)] == [want, want]
    assert [r[0] for r in rows(val)] == [16, 8, 12, 9]
    train, val = d.split([15, 5])
    assert [r[0] for r in rows(val)] == [3, 16, 8, 12, 9]
    a, b = d.split([0.8, 0.2], randomize=False)
    assert [r[0] for r in rows(b)] == [16, 17, 18, 19]


def test_split_sizes_of_a_yielding_source_and_an_iterable_with_len():
    train, val = ds.GeneratorDataset(lambda: ((np.array(i),) for i in range(64)), ["data"]).split([0.8, 0.2])
    assert (train.get_dataset_size(), val.get_dataset_size()) == (51, 13)

    class Ten:
        def __init__(self):
            self.n = 0

        def __iter__(self):
            self.n = 0
            return self

        def __next__(self):
            if self.n >= 10:
                raise StopIteration
            self.n += 1
            return (np.array(self.n),)

        def __len__(self):
            return 10

    train, val = ds.GeneratorDataset(Ten(), ["data"], shuffle=False).split([0.8, 0.2])
    assert (train.get_dataset_size(), val.get_dataset_size()) == (8, 2)


def test_reshuffle_each_epoch_false_repeats_the_order():
    ds.config.set_seed(3)
    d = ds.NumpySlicesDataset(list(range(30)), ["x"], shuffle=False).shuffle(4)
    moving = rows(d, epochs=2)
    assert moving[0] != moving[1]
    d.reshuffle_each_epoch = False
    fixed = rows(d, epochs=3)
    assert fixed[0] == fixed[1] == fixed[2] == moving[0]


# ------------------------------------------------------------------------------ class_indexing={}

def test_empty_class_indexing_reads_every_class(tmp_path):
    from PIL import Image
    for k, name in enumerate(["b", "a"]):
        os.makedirs(tmp_path / name)
        for j in range(k + 1):
            Image.new("RGB", (2, 2)).save(tmp_path / name / f"{j}.jpg")
    d = ds.ImageFolderDataset(str(tmp_path), shuffle=False, class_indexing={})
    assert d.get_class_indexing() == {"a": 0, "b": 1}
    assert [int(r["label"]) for r in d.create_dict_iterator(output_numpy=True)] == [0, 0, 1]
