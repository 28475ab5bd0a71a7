import functools
import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import headrace.dataset as ds
from headrace._util.errors import PipelineError
from headrace.dataset._sources.generator import RowConverter, UserRandomAccess
from tests.helpers import Indexed, rows


class RandomAccess:
    def __init__(self, n=5):
        self.n = n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError("list index out of range")
        return np.array(i), np.array([i, i * 2], dtype=np.int32)

    def __len__(self):
        return self.n


def gen3():
    for i in range(3):
        yield np.array(i), np.array([i] * 2)


def test_generator_function_keeps_order_and_converts_python_values():
    def g():
        yield 1, 2.5, "ab", b"xy", [1, 2], True, np.float32(3)
    out = list(ds.GeneratorDataset(g, list("abcdefg")).create_tuple_iterator(output_numpy=True))
    (a, b, c, d, e, f, h), = out
    assert (a.dtype, a.shape, a.item()) == (np.int64, (), 1)
    assert (b.dtype, b.item()) == (np.float64, 2.5)
    assert (c.dtype.kind, c.item()) == ("U", "ab")
    assert (d.dtype.kind, d.item()) == ("S", b"xy")
    assert (e.dtype, e.tolist()) == (np.int64, [1, 2])
    assert (f.dtype, f.item()) == (np.bool_, True)
    assert (h.dtype, h.item()) == (np.float32, 3.0)


def test_single_value_row_and_list_row():
    assert rows(ds.GeneratorDataset(lambda: (np.array([1, 2]) for _ in range(1)), ["a"])) == [[[1, 2]]]
    assert rows(ds.GeneratorDataset(lambda: (7 for _ in range(2)), "a")) == [[7], [7]]
    assert rows(ds.GeneratorDataset(lambda: ([1, 2] for _ in range(1)), ["a", "b"])) == [[1, 2]]


def test_random_access_source_sequential_and_column_names():
    d = ds.GeneratorDataset(RandomAccess(), ["x", "y"], shuffle=False)
    assert d.get_col_names() == ["x", "y"]
    assert d.get_dataset_size() == 5
    assert rows(d) == [[i, [i, 2 * i]] for i in range(5)]
    assert rows(d)[0][1] == [0, 0]


def _not_the_subscript(i):
    return (np.array(-1),)


class _Rows(Indexed):
    """Row i: ``items[i]``; an instance attribute named __getitem__ is not used by ``obj[i]`` and
    must not be by the source either."""

    def __init__(self, items):
        super().__init__(items)
        self.__getitem__ = _not_the_subscript


def test_random_access_rows_of_arrays_pass_untouched_and_others_are_converted():
    a, b = np.arange(3, dtype=np.int16), np.array(2.5)
    src = _Rows([(a, b), [1, 2], (a, [3, 4]), 7])
    ura = UserRandomAccess(src, ["x", "y"], RowConverter(["x", "y"], None, "GeneratorDataset"))
    first = ura.read(0)
    assert first is src.items[0]  # a tuple of arrays is the row itself
    for r in (ura, pickle.loads(pickle.dumps(ura))):
        assert [(v.dtype, v.tolist()) for v in r.read(0)] == [(np.int16, [0, 1, 2]), (np.float64, 2.5)]
        assert [v.tolist() for v in r.read(1)] == [1, 2]
        third = r.read(2)
        assert (third[0].dtype, third[0].tolist(), third[1].dtype, third[1].tolist()) == (np.int16, [0, 1, 2], np.int64, [3, 4])
        with pytest.raises(PipelineError, match="size of column_names is:2 and number of returned NumPy array is:1"):
            r.read(3)


class _Forwarding:
    """``__getitem__`` only through ``__getattr__``: the object is not subscriptable."""

    def __init__(self):
        self.items = [np.array(i) for i in range(3)]

    def __getattr__(self, name):
        return getattr(self.items, name)

    def __len__(self):
        return 3


def test_a_source_whose_type_has_no_getitem_fails_its_first_read_naming_the_sample():
    d = ds.GeneratorDataset(_Forwarding(), ["a"], shuffle=False)
    with pytest.raises(RuntimeError) as e:
        list(d.create_tuple_iterator(output_numpy=True))
    assert "GeneratorDataset failed at sample index: 0" in str(e.value)
    assert "TypeError: '_Forwarding' object is not subscriptable" in str(e.value)


class _PartialItem:
    """``__getitem__`` a class attribute that is no descriptor: ``obj[i]`` calls it with ``i`` alone."""

    __getitem__ = functools.partial(lambda i: (np.array(10 * i),))

    def __len__(self):
        return 3


