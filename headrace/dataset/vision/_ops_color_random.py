"""The random color ops (RandomColorAdjust, RandomColor, RandomSharpness, RandomAdjustSharpness,
RandomAutoContrast, RandomEqualize, RandomInvert, RandomPosterize, RandomSolarize, RandomGrayscale):
each draws its parameters, then runs the kernel of its deterministic op in ``_ops_color.py``."""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from headrace._image import color as K
from headrace._util.rng import sample_rng
from headrace.dataset.transforms._base import Implementation
from headrace.dataset.transforms._checks import (
    FLOAT_MAX_INTEGER,
    UINT8_MAX,
    check_non_negative_float32,
    check_ordered_range,
    check_prob,
    check_range,
    check_uint8,
    type_check,
    type_check_list,
)
from headrace.dataset.vision._base import ImageTensorOperation, PyImageOperation, op_error
from headrace.dataset.vision._color_checks import (
    BLEND, CV_NO_F16, FILTER, HWC_OR_HW_MSGS, SHARPNESS_MSGS, U8, _require_pil, check_image,
)
from headrace.dataset.vision._ops_color import _check_cutoff_ignore, _posterize, _solarize

__all__ = [
    "RandomAdjustSharpness", "RandomAutoContrast", "RandomColor", "RandomColorAdjust",
    "RandomEqualize", "RandomGrayscale", "RandomInvert", "RandomPosterize", "RandomSharpness",
    "RandomSolarize",
]


def _color_range(value: Any, name: str, center: float = 1, bound: tuple[float, float] = (0, FLOAT_MAX_INTEGER),
                 non_negative: bool = True) -> tuple[float, float]:
    """RandomColorAdjust's argument rule: a number v means [center - v, center + v]."""
    type_check(value, (numbers.Number, list, tuple), name)
    if isinstance(value, numbers.Number):
        if value < 0:
            raise ValueError(f"The input value of {name} cannot be negative.")
        lo, hi = center - value, center + value
        if non_negative:
            lo = max(0, lo)
        check_ordered_range((lo, hi), bound)
        return lo, hi
    if len(value) != 2:
        raise TypeError(f"If {name} is a sequence, the length must be 2.")
    if value[0] > value[1]:
        raise ValueError(f"{name} value should be in (min,max) format. Got ({value[0]}, {value[1]}).")
    check_ordered_range(value, bound)
    return value[0], value[1]


class RandomColorAdjust(ImageTensorOperation):
    """Randomly adjusts brightness, contrast, saturation and hue, in a random order.

    Each factor is drawn uniformly from its range; the four adjustments then run in a random
    order. On NumPy input an adjustment whose drawn factor is the identity is skipped (hue's
    round trip through HSV is lossy); the Pillow path always runs all four.

    Args:
        brightness (Union[float, Sequence[float]], optional): a number v means
            [max(0, 1 - v), 1 + v]; a pair is [min, max]. Default: (1, 1).
        contrast (Union[float, Sequence[float]], optional): same rule. Default: (1, 1).
        saturation (Union[float, Sequence[float]], optional): same rule. Default: (1, 1).
        hue (Union[float, Sequence[float]], optional): a number v in [0, 0.5] means [-v, v]; a
            pair [min, max] must lie in [-0.5, 0.5]. Default: (0, 0).

    Raises:
        TypeError: if an argument is not a number or a pair.
        ValueError: if a value is negative or out of range, or a pair is not (min, max).
        RuntimeError: if the image is not <H, W, 3>.

    Examples:
        >>> import numpy as np
        >>> op = RandomColorAdjust(brightness=(2.0, 2.0))
        >>> op(np.array([[[10, 20, 30]]], dtype=np.uint8)).tolist()
        [[[20, 40, 60]]]
    """

    random = True

    def __init__(self, brightness=(1, 1), contrast=(1, 1), saturation=(1, 1), hue=(0, 0)):
        for value, name in ((brightness, "brightness"), (contrast, "contrast"), (saturation, "saturation")):
            type_check(value, (numbers.Number, list, tuple), name)
            if isinstance(value, numbers.Number):
                if value < 0:
                    raise ValueError(f"The input value of {name} cannot be negative.")
            else:
                _color_range(value, name)
        type_check(hue, (numbers.Number, list, tuple), "hue")
        if isinstance(hue, numbers.Number):
            if hue < 0:
                raise ValueError("The input value of hue cannot be negative.")
        else:
            _color_range(hue, "hue", 0, (-0.5, 0.5), False)
        self.brightness = _color_range(brightness, "brightness")
        self.contrast = _color_range(contrast, "contrast")
        self.saturation = _color_range(saturation, "saturation")
        self.hue = _color_range(hue, "hue", 0, (-0.5, 0.5), False)

    def _draw(self) -> tuple[list[float], np.ndarray]:
        rng = sample_rng()
        factors = [float(rng.uniform(lo, hi)) if lo != hi else float(lo)
                   for lo, hi in (self.brightness, self.contrast, self.saturation, self.hue)]
        return factors, rng.permutation(4)

    def _run(self, img):
        check_image(img, "RandomColorAdjust", ranks=(3,), channels=(3,), dtypes=CV_NO_F16 + ("float16",))
        factors, order = self._draw()
        for k in order:
            f = factors[k]
            if k == 0 and f != 1:
                img = K.adjust_brightness(img, f)
            elif k == 1 and f != 1:
                check_image(img, "AdjustContrast", ranks=(3,), channels=(3,), dtypes=BLEND)
                img = K.adjust_contrast(img, f)
            elif k == 2 and f != 1:
                check_image(img, "AdjustSaturation", ranks=(3,), channels=(3,), dtypes=BLEND)
                img = K.adjust_saturation(img, f)
            elif k == 3 and f != 0:
                check_image(img, "AdjustHue", ranks=(3,), channels=(3,), dtypes=("uint8", "float32"))
                img = K.adjust_hue(img, f)
        return img

    def _run_pil(self, img):
        factors, order = self._draw()
        kernels = (K.pil_adjust_brightness, K.pil_adjust_contrast, K.pil_adjust_saturation, K.pil_adjust_hue)
        for k in order:
            img = kernels[k](img, factors[k])
        return img


