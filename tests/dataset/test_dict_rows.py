"""Python dicts in rows, with MindSpore 2.10's rules (checked against the oracle in
tests/compat/test_rows_compat.py): a dict stays a dict through the pipeline (map functions get it
as it was made), iterators convert its values, batch makes one dict of arrays."""
import numpy as np
import pytest

import headrace.dataset as ds
from headrace.dataset import Tensor


def _gen(rows):
    def g():
        yield from rows
    return g


def _rows(d, numpy=True, kind="tuple"):
    make = d.create_tuple_iterator if kind == "tuple" else d.create_dict_iterator
    return list(make(num_epochs=1, output_numpy=numpy))


def _plain(x):
    """A value with its types spelled out: (type name, dtype, value) for arrays."""
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_plain(v) for v in x])
    if isinstance(x, np.ndarray):
        return (type(x).__name__, str(x.dtype), x.tolist())
    return (type(x).__name__, x)


SOURCE = [(np.array([i]), {"a": np.array([i, i]), "b": i * 1.5, "s": "n%d" % i, "t": (i, 2), "l": [i],
                           "n": None, "by": b"x", "d": {"x": i}}) for i in range(4)]


@pytest.mark.parametrize("kind", ["tuple", "dict"])
@pytest.mark.parametrize("output_numpy, i, expected", [
    pytest.param(True, 1, {
        "a": ("ndarray", "int64", [1, 1]), "b": ("ndarray", "float64", 1.5), "s": ("ndarray", "<U2", "n1"),
        "t": ("tuple", [("ndarray", "int64", 1), ("ndarray", "int64", 2)]), "l": ("list", [("ndarray", "int64", 1)]),
        "n": ("NoneType", None), "by": ("bytes", b"x"), "d": {"x": ("ndarray", "int64", 1)}},
        id="numpy_output_converts_dict_values"),
    pytest.param(False, 2, {
        "a": ("Tensor", "Int64", [2, 2]), "b": ("Tensor", "Float64", 3.0), "s": ("ndarray", "<U2", "n2"),
        "t": ("tuple", [("Tensor", "Int64", 2), ("Tensor", "Int64", 2)]), "l": ("list", [("Tensor", "Int64", 2)]),
        "n": ("NoneType", None), "by": ("bytes", b"x"), "d": {"x": ("Tensor", "Int64", 2)}},
        id="tensor_output_converts_numbers_to_tensors_and_keeps_text_as_numpy"),
])
def test_dict_values_are_converted_for_the_output(kind, output_numpy, i, expected):
    rows = _rows(ds.GeneratorDataset(_gen(SOURCE), ["x", "d"], shuffle=False), output_numpy, kind)
    assert _plain(rows[i][1] if kind == "tuple" else rows[i]["d"]) == expected
    assert len(rows) == 4


def test_unsupported_array_inside_a_dict_raises_type_error():
    d = ds.GeneratorDataset(_gen([({"a": np.array([1, None], dtype=object)},)]), ["d"], shuffle=False)
    with pytest.raises(TypeError, match="^A NumPy array of unsupported type detected: object."):
        _rows(d)


def test_map_sees_the_dict_as_made_and_may_return_one():
    seen = []

    def look(d):
        seen.append(_plain(d))
        return {**d, "c": d["a"] + 1}

    d = ds.GeneratorDataset(_gen([({"a": np.array([i]), "b": 0.5},) for i in range(2)]), ["d"], shuffle=False)
    out = _rows(d.map(look, input_columns=["d"]))
    assert seen == [{"a": ("ndarray", "int64", [0]), "b": ("float", 0.5)},
                    {"a": ("ndarray", "int64", [1]), "b": ("float", 0.5)}]
    assert _plain(out[1][0]) == {"a": ("ndarray", "int64", [1]), "b": ("ndarray", "float64", 0.5),
                                 "c": ("ndarray", "int64", [2])}
    made = _rows(ds.GeneratorDataset(_gen([(np.array(3),)]), ["x"], shuffle=False)
                 .map(lambda x: {"m": x * 2, "k": 7}, input_columns=["x"]))
    assert _plain(made[0][0]) == {"m": ("ndarray", "int64", 6), "k": ("ndarray", "int64", 7)}


