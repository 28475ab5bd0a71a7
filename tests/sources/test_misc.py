"""RandomDataset, FakeImageDataset, PaddedDataset."""
import json

import numpy as np
import pytest

import headrace.dataset as ds
from tests.helpers import assert_resume_equivalence, rows


def _schema():
    s = ds.Schema()
    s.add_column("a", "int32", [2, 3])
    s.add_column("b", "float64", [4])
    s.add_column("e", "bool", [3])
    s.add_column("u", "uint8", [-1, 2])
    s.add_column("free", "int16")
    return s


def test_random_dataset_schema_types_and_shapes():
    ds.config.set_seed(1)
    d = ds.RandomDataset(total_rows=5, schema=_schema())
    assert d.get_col_names() == ["a", "b", "e", "u", "free"]
    assert d.get_dataset_size() == 5
    got = list(d.create_tuple_iterator(output_numpy=True))
    assert len(got) == 5
    dtypes = [[v.dtype for v in r] for r in got]
    assert dtypes == [[np.dtype(t) for t in ("int32", "float64", "bool", "uint8", "int16")]] * 5
    shapes = {tuple(v.shape for v in r) for r in got}
    assert len(shapes) == 1
    (sa, sb, se, su, sf), = shapes
    assert (sa, sb, se) == ((2, 3), (4,), (3,)) and su[1] == 2 and 1 <= su[0] <= 32 and 1 <= len(sf) <= 4
    assert all(0.0 <= x < 1.0 for r in got for x in r[1])
    # values are a function of (seed, row): workers and order do not change them
    ds.config.set_seed(1)
    again = ds.RandomDataset(total_rows=5, schema=_schema(), num_parallel_workers=2)
    assert rows(again) == [[v.tolist() for v in r] for r in got]
    ds.config.set_seed(1)
    shuffled = rows(ds.RandomDataset(total_rows=5, schema=_schema(), shuffle=True))
    assert sorted(map(str, shuffled)) == sorted(str([v.tolist() for v in r]) for r in got)
    ds.config.set_seed(2)
    assert rows(ds.RandomDataset(total_rows=5, schema=_schema()))[0][0] != got[0][0].tolist()


def test_random_dataset_defaults_columns_list_sampling(tmp_path):
    ds.config.set_seed(3)
    d = ds.RandomDataset()
    assert 1 <= d.get_dataset_size() <= 1024
    assert d.get_col_names() == [f"c{i}" for i in range(len(d.get_col_names()))]
    d = ds.RandomDataset(total_rows=6, schema=_schema(), columns_list=["e", "a"], num_samples=4)
    assert d.get_col_names() == ["e", "a"] and d.get_dataset_size() == 4
    assert ds.RandomDataset(total_rows=6, schema=_schema(), num_shards=4, shard_id=3).get_dataset_size() == 2
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"columns": {"x": {"type": "float16", "shape": [2]}}}))
    d = ds.RandomDataset(total_rows=2, schema=str(path))
    assert [(r[0].dtype, r[0].shape) for r in d.create_tuple_iterator(output_numpy=True)] == \
        [(np.dtype(np.float16), (2,))] * 2
    assert_resume_equivalence(ds.RandomDataset(total_rows=7, schema=_schema(), shuffle=True), num_epochs=2)


@pytest.mark.parametrize("kw, exc, msg", [
    (dict(total_rows=-1), ValueError, "total_rows"), (dict(total_rows="a"), TypeError, "total_rows"),
    (dict(schema=5), TypeError, "schema"), (dict(columns_list="a"), TypeError, "columns_list"),
    (dict(schema=ds.Schema()), ValueError, "the schema has no columns"),
])
def test_random_dataset_argument_checks(kw, exc, msg):
    with pytest.raises(exc, match=msg):
        ds.RandomDataset(**kw)


def test_random_dataset_refuses_strings_and_unknown_columns():
    s = ds.Schema()
    s.add_column("t", "string", [1])
    with pytest.raises(ValueError, match="cannot make string columns"):
        ds.RandomDataset(total_rows=2, schema=s)
    with pytest.raises(ValueError, match=r"columns_list names columns the schema does not have: \['zz'\]"):
        ds.RandomDataset(total_rows=2, schema=_schema(), columns_list=["zz"])


