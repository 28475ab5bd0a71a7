"""Perspective warps on HW / HWC arrays, sampled the way OpenCV 4 (MindSpore's build) samples.

OpenCV 4's ``warpPerspective`` maps output pixels back to the source block by block (blocks of
up to 1024 pixels), in double precision, rounds the positions to 1/32 pixel and interpolates
with its fixed-point tables. We build the same maps here and let ``cv2.remap`` sample, so the
result does not depend on the installed OpenCV's own warp (OpenCV 5 computes positions
differently). See ``geometry.warp_affine`` for the affine counterpart.
"""
from __future__ import annotations

from typing import Sequence

import cv2
import numpy as np
from PIL import Image

from headrace._image.geometry import _REMAP_DEPTHS, _back_to, _border_value, _remap, keep_channels

_INTER_BITS = 5
_TAB = 1 << _INTER_BITS
_BLOCK = 32

Points = Sequence[Sequence[float]]  # four (x, y) corners


def perspective_matrix(start_points: Points, end_points: Points) -> np.ndarray:
    """The 3x3 matrix that maps `start_points` onto `end_points` (four (x, y) pairs each)."""
    return cv2.getPerspectiveTransform(np.asarray(start_points, np.float32), np.asarray(end_points, np.float32))


def _block_sizes(w: int, h: int) -> tuple[int, int]:
    bh = min(_BLOCK // 2, h)
    bw = min(_BLOCK * _BLOCK // bh, w)
    bh = min(_BLOCK * _BLOCK // bw, h)
    return bw, bh


def warp_perspective(img: np.ndarray, matrix: np.ndarray, inter: int, fill: tuple | int = 0) -> np.ndarray:
    """Warps `img` by the forward 3x3 `matrix` into an image of the same size.

    Args:
        img: HW or HWC array.
        matrix: source -> output homography.
        inter: OpenCV interpolation (AREA samples bilinearly, as OpenCV does).
        fill: a grey value or colour triple for pixels that map outside the source.
    """
    if inter == cv2.INTER_AREA:
        inter = cv2.INTER_LINEAR
    h, w = img.shape[:2]
    ok, inv = cv2.invert(np.asarray(matrix, np.float64))
    m = inv.ravel() if ok else np.zeros(9)
    bw, _ = _block_sizes(w, h)
    cols = np.arange(w)
    xb = (cols // bw * bw).astype(np.float64)   # the block's first column
    x1 = (cols - cols // bw * bw).astype(np.float64)
    ys = np.arange(h, dtype=np.float64)[:, None]
    x0 = m[0] * xb + m[1] * ys + m[2]
    y0 = m[3] * xb + m[4] * ys + m[5]
    w0 = m[6] * xb + m[7] * ys + m[8]
    ww = w0 + m[6] * x1
    nearest = inter == cv2.INTER_NEAREST
    with np.errstate(divide="ignore"):
        ww = np.where(ww != 0, (1.0 if nearest else float(_TAB)) / np.where(ww != 0, ww, 1.0), 0.0)
    lo, hi = float(np.iinfo(np.int32).min), float(np.iinfo(np.int32).max)
    fx = np.clip((x0 + m[0] * x1) * ww, lo, hi)
    fy = np.clip((y0 + m[3] * x1) * ww, lo, hi)
    ix, iy = np.rint(fx).astype(np.int64), np.rint(fy).astype(np.int64)
    if nearest:
        xy = np.stack([ix, iy], axis=-1)
        frac = None
    else:
        xy = np.stack([ix >> _INTER_BITS, iy >> _INTER_BITS], axis=-1)
        frac = ((iy & (_TAB - 1)) * _TAB + (ix & (_TAB - 1))).astype(np.uint16)
    xy = np.clip(xy, -32768, 32767).astype(np.int16)
    src = img if img.dtype in _REMAP_DEPTHS else img.astype(np.float64)
    chans = 1 if src.ndim == 2 else src.shape[2]
    if chans > 4:
        out = np.stack([_remap(np.ascontiguousarray(src[:, :, c]), xy, frac, inter, _border_value(fill, src[:, :, c]))
                        for c in range(chans)], axis=2)
    else:
        out = keep_channels(_remap(src, xy, frac, inter, _border_value(fill, src)), src)
    return out if out.dtype == img.dtype else _back_to(out, img.dtype)


def pil_perspective_coeffs(start_points: Points, end_points: Points) -> list[float]:
    """Pillow's PERSPECTIVE coefficients (output -> source) for the start -> end mapping."""
    rows, rhs = [], []
    for (sx, sy), (ex, ey) in zip(start_points, end_points):
        rows.append([ex, ey, 1, 0, 0, 0, -sx * ex, -sx * ey])
        rows.append([0, 0, 0, ex, ey, 1, -sy * ex, -sy * ey])
        rhs.extend([sx, sy])
    a = np.asarray(rows, np.float64)
    b = np.asarray(rhs, np.float64)
    # least squares, as MindSpore solves it: its rounding noise (about 1e-15) moves Pillow's
    # bilinear / bicubic samples, and an exact solve would not match MindSpore's pixels
    return np.linalg.lstsq(a, b, rcond=None)[0].tolist()


def pil_perspective(img: Image.Image, start_points: Points, end_points: Points, resample: int) -> Image.Image:
    """Warps a PIL image so that `start_points` land on `end_points`."""
    coeffs = pil_perspective_coeffs(start_points, end_points)
    return img.transform(img.size, Image.PERSPECTIVE, coeffs, resample)
