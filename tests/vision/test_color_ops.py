"""Colour op classes: argument checks, input checks, Pillow paths and random draws.

Argument-check texts are MindSpore's (read off 2.10); the random ops draw from
``headrace._util.rng.sample_rng()``, so a fixed sample key gives a fixed result.
"""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from headrace._util import rng
from headrace.dataset.transforms._base import Implementation
from headrace.dataset.vision import _ops_color as C
from headrace.dataset.vision import _ops_color_random as R
from headrace._image import color as K
from headrace.dataset.vision.utils import ConvertMode

IMG = np.random.default_rng(3).integers(0, 256, (8, 10, 3), dtype=np.uint8)
GRAY = IMG[..., 0].copy()
PIL_IMG = Image.fromarray(IMG)


# ---------------------------------------------------------------- argument checks

@pytest.mark.parametrize("make,exc,msg", [
    (lambda: C.AdjustBrightness("a"), TypeError,
     "Argument brightness_factor with value a is not of type [<class 'float'>, <class 'int'>], but got <class 'str'>."),
    (lambda: C.AdjustBrightness(True), TypeError,
     "Argument brightness_factor with value True is not of type (<class 'float'>, <class 'int'>), but got <class 'bool'>."),
    (lambda: C.AdjustBrightness(-1), ValueError,
     "Input brightness_factor is not within the required interval of [0, 16777216]."),
    (lambda: C.AdjustContrast(-0.1), ValueError,
     "Input contrast_factor is not within the required interval of [0, 16777216]."),
    (lambda: C.AdjustSaturation(-0.1), ValueError, "Input is not within the required interval of [0, 16777216]."),
    (lambda: C.AdjustHue(0.6), ValueError, "Input hue_factor is not within the required interval of [-0.5, 0.5]."),
    (lambda: C.AdjustGamma(-1.3), ValueError, "Input is not within the required interval of [0, 16777216]."),
    (lambda: C.AdjustGamma(1.3, "x"), TypeError,
     "Argument gain with value x is not of type [<class 'float'>, <class 'int'>], but got <class 'str'>."),
    (lambda: C.AdjustSharpness(-2), ValueError, "Input is not within the required interval of [0, 16777216]."),
    (lambda: C.AutoContrast(50), ValueError, "Input cutoff is not within the required interval of [0, 50)."),
    (lambda: C.AutoContrast(1, [1, 256]), ValueError, "Input ignore is not within the required interval of [0, 255]."),
    (lambda: C.AutoContrast(1, [1.5]), TypeError,
     "Argument item with value 1.5 is not of type [<class 'int'>], but got <class 'float'>."),
    (lambda: C.Posterize(9), ValueError, "Input bits is not within the required interval of [0, 8]."),
    (lambda: C.Posterize(2.0), TypeError,
     "Argument bits with value 2.0 is not of type [<class 'int'>], but got <class 'float'>."),
    (lambda: C.Solarize((200, 100)), ValueError, "threshold must be in order of (min, max)."),
    (lambda: C.Solarize(256), ValueError, "Input threshold[0] is not within the required interval of [0, 255]."),
    (lambda: C.Solarize([1, 2, 3]), TypeError, "threshold must be a single number or sequence of two numbers."),
    (lambda: C.GaussianBlur(4), ValueError, "Input kernel_size is not an odd value."),
    (lambda: C.GaussianBlur((3, 4)), ValueError, "Input kernel_size[1] is not an odd value."),
    (lambda: C.GaussianBlur([3, 3, 3]), TypeError,
     "Kernel size should be a single integer or a list/tuple (kernel_width, kernel_height) of length 2."),
    (lambda: C.GaussianBlur(3, -1), ValueError, "Input sigma is not within the required interval of [0, 16777216]."),
    (lambda: C.GaussianBlur(3, [1, 2, 3]), TypeError,
     "Sigma should be a single number or a list/tuple of length 2 for width and height."),
    (lambda: C.ConvertColor(4), TypeError,
     "Argument convert_mode with value 4 is not of type [<enum 'ConvertMode'>], but got <class 'int'>."),
    (lambda: C.Grayscale(2), ValueError,
     "Number of channels of the output grayscale imageshould be either 1 or 3. Got 2."),
    (lambda: R.RandomColorAdjust(brightness=-1), ValueError, "The input value of brightness cannot be negative."),
    (lambda: R.RandomColorAdjust(contrast=(2, 1)), ValueError, "contrast value should be in (min,max) format. Got (2, 1)."),
    (lambda: R.RandomColorAdjust(saturation=(1, 2, 3)), TypeError, "If saturation is a sequence, the length must be 2."),
    (lambda: R.RandomColorAdjust(hue=0.6), ValueError, "Input is not within the required interval of [-0.5, 0.5]."),
    (lambda: R.RandomColorAdjust(hue=(-0.6, 0)), ValueError, "Input is not within the required interval of [-0.5, 0.5]."),
    (lambda: R.RandomColorAdjust(brightness="x"), TypeError,
     "Argument brightness with value x is not of type [<class 'numbers.Number'>, <class 'list'>, <class 'tuple'>], "
     "but got <class 'str'>."),
    (lambda: R.RandomColor(0.5), TypeError, "degrees must be either a tuple or a list."),
    (lambda: R.RandomColor((2, 1)), ValueError, "degrees should be in (min,max) format. Got (max,min)."),
    (lambda: R.RandomSharpness((1, 2, 3)), ValueError, "degrees must be a sequence with length 2."),
    (lambda: R.RandomAdjustSharpness(-1), ValueError, "Input degree is not within the required interval of [0, 16777216]."),
    (lambda: R.RandomAdjustSharpness(1, 1.5), ValueError, "Input prob is not within the required interval of [0.0, 1.0]."),
    (lambda: R.RandomInvert("a"), TypeError,
     "Argument prob with value a is not of type [<class 'float'>, <class 'int'>], but got <class 'str'>."),
    (lambda: R.RandomPosterize((0, 8)), ValueError, "Input is not within the required interval of [1, 8]."),
    (lambda: R.RandomPosterize((1, 2, 3)), TypeError,
     "Size of bits should be a single integer or a list/tuple (min, max) of length 2."),
    (lambda: R.RandomSolarize([0, 255]), TypeError,
     "Argument threshold with value [0, 255] is not of type [<class 'tuple'>], but got <class 'list'>."),
    (lambda: R.RandomSolarize((10, 5)), ValueError, "threshold must be in min max format numbers."),
    (lambda: R.RandomGrayscale(2), ValueError, "Input prob is not within the required interval of [0.0, 1.0]."),
])
def test_argument_checks(make, exc, msg):
    with pytest.raises(exc) as info:
        make()
    assert str(info.value) == msg


