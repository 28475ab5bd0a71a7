"""Colour kernels (``headrace._image.color``): literal values and properties.

Literal expectations marked "oracle" were read off MindSpore 2.10 for the same inputs; they pin
the rounding rules (float32 products, fused multiply-add blends, truncating tables) that make the
kernels match MindSpore's C++ ops value for value.
"""
from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from PIL import Image

from headrace._image import color as K

F32 = np.float32
RNG = np.random.default_rng(7)
RGB = RNG.integers(0, 256, (9, 11, 3), dtype=np.uint8)
GRAY = RNG.integers(0, 256, (9, 11), dtype=np.uint8)

rgb_images = hnp.arrays(np.uint8, st.tuples(st.integers(3, 9), st.integers(3, 9), st.just(3)))
gray_images = hnp.arrays(np.uint8, st.tuples(st.integers(3, 9), st.integers(3, 9)))
factors = st.floats(0, 3, allow_nan=False, width=32)


# ---------------------------------------------------------------- brightness / blends

def test_brightness_rounds_float32_products_half_to_even():
    x = np.array([[0, 15, 95, 200, 235]], np.uint8)
    # oracle: 15 * 1.3f is exactly 19.5 in float32 and rounds to 20; 235 -> 305.5 saturates
    assert K.adjust_brightness(x, 1.3).tolist() == [[0, 20, 123, 255, 255]]


def test_brightness_float32_and_other_dtypes():
    xf = np.array([[95.0, 15.0]], np.float32)
    out = K.adjust_brightness(xf, 1.3)
    assert out.dtype == np.float32
    assert out.tolist() == [[float(F32(95) * F32(1.3)), float(F32(15) * F32(1.3))]]
    # oracle: int32 works in float64 (305.4999... -> 305), uint16 in float32 (305.5 -> 306)
    assert K.adjust_brightness(np.array([[235, 15]], np.int32), 1.3).tolist() == [[305, 19]]
    assert K.adjust_brightness(np.array([[235, 15]], np.uint16), 1.3).tolist() == [[306, 20]]
    assert K.adjust_brightness(np.array([[100, -100]], np.int8), 2.6).tolist() == [[127, -128]]


def test_blend_operand_order_decides_ties():
    # oracle (AdjustContrast, grey mean 127, factor 1.3): fma(mean, -0.3, x * 1.3)
    x = np.array([82, 32, 212, 192, 132], np.uint8)
    out = K.blend(127.0, F32(1) - F32(1.3), x, 1.3, np.uint8)
    assert out.tolist() == [69, 4, 237, 212, 134]
    # oracle (AdjustSharpness, factor 2.7): fma(x, 2.7, smooth * -1.7)
    x = np.array([71, 101, 92, 112], np.uint8)
    smooth = np.array([86, 96, 97, 97], np.uint8)
    assert K.blend(x, 2.7, smooth, F32(1) - F32(2.7), np.uint8).tolist() == [46, 109, 83, 138]


def test_contrast_zero_gives_rounded_grey_mean():
    img = np.array([[[0, 0, 0], [200, 200, 200]]], np.uint8)
    assert K.adjust_contrast(img, 0.0).tolist() == [[[100, 100, 100], [100, 100, 100]]]
    out = K.adjust_contrast(img.astype(np.float32), 0.0)
    assert out.dtype == np.float32 and np.allclose(out, 100.0)


def test_saturation_zero_is_grey_and_random_color_swaps_operands():
    img = np.array([[[255, 0, 0], [0, 0, 255]]], np.uint8)
    grey = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
    assert K.adjust_saturation(img, 0.0)[..., 0].tolist() == grey.tolist()
    assert K.random_color(img, 0.0)[..., 1].tolist() == grey.tolist()


@settings(max_examples=30, deadline=None)
@given(rgb_images)
def test_identity_factors(img):
    for fn in (K.adjust_brightness, K.adjust_contrast, K.adjust_saturation, K.adjust_sharpness, K.random_color):
        assert np.array_equal(fn(img, 1.0), img), fn.__name__
    assert np.array_equal(K.adjust_gamma(img, 1.0, 1.0), img)


@settings(max_examples=30, deadline=None)
@given(rgb_images, factors, factors)
def test_brightness_is_monotone_in_the_factor(img, a, b):
    lo, hi = sorted((a, b))
    assert (K.adjust_brightness(img, lo) <= K.adjust_brightness(img, hi)).all()


# ---------------------------------------------------------------- hue

def test_hue_shifts_8bit_hue_by_truncated_factor():
    img = np.array([[[255, 0, 0]]], np.uint8)
    assert K.adjust_hue(img, 0.5).tolist() == [[[0, 255, 252]]]  # oracle
    # int(-0.1 * 255) = -25: the table wraps modulo 256
    hsv = cv2.cvtColor(RGB, cv2.COLOR_RGB2HSV_FULL)
    hsv[..., 0] = (hsv[..., 0].astype(int) - 25) % 256
    assert np.array_equal(K.adjust_hue(RGB, -0.1), cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB_FULL))


