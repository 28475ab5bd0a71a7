"""MindDataset and its source: output dtypes/shapes, padding, argument checks and MindSpore's sample orders."""
import pickle

import numpy as np
import pytest

import headrace.dataset as ds
from headrace.mindrecord import FileReader
from headrace._util.types import RandomAccessSource
from headrace._util.mtshuffle import minstd_shuffle
from headrace.dataset._sources.mindrecord import MindDataset, MindRecordSource

from .conftest import write

ALL = {"i32": {"type": "int32"}, "i64": {"type": "int64"}, "f32": {"type": "float32"}, "f64": {"type": "float64"},
       "s": {"type": "string"}, "b": {"type": "bytes"}, "ai": {"type": "int32", "shape": [-1]},
       "al": {"type": "int64", "shape": [2, -1]}, "af": {"type": "float32", "shape": [-1]},
       "ad": {"type": "float64", "shape": [1, 2]}}


@pytest.fixture(scope="module")
def typed(tmp_path_factory):
    path = tmp_path_factory.mktemp("typed") / "t.mr"
    rows = [{"i32": k, "i64": -k, "f32": 0.1 * k, "f64": 0.1 * k, "s": f"sé{k}", "b": b"ab\x00" if k % 2 else b"",
             "ai": np.arange(k, dtype=np.int32), "al": np.arange(2 * k + 2, dtype=np.int64).reshape(2, -1),
             "af": np.ones(k, np.float32), "ad": np.array([[k, 0.5]])} for k in range(4)]
    write(path, rows, schema=ALL)
    return str(path)


@pytest.fixture(scope="module")
def ten(tmp_path_factory):
    d = tmp_path_factory.mktemp("ten")
    write(d / "sh10", [{"a": i} for i in range(10)], schema={"a": {"type": "int32"}})
    write(d / "sh9", [{"a": i} for i in range(9)], schema={"a": {"type": "int32"}})
    return str(d / "sh10"), str(d / "sh9")


def _rows(d, epochs=1):
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=epochs)
    out = [[int(r[0]) for r in it] for _ in range(epochs)]
    return out if epochs > 1 else out[0]


def test_source_values_match_mindspore_types(typed):
    src = MindRecordSource(typed)
    assert isinstance(src, RandomAccessSource)
    assert src.column_names == ["ad", "af", "ai", "al", "b", "f32", "f64", "i32", "i64", "s"] and len(src) == 4
    row = dict(zip(src.column_names, src.read(1)))
    kinds = {k: (v.dtype.str, v.shape) for k, v in row.items()}
    assert kinds == {"ad": ("<f8", (1, 2)), "af": ("<f4", (1,)), "ai": ("<i4", (1,)), "al": ("<i8", (2, 2)),
                     "b": ("|S3", (1,)), "f32": ("<f4", ()), "f64": ("<f8", ()), "i32": ("<i4", ()),
                     "i64": ("<i8", ()), "s": ("<U3", ())}
    assert row["b"].tobytes() == b"ab\x00" and row["s"].item() == "sé1" and row["f32"] == np.float32(0.1)
    empty = dict(zip(src.column_names, src.read(0)))
    assert empty["b"].dtype == np.dtype("S1") and empty["b"].tobytes() == b"\x00"      # b"" as MindSpore gives it
    assert empty["al"].tolist() == [[0], [1]]
    for name, dtype in (("ai", "<i4"), ("af", "<f4")):    # no elements: a 0-d array, as MindSpore reads it
        assert (empty[name].shape, empty[name].dtype.str, empty[name].item()) == ((), dtype, 0)
    clone = pickle.loads(pickle.dumps(src))
    assert [a.tolist() for a in clone.read(3)] == [a.tolist() for a in src.read(3)]
    with pytest.raises(IndexError):
        src.read(4)
    sub = MindRecordSource(typed, ["s", "i32", "b"])
    assert sub.column_names == ["s", "i32", "b"] and [v.item() for v in sub.read(2)[:2]] == ["sé2", 2]