def test_batch_makes_a_dict_of_arrays():
    rows = [(np.array([i]), {"a": np.array([i, i]), "b": [1, 2.5][i % 2], "s": "x" * (i + 1), 1: (i, i)})
            for i in range(5)]
    out = _rows(ds.GeneratorDataset(_gen(rows), ["x", "d"], shuffle=False).batch(2))
    assert [_plain(r[1]) for r in out] == [
        {"a": ("ndarray", "int64", [[0, 0], [1, 1]]), "b": ("ndarray", "float64", [1.0, 2.5]),
         "s": ("ndarray", "<U2", ["x", "xx"]), 1: ("ndarray", "int64", [[0, 0], [1, 1]])},
        {"a": ("ndarray", "int64", [[2, 2], [3, 3]]), "b": ("ndarray", "float64", [1.0, 2.5]),
         "s": ("ndarray", "<U4", ["xxx", "xxxx"]), 1: ("ndarray", "int64", [[2, 2], [3, 3]])},
        {"a": ("ndarray", "int64", [[4, 4]]), "b": ("ndarray", "int64", [1]),  # np.array's type of the values
         "s": ("ndarray", "<U5", ["xxxxx"]), 1: ("ndarray", "int64", [[4, 4]])}]
    assert _plain(out[0][0]) == ("ndarray", "int64", [[0], [1]])


def test_batch_takes_keys_in_the_first_rows_order():
    out = _rows(ds.GeneratorDataset(_gen([({"a": 1, "b": 2},), ({"b": 3, "a": 4},)]), ["d"], shuffle=False).batch(2))
    assert list(out[0][0]) == ["a", "b"]
    assert _plain(out[0][0]) == {"a": ("ndarray", "int64", [1, 4]), "b": ("ndarray", "int64", [2, 3])}


@pytest.mark.parametrize("rows,message", [
    ([{"a": np.array([1, 2])}, {"a": np.array([1, 2, 3])}],
     "Failed to batch Python dictionary: ValueError: setting an array element with a sequence"),
    ([{"a": 1, "b": 2}, {"a": 1}],
     "number of key/value pairs in dictionaries do not match. First row: 2, current row: 1"),
    ([{"a": 1}, {"b": 1}], "have different keys: a row lacks the first row's key 'a'"),
    ([{"a": {"x": 1}}, {"a": {"x": 2}}],
     "Batch: failed to create a NumPy array with primitive types for the dictionary objects in column 0, key: 'a'."),
    ([{"v": None}, {"v": None}], "primitive types for the dictionary objects in column 0, key: 'v'."),
    ([{"a": 1}, np.array(1)], "Cannot batch a Python dict with a ndarray in column 0 ('d')"),
    ([np.array(1), {"a": 1}], "Cannot batch a dict with arrays in column 0 ('d')"),
])
def test_batch_errors(rows, message):
    d = ds.GeneratorDataset(_gen([(r,) for r in rows]), ["d"], shuffle=False).batch(2)
    with pytest.raises(RuntimeError, match="batch operation") as e:
        _rows(d)
    assert message in str(e.value)


ZIPPED = [(np.array(i), {"a": i}) for i in range(4)]


@pytest.mark.parametrize("pbm,expected", [
    (lambda x, d, info: (x, d),
     [("ndarray", "int64", [0, 1]), {"a": ("list", [("ndarray", "int64", 0), ("ndarray", "int64", 1)])}]),
    (lambda x, d, info: ({"k": 1}, {"k": 2}), [{"k": ("ndarray", "int64", 1)}, {"k": ("ndarray", "int64", 2)}]),
    (lambda x, d, info: (np.array([1, 2, 3]), {"k": 1}), [("ndarray", "int64", [1, 2, 3]), {"k": ("ndarray", "int64", 1)}]),
    (lambda x, d, info: ([5, 6], d),
     [("ndarray", "int64", [5, 6]), {"a": ("list", [("ndarray", "int64", 0), ("ndarray", "int64", 1)])}]),
])
def test_per_batch_map_dicts(pbm, expected):
    d = ds.GeneratorDataset(_gen(ZIPPED), ["x", "d"], shuffle=False).batch(2, per_batch_map=pbm)
    out = _rows(d)
    assert len(out) == 2
    assert [_plain(v) for v in out[0]] == expected


