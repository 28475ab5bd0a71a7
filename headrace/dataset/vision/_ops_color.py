"""Colour operations of ``headrace.dataset.vision`` (MindSpore's names, signatures and checks).

Deterministic: AdjustBrightness, AdjustContrast, AdjustSaturation, AdjustHue, AdjustGamma,
AdjustSharpness, AutoContrast, ConvertColor, Equalize, GaussianBlur, Grayscale, Invert,
Posterize, Solarize. Random: RandomColorAdjust, RandomColor, RandomSharpness,
RandomAdjustSharpness, RandomAutoContrast, RandomEqualize, RandomInvert, RandomPosterize,
RandomSolarize, RandomGrayscale.

Ops with a Pillow path (MindSpore's "dual" ops) run it when called on a ``PIL.Image`` and return
an image; everything else runs the NumPy kernels in ``headrace/_image/color.py``.

The module is longer than our usual ~800 lines: 24 small classes, mostly docstrings and
argument checks. They share the input checks and factor rules at the top, so they stay together.
"""
from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np
from PIL import Image

from headrace._util.rng import sample_rng
from headrace.dataset.transforms._base import Implementation
from headrace.dataset.transforms._checks import (FLOAT_MAX_INTEGER, FLOAT_MIN_INTEGER, UINT8_MAX,
                                                 check_non_negative_float32, check_prob, check_ordered_range,
                                                 check_uint8, check_range, type_check, type_check_list)
from headrace.dataset.vision._base import ImageTensorOperation, PyImageOperation, op_error
from headrace._image import color as K
from headrace.dataset.vision.utils import ConvertMode

__all__ = [
    "AdjustBrightness", "AdjustContrast", "AdjustGamma", "AdjustHue", "AdjustSaturation",
    "AdjustSharpness", "AutoContrast", "ConvertColor", "Equalize", "GaussianBlur", "Grayscale",
    "Invert", "Posterize", "RandomAdjustSharpness", "RandomAutoContrast", "RandomColor",
    "RandomColorAdjust", "RandomEqualize", "RandomGrayscale", "RandomInvert", "RandomPosterize",
    "RandomSharpness", "RandomSolarize", "Solarize",
]

# ------------------------------------------------------------------------- input checks

_NAMES = {np.dtype(np.bool_): "bool", np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8",
          np.dtype(np.int16): "int16", np.dtype(np.uint16): "uint16", np.dtype(np.int32): "int32",
          np.dtype(np.uint32): "uint32", np.dtype(np.int64): "int64", np.dtype(np.uint64): "uint64",
          np.dtype(np.float16): "float16", np.dtype(np.float32): "float32",
          np.dtype(np.float64): "float64"}

ALL_CV = ("bool", "int8", "uint8", "int16", "uint16", "int32", "float16", "float32", "float64")
CV_NO_F16 = ("bool", "int8", "uint8", "int16", "uint16", "int32", "float32", "float64")
U8 = ("uint8",)
BLEND = ("uint8", "uint16", "float32")
FILTER = ("bool", "uint8", "int16", "uint16", "float32", "float64")


def _dtype_name(dtype: np.dtype) -> str:
    return _NAMES.get(dtype, str(dtype))