def _check_degrees(degrees: Any) -> None:
    if degrees is not None:
        if not isinstance(degrees, (list, tuple)):
            raise TypeError("degrees must be either a tuple or a list.")
        type_check_list(degrees, (int, float), "degrees")
        if len(degrees) != 2:
            raise ValueError("degrees must be a sequence with length 2.")
        for degree in degrees:
            check_range(degree, (0, FLOAT_MAX_INTEGER))
        if degrees[0] > degrees[1]:
            raise ValueError("degrees should be in (min,max) format. Got (max,min).")


def _uniform(lo: float, hi: float) -> float:
    return float(sample_rng().uniform(lo, hi)) if lo != hi else float(lo)


class _DegreesOperation(ImageTensorOperation):
    """RandomColor and RandomSharpness: a factor drawn uniformly from `degrees` on each call."""

    random = True

    def __init__(self, degrees=(0.1, 1.9)):
        _check_degrees(degrees)
        self.degrees = degrees


class RandomColor(_DegreesOperation):
    """Blends the image with its grey version by a factor drawn uniformly from `degrees`.

    Args:
        degrees (Sequence[float], optional): (min, max), non-negative. Default: (0.1, 1.9).

    Raises:
        TypeError: if `degrees` is not a list or tuple of numbers.
        ValueError: if it does not have 2 values, one is negative, or min > max.
        RuntimeError: if the image is not <H, W, 3>.

    Examples:
        >>> import numpy as np
        >>> RandomColor((0.0, 0.0))(np.array([[[255, 0, 0]]], dtype=np.uint8)).tolist()
        [[[76, 76, 76]]]
    """

    def _run(self, img):
        if img.ndim != 3 or img.shape[2] != 3:
            raise op_error("RandomColor", f"image shape is not <H,W,C> or channel is not 3, got rank: "
                                          f"{img.ndim}, and shape: <{','.join(str(s) for s in img.shape)}>")
        check_image(img, "RandomColor", ranks=(3,), channels=(3,), dtypes=("bool",) + BLEND)
        if img.dtype == np.bool_:
            img = img.view(np.uint8)
        return K.random_color(img, _uniform(*self.degrees))

    def _run_pil(self, img):
        return K.pil_adjust_saturation(img, _uniform(*self.degrees))


class RandomSharpness(_DegreesOperation):
    """Adjusts the sharpness by a factor drawn uniformly from `degrees`.

    Args:
        degrees (Sequence[float], optional): as in :class:`RandomColor`. Default: (0.1, 1.9).

    Raises:
        TypeError, ValueError: where :class:`RandomColor` raises them for `degrees`.
        RuntimeError: if the image is not <H, W> or <H, W, C>.

    Examples:
        >>> import numpy as np
        >>> img = np.zeros((3, 3), np.uint8); img[1, 1] = 130
        >>> int(RandomSharpness((0.0, 0.0))(img)[1, 1])
        50
    """

    def _run(self, img):
        check_image(img, "RandomSharpness", channels=None, dtypes=FILTER, msgs=SHARPNESS_MSGS)
        if img.dtype == np.bool_:
            img = img.view(np.uint8)
        return K.adjust_sharpness(img, _uniform(*self.degrees))

    def _run_pil(self, img):
        return K.pil_adjust_sharpness(img, _uniform(*self.degrees))