def test_defaults_and_stored_arguments():
    assert R.RandomColorAdjust().brightness == (1, 1) and R.RandomColorAdjust().hue == (0, 0)
    op = R.RandomColorAdjust(brightness=0.4, contrast=1.5, hue=0.2)
    assert op.brightness == (0.6, 1.4) and op.contrast == (0, 2.5) and op.hue == (-0.2, 0.2)
    assert C.Solarize(7).threshold == (7, 7)
    assert C.GaussianBlur(3).kernel_size == (3,) and C.GaussianBlur(3).sigma == (0,)
    assert C.AutoContrast(ignore=5).ignore == [5]
    assert C.AdjustGamma(2).gain == 1
    assert R.RandomGrayscale().prob == 0.1
    assert R.RandomSharpness().degrees == (0.1, 1.9)


def test_implementation_kinds_and_randomness_flags():
    assert C.AdjustBrightness(1).implementation is None
    assert C.AdjustSharpness(1).implementation == Implementation.C
    assert C.Grayscale().implementation == Implementation.PY
    assert R.RandomGrayscale().implementation == Implementation.PY
    assert not C.Invert().random and R.RandomInvert().random and R.RandomColorAdjust().random


# ---------------------------------------------------------------- input checks

@pytest.mark.parametrize("op,img,msg", [
    (C.AdjustBrightness(1.3), np.zeros(5, np.uint8),
     "AdjustBrightness: the dimension of image tensor does not match the requirement of operator. Expecting tensor "
     "in dimension of (2, 3), in shape of <H, W> or <H, W, C>. But got dimension 1. You may need to perform Decode first."),
    (C.AdjustBrightness(1.3), np.zeros((2, 2, 4), np.uint8),
     "AdjustBrightness: the channel of image tensor does not match the requirement of operator. Expecting tensor in "
     "channel of (1, 3). But got channel 4."),
    (C.AdjustBrightness(1.3), np.zeros((5, 5, 3), np.int64),
     "AdjustBrightness: the data type of image tensor does not match the requirement of operator. Expecting tensor in "
     "type of (bool, int8, uint8, int16, uint16, int32, float16, float32, float64). But got type int64."),
    (C.AdjustContrast(1.3), np.zeros((5, 5, 3), np.int8),
     "AdjustContrast: the data type of image tensor does not match the requirement of operator. Expecting tensor in "
     "type of (uint8, uint16, float32). But got type int8."),
    (C.AdjustSaturation(1.3), np.zeros((5, 5), np.uint8),
     "AdjustSaturation: the dimension of image tensor does not match the requirement of operator. Expecting tensor in "
     "dimension of (3), in shape of <H, W, C>. But got dimension 2."),
    (C.AdjustHue(0.1), np.zeros((5, 5, 1), np.uint8),
     "AdjustHue: the channel of image tensor does not match the requirement of operator. Expecting tensor in channel "
     "of (3). But got channel 1."),
    (C.AdjustGamma(1.3), np.zeros(7, np.uint8), "AdjustGamma: input tensor is not in shape of <...,H,W,C> or <H,W>, got shape:<7>"),
    (C.AdjustGamma(1.3), np.zeros((2, 2, 4), np.uint8), "AdjustGamma: channel of input image should be 1 or 3, but got: 4"),
    (C.Equalize(), np.zeros((2, 2, 3), np.float32),
     "Equalize: the data type of image tensor does not match the requirement of operator. Expecting tensor in type of "
     "(uint8). But got type float32."),
    (C.Posterize(2), np.zeros((2, 2), np.float32),
     "Posterize: data type of input image should be int8 or uint8, but got float32"),
    (C.Invert(), np.zeros((2, 2), np.uint8), "Invert: input tensor is not in shape of <H,W,C>, but got rank: 2"),
    (C.Invert(), np.zeros((2, 2, 4), np.uint8), "Invert: the number of channels of input tensor is not 3, but got: 4"),
    (C.Equalize(), np.zeros((1, 2, 2, 3), np.uint8), "Equalize: image rank should be 2 or 3,  but got: 4"),
    (C.AutoContrast(), np.zeros((2, 2, 4), np.uint8), "AutoContrast: channel of input image should be 1 or 3, but got: 4"),
    (C.GaussianBlur(3), np.zeros(4, np.uint8),
     "GaussianBlur: input tensor is not in shape of <H,W> or <H,W,C>, but got rank: 1. You may need to perform "
     "Decode first."),
    (C.ConvertColor(ConvertMode.COLOR_RGB2BGR), np.zeros((2, 2, 2), np.uint8),
     "ConvertColor: number of channels of image should be 1, 3, 4, but got:2"),
    (R.RandomEqualize(1.0), np.zeros((2, 2), np.float32),
     "RandomEqualize: input image is not in type of uint8, but got: float32"),
    (R.RandomInvert(1.0), np.zeros((2, 2, 1), np.uint8),
     "RandomInvert: image shape is incorrect, expected num of channels is 3, but got:1"),
    (R.RandomAutoContrast(), np.zeros((1, 2, 2, 3), np.uint8),
     "RandomAutoContrast: image shape is not <H,W,C> or <H,W>, got rank: 4"),
    (C.AdjustSharpness(1.0), np.zeros((1, 2, 2, 3), np.uint8),
     "AdjustSharpness: shape of input is not <H,W,C> or <H,W>, but got rank: 4"),
    (C.ConvertColor(ConvertMode.COLOR_RGBA2GRAY), np.zeros((2, 2, 1), np.uint8),
     "ConvertColor: COLOR_RGBA2GRAY expects an image with 3 or 4 channels, but got 1."),
    (C.ConvertColor(ConvertMode.COLOR_GRAY2RGB), np.zeros((2, 2, 3), np.uint8),
     "ConvertColor: COLOR_GRAY2BGR expects an image with 1 channel, but got 3."),
    (R.RandomColor((1, 1)), np.zeros((2, 2), np.uint8),
     "RandomColor: image shape is not <H,W,C> or channel is not 3, got rank: 2, and shape: <2,2>"),
])
def test_bad_images_raise_runtime_errors_naming_the_op(op, img, msg):
    with pytest.raises(RuntimeError) as info:
        op(img)
    assert str(info.value) == msg


