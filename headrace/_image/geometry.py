"""Geometry kernels on HWC / HW NumPy arrays (OpenCV where it helps), shared by ops and fusions.

All functions are pure: they take arrays and plain numbers and return new arrays. Interpolation
codes are OpenCV's; the tables from MindSpore's ``Inter`` / ``Border`` live in ``dataset/vision/_tables.py``.
"""
from __future__ import annotations

import math

import cv2
import numpy as np
from PIL import Image

_CV_DEPTHS = {np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.float32, np.float64)}


def keep_channels(out: np.ndarray, like: np.ndarray) -> np.ndarray:
    """OpenCV drops a trailing channel axis of size 1; put it back."""
    if like.ndim == 3 and out.ndim == 2:
        return out[:, :, None]
    return out


def output_size(size: int | tuple[int, int], h: int, w: int) -> tuple[int, int]:
    """MindSpore's Resize size rule: an int sets the shorter side, keeping the aspect ratio."""
    if isinstance(size, int):
        if h <= w:
            return size, int(w * size / h)
        return int(h * size / w), size
    return size[0], size[1]


def resize(img: np.ndarray, h: int, w: int, inter: int) -> np.ndarray:
    """Resizes an HW/HWC array to (h, w) with an OpenCV interpolation code."""
    if img.shape[0] == h and img.shape[1] == w and inter != cv2.INTER_AREA:
        return img.copy()
    src = img
    if img.dtype not in _CV_DEPTHS:
        src = img.astype(np.float64 if img.dtype.itemsize > 4 or img.dtype.kind in "iu" else np.float32)
    if src.ndim == 3 and src.shape[2] > 4 and inter != cv2.INTER_NEAREST:
        out = np.stack([cv2.resize(src[:, :, c], (w, h), interpolation=inter)
                        for c in range(src.shape[2])], axis=2)
    else:
        out = keep_channels(cv2.resize(src, (w, h), interpolation=inter), img)
    if out.dtype != img.dtype:
        out = out.astype(img.dtype) if img.dtype.kind == "f" else np.clip(
            np.rint(out), np.iinfo(img.dtype).min, np.iinfo(img.dtype).max).astype(img.dtype)
    return out


def resize_pil_cubic(img: np.ndarray, h: int, w: int) -> np.ndarray:
    """Pillow's bicubic (MindSpore's PILCUBIC) on a uint8 HWC array or float channels."""
    if img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] in (3, 4):
        mode = "RGB" if img.shape[2] == 3 else "RGBA"
        return np.asarray(Image.fromarray(img, mode).resize((w, h), Image.BICUBIC))
    chans = [img] if img.ndim == 2 else [img[:, :, c] for c in range(img.shape[2])]
    out = [np.asarray(Image.fromarray(c.astype(np.float32), "F").resize((w, h), Image.BICUBIC))
           for c in chans]
    res = out[0] if img.ndim == 2 else np.stack(out, axis=2)
    return res.astype(img.dtype) if img.dtype.kind == "f" else np.clip(np.rint(res), 0, 255).astype(img.dtype)


def crop(img: np.ndarray, top: int, left: int, h: int, w: int) -> np.ndarray:
    """A copy of the (top, left, h, w) window (the caller checks bounds)."""
    return img[top:top + h, left:left + w].copy()


def pad(img: np.ndarray, top: int, bottom: int, left: int, right: int, border: int,
        fill: tuple | int = 0) -> np.ndarray:
    """Pads with an OpenCV border mode; ``fill`` is a grey value or an RGB triple."""
    if img.dtype not in _CV_DEPTHS or (img.ndim == 3 and img.shape[2] > 4):
        mode = {cv2.BORDER_CONSTANT: "constant", cv2.BORDER_REPLICATE: "edge",
                cv2.BORDER_REFLECT_101: "reflect", cv2.BORDER_REFLECT: "symmetric"}[border]
        widths = ((top, bottom), (left, right)) + (((0, 0),) if img.ndim == 3 else ())
        if mode == "constant":
            out = np.pad(img, widths, mode="constant")
            if isinstance(fill, tuple) and img.ndim == 3:
                vals = np.asarray(fill[:img.shape[2]] if len(fill) >= img.shape[2] else fill[0])
            else:
                vals = np.asarray(fill[0] if isinstance(fill, tuple) else fill)
            mask = np.ones(out.shape[:2], bool)
            mask[top:top + img.shape[0], left:left + img.shape[1]] = False
            out[mask] = vals
            return out
        return np.pad(img, widths, mode=mode)  # type: ignore[call-overload]  # mode is one of the literals above
    value = _border_value(fill, img)
    return keep_channels(cv2.copyMakeBorder(img, top, bottom, left, right, border, value=value), img)


