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
