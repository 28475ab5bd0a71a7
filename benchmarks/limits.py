"""Limits: single-core rates (images/s) of JPEG decoders and of the hand-written W2 chain.

One process, one thread, all W2 JPEGs in memory; an "epoch" is one pass over them.
"""
from __future__ import annotations

import io
import random

import numpy as np

from . import w2
from .suite import Config


def _cv2_bgr(b):
    import cv2
    return cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_COLOR)


def _cv2_rgb(b):
    import cv2
    return cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_COLOR_RGB)


def _cv2_reduced2(b):
    import cv2
    return cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_REDUCED_COLOR_2)


def _cv2_resize(b):
    import cv2
    return cv2.resize(_cv2_rgb(b), (w2.SIZE, w2.SIZE), interpolation=cv2.INTER_LINEAR)


def _pil(b):
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(b)).convert("RGB"))


def _pil_draft2(b):
    from PIL import Image
    img = Image.open(io.BytesIO(b))
    img.draft("RGB", (img.width // 2, img.height // 2))
    return np.asarray(img.convert("RGB"))


def _sj(b, **kw):
    import simplejpeg
    return simplejpeg.decode_jpeg(b, colorspace="RGB", **kw)


_RNG = random.Random(0)
DECODERS = {
    "cv2.imdecode BGR": _cv2_bgr,
    "cv2.imdecode RGB": _cv2_rgb,
    "cv2 IMREAD_REDUCED_COLOR_2": _cv2_reduced2,
    "PIL open+convert RGB": _pil,
    "PIL draft 1/2": _pil_draft2,
    "simplejpeg": _sj,
    "simplejpeg min 224 (5/8)": lambda b: _sj(b, min_height=224, min_width=224),
    "simplejpeg min 160 (1/2)": lambda b: _sj(b, min_height=160, min_width=160),
    "cv2 decode+resize 224": _cv2_resize,
    "W2 chain, OpenCV": lambda b: w2.chain_cv2(b, _RNG),
    "W2 chain, Pillow": lambda b: w2.chain_pil(b, _RNG),
}

CONFIGS = [Config("limits", "python", name, (0,)) for name in DECODERS]
