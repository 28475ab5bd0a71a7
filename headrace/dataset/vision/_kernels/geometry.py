"""Geometry kernels on HWC / HW NumPy arrays (OpenCV where it helps), shared by ops and fusions.

All functions are pure: they take arrays and plain numbers and return new arrays. Interpolation
codes are OpenCV's; ``to_cv_inter`` maps MindSpore's ``Inter``.
"""
from __future__ import annotations

import math

import cv2
import numpy as np
from PIL import Image

from headrace.dataset.vision.utils import Border, Inter

CV_INTER = {Inter.NEAREST: cv2.INTER_NEAREST, Inter.BILINEAR: cv2.INTER_LINEAR,
            Inter.BICUBIC: cv2.INTER_CUBIC, Inter.AREA: cv2.INTER_AREA}
PIL_INTER = {Inter.NEAREST: Image.NEAREST, Inter.BILINEAR: Image.BILINEAR,
             Inter.BICUBIC: Image.BICUBIC, Inter.ANTIALIAS: Image.LANCZOS}
CV_BORDER = {Border.CONSTANT: cv2.BORDER_CONSTANT, Border.EDGE: cv2.BORDER_REPLICATE,
             Border.REFLECT: cv2.BORDER_REFLECT_101, Border.SYMMETRIC: cv2.BORDER_REFLECT}
PIL_PAD_MODE = {Border.CONSTANT: "constant", Border.EDGE: "edge", Border.REFLECT: "reflect",
                Border.SYMMETRIC: "symmetric"}
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
                vals = fill[0] if isinstance(fill, tuple) else fill
            mask = np.ones(out.shape[:2], bool)
            mask[top:top + img.shape[0], left:left + img.shape[1]] = False
            out[mask] = vals
            return out
        return np.pad(img, widths, mode=mode)
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


def warp_affine(img: np.ndarray, matrix: np.ndarray, out_w: int, out_h: int, inter: int,
                fill: tuple | int) -> np.ndarray:
    """``cv2.warpAffine`` with a constant border; float64 for dtypes OpenCV cannot warp."""
    src = img if img.dtype in _CV_DEPTHS else img.astype(np.float64)
    if src.ndim == 3 and src.shape[2] > 4:
        chans = [cv2.warpAffine(src[:, :, c], matrix, (out_w, out_h), flags=inter,
                                borderMode=cv2.BORDER_CONSTANT, borderValue=_border_value(fill, src[:, :, c]))
                 for c in range(src.shape[2])]
        out = np.stack(chans, axis=2)
    else:
        out = keep_channels(cv2.warpAffine(src, matrix, (out_w, out_h), flags=inter,
                                           borderMode=cv2.BORDER_CONSTANT,
                                           borderValue=_border_value(fill, src)), img)
    return out.astype(img.dtype) if out.dtype != img.dtype else out


def rotation_matrix(h: int, w: int, degrees: float, center: tuple[float, float] | None,
                    expand: bool) -> tuple[np.ndarray, int, int]:
    """The 2x3 matrix and output size for a counter-clockwise rotation by ``degrees``.

    ``center`` is (x, y) in pixels; None is the image centre ((w - 1) / 2, (h - 1) / 2).
    With ``expand`` the output grows to hold the whole rotated image.
    """
    cx, cy = ((w - 1) / 2.0, (h - 1) / 2.0) if center is None else (float(center[0]), float(center[1]))
    m = cv2.getRotationMatrix2D((cx, cy), degrees, 1.0)
    if not expand:
        return m, w, h
    corners = np.array([[0, 0, 1], [w, 0, 1], [0, h, 1], [w, h, 1]], np.float64) @ m.T
    x0, y0 = corners.min(axis=0)
    x1, y1 = corners.max(axis=0)
    out_w, out_h = int(math.ceil(x1 - x0 - 1e-9)), int(math.ceil(y1 - y0 - 1e-9))
    m[0, 2] += (out_w - 1) / 2.0 - cx
    m[1, 2] += (out_h - 1) / 2.0 - cy
    return m, out_w, out_h


def affine_matrix(h: int, w: int, degrees: float, translate: tuple[float, float], scale: float,
                  shear: tuple[float, float]) -> np.ndarray:
    """The forward 2x3 matrix of MindSpore's Affine: rotate by ``degrees`` (counter-clockwise),
    shear by ``shear`` degrees (x, y), scale, then translate by ``translate`` pixels, about the
    image centre."""
    cx, cy = (w - 1) * 0.5, (h - 1) * 0.5
    rot = math.radians(degrees)
    sx, sy = math.radians(shear[0]), math.radians(shear[1])
    # inverse of [R * S * Sh] built the torchvision way, then inverted back to a forward matrix
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    fwd = np.array([[a, b], [c, d]], np.float64) * scale
    tx, ty = translate
    m = np.zeros((2, 3), np.float64)
    m[:, :2] = fwd
    m[0, 2] = cx + tx - (fwd[0, 0] * cx + fwd[0, 1] * cy)
    m[1, 2] = cy + ty - (fwd[1, 0] * cx + fwd[1, 1] * cy)
    return m


def random_resized_crop_box(rng: np.random.Generator, h: int, w: int, scale: tuple[float, float],
                            ratio: tuple[float, float], attempts: int) -> tuple[int, int, int, int]:
    """(top, left, crop_h, crop_w) chosen as RandomResizedCrop does.

    Tries ``attempts`` times to draw an area fraction in ``scale`` and a log-uniform aspect ratio in
    ``ratio`` that fits; otherwise takes the largest centred window whose aspect ratio is clamped to
    ``ratio``. Draws from ``rng`` in a fixed order, so the fused decode-and-crop draws the same.
    """
    area = h * w
    log_lo, log_hi = math.log(ratio[0]), math.log(ratio[1])
    for _ in range(attempts):
        target = area * rng.uniform(scale[0], scale[1])
        aspect = math.exp(rng.uniform(log_lo, log_hi))
        cw = int(round(math.sqrt(target * aspect)))
        ch = int(round(math.sqrt(target / aspect)))
        if 0 < cw <= w and 0 < ch <= h:
            top = int(rng.integers(0, h - ch + 1))
            left = int(rng.integers(0, w - cw + 1))
            return top, left, ch, cw
    in_ratio = w / h
    if in_ratio < ratio[0]:
        cw, ch = w, int(round(w / ratio[0]))
    elif in_ratio > ratio[1]:
        ch, cw = h, int(round(h * ratio[1]))
    else:
        cw, ch = w, h
    ch, cw = max(1, min(ch, h)), max(1, min(cw, w))
    return (h - ch) // 2, (w - cw) // 2, ch, cw
