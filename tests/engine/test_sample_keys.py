"""The calling thread's sample key after a pipeline ran ops in it (issue 39 item 15)."""
import threading

import cv2
import numpy as np
import pytest

import headrace.dataset as ds
from headrace._image.decode import ImageDataWarning
from headrace._util import rng
from headrace.dataset import transforms, vision

IMG = np.full((4, 4, 3), 100, np.uint8)


def _eager_draws():
    ds.config.set_seed(5)
    op = vision.RandomColorAdjust(brightness=(0.1, 1.9))
    return [float(op(IMG).mean()) for _ in range(3)]


def _serial_pipelines():
    base = ds.NumpySlicesDataset({"x": np.stack([IMG] * 5)}, shuffle=False)
    jitter = vision.RandomColorAdjust(brightness=(0.1, 1.9))
    return {
        "two maps": base.map(jitter, input_columns="x", num_parallel_workers=1)
                        .map(vision.RandomHorizontalFlip(), input_columns="x", num_parallel_workers=1),
        "map and batch": base.map([jitter], input_columns="x", num_parallel_workers=1).batch(2),
        "random apply": base.map(transforms.RandomApply([vision.RandomHorizontalFlip()]), input_columns="x",
                                 num_parallel_workers=1),
        "filter": base.filter(lambda x: True, input_columns="x"),
        "per_batch_map": base.batch(2, per_batch_map=lambda x, info: (x,), input_columns="x"),
    }


@pytest.mark.parametrize("name", list(_serial_pipelines()))
def test_a_pipeline_leaves_the_callers_sample_key_as_it_found_it(name):
    want = _eager_draws()
    ds.config.set_seed(5)
    data = _serial_pipelines()[name]
    assert len(list(data.create_tuple_iterator(output_numpy=True))) > 0
    assert rng.get_sample_key() is None
    assert _eager_draws() == want  # eager random ops repeat under set_seed


def test_set_state_leaves_the_callers_sample_key_as_it_found_it():
    ds.config.set_seed(5)
    data = _serial_pipelines()["two maps"]
    it = data.create_tuple_iterator(output_numpy=True, num_epochs=1)
    next(it)
    state = it.get_state()
    it2 = data.create_tuple_iterator(output_numpy=True, num_epochs=1)
    it2.set_state(state)
    assert rng.get_sample_key() is None
    it.stop()
    it2.stop()


def test_eager_messages_name_no_stale_sample_after_a_pipeline():
    ds.config.set_seed(5)
    list(_serial_pipelines()["two maps"].create_tuple_iterator(output_numpy=True))
    ok, enc = cv2.imencode(".jpg", np.random.RandomState(0).randint(0, 256, (64, 64, 3), np.uint8))
    cut = enc.tobytes()[:enc.size // 2] + b"\xff\xd9"
    with pytest.warns(ImageDataWarning) as rec:
        vision.Decode()(np.frombuffer(cut, np.uint8))
    assert str(rec[0].message).startswith("Decode: The JPEG data ends early: libjpeg says")


def test_a_pipeline_read_inside_a_map_keeps_the_outer_key():
    seen = []

    def inner_read(x):
        before = rng.get_sample_key()
        inner = ds.NumpySlicesDataset({"y": np.arange(3)}, shuffle=False).map(lambda y: y, input_columns="y") \
            .map(lambda y: y, input_columns="y")
        list(inner.create_tuple_iterator(output_numpy=True))
        seen.append(before == rng.get_sample_key() and before is not None)
        return x

    ds.config.set_seed(1)
    outer = ds.NumpySlicesDataset({"x": np.arange(2)}, shuffle=False).map(inner_read, input_columns="x") \
        .map(lambda x: x, input_columns="x")
    list(outer.create_tuple_iterator(output_numpy=True))
    assert seen == [True, True]


def test_keys_are_per_thread():
    rng.set_sample_key((1, 2, 3, 4))
    try:
        got = []
        t = threading.Thread(target=lambda: got.append(rng.get_sample_key()))
        t.start()
        t.join()
        assert got == [None]
        saved = rng.save_key()
        rng.set_sample_key((9, 9, 9, 9))
        rng.restore_key(saved)
        assert rng.get_sample_key() == (1, 2, 3, 4)
    finally:
        rng.set_sample_key(None)