def test_hue_float_rotates_degrees_and_keeps_scale():
    img = np.array([[[1.0, 0.0, 0.0]]], np.float32)
    out = K.adjust_hue(img, 1 / 3)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[[0.0, 1.0, 0.0]]], atol=1e-5)


def test_pil_hue_wraps_negative_shift_and_keeps_grey_modes():
    img = Image.fromarray(RGB)
    h, s, v = img.convert("HSV").split()
    shifted = (np.asarray(h).astype(int) + int(-0.3 * 255)) % 256
    want = Image.merge("HSV", (Image.fromarray(shifted.astype(np.uint8), "L"), s, v)).convert("RGB")
    assert np.array_equal(np.asarray(K.pil_adjust_hue(img, -0.3)), np.asarray(want))
    grey = Image.fromarray(GRAY)
    assert K.pil_adjust_hue(grey, 0.2) is grey


# ---------------------------------------------------------------- gamma

def test_gamma_table_truncates():
    x = np.array([[0, 1, 2, 3, 4, 255]], np.uint8)
    assert K.adjust_gamma(x, 0.5).tolist() == [[0, 16, 22, 27, 32, 255]]  # oracle
    # oracle: gain 1.5, gamma 1 -> int(255.999 * 1.5 * x / 255), saturated
    assert K.adjust_gamma(np.array([[1, 2, 3, 200]], np.uint8), 1.0, 1.5).tolist() == [[1, 3, 4, 255]]


def test_gamma_float_is_clipped_power_of_gain_times_x():
    x = np.array([[0.0, 0.25, 1.0, 2.0]], np.float64)
    out = K.adjust_gamma(x, 2.0, 1.0)
    assert out.dtype == np.float32
    assert out.tolist() == [[0.0, 0.0625, 1.0, 1.0]]
    np.testing.assert_allclose(K.adjust_gamma(np.array([[0.5]], np.float32), 2.2, 0.7), [[0.35 ** 2.2]], rtol=1e-6)


def test_gamma_keeps_leading_dimensions():
    batch = np.stack([RGB, RGB])
    assert np.array_equal(K.adjust_gamma(batch, 2.2), np.stack([K.adjust_gamma(RGB, 2.2)] * 2))


# ---------------------------------------------------------------- sharpness

def test_sharpness_smooths_interior_and_keeps_border():
    img = np.zeros((3, 3), np.uint8)
    img[1, 1] = 130
    out = K.adjust_sharpness(img, 0.0)
    assert out.tolist() == [[0, 0, 0], [0, 50, 0], [0, 0, 0]]
    assert np.array_equal(K.adjust_sharpness(img[:2], 0.0), img[:2])


def test_sharpness_many_channels_equals_per_channel():
    img = RNG.integers(0, 256, (6, 7, 5), dtype=np.uint8)
    out = K.adjust_sharpness(img, 1.7)
    for c in range(5):
        assert np.array_equal(out[..., c], K.adjust_sharpness(np.ascontiguousarray(img[..., c]), 1.7))


# ---------------------------------------------------------------- invert / equalize / autocontrast

@settings(max_examples=30, deadline=None)
@given(rgb_images)
def test_invert_is_an_involution(img):
    assert np.array_equal(K.invert(K.invert(img)), img)
    assert np.array_equal(K.invert(img), np.asarray(K.pil_invert(Image.fromarray(img))))


def test_invert_saturates_wide_integers():
    assert K.invert(np.array([[0, 300, -5]], np.int16)).tolist() == [[255, -45, 260]]
    assert K.invert(np.array([[0, 300]], np.uint16)).tolist() == [[255, 0]]
    assert K.invert(np.array([[-0.5, 1.0]], np.float32)).tolist() == [[255.5, 254.0]]


def test_equalize_is_per_channel_opencv():
    out = K.equalize(RGB)
    for c in range(3):
        assert np.array_equal(out[..., c], cv2.equalizeHist(np.ascontiguousarray(RGB[..., c])))
    assert K.equalize(np.array([[10, 10, 20, 30]], np.uint8)).tolist() == [[0, 0, 128, 255]]


def test_auto_contrast_counts_whole_percents():
    assert K.auto_contrast(np.array([[50, 100, 150]], np.uint8)).tolist() == [[0, 127, 255]]
    assert np.array_equal(K.auto_contrast(RGB, 5.5), K.auto_contrast(RGB, 5))
    # a flat channel is left alone; ignored values drop out of the histogram
    flat = np.full((3, 3), 77, np.uint8)
    assert np.array_equal(K.auto_contrast(flat), flat)
    x = np.array([[0, 100, 200, 255]], np.uint8)
    assert K.auto_contrast(x, 0, [0, 255]).tolist() == [[0, 0, 255, 255]]