def test_a_getitem_that_is_no_descriptor_is_called_as_the_subscript_calls_it():
    d = ds.GeneratorDataset(_PartialItem(), ["a"], shuffle=False)
    assert [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)] == [0, 10, 20]


def test_random_access_rows_are_cast_to_column_types_and_object_arrays_refused():
    src = _Rows([(np.arange(2), np.array(1)), (np.array([None, 1], dtype=object), np.array(0))])
    d = ds.GeneratorDataset(src, ["x", "y"], column_types=[np.float32, np.uint8], shuffle=False)
    it = d.create_tuple_iterator(output_numpy=True)
    x, y = next(it)
    assert (x.dtype, y.dtype, x.tolist(), int(y)) == (np.float32, np.uint8, [0.0, 1.0], 1)
    with pytest.raises(RuntimeError, match="Data type of 1th item of the input or its converted Numpy array "
                                           "is expected to be int or float or str, but got object"):
        next(it)


def test_random_access_default_shuffles_and_is_a_permutation():
    ds.config.set_seed(3)
    d = ds.GeneratorDataset(RandomAccess(20), ["x", "y"])
    order = [r[0] for r in rows(d)]
    assert sorted(order) == list(range(20))
    assert order != list(range(20))
    assert d.is_shuffled()


class Sized:
    """An iterable of the arrays 0..n-1 whose ``len()`` is ``length`` (n unless given)."""

    def __init__(self, n, length=None):
        self.n, self.length = n, n if length is None else length

    def __len__(self):
        return self.length

    def __iter__(self):
        return iter([np.array(i) for i in range(self.n)])


def test_iterable_with_len_and_num_samples():
    d = ds.GeneratorDataset(Sized(4), ["a"])
    assert d.get_dataset_size() == 4
    assert rows(d) == [[0], [1], [2], [3]]
    d2 = ds.GeneratorDataset(lambda: (np.array(i) for i in range(10)), ["a"], num_samples=4)
    assert d2.get_dataset_size() == 4
    assert rows(d2) == [[0], [1], [2], [3]]


def test_column_count_mismatch_message():
    d = ds.GeneratorDataset(gen3, ["a"])
    it = d.create_tuple_iterator()
    with pytest.raises(RuntimeError) as e:
        next(it)
    msg = str(e.value)
    assert ("the 'source' of 'GeneratorDataset' should return same number of NumPy arrays as specified in "
            "column_names, the size of column_names is:1 and number of returned NumPy array is:2") in msg
    assert "sample index: 0" in msg


def test_len_mismatch_message():
    with pytest.raises(RuntimeError, match="The actual amount of data read from generator 3 is different from "
                                           "generator.len 5, you should adjust generator.len to make them match."):
        rows(ds.GeneratorDataset(Sized(3, length=5), ["a"]))


def test_random_access_index_error_carries_user_traceback_and_rows_before():
    class Liar(RandomAccess):
        def __len__(self):
            return 5
    src = Liar(3)
    it = ds.GeneratorDataset(src, ["x", "y"], shuffle=False).create_tuple_iterator(output_numpy=True)
    got = [next(it)[0].item() for _ in range(3)]
    assert got == [0, 1, 2]
    with pytest.raises(RuntimeError) as e:
        next(it)
    assert isinstance(e.value.__cause__, IndexError)
    assert "IndexError: list index out of range" in str(e.value)
    assert "sample index: 3" in str(e.value)
    assert "GeneratorDataset" in str(e.value)


def test_generator_function_that_raises():
    def g():
        yield np.array(1)
        raise KeyError("bad row")
    it = ds.GeneratorDataset(g, ["a"]).create_tuple_iterator(output_numpy=True)
    assert next(it)[0].item() == 1
    with pytest.raises(RuntimeError) as e:
        next(it)
    assert isinstance(e.value.__cause__, KeyError)
    assert "in g" in str(e.value)


@pytest.mark.parametrize("kwargs, exc, text", [
    (dict(source=5, column_names=["a"]), TypeError, "should be callable, iterable or random accessible"),
    (dict(source=gen3), ValueError, "Neither columns_names nor schema are provided."),
    (dict(source=gen3, column_names=["a"], sampler=ds.SequentialSampler()), ValueError,
     "sampler is not supported if source does not have attribute '__getitem__'."),
    (dict(source=gen3, column_names=["a"], num_shards=2, shard_id=0), ValueError,
     "num_shards is not supported if source does not have attribute '__getitem__'."),
    (dict(source=gen3, column_names=["a", "a"]), ValueError, "duplicate"),
    (dict(source=gen3, column_names=[1]), TypeError, "column_names"),
    (dict(source=gen3, column_names=["a"], num_parallel_workers=0), ValueError, "num_parallel_workers"),
])
def test_argument_errors(kwargs, exc, text):
    with pytest.raises(exc, match=text.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        ds.GeneratorDataset(**kwargs)


def test_column_types_cast():
    d = ds.GeneratorDataset(RandomAccess(2), ["x", "y"], column_types=[np.float32, "int8"], shuffle=False)
    (x, y), _ = list(d.create_tuple_iterator(output_numpy=True))
    assert x.dtype == np.float32 and y.dtype == np.int8


def test_shuffle_ignored_for_generator_function():
    assert rows(ds.GeneratorDataset(gen3, ["a", "b"], shuffle=True)) == [[0, [0, 0]], [1, [1, 1]], [2, [2, 2]]]


def test_sharding_interleaves_and_pads():
    src = [np.array(i) for i in range(10)]
    shards = [[r[0] for r in rows(ds.GeneratorDataset(src, ["a"], shuffle=False, num_shards=3, shard_id=s))]
              for s in range(3)]
    assert shards == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]