def test_an_array_without_elements_reads_as_a_0d_array_as_in_mindspore(typed, tmp_path):
    """MindSpore 2.10's test_field_is_null_numpy: MindDataset gives an empty array of any schema shape
    ([-1], [2, -1]) as a 0-d array of its dtype (output_shapes [] for it), so such rows batch into a
    1-d column; FileReader keeps the empty array of the schema's shape."""
    schema = {"label": {"type": "int32"}, "a": {"type": "int32", "shape": [-1]},
              "d": {"type": "int64", "shape": [-1]}, "m": {"type": "float32", "shape": [2, -1]}}
    rows = [{"label": k, "a": np.arange(3, dtype=np.int32), "d": np.array([], np.int64),
             "m": np.zeros((2, 0), np.float32)} for k in range(4)]
    path = tmp_path / "null.mr"
    write(path, rows, schema=schema)
    d = ds.MindDataset(str(path), shuffle=False, num_parallel_workers=2)
    assert d.get_col_names() == ["a", "d", "label", "m"]
    assert d.output_shapes() == [[3], [], [], []]
    assert d.output_types() == [np.int32, np.int64, np.int32, np.float32]
    got = [{k: (v.shape, v.dtype.str, v.tolist()) for k, v in r.items()} for r in d.create_dict_iterator(output_numpy=True)]
    assert got == [{"a": ((3,), "<i4", [0, 1, 2]), "d": ((), "<i8", 0), "label": ((), "<i4", k),
                    "m": ((), "<f4", 0.0)} for k in range(4)]
    batch = next(d.batch(4).create_dict_iterator(output_numpy=True))
    assert {k: (v.shape, v.dtype.str) for k, v in batch.items()} == {
        "a": ((4, 3), "<i4"), "d": ((4,), "<i8"), "label": ((4,), "<i4"), "m": ((4,), "<f4")}
    row = next(FileReader(str(path)).get_next())
    assert (row["d"].shape, row["d"].dtype.str, row["m"].shape) == ((0,), "<i8", (2, 0))


def test_padded_rows(typed):
    src = MindRecordSource(typed, ["i32", "b", "s", "ai"], {"i32": -1, "b": b"pad", "s": "p", "ai": [7, 8]}, 3)
    assert len(src) == 7
    pad = src.read(5)
    assert [(v.dtype.str, v.shape) for v in pad] == [("<i4", ()), ("|S3", (1,)), ("<U1", ()), ("<i4", (2,))]
    assert pad[1].tobytes() == b"pad" and pad[3].tolist() == [7, 8]
    pad[3][0] = 99
    assert src.read(6)[3].tolist() == [7, 8]           # every padded row is a fresh copy
    with pytest.raises(ValueError, match=r"padded_sample\['i32'\] does not fit column 'i32' \(int32\)"):
        MindRecordSource(typed, ["i32"], {"i32": 1.5}, 1)
    with pytest.raises(TypeError, match=r"padded_sample\['s'\] does not fit column 's' \(string\): expected str"):
        MindRecordSource(typed, ["s"], {"s": 3}, 1)


def test_argument_checks(typed, tmp_path):
    with pytest.raises(ValueError, match="The file .*nope does not exist or permission denied!"):
        MindDataset(str(tmp_path / "nope"))
    with pytest.raises(TypeError, match="Argument columns_list with value i32 is not of type"):
        MindDataset(typed, columns_list="i32")
    with pytest.raises(RuntimeError, match="padded_sample is specified and requires columns_list as well."):
        MindDataset(typed, padded_sample={"i32": 1}, num_padded=1)
    with pytest.raises(ValueError, match="padded_sample cannot match columns_list."):
        MindDataset(typed, columns_list=["i32", "s"], padded_sample={"i32": 1}, num_padded=1)
    with pytest.raises(RuntimeError, match="padded_sample is specified and requires num_padded as well."):
        MindDataset(typed, columns_list=["i32"], padded_sample={"i32": 1})
    with pytest.raises(RuntimeError, match="num_padded is specified but padded_sample is not."):
        MindDataset(typed, num_padded=1)
    with pytest.raises(RuntimeError, match="sampler and shuffle cannot be specified at the same time."):
        MindDataset(typed, sampler=ds.SequentialSampler(), shuffle=False)
    with pytest.raises(ValueError, match="The sampler is not supported yet."):
        MindDataset(typed, sampler=ds.WeightedRandomSampler([1.0] * 4))
    with pytest.raises(RuntimeError, match=r"\[ERROR\] Invalid data, column name: zz can not found in schema"):
        list(MindDataset(typed, columns_list=["zz"]).create_tuple_iterator())
    import os
    os.rename(typed + ".db", typed + ".bak")
    try:
        with pytest.raises(RuntimeError, match=f"The input: {typed}.db is not exists."):
            MindDataset(typed)
    finally:
        os.rename(typed + ".bak", typed + ".db")


def test_pipeline_columns_and_workers(typed):
    d = MindDataset(typed, shuffle=False, num_parallel_workers=2)
    assert d.get_col_names() == ["ad", "af", "ai", "al", "b", "f32", "f64", "i32", "i64", "s"]
    assert d.get_dataset_size() == 4
    assert [int(r["i32"]) for r in d.create_dict_iterator(output_numpy=True)] == [0, 1, 2, 3]
    item = d[2]
    assert isinstance(item, list) and item[7].dtype == np.int32 and int(item[7]) == 2
    with pytest.raises(ValueError, match="index cannot be negative, but got -1."):
        d[-1]
    with pytest.raises(TypeError):
        d["1"]


