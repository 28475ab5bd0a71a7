"""Damaged images that must fail fast and loudly (issue 39): PNG chunk lengths, libjpeg corruption
warnings."""
import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headrace._image import decode as dec
from headrace.dataset import vision


def _png(h=4, w=4):
    ok, enc = cv2.imencode(".png", np.arange(h * w * 3, dtype=np.uint8).reshape(h, w, 3))
    assert ok
    return enc.tobytes()


def _chunks(buf):
    pos, out = 8, []
    while pos + 8 <= len(buf):
        length = int.from_bytes(buf[pos:pos + 4], "big")
        out.append((pos, buf[pos + 4:pos + 8], length))
        pos += 12 + length
    return out


def _bomb(length=0xFFFFFFF0):
    """A small PNG whose IDAT chunk claims ``length`` bytes."""
    buf = _png()
    pos = next(p for p, kind, _ in _chunks(buf) if kind == b"IDAT")
    return buf[:pos] + length.to_bytes(4, "big") + buf[pos + 4:pos + 8] + bytes(5)


@pytest.fixture
def no_opencv(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the damaged PNG reached cv2.imdecode")
    monkeypatch.setattr(dec.cv2, "imdecode", refuse)


@pytest.mark.parametrize("call", [lambda b: dec.decode_rgb(b), lambda b: dec.decode_with_mode(b, 0),
                                  lambda b: dec.decode_with_mode(b, 1), lambda b: vision.Decode()(b),
                                  lambda b: vision.Decode(to_pil=True)(b)])
def test_png_chunk_claiming_4gb_is_refused_before_opencv(no_opencv, call):
    bomb = _bomb()
    assert len(bomb) == 46
    with pytest.raises(RuntimeError, match=r"The PNG chunk IDAT at byte 33 claims 4,294,967,280 bytes, but the file "
                                           r"holds only 1 more.*refused before decoding"):
        call(bomb)


def test_png_chunk_error_names_the_sample_index_in_a_map():
    import headrace.dataset as ds
    data = ds.NumpySlicesDataset({"img": [np.frombuffer(_png(), np.uint8), np.frombuffer(_bomb(), np.uint8)]},
                                 shuffle=False).map(vision.Decode(), input_columns="img")
    with pytest.raises(RuntimeError, match=r"claims 4,294,967,280 bytes.*\(sample index: 1\)"):
        list(data.create_tuple_iterator(output_numpy=True))


def test_sound_pngs_decode_as_before():
    buf = _png(5, 7)
    want = np.arange(5 * 7 * 3, dtype=np.uint8).reshape(5, 7, 3)[..., ::-1]
    np.testing.assert_array_equal(dec.decode_rgb(buf), want)
    np.testing.assert_array_equal(dec.decode_rgb(buf + b"trailing bytes after IEND"), want)
    iend = _chunks(buf)[-1][0]
    np.testing.assert_array_equal(dec.decode_rgb(buf[:iend]), want)  # no IEND: cut at a chunk boundary


@settings(max_examples=60, deadline=None)
@given(cut=st.integers(min_value=34, max_value=90))
def test_a_png_cut_inside_a_chunk_never_reaches_opencv(cut):
    buf = _png()
    if not any(p + 8 <= cut < p + 12 + n for p, _, n in _chunks(buf)[1:]):
        return  # a cut at a boundary or inside a chunk's header claims nothing: the decoder reports it
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dec.cv2, "imdecode", lambda *a, **k: (_ for _ in ()).throw(AssertionError("reached OpenCV")))
        with pytest.raises(RuntimeError, match=r"Decode: image decode failed\. The PNG chunk (IDAT|IEND) at byte "
                                               r"\d+ claims \d+ bytes, but the file holds only \d+ more"):
            dec.decode_rgb(buf[:cut])


# ---- libjpeg corruption other than an early end (item 13) ------------------------------------

def _progressive_cut_in_a_huffman_table():
    """A progressive JPEG cut 6 bytes into a Huffman-table segment that lies between two scans."""
    import io

    from PIL import Image
    rs = np.random.RandomState(0)
    bio = io.BytesIO()
    Image.fromarray((rs.rand(64, 64, 3) * 255).astype(np.uint8)).save(bio, "JPEG", progressive=True, quality=90)
    buf = bio.getvalue()
    first_scan = buf.index(b"\xff\xda")
    table = buf.index(b"\xff\xc4", first_scan)
    return buf[:table + 6]


BOGUS = r"libjpeg says 'Bogus Huffman table definition'"


@pytest.mark.parametrize("op, call", [
    ("Decode", lambda b: vision.Decode()(b)),
    ("Decode", lambda b: vision.Decode(to_pil=True)(b)),
    ("RandomCropDecodeResize", lambda b: vision.RandomCropDecodeResize(32, scale=(0.9, 1.0))(b)),
])
def test_bogus_huffman_table_warns_by_default_and_fails_when_strict(op, call):
    import headrace.dataset as ds
    buf = np.frombuffer(_progressive_cut_in_a_huffman_table(), np.uint8)
    with pytest.warns(dec.ImageDataWarning, match=rf"^{op}: The JPEG data is corrupt: {BOGUS}; the image decodes "
                                                  r"degraded\."):
        call(buf)
    ds.config.set_strict_decode(True)
    with pytest.raises(RuntimeError, match=rf"^{op}: image decode failed\. The JPEG data is corrupt: {BOGUS}.*"
                                           r"set_strict_decode\(True\)"):
        call(buf)


