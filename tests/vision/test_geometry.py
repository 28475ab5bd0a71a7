"""Geometry ops: properties, keyed randomness, NumPy/Pillow agreement, batches."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from PIL import Image

import headrace.dataset.vision as v
from headrace._util import rng
from headrace.dataset.vision import Border, Inter
from headrace._image.geometry import random_resized_crop_box
from tests.vision.imagegen import photo

IMG = photo(48, 64, 3)
images = hnp.arrays(np.uint8, st.tuples(st.integers(1, 12), st.integers(1, 12), st.sampled_from([1, 3])))


def _keyed(op, x, key):
    with rng.sample_key(key):
        return op(x)


@settings(max_examples=40, deadline=None)
@given(images)
def test_flips_are_involutions(img):
    for op in (v.HorizontalFlip(), v.VerticalFlip()):
        np.testing.assert_array_equal(op(op(img)), img)
    np.testing.assert_array_equal(v.HorizontalFlip()(img), img[:, ::-1])


@settings(max_examples=40, deadline=None)
@given(images, st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), st.integers(0, 3))
def test_pad_then_crop_gives_the_image_back(img, left, top, right, bottom):
    padded = v.Pad((left, top, right, bottom), fill_value=9)(img)
    assert padded.shape[:2] == (img.shape[0] + top + bottom, img.shape[1] + left + right)
    back = v.Crop((top, left), (img.shape[0], img.shape[1]))(padded)
    np.testing.assert_array_equal(back, img)


@settings(max_examples=30, deadline=None)
@given(images)
def test_rotate_by_full_turns_is_identity(img):
    np.testing.assert_array_equal(v.Rotate(360)(img), img)
    np.testing.assert_array_equal(v.Rotate(0, expand=True)(img), img)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 400), st.integers(1, 400), st.integers(1, 300))
def test_resize_int_size_keeps_aspect_ratio_and_sets_the_short_side(h, w, size):
    out = v.Resize(size, Inter.NEAREST)(np.zeros((h, w), np.uint8))
    if h <= w:
        assert out.shape == (size, int(w * size / h))
    else:
        assert out.shape == (int(h * size / w), size)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300), st.integers(1, 300), st.floats(0.01, 1.0), st.floats(0.2, 5.0),
       st.integers(0, 2**32 - 1))
def test_random_resized_crop_box_fits_and_respects_ratio(h, w, smin, rmin, seed):
    g = np.random.default_rng(seed)
    top, left, ch, cw = random_resized_crop_box(g, h, w, (smin, 1.0), (rmin, rmin * 1.5), 10)
    assert 0 <= top and top + ch <= h and 0 <= left and left + cw <= w and ch >= 1 and cw >= 1


def test_random_ops_depend_only_on_the_key():
    ops = [v.RandomCrop(20, padding=4), v.RandomResizedCrop(16), v.RandomHorizontalFlip(),
           v.RandomVerticalFlip(), v.RandomRotation(30, Inter.BILINEAR),
           v.RandomAffine(20, translate=(0.1, 0.2), scale=(0.8, 1.2), shear=10)]
    for op in ops:
        a = [_keyed(op, IMG, (1, 2, 0, i)) for i in range(8)]
        b = [_keyed(op, IMG, (1, 2, 0, i)) for i in range(8)]
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
        assert any(not np.array_equal(a[0], x) for x in a[1:]), op


@pytest.mark.parametrize("op", [
    v.RandomCrop((30, 40), padding=(2, 3), padding_mode=Border.EDGE),
    v.RandomCrop((50, 70), pad_if_needed=True, fill_value=(1, 2, 3)),
    v.RandomHorizontalFlip(), v.RandomVerticalFlip(),
], ids=lambda op: type(op).__name__)
def test_numpy_and_pillow_paths_agree_for_the_same_key(op):
    for i in range(6):
        key = (4, 0, 0, i)
        arr = _keyed(op, IMG, key)
        pil = _keyed(op, Image.fromarray(IMG), key)
        assert isinstance(pil, Image.Image)
        np.testing.assert_array_equal(np.asarray(pil), arr)


def test_random_resized_crop_draws_the_same_box_on_both_paths():
    op = v.RandomResizedCrop(20)
    for i in range(20):
        with rng.sample_key((4, 0, 0, i)):
            a = op.box(48, 64)
        with rng.sample_key((4, 0, 0, i)):
            b = op.box(48, 64, pil=True)
        assert a == b


def test_batched_input_is_processed_image_by_image():
    batch = np.stack([IMG, IMG[::-1]])
    out = v.Resize((10, 12))(batch)
    assert out.shape == (2, 10, 12, 3)
    np.testing.assert_array_equal(out[1], v.Resize((10, 12))(IMG[::-1]))
    np.testing.assert_array_equal(v.HorizontalFlip()(batch)[1], IMG[::-1, ::-1])
    assert v.CenterCrop(5)(batch).shape == (2, 5, 5, 3)


def test_center_crop_pads_when_larger_and_pil_path_rounds():
    g = np.arange(35, dtype=np.uint8).reshape(5, 7)
    out = v.CenterCrop((6, 9))(g)
    assert out.shape == (6, 9) and out[0].tolist() == [0] * 9 and out[1, 1:8].tolist() == g[0].tolist()
    assert np.asarray(v.CenterCrop((2, 4))(Image.fromarray(g))).tolist() == g[2:4, 2:6].tolist()
    assert v.CenterCrop((2, 4))(g).tolist() == g[1:3, 1:5].tolist()


def test_rotation_expand_sizes_and_errors():
    assert v.Rotate(90, expand=True)(IMG).shape == (64, 48, 3)
    assert v.Rotate(45, expand=True)(IMG).shape[:2] == (int(round(112 / math.sqrt(2))),) * 2
    with pytest.raises(RuntimeError, match="^Rotate: the image tensor should have at least two dimensions"):
        v.Rotate(10)(np.zeros(4, np.uint8))  # (MindSpore's words)
    with pytest.raises(RuntimeError, match="^Rotate: image shape is not <H,W,C> or <H,W>"):
        v.Rotate(10)(np.zeros((2, 2, 2, 2), np.uint8))
    with pytest.raises(RuntimeError, match="^Rotate: Invalid interpolation mode"):
        v.Rotate(10, Inter.PILCUBIC)(IMG)


def test_resize_extra_dtypes_and_channels():
    assert v.Resize((4, 5))(np.ones((8, 10, 3), np.int32)).dtype == np.int32
    assert v.Resize((4, 5))(np.ones((8, 10, 7), np.uint8)).shape == (4, 5, 7)
    out = v.Resize((4, 5))(np.ones((8, 10), bool))
    assert out.dtype == bool and out.all()


def test_pil_only_and_numpy_only_interpolations():
    with pytest.raises(TypeError, match="^img should be PIL image"):
        v.Resize(3, Inter.ANTIALIAS)(IMG)
    with pytest.raises(TypeError, match="^Current Interpolation is not supported with PIL input"):
        v.RandomResizedCrop(3, interpolation=Inter.AREA)(Image.fromarray(IMG))
    assert v.Resize(8, Inter.ANTIALIAS)(Image.fromarray(IMG)).size == (10, 8)
