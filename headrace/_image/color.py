"""Colour kernels: pure functions over NumPy arrays (and Pillow images for the ``pil_*`` ones).

The NumPy kernels reproduce MindSpore's C++ (OpenCV) ops value for value on ``uint8`` images:

* Scaling (brightness) rounds ``x * float32(factor)`` half to even and saturates, like OpenCV's
  ``convertTo``; for ``uint8`` it is a 256-entry table.
* Blends (contrast, saturation, sharpness, RandomColor) follow OpenCV's ``addWeighted`` on
  ``uint8``: ``rint(float32(fma(a, wa, float32(b * wb))))``. Which operand is ``a`` matters at
  exact ties (x.5), so each op passes its operands in MindSpore's order (see :func:`blend`).
* Hue shifts the 8-bit "full range" HSV hue channel by ``int(factor * 255)`` modulo 256.

Kernels expect already validated input (rank, channels, dtype); the op classes check and word the
errors. None of them mutates its input.
"""
from __future__ import annotations

import functools
from typing import Sequence

import cv2
import numpy as np
from numpy.typing import DTypeLike
from PIL import Image, ImageEnhance, ImageOps

Real = float | np.floating  # a weight or factor: a Python float or a NumPy scalar

__all__ = [
    "adjust_brightness", "adjust_contrast", "adjust_gamma", "adjust_hue", "adjust_saturation",
    "adjust_sharpness", "auto_contrast", "blend", "convert_color", "equalize", "gaussian_blur",
    "gaussian_sigma", "grayscale_rgb", "invert", "pil_adjust_brightness", "pil_adjust_contrast",
    "pil_adjust_gamma", "pil_adjust_hue", "pil_adjust_saturation", "pil_adjust_sharpness",
    "pil_auto_contrast", "pil_equalize", "pil_grayscale", "pil_invert", "posterize", "random_color",
    "saturate", "solarize",
]

_F32 = np.float32
_U8_RAMP = np.arange(256, dtype=np.float32)

# The OpenCV codes behind ConvertMode's values 0..11 (MindSpore's order).
_CONVERT_CODES = (
    cv2.COLOR_BGR2BGRA, cv2.COLOR_BGRA2BGR, cv2.COLOR_BGR2RGBA, cv2.COLOR_RGBA2BGR,
    cv2.COLOR_BGR2RGB, cv2.COLOR_BGRA2RGBA, cv2.COLOR_BGR2GRAY, cv2.COLOR_RGB2GRAY,
    cv2.COLOR_GRAY2BGR, cv2.COLOR_GRAY2BGRA, cv2.COLOR_BGRA2GRAY, cv2.COLOR_RGBA2GRAY,
)
# Channel counts OpenCV accepts on input for each ConvertMode value.
CONVERT_INPUT_CHANNELS = ((1, 3, 4),) * 6 + ((3, 4), (3, 4), (1,), (1,), (3, 4), (3, 4))


def saturate(values: np.ndarray, dtype: DTypeLike) -> np.ndarray:
    """Rounds half to even and clips ``values`` into ``dtype`` (float dtypes: plain cast)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return values.astype(dtype, copy=False)
    if dtype == np.bool_:
        return np.rint(values) != 0
    info = np.iinfo(dtype)
    return np.clip(np.rint(values), info.min, info.max).astype(dtype)


def _work_type(dtype: np.dtype) -> type:
    """The float type OpenCV computes a scaled conversion of ``dtype`` in."""
    return np.float64 if dtype in (np.int32, np.float64) else np.float32


def _lut(img: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Applies a 256-entry uint8 table to a uint8 image of any channel count."""
    if img.ndim == 3 and img.shape[2] > 4:
        return table[img]
    return cv2.LUT(img, table).reshape(img.shape)


def adjust_brightness(img: np.ndarray, factor: Real) -> np.ndarray:
    """``img * factor`` rounded and saturated into the input dtype.

    Args:
        img: HW or HWC array.
        factor: non-negative multiplier.

    Returns:
        an array of the input's shape and dtype.
    """
    if img.dtype == np.uint8:
        table = saturate(_U8_RAMP * _F32(factor), np.uint8)
        return _lut(img, table)
    if img.dtype == np.bool_:
        return adjust_brightness(img.view(np.uint8), factor) != 0
    if img.dtype.kind == "f":
        if img.dtype == np.float64:
            return img * float(_F32(factor))
        return (img.astype(np.float32) * _F32(factor)).astype(img.dtype)
    wt = _work_type(img.dtype)
    return saturate(img.astype(wt) * wt(_F32(factor)), img.dtype)