def test_non_image_input_is_a_type_error():
    with pytest.raises(TypeError, match=r"Input should be NumPy or PIL image, got <class 'list'>\."):
        C.Invert()([1, 2, 3])
    with pytest.raises(TypeError, match="img should be PIL image. Got <class 'numpy.ndarray'>"):
        C.Grayscale()(IMG)
    with pytest.raises(TypeError, match="img should be PIL image"):
        R.RandomGrayscale(1.0)(IMG)


def test_device_switch():
    op = C.Invert()
    assert op.device("CPU") is op
    with pytest.raises(ValueError, match=r"Input device_target is not within the valid set of \['CPU', 'Ascend'\]\."):
        op.device("GPU")
    with pytest.raises(RuntimeError, match="Ascend"):
        op.device("Ascend")(IMG)


# ---------------------------------------------------------------- outputs

def test_numpy_and_pil_paths():
    out = C.AdjustBrightness(1.3)(PIL_IMG)
    assert isinstance(out, Image.Image)
    assert np.array_equal(np.asarray(out), np.asarray(K.pil_adjust_brightness(PIL_IMG, 1.3)))
    assert np.array_equal(C.AdjustBrightness(1.3)(IMG), K.adjust_brightness(IMG, 1.3))
    # a C-only op turns a PIL image into an array
    sharp = C.AdjustSharpness(1.5)(PIL_IMG)
    assert isinstance(sharp, np.ndarray) and np.array_equal(sharp, K.adjust_sharpness(IMG, 1.5))
    assert C.Grayscale(3)(PIL_IMG).mode == "RGB"
    assert R.RandomGrayscale(1.0)(PIL_IMG.convert("L")).mode == "L"
    assert R.RandomGrayscale(1.0)(PIL_IMG).mode == "RGB"
    assert R.RandomGrayscale(0.0)(PIL_IMG) is PIL_IMG


