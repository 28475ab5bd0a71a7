"""from_ray: a Ray Dataset or a streaming_split iterator as a headrace source, with headrace's
batching, maps, loaders and profiler on the consuming side."""
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

ray = pytest.importorskip("ray")

import headrace.dataset as ds
from headrace.ray import from_ray, read_dataset, read_mindrecord
from tests.ray.conftest import make_rows


def items(n):
    return [{"b": bytes([i]) * (i + 1), "s": f"s{i}", "i32": np.int32(i - 2), "f": i / 4,
             "t": np.arange(6, dtype=np.float32).reshape(2, 3) + i, "v": np.arange(i + 1, dtype=np.int16) * i}
            for i in range(n)]


def ordered(data):
    data.context.execution_options.preserve_order = True
    return data


def test_every_arrow_type_comes_as_a_local_source_gives_it(local_ray):
    src = from_ray(ordered(ray.data.from_items(items(5))), rows_per_fetch=2)
    assert src.get_col_names() == ["b", "s", "i32", "f", "t", "v"]
    rows = list(src.create_tuple_iterator(output_numpy=True, num_epochs=1))
    assert len(rows) == 5
    for i, (b, s, i32, f, t, v) in enumerate(rows):
        assert (b.dtype, b.shape, b.tobytes()) == (np.dtype(f"S{i + 1}"), (1,), bytes([i]) * (i + 1))
        assert (s.dtype.kind, s.shape, str(s)) == ("U", (), f"s{i}")
        assert (i32.dtype, i32.shape, int(i32)) == (np.int32, (), i - 2)
        assert (f.dtype, f.shape, float(f)) == (np.float64, (), i / 4)
        assert t.dtype == np.float32 and np.array_equal(t, np.arange(6, dtype=np.float32).reshape(2, 3) + i)
        assert v.dtype == np.int16 and v.tolist() == [j * i for j in range(i + 1)]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(-2**63, 2**63 - 1), st.text(max_size=5).filter(lambda s: not s.endswith("\x00")), st.binary(min_size=1, max_size=6),
                          st.lists(st.floats(width=32, allow_nan=False), min_size=3, max_size=3)),
                min_size=1, max_size=12),
       st.integers(1, 5))
def test_values_come_back_as_given(local_ray, rows, rows_per_fetch):
    data = ordered(ray.data.from_items([{"i": i, "s": s, "b": b, "v": np.array(v, dtype=np.float32)}
                                        for i, s, b, v in rows]))
    got = list(from_ray(data, rows_per_fetch=rows_per_fetch).create_tuple_iterator(output_numpy=True, num_epochs=1))
    assert [(int(i), str(s), b.tobytes(), v.tolist()) for i, s, b, v in got] == [
        (i, s, b, np.array(v, dtype=np.float32).tolist()) for i, s, b, v in rows]
    assert all(i.dtype == np.int64 and v.dtype == np.float32 and v.shape == (3,) for i, _, _, v in got)


def test_a_string_ending_with_nul_is_refused_not_cut(local_ray):
    data = ordered(ray.data.from_items([{"s": "ok"}, {"s": "a\x00"}]))
    it = from_ray(data).create_tuple_iterator(output_numpy=True, num_epochs=1)
    with pytest.raises(RuntimeError, match=r"column 's' of row 1 holds a string that ends with a NUL character "
                                        r"\('a\\x00'\), which a headrace string value cannot keep") as e:
        list(it)
    assert type(e.value.__cause__) is ValueError and "GeneratorDataset failed at sample index: 1" in str(e.value)


def test_columns_choose_and_order(local_ray):
    src = from_ray(ordered(ray.data.from_items(items(3))), ["i32", "s"])
    assert src.get_col_names() == ["i32", "s"]
    assert [(int(a), str(b)) for a, b in src.create_tuple_iterator(output_numpy=True, num_epochs=1)] == [
        (-2, "s0"), (-1, "s1"), (0, "s2")]


def test_read_mindrecord_epochs_map_batch_and_the_torch_loader(local_ray, mr_set):
    """Each epoch of the headrace dataset is one execution of the Ray dataset: MindDataset's order
    of that epoch, with a headrace map and batch after it."""
    src = from_ray(read_mindrecord(mr_set, seed=9), ["label", "__epoch__", "name"])
    data = src.map(lambda x: x * 10, input_columns="label").batch(8, drop_remainder=False)
    ds.config.set_seed(9)
    local = ds.MindDataset(mr_set, ["label"]).batch(8).create_tuple_iterator(output_numpy=True, num_epochs=2)
    it = data.create_tuple_iterator(output_numpy=True, num_epochs=2)
    for epoch in range(2):
        got = list(it)
        want = list(local)
        assert [b[0].tolist() for b in got] == [(b[0] * 10).tolist() for b in want]
        assert {int(e) for b in got for e in b[1]} == {epoch}
        assert got[0][2].dtype.kind == "U" and got[0][2].tolist()[:2] == [f"row-{i // 10}" for i in got[0][0][:2]]
    torch = pytest.importorskip("torch")
    from headrace.torch import Loader

    loader = Loader(from_ray(ordered(ray.data.from_items(items(5))), ["i32", "t"]).batch(2), shard=False)
    try:
        batches = list(loader)
    finally:
        loader.close()
    assert [b[0].tolist() for b in batches] == [[-2, -1], [0, 1], [2]]
    assert batches[0][0].dtype == torch.int32 and batches[0][1].dtype == torch.float32
    assert tuple(batches[2][1].shape) == (1, 2, 3) and batches[2][1][0, 1, 2].item() == 9.0


