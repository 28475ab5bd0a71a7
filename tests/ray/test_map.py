"""map_ops: headrace op chains on Ray draw what a local pipeline draws; the actor-pool pre-flight."""
import random

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

ray = pytest.importorskip("ray")
from ray.data import ActorPoolStrategy, TaskPoolStrategy

import headrace.dataset as ds
from headrace.dataset import transforms, vision
from headrace.mindrecord import FileWriter
from headrace.ray import check_compute, map_ops, read_mindrecord


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    """12 JPEG images of 24x32 in two shards, with labels."""
    path = str(tmp_path_factory.mktemp("img") / "img.mindrecord")
    w = FileWriter(path, shard_num=2)
    w.add_schema({"image": {"type": "bytes"}, "label": {"type": "int32"}})
    rows = []
    for i in range(12):
        img = np.random.default_rng(i).integers(0, 256, (24, 32, 3), dtype=np.uint8)
        rows.append({"image": cv2.imencode(".jpg", img)[1].tobytes(), "label": i})
    w.write_raw_data(rows)
    w.commit()
    return path + "0"


def user_noise(img):
    """A user function drawing from NumPy's and Python's global generators."""
    return (img.astype(np.int32) + np.random.randint(0, 50) + random.randint(0, 50)).astype(np.uint8)


def chain():
    return [vision.Decode(), vision.RandomResizedCrop((16, 16), scale=(0.3, 1.0)), vision.RandomHorizontalFlip(0.5)]


def local(path, seed, epochs, second=True):
    ds.config.set_seed(seed)
    d = ds.MindDataset(path).map(chain(), "image")
    if second:
        d = d.map([transforms.RandomApply([user_noise], 0.5)], "image")
    it = d.create_dict_iterator(output_numpy=True, num_epochs=epochs)
    return [list(it) for _ in range(epochs)]


def assert_rows_equal(ours, theirs):
    assert [r["label"] for r in ours] == [int(r["label"]) for r in theirs]
    for a, b in zip(ours, theirs):
        assert a["image"].dtype == np.uint8 and a["image"].shape == (16, 16, 3)
        assert np.array_equal(a["image"], b["image"])


def test_draws_equal_a_local_pipelines_every_epoch(local_ray, images):
    data = map_ops(read_mindrecord(images, seed=21, rows_per_task=5), chain(), "image", batch_size=4)
    data = map_ops(data, [transforms.RandomApply([user_noise], 0.5)], "image", batch_size=3)
    ours = [data.take_all() for _ in range(2)]
    theirs = local(images, 21, 2)
    for epoch in range(2):
        assert_rows_equal(ours[epoch], theirs[epoch])
    assert not np.array_equal(ours[0][0]["image"], ours[1][0]["image"])   # guards that epochs differ
    assert list(ours[0][0]) == ["label", "__sample__", "__epoch__", "image"]


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(1, 12), st.integers(1, 12))
def test_draws_do_not_depend_on_batch_or_task_sizes(local_ray, images, batch_size, rows_per_task):
    data = map_ops(read_mindrecord(images, seed=8, epoch=0, rows_per_task=rows_per_task), chain(), "image",
                   batch_size=batch_size)
    ds.config.set_seed(8)
    assert_rows_equal(data.take_all(), local(images, 8, 1, second=False)[0])


def test_an_actor_pool_draws_the_same(local_ray, images):
    data = map_ops(read_mindrecord(images, seed=21, epoch=1), chain(), "image",
                   compute=ActorPoolStrategy(size=1), num_cpus=0.5, batch_size=5)
    data = map_ops(data, [transforms.RandomApply([user_noise], 0.5)], "image",
                   compute=TaskPoolStrategy(size=1))
    assert_rows_equal(data.take_all(), local(images, 21, 2)[1])


