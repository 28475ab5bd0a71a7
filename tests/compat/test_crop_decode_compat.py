"""RandomCropDecodeResize against MindSpore 2.10, with the window pinned to the whole image.

``scale=(1, 1)`` and the image's own aspect ratio leave one possible window: the whole image. Then
MindSpore's op equals its Decode + Resize. headrace's equals it exactly while the image is shrunk
less than 2x; at 2x or more headrace decodes at a reduced DCT scale (on purpose: issue #5 asks for
it), which resamples differently, so that case is held to a PSNR floor instead.

Windows smaller than the image are not compared pixel by pixel: MindSpore's crop decode treats
the window's edges as image edges when it upsamples chroma (edge pixels then differ from its own
Decode + crop by a few grey levels), while headrace's equals Decode + crop exactly
(tests/vision/test_region_decode.py).
"""
from __future__ import annotations

import math

import numpy as np

import headrace.dataset.vision as hv
from tests.oracles.oracle import run_ms
from tests.vision.imagegen import encode, photo

H, W = 120, 160
JPEG = encode(photo(H, W, 21))
JPEG_420 = encode(photo(H, W, 22), subsampling=2, quality=85)
SIZES = [(H, W), (90, 120), (61, 81), (60, 80), (15, 20)]  # (61, 81) shrinks just under 2x


def _psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(np.float64) - b) ** 2))
    return math.inf if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)


def test_a_whole_image_window_matches_mindspore():
    got_ms = run_ms(f"""
import mindspore.dataset.vision as v
RESULT = [[v.RandomCropDecodeResize(s, scale=(1.0, 1.0), ratio=({W / H!r}, {W / H!r}))(np.frombuffer(b, np.uint8))
           for s in {SIZES!r}] for b in INPUTS]
""", [JPEG, JPEG_420])
    for data, outs in zip([JPEG, JPEG_420], got_ms):
        chain = [hv.Resize(s)(hv.Decode()(data)) for s in SIZES]
        for s, ms_out, want in zip(SIZES, outs, chain):
            np.testing.assert_array_equal(ms_out, want)  # MindSpore: decode, then resize
            ours = hv.RandomCropDecodeResize(s, scale=(1.0, 1.0), ratio=(W / H, W / H))(data)
            assert ours.shape == ms_out.shape and ours.dtype == np.uint8
            if H >= 2 * s[0] and W >= 2 * s[1]:
                assert not np.array_equal(ours, ms_out)  # the reduced-scale decode ran
                assert _psnr(ours, ms_out) > 25.0, s
            else:
                np.testing.assert_array_equal(ours, ms_out)
