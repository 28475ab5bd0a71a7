"""Erasing and mixing kernels: CutOut, Erase, RandomErasing, MixUpBatch, CutMixBatch.

Pure functions over NumPy arrays. Random ones take the generator to draw from (the op passes
``headrace._util.rng.sample_rng()``), so they never touch global random state. What is drawn, and
how it is turned into boxes, follows MindSpore's ops; the draws themselves come from our generator.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from headrace._image.color import blend, saturate

__all__ = ["cutmix_batch", "cutout", "erase", "erase_box", "mixup_batch", "random_erasing",
           "random_erasing_params"]


def _fill_values(value: Sequence[float], dtype: np.dtype, channels: int) -> np.ndarray:
    """``value`` (1 or ``channels`` numbers) converted into ``dtype`` the way OpenCV does."""
    vals = np.asarray(value, dtype=np.float64).ravel()
    if vals.size == 1:
        vals = np.repeat(vals, channels)
    return saturate(vals[:channels], dtype)


def cutout(img: np.ndarray, length: int, num_patches: int, is_hwc: bool,
           rng: np.random.Generator) -> np.ndarray:
    """Zeroes ``num_patches`` square patches of side ``length`` at random places.

    A patch's top-left corner is drawn uniformly from ``[-length, size]`` on each axis and the
    patch is clipped to the image, so patches may be partly (or wholly) off the image, as in
    MindSpore.

    Args:
        img: HWC (``is_hwc``) or CHW array; ``length`` must not exceed height or width.
        length: side of a patch.
        num_patches: how many patches.
        is_hwc: layout of ``img``.
        rng: generator to draw the positions from.

    Returns:
        a new array with the patches set to 0.
    """
    out = img.copy()
    h, w = (img.shape[0], img.shape[1]) if is_hwc else (img.shape[1], img.shape[2])
    starts = rng.integers(0, np.array([h, w]) + length, size=(num_patches, 2), endpoint=True) - length
    for top, left in starts.tolist():
        y0, y1 = max(top, 0), min(top + length, h)
        x0, x1 = max(left, 0), min(left + length, w)
        if y1 > y0 and x1 > x0:
            if is_hwc:
                out[y0:y1, x0:x1] = 0
            else:
                out[:, y0:y1, x0:x1] = 0
    return out


def erase(img: np.ndarray, top: int, left: int, height: int, width: int, value: Sequence[float],
          inplace: bool = False) -> np.ndarray:
    """Fills the box ``[top, top+height) x [left, left+width)`` of an HWC image with ``value``.

    The box is clipped to the image. ``value`` holds one number or one per channel; it is rounded
    (half to even) and saturated into the image dtype.

    Args:
        img: HWC array.
        top, left: the box's top-left corner (at most the image height / width).
        height, width: the box's size.
        value: fill value(s).
        inplace: write into ``img`` (when it is writeable) instead of a copy.

    Returns:
        the erased image (``img`` itself when ``inplace``).
    """
    out = img if inplace and img.flags.writeable else img.copy()
    out[top:top + height, left:left + width] = _fill_values(value, img.dtype, img.shape[2])
    return out


def random_erasing_params(shape: tuple[int, int, int], scale: Sequence[float], ratio: Sequence[float],
                          max_attempts: int, rng: np.random.Generator) -> tuple[int, int, int, int] | None:
    """Draws RandomErasing's box for a CHW image; None when no attempt fits.

    Each attempt draws an area fraction from ``scale`` and an aspect ratio from ``ratio``; the box
    (rounded to whole pixels) must be strictly smaller than the image on both axes.

    Returns:
        (top, left, height, width) or None.
    """
    _, h, w = shape
    area = h * w
    for _ in range(max_attempts):
        erase_area = rng.uniform(scale[0], scale[1]) * area
        aspect = rng.uniform(ratio[0], ratio[1])
        ew = int(round(math.sqrt(erase_area * aspect)))
        eh = int(round(ew / aspect)) if aspect else 0
        if eh < h and ew < w:
            top = int(rng.integers(0, h - eh, endpoint=True))
            left = int(rng.integers(0, w - ew, endpoint=True))
            return top, left, eh, ew
    return None


def _as_dtype_c(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Float values stored into an integer array the C way: truncate, then wrap."""
    if np.dtype(dtype).kind in "iub":
        return np.trunc(values).astype(np.int64).astype(dtype)
    return values.astype(dtype)


def erase_box(img: np.ndarray, box: tuple[int, int, int, int], value: float | str | Sequence[float],
              rng: np.random.Generator, inplace: bool = False) -> np.ndarray:
    """Fills a box of a CHW image: a number, one number per channel, or ``'random'`` (N(0, 1)).

    Args:
        img: CHW array.
        box: (top, left, height, width).
        value: the fill.
        rng: generator for ``'random'``.
        inplace: write into ``img`` when it is writeable.

    Returns:
        the erased image.
    """
    out = img if inplace and img.flags.writeable else img.copy()
    top, left, eh, ew = box
    c = img.shape[0]
    if isinstance(value, str):
        fill = _as_dtype_c(rng.standard_normal((c, eh, ew)), img.dtype)
    elif isinstance(value, (list, tuple)):
        fill = _as_dtype_c(np.asarray(value, dtype=np.float64)[:, None, None], img.dtype)
    else:
        fill = value  # type: ignore[assignment]  # a scalar broadcasts like an array
    out[:, top:top + eh, left:left + ew] = fill
    return out


