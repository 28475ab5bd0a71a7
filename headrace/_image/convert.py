"""Layout and value conversion kernels: normalize, rescale, HWC to CHW, to-tensor scaling."""
from __future__ import annotations

import cv2
import numpy as np

try:
    from headrace._native import _pixels
except ImportError:  # built without the extension: OpenCV's passes (see normalize_hwc_to_chw)
    _pixels = None

_INV255 = np.float32(1.0 / 255.0)


_CV_NORMALIZE = {np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.float32)}


def normalize(img: np.ndarray, mean: np.ndarray, std: np.ndarray, channel_axis: int) -> np.ndarray:
    """``(img - mean) / std`` per channel, in float32; ``mean``/``std`` are float32 vectors.

    An <H, W, C<=4> image goes through OpenCV's per-channel scalar arithmetic (one pass each,
    3-4x faster than NumPy broadcasting over a last axis of 3, and bit-identical to it).
    """
    # (OpenCV reads a 4-tuple as a 4x1 array, not a scalar, when the image itself has 4 pixels)
    if (img.ndim == 3 and channel_axis == 2 and img.shape[2] <= 4 and img.dtype in _CV_NORMALIZE
            and img.shape[0] * img.shape[1] > 4):
        c = img.shape[2]
        m = tuple(float(x) for x in mean) + (0.0,) * (4 - c)
        s = tuple(float(x) for x in std) + (1.0,) * (4 - c)
        out = cv2.subtract(img, m, dtype=cv2.CV_32F)
        cv2.divide(out, s, dst=out)
        return out[:, :, None] if out.ndim == 2 else out
    shape = [1] * img.ndim
    shape[channel_axis] = mean.size
    out = img.astype(np.float32)
    out -= mean.reshape(shape)
    out /= std.reshape(shape)
    return out


FLIPS = (None, 0, 1)  # normalize_hwc_to_chw's flip: none, top-bottom, left-right (cv2.flip's codes)


def normalize_hwc_to_chw(img: np.ndarray, mean: np.ndarray, std: np.ndarray, flip: int | None = None,
                         out: np.ndarray | None = None) -> np.ndarray:
    """Normalize of an HWC image written straight into a CHW float32 array (Normalize + HWC2CHW),
    after a flip (``flip``: one of ``FLIPS``) when one is asked for; into ``out`` when given (a
    C-contiguous float32 array of shape (C, H, W), e.g. a row of a batch), else a new array.

    A uint8 image with at most 4 channels goes through a table of the 256 normalized values per
    channel (``normalize_lut``, made by the loop below, so equal to it bit for bit): in one pass
    that reads each pixel once, flipped or not, with the ``_pixels`` extension (36-38 us of CPU for
    a 224 x 224 x 3 image, flipped or not), else one OpenCV LUT pass per channel after a split and
    a flip of each plane (63-72 us; measured in turns, 2026-11-29).
    """
    if flip not in FLIPS:
        raise ValueError(f"flip must be one of {FLIPS}, but got {flip!r}.")
    h, w, c = img.shape
    if out is None:
        out = np.empty((c, h, w), np.float32)
    elif type(out) is not np.ndarray or out.shape != (c, h, w) or out.dtype != np.float32 or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous float32 array of shape {(c, h, w)}, but got "
                         f"{getattr(out, 'dtype', type(out).__name__)} {getattr(out, 'shape', '')}.")
    if img.dtype == np.uint8 and 0 < c <= 4 and h * w > 0:
        lut = normalize_lut(mean, std, c)
        if _pixels is not None and img.flags.c_contiguous:
            _pixels.normalize_chw(img, lut, out, -1 if flip is None else flip)
            return out
        for i, plane in enumerate(cv2.split(img) if c > 1 else (img[:, :, 0],)):
            src = plane if flip is None else cv2.flip(plane, flip)
            got = cv2.LUT(np.ascontiguousarray(src), lut[i], dst=out[i])
            if got.ctypes.data != out[i].ctypes.data:  # OpenCV made a new array instead of filling dst
                out[i] = got
        return out
    if flip is not None:
        img = img[:, ::-1] if flip == 1 else img[::-1]
    return _normalize_loop(img, mean, std, out)


def _normalize_loop(img: np.ndarray, mean: np.ndarray, std: np.ndarray, out: np.ndarray) -> np.ndarray:
    for i in range(img.shape[2]):
        ch = out[i]
        np.subtract(img[:, :, i], mean[i], out=ch, dtype=np.float32)
        ch /= std[i]
    return out


_LUTS: dict[tuple[bytes, bytes, int], np.ndarray] = {}
_LUTS_MAX = 64  # tables kept (3 KiB each for 3 channels); more distinct (mean, std) pairs are remade


def normalize_lut(mean: np.ndarray, std: np.ndarray, channels: int) -> np.ndarray:
    """The (channels, 256) float32 table of each uint8 value normalized per channel, as
    ``normalize_hwc_to_chw`` computes it for uint8 input (``mean``/``std``: float32 vectors of
    ``channels`` values)."""
    key = (mean.tobytes(), std.tobytes(), channels)
    lut = _LUTS.get(key)
    if lut is None:
        ramp = np.repeat(np.arange(256, dtype=np.uint8)[:, None, None], channels, axis=2)  # (256, 1, C)
        lut = _normalize_loop(ramp, mean, std, np.empty((channels, 256, 1), np.float32))[:, :, 0].copy()
        if len(_LUTS) < _LUTS_MAX:
            _LUTS[key] = lut
    return lut


def hwc_to_chw(img: np.ndarray) -> np.ndarray:
    """(H, W, C) -> (C, H, W), contiguous; (H, W) stays as it is."""
    if img.ndim == 2:
        return img
    return np.ascontiguousarray(img.transpose(2, 0, 1))


def to_tensor_c(img: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """HW/HWC -> CHW scaled by 1/255 in float32 (as MindSpore's C++ ToTensor), then cast."""
    if img.ndim == 2:
        img = img[:, :, None]
    out = np.empty((img.shape[2],) + img.shape[:2], np.float32)
    np.multiply(img.transpose(2, 0, 1), _INV255, out=out, dtype=np.float32, casting="unsafe")
    return out if dtype == np.float32 else out.astype(dtype)


def rescale(img: np.ndarray, scale: float, shift: float) -> np.ndarray:
    """``img * scale + shift`` as float32, rounded as MindSpore rounds it: ``scale`` and ``shift``
    are first rounded to float32, an image of 32-bit (or wider) integers is first rounded to
    float32 (a float64 one is not), the product and the sum are taken in float64, and only the
    result is rounded to float32. Checked bit for bit against MindSpore 2.10 (uint8, int8, uint16,
    int16, int32, float16, float32, float64, bool)."""
    if img.dtype.kind in "iu" and img.dtype.itemsize >= 4:
        img = img.astype(np.float32)
    out = img.astype(np.float64)
    out *= float(np.float32(scale))
    out += float(np.float32(shift))
    return out.astype(np.float32)
