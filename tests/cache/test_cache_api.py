"""ds.DatasetCache, cache= on sources and map, the rules of what may sit under a cache, auto_cache."""
import os

import numpy as np
import pytest

import headrace.dataset as ds
import headrace.dataset.vision as vision
from headrace.dataset.cache import CacheStat
from tests.cache.conftest import chunk_files, write_images


def rows(d):
    return [tuple(np.asarray(v).copy() for v in r) for r in d.create_tuple_iterator(output_numpy=True, num_epochs=1)]


@pytest.mark.parametrize("kwargs, exc, text", [
    ({"session_id": 0}, ValueError, "Input session_id is not within the required interval of [1, 4294967295]."),
    ({"session_id": 2**32}, ValueError, "Input session_id is not within the required interval of [1, 4294967295]."),
    ({"session_id": 1.5}, TypeError, "Argument session_id with value 1.5 is not of type [<class 'int'>], but got <class 'float'>."),
    ({"session_id": True}, TypeError, "Argument session_id with value True is not of type (<class 'int'>,), but got <class 'bool'>."),
    ({"size": -1}, ValueError, "Input size must be greater than 0."),
    ({"size": 1.0}, TypeError, "Argument size with value 1.0 is not of type [<class 'int'>], but got <class 'float'>."),
    ({"size": 2**64}, ValueError, "Input size is not within the required interval of [0, 18446744073709551615]."),
    ({"spilling": 1}, TypeError, "Argument spilling with value 1 is not of type [<class 'bool'>], but got <class 'int'>."),
    ({"hostname": 1}, TypeError, "Argument hostname with value 1 is not of type [<class 'str'>], but got <class 'int'>."),
    ({"port": 80}, ValueError, "Input port is not within the required interval of [1025, 65535]."),
    ({"port": "1"}, TypeError, "Argument port with value 1 is not of type [<class 'int'>], but got <class 'str'>."),
    ({"num_connections": 0}, ValueError, "Input num_connections is not within the required interval of [1, 2147483647]."),
    ({"prefetch_size": 0}, ValueError, "Input prefetch_size is not within the required interval of [1, 2147483647]."),
])
def test_parameter_checks(kwargs, exc, text):
    with pytest.raises(exc) as info:
        ds.DatasetCache(**{"session_id": 1, **kwargs})
    assert str(info.value) == text


def test_other_host_refused():
    with pytest.raises(RuntimeError, match="hostname '10.1.2.3' is not this host"):
        ds.DatasetCache(1, hostname="10.1.2.3")
    assert ds.DatasetCache(1, hostname="127.0.0.1", port=50052, num_connections=12, prefetch_size=20).port == 50052


def test_get_stat_before_use():
    with pytest.raises(RuntimeError, match="GetStat called but the cache is not in use yet"):
        ds.DatasetCache(5).get_stat()


def test_cache_argument_type():
    with pytest.raises(TypeError, match=r"Argument cache with value 1 is not of type \[<class 'headrace.dataset.cache.DatasetCache'>\]"):
        ds.NumpySlicesDataset([1]).map(lambda x: x, cache=1)
    with pytest.raises(TypeError, match=r"Argument cache with value 'c' is not of type"):
        ds.RandomDataset(total_rows=2, cache="c")


def test_source_cache_fills_then_serves(tmp_path, cache_roots):
    write_images(tmp_path / "img", 6)
    cache = ds.DatasetCache(session_id=7, size=16)
    d = ds.ImageFolderDataset(str(tmp_path / "img"), shuffle=False, cache=cache)
    plain = rows(ds.ImageFolderDataset(str(tmp_path / "img"), shuffle=False))
    first = rows(d)
    stat = cache.get_stat()
    assert isinstance(stat, CacheStat)
    assert (stat.num_mem_cached, stat.num_disk_cached, stat.hits, stat.misses) == (6, 0, 0, 6)
    assert stat.avg_cache_sz > 0
    second = rows(d)
    assert cache.get_stat().hits == 6
    for a, b, c in zip(plain, first, second):
        for x, y, z in zip(a, b, c):
            assert x.dtype == y.dtype == z.dtype and np.array_equal(x, y) and np.array_equal(x, z)
    names = chunk_files(cache_roots[0])
    assert "s7/session.json" in names
    assert [n for n in names if n.endswith(".tmp")] == []
    assert len([n for n in names if n.endswith(".chunk")]) == 1
    assert not [n for n in names if n.endswith("fill.lock")]  # released once complete


