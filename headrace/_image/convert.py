"""Layout and value conversion kernels: normalize, rescale, HWC to CHW, to-tensor scaling."""
from __future__ import annotations

import cv2
import numpy as np

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


def normalize_hwc_to_chw(img: np.ndarray, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """Normalize of an HWC image written straight into a CHW float32 array (Normalize + HWC2CHW)."""
    h, w, c = img.shape
    out = np.empty((c, h, w), np.float32)
    for i in range(c):
        ch = out[i]
        np.subtract(img[:, :, i], mean[i], out=ch, dtype=np.float32)
        ch /= std[i]
    return out


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