def _border_value(fill: tuple | int, img: np.ndarray) -> tuple:
    if isinstance(fill, tuple):
        if img.ndim == 2 or img.shape[2] == 1:
            return (fill[0],) * 4
        return tuple(fill) + (0,) * (4 - len(fill))
    return (fill,) * 4


def flip(img: np.ndarray, horizontal: bool) -> np.ndarray:
    if img.dtype in _CV_DEPTHS and (img.ndim == 2 or img.shape[2] <= 4):
        return keep_channels(cv2.flip(img, 1 if horizontal else 0), img)
    return np.ascontiguousarray(img[:, ::-1] if horizontal else img[::-1])


_AB_BITS, _INTER_BITS = 10, 5
_REMAP_DEPTHS = {np.dtype(t) for t in (np.uint8, np.uint16, np.int16, np.float32, np.float64)}


def warp_affine(img: np.ndarray, matrix: np.ndarray, out_w: int, out_h: int, inter: int,
                fill: tuple | int) -> np.ndarray:
    """``cv2.warpAffine`` with a constant border, sampled the way OpenCV 4 samples.

    OpenCV 4 (MindSpore's build) maps each output pixel back to the source in 10-bit fixed point
    and interpolates at 1/32-pixel positions; OpenCV 5 computes the positions in floating point,
    which moves nearest-neighbour picks at half-pixel ties and shifts bilinear weights. We build
    OpenCV 4's fixed-point maps here and let ``cv2.remap`` sample, so results match MindSpore.

    Args:
        img: HW or HWC array.
        matrix: the forward 2x3 matrix (source -> output).
        out_w, out_h: output size.
        inter: OpenCV interpolation (AREA warps bilinearly, as in OpenCV).
        fill: a grey value or a colour triple for outside pixels.
    """
    if inter == cv2.INTER_AREA:
        inter = cv2.INTER_LINEAR
    src = img if img.dtype in _REMAP_DEPTHS else img.astype(np.float64)
    inv = cv2.invertAffineTransform(np.asarray(matrix, np.float64))
    scale = 1 << _AB_BITS
    nearest = inter == cv2.INTER_NEAREST
    delta = scale // 2 if nearest else scale >> (_INTER_BITS + 1)
    xs, ys = np.arange(out_w, dtype=np.float64), np.arange(out_h, dtype=np.float64)
    lim = 2.0**31 - 1
    gx = np.clip(np.rint(inv[0, 0] * xs * scale), -lim, lim).astype(np.int64)
    gy = np.clip(np.rint(inv[1, 0] * xs * scale), -lim, lim).astype(np.int64)
    rx = np.clip(np.rint((inv[0, 1] * ys + inv[0, 2]) * scale), -lim, lim).astype(np.int64) + delta
    ry = np.clip(np.rint((inv[1, 1] * ys + inv[1, 2]) * scale), -lim, lim).astype(np.int64) + delta
    fx = (rx[:, None] + gx[None, :]).astype(np.int32)  # OpenCV adds in 32-bit ints
    fy = (ry[:, None] + gy[None, :]).astype(np.int32)
    if nearest:
        xy = np.stack([fx >> _AB_BITS, fy >> _AB_BITS], axis=-1)
        frac = None
    else:
        fx >>= _AB_BITS - _INTER_BITS
        fy >>= _AB_BITS - _INTER_BITS
        mask = (1 << _INTER_BITS) - 1
        xy = np.stack([fx >> _INTER_BITS, fy >> _INTER_BITS], axis=-1)
        frac = ((fy & mask) << _INTER_BITS | (fx & mask)).astype(np.uint16)
    xy = np.clip(xy, -32768, 32767).astype(np.int16)
    chans = 1 if src.ndim == 2 else src.shape[2]
    if chans > 4:
        outs = [_remap(np.ascontiguousarray(src[:, :, c]), xy, frac, inter, _border_value(fill, src[:, :, c]))
                for c in range(chans)]
        out = np.stack(outs, axis=2)
    else:
        out = keep_channels(_remap(src, xy, frac, inter, _border_value(fill, src)), src)
    return out if out.dtype == img.dtype else _back_to(out, img.dtype)


def _remap(src: np.ndarray, xy: np.ndarray, frac: np.ndarray | None, inter: int, value: tuple) -> np.ndarray:
    return cv2.remap(src, xy, frac, inter, borderMode=cv2.BORDER_CONSTANT, borderValue=value)


