"""Dataset.split (issue 39, item 1): parts are disjoint and cover every row, for every kind of
source, with and without a seed, in every epoch; sizes, errors and the behaviour of samplers set
on a part are MindSpore's (the rows themselves are compared with MindSpore in
tests/compat/test_issue39_fidelity_compat.py)."""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import headrace.dataset as ds
from headrace.dataset._split import split_sizes
from headrace.mindrecord import FileWriter
from tests.sources.makers import write_tfrecord

ROWS = 23


class _Rows:
    def __getitem__(self, i):
        return (np.array(i, np.int64),)

    def __len__(self):
        return ROWS


def _gen():
    for i in range(ROWS):
        yield (np.array(i, np.int64),)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("split_files")
    # two files, so that a shuffled file source also reorders its files
    for k, (lo, hi) in enumerate(((0, 9), (9, ROWS))):
        (root / f"l{k}.txt").write_text("".join(f"{i}\n" for i in range(lo, hi)))
        (root / f"c{k}.csv").write_text("".join(f"{i}\n" for i in range(lo, hi)))
        write_tfrecord(str(root / f"t{k}.tfrecord"), [{"v": ("int64", [i])} for i in range(lo, hi)])
    writer = FileWriter(str(root / "rows.mindrecord"), 1)
    writer.add_schema({"x": {"type": "int64"}}, "rows")
    writer.write_raw_data([{"x": i} for i in range(ROWS)])
    writer.commit()
    return root


def _source(kind, files, shuffle):
    if kind == "numpy":
        return ds.NumpySlicesDataset(list(range(ROWS)), column_names=["x"], shuffle=shuffle)
    if kind == "random_access":
        return ds.GeneratorDataset(_Rows(), ["x"], shuffle=shuffle)
    if kind == "text":
        return ds.TextFileDataset(str(files / "l*.txt"), shuffle=shuffle)
    if kind == "csv":
        return ds.CSVDataset(str(files / "c*.csv"), column_names=["x"], shuffle=shuffle)
    if kind == "tfrecord":
        return ds.TFRecordDataset(str(files / "t*.tfrecord"), shuffle=shuffle)
    if kind == "mindrecord":
        return ds.MindDataset(str(files / "rows.mindrecord"), shuffle=shuffle)
    assert kind == "stream"
    return ds.GeneratorDataset(_gen, ["x"])


KINDS = ["numpy", "random_access", "text", "csv", "tfrecord", "mindrecord", "stream"]


def _epochs(d, epochs):
    it = d.create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    return [[int(str(np.asarray(r[0]).reshape(-1)[0])) for r in it] for _ in range(epochs)]