def test_minstd_shuffle_matches_libstdcxx():
    # std::shuffle(0..9, std::default_random_engine(2)) as MindSpore 2.10 produces it (set_seed(1))
    assert minstd_shuffle(10, 2).tolist() == [8, 0, 4, 7, 1, 9, 6, 5, 2, 3]
    assert minstd_shuffle(10, 8).tolist() == [4, 5, 8, 9, 6, 7, 3, 0, 1, 2]
    big = minstd_shuffle(100_000, 5)         # the one-position-per-draw path
    assert sorted(big.tolist()) == list(range(100_000)) and big[:5].tolist() == [6523, 56771, 57789, 90199, 33121]


# Orders below were read off MindSpore 2.10 (MindDataset on the same files); they guard determinism.
def test_orders_match_mindspore(ten):
    sh10, sh9 = ten
    assert _rows(MindDataset(sh10, shuffle=False)) == list(range(10))
    assert [_rows(MindDataset(sh10, shuffle=False, num_shards=3, shard_id=s)) for s in range(3)] == \
        [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    padded = dict(columns_list=["a"], padded_sample={"a": -1}, num_padded=3)
    assert [_rows(MindDataset(sh9, shuffle=False, num_shards=4, shard_id=s, **padded)) for s in range(4)] == \
        [[0, 4, 8], [1, 5, -1], [2, 6, -1], [3, 7, -1]]
    ds.config.set_seed(1)
    assert _rows(MindDataset(sh10), 2) == [[8, 0, 4, 7, 1, 9, 6, 5, 2, 3], [7, 1, 6, 3, 4, 2, 9, 8, 5, 0]]
    assert [_rows(MindDataset(sh10, num_shards=3, shard_id=s), 2) for s in range(3)] == [
        [[8, 7, 6, 3], [3, 9, 5, 1]], [[0, 1, 5, 8], [4, 2, 0, 3]], [[4, 9, 2, 0], [6, 8, 7, 4]]]
    assert _rows(MindDataset(sh10, num_samples=4)) == [4, 5, 9, 2]
    assert _rows(MindDataset(sh10, num_samples=2, num_shards=3, shard_id=1)) == [0, 1]
    assert _rows(MindDataset(sh10, sampler=ds.RandomSampler()), 2) == [[8, 0, 4, 7, 1, 9, 6, 5, 2, 3],
                                                                        [7, 1, 6, 3, 4, 2, 9, 8, 5, 0]]
    assert _rows(MindDataset(sh10, sampler=ds.RandomSampler(replacement=True, num_samples=5))) == [4, 5, 9, 2, 8]
    assert _rows(MindDataset(sh10, sampler=ds.DistributedSampler(3, 1)), 2) == [[0, 1, 5, 8], [4, 2, 0, 3]]
    assert _rows(MindDataset(sh10, sampler=ds.SubsetRandomSampler([1, 3, 5, 7])), 2) == [[5, 1, 3, 7]] * 2
    assert _rows(MindDataset(sh9, **padded)) == [8, 0, 4, 7, -1, -1, 6, 5, 2, -1, 1, 3]
    assert [_rows(MindDataset(sh9, num_shards=4, shard_id=s, **padded)) for s in range(4)] == \
        [[8, -1, 2], [0, -1, -1], [4, 6, 1], [7, 5, 3]]
    assert _rows(MindDataset(sh10, shuffle=ds.Shuffle.GLOBAL)) == _rows(MindDataset(sh10, shuffle=ds.Shuffle.INFILE)) \
        == [8, 0, 4, 7, 1, 9, 6, 5, 2, 3]
    assert _rows(MindDataset(sh10, shuffle=ds.Shuffle.FILES)) == list(range(10))
    ds.config.set_seed(7)
    assert [_rows(MindDataset(sh10, num_shards=3, shard_id=s), 2) for s in range(3)] == [
        [[4, 9, 3, 2], [6, 1, 5, 0]], [[5, 6, 0, 4], [9, 4, 8, 6]], [[8, 7, 1, 5], [3, 2, 7, 9]]]
    assert _rows(MindDataset(sh10, sampler=ds.SubsetRandomSampler([1, 3, 5, 7]))) == [7, 1, 3, 5]
    with pytest.raises(RuntimeError, match=r"Invalid data, the size of dataset and padded samples: 12 can not be "
                                           r"divisible by the value of 'num_shards': 5."):
        _rows(MindDataset(sh9, num_shards=5, shard_id=0, **padded))