def _back_to(out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.clip(np.rint(out), info.min, info.max).astype(dtype)
    return out.astype(dtype)


def rotation_matrix(h: int, w: int, degrees: float, center: tuple[float, float] | None,
                    expand: bool) -> tuple[np.ndarray, int, int]:
    """The forward 2x3 matrix and output (width, height) of a counter-clockwise rotation.

    ``center`` is (x, y) in pixels; None is the image centre ((w - 1) / 2, (h - 1) / 2). With
    ``expand`` the output is the rotated image's bounding box (its size rounded to the nearest
    integer) and the image is moved to the middle of it.
    """
    cx, cy = ((w - 1) / 2.0, (h - 1) / 2.0) if center is None else (float(center[0]), float(center[1]))
    m = cv2.getRotationMatrix2D((cx, cy), degrees, 1.0)
    if not expand:
        return m, w, h
    corners = cv2.boxPoints(((0.0, 0.0), (float(w), float(h)), float(degrees)))
    bw = float(corners[:, 0].max() - corners[:, 0].min())
    bh = float(corners[:, 1].max() - corners[:, 1].min())
    m[0, 2] += bw / 2.0 - w / 2.0
    m[1, 2] += bh / 2.0 - h / 2.0
    return m, int(round(bw)), int(round(bh))


def affine_matrix(h: int, w: int, degrees: float, translate: tuple[float, float], scale: float,
                  shear: tuple[float, float]) -> np.ndarray:
    """The forward 2x3 matrix of MindSpore's Affine about the image centre ((w-1)/2, (h-1)/2):
    rotation by ``degrees`` (counter-clockwise), shear ``shear`` = (x, y) degrees, ``scale``, then
    a shift of ``translate`` pixels."""
    cx, cy = (w - 1) * 0.5, (h - 1) * 0.5
    rot = math.radians(degrees)
    sx, sy = math.radians(shear[0]), -math.radians(shear[1])
    c, s = math.cos(rot + sy), math.sin(rot + sy)
    m00 = scale * c / math.cos(sy)
    m01 = scale * (-c * math.tan(sx) / math.cos(sy) - math.sin(rot))
    m10 = scale * s / math.cos(sy)
    m11 = scale * (-s * math.tan(sx) / math.cos(sy) + math.cos(rot))
    return np.array([[m00, m01, (1 - m00) * cx - m01 * cy + translate[0]],
                     [m10, m11, (1 - m11) * cy - m10 * cx + translate[1]]], np.float64)


def _round_half_up(x: float) -> int:
    return int(math.floor(x + 0.5))


def random_resized_crop_box(rng: np.random.Generator, h: int, w: int, scale: tuple[float, float],
                            ratio: tuple[float, float], attempts: int,
                            pil: bool = False) -> tuple[int, int, int, int]:
    """(top, left, crop_h, crop_w) chosen as RandomResizedCrop does.

    Up to ``attempts`` times: draw an area fraction in ``scale`` and a log-uniform aspect ratio
    (width / height) in ``ratio``; width = round(sqrt(area * ratio)), height = round(width / ratio);
    if it fits, draw the top and left uniformly. Otherwise take the largest centred window whose
    aspect ratio is clamped to ``ratio``. Rounding is half-up as in MindSpore's C++ op, or Python's
    half-even for the Pillow path (``pil``), which only matters at exact halves. Draws from ``rng``
    in a fixed order, so the fused decode-and-crop draws the same.
    """
    rnd = round if pil else _round_half_up
    area = h * w
    log_lo, log_hi = math.log(ratio[0]), math.log(ratio[1])
    for _ in range(attempts):
        target = area * rng.uniform(scale[0], scale[1])
        aspect = math.exp(rng.uniform(log_lo, log_hi))
        cw = int(rnd(math.sqrt(target * aspect)))
        ch = int(rnd(cw / aspect))
        if 0 < cw <= w and 0 < ch <= h:
            top = int(rng.integers(0, h - ch + 1))
            left = int(rng.integers(0, w - cw + 1))
            return top, left, ch, cw
    in_ratio = w / h
    if in_ratio < ratio[0]:
        cw, ch = w, int(rnd(w / ratio[0]))
    elif in_ratio > ratio[1]:
        ch, cw = h, int(rnd(h * ratio[1]))
    else:
        cw, ch = w, h
    ch, cw = max(1, min(ch, h)), max(1, min(cw, w))
    return int(rnd((h - ch) / 2.0)), int(rnd((w - cw) / 2.0)), ch, cw
