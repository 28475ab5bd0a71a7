"""Decode, RandomCropDecodeResize and the fused Decode + RandomResizedCrop."""
import io
import math

import cv2
import numpy as np
import pytest
from PIL import Image

import headrace.dataset.transforms as t
import headrace.dataset.vision as v
from headrace._util import rng
from headrace.dataset.vision._ops_convert import NormalizeHWC2CHW
from headrace.dataset.vision._ops_decode import DecodeRandomResizedCrop
from tests.vision.imagegen import encode, photo

IMG = photo(120, 160, 11)
JPEG = encode(IMG)


def _psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return math.inf if mse == 0 else 10 * math.log10(255.0**2 / mse)


@pytest.mark.parametrize("data, detail", [
    (b"", "empty"),
    (np.zeros(0, np.uint8), "empty"),
    (b"not an image at all", "not in a known image format"),
    (JPEG[:200], "corrupt or truncated"),  # header only: MindSpore 2.10 dies with SIGFPE here
    (encode(IMG, "PNG")[:300], "image decode failed"),
], ids=["bytes", "array", "junk", "header only", "png cut"])
def test_bad_data_raises_a_clear_decode_error(data, detail):
    with pytest.raises(RuntimeError, match=r"^Decode: image decode failed\.") as info:
        v.Decode()(data)
    assert detail in str(info.value)


def test_bad_input_types():
    with pytest.raises(TypeError, match="number of array dimensions of the encoded image should be 1, but got 2"):
        v.Decode()(np.zeros((2, 2), np.uint8))
    with pytest.raises(TypeError, match="should be <class 'numpy.ndarray'>, but got <class 'str'>"):
        v.Decode()("x.jpg")
    with pytest.raises(RuntimeError, match="^Decode: image decode failed"):
        v.Decode(to_pil=True)(b"junk")
    with pytest.raises(RuntimeError, match="^RandomCropDecodeResize: image decode failed"):
        v.RandomCropDecodeResize(8)(b"junk")


def test_extraneous_bytes_before_a_marker_are_tolerated():
    # real datasets (ImageNet) hold a few of these; libjpeg only warns, MindSpore decodes them
    app0_end = 4 + int.from_bytes(JPEG[4:6], "big")
    data = JPEG[:app0_end] + b"\x00\x00" + JPEG[app0_end:]
    np.testing.assert_array_equal(v.Decode()(data), v.Decode()(JPEG))


def test_decode_formats_and_pil_path():
    assert v.Decode()(encode(IMG[..., 0], "PNG")).shape == (120, 160, 3)
    np.testing.assert_array_equal(v.Decode()(encode(IMG, "PNG")), IMG)
    buf = io.BytesIO()
    Image.fromarray(IMG).save(buf, "WEBP", lossless=True)
    np.testing.assert_array_equal(v.Decode()(buf.getvalue()), IMG)  # MindSpore refuses WebP
    im = v.Decode(to_pil=True)(JPEG)
    assert isinstance(im, Image.Image) and im.mode == "RGB"
    assert np.abs(np.asarray(im).astype(int) - v.Decode()(JPEG)).max() <= 1


def _keyed(fn, data, key=(3, 0, 0, 1)):
    with rng.sample_key(key):
        return fn(data)


@pytest.mark.parametrize("size", [(40, 50), 90, (100, 30)])
def test_fused_op_draws_the_same_crop_as_decode_then_rrc(size):
    rrc = v.RandomResizedCrop(size)
    fused = DecodeRandomResizedCrop(v.Decode(), rrc, reduced=False)
    for i in range(20):
        key = (9, 0, 0, i)
        unfused = _keyed(lambda d: rrc(v.Decode()(d)), JPEG, key)
        np.testing.assert_array_equal(_keyed(fused, JPEG, key), unfused)


def test_reduced_dct_decode_is_close_to_the_exact_path():
    big = encode(photo(640, 800, 5))
    rrc = v.RandomResizedCrop(128, scale=(0.5, 1.0))
    exact = DecodeRandomResizedCrop(v.Decode(), rrc, reduced=False)
    fast = DecodeRandomResizedCrop(v.Decode(), rrc, reduced=True)
    scores = [_psnr(_keyed(exact, big, (1, 0, 0, i)), _keyed(fast, big, (1, 0, 0, i))) for i in range(12)]
    assert min(scores) > 30.0
    assert any(s != math.inf for s in scores)  # the reduced path was taken at least once


def test_random_crop_decode_resize_pinned_equals_decode_resize():
    # scale 1 and the image's own aspect ratio pin the crop to the whole image
    # (an output under half the crop size would take the reduced-DCT path; see the next test)
    op = v.RandomCropDecodeResize((90, 120), scale=(1.0, 1.0), ratio=(160 / 120, 160 / 120))
    np.testing.assert_array_equal(op(JPEG), v.Resize((90, 120))(v.Decode()(JPEG)))
    png = encode(IMG, "PNG")
    np.testing.assert_array_equal(op(png), v.Resize((90, 120))(IMG))


def test_random_crop_decode_resize_uses_reduced_decoding_when_shrinking():
    big = encode(photo(512, 512, 8))
    op = v.RandomCropDecodeResize(64, scale=(1.0, 1.0), ratio=(1.0, 1.0))
    exact = v.Resize(64)(v.Decode()(big))
    out = op(big)
    assert out.shape == (64, 64, 3) and not np.array_equal(out, exact)  # 1/8-scale decode
    assert _psnr(out, exact) > 30.0


def test_fuse_ops_rules():
    dec, rrc, norm, chw = v.Decode(), v.RandomResizedCrop(32), v.Normalize([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]), v.HWC2CHW()
    flip = v.RandomHorizontalFlip()
    ops = [dec, rrc, flip, norm, chw]
    fused = t.fuse_ops(ops)
    assert len(ops) == 5 and len(fused) == 2
    assert isinstance(fused[0], DecodeRandomResizedCrop) and fused[0].source_ops == (dec, rrc)
    assert isinstance(fused[1], NormalizeHWC2CHW) and fused[1].source_ops == (flip, norm, chw)
    assert t.fuse_ops([v.Decode(to_pil=True), rrc])[0].__class__ is v.Decode
    assert len(t.fuse_ops([dec, v.RandomResizedCrop(8, interpolation=v.Inter.ANTIALIAS)])) == 2
    assert len(t.fuse_ops([v.Normalize([1.0], [1.0], is_hwc=False), chw])) == 2
    assert t.fuse_ops([]) == [] and t.fuse_ops([abs]) == [abs]


@pytest.mark.parametrize("img", [IMG, IMG[..., 0], IMG.astype(np.float32), IMG[..., :1]])
def test_fused_normalize_hwc2chw_is_exact(img):
    mean, std = [10.0, 20.0, 30.0][: (img.shape[2] if img.ndim == 3 else 1)], [3.0, 4.0, 5.0][: (img.shape[2] if img.ndim == 3 else 1)]
    norm, chw = v.Normalize(mean, std), v.HWC2CHW()
    fused = NormalizeHWC2CHW(norm, chw)
    want = chw(norm(img))
    got = fused(img)
    assert got.dtype == want.dtype and got.shape == want.shape and got.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(got, want)


def test_decode_of_cv2_encoded_data_matches_cv2():
    ok, buf = cv2.imencode(".bmp", IMG[..., ::-1])
    np.testing.assert_array_equal(v.Decode()(buf), IMG)