def test_the_jax_loader_reads_it(local_ray):
    pytest.importorskip("jax")
    import jax

    from headrace.jax import Loader

    loader = Loader(from_ray(ordered(ray.data.from_items(items(5))), ["i32", "f"]).batch(2), shard=False)
    try:
        batches = list(loader)
    finally:
        loader.close()
    assert all(isinstance(a, jax.Array) for b in batches for a in b)
    assert [b[0].tolist() for b in batches] == [[-2, -1], [0, 1], [2]]
    assert [b[1].tolist() for b in batches] == [[0.0, 0.25], [0.5, 0.75], [1.0]]


def test_a_source_from_read_dataset_keeps_its_order_and_epoch(local_ray):
    data = ds.NumpySlicesDataset({"x": np.arange(12, dtype=np.int64)}, shuffle=True)
    ds.config.set_seed(4)
    want = [int(r[0]) for r in data.create_tuple_iterator(output_numpy=True, num_epochs=1)]
    src = from_ray(read_dataset(data, seed=4, rows_per_task=5), ["x", "__sample__", "__epoch__"])
    rows = [[int(v) for v in r] for r in src.create_tuple_iterator(output_numpy=True, num_epochs=1)]
    assert rows == [[x, i, 0] for i, x in enumerate(want)]


def test_streaming_split_iterators_each_feed_a_consumer(local_ray):
    """Two consumers of one split, read together (each in its thread): every row once."""
    parts = ray.data.range(40).streaming_split(2, equal=True)
    got = {}

    def consume(k):
        src = from_ray(parts[k], ["id"], rows_per_fetch=4).batch(5)
        got[k] = [int(x) for b in src.create_tuple_iterator(output_numpy=True, num_epochs=1) for x in b[0]]

    threads = [threading.Thread(target=consume, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    assert len(got[0]) == len(got[1]) == 20
    assert sorted(got[0] + got[1]) == list(range(40))


def test_the_profiler_records_the_consuming_pipeline(local_ray, tmp_path):
    src = from_ray(ordered(ray.data.from_items(items(4))), ["i32"]).batch(2)
    with ds.profile(str(tmp_path / "prof")) as prof:
        assert [b[0].tolist() for b in src.create_tuple_iterator(output_numpy=True, num_epochs=1)] == [[-2, -1],
                                                                                                          [0, 1]]
    report = prof.to_dict()
    assert len(report["runs"]) == 1
    assert (tmp_path / "prof" / "profile.json").is_file()


def test_bad_arguments(local_ray):
    data = ray.data.from_items(items(2))
    with pytest.raises(TypeError, match=r"^data must be a ray.data.Dataset or a ray.data.DataIterator \(from "
                                        r"streaming_split\), but got list\.$"):
        from_ray(items(2))
    with pytest.raises(TypeError, match=r"^rows_per_fetch must be an int, but got 2.0 of type float\.$"):
        from_ray(data, rows_per_fetch=2.0)
    with pytest.raises(ValueError, match=r"^rows_per_fetch must be at least 1, but got 0\.$"):
        from_ray(data, rows_per_fetch=0)
    with pytest.raises(TypeError, match=r"^Argument columns\[0\] with value 1 is not of type \[<class 'str'>\], "):
        from_ray(data, [1])
    with pytest.raises(ValueError, match=r"^columns should not be empty\.$"):
        from_ray(data, [])
    with pytest.raises(ValueError, match=r"^columns names \['x'\], which the Ray schema lacks; its columns are "
                                         r"\['b', 's', 'i32', 'f', 't', 'v'\]\.$"):
        from_ray(data, ["s", "x"])
    with pytest.raises(ValueError, match=r"^columns has a duplicate column name: 's'\. Column names must be unique\.$"):
        from_ray(data, ["s", "s"])
    assert from_ray(data, "s").get_col_names() == ["s"]


@pytest.mark.parametrize("rows, column, row", [
    ([{"a": 1, "n": "x"}, {"a": 2, "n": None}], "n", 1),
    ([{"a": 1, "n": "x"}, {"a": 2, "n": "y"}, {"a": None, "n": "z"}], "a", 2),   # (NumPy: a NaN of a float column)
])
def test_a_null_value_names_the_column_and_row(local_ray, rows, column, row):
    src = from_ray(ray.data.from_items(rows).repartition(1))
    it = src.create_tuple_iterator(output_numpy=True, num_epochs=1)
    with pytest.raises(RuntimeError, match=r"GeneratorDataset failed at sample index: [0-9]+\.(.|\n)*ValueError: "
                                           rf"headrace.ray.from_ray: column '{column}' of row {row} is null; "):
        list(it)
    it.stop()


def test_make_rows_payload_is_binary_in_ray_and_bytes_in_headrace(local_ray, mr_set):
    (row,) = from_ray(read_mindrecord(mr_set, shuffle=False), ["data", "vec"]).take(1).create_tuple_iterator(
        output_numpy=True, num_epochs=1)
    want = make_rows(1)[0]
    assert row[0].dtype.kind == "S" and row[0].shape == (1,) and row[0].tobytes() == want["data"]
    assert row[1].dtype == np.float32 and np.array_equal(row[1], want["vec"])
