"""RgbToHsv, HsvToRgb and LinearTransformation: values, layouts, round trips and errors."""
import colorsys
import doctest
import tempfile

import numpy as np
import pytest
from PIL import Image

import headrace.dataset as ds
import headrace.dataset.vision as v
from headrace._util import rng
from headrace.dataset.vision import _ops_misc
from tests.vision.imagegen import photo

RGB = photo(12, 10, 7)


def test_docstring_examples_run(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the examples' tempfile.mkdtemp()
    result = doctest.testmod(_ops_misc, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 3 and result.failed == 0


@pytest.mark.parametrize("img", [RGB, RGB / 255.0, np.array([[[0.2, 0.2, 0.2], [0, 0, 0]]]),
                                 np.array([[[0.9, 0.1, 0.5], [0.1, 0.9, 0.2], [0.3, 0.1, 0.9]]])])
def test_rgb_to_hsv_is_colorsys_bit_for_bit(img):
    out = v.RgbToHsv(is_hwc=True)(img)
    want = np.array([[colorsys.rgb_to_hsv(*map(float, px)) for px in row] for row in img])
    assert out.dtype == np.float64 and out.shape == img.shape
    np.testing.assert_array_equal(out, want)
    back = v.HsvToRgb(is_hwc=True)(want)
    np.testing.assert_array_equal(back, np.array([[colorsys.hsv_to_rgb(*px) for px in row] for row in want]))


def test_hsv_to_rgb_wraps_hue_like_colorsys():
    hsv = np.array([[[1.0, 0.5, 0.8], [-0.25, 1.0, 1.0], [0.999, 0.3, 0.2], [0.5, 0.0, 0.4]]])
    want = np.array([[colorsys.hsv_to_rgb(*px) for px in row] for row in hsv])
    np.testing.assert_array_equal(v.HsvToRgb(True)(hsv), want)


def test_chw_and_batches():
    chw = np.ascontiguousarray((RGB / 255.0).transpose(2, 0, 1))
    hwc = v.RgbToHsv(True)(RGB / 255.0)
    np.testing.assert_array_equal(v.RgbToHsv()(chw), hwc.transpose(2, 0, 1))
    batch = np.stack([chw, chw[:, ::-1]])
    out = v.RgbToHsv()(batch)
    assert out.shape == (2, 3, 12, 10)
    np.testing.assert_array_equal(out[1], v.RgbToHsv()(chw[:, ::-1]))
    np.testing.assert_allclose(v.HsvToRgb()(out), batch, atol=1e-12)


def test_hsv_errors():
    with pytest.raises(TypeError, match="^img should be NumPy image. Got <class 'list'>$"):
        v.RgbToHsv()([1, 2, 3])
    with pytest.raises(TypeError, match=r"^img shape should be \(H, W, C\)/\(N, H, W, C\)/\(C ,H, W\)/\(N, C, H, W\). "
                                        r"Got \(4, 5\).$"):
        v.RgbToHsv()(np.zeros((4, 5)))
    with pytest.raises(TypeError, match=r"^img shape should be \(H, W, C\)/\(N, H, W, C\)/\(C, H, W\)/"):
        v.HsvToRgb()(np.zeros((4, 5)))
    with pytest.raises(TypeError, match="^img should be NumPy image. Got <class 'list'>.$"):
        v.HsvToRgb()([1, 2, 3])
    with pytest.raises(TypeError, match="^img should be 3 channels RGB img. Got 4 channels.$"):
        v.HsvToRgb()(np.zeros((4, 4, 5)))
    with pytest.raises(TypeError, match="^img should be 3 channels RGB img. Got 5 channels.$"):
        v.HsvToRgb(True)(np.zeros((3, 4, 5)))
    with pytest.raises(TypeError, match="^img should be NumPy image"):
        v.RgbToHsv(True)(Image.fromarray(RGB))
    with pytest.raises(TypeError, match="^Argument is_hwc with value 1 is not of type"):
        v.RgbToHsv(1)


def test_linear_transformation():
    m = np.arange(36, dtype=np.float64).reshape(6, 6)
    mean = np.arange(6, dtype=np.float64)
    img = np.ones((3, 1, 2), np.uint8)
    out = v.LinearTransformation(m, mean)(img)
    assert out.dtype == np.float64 and out.shape == (3, 1, 2)
    assert out.ravel().tolist() == ((np.ones(6) - mean) @ m).tolist()
    assert out[:, 0, 0].tolist() == [-240.0, -258.0, -276.0]
    f32 = v.LinearTransformation(np.eye(6, dtype=np.float32), np.zeros(6, np.float32))(np.ones((2, 3), np.float32))
    assert f32.dtype == np.float32 and f32.tolist() == [[1.0] * 3] * 2


def test_linear_transformation_errors():
    with pytest.raises(TypeError, match="^Argument transformation_matrix with value"):
        v.LinearTransformation([[1]], np.zeros(1))
    with pytest.raises(TypeError, match="^Argument mean_vector with value"):
        v.LinearTransformation(np.eye(2), [0, 0])
    with pytest.raises(ValueError, match=r"^transformation_matrix should be a square matrix. Got shape \(2, 3\) "
                                         r"instead.$"):
        v.LinearTransformation(np.ones((2, 3)), np.zeros(2))
    with pytest.raises(ValueError, match=r"^mean_vector length 3 should match either one dimension of the "
                                         r"squaretransformation_matrix \(2, 2\).$"):
        v.LinearTransformation(np.eye(2), np.zeros(3))
    op = v.LinearTransformation(np.eye(2), np.zeros(2))
    with pytest.raises(ValueError, match=r"^transformation_matrix shape \(2, 2\) not compatible with Numpy image "
                                         r"shape \(3,\).$"):
        op(np.zeros(3))
    with pytest.raises(TypeError, match="^img should be NumPy array. Got <class 'list'>$"):
        op([1, 2])


def _keyed(op, key, img):
    with rng.sample_key(key):
        return op(img)


def test_random_lighting_zero_alpha_is_identity():
    for img in (RGB, Image.fromarray(RGB)):
        out = v.RandomLighting(0.0)(img)
        np.testing.assert_array_equal(np.asarray(out), RGB)
        assert type(out) is type(img)


def test_random_lighting_adds_one_rounded_shift_per_channel():
    op = v.RandomLighting(0.3)
    img = np.array([[[100, 100, 100], [0, 255, 128], [3, 250, 37]]], np.uint8)
    for i in range(10):
        with rng.sample_key((4, i)):
            shift = op.shift()
        out = _keyed(op, (4, i), img)
        want = np.clip(np.rint(img + shift), 0, 255).astype(np.uint8)
        np.testing.assert_array_equal(out, want)
    f32 = _keyed(op, (4, 0), img.astype(np.float32))
    with rng.sample_key((4, 0)):
        assert f32.dtype == np.float32 and np.allclose(f32 - img, op.shift(), atol=1e-4)


def test_random_lighting_shift_covariance_is_alexnets_pca():
    op = v.RandomLighting(1.0)
    shifts = []
    for i in range(3000):
        with rng.sample_key((11, i)):
            shifts.append(op.shift())
    eig = np.sqrt(np.linalg.eigvalsh(np.cov(np.array(shifts).T)))
    np.testing.assert_allclose(eig, [1.148, 4.794, 55.46], rtol=0.06)


def test_random_lighting_errors():
    with pytest.raises(RuntimeError, match=r"^RandomLighting: input tensor is not in shape of <H,W,C> or channel is "
                                           r"not 3, got rank: 2, and shape: <12,10>$"):
        v.RandomLighting()(RGB[..., 0])
    with pytest.raises(RuntimeError, match="^RandomLighting: the shape of input tensor does not match"):
        v.RandomLighting()(np.zeros(3, np.uint8))
    with pytest.raises(ValueError, match=r"^Input alpha is not within the required interval of \[0, 16777216\].$"):
        v.RandomLighting(-1)
    with pytest.raises(TypeError, match="^Argument alpha with value True is not of type"):
        v.RandomLighting(True)


def test_float32_planes_are_rounded_as_mindspore_rounds_them():
    # NOTE [ HSV float32 rounding ]: the first pixel decides which planes hold float32 values
    img = np.array([[[0.9, 0.1, 0.5], [0.1, 0.9, 0.2], [0.3, 0.1, 0.9]]], np.float32)
    exact = np.array([[colorsys.rgb_to_hsv(*map(float, px)) for px in row] for row in img])
    out = v.RgbToHsv(True)(img)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out[..., 0], exact[..., 0])
    np.testing.assert_array_equal(out[..., 1], exact[..., 1].astype(np.float32))
    grey_first = np.concatenate([np.full((1, 1, 3), 0.5, np.float32), img], axis=1)
    exact = np.array([[colorsys.rgb_to_hsv(*map(float, px)) for px in row] for row in grey_first])
    np.testing.assert_array_equal(v.RgbToHsv(True)(grey_first), exact)
    hsv = np.array([[[0.55, 0.5, 0.7], [0.1, 0.3, 0.3], [0.9, 0.2, 0.6]]], np.float32)  # sextant 3: b is v
    exact = np.array([[colorsys.hsv_to_rgb(*map(float, px)) for px in row] for row in hsv])
    out = v.HsvToRgb(True)(hsv)
    np.testing.assert_array_equal(out[..., :2], exact[..., :2])
    np.testing.assert_array_equal(out[..., 2], exact[..., 2].astype(np.float32))


def test_hsv_round_trip_in_a_pipeline():
    images = np.stack([RGB, RGB[::-1]]) / 255.0
    data = ds.NumpySlicesDataset({"image": images}, shuffle=False)
    data = data.map([v.RgbToHsv(True), v.HsvToRgb(True)], input_columns="image")
    rows = [r[0] for r in data.create_tuple_iterator(num_epochs=1, output_numpy=True)]
    assert [r.dtype for r in rows] == [np.float64] * 2
    np.testing.assert_allclose(np.stack(rows), images, atol=1e-12)