def test_batch_sampler_and_collate_fn():
    d = ds.GeneratorDataset(RandomAccess(4), ["a", "b"], batch_sampler=[[0, 1], [2], [3, 0, 1]])
    assert d.get_dataset_size() == 3
    assert rows(d) == [[[0, 1], [[0, 0], [1, 2]]], [[2], [[2, 4]]], [[3, 0, 1], [[3, 6], [0, 0], [1, 2]]]]
    d2 = ds.GeneratorDataset(RandomAccess(4), ["a", "b"], batch_sampler=[[0, 1], [2]],
                             collate_fn=lambda a, b: (np.array(len(a)), np.sum(b)))
    assert rows(d2) == [[2, 3], [1, 6]]


def test_dict_value_travels_as_object_column():
    d = ds.GeneratorDataset(lambda: ({"x": i} for i in range(2)), ["d"]).map(lambda v: np.array(v["x"] * 10))
    assert rows(d) == [[0], [10]]


def test_pk_sampler_on_generator_with_labels():
    class Labeled(RandomAccess):
        labels = [0, 1, 0, 1, 2, 2]

        def __len__(self):
            return 6
    d = ds.GeneratorDataset(Labeled(6), ["x", "y"], sampler=ds.PKSampler(1))
    got = sorted(Labeled.labels[r[0]] for r in rows(d))
    assert got == [0, 1, 2]


def test_pk_sampler_without_labels_says_what_to_do():
    d = ds.GeneratorDataset(RandomAccess(6), ["x", "y"], sampler=ds.PKSampler(1))
    with pytest.raises(Exception, match="labels"):
        rows(d)


def test_schema_names_columns_and_casts_to_its_types():
    import headrace.common.dtype as mstype
    schema = ds.Schema()
    schema.add_column("a", de_type=mstype.int32)
    schema.add_column("b", de_type=mstype.float32, shape=[2])
    d = ds.GeneratorDataset(lambda: ((np.array(1), np.array([1, 2])) for _ in range(2)), schema=schema)
    assert d.get_col_names() == ["a", "b"]
    row = next(iter(d.create_tuple_iterator(output_numpy=True)))
    assert (row[0].dtype, row[1].dtype) == (np.int32, np.float32) and row[1].tolist() == [1.0, 2.0]


SIZES = """
def sizes():
    calls = []

    def gen():
        for i in range(40):
            yield (np.array(i),)

    def f(x):
        calls.append(1)
        return x

    def src():
        return ds.GeneratorDataset(gen, ["x"], shuffle=False)

    out = []
    for make in (lambda: src().map(f).batch(4),
                 lambda: src().map(f).batch(3, drop_remainder=True).repeat(2),
                 lambda: ds.zip((src().map(f), ds.NumpySlicesDataset({"y": np.arange(30)}))).batch(7),
                 lambda: (src().map(f) + src()).batch(7),
                 lambda: src().map(f).filter(lambda x: x % 2 == 0).batch(4)):
        calls.clear()
        out.append([make().get_dataset_size(), len(calls)])
    return out
"""


@pytest.mark.compat
def test_sizing_reads_a_generator_but_runs_no_map_above_it_as_mindspore():
    from tests.oracles.oracle import oracle_python, run_ms
    env = {"ds": ds, "np": np}
    exec(SIZES, env)
    # (rows, map calls): a generator without a length is read to size it; the maps, batches,
    # repeats, zips and concats above it are sized from its count; a filter must see its input
    expected = [[10, 0], [26, 0], [5, 0], [12, 0], [5, 40]]
    assert env["sizes"]() == expected
    if oracle_python() is None:
        pytest.skip("the MindSpore oracle is not set up")
    assert run_ms(SIZES + "\nRESULT = sizes()\n") == expected