_sizes = st.one_of(
    st.lists(st.integers(1, 8), min_size=1, max_size=4).filter(lambda s: sum(s) < ROWS).map(
        lambda s: s + [ROWS - sum(s)]),
    st.sampled_from([[0.8, 0.2], [0.5, 0.5], [0.33, 0.33, 0.34], [0.1, 0.2, 0.7], [0.25, 0.25, 0.25, 0.25], [1.0]]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(KINDS), sizes=_sizes, randomize=st.booleans(), shuffle=st.booleans(),
       seed=st.one_of(st.none(), st.integers(0, 2**32 - 1)), after_shuffle=st.booleans())
def test_parts_are_disjoint_and_cover_every_row_in_every_epoch(files, kind, sizes, randomize, shuffle, seed,
                                                                after_shuffle):
    ds.config._reset()
    if seed is not None:
        ds.config.set_seed(seed)
    d = _source(kind, files, shuffle)
    if after_shuffle:
        ds.config.set_seed(seed if seed is not None else 7)  # an upstream buffer shuffle needs one seed
        d = d.shuffle(4)
    parts = d.split(sizes, randomize=randomize)
    expected = split_sizes(list(sizes), ROWS)
    assert [p.get_dataset_size() for p in parts] == expected
    rows = [_epochs(p, 2) for p in parts]
    upstream_random = after_shuffle
    for e in range(1 if upstream_random else 2):
        got = [r[e] for r in rows]
        assert [len(g) for g in got] == expected
        flat = [x for g in got for x in g]
        assert sorted(flat) == list(range(ROWS)), f"epoch {e}: {got}"
    if not upstream_random:
        # a part keeps its rows every epoch, in its order (a MindRecord part is reordered, as in MindSpore)
        if kind == "mindrecord":
            assert all(sorted(r[0]) == sorted(r[1]) for r in rows)
        else:
            assert all(r[0] == r[1] for r in rows)
    if not randomize and not shuffle and not after_shuffle:
        assert [x for r in rows for x in r[0]] == list(range(ROWS))


@pytest.mark.parametrize("kind", KINDS)
def test_without_a_seed_two_splits_differ_but_each_is_a_partition(files, kind):
    a = [x for p in _source(kind, files, False).split([0.5, 0.5]) for x in _epochs(p, 1)[0]]
    b = [x for p in _source(kind, files, False).split([0.5, 0.5]) for x in _epochs(p, 1)[0]]
    assert sorted(a) == sorted(b) == list(range(ROWS))
    assert a != b  # 23! orders: the seed drawn for each split differs


@pytest.mark.parametrize(("sizes", "total", "expected"), [
    # from MindSpore 2.10: the rounding difference goes to the first part, or to the largest when
    # the first would be left empty
    ([0.33, 0.33, 0.34], 10, [4, 3, 3]),
    ([0.15, 0.15, 0.7], 10, [1, 2, 7]),
    ([0.15, 0.15, 0.15, 0.55], 10, [2, 2, 2, 4]),
    ([0.15, 0.55, 0.15, 0.15], 10, [2, 4, 2, 2]),
    ([0.125] * 8, 20, [6, 2, 2, 2, 2, 2, 2, 2]),
    ([0.5, 0.5], 7, [3, 4]),
    ([0.5, 0.5], 9, [5, 4]),
    ([0.015] * 10 + [0.85], 100, [2] * 10 + [80]),
    ([3, 7], 10, [3, 7]),
])
def test_split_sizes_as_mindspore(sizes, total, expected):
    assert split_sizes(sizes, total) == expected


@pytest.mark.parametrize(("sizes", "error", "message"), [
    ([], ValueError, "sizes cannot be empty."),
    ([1, 0.5], ValueError, "sizes should be list of int or list of float."),
    (["a"], ValueError, "sizes should be list of int or list of float."),
    ((0.5, 0.5), TypeError, "Argument sizes with value (0.5, 0.5) is not of type [<class 'list'>], "
                            "but got <class 'tuple'>."),
    ([0, 10], ValueError, "sizes is a list of int, but there should be no negative or zero numbers."),
    ([11], RuntimeError, "Sum of split sizes 11 is not equal to dataset size 10."),
    ([0.0, 1.0], ValueError, "sizes is a list of float, but there should be no numbers outside the range (0, 1]."),
    ([0.5, 0.4], ValueError, "sizes is a list of float, but the percentages do not sum up to 1."),
    ([0.05, 0.95], RuntimeError, "Split percentage 0.05 is too small."),
])
def test_split_size_errors_as_mindspore(sizes, error, message):
    with pytest.raises(error) as e:
        ds.NumpySlicesDataset(list(range(10)), shuffle=False).split(sizes)
    assert str(e.value) == message


def test_split_sizes_that_no_part_can_absorb():
    with pytest.raises(RuntimeError, match=r"^Sum of calculated split sizes 8 is not equal to dataset size 6\.$"):
        split_sizes([0.25] * 4, 6)


@pytest.mark.parametrize("kind", ["numpy", "text", "tfrecord"])
def test_a_sharded_dataset_is_not_split(files, kind):
    d = _source(kind, files, False)
    d = ds.NumpySlicesDataset(list(range(10)), shuffle=False, num_shards=2, shard_id=0) if kind == "numpy" else \
        type(d)(d.dataset_files, shuffle=False, num_shards=2, shard_id=0)
    with pytest.raises(RuntimeError, match=r"^Dataset should not be sharded before split\.$"):
        d.split([0.5, 0.5])


def test_a_sampler_set_on_a_part_samples_the_parts_rows():
    ds.config.set_seed(5)
    train, test = ds.NumpySlicesDataset(list(range(10)), column_names=["x"], shuffle=False).split([0.8, 0.2])
    assert _epochs(train, 1)[0] == [3, 8, 5, 2, 4, 6, 7, 1]  # MindSpore 2.10's under seed 5
    shards = []
    for k in range(2):
        train.use_sampler(ds.DistributedSampler(2, k, shuffle=False))
        shards.append(_epochs(train, 1)[0])
    assert shards == [[3, 5, 4, 7], [8, 2, 6, 1]]
    assert _epochs(test, 1)[0] == [9, 0]


def test_a_split_of_a_split_deals_the_parts_rows():
    ds.config.set_seed(5)
    left, right = ds.NumpySlicesDataset(list(range(10)), column_names=["x"], shuffle=False).split([0.6, 0.4])
    inner = [_epochs(p, 1)[0] for p in left.split([0.5, 0.5])]
    assert sorted(x for p in inner for x in p) == sorted(_epochs(left, 1)[0])
    assert inner == [[2, 3, 6], [5, 4, 8]]  # MindSpore 2.10's under seed 5


def test_the_issue_example_text_file_parts_do_not_share_rows(files):
    train, test = ds.TextFileDataset(str(files / "l*.txt")).split([0.8, 0.2], randomize=True)
    a, b = _epochs(train, 1)[0], _epochs(test, 1)[0]
    assert (len(a), len(b)) == (18, 5)
    assert not set(a) & set(b)


@pytest.mark.parametrize("kind", ["numpy", "text", "mindrecord"])
def test_a_part_resumes_from_any_position(files, kind):
    from tests.helpers import assert_resume_equivalence  # noqa: PLC0415
    ds.config.set_seed(4)
    train, _ = _source(kind, files, True).split([0.7, 0.3])
    assert_resume_equivalence(train.batch(3), num_epochs=2)


@pytest.mark.parametrize("kind", ["text", "tfrecord", "mindrecord"])
def test_a_part_is_not_serialized_as_the_whole_dataset(files, kind):
    part = _source(kind, files, False).split([0.5, 0.5])[0]
    with pytest.raises(ValueError, match=r"is a part of Dataset\.split, whose rows cannot be written as JSON"):
        ds.serialize(part)


def test_a_split_of_a_shuffled_pipeline_without_a_seed_warns_that_parts_may_overlap():
    d = ds.NumpySlicesDataset(list(range(10)), column_names=["x"]).map(lambda x: x)
    with pytest.warns(UserWarning, match="the parts may share rows; call ds.config.set_seed"):
        d.split([0.5, 0.5])
    ds.config.set_seed(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parts = d.split([0.5, 0.5])  # under a seed every part draws the same order: no warning
    assert sorted(x for p in parts for x in _epochs(p, 1)[0]) == list(range(10))