def _tuple_text(values: Sequence[Any]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ")"


def check_image(img: np.ndarray, op: str, *, ranks: Sequence[int] = (2, 3),
                channels: Sequence[int] | None = (1, 3), dtypes: Sequence[str] | None = ALL_CV,
                msgs: dict[str, str] | None = None) -> None:
    """Raises ``RuntimeError("<op>: ...")`` unless ``img`` has an accepted rank, channel count and dtype.

    The texts are MindSpore's ("the dimension of image tensor does not match the requirement of
    operator. Expecting tensor in dimension of (2, 3), ... But got dimension 4.").

    Args:
        img: the array the op got.
        op: op name for the message.
        ranks: accepted numbers of dimensions.
        channels: accepted sizes of the last axis of a 3-D image (None: any).
        dtypes: accepted dtype names (None: any).
        msgs: texts replacing the default ones, keyed "rank" ("rank1" for 1-D input), "channel" or
            "dtype"; they may use
            ``{nd}`` (rank), ``{c}`` (channels) and ``{dt}`` (dtype name).
    """
    nd = img.ndim
    msgs = msgs or _NO_MSGS
    if nd not in ranks and "rank" in msgs:
        raise op_error(op, msgs["rank1" if nd == 1 and "rank1" in msgs else "rank"].format(nd=nd))
    if channels is not None and nd == 3 and img.shape[2] not in channels and "channel" in msgs:
        raise op_error(op, msgs["channel"].format(c=img.shape[2]))
    if dtypes is not None and _dtype_name(img.dtype) not in dtypes and "dtype" in msgs:
        raise op_error(op, msgs["dtype"].format(dt=_dtype_name(img.dtype)))
    if nd not in ranks:
        shape = "<H, W> or <H, W, C>" if tuple(ranks) == (2, 3) else (
            "<H, W, C>" if tuple(ranks) == (3,) else "<H, W>")
        hint = " You may need to perform Decode first." if nd == 1 else ""
        raise op_error(op, f"the dimension of image tensor does not match the requirement of operator. "
                           f"Expecting tensor in dimension of {_tuple_text(ranks)}, in shape of {shape}. "
                           f"But got dimension {nd}.{hint}")
    if channels is not None and nd == 3 and img.shape[2] not in channels:
        raise op_error(op, f"the channel of image tensor does not match the requirement of operator. "
                           f"Expecting tensor in channel of {_tuple_text(channels)}. "
                           f"But got channel {img.shape[2]}.")
    if dtypes is not None and _dtype_name(img.dtype) not in dtypes:
        raise op_error(op, f"the data type of image tensor does not match the requirement of operator. "
                           f"Expecting tensor in type of {_tuple_text(dtypes)}. "
                           f"But got type {_dtype_name(img.dtype)}.")


_NO_MSGS: dict[str, str] = {}
# MindSpore's own texts for some ops' input errors.
INVERT_MSGS = {"rank": "input tensor is not in shape of <H,W,C>, but got rank: {nd}",
               "channel": "the number of channels of input tensor is not 3, but got: {c}"}
HIST_MSGS = {"rank": "image rank should be 2 or 3,  but got: {nd}",
             "channel": "channel of input image should be 1 or 3, but got: {c}"}
POSTERIZE_MSGS = {"rank": "input image is not in shape of <H,W,C> or <H,W>, but got rank: {nd}",
                  "dtype": "data type of input image should be int8 or uint8, but got {dt}"}
SHARPNESS_MSGS = {"rank": "shape of input is not <H,W,C> or <H,W>, but got rank: {nd}"}
HWC_OR_HW_MSGS = {"rank": "input tensor is not in shape of <H,W> or <H,W,C>, but got rank: {nd}",
                  "rank1": "input tensor is not in shape of <H,W> or <H,W,C>, but got rank: {nd}. You may need "
                           "to perform Decode first."}

PIL_REQUIRED = "img should be PIL image. Got {}. Use Decode() for encoded data or ToPIL() for decoded data."


def _require_pil(img: Any) -> None:
    if not isinstance(img, Image.Image):
        raise TypeError(PIL_REQUIRED.format(type(img)))


class _Device:
    """MindSpore's ``.device()`` switch; headrace runs on the CPU only."""

    device_target = "CPU"

    def device(self, device_target: str = "CPU") -> Any:
        """Selects where the op runs. Only ``"CPU"`` runs in headrace.

        Args:
            device_target (str, optional): ``"CPU"`` or ``"Ascend"``. Default: ``"CPU"``.

        Returns:
            the op itself.

        Raises:
            TypeError: if `device_target` is not a str.
            ValueError: if it is not "CPU" or "Ascend".
        """
        type_check(device_target, (str,), "device_target")
        if device_target not in ("CPU", "Ascend"):
            raise ValueError("Input device_target is not within the valid set of ['CPU', 'Ascend'].")
        self.device_target = device_target
        return self

    def _check_device(self) -> None:
        if self.device_target != "CPU":
            raise RuntimeError(f"{type(self).__name__}: device_target 'Ascend' is not available in "
                               f"headrace; call .device('CPU').")


def _factor(value: Any, name: str | None) -> float:
    type_check(value, (float, int), name)
    return float(value)


# ------------------------------------------------------------------------- adjust ops

class AdjustBrightness(_Device, ImageTensorOperation):
    """Adjusts the brightness: every value is multiplied by `brightness_factor`.

    Args:
        brightness_factor (float): non-negative multiplier; 0 gives black, 1 the original.

    Raises:
        TypeError: if `brightness_factor` is not a number.
        ValueError: if it is negative.
        RuntimeError: if the image is not <H, W> or <H, W, C> with 1 or 3 channels.

    Examples:
        >>> import numpy as np
        >>> AdjustBrightness(2.0)(np.array([[10, 200]], dtype=np.uint8)).tolist()
        [[20, 255]]
    """

    def __init__(self, brightness_factor):
        _factor(brightness_factor, "brightness_factor")
        check_range(brightness_factor, (0, FLOAT_MAX_INTEGER), "brightness_factor")
        self.brightness_factor = brightness_factor

    def _run(self, img):
        self._check_device()
        check_image(img, "AdjustBrightness")
        return K.adjust_brightness(img, self.brightness_factor)

    def _run_pil(self, img):
        return K.pil_adjust_brightness(img, self.brightness_factor)


class AdjustContrast(_Device, ImageTensorOperation):
    """Adjusts the contrast: blends the image with the mean of its grey version.

    Args:
        contrast_factor (float): non-negative; 0 gives a flat grey image, 1 the original.

    Raises:
        TypeError: if `contrast_factor` is not a number.
        ValueError: if it is negative.
        RuntimeError: if the image is not <H, W, 3> uint8, uint16 or float32.

    Examples:
        >>> import numpy as np
        >>> AdjustContrast(0.0)(np.array([[[0, 0, 0], [200, 200, 200]]], dtype=np.uint8)).tolist()
        [[[100, 100, 100], [100, 100, 100]]]
    """

    def __init__(self, contrast_factor):
        _factor(contrast_factor, "contrast_factor")
        check_range(contrast_factor, (0, FLOAT_MAX_INTEGER), "contrast_factor")
        self.contrast_factor = contrast_factor

    def _run(self, img):
        self._check_device()
        check_image(img, "AdjustContrast", ranks=(3,), channels=(3,), dtypes=BLEND)
        return K.adjust_contrast(img, self.contrast_factor)

    def _run_pil(self, img):
        return K.pil_adjust_contrast(img, self.contrast_factor)


class AdjustSaturation(_Device, ImageTensorOperation):
    """Adjusts the saturation: blends the image with its grey version.

    Args:
        saturation_factor (float): non-negative; 0 gives the grey image, 1 the original.

    Raises:
        TypeError: if `saturation_factor` is not a number.
        ValueError: if it is negative.
        RuntimeError: if the image is not <H, W, 3> uint8, uint16 or float32.

    Examples:
        >>> import numpy as np
        >>> AdjustSaturation(0.0)(np.array([[[255, 0, 0]]], dtype=np.uint8)).tolist()
        [[[76, 76, 76]]]
    """

    def __init__(self, saturation_factor):
        _factor(saturation_factor, "saturation_factor")
        check_range(saturation_factor, (0, FLOAT_MAX_INTEGER))
        self.saturation_factor = saturation_factor

    def _run(self, img):
        self._check_device()
        check_image(img, "AdjustSaturation", ranks=(3,), channels=(3,), dtypes=BLEND)
        return K.adjust_saturation(img, self.saturation_factor)

    def _run_pil(self, img):
        return K.pil_adjust_saturation(img, self.saturation_factor)


class AdjustHue(_Device, ImageTensorOperation):
    """Rotates the hue by `hue_factor` of a full turn.

    Args:
        hue_factor (float): in [-0.5, 0.5].

    Raises:
        TypeError: if `hue_factor` is not a number.
        ValueError: if it is outside [-0.5, 0.5].
        RuntimeError: if the image is not <H, W, 3> uint8 or float32.

    Examples:
        >>> import numpy as np
        >>> AdjustHue(0.5)(np.array([[[255, 0, 0]]], dtype=np.uint8)).tolist()
        [[[0, 255, 252]]]
    """

    def __init__(self, hue_factor):
        _factor(hue_factor, "hue_factor")
        check_range(hue_factor, (-0.5, 0.5), "hue_factor")
        self.hue_factor = hue_factor

    def _run(self, img):
        self._check_device()
        check_image(img, "AdjustHue", ranks=(3,), channels=(3,), dtypes=("uint8", "float32"))
        return K.adjust_hue(img, self.hue_factor)

    def _run_pil(self, img):
        return K.pil_adjust_hue(img, self.hue_factor)


class AdjustGamma(ImageTensorOperation):
    r"""Gamma correction: :math:`out = 255 \cdot gain \cdot (in / 255)^{\gamma}`.

    Integer images go through a truncating 256-entry table; float images (taken to lie in
    [0, 1]) give ``clip((gain * x) ** gamma, 0, 1)`` as float32.

    Args:
        gamma (float): non-negative exponent; above 1 darkens, below 1 lightens.
        gain (float, optional): multiplier. Default: 1.

    Raises:
        TypeError: if `gamma` or `gain` is not a number.
        ValueError: if `gamma` is negative.
        RuntimeError: if the image is not <H, W> or <..., H, W, C> with 1 or 3 channels.

    Examples:
        >>> import numpy as np
        >>> AdjustGamma(2.0)(np.array([[0, 128, 255]], dtype=np.uint8)).tolist()
        [[0, 64, 255]]
    """

    def __init__(self, gamma, gain=1):
        _factor(gamma, "gamma")
        check_range(gamma, (0, FLOAT_MAX_INTEGER))
        if gain is not None:
            _factor(gain, "gain")
            check_range(gain, (FLOAT_MIN_INTEGER, FLOAT_MAX_INTEGER))
        self.gamma = gamma
        self.gain = gain
        self._gain = 1.0 if gain is None else float(gain)

    def _run(self, img):
        if img.ndim < 2:
            raise op_error("AdjustGamma", f"input tensor is not in shape of <...,H,W,C> or <H,W>, got "
                                          f"shape:<{','.join(str(s) for s in img.shape)}>")
        if img.ndim > 2 and img.shape[-1] not in (1, 3):
            raise op_error("AdjustGamma", f"channel of input image should be 1 or 3, but got: {img.shape[-1]}")
        check_image(img, "AdjustGamma", ranks=(img.ndim,), channels=None, dtypes=ALL_CV)
        return K.adjust_gamma(img, self.gamma, self._gain)

    def _run_pil(self, img):
        return K.pil_adjust_gamma(img, self.gamma, self._gain)


class AdjustSharpness(_Device, ImageTensorOperation):
    """Adjusts the sharpness: blends with a smoothed copy (0 blurs, 1 keeps, 2 sharpens).

    Args:
        sharpness_factor (float): non-negative blend factor.

    Raises:
        TypeError: if `sharpness_factor` is not a number.
        ValueError: if it is negative.
        RuntimeError: if the image is not <H, W> or <H, W, C>.

    Examples:
        >>> import numpy as np
        >>> img = np.zeros((3, 3), np.uint8); img[1, 1] = 130
        >>> int(AdjustSharpness(0.0)(img)[1, 1])
        50
    """

    implementation = Implementation.C

    def __init__(self, sharpness_factor):
        _factor(sharpness_factor, "sharpness_factor")
        check_range(sharpness_factor, (0, FLOAT_MAX_INTEGER))
        self.sharpness_factor = sharpness_factor

    def _run(self, img):
        self._check_device()
        check_image(img, "AdjustSharpness", channels=None, dtypes=FILTER, msgs=SHARPNESS_MSGS)
        if img.dtype == np.bool_:
            img = img.view(np.uint8)
        return K.adjust_sharpness(img, self.sharpness_factor)


class Invert(_Device, ImageTensorOperation):
    """Inverts an RGB image: ``255 - x`` (saturated into the dtype).

    Raises:
        RuntimeError: if the image is not <H, W, 3>.

    Examples:
        >>> import numpy as np
        >>> Invert()(np.array([[[0, 100, 255]]], dtype=np.uint8)).tolist()
        [[[255, 155, 0]]]
    """

    def __init__(self):
        pass

    def _run(self, img):
        self._check_device()
        check_image(img, "Invert", ranks=(3,), channels=(3,), dtypes=CV_NO_F16, msgs=INVERT_MSGS)
        return K.invert(img)

    def _run_pil(self, img):
        return K.pil_invert(img)


class Equalize(_Device, ImageTensorOperation):
    """Equalises the histogram of each channel of a uint8 image.

    Raises:
        RuntimeError: if the image is not uint8 <H, W> or <H, W, C> with 1 or 3 channels.

    Examples:
        >>> import numpy as np
        >>> Equalize()(np.array([[10, 10, 20, 30]], dtype=np.uint8)).tolist()
        [[0, 0, 128, 255]]
    """

    def __init__(self):
        pass

    def _run(self, img):
        self._check_device()
        check_image(img, "Equalize", dtypes=U8, msgs=HIST_MSGS)
        return K.equalize(img)

    def _run_pil(self, img):
        return K.pil_equalize(img)


def _check_cutoff_ignore(cutoff: Any, ignore: Any) -> list[int]:
    type_check(cutoff, (int, float), "cutoff")
    check_range(cutoff, (0, 50), "cutoff", right_open=True)
    if ignore is not None:
        type_check(ignore, (list, tuple, int), "ignore")
    if isinstance(ignore, int):
        check_range(ignore, (0, 255), "ignore")
    if isinstance(ignore, (list, tuple)):
        for item in ignore:
            type_check(item, (int,), "item")
            check_range(item, (0, 255), "ignore")
    if ignore is None:
        return []
    return [ignore] if isinstance(ignore, int) else list(ignore)


class AutoContrast(_Device, ImageTensorOperation):
    """Stretches each channel's histogram to the full [0, 255] range.

    The C path (NumPy input) counts `cutoff` in whole percents, as MindSpore's C++ op does; the
    Pillow path honours fractions.

    Args:
        cutoff (float, optional): percent of the darkest and lightest pixels to drop, in
            [0.0, 50.0). Default: 0.0.
        ignore (Union[int, sequence], optional): background values to leave out of the
            histogram, in [0, 255]. Default: None.

    Raises:
        TypeError: if `cutoff` is not a number or `ignore` is not an int or a sequence of ints.
        ValueError: if `cutoff` is not in [0, 50) or an `ignore` value is not in [0, 255].
        RuntimeError: if the image is not uint8 <H, W> or <H, W, C> with 1 or 3 channels.

    Examples:
        >>> import numpy as np
        >>> AutoContrast()(np.array([[50, 100, 150]], dtype=np.uint8)).tolist()
        [[0, 127, 255]]
    """

    def __init__(self, cutoff=0.0, ignore=None):
        self._ignore = _check_cutoff_ignore(cutoff, ignore)
        self.cutoff = cutoff
        self.ignore = list(self._ignore)

    def _run(self, img):
        self._check_device()
        check_image(img, "AutoContrast", dtypes=("bool", "uint8"), msgs=HIST_MSGS)
        if img.dtype == np.bool_:
            img = img.view(np.uint8)
        return K.auto_contrast(img, self.cutoff, self._ignore)

    def _run_pil(self, img):
        return K.pil_auto_contrast(img, self.cutoff, self._ignore)


class Posterize(_Device, ImageTensorOperation):
    """Keeps the `bits` highest bits of every value of a uint8 image.

    Args:
        bits (int): bits to keep, in [0, 8]; 0 gives black.

    Raises:
        TypeError: if `bits` is not an int.
        ValueError: if it is not in [0, 8].
        RuntimeError: if the image is not a uint8 (or int8) <H, W> or <H, W, C> array.

    Examples:
        >>> import numpy as np
        >>> Posterize(2)(np.array([[255, 100]], dtype=np.uint8)).tolist()
        [[192, 64]]
    """

    implementation = Implementation.C

    def __init__(self, bits):
        type_check(bits, (int,), "bits")
        check_range(bits, (0, 8), "bits")
        self.bits = bits

    def _run(self, img):
        self._check_device()
        return _posterize(img, "Posterize", self.bits)


def _posterize(img: np.ndarray, op: str, bits: int) -> np.ndarray:
    check_image(img, op, channels=None, dtypes=("bool", "int8", "uint8"), msgs=POSTERIZE_MSGS)
    if img.dtype != np.uint8:
        img = img.view(np.uint8)
    return K.posterize(img, bits)


class Solarize(_Device, ImageTensorOperation):
    """Inverts (``255 - x``) the values inside a threshold range.

    Args:
        threshold (Union[float, Sequence[float, float]]): (min, max) in [0, 255]; a single number
            t means "every value >= t".

    Raises:
        TypeError: if `threshold` is not a number or a sequence of two numbers.
        ValueError: if a threshold is outside [0, 255] or min > max.
        RuntimeError: if the image is not <H, W> or <H, W, C> with 1 or 3 channels.

    Examples:
        >>> import numpy as np
        >>> Solarize(128)(np.array([[100, 200]], dtype=np.uint8)).tolist()
        [[100, 55]]
    """

    implementation = Implementation.C

    def __init__(self, threshold):
        type_check(threshold, (float, int, list, tuple), "threshold")
        pair = (threshold, threshold) if isinstance(threshold, (float, int)) else threshold
        type_check_list(pair, (float, int), "threshold")
        if len(pair) != 2:
            raise TypeError("threshold must be a single number or sequence of two numbers.")
        for i, value in enumerate(pair):
            check_range(value, (0, UINT8_MAX), f"threshold[{i}]")
        if pair[1] < pair[0]:
            raise ValueError("threshold must be in order of (min, max).")
        self.threshold = (threshold, threshold) if isinstance(threshold, (float, int)) else threshold
        self._threshold = (float(pair[0]), float(pair[1]))

    def _run(self, img):
        self._check_device()
        return _solarize(img, "Solarize", self._threshold)


def _solarize(img: np.ndarray, op: str, threshold: tuple[float, float]) -> np.ndarray:
    check_image(img, op, dtypes=CV_NO_F16)
    return K.solarize(img, threshold)


class GaussianBlur(_Device, ImageTensorOperation):
    """Blurs with a Gaussian kernel (reflected borders).

    Args:
        kernel_size (Union[int, Sequence[int, int]]): odd positive size, or (width, height).
        sigma (Union[float, Sequence[float, float]], optional): standard deviation, or (x, y).
            None or 0 derives it from the kernel size as ``0.15 * size + 0.35``. Default: None.

    Raises:
        TypeError: if `kernel_size` or `sigma` has the wrong type or length.
        ValueError: if a size is not positive and odd, or a sigma is negative.
        RuntimeError: if the image is not <H, W> or <H, W, C>.

    Examples:
        >>> import numpy as np
        >>> img = np.zeros((3, 3), np.uint8); img[1, 1] = 160
        >>> GaussianBlur(3, 0.8)(img)[1].tolist()
        [40, 44, 40]
    """

    implementation = Implementation.C

    def __init__(self, kernel_size, sigma=None):
        type_check(kernel_size, (int, list, tuple), "kernel_size")
        if isinstance(kernel_size, int):
            check_range(kernel_size, (1, FLOAT_MAX_INTEGER), "kernel_size")
            _check_odd(kernel_size, "kernel_size")
        elif isinstance(kernel_size, (list, tuple)) and len(kernel_size) == 2:
            for index, value in enumerate(kernel_size):
                type_check(value, (int,), f"kernel_size[{index}]")
                check_range(value, (1, FLOAT_MAX_INTEGER), "kernel_size")
                _check_odd(value, f"kernel_size[{index}]")
        else:
            raise TypeError("Kernel size should be a single integer or a list/tuple (kernel_width, "
                            "kernel_height) of length 2.")
        if sigma is not None:
            type_check(sigma, (numbers.Number, list, tuple), "sigma")
            if isinstance(sigma, numbers.Number):
                check_range(sigma, (0, FLOAT_MAX_INTEGER), "sigma")
            elif isinstance(sigma, (list, tuple)) and len(sigma) == 2:
                for index, value in enumerate(sigma):
                    type_check(value, (numbers.Number,), f"size[{index}]")
                    check_range(value, (0, FLOAT_MAX_INTEGER), "sigma")
            else:
                raise TypeError("Sigma should be a single number or a list/tuple of length 2 for "
                                "width and height.")
        self.kernel_size = (kernel_size,) if isinstance(kernel_size, int) else kernel_size
        if sigma is None:
            sigma = (0,)
        elif isinstance(sigma, numbers.Number):
            sigma = (float(sigma),)
        self.sigma = sigma
        kx = int(self.kernel_size[0])
        ky = kx if len(self.kernel_size) == 1 else int(self.kernel_size[1])
        sx = K.gaussian_sigma(kx) if sigma[0] <= 0 else float(np.float32(sigma[0]))
        if len(sigma) == 1:
            sy = sx
        else:
            sy = K.gaussian_sigma(ky) if sigma[1] <= 0 else float(np.float32(sigma[1]))
        self._ksize, self._sigma = (kx, ky), (sx, sy)

    def _run(self, img):
        self._check_device()
        check_image(img, "GaussianBlur", channels=None, dtypes=FILTER, msgs=HWC_OR_HW_MSGS)
        return K.gaussian_blur(img, self._ksize, self._sigma)


def _check_odd(value: int, name: str) -> None:
    if value % 2 != 1:
        raise ValueError(f"Input {name} is not an odd value.")


class ConvertColor(_Device, ImageTensorOperation):
    """Converts between RGB/BGR, with or without alpha, and grey (OpenCV's conversions).

    Args:
        convert_mode (ConvertMode): the conversion.

    Raises:
        TypeError: if `convert_mode` is not a ConvertMode.
        RuntimeError: if the image's channel count does not fit the conversion.

    Examples:
        >>> import numpy as np
        >>> from headrace.dataset.vision.utils import ConvertMode
        >>> ConvertColor(ConvertMode.COLOR_RGB2BGR)(np.array([[[1, 2, 3]]], dtype=np.uint8)).tolist()
        [[[3, 2, 1]]]
    """

    implementation = Implementation.C

    def __init__(self, convert_mode):
        type_check(convert_mode, (ConvertMode,), "convert_mode")
        self.convert_mode = convert_mode
        self._mode = int(convert_mode)
        self._channels = K.CONVERT_INPUT_CHANNELS[self._mode]

    def _run(self, img):
        self._check_device()
        check_image(img, "ConvertColor", channels=(1, 3, 4), dtypes=("bool", "uint8", "uint16", "float32"),
                    msgs=dict(HWC_OR_HW_MSGS, channel="number of channels of image should be 1, 3, 4, but got:{c}"))
        got = 1 if img.ndim == 2 else img.shape[2]
        if got not in self._channels:
            want = " or ".join(str(c) for c in self._channels)
            raise op_error("ConvertColor", f"{self.convert_mode.name} expects an image with {want} "
                                           f"channel{'s' if self._channels != (1,) else ''}, but got {got}.")
        return K.convert_color(img, self._mode)


class Grayscale(PyImageOperation):
    """Converts a PIL image to grey (Pillow's luminance); 3 output channels repeat the grey band.

    Args:
        num_output_channels (int, optional): 1 or 3. Default: 1.

    Raises:
        TypeError: if `num_output_channels` is not an int, or the input is not a PIL image.
        ValueError: if it is not 1 or 3.

    Examples:
        >>> from PIL import Image
        >>> Grayscale(3)(Image.new("RGB", (2, 2), (255, 0, 0))).mode
        'RGB'
    """

    def __init__(self, num_output_channels=1):
        type_check(num_output_channels, (int,), "num_output_channels")
        if num_output_channels not in (1, 3):
            raise ValueError(f"Number of channels of the output grayscale imageshould be either 1 or 3. "
                             f"Got {num_output_channels}.")
        self.num_output_channels = num_output_channels

    def _run_pil(self, img):
        _require_pil(img)
        return K.pil_grayscale(img, self.num_output_channels)


# ------------------------------------------------------------------------- random ops

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


class RandomColor(ImageTensorOperation):
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

    random = True

    def __init__(self, degrees=(0.1, 1.9)):
        _check_degrees(degrees)
        self.degrees = degrees

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


class RandomSharpness(ImageTensorOperation):
    """Adjusts the sharpness by a factor drawn uniformly from `degrees`.

    Args:
        degrees (Sequence[float], optional): (min, max), non-negative. Default: (0.1, 1.9).

    Raises:
        TypeError: if `degrees` is not a list or tuple of numbers.
        ValueError: if it does not have 2 values, one is negative, or min > max.
        RuntimeError: if the image is not <H, W> or <H, W, C>.

    Examples:
        >>> import numpy as np
        >>> img = np.zeros((3, 3), np.uint8); img[1, 1] = 130
        >>> int(RandomSharpness((0.0, 0.0))(img)[1, 1])
        50
    """

    random = True

    def __init__(self, degrees=(0.1, 1.9)):
        _check_degrees(degrees)
        self.degrees = degrees

    def _run(self, img):
        check_image(img, "RandomSharpness", channels=None, dtypes=FILTER, msgs=SHARPNESS_MSGS)
        if img.dtype == np.bool_:
            img = img.view(np.uint8)
        return K.adjust_sharpness(img, _uniform(*self.degrees))

    def _run_pil(self, img):
        return K.pil_adjust_sharpness(img, _uniform(*self.degrees))


def _hit(prob: float) -> bool:
    return bool(sample_rng().random() < prob)


class RandomAdjustSharpness(ImageTensorOperation):
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

    implementation = Implementation.C
    random = True

    def __init__(self, degree, prob=0.5):
        check_non_negative_float32(degree, "degree")
        check_prob(prob)
        self.prob = prob
        self.degree = degree

    def _run(self, img):
        check_image(img, "RandomAdjustSharpness", channels=None, dtypes=FILTER,
                    msgs={"rank": "image shape is not <H,W,C> or <H,W>, got rank: {nd}"})
        if img.dtype == np.bool_:
            img = img.view(np.uint8)
        if not _hit(self.prob):
            return img
        return K.adjust_sharpness(img, self.degree)


class RandomAutoContrast(ImageTensorOperation):
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

    implementation = Implementation.C
    random = True

    def __init__(self, cutoff=0.0, ignore=None, prob=0.5):
        self._ignore = _check_cutoff_ignore(cutoff, ignore)
        check_prob(prob)
        self.cutoff = cutoff
        self.ignore = list(self._ignore)
        self.prob = prob

    def _run(self, img):
        check_image(img, "RandomAutoContrast", channels=(3,), dtypes=("bool", "uint8"), msgs={
            "rank": "image shape is not <H,W,C> or <H,W>, got rank: {nd}",
            "channel": "image shape is incorrect, expected num of channels is 3, but got: {c}"})
        if img.dtype == np.bool_:
            img = img.view(np.uint8)
        if not _hit(self.prob):
            return img
        return K.auto_contrast(img, self.cutoff, self._ignore)


class RandomEqualize(ImageTensorOperation):
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

    implementation = Implementation.C
    random = True

    def __init__(self, prob=0.5):
        check_prob(prob)
        self.prob = prob

    def _run(self, img):
        check_image(img, "RandomEqualize", dtypes=U8, msgs=dict(
            HWC_OR_HW_MSGS, channel="input image is not in channel of 1 or 3, but got: {c}",
            dtype="input image is not in type of uint8, but got: {dt}"))
        if not _hit(self.prob):
            return img
        return K.equalize(img)


class RandomInvert(ImageTensorOperation):
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

    implementation = Implementation.C
    random = True

    def __init__(self, prob=0.5):
        check_prob(prob)
        self.prob = prob

    def _run(self, img):
        check_image(img, "RandomInvert", ranks=(3,), channels=(3,), dtypes=CV_NO_F16, msgs={
            "rank": "image shape is not <H,W,C>, got rank: {nd}",
            "channel": "image shape is incorrect, expected num of channels is 3, but got:{c}"})
        if not _hit(self.prob):
            return img
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