def test_sizing_reads_a_generator_once_also_under_a_filter():
    passes = []

    def gen():
        passes.append(1)
        yield from ((np.array(i),) for i in range(10))

    data = ds.GeneratorDataset(gen, ["x"], shuffle=False).map(lambda x: x).filter(lambda x: x % 2 == 0).batch(2)
    assert (data.get_dataset_size(), len(passes)) == (3, 1)


_STEPS = st.one_of(
    st.tuples(st.just("map")),
    st.tuples(st.just("batch"), st.integers(1, 5), st.booleans()),
    st.tuples(st.just("repeat"), st.integers(1, 3)),
    st.tuples(st.just("take"), st.integers(1, 12)),
    st.tuples(st.just("skip"), st.integers(0, 12)),
    st.tuples(st.just("filter")),
    st.tuples(st.just("zip"), st.integers(1, 12)),
    st.tuples(st.just("concat"), st.integers(0, 6)))


def _generator(rows):
    return ds.GeneratorDataset(lambda: ((np.array(i),) for i in range(rows)), ["x"], shuffle=False)


def _apply(data, step):
    kind, first = step[0], data.get_col_names()[0]
    if kind == "map":
        return data.map(lambda x: x + 1, input_columns=[first])
    if kind == "batch":
        return data.batch(step[1], drop_remainder=step[2])
    if kind in ("repeat", "take", "skip"):
        return getattr(data, kind)(step[1])
    if kind == "filter":
        return data.filter(lambda x: int(np.asarray(x).reshape(-1)[0]) % 3 != 0, input_columns=[first])
    if kind == "zip":
        other = ds.NumpySlicesDataset({f"z{len(data.get_col_names())}": np.arange(step[1])}, shuffle=False)
        return ds.zip((data, other))
    return data + _generator(step[1])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.integers(0, 15), steps=st.lists(_STEPS, max_size=4))
@example(rows=1, steps=[("concat", 1), ("skip", 3)])  # a skip past the last child of a concat
@example(rows=0, steps=[("concat", 2)])  # a concat of a dataset without rows: refused, as in MindSpore
@example(rows=2, steps=[("concat", 1), ("skip", 5), ("map",)])
def test_the_size_of_a_pipeline_over_a_generator_is_the_rows_it_gives(rows, steps):
    data = _generator(rows)
    batched = False
    for step in steps:
        if step[0] == "concat" and (data.get_col_names() != ["x"] or any(s[0] == "batch" for s in steps)):
            continue  # (concat needs the same columns, of the same rank)
        if step[0] == "batch" and batched:
            continue  # (a second batch would stack batches of different lengths: an error, as in MindSpore)
        if step[0] == "concat" and (step[1] == 0 or data.get_dataset_size() == 0):
            with pytest.raises(ValueError, match="There are no samples in the dataset number "):
                _apply(data, step)  # (MindSpore refuses to concat a dataset without rows)
            continue
        batched = batched or step[0] == "batch"
        data = _apply(data, step)
    assert data.get_dataset_size() == sum(1 for _ in data.create_tuple_iterator(num_epochs=1, output_numpy=True))


_KINDS = {"int16 array": lambda: np.arange(3, dtype=np.int16), "0-d array": lambda: np.array(2.5),
          "object array": lambda: np.array([None, 1], dtype=object), "list": lambda: [1, 2], "int": lambda: 7,
          "str": lambda: "s"}


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 3), st.lists(st.sampled_from(sorted(_KINDS)), min_size=1, max_size=4), st.booleans())
def test_a_random_access_read_is_the_converter_of_the_item(n, kinds, as_tuple):
    # RowConverter.reading (one function per row, spelled out for two columns) gives what the
    # converter makes of the item: the item itself when it is a tuple of n non-object arrays, else
    # the converted row or the converter's error
    values = [_KINDS[k]() for k in kinds]
    item = tuple(values) if as_tuple else values
    if len(values) == 1 and not as_tuple:
        item = values[0]
    conv = RowConverter([f"c{i}" for i in range(n)], None, "GeneratorDataset")
    read = conv.reading(lambda i: item)
    try:
        want = conv(item)
    except Exception as e:  # noqa: BLE001 - the read must fail the same way
        with pytest.raises(type(e)) as got:
            read(0)
        assert str(got.value) == str(e)
        return
    row = read(0)
    passes = (as_tuple and len(values) == n and all(k in ("int16 array", "0-d array") for k in kinds))
    assert (row is item) == passes and (want is item) == passes
    assert type(row) is tuple and len(row) == n
    assert [(type(v), getattr(v, "dtype", None), np.asarray(v).tolist()) for v in row] == \
        [(type(v), getattr(v, "dtype", None), np.asarray(v).tolist()) for v in want]