@settings(max_examples=30, deadline=None)
@given(gray_images, st.integers(0, 49))
def test_auto_contrast_output_spans_at_most_full_range(img, cutoff):
    out = K.auto_contrast(img, cutoff)
    assert out.shape == img.shape and out.dtype == np.uint8
    # the table is monotone: order between pixels is preserved (ties may merge)
    order = np.argsort(img.ravel(), kind="stable")
    assert (np.diff(out.ravel()[order].astype(int)) >= 0).all()


# ---------------------------------------------------------------- posterize / solarize

@settings(max_examples=30, deadline=None)
@given(gray_images, st.integers(0, 8))
def test_posterize_keeps_high_bits(img, bits):
    out = K.posterize(img, bits)
    assert (out <= img).all()
    assert np.array_equal(K.posterize(out, bits), out)
    assert (out & ((1 << (8 - bits)) - 1) == 0).all()


def test_solarize_single_threshold_means_at_least():
    x = np.array([[0, 99, 100, 254, 255]], np.uint8)
    assert K.solarize(x, (100, 100)).tolist() == [[0, 99, 155, 1, 0]]
    assert K.solarize(x, (99, 254)).tolist() == [[0, 156, 155, 1, 255]]
    assert K.solarize(x, (0, 0)).tolist() == (255 - x).tolist()
    xf = x.astype(np.float32)
    assert K.solarize(xf, (128.5, 128.5)).tolist() == [[0, 99, 100, 1, 0]]


# ---------------------------------------------------------------- blur / convert / grey

def test_gaussian_sigma_from_kernel_size():
    assert K.gaussian_sigma(3) == float(F32(0.8))
    assert K.gaussian_sigma(7) == float(F32(1.4))


def test_gaussian_blur_uses_explicit_sigma():
    # MindSpore passes the derived sigma to OpenCV, so a 3x3 blur is not OpenCV's fixed [1 2 1]/4
    img = np.zeros((3, 3), np.uint8)
    img[1, 1] = 160
    assert K.gaussian_blur(img, (3, 3), (0.8, 0.8))[1].tolist() == [40, 44, 40]  # oracle
    wide = RNG.integers(0, 256, (5, 6, 6), dtype=np.uint8)
    out = K.gaussian_blur(wide, (3, 5), (1.0, 2.0))
    assert out.shape == wide.shape
    assert np.array_equal(out[..., 4], K.gaussian_blur(np.ascontiguousarray(wide[..., 4]), (3, 5), (1.0, 2.0)))


@pytest.mark.parametrize("mode,channels,out_shape", [
    (0, 3, (9, 11, 4)), (1, 4, (9, 11, 3)), (4, 3, (9, 11, 3)), (6, 3, (9, 11)), (7, 3, (9, 11)),
    (8, 1, (9, 11, 3)), (9, 1, (9, 11, 4)), (11, 4, (9, 11)),
])
def test_convert_color_shapes(mode, channels, out_shape):
    img = RNG.integers(0, 256, (9, 11, channels), dtype=np.uint8)
    out = K.convert_color(img if channels > 1 else img[..., 0], mode)
    assert out.shape == out_shape and out.dtype == np.uint8


def test_convert_color_rgb_bgr_swap():
    assert K.convert_color(np.array([[[1, 2, 3]]], np.uint8), 4).tolist() == [[[3, 2, 1]]]


def test_pil_grayscale_channels():
    img = Image.fromarray(RGB)
    one, three = K.pil_grayscale(img, 1), K.pil_grayscale(img, 3)
    assert one.mode == "L" and three.mode == "RGB"
    assert np.array_equal(np.asarray(three)[..., 2], np.asarray(one))


def test_pil_gamma_matches_numpy_table():
    img = Image.fromarray(RGB)
    assert np.array_equal(np.asarray(K.pil_adjust_gamma(img, 0.7, 1.2)), K.adjust_gamma(RGB, 0.7, 1.2))


def test_kernels_do_not_mutate_their_input():
    img = RGB.copy()
    for fn in (lambda x: K.adjust_brightness(x, 1.5), lambda x: K.adjust_contrast(x, 1.5),
               lambda x: K.adjust_saturation(x, 1.5), lambda x: K.adjust_hue(x, 0.2),
               lambda x: K.adjust_sharpness(x, 1.5), K.invert, K.equalize, K.auto_contrast,
               lambda x: K.posterize(x, 3), lambda x: K.solarize(x, (10, 200)),
               lambda x: K.gaussian_blur(x, (3, 3), (1.0, 1.0))):
        fn(img)
        assert np.array_equal(img, RGB)
