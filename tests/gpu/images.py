"""Encoded images for the GPU-stage tests (issue 43), made with OpenCV and Pillow."""
from __future__ import annotations

import io

import cv2
import numpy as np
from PIL import Image


def photo(h: int, w: int, seed: int) -> np.ndarray:
    """A smooth RGB image with noise (each seed gives other pixels)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x * 255 // max(w - 1, 1), y * 255 // max(h - 1, 1), (x + y) % 256], -1)
    return np.clip(base + rng.integers(-40, 40, (h, w, 3)), 0, 255).astype(np.uint8)


def jpeg(img: np.ndarray) -> np.ndarray:
    return cv2.imencode(".jpg", img[:, :, ::-1])[1]


def png(img: np.ndarray) -> np.ndarray:
    return cv2.imencode(".png", img[:, :, ::-1])[1]


def progressive(img: np.ndarray) -> np.ndarray:
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, "JPEG", progressive=True, quality=90)
    return np.frombuffer(buf.getvalue(), np.uint8)


def mixed(n: int, png_every: int = 0, progressive_every: int = 0, h: int = 60, w: int = 80) -> list[np.ndarray]:
    """n encoded images of h x w + small variations: PNG every ``png_every``-th, progressive JPEG
    every ``progressive_every``-th (0: none), baseline JPEG otherwise."""
    out = []
    for i in range(n):
        img = photo(h + i % 5, w - i % 7, i)
        if png_every and i % png_every == 1:
            out.append(png(img))
        elif progressive_every and i % progressive_every == 2:
            out.append(progressive(img))
        else:
            out.append(jpeg(img))
    return out
