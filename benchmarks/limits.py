"""Limits: single-core rates (images/s) of JPEG decoders, of the hand-written W2 chain, and of
headrace's decode + random-resized-crop ops (the full-decode chain against RandomCropDecodeResize,
which decodes only the crop when headrace's C extension is built).

One process, one thread, all W2 JPEGs in memory; an "epoch" is one pass over them.

    python -m benchmarks.limits --psnr benchmarks/_data/w2    # RandomCropDecodeResize's quality
"""
from __future__ import annotations

import functools
import io
import math
import random
import sys

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


@functools.lru_cache(maxsize=None)
def _hr_ops():
    import cv2
    import headrace.dataset.vision as v
    cv2.setNumThreads(1)
    return v.Decode(), v.RandomResizedCrop(w2.SIZE), v.RandomCropDecodeResize(w2.SIZE)


def _hr_chain(b):
    decode, rrc, _ = _hr_ops()
    return rrc(decode(b))


def _hr_rcdr(b):
    return _hr_ops()[2](b)


def _hr_rcdr_whole(b):
    """RandomCropDecodeResize as without the C extension: it decodes the whole image."""
    from headrace.dataset.vision._kernels import decode as dec
    saved, dec._jpegregion = dec._jpegregion, None
    try:
        return _hr_ops()[2](b)
    finally:
        dec._jpegregion = saved


def psnr_check(d: str, count: int = 500) -> dict:
    """PSNR (dB) of RandomCropDecodeResize(224) against Decode -> RandomResizedCrop(224) on the
    first `count` JPEGs in `d`, under the same sample keys (so the same crop boxes)."""
    from headrace._util import rng
    decode, rrc, rcdr = _hr_ops()
    scores = []
    for i, (p, _) in enumerate(w2.manifest(d)[:count]):
        with open(p, "rb") as f:
            b = f.read()
        with rng.sample_key((0, 0, 0, i)):
            want = rrc(decode(b))
        with rng.sample_key((0, 0, 0, i)):
            got = rcdr(b)
        mse = float(np.mean((got.astype(np.float64) - want) ** 2))
        scores.append(math.inf if mse == 0 else 10 * math.log10(255.0 ** 2 / mse))
    finite = sorted(s for s in scores if s != math.inf)
    return {"images": len(scores), "identical": len(scores) - len(finite),
            "min_db": finite[0] if finite else math.inf,
            "median_db_of_changed": finite[len(finite) // 2] if finite else math.inf}


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
    "headrace Decode -> RandomResizedCrop 224": _hr_chain,
    "headrace RandomCropDecodeResize 224": _hr_rcdr,
    "headrace RandomCropDecodeResize 224, whole-image decode": _hr_rcdr_whole,
}

CONFIGS = [Config("limits", "python", name, (0,)) for name in DECODERS]

if __name__ == "__main__" and sys.argv[1:2] == ["--psnr"]:
    print(psnr_check(sys.argv[2]))