def blend(a: np.ndarray | float, wa: Real, b: np.ndarray, wb: Real, dtype: DTypeLike) -> np.ndarray:
    """``a * wa + b * wb`` as OpenCV's ``addWeighted(a, wa, b, wb, 0)`` computes it.

    Integer results are ``rint(float32(fma(a, wa, float32(b * wb))))`` saturated into ``dtype``
    (the operand order decides ties); float results are computed in float32.

    Args:
        a: first operand (array or scalar).
        wa: its weight.
        b: second operand (array).
        wb: its weight.
        dtype: output dtype.

    Returns:
        the blended array, in ``dtype``.
    """
    if (np.dtype(dtype) == np.uint8 and isinstance(a, np.ndarray) and a.dtype == np.uint8
            and b.dtype == np.uint8 and a.size >= 4096):
        # Both operands are bytes: look the result up in a 256 x 256 table of the same formula.
        idx = np.left_shift(a, 8, dtype=np.uint16)
        idx |= b
        return np.take(_blend_table(float(_F32(wa)), float(_F32(wb))), idx)
    bw = np.asarray(b, dtype=np.float32) * _F32(wb)
    if np.dtype(dtype).kind == "f":
        return (np.asarray(a, dtype=np.float32) * _F32(wa) + bw).astype(dtype)
    # An exact product of two float32 fits in a float64; its sum with a float32 rounded once to
    # float32 is the fused multiply-add OpenCV's vector code performs.
    acc = np.asarray(a, dtype=np.float64) * float(_F32(wa)) + bw
    return saturate(acc.astype(np.float32), dtype)


@functools.lru_cache(maxsize=64)
def _blend_table(wa: float, wb: float) -> np.ndarray:
    """``blend(a, wa, b, wb)`` for every pair of bytes, indexed by ``a << 8 | b``."""
    table = blend(_U8_RAMP[:, None], wa, _U8_RAMP[None, :], wb, np.uint8).ravel()
    table.setflags(write=False)
    return table


def _gray_u8_mean(img: np.ndarray) -> float:
    return cv2.mean(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY))[0]


def adjust_contrast(img: np.ndarray, factor: Real) -> np.ndarray:
    """Blends an RGB image with the mean of its grey version.

    Integer images blend with the mean rounded half to even (``uint8``: through a table).

    Args:
        img: HWC RGB array (uint8, uint16 or float32).
        factor: 0 gives a flat grey image, 1 the original.

    Returns:
        an array of the input's shape and dtype.
    """
    a, wm = _F32(factor), _F32(1) - _F32(factor)
    mean = _gray_u8_mean(img)
    if img.dtype.kind == "f":
        return (img * a + _F32(mean) * wm).astype(img.dtype)
    mean = float(np.rint(mean))  # half to even (a mean of 116.5 blends with 116)
    if img.dtype == np.uint8:
        table = blend(mean, wm, _U8_RAMP, a, np.uint8)
        return _lut(img, table)
    return blend(mean, wm, img, a, img.dtype)


def grayscale_rgb(img: np.ndarray) -> np.ndarray:
    """The grey version of an RGB image, repeated into 3 channels (same dtype)."""
    return cv2.cvtColor(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY), cv2.COLOR_GRAY2RGB)


def adjust_saturation(img: np.ndarray, factor: Real) -> np.ndarray:
    """Blends an RGB image with its grey version (MindSpore's AdjustSaturation operand order).

    Args:
        img: HWC RGB array (uint8, uint16 or float32).
        factor: 0 gives the grey image, 1 the original.

    Returns:
        an array of the input's shape and dtype.
    """
    return blend(grayscale_rgb(img), _F32(1) - _F32(factor), img, factor, img.dtype)


def random_color(img: np.ndarray, factor: float) -> np.ndarray:
    """Like :func:`adjust_saturation` with the operands swapped (MindSpore's RandomColor)."""
    return blend(img, factor, grayscale_rgb(img), _F32(1) - _F32(factor), img.dtype)