def test_read_image_reports_the_damage_before_opencv_and_pillow_refuse_the_file():
    import headrace.dataset as ds
    buf = _progressive_cut_in_a_huffman_table()
    with pytest.warns(dec.ImageDataWarning, match=rf"^read_image: The JPEG data is corrupt: {BOGUS}"):
        with pytest.raises(RuntimeError, match=r"^read_image: image decode failed\. OSError: image file is truncated"):
            dec.decode_with_mode(buf, 0)
    ds.config.set_strict_decode(True)
    with pytest.raises(RuntimeError, match=rf"^read_image: image decode failed\. The JPEG data is corrupt: {BOGUS}"):
        dec.decode_with_mode(buf, 0)


def test_the_oracle_refuses_the_same_file():
    from tests.oracles.oracle import oracle_python, run_ms
    if oracle_python() is None:
        pytest.skip("the MindSpore oracle is not set up")
    got = run_ms("RESULT = str(catch(lambda: ds.vision.Decode()(INPUTS)))",
                 np.frombuffer(_progressive_cut_in_a_huffman_table(), np.uint8))
    assert "JpegCropAndDecode: fail to decode" in got


def test_harmless_warnings_stay_silent():
    assert dec.jpeg_damaged("Bogus Huffman table definition")
    assert dec.jpeg_damaged("Corrupt JPEG data: bad Huffman code")
    assert dec.jpeg_damaged("Corrupt JPEG data: premature end of data segment")
    assert not dec.jpeg_damaged("Corrupt JPEG data: 2 extraneous bytes before marker 0xd9")
    assert not dec.jpeg_damaged("Warning: unknown JFIF revision number 3.01")
    ok, enc = cv2.imencode(".jpg", np.full((16, 16, 3), 100, np.uint8))
    buf = enc.tobytes()
    extra = buf[:-2] + b"\x00\x00" + buf[-2:]  # 2 extraneous bytes before EOI: pixels unchanged
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(dec.decode_rgb(extra), dec.decode_rgb(buf))


# ---- one libjpeg-turbo for the pixels of the region decoder and of full decodes (item 11) -------

def _progressive(seed=0, h=48, w=64):
    import io

    from PIL import Image
    rs = np.random.RandomState(seed)
    img = np.clip((rs.rand(h, w, 3) * 255) + np.linspace(0, 80, w)[None, :, None], 0, 255).astype(np.uint8)
    bio = io.BytesIO()
    Image.fromarray(img).save(bio, "JPEG", progressive=True, quality=85)
    return bio.getvalue()


def _cut_before_last_scan(buf):
    """The file cut just before its last scan (a refinement scan), with an EOI: valid syntax, but
    some coefficients never refined, which libjpeg smooths."""
    return buf[:buf.rindex(b"\xff\xda")] + b"\xff\xd9"


def test_jpeg_libraries_names_both_versions():
    import re
    libs = dec.jpeg_libraries()
    assert set(libs) == {"full", "region"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", libs["full"])
    if dec._jpegregion is not None:
        assert re.fullmatch(r"\d+\.\d+\.\d+", libs["region"])
        n = dec._jpegregion.LIBJPEG_TURBO_VERSION_NUMBER
        assert libs["region"].split(".")[:2] == [str(n // 1000000), str(n // 1000 % 1000)]
    else:
        assert libs["region"] is None


needs_region = pytest.mark.skipif(dec._jpegregion is None or not getattr(dec._jpegregion, "CHECKS_SMOOTHING", 0),
                                  reason="the C extension (with its smoothing check) is not built")


@needs_region
def test_a_progressive_file_with_unrefined_coefficients_goes_to_the_full_decoder():
    import warnings
    buf = _cut_before_last_scan(_progressive())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no libjpeg warning tells this file apart
        full = dec.decode_rgb(buf)
        assert dec.decode_jpeg_region(buf, 0, 0, 48, 64) is None
        out = np.empty(48 * (64 + dec._jpegregion.EXTRA_COLUMNS) * 3, np.uint8)
        assert dec._jpegregion.decode_region(buf, out, 0, 0, 48, 64, 1) is None
    assert full.shape == (48, 64, 3)


@needs_region
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), cut=st.floats(0.2, 1.0), top=st.integers(0, 40), left=st.integers(0, 50))
def test_region_pixels_equal_the_full_decode_on_progressive_files_cut_anywhere(seed, cut, top, left):
    import warnings
    buf = _progressive(seed % 7)
    sos = buf.index(b"\xff\xda")
    buf = buf[:sos + 12 + int(cut * (len(buf) - sos - 14))] + b"\xff\xd9"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        region = dec.decode_jpeg_region(buf, top, left, 8, 14)
        if region is None:
            return  # the caller decodes the whole image
        full = dec.decode_rgb(buf)
    np.testing.assert_array_equal(region, full[top:top + 8, left:left + 14])


@needs_region
def test_a_complete_progressive_file_still_uses_the_region_decoder():
    buf = _progressive()
    region = dec.decode_jpeg_region(buf, 4, 6, 20, 30)
    assert region is not None
    np.testing.assert_array_equal(region, dec.decode_rgb(buf)[4:24, 6:36])
