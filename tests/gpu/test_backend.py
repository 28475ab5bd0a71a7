"""The device-backend seam (headrace/_image/device.py): header classes, the NumPy steps, the fake
backend and the batch runner."""
from __future__ import annotations

import io

import cv2
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from PIL import Image

import headrace.dataset.vision as vision
from headrace._image import device
from tests.gpu.images import jpeg, photo, png, progressive


def pil_jpeg(img, mode="RGB", **kw):
    buf = io.BytesIO()
    Image.fromarray(img).convert(mode).save(buf, "JPEG", **kw)
    return buf.getvalue()


def test_jpeg_kind_tells_what_a_device_decoder_takes():
    img = photo(30, 41, 0)
    assert device.jpeg_kind(jpeg(img).tobytes()) == ("baseline", (30, 41))
    assert device.jpeg_kind(pil_jpeg(img, "L")) == ("baseline", (30, 41))
    assert device.jpeg_kind(png(img).tobytes()) == ("png", None)
    assert device.jpeg_kind(progressive(img).tobytes()) == ("progressive", None)
    assert device.jpeg_kind(pil_jpeg(img, "CMYK")) == ("cmyk", None)
    assert device.jpeg_kind(cv2.imencode(".bmp", img)[1].tobytes()) == ("not jpeg", None)
    whole = jpeg(img).tobytes()
    assert device.jpeg_kind(whole[:-2]) == ("damaged", None)       # no end marker
    assert device.jpeg_kind(whole[:20] + b"\xff\xd9") == ("damaged", None)  # no frame header
    assert device.jpeg_kind(b"\xff\xd8\xff\xd9") == ("damaged", None)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64), st.booleans())
def test_jpeg_kind_never_raises_on_any_bytes(data, soi):
    kind, size = device.jpeg_kind((b"\xff\xd8" if soi else b"") + data)
    assert kind in ("baseline", "png", "not jpeg", "progressive", "lossless", "hierarchical", "arithmetic",
                    "12-bit", "cmyk", "damaged")
    assert (size is not None) == (kind == "baseline")


def test_the_steps_equal_the_cpu_ops():
    img = photo(40, 50, 3)
    steps = [("crop", 3, 4, 30, 40), ("resize", 20, 24, cv2.INTER_LINEAR), ("flip", True), ("flip", False),
             ("normalize", (1.0, 2.0, 3.0), (4.0, 5.0, 6.0)), ("chw",)]
    ref = vision.Crop((3, 4), (30, 40))(img)
    ref = vision.Resize((20, 24))(ref)
    ref = vision.VerticalFlip()(vision.HorizontalFlip()(ref))
    ref = vision.HWC2CHW()(vision.Normalize([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])(ref))
    out = device.apply_steps(img, steps)
    assert out.dtype == np.float32 and out.shape == (3, 20, 24) and np.array_equal(out, ref)
    cubic = device.apply_steps(img, [("resize", 9, 7, "pilcubic")])
    assert np.array_equal(cubic, vision.Resize((9, 7), vision.Inter.PILCUBIC)(img))
    with pytest.raises(ValueError, match="unknown device step"):
        device.apply_steps(img, [("rotate", 3)])


def test_run_batch_decodes_transforms_stacks_and_counts():
    backend = device.FakeBackend()
    a, b = photo(20, 30, 1), photo(22, 30, 2)
    items = [device.DeviceWork(jpeg(a).tobytes(), (("decode", "Decode"), ("crop", 0, 0, 20, 30)), index=0),
             device.DeviceWork(None, (), result=np.zeros((20, 30, 3), np.uint8), fallback="png", index=1),
             device.DeviceWork(b, (("crop", 2, 0, 20, 30),), index=2)]
    batch, fallbacks = device.run_batch(backend, items)
    assert batch.shape == (3, 20, 30, 3) and fallbacks == {"png": 1}
    assert np.array_equal(batch[0], vision.Decode()(jpeg(a)))
    assert not batch[1].any() and np.array_equal(batch[2], b[2:])


def test_a_work_item_survives_pickling():
    import pickle
    w = device.DeviceWork(b"\xff\xd8", (("decode", "Decode"),), index=7)
    v = pickle.loads(pickle.dumps(w))
    assert (v.source, v.steps, v.result, v.fallback, v.index) == (b"\xff\xd8", (("decode", "Decode"),), None, None, 7)
    assert repr(v) == "DeviceWork(index=7, steps=[('decode', 'Decode')])"