@pytest.mark.parametrize("pbm,message", [
    (lambda x, d, info: ({"k": 1}, d), "mismatched types returned from per_batch_map function"),
    (lambda x, d, info: ({"k": 1}, [1]), "mismatched types returned from per_batch_map function"),
    (lambda x, d, info: ({"k": 1}, {1}), "mismatched types returned from per_batch_map function"),
    (lambda x, d, info: (np.array([1]), d), "Invalid data, column: x expects: 2 rows returned from 'per_batch_map', got: 1"),
    (lambda x, d, info: (x, d + d[:1]), "Invalid data, column: d expects: 2 rows returned from 'per_batch_map', got: 3"),
    (lambda x, d, info: (x, [d[0], 5]), "mixing dicts with other values"),
])
def test_per_batch_map_dict_errors(pbm, message):
    d = ds.GeneratorDataset(_gen(ZIPPED), ["x", "d"], shuffle=False).batch(2, per_batch_map=pbm)
    with pytest.raises(RuntimeError, match=r"per_batch_map") as e:
        _rows(d)
    assert message in str(e.value)


def test_batch_of_per_batch_map_dicts():
    """MindSpore's own chain: per_batch_map builds lists in a dict, the next batch stacks them."""
    d = ds.GeneratorDataset(_gen([(np.array(i),) for i in range(8)]), ["x"], shuffle=False)
    d = d.map(lambda x: {"i": x, "b": 1}, input_columns=["x"])
    d = d.batch(2, per_batch_map=lambda x, info: (x,)).batch(2)
    out = _rows(d)
    assert _plain(out[1][0]) == {"i": ("ndarray", "int64", [[4, 5], [6, 7]]), "b": ("ndarray", "int64", [[1, 1], [1, 1]])}


class DictSource:
    def __getitem__(self, i):
        return np.array([i]), {"a": np.array([i, i]), "b": i * 1.5}

    def __len__(self):
        return 6


def test_dicts_cross_worker_processes():
    src = ds.GeneratorDataset(DictSource(), ["x", "d"], shuffle=False, num_parallel_workers=2,
                              python_multiprocessing=True)
    d = src.map(lambda d: {**d, "c": d["b"] * 2}, input_columns=["d"], num_parallel_workers=2,
                python_multiprocessing=True)
    d = d.batch(3, num_parallel_workers=2, python_multiprocessing=True)
    out = _rows(d)
    assert [_plain(r[1]) for r in out] == [
        {"a": ("ndarray", "int64", [[0, 0], [1, 1], [2, 2]]), "b": ("ndarray", "float64", [0.0, 1.5, 3.0]),
         "c": ("ndarray", "float64", [0.0, 3.0, 6.0])},
        {"a": ("ndarray", "int64", [[3, 3], [4, 4], [5, 5]]), "b": ("ndarray", "float64", [4.5, 6.0, 7.5]),
         "c": ("ndarray", "float64", [9.0, 12.0, 15.0])}]


def test_tensor_type_is_headrace_tensor():
    out = _rows(ds.GeneratorDataset(_gen([({"a": 1},)]), ["d"], shuffle=False), numpy=False)
    assert type(out[0][0]["a"]) is Tensor


def test_output_types_and_shapes_of_a_dict_column():
    d = ds.GeneratorDataset(_gen([(np.array([i]), {"a": i}) for i in range(4)]), ["x", "d"], shuffle=False)
    assert d.output_types() == [np.dtype("int64"), np.dtype("O")]
    assert d.output_shapes() == [[1], [0]]
    assert d.batch(2).output_shapes() == [[2, 1], [0]]


def _pbm_with_pid(x, d, info):
    import os
    return x, [dict(r, pid=os.getpid(), b=r["b"] * 2) for r in d]


def test_per_batch_map_dicts_made_in_worker_processes():
    d = ds.GeneratorDataset(DictSource(), ["x", "d"], shuffle=False)
    d = d.batch(3, per_batch_map=_pbm_with_pid, num_parallel_workers=2, python_multiprocessing=True)
    out = _rows(d)
    import os
    pids = {int(p) for r in out for p in r[1]["pid"]}
    assert os.getpid() not in pids and len(pids) >= 1
    assert [[_plain(v) for v in r[1]["b"]] for r in out] == [
        [("ndarray", "float64", 0.0), ("ndarray", "float64", 3.0), ("ndarray", "float64", 6.0)],
        [("ndarray", "float64", 9.0), ("ndarray", "float64", 12.0), ("ndarray", "float64", 15.0)]]
    assert [_plain(r[1]["a"][0]) for r in out] == [("ndarray", "int64", [0, 0]), ("ndarray", "int64", [3, 3])]