def _hit(prob: float) -> bool:
    return bool(sample_rng().random() < prob)


class _ProbOperation(ImageTensorOperation):
    """The NumPy ops that run with probability `prob`: ``_run`` checks the input (``_checked``),
    draws, and runs ``_apply`` on a hit. RandomEqualize and RandomInvert take only `prob`; the
    others check their own arguments first."""

    implementation = Implementation.C
    random = True

    def __init__(self, prob=0.5):
        check_prob(prob)
        self.prob = prob

    def _run(self, img):
        img = self._checked(img)
        return self._apply(img) if _hit(self.prob) else img

    def _checked(self, img: np.ndarray) -> np.ndarray:
        """Checks the input (MindSpore checks it before the draw); returns what ``_apply`` takes."""
        raise NotImplementedError

    def _apply(self, img: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class RandomAdjustSharpness(_ProbOperation):
    """With probability `prob`, adjusts the sharpness by `degree` (see AdjustSharpness).

    Args:
        degree (float): non-negative sharpness factor.
        prob (float, optional): probability of applying it, in [0, 1]. Default: 0.5.

    Raises:
        TypeError: if `degree` or `prob` is not a number.
        ValueError: if `degree` is negative or `prob` is not in [0, 1].
        RuntimeError: if the image is not <H, W> or <H, W, C>.

    Examples:
        >>> import numpy as np
        >>> img = np.zeros((3, 3), np.uint8); img[1, 1] = 130
        >>> int(RandomAdjustSharpness(0.0, prob=1.0)(img)[1, 1])
        50
    """

    def __init__(self, degree, prob=0.5):
        check_non_negative_float32(degree, "degree")
        super().__init__(prob)
        self.degree = degree

    def _checked(self, img):
        check_image(img, "RandomAdjustSharpness", channels=None, dtypes=FILTER,
                    msgs={"rank": "image shape is not <H,W,C> or <H,W>, got rank: {nd}"})
        return img.view(np.uint8) if img.dtype == np.bool_ else img

    def _apply(self, img):
        return K.adjust_sharpness(img, self.degree)


class RandomAutoContrast(_ProbOperation):
    """With probability `prob`, applies AutoContrast(cutoff, ignore).

    Args:
        cutoff (float, optional): percent to drop at each end, in [0, 50). Default: 0.0.
        ignore (Union[int, sequence], optional): values to leave out, in [0, 255]. Default: None.
        prob (float, optional): probability, in [0, 1]. Default: 0.5.

    Raises:
        TypeError: if an argument has the wrong type.
        ValueError: if an argument is out of range.
        RuntimeError: if the image is not uint8 <H, W> or <H, W, 3>.

    Examples:
        >>> import numpy as np
        >>> RandomAutoContrast(prob=1.0)(np.array([[50, 100, 150]], dtype=np.uint8)).tolist()
        [[0, 127, 255]]
    """

    def __init__(self, cutoff=0.0, ignore=None, prob=0.5):
        self._ignore = _check_cutoff_ignore(cutoff, ignore)
        super().__init__(prob)
        self.cutoff = cutoff
        self.ignore = list(self._ignore)

    def _checked(self, img):
        check_image(img, "RandomAutoContrast", channels=(3,), dtypes=("bool", "uint8"), msgs={
            "rank": "image shape is not <H,W,C> or <H,W>, got rank: {nd}",
            "channel": "image shape is incorrect, expected num of channels is 3, but got: {c}"})
        return img.view(np.uint8) if img.dtype == np.bool_ else img

    def _apply(self, img):
        return K.auto_contrast(img, self.cutoff, self._ignore)


class RandomEqualize(_ProbOperation):
    """With probability `prob`, equalises the histogram (see Equalize).

    Args:
        prob (float, optional): probability, in [0, 1]. Default: 0.5.

    Raises:
        TypeError: if `prob` is not a number.
        ValueError: if it is not in [0, 1].
        RuntimeError: if the image is not uint8 <H, W> or <H, W, C> with 1 or 3 channels.

    Examples:
        >>> import numpy as np
        >>> RandomEqualize(1.0)(np.array([[10, 10, 20, 30]], dtype=np.uint8)).tolist()
        [[0, 0, 128, 255]]
    """

    def _checked(self, img):
        check_image(img, "RandomEqualize", dtypes=U8, msgs=dict(
            HWC_OR_HW_MSGS, channel="input image is not in channel of 1 or 3, but got: {c}",
            dtype="input image is not in type of uint8, but got: {dt}"))
        return img

    def _apply(self, img):
        return K.equalize(img)


class RandomInvert(_ProbOperation):
    """With probability `prob`, inverts the image (see Invert).

    Args:
        prob (float, optional): probability, in [0, 1]. Default: 0.5.

    Raises:
        TypeError: if `prob` is not a number.
        ValueError: if it is not in [0, 1].
        RuntimeError: if the image is not <H, W, 3>.

    Examples:
        >>> import numpy as np
        >>> RandomInvert(1.0)(np.array([[[0, 100, 255]]], dtype=np.uint8)).tolist()
        [[[255, 155, 0]]]
    """

    def _checked(self, img):
        check_image(img, "RandomInvert", ranks=(3,), channels=(3,), dtypes=CV_NO_F16, msgs={
            "rank": "image shape is not <H,W,C>, got rank: {nd}",
            "channel": "image shape is incorrect, expected num of channels is 3, but got:{c}"})
        return img

    def _apply(self, img):
        return K.invert(img)


class RandomPosterize(ImageTensorOperation):
    """Posterizes to a number of bits drawn uniformly from `bits` (see Posterize).

    Args:
        bits (Union[int, Sequence[int]], optional): (min, max) in [1, 8], or a fixed number.
            Default: (8, 8).

    Raises:
        TypeError: if `bits` is not an int or a pair of ints.
        ValueError: if a value is not in [1, 8] or min > max.
        RuntimeError: if the image is not a uint8 <H, W> or <H, W, C> array.

    Examples:
        >>> import numpy as np
        >>> RandomPosterize((2, 2))(np.array([[255, 100]], dtype=np.uint8)).tolist()
        [[192, 64]]
    """

    implementation = Implementation.C
    random = True

    def __init__(self, bits=(8, 8)):
        if bits is not None:
            type_check(bits, (list, tuple, int), "bits")
        if isinstance(bits, int):
            check_range(bits, (1, 8))
        if isinstance(bits, (list, tuple)):
            if len(bits) != 2:
                raise TypeError("Size of bits should be a single integer or a list/tuple (min, max) of "
                                "length 2.")
            for item in bits:
                check_uint8(item, "bits")
            check_ordered_range(bits, (1, 8))
        self.bits = bits
        if bits is None:
            bits = (8, 8)
        self._range = (bits, bits) if isinstance(bits, int) else (int(bits[0]), int(bits[1]))

    def _run(self, img):
        lo, hi = self._range
        bits = lo if lo == hi else int(sample_rng().integers(lo, hi, endpoint=True))
        return _posterize(img, "RandomPosterize", bits)


class RandomSolarize(ImageTensorOperation):
    """Solarizes a random sub-range of `threshold` (see Solarize).

    Two values are drawn uniformly from the range; the values between them are inverted (when
    they are equal: every value >= it).

    Args:
        threshold (tuple, optional): (min, max) ints in [0, 255]. Default: (0, 255).

    Raises:
        TypeError: if `threshold` is not a tuple of ints.
        ValueError: if it does not have 2 values, one is outside [0, 255], or min > max.
        RuntimeError: if the image is not <H, W> or <H, W, C> with 1 or 3 channels.

    Examples:
        >>> import numpy as np
        >>> RandomSolarize((128, 128))(np.array([[100, 200]], dtype=np.uint8)).tolist()
        [[100, 55]]
    """

    implementation = Implementation.C
    random = True

    def __init__(self, threshold=(0, 255)):
        type_check(threshold, (tuple,), "threshold")
        type_check_list(threshold, (int,), "threshold")
        if len(threshold) != 2:
            raise ValueError("threshold must be a sequence of two numbers.")
        for element in threshold:
            check_range(element, (0, UINT8_MAX))
        if threshold[1] < threshold[0]:
            raise ValueError("threshold must be in min max format numbers.")
        self.threshold = threshold

    def _run(self, img):
        lo, hi = self.threshold
        a, b = (lo, lo) if lo == hi else sorted(int(v) for v in sample_rng().integers(lo, hi, size=2, endpoint=True))
        return _solarize(img, "RandomSolarize", (float(a), float(b)))


class RandomGrayscale(PyImageOperation):
    """With probability `prob`, converts a PIL image to grey, keeping its channel count (1 or 3).

    Args:
        prob (float, optional): probability, in [0, 1]. Default: 0.1.

    Raises:
        TypeError: if `prob` is not a number, or the input is not a PIL image.
        ValueError: if it is not in [0, 1].

    Examples:
        >>> from PIL import Image
        >>> RandomGrayscale(1.0)(Image.new("RGB", (2, 2), (255, 0, 0))).getpixel((0, 0))
        (76, 76, 76)
    """

    random = True

    def __init__(self, prob=0.1):
        check_prob(prob)
        self.prob = prob

    def _run_pil(self, img):
        _require_pil(img)
        channels = 1 if img.mode == "L" else 3
        if _hit(self.prob):
            return K.pil_grayscale(img, channels)
        return img