def adjust_hue(img: np.ndarray, factor: float) -> np.ndarray:
    """Rotates the hue of an RGB image by ``factor`` turns (``factor`` in [-0.5, 0.5]).

    ``uint8``: the 8-bit full-range HSV hue moves by ``int(factor * 255)`` modulo 256, as in
    MindSpore. float32: the hue (degrees) moves by ``factor * 360`` modulo 360 and values keep
    their scale. MindSpore's own float path returns values from uninitialised memory, so there
    is nothing to match there.

    Args:
        img: HWC RGB array (uint8 or float32).
        factor: fraction of a full turn.

    Returns:
        an array of the input's shape and dtype.
    """
    if img.dtype == np.uint8:
        hsv = cv2.cvtColor(img, cv2.COLOR_RGB2HSV_FULL)
        table = ((np.arange(256) + int(factor * 255)) % 256).astype(np.uint8)
        hsv[..., 0] = table[hsv[..., 0]]
        return cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB_FULL)
    hsv = cv2.cvtColor(img.astype(np.float32), cv2.COLOR_RGB2HSV)
    hsv[..., 0] = np.mod(hsv[..., 0] + _F32(factor * 360.0), _F32(360.0))
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB).astype(img.dtype)


@functools.lru_cache(maxsize=64)
def _gamma_table(gamma: float, gain: float) -> np.ndarray:
    # The table MindSpore's C++ op and its Pillow op share: truncation, with a 255.999 scale.
    table = np.array([int((255 + 1 - 1e-3) * gain * pow(v / 255.0, gamma)) for v in range(256)])
    table.setflags(write=False)
    return table


def _lut_any_rank(img: np.ndarray, table: np.ndarray) -> np.ndarray:
    if img.ndim <= 3 and img.flags.c_contiguous:
        return _lut(img, table)
    return np.take(table, img)


def adjust_gamma(img: np.ndarray, gamma: float, gain: float = 1.0) -> np.ndarray:
    """Gamma correction ``out = 255 * gain * (in / 255) ** gamma``.

    Integer images use MindSpore's truncating 256-entry table (values above 255 are clamped to
    255 first); float images compute ``clip((gain * x) ** gamma, 0, 1)`` and come back float32
    (float inputs are taken to lie in [0, 1]).

    Args:
        img: array of rank >= 2 (any number of leading dimensions).
        gamma: non-negative exponent.
        gain: multiplier.

    Returns:
        an array of the input's shape; dtype kept for integers, float32 for floats.
    """
    if img.dtype.kind == "f":
        x = img.astype(np.float32, copy=False) * _F32(gain)
        with np.errstate(invalid="ignore"):
            return np.clip(np.power(x, _F32(gamma)), 0, 1).astype(np.float32)
    table = _gamma_table(gamma, gain)
    if img.dtype == np.uint8:
        return _lut_any_rank(img, table.clip(0, 255).astype(np.uint8))
    if img.dtype == np.bool_:
        return table.clip(0, 255)[img.view(np.uint8)] != 0
    idx = np.clip(img, 0, 255).astype(np.intp)
    info = np.iinfo(img.dtype)
    return table.clip(info.min, info.max).astype(img.dtype)[idx]


_SHARP_KERNEL = np.array([[1, 1, 1], [1, 5, 1], [1, 1, 1]], np.float32) / np.float32(13)


def _smooth(img: np.ndarray) -> np.ndarray:
    """The smoothed image sharpness blends against; border pixels keep their value."""
    out = cv2.filter2D(img, -1, _SHARP_KERNEL, borderType=cv2.BORDER_REFLECT_101)
    out = out.reshape(img.shape)
    out[0], out[-1] = img[0], img[-1]
    out[:, 0], out[:, -1] = img[:, 0], img[:, -1]
    return out


def adjust_sharpness(img: np.ndarray, factor: Real) -> np.ndarray:
    """Blends an image with a smoothed copy: 0 blurs, 1 keeps, 2 sharpens.

    Args:
        img: HW or HWC array (any channel count; uint8, int16, uint16, float32, float64).
        factor: non-negative blend factor.

    Returns:
        an array of the input's shape and dtype.
    """
    if img.shape[0] < 3 or img.shape[1] < 3:
        return img.copy()
    if img.ndim == 3 and img.shape[2] > 4:
        planes = [adjust_sharpness(np.ascontiguousarray(img[..., c]), factor)
                  for c in range(img.shape[2])]
        return np.stack(planes, axis=-1)
    return blend(img, factor, _smooth(img), _F32(1) - _F32(factor), img.dtype)


