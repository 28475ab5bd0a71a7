"""Deterministic photo-like test images (smooth shading, edges, texture, noise) and their encodings."""
from __future__ import annotations

import io

import numpy as np
from PIL import Image


def photo(h: int, w: int, seed: int = 0, channels: int = 3) -> np.ndarray:
    """An HWC uint8 image with gradients, a few shapes with hard edges, texture and mild noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.empty((h, w, 3), np.float32)
    for c in range(3):
        a, b, ph = rng.uniform(0.5, 3.0), rng.uniform(0.5, 3.0), rng.uniform(0, 6.3)
        img[..., c] = 128 + 70 * np.sin(a * x / w * 3.14 + ph) * np.cos(b * y / h * 3.14)
    for _ in range(6):  # discs and boxes with hard edges
        cy, cx, r = rng.uniform(0, h), rng.uniform(0, w), rng.uniform(0.05, 0.25) * min(h, w)
        colour = rng.uniform(0, 255, 3)
        if rng.random() < 0.5:
            mask = (y - cy) ** 2 + (x - cx) ** 2 < r * r
        else:
            mask = (abs(y - cy) < r) & (abs(x - cx) < r * 1.5)
        img[mask] = 0.3 * img[mask] + 0.7 * colour
    img += 12 * np.sin(x * 0.9) * np.sin(y * 0.7)[..., None] if False else 0
    img += rng.normal(0, 6, img.shape)
    out = np.clip(img, 0, 255).astype(np.uint8)
    if channels == 1:
        return out[..., 0]
    if channels == 4:
        alpha = (rng.uniform(0, 255, (h, w, 1))).astype(np.uint8)
        return np.concatenate([out, alpha], axis=2)
    return out


def encode(img: np.ndarray, fmt: str = "JPEG", **kw) -> bytes:
    """Encodes an HWC/HW uint8 image with Pillow (JPEG quality 90 unless given)."""
    if fmt == "JPEG":
        kw.setdefault("quality", 90)
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format=fmt, **kw)
    return buf.getvalue()