def test_dtype_handling():
    assert C.AdjustGamma(2.0)(IMG.astype(np.float64) / 255).dtype == np.float32
    assert C.Posterize(3)(IMG.view(np.int8)).dtype == np.uint8
    assert C.AdjustSharpness(2.0)(IMG > 100).dtype == np.uint8
    assert C.AutoContrast()(GRAY > 100).dtype == np.uint8
    assert C.AdjustBrightness(2)(IMG > 100).dtype == np.bool_


def test_gaussian_blur_resolves_sigma_once():
    op = C.GaussianBlur((5, 3))
    assert op._ksize == (5, 3) and op._sigma == (K.gaussian_sigma(5), K.gaussian_sigma(5))
    op = C.GaussianBlur((3, 7), (0.5, 0))
    assert op._sigma == (0.5, K.gaussian_sigma(7))


def test_contrast_mean_rounds_half_to_even():
    # oracle: grey means 116.5 and 117.5 blend with 116 and 118
    for a, b, want in ((116, 117, 116), (117, 118, 118)):
        img = np.array([[[a] * 3, [b] * 3]], np.uint8)
        assert (C.AdjustContrast(0.0)(img) == want).all()


def test_convert_color_modes():
    rgba = np.dstack([IMG, GRAY])
    assert C.ConvertColor(ConvertMode.COLOR_RGBA2RGB)(rgba).shape == (8, 10, 3)
    assert C.ConvertColor(ConvertMode.COLOR_GRAY2RGB)(GRAY).shape == (8, 10, 3)
    assert C.ConvertColor(ConvertMode.COLOR_GRAY2RGB)(GRAY[..., None]).shape == (8, 10, 3)


# ---------------------------------------------------------------- random ops

def _run_keyed(op, img, key=(1, 2, 3)):
    with rng.sample_key(key):
        return op(img)


