"""Bounding-box kernels: checks and box arithmetic for the ``*WithBBox`` ops.

Boxes are an N x K float32 array (K >= 4) whose first four columns are [x, y, width, height]
in pixels; columns past the fourth travel unchanged. All arithmetic is done in float32, as
MindSpore's C++ ops do, so results agree to the last bit. Functions return new arrays and never
change their inputs (MindSpore's eager calls write into the caller's box array; we do not).
"""
from __future__ import annotations

from typing import Callable

import cv2
import numpy as np

from headrace._image import geometry as geo

_F32 = np.float32


def _fmt(v: float) -> str:
    return f"{float(v):f}"


def check_inputs(args: tuple, op: str = "BoundingBox") -> tuple[np.ndarray, np.ndarray]:
    """MindSpore's checks of an (image, bbox) pair; returns them, or raises ``RuntimeError``.

    Order: number of inputs, image rank, box rank, empty boxes, features per box, box dtype, then
    for each box in turn its right/bottom edge against the image and its top-left corner sign.
    """
    if len(args) != 2:
        raise RuntimeError(f"{op}: invalid input, size of input data should be 2 (including image and "
                           f"bounding box), but got: {len(args)}")
    img, boxes = args
    if img.ndim < 2:
        raise RuntimeError("Invalid data, input image hasn't been decoded, you may need to perform "
                           "Decode first.")
    if boxes.ndim < 2:
        raise RuntimeError(f"{op}: bounding boxes should have to be two-dimensional matrix at least, "
                           f"but got {boxes.ndim} dimension.")
    if boxes.size == 0:
        raise RuntimeError("Input Tensor has no data.")
    if boxes.shape[1] < 4:
        raise RuntimeError(f"{op}: bounding boxes should be have at least 4 features, but got: "
                           f"{boxes.shape[1]}")
    if boxes.dtype != np.float32:
        raise RuntimeError("Template type and Tensor type are not compatible")
    h, w = img.shape[0], img.shape[1]
    b = boxes.reshape(boxes.shape[0], -1)
    for x, y, bw, bh in b[:, :4]:
        right, bottom = x + bw, y + bh
        if right > w or bottom > h:
            raise RuntimeError(f"{op}: bounding boxes is out of bounds of the image, as image width: {w}, "
                               f"bbox width coordinate: {_fmt(right)}, and image height: {h}, bbox height "
                               f"coordinate: {_fmt(bottom)}")
        if x < 0 or y < 0:
            raise RuntimeError(f"{op}: the coordinates of the bounding boxes has negative value, got: "
                               f"({_fmt(x)},{_fmt(y)}).")
    return img, boxes


def hflip(boxes: np.ndarray, width: int) -> np.ndarray:
    """Boxes after a left-right flip of an image `width` pixels wide: x -> (width - x) - w.

    The two flips round differently in float32 (this one subtracts twice, :func:`vflip` adds
    first); both are MindSpore's, checked against it on fractional boxes.
    """
    out = boxes.copy()
    out[:, 0] = (_F32(width) - boxes[:, 0]) - boxes[:, 2]
    return out


def vflip(boxes: np.ndarray, height: int) -> np.ndarray:
    """Boxes after a top-bottom flip: y -> height - (y + h)."""
    out = boxes.copy()
    out[:, 1] = _F32(height) - (boxes[:, 1] + boxes[:, 3])
    return out


def scale(boxes: np.ndarray, old_h: int, old_w: int, new_h: int, new_w: int) -> np.ndarray:
    """Boxes after resizing the image from (old_h, old_w) to (new_h, new_w)."""
    out = boxes.copy()
    rw, rh = _F32(new_w) / _F32(old_w), _F32(new_h) / _F32(old_h)
    out[:, 0] *= rw
    out[:, 2] *= rw
    out[:, 1] *= rh
    out[:, 3] *= rh
    return out


def shift(boxes: np.ndarray, dx: int, dy: int) -> np.ndarray:
    """Boxes moved by (dx, dy) pixels (after padding the image on the left / top)."""
    out = boxes.copy()
    out[:, 0] += _F32(dx)
    out[:, 1] += _F32(dy)
    return out


def crop(boxes: np.ndarray, top: int, left: int, h: int, w: int) -> np.ndarray:
    """Boxes after cropping the (top, left, h, w) window.
    A box is dropped when it lies wholly to one side of the window, where touching an edge counts
    as inside (x + w < left, y + h < top, x > left + w or y > top + h). The others are clipped
    to the window and moved into its frame, so a box touching an edge keeps a zero width or height.
    """
    x0, y0 = boxes[:, 0], boxes[:, 1]
    x1, y1 = x0 + boxes[:, 2], y0 + boxes[:, 3]
    cl, ct, cr, cb = _F32(left), _F32(top), _F32(left + w), _F32(top + h)
    keep = ~((x1 < cl) | (y1 < ct) | (x0 > cr) | (y0 > cb))
    out = boxes[keep].copy()
    nx0, ny0 = np.maximum(x0[keep], cl), np.maximum(y0[keep], ct)
    nx1, ny1 = np.minimum(x1[keep], cr), np.minimum(y1[keep], cb)
    out[:, 0] = nx0 - cl
    out[:, 1] = ny0 - ct
    out[:, 2] = nx1 - nx0
    out[:, 3] = ny1 - ny0
    return out


def paste_region(img: np.ndarray, box: np.ndarray, transform: Callable[[np.ndarray], np.ndarray]) -> None:
    """Runs `transform` on the pixels under `box` (truncated to whole pixels) and writes the
    result back into `img` in place; an output of another size is first resized bilinearly
    (OpenCV) to the region's size, as MindSpore does."""
    x, y, w, h = (int(v) for v in box[:4])
    if w <= 0 or h <= 0:
        raise RuntimeError(f"The pointer[data] is null. (the box at ({x}, {y}) covers no whole pixel: "
                           f"width {w}, height {h})")
    region = np.ascontiguousarray(img[y:y + h, x:x + w])
    out = np.asarray(transform(region))
    if out.ndim == 3 and img.ndim == 2 and out.shape[2] == 1:
        out = out[:, :, 0]
    if out.shape[:2] != (h, w):
        out = geo.resize(out, h, w, cv2.INTER_LINEAR)
    img[y:y + h, x:x + w] = out.reshape(img[y:y + h, x:x + w].shape)
