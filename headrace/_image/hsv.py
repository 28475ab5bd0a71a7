"""RGB <-> HSV on whole arrays, with the per-pixel arithmetic of Python's ``colorsys``.

MindSpore's RgbToHsv / HsvToRgb run ``colorsys`` pixel by pixel on Python floats; these do the
same operations in the same order on float64 arrays, so the results agree bit for bit (the ops
add MindSpore's float32 rounding of some planes; see NOTE [ HSV float32 rounding ] in
``_ops_misc``). Hue, saturation and value are in [0, 1] for [0, 1] input; value keeps the
input's scale.
"""
from __future__ import annotations

import numpy as np


def rgb_to_hsv(r: np.ndarray, g: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(h, s, v) float64 planes from r, g, b planes."""
    r, g, b = (np.asarray(c, np.float64) for c in (r, g, b))
    maxc = np.maximum(np.maximum(r, g), b)
    minc = np.minimum(np.minimum(r, g), b)
    grey = minc == maxc
    rangec = np.where(grey, 1.0, maxc - minc)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(grey, 0.0, (maxc - minc) / np.where(maxc == 0, 1.0, maxc))
    rc, gc, bc = (maxc - r) / rangec, (maxc - g) / rangec, (maxc - b) / rangec
    h = np.where(r == maxc, bc - gc, np.where(g == maxc, 2.0 + rc - bc, 4.0 + gc - rc))
    h = np.where(grey, 0.0, np.mod(h / 6.0, 1.0))
    return h, s, maxc


def hsv_to_rgb(h: np.ndarray, s: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(r, g, b) float64 planes from h, s, v planes (hue wraps around 1)."""
    h, s, v = (np.asarray(c, np.float64) for c in (h, s, v))
    i = np.trunc(h * 6.0)
    f = (h * 6.0) - i
    p = v * (1.0 - s)
    q = v * (1.0 - s * f)
    t = v * (1.0 - s * (1.0 - f))
    i = np.mod(i, 6).astype(np.int64)
    r = np.choose(i, [v, q, p, p, t, v])
    g = np.choose(i, [t, v, v, q, p, p])
    b = np.choose(i, [p, p, t, v, v, q])
    grey = s == 0.0
    return np.where(grey, v, r), np.where(grey, v, g), np.where(grey, v, b)