def invert(img: np.ndarray) -> np.ndarray:
    """``255 - img``, saturated into the input dtype (float images: plain subtraction)."""
    if img.dtype == np.uint8:
        return 255 - img
    if img.dtype.kind == "f":
        return (np.asarray(255, img.dtype) - img).astype(img.dtype)
    if img.dtype == np.bool_:
        return np.ones_like(img)
    info = np.iinfo(img.dtype)
    return np.clip(255 - img.astype(np.int64), info.min, info.max).astype(img.dtype)


def equalize(img: np.ndarray) -> np.ndarray:
    """Histogram equalisation of each channel of a uint8 HW or HWC image (OpenCV's method)."""
    if img.ndim == 2:
        return cv2.equalizeHist(img)
    if img.shape[2] == 1:
        return cv2.equalizeHist(img[..., 0])[..., None]
    return cv2.merge([cv2.equalizeHist(p) for p in cv2.split(img)])


def _cut_tail(hist: np.ndarray, cut: int) -> None:
    """Removes ``cut`` pixels from the low end of ``hist`` (in place)."""
    for i in range(hist.size):
        if cut <= 0:
            return
        take = min(cut, int(hist[i]))
        hist[i] -= take
        cut -= take


def _auto_contrast_table(plane: np.ndarray, cutoff: int, ignore: Sequence[int]) -> np.ndarray:
    hist = cv2.calcHist([plane], [0], None, [256], [0, 256]).ravel().astype(np.int64)
    if len(ignore):
        hist[list(ignore)] = 0
    n = int(hist.sum())
    cut = int(_F32(cutoff) / _F32(100.0) * _F32(n))
    _cut_tail(hist, cut)
    _cut_tail(hist[::-1], cut)
    nz = np.flatnonzero(hist)
    if nz.size == 0 or nz[-1] <= nz[0]:
        return np.arange(256, dtype=np.uint8)
    lo, hi = int(nz[0]), int(nz[-1])
    scale = _F32(255.0 / (hi - lo))
    offset = _F32(-lo * scale)
    return np.clip((_U8_RAMP * scale + offset).astype(np.int32), 0, 255).astype(np.uint8)


def auto_contrast(img: np.ndarray, cutoff: float = 0.0, ignore: Sequence[int] = ()) -> np.ndarray:
    """Stretches each channel so its darkest kept value maps to 0 and its brightest to 255.

    As in MindSpore's C++ op, ``cutoff`` counts in whole percents (5.5 acts as 5): that share of
    pixels is dropped from each end of the channel's histogram, and the values in ``ignore``
    are left out of it. A channel with one kept value is left unchanged.

    Args:
        img: uint8 HW or HWC image.
        cutoff: percent of pixels to drop at each end, in [0, 50).
        ignore: grey levels left out of the histogram.

    Returns:
        a uint8 array of the input's shape.
    """
    cut = int(cutoff)
    if img.ndim == 2:
        return _lut(img, _auto_contrast_table(img, cut, ignore))
    planes = cv2.split(img) if img.shape[2] <= 4 else [np.ascontiguousarray(img[..., c])
                                                        for c in range(img.shape[2])]
    tables = [_auto_contrast_table(p, cut, ignore) for p in planes]
    if img.shape[2] == 3:
        return cv2.LUT(img, np.stack(tables, axis=-1)[:, None, :]).reshape(img.shape)
    return np.stack([cv2.LUT(p, t).reshape(p.shape) for p, t in zip(planes, tables)], axis=-1)


def posterize(img: np.ndarray, bits: int) -> np.ndarray:
    """Keeps the ``bits`` highest bits of each uint8 value (0 bits gives black)."""
    mask = np.uint8((0xFF << (8 - bits)) & 0xFF)
    return np.bitwise_and(img, mask)


def solarize(img: np.ndarray, threshold: Sequence[float]) -> np.ndarray:
    """Inverts (``255 - x``) the values in ``[threshold[0], threshold[1]]``.

    When both ends are equal every value ``>= threshold[0]`` is inverted (Pillow's meaning).

    Args:
        img: HW or HWC array.
        threshold: (min, max).

    Returns:
        an array of the input's shape and dtype.
    """
    lo, hi = threshold
    inv = invert(img)
    if img.dtype == np.uint8:
        sel = np.arange(256) >= lo
        if lo != hi:
            sel &= np.arange(256) <= hi
        table = np.where(sel, 255 - np.arange(256), np.arange(256)).astype(np.uint8)
        return _lut(img, table)
    mask = img >= lo if lo == hi else (img >= lo) & (img <= hi)
    return np.where(mask, inv, img)


