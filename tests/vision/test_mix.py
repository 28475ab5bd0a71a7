"""CutOut, Erase, RandomErasing, MixUpBatch, CutMixBatch: kernels and op classes.

The random box rules are MindSpore's (checked against its outputs in the compat tests): CutOut
corners drawn from [-length, size], CutMix boxes clipped one pixel short of the right/bottom edge
and at least 1x1, labels mixed by the pasted area.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headrace._util import rng
from headrace.dataset.vision import _ops_mix as X
from headrace._image import mix as M
from headrace.dataset.vision.utils import ImageBatchFormat
from tests.helpers import assert_raises_exactly

IMGS = np.random.default_rng(5).integers(0, 256, (6, 8, 9, 3), dtype=np.uint8)
LABELS = np.eye(6, dtype=np.int32)


def keyed(op, *args, key=(1, 2)):
    with rng.sample_key(key):
        return op(*args)


# ---------------------------------------------------------------- CutOut

@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 4), st.booleans(), st.integers(0, 2**31))
def test_cutout_patches_are_clipped_squares_of_zeros(length, patches, hwc, seed):
    img = np.full((6, 7, 2) if hwc else (2, 6, 7), 9, np.uint8)
    out = M.cutout(img, length, patches, hwc, np.random.default_rng(seed))
    assert out.shape == img.shape and out.dtype == img.dtype
    assert set(np.unique(out)) <= {0, 9}
    plane = (out[..., 0] if hwc else out[0]) == 0
    other = (out[..., 1] if hwc else out[1]) == 0
    assert np.array_equal(plane, other)          # all channels of a pixel go together
    if patches == 1 and plane.any():
        ys, xs = np.nonzero(plane)
        h, w = ys.max() - ys.min() + 1, xs.max() - xs.min() + 1
        assert plane.sum() == h * w and h <= length and w <= length
        # a clipped side touches the border
        assert h == length or ys.min() == 0 or ys.max() == 5
        assert w == length or xs.min() == 0 or xs.max() == 6


def test_cutout_corner_distribution_includes_offimage_positions():
    img = np.ones((10, 12, 1), np.uint8)
    g = np.random.default_rng(0)
    empty = sum(not (M.cutout(img, 4, 1, True, g) == 0).any() for _ in range(600))
    # corners uniform on [-4, 10] x [-4, 12]: a patch misses the image with probability 4/17
    assert 90 < empty < 200


def test_cutout_op_checks():
    with pytest.raises(ValueError, match=r"Input is not within the required interval of \[1, 16777216\]\."):
        X.CutOut(0)
    with pytest.raises(TypeError, match="Argument is_hwc with value 1 is not of type"):
        X.CutOut(2, is_hwc=1)
    with pytest.raises(RuntimeError, match="CutOut: box size is too large for image erase"):
        X.CutOut(40)(np.zeros((10, 12, 3), np.uint8))
    with pytest.raises(RuntimeError, match="CutOut: image shape is not <H,W,C>, but got rank: 4"):
        X.CutOut(2)(np.zeros((1, 10, 12, 3), np.uint8))
    with pytest.raises(RuntimeError, match="CutOut: the image should be"):
        X.CutOut(2)(np.zeros((10, 12), np.uint8))
    out = keyed(X.CutOut(3, 2, is_hwc=False), np.ones((3, 10, 12), np.float32))
    assert out.dtype == np.float32 and out.shape == (3, 10, 12)


# ---------------------------------------------------------------- Erase

def test_erase_fills_clipped_box_with_rounded_values():
    img = np.full((10, 12, 3), 100, np.uint8)
    out = X.Erase(1, 2, 3, 4, (7.5, 8.5, 9.5))(img)
    assert out[1, 2].tolist() == [8, 8, 10]          # half to even, as OpenCV's saturate_cast
    assert (out[1:4, 2:6] == [8, 8, 10]).all() and (out[0] == 100).all() and out[4:].max() == 100
    assert (img == 100).all()
    edge = X.Erase(8, 10, 5, 5, 7)(img)
    assert (edge[8:, 10:] == 7).all() and (edge != 7).sum() == img.size - 2 * 2 * 3
    assert np.array_equal(X.Erase(10, 0, 2, 2, 7)(img), img)   # starts just below the image
    f = X.Erase(1, 2, 3, 4, 7.5)(img.astype(np.float32))
    assert f[1, 2].tolist() == [7.5, 7.5, 7.5]


def test_erase_inplace_writes_into_the_input():
    img = np.zeros((4, 4, 3), np.uint8)
    out = X.Erase(0, 0, 2, 2, 5, inplace=True)(img)
    assert out is img and img[0, 0].tolist() == [5, 5, 5]


@pytest.mark.parametrize("make,exc,msg", [
    (lambda: X.Erase(-1, 0, 1, 1), ValueError, "Input top is not within the required interval of [0, 2147483647]."),
    (lambda: X.Erase(0, 0, 0, 1), ValueError, "Input height is not within the required interval of [1, 2147483647]."),
    (lambda: X.Erase(0, 0, 1, 1, value=(1, 2)), TypeError, "value should be a single integer/float or a 3-tuple."),
    (lambda: X.Erase(0, 0, 1, 1, value=(1, 2, 256)), ValueError,
     "Input value[2] is not within the required interval of [0, 255]."),
    (lambda: X.Erase(0, 0, 1, 1, value="a"), TypeError,
     "Argument value with value a is not of type [<class 'float'>, <class 'int'>, <class 'tuple'>], but got <class 'str'>."),
])
def test_erase_argument_checks(make, exc, msg):
    assert_raises_exactly(make, exc, msg)


def test_erase_bad_images():
    with pytest.raises(RuntimeError, match="Erase: input tensor is not in shape of <H,W,C>, but got rank: 2"):
        X.Erase(0, 0, 1, 1)(np.zeros((4, 4), np.uint8))
    with pytest.raises(RuntimeError, match="Erase: channel of input image should be 3, but got: 4"):
        X.Erase(0, 0, 1, 1)(np.zeros((4, 4, 4), np.uint8))
    with pytest.raises(RuntimeError, match="Erase: the box starting at"):
        X.Erase(20, 0, 1, 1)(np.zeros((4, 4, 3), np.uint8))
    with pytest.raises(RuntimeError, match="Erase: box size is too large for image erase, got box height: 5, "
                                           "box width: 1, and image height: 4, image width: 4"):
        X.Erase(0, 0, 5, 1)(np.zeros((4, 4, 3), np.uint8))


# ---------------------------------------------------------------- RandomErasing

def test_random_erasing_box_fits_and_fills():
    img = np.full((3, 20, 30), 9, np.uint8)
    for k in range(20):
        out = keyed(X.RandomErasing(prob=1.0, value=(1, 2, 3)), img, key=(3, k))
        ys, xs = np.nonzero(out[0] != 9)
        assert ys.size and out[0, ys, xs].max() == 1 and out[2, ys, xs].min() == 3
        h, w = ys.max() - ys.min() + 1, xs.max() - xs.min() + 1
        assert ys.size == h * w and h < 20 and w < 30
        assert 0.02 * 600 * 0.5 <= h * w <= 0.33 * 600 * 1.6


def test_random_erasing_prob_zero_returns_input_and_random_value_is_noise():
    img = np.zeros((3, 20, 30), np.float32)
    assert X.RandomErasing(prob=0.0)(img) is img
    out = keyed(X.RandomErasing(prob=1.0, value="random"), img)
    vals = out[out != 0]
    assert vals.size > 10 and abs(vals.mean()) < 1.0 and 0.5 < vals.std() < 1.5


def test_random_erasing_no_fit_leaves_image():
    img = np.arange(3 * 4 * 4, dtype=np.uint8).reshape(3, 4, 4)
    out = keyed(X.RandomErasing(prob=1.0, scale=(10, 20), max_attempts=3), img)
    assert np.array_equal(out, img) and out is not img


def test_random_erasing_checks():
    with pytest.raises(ValueError, match="The value for erasing should be either a single value"):
        X.RandomErasing(value="abc")
    with pytest.raises(TypeError, match=r"Argument value with value 1.5 is not of type"):
        X.RandomErasing(value=1.5)
    with pytest.raises(ValueError, match=r"scale should be in \(min,max\) format. Got \(max,min\)."):
        X.RandomErasing(scale=(0.5, 0.1))
    with pytest.raises(ValueError, match=r"Input scale\[1\] must be greater than 0."):
        X.RandomErasing(scale=(0, 0))
    with pytest.raises(ValueError, match=r"Input is not within the required interval of \(0, 16777216\]."):
        X.RandomErasing(ratio=(0, 1))
    with pytest.raises(ValueError, match=r"Input is not within the required interval of \[1, 16777216\]."):
        X.RandomErasing(max_attempts=0)
    from PIL import Image
    with pytest.raises(TypeError, match="img should be NumPy array. Got <class 'PIL.Image.Image'>."):
        X.RandomErasing(1.0)(Image.new("RGB", (4, 4)))
    with pytest.raises(ValueError, match="RandomErasing: the image should be a <C, H, W> array"):
        X.RandomErasing(1.0)(np.zeros((4, 5), np.uint8))


# ---------------------------------------------------------------- MixUpBatch

def test_mixup_mixes_with_one_weight_and_a_permutation():
    imgs = np.stack([np.full((2, 3, 3), 10 * i, np.uint8) for i in range(6)])
    for k in range(10):
        out, lab = keyed(X.MixUpBatch(0.7), imgs, LABELS, key=(6, k))
        assert out.dtype == np.uint8 and lab.dtype == np.float32 and lab.shape == (6, 6)
        np.testing.assert_allclose(lab.sum(axis=1), 1, rtol=1e-6)
        lam = lab[np.arange(6), np.arange(6)]
        lam = lam[lam < 1][0] if (lam < 1).any() else np.float32(1)
        partner = [int(np.flatnonzero((r > 0) & (np.arange(6) != i))[0]) if (r > 0).sum() > 1 else i
                   for i, r in enumerate(lab)]
        assert sorted(partner) == list(range(6))
        want = np.rint(lam * 10 * np.arange(6) + (1 - lam) * 10 * np.array(partner))
        assert np.abs(out[:, 0, 0, 0].astype(int) - want).max() <= 1


def test_mixup_batch_checks():
    with pytest.raises(ValueError, match="Input alpha must be greater than 0."):
        X.MixUpBatch(0)
    with pytest.raises(TypeError, match="Argument alpha with value a is not of type"):
        X.MixUpBatch("a")
    op = X.MixUpBatch()
    with pytest.raises(RuntimeError, match=r"MixUpBatch: size of input data should be 2 \(including images or labels\), but got: 1"):
        op(IMGS)
    with pytest.raises(RuntimeError, match="MixUpBatch: wrong labels shape.*but got rank: 1"):
        op(IMGS, np.arange(6))
    with pytest.raises(RuntimeError, match="MixUpBatch: rank of image shape should be: 4, but got: 3"):
        op(IMGS[0], LABELS)
    with pytest.raises(RuntimeError, match="MixUpBatch: batch sizes of image and label must be the same"):
        op(IMGS, LABELS[:3])
    out, lab = keyed(op, IMGS.astype(np.float32), LABELS[:, None, :])
    assert out.dtype == np.float32 and lab.shape == (6, 1, 6)


# ---------------------------------------------------------------- CutMixBatch

@pytest.mark.parametrize("nchw", [False, True])
def test_cutmix_pastes_partner_box_and_mixes_labels_by_area(nchw):
    imgs = np.stack([np.full((8, 9, 3), 10 * (i + 1), np.uint8) for i in range(6)])
    fmt = ImageBatchFormat.NCHW if nchw else ImageBatchFormat.NHWC
    src = imgs.transpose(0, 3, 1, 2) if nchw else imgs
    for k in range(15):
        out, lab = keyed(X.CutMixBatch(fmt, 1.0, 1.0), src, LABELS, key=(7, k))
        if nchw:
            out = out.transpose(0, 2, 3, 1)
        for i in range(6):
            box = out[i, ..., 0] != imgs[i, 0, 0, 0]
            if lab[i, i] == 1:
                continue
            ys, xs = np.nonzero(box)
            area = box.sum()
            assert area == (ys.max() - ys.min() + 1) * (xs.max() - xs.min() + 1)
            assert ys.max() < 7 or ys.min() == 7      # stops short of the last row unless 1 row there
            assert xs.max() < 8 or xs.min() == 8
            j = int(np.flatnonzero((lab[i] > 0) & (np.arange(6) != i))[0])
            assert (out[i][box] == imgs[j, 0, 0]).all()
            np.testing.assert_allclose(lab[i, i], 1 - area / 72, rtol=1e-5)
            np.testing.assert_allclose(lab[i, j], area / 72, rtol=1e-5)


def test_cutmix_prob_zero_only_casts_labels():
    out, lab = X.CutMixBatch(ImageBatchFormat.NHWC, 1.0, 0.0)(IMGS, LABELS)
    assert np.array_equal(out, IMGS) and lab.dtype == np.float32 and np.array_equal(lab, LABELS)


def test_cutmix_checks():
    with pytest.raises(TypeError, match="Argument image_batch_format with value 0 is not of type"):
        X.CutMixBatch(0)
    with pytest.raises(ValueError, match=r"Input is not within the required interval of \(0, 16777216\]."):
        X.CutMixBatch(ImageBatchFormat.NHWC, 0)
    with pytest.raises(ValueError, match=r"Input prob is not within the required interval of \[0, 1\]."):
        X.CutMixBatch(ImageBatchFormat.NHWC, 1.0, 1.5)
    op = X.CutMixBatch(ImageBatchFormat.NHWC)
    with pytest.raises(RuntimeError, match=r"CutMixBatch: invalid input size, input should have 2 columns"):
        op(IMGS)
    with pytest.raises(RuntimeError, match="CutMixBatch: input image is not in shape of <B,H,W,C> or <B,C,H,W>"):
        op(IMGS[0], LABELS)
    with pytest.raises(RuntimeError, match="CutMixBatch: input label is not in shape of <Batch,Class>"):
        op(IMGS, np.arange(6))
    with pytest.raises(RuntimeError, match="CutMixBatch: batch sizes of image and label must be the same"):
        op(IMGS, LABELS[:3])
    with pytest.raises(RuntimeError, match="CutMixBatch: input image is not in channel of 1 or 3, but got channel: 2"):
        op(IMGS[..., :2], LABELS)
    with pytest.raises(RuntimeError, match="CutMixBatch: invalid label type, label must be in a numeric type, but got: string"):
        op(IMGS, LABELS.astype(str))


def test_batch_ops_are_functions_of_the_sample_key():
    for op in (X.MixUpBatch(), X.CutMixBatch(ImageBatchFormat.NHWC, 1.0, 0.5)):
        a, b = keyed(op, IMGS, LABELS), keyed(op, IMGS, LABELS)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


# ---------------------------------------------------------------- MixUp (Python op)

def test_mixup_single_mixes_each_sample_with_the_next():
    imgs = np.stack([np.full((2, 2, 3), 10 * i, np.uint8) for i in range(4)])
    out, lab = keyed(X.MixUp(4, 0.5), imgs, np.eye(4))
    assert out.dtype == np.float64 and lab.dtype == np.float64
    lam = lab[np.arange(4), np.arange(4)]
    np.testing.assert_allclose(lab[np.arange(4), (np.arange(4) + 1) % 4], 1 - lam)
    np.testing.assert_allclose(out[:, 0, 0, 0], lam * 10 * np.arange(4) + (1 - lam) * 10 * ((np.arange(4) + 1) % 4))


def test_mixup_with_previous_batch_keeps_state():
    op = X.MixUp(2, 1.0, is_single=False)
    imgs = np.stack([np.full((1, 1, 3), 50, np.uint8), np.full((1, 1, 3), 100, np.uint8)])
    first, _ = keyed(op, imgs, np.eye(2))
    assert np.array_equal(first, imgs.astype(np.float64))
    second, lab = keyed(op, imgs * 2, np.eye(2)[::-1], key=(9,))
    lam = np.array([lab[0, 1], lab[1, 0]])     # the new labels are the reversed identity
    np.testing.assert_allclose(lab.sum(axis=1), 1)
    np.testing.assert_allclose(second[:, 0, 0, 0], lam * np.array([100, 200]) + (1 - lam) * np.array([50, 100]))


def test_mixup_checks():
    with pytest.raises(ValueError, match=r"Input is not within the required interval of \[1, 16777216\]."):
        X.MixUp(0, 1)
    with pytest.raises(ValueError, match="Input alpha must be greater than 0."):
        X.MixUp(4, 0)
    with pytest.raises(TypeError, match="Argument is_single with value 1 is not of type"):
        X.MixUp(4, 1, 1)
    with pytest.raises(ValueError, match="MixUp: the image and label batches must hold batch_size=3 samples"):
        X.MixUp(3, 1)(IMGS[:4], LABELS[:4])
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'label'"):
        X.MixUp(4, 1)(IMGS[:4])
