"""Decompression bombs, lying headers and JPEGs whose data ends early (issue 12, item 16).

Every decoder checks the header's size against ``ds.config.get_max_image_pixels()`` before
allocating; a JPEG cut short (with or without an EOI appended) is an ``ImageDataWarning`` naming
the sample, or an error under ``ds.config.set_strict_decode(True)``.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
import zlib

import numpy as np
import pytest

import headrace.dataset as ds
import headrace.dataset.vision as v
from headrace._util import rng
from headrace._image import decode as dec
from headrace.dataset.vision._ops_decode import DecodeRandomResizedCrop
from tests.vision.imagegen import encode, photo

@pytest.fixture(autouse=True)
def _no_sample_key():
    # an earlier test's serial pipeline may leave its last sample key on this thread; eager calls
    # here must not name a sample
    rng.set_sample_key(None)
    yield
    rng.set_sample_key(None)


IMG = photo(240, 320, 5)
JPEG = encode(IMG)
PROGRESSIVE = encode(IMG, progressive=True)


def _scan_start(data: bytes) -> int:
    i = data.find(b"\xff\xda")
    return i + 2 + int.from_bytes(data[i + 2:i + 4], "big")


def cut(data: bytes, frac: float, eoi: bool = True) -> bytes:
    """``data`` cut at ``frac`` of its entropy-coded data, with an EOI marker appended if ``eoi``."""
    s = _scan_start(data)
    return data[:s + int((len(data) - 2 - s) * frac)] + (b"\xff\xd9" if eoi else b"")


def with_size(data: bytes, h: int, w: int) -> bytes:
    """``data`` whose SOF header claims ``h`` x ``w``."""
    i = data.find(b"\xff\xc0")
    if i < 0:
        i = data.find(b"\xff\xc2")
    b = bytearray(data)
    b[i + 5:i + 9] = h.to_bytes(2, "big") + w.to_bytes(2, "big")
    return bytes(b)


def png_claiming(h: int, w: int) -> bytes:
    """A small PNG whose IHDR claims ``h`` x ``w`` RGB pixels (its data is a few bytes)."""
    def chunk(kind, body):
        return len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")
    ihdr = w.to_bytes(4, "big") + h.to_bytes(4, "big") + bytes([8, 2, 0, 0, 0])
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 16)) + \
        chunk(b"IEND", b"")


# ---- settings ---------------------------------------------------------------------------------

def test_settings_defaults_and_validation():
    assert ds.config.get_max_image_pixels() == 89_478_485
    assert ds.config.get_strict_decode() is False
    ds.config.set_max_image_pixels(1000)
    assert ds.config.get_max_image_pixels() == 1000
    ds.config.set_max_image_pixels(None)
    assert ds.config.get_max_image_pixels() is None
    ds.config.set_strict_decode(True)
    assert ds.config.get_strict_decode() is True
    for bad, exc, msg in [(True, TypeError, "max_pixels must be an int or None, but got bool."),
                          (1.5, TypeError, "max_pixels must be an int or None, but got float."),
                          ("9", TypeError, "max_pixels must be an int or None, but got str."),
                          (0, ValueError, r"max_pixels must be in \[1, 2\*\*40\] \(or None for no limit\), but got 0."),
                          (2**40 + 1, ValueError, r"max_pixels must be in \[1, 2\*\*40\]")]:
        with pytest.raises(exc, match=msg):
            ds.config.set_max_image_pixels(bad)
    with pytest.raises(TypeError, match="strict must be of type bool."):
        ds.config.set_strict_decode(1)


# ---- pixel limit ------------------------------------------------------------------------------

BOMB_MSG = ("image decode failed. The image header claims 65500x65500 = 4,290,250,000 pixels, more than the limit "
            "of 89,478,485")


@pytest.mark.parametrize("fmt", ["jpeg", "png"])
def test_bombs_are_refused_before_allocating(fmt):
    # run with a 2 GiB address-space limit: the 12 GiB allocation the header asks for would fail
    data = with_size(JPEG, 65500, 65500) if fmt == "jpeg" else png_claiming(65500, 65500)
    code = f"""
        import resource, warnings
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
        import numpy as np
        import headrace.dataset.vision as v
        from headrace.dataset.vision._ops_decode import DecodeRandomResizedCrop
        data = {data!r}
        ops = [v.Decode(), v.Decode(to_pil=True), v.RandomCropDecodeResize(32),
               DecodeRandomResizedCrop(v.Decode(), v.RandomResizedCrop(32))]
        for op in ops:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    op(np.frombuffer(data, np.uint8))
                print("DECODED")
            except MemoryError:
                print("MEMORY")
            except RuntimeError as e:
                print("REFUSED", str(e).splitlines()[0])
    """
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == 4, proc.stdout
    for line, op in zip(lines, ["Decode", "Decode", "RandomCropDecodeResize", "Decode"]):
        assert line.startswith(f"REFUSED {op}: {BOMB_MSG}: refused before decoding"), line
        assert "(it would need 12.0 GiB)" in line and "ds.config.set_max_image_pixels()" in line


def test_limit_is_the_setting_and_applies_to_every_decoder(tmp_path):
    png = encode(IMG, "PNG")
    ds.config.set_max_image_pixels(240 * 320)
    np.testing.assert_array_equal(v.Decode()(JPEG).shape, (240, 320, 3))
    ds.config.set_max_image_pixels(240 * 320 - 1)
    msg = (r"image decode failed\. The image header claims 320x240 = 76,800 pixels, more than the limit of 76,799: "
           r"refused before decoding")
    for data in (JPEG, png, encode(IMG, "BMP")):
        with pytest.raises(RuntimeError, match="^Decode: " + msg):
            v.Decode()(data)
        with pytest.raises(RuntimeError, match="^Decode: " + msg):
            v.Decode(to_pil=True)(data)
    with pytest.raises(RuntimeError, match="^RandomCropDecodeResize: " + msg + r" \(it would need 0\.2 MiB\)"):
        v.RandomCropDecodeResize(8)(JPEG)
    path = tmp_path / "x.png"
    path.write_bytes(png)
    with pytest.raises(RuntimeError, match="ReadImage: Failed to decode file .*" + msg):
        v.read_image(str(path))
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.jpg").write_bytes(JPEG)
    d = ds.ImageFolderDataset(str(tmp_path), decode=True)
    msg_file = msg.replace(": refused", f" \\(file: {tmp_path / 'c' / 'a.jpg'}\\): refused")
    with pytest.raises(RuntimeError, match=msg_file):
        list(d.create_tuple_iterator(output_numpy=True))
    ds.config.set_max_image_pixels(None)
    assert v.Decode()(png).shape == (240, 320, 3)


# ---- data that ends early ---------------------------------------------------------------------

CUTS = {"30% + EOI": cut(JPEG, 0.3), "60% + EOI": cut(JPEG, 0.6), "95% + EOI": cut(JPEG, 0.95),
        "50%, no EOI": cut(JPEG, 0.5, eoi=False), "progressive 60% + EOI": cut(PROGRESSIVE, 0.6),
        "header claims 2x height": with_size(JPEG, 480, 320)}


@pytest.mark.parametrize("name", sorted(CUTS))
def test_jpeg_that_ends_early_warns_by_default_and_fails_when_strict(name):
    data = CUTS[name]
    for op, make in [("Decode", v.Decode), ("Decode", lambda: v.Decode(to_pil=True))]:
        with pytest.warns(dec.ImageDataWarning) as rec:
            img = np.asarray(make()(data))
        assert len(rec) == 1
        text = str(rec[0].message)
        assert text.startswith(f"{op}: The JPEG data ends early: libjpeg says ")
        assert "premature end" in text.lower() and "ds.config.set_strict_decode(True) makes this an error" in text
        assert img.shape == ((480 if "2x" in name else 240), 320, 3)
    ds.config.set_strict_decode(True)
    for make in (v.Decode, lambda: v.Decode(to_pil=True)):
        with pytest.raises(RuntimeError, match=r"^Decode: image decode failed\. The JPEG data ends early: libjpeg "
                                               r"says .*\(an error because ds\.config\.set_strict_decode\(True\)\)\."):
            make()(data)


def test_complete_jpegs_do_not_warn():
    app0_end = 4 + int.from_bytes(JPEG[4:6], "big")
    extraneous = JPEG[:app0_end] + b"\x00\x00" + JPEG[app0_end:]
    ds.config.set_strict_decode(True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for data in (JPEG, PROGRESSIVE, extraneous):
            assert v.Decode()(data).shape == (240, 320, 3)
            assert v.RandomCropDecodeResize(16)(data).shape == (16, 16, 3)


def test_detection_is_reusable():
    assert v.ImageDataWarning is dec.ImageDataWarning and issubclass(v.ImageDataWarning, UserWarning)
    assert dec.jpeg_ends_early("Corrupt JPEG data: premature end of data segment")
    assert dec.jpeg_ends_early("Premature end of JPEG file")
    assert not dec.jpeg_ends_early("Corrupt JPEG data: 2 extraneous bytes before marker 0xd9")


def test_warning_names_the_file_for_sources(tmp_path):
    (tmp_path / "c").mkdir()
    path = tmp_path / "c" / "cut.jpg"
    path.write_bytes(CUTS["60% + EOI"])
    d = ds.ImageFolderDataset(str(tmp_path), decode=True)
    with pytest.warns(dec.ImageDataWarning, match=f"The JPEG data ends early \\(file: {path}\\)"):
        rows = list(d.create_tuple_iterator(output_numpy=True))
    assert rows[0][0].shape == (240, 320, 3)
    ds.config.set_strict_decode(True)
    with pytest.raises(RuntimeError, match=f"Invalid image, {path} decode failed.*The JPEG data ends early"):
        list(ds.ImageFolderDataset(str(tmp_path), decode=True).create_tuple_iterator(output_numpy=True))


def test_warning_names_the_sample_index_in_a_map():
    datas = [JPEG, JPEG, CUTS["30% + EOI"], JPEG]
    d = ds.NumpySlicesDataset([np.frombuffer(x, np.uint8) for x in datas], column_names=["image"], shuffle=False)
    d = d.map(v.Decode(), input_columns=["image"], num_parallel_workers=2)
    with pytest.warns(dec.ImageDataWarning) as rec:
        out = [r[0].shape for r in d.create_tuple_iterator(output_numpy=True)]
    assert out == [(240, 320, 3)] * 4
    assert [str(w.message).split(":")[1] for w in rec] == [" The JPEG data ends early (sample index"]
    assert "(sample index: 2)" in str(rec[0].message)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_strict_mode_reaches_worker_processes(method):
    # in a fresh interpreter with a hard timeout: forking a process whose OpenCV pool threads ran
    # (earlier tests) can deadlock the worker (issue 12, item 1, not this test's subject)
    code = f"""
        import numpy as np
        import headrace.dataset as ds
        import headrace.dataset.vision as v
        ds.config.set_multiprocessing_start_method({method!r})
        ds.config.set_strict_decode(True)
        datas = [{JPEG!r}, {CUTS["95% + EOI"]!r}]
        d = ds.NumpySlicesDataset([np.frombuffer(x, np.uint8) for x in datas], column_names=["image"], shuffle=False)
        d = d.map(lambda x: v.Decode()(x), input_columns=["image"], num_parallel_workers=2,
                  python_multiprocessing=True)
        it = d.create_tuple_iterator(output_numpy=True)
        try:
            list(it)
            print("NO ERROR")
        except RuntimeError as e:
            print("INDEX", e.index)
            print("ENDS EARLY", "The JPEG data ends early" in str(e), "set_strict_decode(True)" in str(e))
        finally:
            it.stop()
    """
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == ["INDEX 1", "ENDS EARLY True True"], proc.stdout + proc.stderr[-2000:]


# ---- the region decoder and the fused ops -----------------------------------------------------

native = pytest.mark.skipif(dec._jpegregion is None, reason="the C extension is not built")


@native
def test_cut_inside_the_window_is_reported_like_a_full_decode():
    data = CUTS["30% + EOI"]
    box = lambda h, w: (h - 40, 0, 40, w)   # noqa: E731 - the bottom rows: grey in the data
    from headrace.dataset.vision._ops_decode import decode_crop_resize
    from headrace.dataset.vision.utils import Inter
    with pytest.warns(dec.ImageDataWarning, match="^RandomCropDecodeResize: The JPEG data ends early"):
        got = decode_crop_resize(data, box, (40, 320), Inter.NEAREST, "RandomCropDecodeResize", reduced=False)
    with pytest.warns(dec.ImageDataWarning):
        full = v.Decode()(data)
    np.testing.assert_array_equal(got, full[200:240])
    ds.config.set_strict_decode(True)
    with pytest.raises(RuntimeError, match="ends early"):
        decode_crop_resize(data, box, (40, 320), Inter.NEAREST, "RandomCropDecodeResize", reduced=False)


@native
@pytest.mark.parametrize("has_whole", [True, False])
def test_cut_below_the_window_gives_exact_pixels_by_default_and_fails_when_strict(monkeypatch, has_whole):
    monkeypatch.setattr(dec, "_HAS_WHOLE", has_whole)   # False: an extension built before 'whole'
    data = CUTS["95% + EOI"]
    full = v.Decode()(JPEG)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        top = dec.decode_jpeg_region(data, 0, 8, 40, 100)
    np.testing.assert_array_equal(top, full[0:40, 8:108])   # the window lies above the cut: exact
    ds.config.set_strict_decode(True)
    assert dec.decode_jpeg_region(data, 0, 8, 40, 100) is None      # the caller decodes it all: error
    ops = [v.RandomCropDecodeResize(16, scale=(0.01, 0.02)),
           DecodeRandomResizedCrop(v.Decode(), v.RandomResizedCrop(16, scale=(0.01, 0.02)))]
    for op in ops:
        with pytest.raises(RuntimeError, match="The JPEG data ends early"):
            op(data)
    assert dec.decode_jpeg_region(JPEG, 0, 8, 40, 100) is not None or not has_whole


@native
def test_extension_whole_flag_reads_to_the_end():
    out = np.empty(40 * (100 + dec._jpegregion.EXTRA_COLUMNS) * 3, np.uint8)
    assert dec._jpegregion.decode_region(CUTS["95% + EOI"], out, 0, 0, 40, 100, 1) is not None
    with pytest.raises(dec._jpegregion.Error, match="premature end of data segment"):
        dec._jpegregion.decode_region(CUTS["95% + EOI"], out, 0, 0, 40, 100, 1, True)
    for factor in (1, 2, 4, 8):
        got = dec._jpegregion.decode_region(JPEG, out, 0, 0, 40 // factor, 100 // factor, factor, True)
        assert got is not None and got[2] == 0