def gaussian_sigma(kernel_size: int) -> float:
    """The sigma used for a kernel size when none is given: ``0.15 * k + 0.35`` (float32)."""
    return float(_F32(kernel_size * 0.15 + 0.35))


def gaussian_blur(img: np.ndarray, ksize: tuple[int, int], sigma: tuple[float, float]) -> np.ndarray:
    """Gaussian blur with reflected borders (OpenCV ``BORDER_REFLECT_101``).

    Args:
        img: HW or HWC array (any channel count).
        ksize: (width, height) of the kernel, odd.
        sigma: (sigma_x, sigma_y), already resolved (positive).

    Returns:
        an array of the input's shape and dtype.
    """
    if img.dtype == np.bool_:
        return gaussian_blur(img.view(np.uint8), ksize, sigma)
    if img.ndim == 3 and img.shape[2] > 4:
        planes = [gaussian_blur(np.ascontiguousarray(img[..., c]), ksize, sigma)
                  for c in range(img.shape[2])]
        return np.stack(planes, axis=-1)
    out = cv2.GaussianBlur(img, (int(ksize[0]), int(ksize[1])), sigmaX=sigma[0], sigmaY=sigma[1],
                           borderType=cv2.BORDER_REFLECT_101)
    return out.reshape(img.shape)


def convert_color(img: np.ndarray, mode: int) -> np.ndarray:
    """Channel conversions of ConvertColor (``mode`` is a ConvertMode value, 0..11)."""
    if img.dtype == np.bool_:
        return convert_color(img.view(np.uint8), mode) != 0
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[..., 0]
    return cv2.cvtColor(img, _CONVERT_CODES[int(mode)])


# ---------------------------------------------------------------------------- Pillow kernels

def pil_adjust_brightness(img: Image.Image, factor: float) -> Image.Image:
    """Pillow's brightness enhancer."""
    return ImageEnhance.Brightness(img).enhance(factor)


def pil_adjust_contrast(img: Image.Image, factor: float) -> Image.Image:
    """Pillow's contrast enhancer."""
    return ImageEnhance.Contrast(img).enhance(factor)


def pil_adjust_saturation(img: Image.Image, factor: float) -> Image.Image:
    """Pillow's colour (saturation) enhancer."""
    return ImageEnhance.Color(img).enhance(factor)


def pil_adjust_sharpness(img: Image.Image, factor: float) -> Image.Image:
    """Pillow's sharpness enhancer."""
    return ImageEnhance.Sharpness(img).enhance(factor)


def pil_adjust_hue(img: Image.Image, factor: float) -> Image.Image:
    """Moves the 8-bit HSV hue by ``int(factor * 255)`` (wrapping); grey modes are returned as is."""
    mode = img.mode
    if mode in ("L", "1", "I", "F"):
        return img
    h, s, v = img.convert("HSV").split()
    table = [(i + int(factor * 255)) % 256 for i in range(256)]
    return Image.merge("HSV", (h.point(table), s, v)).convert(mode)


def pil_adjust_gamma(img: Image.Image, gamma: float, gain: float = 1.0) -> Image.Image:
    """Gamma correction through a truncating 256-entry table (1- and 3-band images)."""
    table = [min(max(v, 0), 255) for v in _gamma_table(gamma, gain).tolist()]
    bands = len(img.getbands())
    if bands == 3:
        return img.point(table * 3)
    if bands == 1:
        return img.point(table)
    return img


def pil_auto_contrast(img: Image.Image, cutoff: float = 0.0, ignore: Sequence[int] | None = None) -> Image.Image:
    """Pillow's autocontrast (``cutoff`` in percent, fractional values honoured)."""
    return ImageOps.autocontrast(img, cutoff, list(ignore) if ignore else None)


def pil_equalize(img: Image.Image) -> Image.Image:
    """Pillow's histogram equalisation."""
    return ImageOps.equalize(img)


def pil_invert(img: Image.Image) -> Image.Image:
    """Pillow's invert."""
    return ImageOps.invert(img)


def pil_grayscale(img: Image.Image, num_output_channels: int = 1) -> Image.Image:
    """Pillow's luminance conversion; 3 output channels repeat the grey band as RGB."""
    gray = img.convert("L")
    if num_output_channels == 1:
        return gray
    return Image.merge("RGB", (gray, gray, gray))
