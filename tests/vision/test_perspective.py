"""Perspective and RandomPerspective: exact special cases, keyed randomness, Pillow path, errors."""
import doctest
import tempfile

import numpy as np
import pytest
from PIL import Image

import headrace.dataset as ds
import headrace.dataset.vision as v
from headrace._util import rng
from headrace.dataset.vision import Inter, _ops_perspective
from headrace._image import perspective as kp
from tests.vision.imagegen import photo

RGB = photo(30, 70, 8)  # wider than one 64-pixel block of OpenCV's warp
SQ = [[0, 0], [69, 0], [69, 29], [0, 29]]


def test_docstring_examples_run(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the examples' tempfile.mkdtemp()
    result = doctest.testmod(_ops_perspective, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 2 and result.failed == 0


@pytest.mark.parametrize("inter", [Inter.NEAREST, Inter.BILINEAR, Inter.BICUBIC, Inter.AREA, Inter.PILCUBIC])
def test_identity_warp_keeps_the_image(inter):
    out = v.Perspective(SQ, SQ, inter)(RGB)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, RGB)


@pytest.mark.parametrize("inter", [Inter.NEAREST, Inter.BILINEAR])
def test_integer_shift_is_a_translation(inter):
    moved = [[x + 3, y - 2] for x, y in SQ]
    out = v.Perspective(SQ, moved, inter)(RGB)
    np.testing.assert_array_equal(out[:-2, 3:], RGB[2:, :-3])
    assert not out[-2:].any() and not out[:, :3].any()


def test_float_gray_and_many_channels():
    moved = [[x + 1, y + 1] for x, y in SQ]
    f32 = RGB.astype(np.float32) / 7
    out = v.Perspective(SQ, moved, Inter.BILINEAR)(f32)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out[1:, 1:], f32[:-1, :-1], rtol=1e-6)
    five = np.dstack([RGB, RGB[..., :2]])
    out5 = v.Perspective(SQ, moved, Inter.NEAREST)(five)
    assert out5.shape == (30, 70, 5)
    np.testing.assert_array_equal(out5[1:, 1:], five[:-1, :-1])
    gray = v.Perspective(SQ, moved, Inter.NEAREST)(RGB[..., 0])
    assert gray.shape == (30, 70)
    np.testing.assert_array_equal(gray, out5[..., 0])


def test_pil_coefficients_map_end_points_back_to_start_points():
    start, end = [[0, 0], [69, 0], [69, 29], [0, 29]], [[3, 2], [60, 0], [69, 27], [1, 29]]
    a, b, c, d, e, f, g, h = kp.pil_perspective_coeffs(start, end)
    for (sx, sy), (ex, ey) in zip(start, end):
        den = g * ex + h * ey + 1
        assert abs((a * ex + b * ey + c) / den - sx) < 1e-9 and abs((d * ex + e * ey + f) / den - sy) < 1e-9
    out = v.Perspective(start, end, Inter.BILINEAR)(Image.fromarray(RGB))
    assert isinstance(out, Image.Image) and out.size == (70, 30)


def test_perspective_errors():
    with pytest.raises(TypeError, match="^start_points should be a list or tuple of length 4.$"):
        v.Perspective(SQ[:3], SQ)
    with pytest.raises(TypeError, match=r"^end_points\[3\] should be a list or tuple of length 2.$"):
        v.Perspective(SQ, SQ[:3] + [[0]])
    with pytest.raises(TypeError, match=r"^Argument start_points\[3\]\[1\] with value 3.5 is not of type"):
        v.Perspective(SQ[:3] + [[0, 3.5]], SQ)
    with pytest.raises(ValueError, match=r"^Input start_points\[3\]\[1\] is not within the required interval"):
        v.Perspective(SQ[:3] + [[0, 2**31]], SQ)
    with pytest.raises(RuntimeError, match=r"^Perspective: the dimension of image tensor does not match .* But got "
                                           r"dimension 1. You may need to perform Decode first.$"):
        v.Perspective(SQ, SQ)(np.zeros(5, np.uint8))
    with pytest.raises(TypeError, match="^Current Interpolation is not supported with PIL input.$"):
        v.Perspective(SQ, SQ, Inter.AREA)(Image.fromarray(RGB))


def test_random_perspective_is_keyed_and_stays_in_range():
    op = v.RandomPerspective(0.6, 1.0, Inter.NEAREST)
    pil = Image.fromarray(RGB)
    for i in range(10):
        with rng.sample_key((3, i)):
            rng.sample_rng().random()  # the prob draw comes first
            ends = op.end_points(70, 30)
        for (x, y), (cx, cy) in zip(ends, SQ):
            assert abs(x - cx) <= int(0.6 * 35) and abs(y - cy) <= int(0.6 * 15)
        with rng.sample_key((3, i)):
            got = np.asarray(op(pil))
        want = np.asarray(kp.pil_perspective(pil, SQ, ends, Image.NEAREST))
        np.testing.assert_array_equal(got, want)


def test_random_perspective_identity_and_skip():
    pil = Image.fromarray(RGB)
    np.testing.assert_array_equal(np.asarray(v.RandomPerspective(0.0, 1.0, Inter.NEAREST)(pil)), RGB)
    assert v.RandomPerspective(0.9, 0.0)(pil) is pil


def test_random_perspective_errors():
    with pytest.raises(ValueError, match="^Input image should be a Pillow image.$"):
        v.RandomPerspective(0.5, 0.0)(RGB)
    with pytest.raises(RuntimeError, match="^Unsupported interpolation, only support NEAREST, ANTIALIAS, LINEAR "
                                           "and CUBIC.$"):
        v.RandomPerspective(0.5, 1.0, Inter.AREA)(Image.fromarray(RGB))
    with pytest.raises(TypeError, match="^Argument prob with value 1 is not of type"):
        v.RandomPerspective(0.5, 1)
    with pytest.raises(ValueError, match=r"^Input distortion_scale is not within the required interval of "
                                         r"\[0.0, 1.0\].$"):
        v.RandomPerspective(1.5)


def test_random_perspective_after_topil_in_a_pipeline():
    ds.config.set_seed(6)  # the autouse fixture resets the config afterwards
    data = ds.NumpySlicesDataset({"image": np.stack([RGB] * 3)}, shuffle=False)
    data = data.map([v.ToPIL(), v.RandomPerspective(0.4, 1.0, Inter.BILINEAR)], input_columns="image")
    rows = [r[0] for r in data.create_tuple_iterator(num_epochs=1, output_numpy=True)]
    assert [(r.dtype, r.shape) for r in rows] == [(np.uint8, (30, 70, 3))] * 3
    assert len({r.tobytes() for r in rows}) == 3