def test_map_cache_after_decode_with_random_ops_above(tmp_path):
    write_images(tmp_path / "img", 5)
    cache = ds.DatasetCache(size=16)
    ds.config.set_seed(3)
    base = ds.ImageFolderDataset(str(tmp_path / "img"), shuffle=True)
    cached = base.map(vision.Decode(), input_columns="image", cache=cache).map(
        vision.RandomHorizontalFlip(0.5), input_columns="image")
    plain = base.map(vision.Decode(), input_columns="image").map(vision.RandomHorizontalFlip(0.5), input_columns="image")
    for _ in range(2):  # same seed, same order and flips, cached or not
        got, want = rows(cached), rows(plain)
        assert [r[1].item() for r in got] == [r[1].item() for r in want]
        assert all(np.array_equal(a[0], b[0]) for a, b in zip(got, want))
    assert cache.get_stat().num_mem_cached == 5
    assert cache.get_stat().hits == 5


@pytest.mark.parametrize("build, text", [
    (lambda s, c: s.map(vision.Decode(), input_columns="image").map(vision.RandomCrop(4), input_columns="image", cache=c),
     "MapNode containing random operation is not supported as a descendant of cache: RandomCrop"),
    (lambda s, c: s.map([vision.Decode(), vision.RandomHorizontalFlip()], input_columns="image").map(
        vision.HWC2CHW(), input_columns="image", cache=c),
     "MapNode containing random operation is not supported as a descendant of cache: RandomHorizontalFlip"),
    (lambda s, c: s.batch(2).map(lambda x: x, input_columns="image", cache=c),
     "BatchNode is not supported as a descendant operator under a cache."),
    (lambda s, c: s.repeat(2).map(vision.Decode(), input_columns="image", cache=c),
     "A cache over a RepeatNode of a mappable dataset is not supported."),
    (lambda s, c: ds.ImageFolderDataset(s.dataset_dir, cache=c).map(vision.Decode(), input_columns="image", cache=c),
     "Nested cache operations over ImageFolderDataset is not supported."),
    (lambda s, c: s.shuffle(2).map(vision.Decode(), input_columns="image", cache=c),
     "ShuffleDataset is not supported under a cache"),
])
def test_refused_under_cache(tmp_path, build, text):
    write_images(tmp_path / "img", 2)
    d = build(ds.ImageFolderDataset(str(tmp_path / "img")), ds.DatasetCache())
    with pytest.raises(RuntimeError) as info:
        d.create_tuple_iterator()
    assert text in str(info.value)


def test_python_function_is_cacheable_as_in_mindspore():
    cache = ds.DatasetCache()
    calls = []

    def double(x):
        calls.append(int(x))
        return x * 2

    d = ds.NumpySlicesDataset(np.arange(4), ["x"], shuffle=False).map(double, cache=cache)
    assert [int(r[0]) for r in rows(d)] == [0, 2, 4, 6]
    assert [int(r[0]) for r in rows(d)] == [0, 2, 4, 6]
    assert sorted(calls) == [0, 1, 2, 3]  # the second epoch ran no function


class Squares:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return (np.array(i * i, np.int64),)


def test_generator_needs_deterministic_source():
    cache = ds.DatasetCache()
    d = ds.GeneratorDataset(Squares(5), ["x"], shuffle=False).map(lambda x: x + 1, cache=cache)
    with pytest.raises(RuntimeError, match="deterministic_source=True"):
        d.create_tuple_iterator()
    ok = ds.GeneratorDataset(Squares(5), ["x"], shuffle=False, deterministic_source=True,
                             python_multiprocessing=False).map(lambda x: x + 1, cache=cache)
    assert [int(r[0]) for r in rows(ok)] == [1, 2, 5, 10, 17]
    assert [int(r[0]) for r in rows(ok)] == [1, 2, 5, 10, 17]
    assert cache.get_stat().hits == 5
    with pytest.raises(TypeError, match="deterministic_source"):
        ds.GeneratorDataset(Squares(5), ["x"], deterministic_source=1)