def test_pinned_random_ops_equal_their_deterministic_twins():
    assert np.array_equal(R.RandomColorAdjust((1.3, 1.3))(IMG), K.adjust_brightness(IMG, 1.3))
    assert np.array_equal(R.RandomColor((0.4, 0.4))(IMG), K.random_color(IMG, 0.4))
    assert np.array_equal(R.RandomSharpness((0.4, 0.4))(IMG), K.adjust_sharpness(IMG, 0.4))
    assert np.array_equal(R.RandomAdjustSharpness(0.4, 1.0)(IMG), K.adjust_sharpness(IMG, 0.4))
    assert np.array_equal(R.RandomAutoContrast(prob=1.0)(IMG), K.auto_contrast(IMG))
    assert np.array_equal(R.RandomEqualize(1.0)(IMG), K.equalize(IMG))
    assert np.array_equal(R.RandomInvert(1.0)(IMG), K.invert(IMG))
    assert np.array_equal(R.RandomPosterize(3)(IMG), K.posterize(IMG, 3))
    assert np.array_equal(R.RandomSolarize((77, 77))(IMG), K.solarize(IMG, (77, 77)))
    for op in (R.RandomAdjustSharpness(0.4, 0.0), R.RandomAutoContrast(prob=0.0), R.RandomEqualize(0.0),
               R.RandomInvert(0.0)):
        assert np.array_equal(op(IMG), IMG)


def test_random_ops_are_functions_of_the_sample_key():
    ops = [R.RandomColorAdjust(0.5, 0.5, 0.5, 0.2), R.RandomColor(), R.RandomSharpness(),
           R.RandomAdjustSharpness(2.0), R.RandomAutoContrast(), R.RandomEqualize(), R.RandomInvert(),
           R.RandomPosterize((1, 8)), R.RandomSolarize()]
    for op in ops:
        a, b = _run_keyed(op, IMG), _run_keyed(op, IMG)
        assert np.array_equal(a, b), type(op).__name__
    outs = {_run_keyed(R.RandomPosterize((1, 8)), IMG, (9, 9, k)).tobytes() for k in range(40)}
    assert len(outs) > 1


def test_random_color_adjust_applies_all_four_in_some_order():
    op = R.RandomColorAdjust((1.2, 1.2), (0.8, 0.8), (1.5, 1.5), (-0.1, -0.1))
    fns = {0: lambda x: K.adjust_brightness(x, 1.2), 1: lambda x: K.adjust_contrast(x, 0.8),
           2: lambda x: K.adjust_saturation(x, 1.5), 3: lambda x: K.adjust_hue(x, -0.1)}
    import itertools
    candidates = []
    for order in itertools.permutations(range(4)):
        y = IMG
        for k in order:
            y = fns[k](y)
        candidates.append(y)
    seen = set()
    for k in range(30):
        out = _run_keyed(op, IMG, (5, k))
        hits = [i for i, c in enumerate(candidates) if np.array_equal(c, out)]
        assert hits, "output is not any order of the four adjustments"
        seen.add(hits[0])
    assert len(seen) > 3


def test_random_color_adjust_pil_path_uses_pillow_kernels():
    op = R.RandomColorAdjust((1.3, 1.3))
    out = op(PIL_IMG)
    # the hue step (factor 0) still round-trips through HSV on the Pillow path
    want = K.pil_adjust_hue(K.pil_adjust_brightness(PIL_IMG, 1.3), 0.0)
    alt = K.pil_adjust_brightness(K.pil_adjust_hue(PIL_IMG, 0.0), 1.3)
    assert np.array_equal(np.asarray(out), np.asarray(want)) or np.array_equal(np.asarray(out), np.asarray(alt))


def test_random_solarize_draws_a_sorted_pair():
    x = np.arange(256, dtype=np.uint8).reshape(16, 16)
    for k in range(20):
        out = _run_keyed(R.RandomSolarize((50, 60)), x, (4, k))
        changed = np.flatnonzero(out.ravel() != x.ravel())
        assert changed.size and 50 <= changed.min() <= 60
        assert changed.max() <= 60 or changed.max() == 255


def test_random_posterize_bits_in_range():
    x = np.full((2, 2), 255, np.uint8)
    values = {int(_run_keyed(R.RandomPosterize((2, 4)), x, (8, k))[0, 0]) for k in range(60)}
    assert values == {192, 224, 240}