def test_fake_image_dataset():
    d = ds.FakeImageDataset(num_images=6, image_size=(2, 3, 3), num_classes=5, base_seed=4, shuffle=False)
    assert d.get_col_names() == ["image", "label"] and d.get_dataset_size() == 6
    assert d.num_classes == 5 and d.num_classes() == 5 and d.get_class_indexing() == {}
    got = list(d.create_tuple_iterator(output_numpy=True))
    assert all(r[0].dtype == np.uint8 and r[0].shape == (2, 3, 3) for r in got)
    assert all(r[1].dtype == np.uint32 and r[1].shape == () and 0 <= int(r[1]) < 5 for r in got)
    same = ds.FakeImageDataset(num_images=6, image_size=(2, 3, 3), num_classes=5, base_seed=4,
                               sampler=ds.SubsetSampler([3, 1]))
    assert rows(same) == [[got[3][0].tolist(), int(got[3][1])], [got[1][0].tolist(), int(got[1][1])]]
    other = ds.FakeImageDataset(num_images=6, image_size=(2, 3, 3), num_classes=5, base_seed=5, shuffle=False)
    assert rows(other) != [[r[0].tolist(), int(r[1])] for r in got]
    pk = ds.FakeImageDataset(num_images=40, image_size=(1, 1, 1), num_classes=3, sampler=ds.PKSampler(2))
    assert sorted(r[1] for r in rows(pk)) == [0, 0, 1, 1, 2, 2]


@pytest.mark.parametrize("kw, exc, msg", [
    (dict(image_size=(2, 3)), ValueError, "image_size should be a list or tuple of length 3, but got 2"),
    (dict(image_size=(2, 3, 0)), ValueError,
     r"Input image_size\[2\] is not within the required interval of \[1, 2147483647\]."),
    (dict(num_images=0), ValueError, r"Input num_images is not within the required interval of \[1, 2147483647\]."),
    (dict(num_classes=0), ValueError, "num_classes"),
    (dict(base_seed=1.5), TypeError, "base_seed"),
    (dict(shuffle=True, sampler=ds.SequentialSampler()), RuntimeError, "sampler and shuffle"),
])
def test_fake_image_argument_checks(kw, exc, msg):
    with pytest.raises(exc, match=msg):
        ds.FakeImageDataset(**kw)


def test_padded_dataset():
    d = ds.PaddedDataset([{"b": np.array([1, 2]), "a": np.array(3.5, np.float32)},
                          {"b": np.array([4, 5]), "a": np.array(1.0, np.float32), "extra": 1}])
    assert d.get_col_names() == ["b", "a"] and d.get_dataset_size() == 2
    assert [[(v.dtype.str, v.tolist()) for v in r] for r in d.create_tuple_iterator(output_numpy=True)] == \
        [[("<i8", [1, 2]), ("<f4", 3.5)], [("<i8", [4, 5]), ("<f4", 1.0)]]
    d = ds.PaddedDataset([{"x": 1, "y": "s", "z": b"q", "w": [1.5, 2.0]}])
    assert [[(v.dtype.str, v.tolist()) for v in r] for r in d.create_tuple_iterator(output_numpy=True)] == \
        [[("<i8", 1), ("<U1", "s"), ("|S1", b"q"), ("<f8", [1.5, 2.0])]]
    both = ds.NumpySlicesDataset({"a": [10, 11, 12]}, shuffle=False) + ds.PaddedDataset([{"a": np.array(99)}])
    assert [r[0] for r in rows(both)] == [10, 11, 12, 99]


@pytest.mark.parametrize("arg, exc, msg", [
    ([], ValueError, "padded_samples cannot be empty."), ([1], TypeError, "padded_element"),
    ({"a": 1}, TypeError, "padded_samples"), ([{}], ValueError, "column_names should not be empty."),
    ([{"a": 1}, {"b": 2}], ValueError, r"padded_samples\[1\] lacks the column\(s\) \['a'\]"),
])
def test_padded_argument_checks(arg, exc, msg):
    with pytest.raises(exc, match=msg):
        ds.PaddedDataset(arg)
