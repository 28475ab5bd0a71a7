"""Conversion ops and file helpers."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from PIL import Image

import headrace.dataset.vision as v
from headrace.common import dtype as mstype
from headrace.dataset.vision import ImageReadMode
from tests.vision.imagegen import encode, photo

IMG = photo(20, 30, 4)


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.uint8, st.tuples(st.integers(1, 9), st.integers(1, 9), st.integers(1, 5))))
def test_normalize_hwc_and_chw_agree(img):
    c = img.shape[2]
    mean, std = [float(i * 10 + 1) for i in range(c)], [float(i + 2) for i in range(c)]
    hwc = v.Normalize(mean, std)(img)
    chw = v.Normalize(mean, std, is_hwc=False)(np.ascontiguousarray(img.transpose(2, 0, 1)))
    assert hwc.dtype == chw.dtype == np.float32
    np.testing.assert_array_equal(hwc.transpose(2, 0, 1), chw)
    want = (img.astype(np.float32) - np.float32(mean)) / np.float32(std)
    np.testing.assert_array_equal(hwc, want)


def test_normalize_pad_appends_a_zero_channel():
    # MindSpore 2.10's HWC kernel scrambles this layout; headrace gives the documented result
    out = v.NormalizePad([1.0, 2.0, 3.0], [1.0, 2.0, 4.0])(np.full((2, 2, 3), 5, np.uint8))
    assert out.shape == (2, 2, 4) and out.dtype == np.float32
    assert out[0, 0].tolist() == [4.0, 1.5, 0.5, 0.0]
    half = v.NormalizePad([1.0], [2.0], dtype="float16")(np.full((2, 3), 3, np.uint8))
    assert half.shape == (2, 3, 2) and half.dtype == np.float16 and half[0, 0].tolist() == [1.0, 0.0]


def test_to_tensor_scales_and_transposes():
    out = v.ToTensor()(IMG)
    assert out.shape == (3, 20, 30) and out.dtype == np.float32
    np.testing.assert_array_equal(out, IMG.transpose(2, 0, 1).astype(np.float32) * np.float32(1 / 255))
    assert v.ToTensor(mstype.float16)(IMG).dtype == np.float16
    assert v.ToTensor()(IMG[..., 0]).shape == (1, 20, 30)


def test_to_pil_and_to_numpy_round_trip():
    im = v.ToPIL()(IMG)
    assert isinstance(im, Image.Image) and im.mode == "RGB" and v.ToPIL()(im) is im
    np.testing.assert_array_equal(v.ToNumpy()(im), IMG)
    assert v.ToPIL()(np.zeros((2, 2), np.float32)).mode == "F"


def test_rescale_and_to_type():
    np.testing.assert_array_equal(v.Rescale(2.0, -1.0)(np.array([[0, 1]], np.uint8)), [[-1.0, 1.0]])
    assert v.ToType(mstype.int8)(np.array([[300.5, -1.5]])).tolist() == [[44, -1]]
    with pytest.raises(RuntimeError, match="^Rescale: the data type of the image should be numeric"):
        v.Rescale(1.0, 0.0)(np.array([["a"]]))


def test_hwc2chw_is_contiguous():
    out = v.HWC2CHW()(IMG)
    assert out.flags["C_CONTIGUOUS"] and out.shape == (3, 20, 30)


def test_read_file_and_read_image_modes(tmp_path):
    rgba = photo(10, 12, 2, channels=4)
    png = tmp_path / "a.png"
    png.write_bytes(encode(rgba, "PNG"))
    assert v.read_file(str(png)).tolist()[:4] == [137, 80, 78, 71]
    np.testing.assert_array_equal(v.read_image(str(png)), rgba[..., :3])
    assert v.read_image(str(png), ImageReadMode.GRAYSCALE).shape == (10, 12, 1)
    grey = tmp_path / "g.jpg"
    grey.write_bytes(encode(rgba[..., 0]))
    assert v.read_image(str(grey)).shape == (10, 12, 1)
    assert v.read_image(str(grey), ImageReadMode.COLOR).shape == (10, 12, 3)
    with pytest.raises(RuntimeError, match="does not exist"):
        v.read_image(str(tmp_path / "missing.png"))
    with pytest.raises(RuntimeError, match="is not a regular file"):
        v.read_file(str(tmp_path))
    (tmp_path / "e.bin").write_bytes(b"")
    with pytest.raises(RuntimeError, match="^ReadImage: Failed to read file"):
        v.read_image(str(tmp_path / "e.bin"))
    (tmp_path / "bad.png").write_bytes(b"garbage")
    with pytest.raises(RuntimeError, match="^ReadImage: Failed to decode file"):
        v.read_image(str(tmp_path / "bad.png"))
    with pytest.raises(TypeError, match="Input mode is not of type"):
        v.read_image(str(png), 1)


def test_encode_and_write_round_trip(tmp_path):
    path = tmp_path / "x.png"
    v.write_png(str(path), IMG)
    np.testing.assert_array_equal(v.read_image(str(path)), IMG)
    smooth = np.zeros((16, 24, 3), np.uint8)
    smooth[..., 0], smooth[..., 1], smooth[..., 2] = 200, np.arange(24, dtype=np.uint8)[None, :] * 4, 30
    v.write_jpeg(str(tmp_path / "x.jpg"), smooth, 95)
    assert np.abs(v.read_image(str(tmp_path / "x.jpg")).astype(int) - smooth).max() <= 6  # RGB order kept
    with pytest.raises(RuntimeError, match="should be in range of \\[1, 100\\]"):
        v.encode_jpeg(IMG, 0)
    with pytest.raises(RuntimeError, match="UINT8"):
        v.encode_png(IMG.astype(np.float32))


def test_image_size_and_channels():
    assert v.get_image_size(IMG) == [20, 30] and v.get_image_num_channels(IMG) == 3
    assert v.get_image_size(Image.fromarray(IMG)) == [20, 30]
    assert v.get_image_num_channels(Image.fromarray(IMG[..., 0])) == 1


def test_enum_values_and_aliases():
    assert v.Inter.LINEAR is v.Inter.BILINEAR and v.Inter.CUBIC is v.Inter.BICUBIC
    assert [int(m) for m in v.Inter] == [0, 1, 2, 3, 4, 5]
    assert v.Border.REFLECT.value == "reflect" and v.ConvertMode.COLOR_RGB2BGR is v.ConvertMode.COLOR_BGR2RGB
    assert v.ImageBatchFormat.NCHW == 1 and v.SliceMode.DROP == 1 and v.AutoAugmentPolicy.SVHN.value == "svhn"
