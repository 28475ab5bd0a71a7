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
from typing import Any

import numpy as np

from headrace.dataset.transforms._base import Implementation
from headrace.dataset.transforms._checks import (FLOAT_MAX_INTEGER, FLOAT_MIN_INTEGER, UINT8_MAX,
                                                 check_range, type_check, type_check_list)
from headrace.dataset.vision._base import ImageTensorOperation, PyImageOperation, op_error
from headrace._image import color as K
from headrace.dataset.vision.utils import ConvertMode
from headrace.dataset.vision._color_checks import (
    ALL_CV, BLEND, CV_NO_F16, FILTER, HIST_MSGS, HWC_OR_HW_MSGS, INVERT_MSGS, POSTERIZE_MSGS, SHARPNESS_MSGS,
    U8, _Device, _factor, _require_pil, check_image,
)

__all__ = [
    "AdjustBrightness", "AdjustContrast", "AdjustGamma", "AdjustHue", "AdjustSaturation",
    "AdjustSharpness", "AutoContrast", "ConvertColor", "Equalize", "GaussianBlur", "Grayscale",
    "Invert", "Posterize", "Solarize",
]


# ------------------------------------------------------------------------- adjust ops


class _KernelOperation(_Device, ImageTensorOperation):
    """The ops that are one kernel call: ``_run`` checks the image (``check_image`` with the
    keywords ``_image``) and runs ``_kernel(img, *factor)``, ``_run_pil`` runs ``_pil_kernel``
    likewise; the factor is the attribute ``_arg`` names (none when None), kept by ``_keep``."""

    _arg: str | None = None
    _image: dict[str, Any] = {}
    _kernel: Any
    _pil_kernel: Any

    def _keep(self, value: Any, bounds: tuple[float, float] = (0, FLOAT_MAX_INTEGER), named: bool = True) -> None:
        """Checks the factor (a number in ``bounds``; ``named``: the range message names it)."""
        _factor(value, self._arg)
        check_range(value, bounds, self._arg if named else "")
        setattr(self, self._arg, value)

    def _factors(self) -> tuple:
        return () if self._arg is None else (getattr(self, self._arg),)

    def _run(self, img):
        self._check_device()
        check_image(img, self.op_name, **self._image)
        return self._kernel(img, *self._factors())

    def _run_pil(self, img):
        return self._pil_kernel(img, *self._factors())


class AdjustBrightness(_KernelOperation):
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

    _arg = "brightness_factor"
    _kernel, _pil_kernel = staticmethod(K.adjust_brightness), staticmethod(K.pil_adjust_brightness)

    def __init__(self, brightness_factor):
        self._keep(brightness_factor)


class AdjustContrast(_KernelOperation):
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

    _arg = "contrast_factor"
    _image = {"ranks": (3,), "channels": (3,), "dtypes": BLEND}
    _kernel, _pil_kernel = staticmethod(K.adjust_contrast), staticmethod(K.pil_adjust_contrast)

    def __init__(self, contrast_factor):
        self._keep(contrast_factor)


class AdjustSaturation(_KernelOperation):
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

    _arg = "saturation_factor"
    _image = {"ranks": (3,), "channels": (3,), "dtypes": BLEND}
    _kernel, _pil_kernel = staticmethod(K.adjust_saturation), staticmethod(K.pil_adjust_saturation)

    def __init__(self, saturation_factor):
        self._keep(saturation_factor, named=False)  # MindSpore's range message names no argument here


class AdjustHue(_KernelOperation):
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

    _arg = "hue_factor"
    _image = {"ranks": (3,), "channels": (3,), "dtypes": ("uint8", "float32")}
    _kernel, _pil_kernel = staticmethod(K.adjust_hue), staticmethod(K.pil_adjust_hue)

    def __init__(self, hue_factor):
        self._keep(hue_factor, (-0.5, 0.5))


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


class Invert(_KernelOperation):
    """Inverts an RGB image: ``255 - x`` (saturated into the dtype).

    Raises:
        RuntimeError: if the image is not <H, W, 3>.

    Examples:
        >>> import numpy as np
        >>> Invert()(np.array([[[0, 100, 255]]], dtype=np.uint8)).tolist()
        [[[255, 155, 0]]]
    """

    _image = {"ranks": (3,), "channels": (3,), "dtypes": CV_NO_F16, "msgs": INVERT_MSGS}
    _kernel, _pil_kernel = staticmethod(K.invert), staticmethod(K.pil_invert)

    def __init__(self):
        pass


class Equalize(_KernelOperation):
    """Equalises the histogram of each channel of a uint8 image.

    Raises:
        RuntimeError: if the image is not uint8 <H, W> or <H, W, C> with 1 or 3 channels.

    Examples:
        >>> import numpy as np
        >>> Equalize()(np.array([[10, 10, 20, 30]], dtype=np.uint8)).tolist()
        [[0, 0, 128, 255]]
    """

    _image = {"dtypes": U8, "msgs": HIST_MSGS}
    _kernel, _pil_kernel = staticmethod(K.equalize), staticmethod(K.pil_equalize)

    def __init__(self):
        pass


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
