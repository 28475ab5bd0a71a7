import numpy as np
import pytest

import headrace.dataset as ds
from tests.helpers import assert_pyfunc_failure, parametrize_execution, rows


def three_cols(n=3):
    return ds.NumpySlicesDataset({"a": list(range(n)), "b": [10 * i for i in range(n)], "c": [9] * n},
                                 shuffle=False)


def test_default_input_is_first_column_and_replaces_it():
    d = three_cols().map(lambda a: a * 2)
    assert d.get_col_names() == ["a", "b", "c"]
    assert rows(d) == [[0, 0, 9], [2, 10, 9], [4, 20, 9]]


def test_output_columns_stand_where_the_first_input_stood():
    assert three_cols().map(lambda b, a: a + b, input_columns=["b", "a"], output_columns=["s"]).get_col_names() == ["s", "c"]
    assert three_cols().map(lambda b: b, input_columns=["b"], output_columns=["z"]).get_col_names() == ["a", "z", "c"]
    d = three_cols().map(lambda a: (a, a + 1), input_columns="a", output_columns=["a1", "a2"])
    assert d.get_col_names() == ["a1", "a2", "b", "c"]
    assert rows(d)[1] == [1, 2, 10, 9]


def test_no_output_columns_keeps_names_in_place():
    d = three_cols().map(lambda b, a: (b + 1, a - 1), input_columns=["b", "a"])
    assert d.get_col_names() == ["a", "b", "c"]
    assert rows(d)[2] == [1, 21, 9]


def test_chain_of_operations_and_python_values_converted():
    d = three_cols().map([lambda a: a + 1, lambda a: [int(a), int(a)]], input_columns="a")
    out = list(d.create_tuple_iterator(output_numpy=True))
    assert out[2][0].tolist() == [3, 3] and out[2][0].dtype == np.int64


def test_output_count_mismatch_is_named():
    d = three_cols().map(lambda a: (a, a), input_columns="a")
    with pytest.raises(RuntimeError) as e:
        rows(d)
    assert ("[ERROR] map operation: [PyFunc] failed at column: ['a'], sample index: 0. Invalid columns, the number "
            "of columns returned in 'map' operations should match the number of 'output_columns', but got the "
            "number of columns returned in 'map' operations: 2, the number of 'output_columns': 1. Set "
            "output_columns to 2 name(s).") in str(e.value)


def test_missing_input_column_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match=r"input_columns names column 'zz', which does not exist; the dataset has "
                                         r"columns \['a', 'b', 'c'\]"):
        three_cols().map(lambda x: x, input_columns="zz").get_col_names()


class _Callable:
    def __call__(self, x):
        return x


@pytest.mark.parametrize("operations", [ds.transforms.TypeCast, [abs, _Callable]])
def test_a_class_instead_of_an_instance_is_refused_as_in_mindspore(operations):
    cls = operations if isinstance(operations, type) else operations[1]
    with pytest.raises(ValueError) as info:
        three_cols().map(operations, input_columns="a")
    assert str(info.value) == ("Parameter operations's element of method map should be a dataset processing "
                               f"operation instance, but got: {cls}. It may be missing parentheses for "
                               "instantiation.")


def test_duplicate_output_column_rejected():
    with pytest.raises(ValueError, match="would appear twice"):
        three_cols().map(lambda a: a, input_columns="a", output_columns="b").get_col_names()


@pytest.mark.parametrize("kwargs, exc, text", [
    (dict(operations=5), ValueError, "should be a python function or class method which should be callable"),
    (dict(operations=[]), ValueError, "operations can not be empty"),
    (dict(operations=abs, input_columns=5), TypeError, r"Argument input_columns with value 5 is not of type \[list, str\]"),
    (dict(operations=abs, num_parallel_workers=0), ValueError, "num_parallel_workers"),
    (dict(operations=abs, column_order=["a"]), TypeError, "unexpected keyword argument 'column_order'"),
])
def test_map_argument_errors(kwargs, exc, text):
    with pytest.raises(exc, match=text):
        three_cols().map(**kwargs)


def test_more_workers_than_cpus_warns_not_errors(monkeypatch):
    import headrace.dataset._datasets as mod
    monkeypatch.setattr(mod, "_warned_workers", False)
    monkeypatch.setattr(mod.os, "cpu_count", lambda: 2)
    with pytest.warns(UserWarning, match="exceeds the number of CPUs"):
        d = three_cols().map(lambda a: a, num_parallel_workers=5)
    assert rows(d)[0] == [0, 0, 9]


@parametrize_execution
def test_user_error_layout(mode):
    def bad(a):
        if a == 2:
            raise ValueError("boom at 2")
        return a
    it = three_cols(4).map(bad, input_columns="a", **mode).create_tuple_iterator(output_numpy=True)
    assert [next(it)[0].item() for _ in range(2)] == [0, 1]
    with pytest.raises(RuntimeError) as e:
        next(it)
    assert_pyfunc_failure(str(e.value), "a", 2, 'raise ValueError("boom at 2")', "ValueError: boom at 2")
    assert isinstance(e.value.__cause__, ValueError)


def test_failing_op_in_chain_is_named():
    class Exploder:
        def __call__(self, x):
            raise TypeError("nope")
    with pytest.raises(RuntimeError, match=r"map operation: \[Exploder\]"):
        rows(three_cols().map([lambda a: a, Exploder()], input_columns="a"))


@parametrize_execution
def test_workers_keep_order(mode):
    d = ds.NumpySlicesDataset(list(range(100)), shuffle=False).map(lambda x: x * x, **mode)
    assert rows(d) == [[i * i] for i in range(100)]


def test_random_op_draws_are_keyed_by_sample_not_by_worker():
    from headrace._util.rng import sample_rng

    def noisy(x):
        return x + sample_rng().integers(0, 1_000_000)
    ds.config.set_seed(7)
    base = rows(ds.NumpySlicesDataset(list(range(50)), shuffle=False).map(noisy, num_parallel_workers=1), 2)
    for w in (2, 3):
        ds.config.set_seed(7)
        assert rows(ds.NumpySlicesDataset(list(range(50)), shuffle=False).map(noisy, num_parallel_workers=w), 2) == base
    assert base[:50] != base[50:]  # a new epoch draws anew


def test_pipeline_is_a_value_and_a_node_may_feed_two_consumers():
    base = ds.NumpySlicesDataset(list(range(4)), column_names=["x"], shuffle=False)
    a = base.map(lambda x: x + 1)
    b = base.map(lambda x: x * 10).rename("x", "y")
    assert base.get_col_names() == ["x"]
    assert rows(ds.zip((a, b))) == [[1, 0], [2, 10], [3, 20], [4, 30]]
    assert rows(base + base) == [[0], [1], [2], [3]] * 2