def test_map_index_and_seed_can_be_given(local_ray, images):
    theirs = local(images, 21, 1, second=False)[0]
    data = map_ops(read_mindrecord(images, seed=21, epoch=0), chain(), "image", seed=21, map_index=1)
    assert_rows_equal(data.take_all(), theirs)
    for kwargs in ({"map_index": 2}, {"seed": 22}):   # another op id or seed: other draws
        other = map_ops(read_mindrecord(images, seed=21, epoch=0), chain(), "image", **kwargs).take_all()
        assert [r["label"] for r in other] == [int(r["label"]) for r in theirs]
        assert any(not np.array_equal(a["image"], b["image"]) for a, b in zip(other, theirs))


def test_output_columns_replace_the_input_columns(local_ray, images):
    def split(img):
        return img[:, :, 0], img.shape[0] * 1000 + img.shape[1]

    data = map_ops(read_mindrecord(images, shuffle=False, epoch=0), [vision.Decode(), split], "image",
                   ["red", "size"])
    rows = data.take_all()
    assert list(rows[0]) == ["label", "__sample__", "__epoch__", "red", "size"]
    assert rows[3]["red"].shape == (24, 32) and rows[3]["size"] == 24032
    ds.config.set_seed(0)
    first = next(ds.MindDataset(images, shuffle=False).map(vision.Decode(), "image").create_dict_iterator(
        output_numpy=True))
    assert np.array_equal(rows[0]["red"], first["image"][:, :, 0])


def test_a_failing_op_names_op_column_and_sample(local_ray, images):
    def fail_on_seven(label):
        if int(label) == 7:
            raise ValueError("label 7 is bad")
        return label

    data = map_ops(read_mindrecord(images, shuffle=False, epoch=0), [fail_on_seven], "label")
    with pytest.raises(Exception) as info:
        data.take_all()
    text = str(info.value)
    assert "map operation: [PyFunc]" in text and "ValueError: label 7 is bad" in text
    assert "map operation: [PyFunc] failed at column: ['label'], sample index: 7. Error description:" in text


def test_missing_key_columns_are_named(local_ray, images):
    data = read_mindrecord(images, shuffle=False, epoch=0).drop_columns(["__sample__"])
    with pytest.raises(Exception, match="the batch has no column '__sample__', the key columns that read_mindrecord adds"):
        map_ops(data, [vision.Decode()], "image").take_all()


def test_an_actor_pool_holding_every_cpu_is_refused_at_once(local_ray, images):
    data = read_mindrecord(images)
    with pytest.raises(ValueError) as info:
        map_ops(data, chain(), "image", compute=ActorPoolStrategy(size=2))
    assert str(info.value) == (
        "map_ops: the actor pool would hold 2 of the cluster's 2 CPUs (min_size=2 x num_cpus=1), leaving less "
        "than the 1 CPU a read task needs: Ray would wait for ever (Ray issue #44687). Use at most 1 actor(s) at "
        "num_cpus=1, fewer CPUs per actor (e.g. num_cpus=0.5), or compute=None (tasks).")
    with pytest.raises(ValueError, match="would hold 2 of the cluster's 2 CPUs"):
        map_ops(data, chain(), "image", compute=ActorPoolStrategy(min_size=1, max_size=4), num_cpus=2)