def test_sharded_sampler_shuffle_and_num_samples_over_cache(tmp_path):
    write_images(tmp_path / "img", 9)
    cache = ds.DatasetCache()
    ds.config.set_seed(5)
    for shard in range(3):
        def make(c, shard=shard):
            return ds.ImageFolderDataset(str(tmp_path / "img"), num_shards=3, shard_id=shard, shuffle=True, cache=c)
        want = rows(make(None))
        assert [r[1].item() for r in rows(make(cache))] == [r[1].item() for r in want]
        got = rows(make(cache))
        assert all(np.array_equal(a[0], b[0]) for a, b in zip(got, want)) and len(got) == 3


def test_auto_cache_splits_at_first_random_op(tmp_path):
    write_images(tmp_path / "img", 4)
    cache = ds.DatasetCache()
    ds.config.set_seed(1)
    pipeline = ds.ImageFolderDataset(str(tmp_path / "img"), shuffle=False).map(
        [vision.Decode(), vision.Resize(8), vision.RandomHorizontalFlip(), vision.HWC2CHW()], input_columns="image"
    ).batch(2)
    auto = ds.auto_cache(pipeline, cache)
    head = auto.children[0].children[0]
    assert head.cache is cache and [type(o).__name__ for o in head.operations] == ["Decode", "Resize"]
    assert [type(o).__name__ for o in auto.children[0].operations] == ["RandomHorizontalFlip", "HWC2CHW"]
    assert pipeline.children[0].cache is None  # the original is unchanged
    # The split map's random ops are a new op: they draw as the same pipeline written as two maps.
    split = ds.ImageFolderDataset(str(tmp_path / "img"), shuffle=False).map(
        [vision.Decode(), vision.Resize(8)], input_columns="image").map(
        [vision.RandomHorizontalFlip(), vision.HWC2CHW()], input_columns="image").batch(2)
    for _ in range(2):
        got, want = rows(auto), rows(split)
        assert [r[0].shape for r in got] == [(2, 3, 8, 8), (2, 3, 8, 8)]
        assert all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(got, want))
    assert cache.get_stat().hits == 4


def test_auto_cache_on_source_when_first_op_is_random(tmp_path):
    write_images(tmp_path / "img", 3)
    cache = ds.DatasetCache()
    d = ds.auto_cache(ds.ImageFolderDataset(str(tmp_path / "img")).map(
        vision.RandomCropDecodeResize(8), input_columns="image"), cache)
    assert d.children[0].cache is cache and d.cache is None
    with pytest.raises(ValueError, match="already has a cache"):
        ds.auto_cache(d, cache)
    with pytest.raises(ValueError, match="ZipDataset has 2 inputs"):
        ds.auto_cache(ds.zip((d, d.rename("image", "i2").rename("label", "l2"))), cache)


def test_changed_file_is_a_new_key(tmp_path):
    write_images(tmp_path / "img", 3)
    cache = ds.DatasetCache()
    def make():
        return ds.ImageFolderDataset(str(tmp_path / "img"), shuffle=False, cache=cache)
    before = rows(make())
    target = tmp_path / "img" / "c0" / "0000.jpg"
    import cv2
    cv2.imwrite(str(target), np.full((20, 20, 3), 200, np.uint8))
    after = rows(make())
    assert not np.array_equal(before[0][0], after[0][0])
    assert np.array_equal(after[0][0], np.fromfile(str(target), np.uint8))
    assert len([n for n in os.listdir(tmp_path / "shm" / "s0") if n != "session.json"]) == 2  # two keys


def test_mindspore_import_paths():
    from headrace.dataset.engine import DatasetCache as engine_cache
    from headrace.dataset.engine.cache_client import DatasetCache as client_cache

    assert engine_cache is client_cache is ds.DatasetCache
    assert "DatasetCache" in ds.__all__ and "auto_cache" in ds.__all__
