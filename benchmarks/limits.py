"""Limits: single-core rates (images/s) of JPEG decoders, of the hand-written W2 chain, and of
headrace's decode + random-resized-crop ops (the full-decode chain against RandomCropDecodeResize,
which decodes only the crop when headrace's C extension is built).

One process, one thread, all W2 JPEGs in memory; an "epoch" is one pass over them.

    python -m benchmarks.limits --psnr benchmarks/_data/w2    # RandomCropDecodeResize's quality

A full benchmark run puts the same quality table in RESULTS.md.
"""
from __future__ import annotations

import functools
import io
import math
import random
import sys

import numpy as np

from . import w2
from .config import Config


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
    from headrace._image import decode as dec
    saved, dec._jpegregion = dec._jpegregion, None
    try:
        return _hr_ops()[2](b)
    finally:
        dec._jpegregion = saved


def _psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b) ** 2))
    return math.inf if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)


def quality(d: str, count: int = 500, sizes: tuple[int, ...] = (224, 112)) -> list[dict]:
    """RandomCropDecodeResize(size) against Decode -> RandomResizedCrop(size) on the first `count`
    JPEGs in `d`, under the same sample keys (so the same crop boxes), for each output size.

    At 224 the W2 photos (~500x375) are never shrunk 2x, so only the region decode runs and the
    pixels should be identical. At 112 most crops are shrunk 2x or more and are decoded at 1/k
    scale: the box's edges snap to the reduced image's k-pixel grid (a shift under k/2 pixels) and
    the reduced pixels are resampled. So besides the PSNR against the chain, each result is scored
    against an area-averaged resize (a downscale without aliasing) of the full decode's pixels in
    the box it actually covers, and so is the chain's result in its own box."""
    import cv2
    from headrace._util import rng
    import headrace.dataset.vision as v
    from headrace.dataset.vision._ops_decode import _reduction, _scaled_box
    decode = _hr_ops()[0]
    bufs = []
    for p, _ in w2.manifest(d)[:count]:
        with open(p, "rb") as f:
            bufs.append(f.read())

    def area(img, box, size):
        top, left, ch, cw = box
        return cv2.resize(img[top:top + ch, left:left + cw], (size, size), interpolation=cv2.INTER_AREA)

    out = []
    for size in sizes:
        rrc, rcdr = v.RandomResizedCrop(size), v.RandomCropDecodeResize(size)
        vs_chain, rcdr_area, chain_area = [], [], []
        for i, b in enumerate(bufs):
            key = (0, 0, 0, i)
            img = decode(b)
            with rng.sample_key(key):
                want = rrc(img)
            with rng.sample_key(key):
                got = rcdr(b)
            if np.array_equal(got, want):
                continue
            with rng.sample_key(key):
                box = top, left, ch, cw = rcdr._box(*img.shape[:2])
            h, w = img.shape[:2]
            k = _reduction(ch, cw, size, size)
            y0, x0, y1, x1 = _scaled_box(top, left, ch, cw, h, w, -(-h // k), -(-w // k))
            used = (k * y0, k * x0, min(h, k * y1) - k * y0, min(w, k * x1) - k * x0)
            vs_chain.append(_psnr(got, want))
            rcdr_area.append(_psnr(got, area(img, used, size)))
            chain_area.append(_psnr(want, area(img, box, size)))
        row = {"size": size, "images": len(bufs), "identical": len(bufs) - len(vs_chain)}
        if vs_chain:
            row.update(min_db=min(vs_chain), median_db=float(np.median(vs_chain)),
                       rcdr_area=(min(rcdr_area), float(np.median(rcdr_area))),
                       chain_area=(min(chain_area), float(np.median(chain_area))),
                       rcdr_closer=float(np.mean(np.array(rcdr_area) > np.array(chain_area))))
        out.append(row)
    return out


def quality_markdown(rows: list[dict]) -> str:
    """The quality check as a Markdown table (for RESULTS.md)."""
    lines = ["| output size | images | identical to the chain | PSNR vs the chain, min / median "
             "| PSNR vs area resize of its box: RandomCropDecodeResize, min / median | the same for the "
             "chain | RandomCropDecodeResize closer |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "min_db" in r:
            rest = (f"{r['min_db']:.1f} / {r['median_db']:.1f} dB | {r['rcdr_area'][0]:.1f} / "
                    f"{r['rcdr_area'][1]:.1f} dB | {r['chain_area'][0]:.1f} / {r['chain_area'][1]:.1f} dB "
                    f"| {r['rcdr_closer']:.0%} |")
        else:
            rest = "– | – | – | – |"
        lines.append(f"| {r['size']} | {r['images']:,} | {r['identical']:,} | {rest}")
    return "\n".join(lines) + "\n"


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
    print(quality_markdown(quality(sys.argv[2])))