@pytest.mark.parametrize("compute, num_cpus, cpus, refused", [
    (None, None, 1, False),
    (TaskPoolStrategy(size=8), 4, 2, False),
    (ActorPoolStrategy(size=1), None, 2, False),
    (ActorPoolStrategy(size=1), None, 1, True),
    (ActorPoolStrategy(size=2), 0.5, 2, False),
    (ActorPoolStrategy(size=3), 0.5, 2, True),   # 0.5 CPU left: a read task (1 CPU) never starts
    (ActorPoolStrategy(min_size=2, max_size=8), 1, 3, False),
    (ActorPoolStrategy(min_size=3, max_size=8), 1, 3, True),
])
def test_check_compute(compute, num_cpus, cpus, refused):
    if refused:
        with pytest.raises(ValueError, match="Ray would wait for ever"):
            check_compute(compute, num_cpus, cpus)
    else:
        check_compute(compute, num_cpus, cpus)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"input_columns": 3}, TypeError, "Argument input_columns with value 3 is not of type [list, str]"),
    ({"input_columns": []}, TypeError, "input_columns must be a column name or a non-empty list of column names"),
    ({"output_columns": ["a", "a"]}, ValueError, "output_columns must not repeat a column, but got ['a', 'a']."),
    ({"seed": -2}, ValueError, "seed must be at least 0, but got -2."),
    ({"map_index": 0}, ValueError, "map_index must be at least 1, but got 0."),
    ({"batch_size": None}, TypeError, "batch_size must be an int, but got None"),
    ({"num_cpus": 0}, ValueError, "num_cpus must be a positive number or None, but got 0."),
    ({"compute": "actors"}, TypeError, "compute must be None, a ray.data.TaskPoolStrategy or a ray.data.ActorPoolStrategy"),
    ({"operations": []}, ValueError, "operations can not be empty."),
])
def test_bad_arguments(local_ray, images, kwargs, error, message):
    args = {"operations": [vision.Decode()], "input_columns": "image"} | kwargs
    with pytest.raises(error) as info:
        map_ops(read_mindrecord(images), **args)
    assert message in str(info.value)


def test_headrace_map_checks_its_arguments():
    from headrace.ray import HeadraceMap

    with pytest.raises(TypeError, match="output_columns must be a column name or a non-empty list"):
        HeadraceMap([vision.Decode()], ["image"], [], 1, 2, True)
    with pytest.raises(ValueError, match="op_id must be an int >= 0, but got -1."):
        HeadraceMap([vision.Decode()], ["image"], ["image"], 1, -1, True)
    with pytest.raises(ValueError, match="operations can not be empty."):
        HeadraceMap([], ["image"], ["image"], 1, 2, True)
    for bad in (0, 2.0, True):
        with pytest.raises(ValueError, match=f"rows_per_call must be an int >= 1 or None, but got {bad!r}."):
            HeadraceMap([vision.Decode()], ["image"], ["image"], 1, 2, True, bad)


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 9), st.integers(0, 9))
def test_a_block_is_mapped_rows_per_call_rows_at_a_time(rows_per_call, n):
    from headrace.ray import HeadraceMap

    rng = np.random.default_rng(n)
    batch = {"image": rng.integers(0, 256, (n, 4, 6, 3), dtype=np.uint8), "label": np.arange(n, dtype=np.int32),
             "__sample__": np.arange(10, 10 + n, dtype=np.int64), "__epoch__": np.full(n, 2, dtype=np.int64)}
    ops = [vision.RandomResizedCrop((3, 3), scale=(0.3, 1.0)), vision.RandomHorizontalFlip(0.5)]
    parts = list(HeadraceMap(ops, ["image"], ["image"], 7, 2, False, rows_per_call)(batch))
    assert [len(p["label"]) for p in parts] == [min(rows_per_call, n - a) for a in range(0, n, rows_per_call)]
    (whole,) = list(HeadraceMap(ops, ["image"], ["image"], 7, 2, False)(batch)) if n else [None]
    if n:   # the same draws whatever the rows per call: keyed by each row's __sample__ / __epoch__
        for key in ("image", "label", "__sample__", "__epoch__"):
            assert np.array_equal(np.concatenate([p[key] for p in parts]), whole[key]), key
        assert whole["image"].shape == (n, 3, 3, 3) and list(whole) == ["label", "__sample__", "__epoch__", "image"]


def test_a_map_right_after_the_read_runs_in_its_read_tasks(local_ray, images):
    data = map_ops(read_mindrecord(images, seed=3, rows_per_task=5), chain(), "image", batch_size=2)
    data = map_ops(data, [transforms.RandomApply([user_noise], 0.5)], "image", batch_size=3)
    rows = data.take_all()
    assert len(rows) == 12
    assert "ReadMindRecord->MapBatches(HeadraceMap)->MapBatches(HeadraceMap)" in data.stats()   # one fused operator


def test_ds_must_be_a_ray_dataset():
    with pytest.raises(TypeError, match="ds must be a ray.data.Dataset, but got list."):
        map_ops([], [vision.Decode()], "image")
