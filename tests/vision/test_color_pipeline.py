"""Colour, mix and augmentation ops inside pipelines: keyed randomness and batch columns."""
from __future__ import annotations

import numpy as np
import pytest

import headrace.dataset as ds
from headrace.dataset import transforms
from headrace.dataset.vision import _ops_augment as G
from headrace.dataset.vision import _ops_color as C
from headrace.dataset.vision import _ops_color_random as R
from headrace.dataset.vision import _ops_mix as X
from headrace._image import color as K
from headrace.dataset.vision.transforms import ToPIL
from headrace.dataset.vision.utils import ImageBatchFormat

IMAGES = np.random.default_rng(21).integers(0, 256, (8, 12, 14, 3), dtype=np.uint8)
LABELS = np.arange(8, dtype=np.int32) % 4


def _images(pipeline):
    return [r[0].copy() for r in pipeline.create_tuple_iterator(num_epochs=1, output_numpy=True)]


def _random_pipeline(workers):
    ops = [R.RandomColorAdjust(0.4, 0.4, 0.4, 0.1), G.AutoAugment(), X.CutOut(3)]
    data = ds.NumpySlicesDataset({"image": IMAGES}, shuffle=False)
    return data.map(operations=ops, input_columns="image", num_parallel_workers=workers)


def test_random_ops_are_reproducible_and_independent_of_worker_count():
    ds.config.set_seed(7)
    one = _images(_random_pipeline(1))
    ds.config.set_seed(7)
    two = _images(_random_pipeline(2))
    ds.config.set_seed(7)
    again = _images(_random_pipeline(2))
    assert all(np.array_equal(a, b) for a, b in zip(one, two))
    assert all(np.array_equal(a, b) for a, b in zip(two, again))
    assert len({o.tobytes() for o in one}) == len(one)
    ds.config.set_seed(8)
    other = _images(_random_pipeline(1))
    assert any(not np.array_equal(a, b) for a, b in zip(one, other))


def test_pil_path_inside_map():
    data = ds.NumpySlicesDataset({"image": IMAGES[:2]}, shuffle=False)
    data = data.map(operations=[ToPIL(), C.AdjustBrightness(1.3), C.AdjustHue(0.2)], input_columns="image")
    from PIL import Image
    for got, img in zip(_images(data), IMAGES[:2]):
        want = K.pil_adjust_hue(K.pil_adjust_brightness(Image.fromarray(img), 1.3), 0.2)
        assert np.array_equal(got, np.asarray(want))


@pytest.mark.parametrize("op", [X.MixUpBatch(0.5), X.CutMixBatch(ImageBatchFormat.NHWC, 1.0, 1.0)])
def test_batch_ops_on_batched_one_hot_columns(op):
    ds.config.set_seed(3)
    data = ds.NumpySlicesDataset({"image": IMAGES, "label": LABELS}, shuffle=False)
    data = data.map(operations=transforms.OneHot(4), input_columns="label")
    data = data.batch(4).map(operations=op, input_columns=["image", "label"])
    rows = list(data.create_tuple_iterator(num_epochs=1, output_numpy=True))
    assert len(rows) == 2
    for images, labels in rows:
        assert images.shape == (4, 12, 14, 3) and images.dtype == np.uint8
        assert labels.shape == (4, 4) and labels.dtype == np.float32
        np.testing.assert_allclose(labels.sum(axis=1), 1, rtol=1e-5)