def random_erasing(img: np.ndarray, prob: float, scale: Sequence[float], ratio: Sequence[float],
                   value: float | str | Sequence[float], inplace: bool, max_attempts: int,
                   rng: np.random.Generator) -> np.ndarray:
    """RandomErasing on a CHW array: with probability ``prob`` erases one random box.

    Returns:
        the (possibly) erased array; the input itself when nothing is erased.
    """
    if not rng.random() < prob:
        return img
    box = random_erasing_params(img.shape, scale, ratio, max_attempts, rng)
    if box is None:
        return img if inplace else img.copy()
    return erase_box(img, box, value, rng, inplace)


def _beta(alpha: float, rng: np.random.Generator) -> float:
    x1, x2 = rng.gamma(alpha), rng.gamma(alpha)
    total = x1 + x2
    return float(np.float32(x1 / total)) if total > 0 else 0.5


def mixup_batch(images: np.ndarray, labels: np.ndarray, alpha: float,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Mixes every sample with a randomly permuted partner using one Beta(alpha, alpha) weight.

    ``images = lam * images + (1 - lam) * images[perm]`` (rounded into the image dtype) and the
    same for the labels, which come back as float32.

    Args:
        images: batch of images (N, ...).
        labels: one-hot labels (N, C) or (N, L, C).
        alpha: Beta distribution parameter.
        rng: generator.

    Returns:
        (images, labels).
    """
    n = images.shape[0]
    perm = rng.permutation(n)
    lam = _beta(alpha, rng)
    lam32, rest32 = np.float32(lam), np.float32(1) - np.float32(lam)
    lab = labels.astype(np.float32)
    out_labels = lam32 * lab + rest32 * lab[perm]
    out_images = blend(images, lam32, images[perm], rest32, images.dtype)
    return out_images, out_labels


def _cut_box(h: int, w: int, lam: float, rng: np.random.Generator) -> tuple[int, int, int, int]:
    """CutMix's box for an area share ``1 - lam``: (x, y, width, height), at least 1x1."""
    ratio = math.sqrt(max(0.0, 1.0 - lam))
    cut_w, cut_h = int(w * ratio), int(h * ratio)
    cx = int(rng.integers(0, w, endpoint=True))
    cy = int(rng.integers(0, h, endpoint=True))
    x = min(max(cx - cut_w // 2, 0), w - 1)
    y = min(max(cy - cut_h // 2, 0), h - 1)
    x2 = min(max(cx + cut_w // 2, 0), w - 1)
    y2 = min(max(cy + cut_h // 2, 0), h - 1)
    return x, y, max(x2 - x, 1), max(y2 - y, 1)


def cutmix_batch(images: np.ndarray, labels: np.ndarray, alpha: float, prob: float, nchw: bool,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Pastes a random box of a permuted partner into each sample (with probability ``prob``).

    For each sample a weight ``lam ~ Beta(alpha, alpha)`` sets the box's area share to about
    ``1 - lam``; the box is centred at a uniform point and clipped (its right and bottom ends
    stop one pixel short of the image edge, as in MindSpore). The label becomes
    ``a * label + (1 - a) * partner_label`` with ``a = 1 - box_area / image_area``.

    Args:
        images: (N, H, W, C) or, with ``nchw``, (N, C, H, W).
        labels: one-hot (N, C) or (N, L, C).
        alpha: Beta parameter.
        prob: chance that a sample is mixed.
        nchw: layout of ``images``.
        rng: generator.

    Returns:
        (images, float32 labels).
    """
    n = images.shape[0]
    h, w = (images.shape[2], images.shape[3]) if nchw else (images.shape[1], images.shape[2])
    perm = rng.permutation(n)
    out_images = images.copy()
    lab = labels.astype(np.float32)
    out_labels = lab.copy()
    for i in range(n):
        lam = _beta(alpha, rng)
        if not rng.random() < prob:
            continue
        x, y, bw, bh = _cut_box(h, w, lam, rng)
        j = perm[i]
        if nchw:
            out_images[i, :, y:y + bh, x:x + bw] = images[j, :, y:y + bh, x:x + bw]
        else:
            out_images[i, y:y + bh, x:x + bw] = images[j, y:y + bh, x:x + bw]
        a = np.float32(1) - np.float32(bw * bh) / np.float32(h * w)
        out_labels[i] = a * lab[i] + (np.float32(1) - a) * lab[j]
    return out_images, out_labels
