"""Image decoding kernels: libjpeg-turbo (simplejpeg) for JPEG, OpenCV for other formats, Pillow
for the PIL path. Plain functions on bytes/arrays; they raise ``RuntimeError`` with the op name.

JPEG decoding matches MindSpore's (libjpeg-turbo, accurate integer IDCT, fancy upsampling) pixel
for pixel. Other recoverable libjpeg warnings (extraneous bytes before a marker, which real
datasets contain) are tolerated, as in MindSpore.

Damaged files never pass silently:

* Size. Every decoder reads the image's size from its header first (JPEG: libjpeg-turbo's header
  parser; PNG: IHDR; other formats: Pillow's header parser) and refuses an image of more than
  ``ds.config.get_max_image_pixels()`` pixels before allocating anything (``check_pixels``). A PNG
  chunk that claims more bytes than the file holds is refused before OpenCV sees it
  (``check_png_chunks``): libpng would allocate the claimed length (up to 4 GB) first.
* Damaged data. A JPEG cut short (libjpeg's "premature end" warnings: no EOI, or a marker
  where entropy-coded data should go on) decodes with a grey tail; other corruption that libjpeg
  reports and decodes past (a bad Huffman code, a bogus Huffman table in a progressive file cut
  between scans, an inconsistent progression) decodes degraded. ``damage_report`` makes either an
  ``ImageDataWarning`` naming the op and the sample (the file when a source decodes, else the
  sample index the engine is processing), or an error under ``ds.config.set_strict_decode(True)``.
  ``jpeg_ends_early(message)`` / ``jpeg_damaged(message)`` are the detections, usable by other
  policies. MindSpore decodes cut files with a grey tail when an EOI follows the cut and fails when
  none does. Warnings that leave the pixels as encoded (``_HARMLESS``: extraneous bytes before a
  marker, which real datasets contain, an unknown JFIF revision, ...) are tolerated, as in
  MindSpore. Limits: a JPEG that the TurboJPEG API cannot read (OpenCV decodes it) is not checked,
  nor damage after a first, harmless warning (the strict decode stops at the first warning).

``decode_jpeg_region`` decodes only a rectangle, with the optional C extension
``headrace._native._jpegregion`` (imported here and nowhere else); without it, or for JPEGs it does
not handle, callers decode the whole image instead.

Two libjpeg-turbo builds decode JPEGs: the one simplejpeg bundles (whole images) and the system's,
which the extension links (rectangles); ``jpeg_libraries()`` says which versions. They give the
same pixels except where libjpeg-turbo changed between releases: block smoothing of a progressive
file whose scans are incomplete (cut between scans) and damaged data. The extension leaves both
to the whole-image decoder (it returns None for them), so every pixel comes from one library. An
extension built before it checked for smoothing is used only when both versions are the same.
"""
from __future__ import annotations

import io
import os
import re
import warnings
from typing import Any

import cv2
import numpy as np
import simplejpeg
from PIL import Image

from headrace._image import limits as _limits
from headrace._util import rng as _rng

try:  # optional: built by setup.py when a C compiler and libjpeg-turbo's headers are present
    from headrace._native import _jpegregion
except ImportError:
    _jpegregion = None
_HAS_WHOLE = bool(getattr(_jpegregion, "HAS_WHOLE", 0))  # this build fails on data that ends early

_JPEG_SOI = b"\xff\xd8"
DECODE_FAILED = "image decode failed."


def decode_error(op: str, detail: str | None = None) -> RuntimeError:
    msg = f"{op}: {DECODE_FAILED}"
    return RuntimeError(f"{msg} {detail}" if detail else msg)


def encoded_bytes(data: Any, op: str = "Decode") -> bytes | memoryview:
    """The encoded file inside ``data``: bytes, a 1-D array (its raw bytes), or one bytes object held
    in a 0-d or one-element ``|S`` / object array (what a user source returning ``(img_bytes,)``
    yields; MindSpore 2.10 refuses the 0-d forms, headrace decodes them). Raises TypeError for other
    inputs, like MindSpore."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        buf = bytes(data) if not isinstance(data, bytes) else data
    elif isinstance(data, np.ndarray):
        if data.ndim <= 1 and data.dtype.kind in "SO" and data.size == 1:
            buf = _held_bytes(data, op)  # type: ignore[assignment]
        elif data.ndim != 1:
            raise TypeError(f"The number of array dimensions of the encoded image should be 1, but got "
                            f"{data.ndim}.")
        elif data.dtype.kind == "S":
            raise RuntimeError(f"{op}: couldn't decode bytes field with multi dims.")
        elif data.dtype.kind in "OU":
            raise decode_error(op, f"The input is an array of {data.dtype}, not encoded image bytes.")
        else:
            buf = memoryview(np.ascontiguousarray(data)).cast("B")  # type: ignore[assignment]
    else:
        raise TypeError(f"The type of the encoded image should be {np.ndarray}, but got {type(data)}.")
    if len(buf) == 0:
        raise decode_error(op, "The input is empty (0 bytes).")
    return buf


def _held_bytes(data: np.ndarray, op: str) -> bytes | memoryview:
    """The bytes object inside a one-element ``|S`` or object array (0-d or 1-D)."""
    if data.dtype.kind == "S":  # the raw item keeps trailing NUL bytes that indexing would strip
        return memoryview(np.ascontiguousarray(data).reshape(-1)).cast("B")
    value = data.reshape(-1)[0]
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise decode_error(op, f"The input is an array of object holding {type(value).__name__}, not "
                               f"encoded image bytes.")
    return bytes(value) if not isinstance(value, bytes) else value


def is_jpeg(buf: bytes | memoryview) -> bool:
    return bytes(buf[:2]) == _JPEG_SOI


def jpeg_size(buf: bytes | memoryview) -> tuple[int, int] | None:
    """(height, width) from a JPEG header, or None if simplejpeg cannot read it."""
    try:
        h, w, _, _ = simplejpeg.decode_jpeg_header(buf, strict=False)
        return h, w
    except (ValueError, KeyError):  # KeyError: simplejpeg 1.9 on a header cut short
        return None


_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def image_size(buf: bytes | memoryview, op: str = "Decode") -> tuple[int, int] | None:
    """(height, width) from an image's header, without decoding: JPEG, PNG, else what Pillow
    identifies. None when no header parser knows the data (the decoder then reports it)."""
    if is_jpeg(buf):
        size = jpeg_size(buf)
        if size is not None:
            return size
    elif bytes(buf[:8]) == _PNG_MAGIC:
        check_png_chunks(buf, op)
        if bytes(buf[12:16]) == b"IHDR":
            return int.from_bytes(buf[20:24], "big"), int.from_bytes(buf[16:20], "big")
    try:
        with Image.open(io.BytesIO(bytes(buf))) as im:
            w, h = im.size
        return h, w
    except Image.DecompressionBombError as exc:  # over twice Pillow's own limit
        limit = _limits.current().max_image_pixels
        if limit is not None and limit <= 2 * (Image.MAX_IMAGE_PIXELS or 0):
            raise decode_error(op, f"{exc} (headrace's limit: ds.config.set_max_image_pixels).") from None
        return None
    except Exception:  # noqa: BLE001 - not an image Pillow knows: nothing to check
        return None


def check_png_chunks(buf: bytes | memoryview, op: str, where: str | None = None) -> None:
    """Raises the decode error for a PNG whose chunk claims more bytes than the file holds.

    libpng (inside OpenCV) allocates a chunk's claimed length before reading it: a 69-byte file
    whose chunk claims 4 GB costs 4 GB and seconds before its error. Walks the chunk headers
    (length, type, data, CRC) up to IEND; a file cut at a chunk boundary is left to the decoder.
    """
    pos, size = 8, len(buf)
    while pos + 8 <= size:
        length = int.from_bytes(buf[pos:pos + 4], "big")
        kind = bytes(buf[pos + 4:pos + 8])
        left = size - pos - 12
        if length > left:
            name = kind.decode("latin-1") if kind.isalpha() else repr(kind)
            raise decode_error(op, f"The PNG chunk {name} at byte {pos} claims {length:,} bytes, but the file holds "
                                   f"only {max(left, 0):,} more{_where(where)}: refused before decoding (a truncated "
                                   "or damaged file; OpenCV would allocate the claimed size first).")
        if kind == b"IEND":
            return
        pos += 12 + length


def check_pixels(height: int, width: int, op: str, where: str | None = None) -> None:
    """Raises the decode error for an image of more than ``max_image_pixels`` pixels."""
    limit = _limits.current().max_image_pixels
    if limit is not None and height * width > limit:
        need = height * width * 3
        need_text = f"{need / 2 ** 30:.1f} GiB" if need >= 2 ** 30 else f"{need / 2 ** 20:.1f} MiB"
        raise decode_error(op, f"The image header claims {width}x{height} = {height * width:,} pixels, more than the "
                               f"limit of {limit:,}{_where(where)}: refused before decoding (it would need "
                               f"{need_text}). A damaged header or a decompression bomb; if the image is genuine, "
                               "raise ds.config.set_max_image_pixels().")


class ImageDataWarning(UserWarning):
    """An image decoded from damaged data (a JPEG whose data ends early: a grey tail)."""


_ENDS_EARLY = ("premature end of data segment", "premature end of jpeg file")


def jpeg_ends_early(message: str) -> bool:
    """True when a libjpeg message says the JPEG data ends early (a cut file, with or without an
    EOI marker after the cut)."""
    low = message.lower()
    return any(m in low for m in _ENDS_EARLY)


# libjpeg warnings about data that does not change the pixels: tolerated, as in MindSpore.
_HARMLESS = ("extraneous bytes before marker", "unknown jfif revision", "thumbnail image size",
             "unknown adobe color transform", "bad icc marker", "invalid sos parameters for sequential jpeg")


def jpeg_damaged(message: str) -> bool:
    """True when a libjpeg message (a warning, or an error that the lenient decoder decodes past)
    says the image data is damaged: every message but the harmless ones of ``_HARMLESS``."""
    low = message.lower()
    return not any(m in low for m in _HARMLESS)


def _where(where: str | None) -> str:
    """' (file: F)' / ' (sample index: N)' / '': the sample being decoded, for messages."""
    if where is None:
        key = _rng.get_sample_key()
        if key is None or len(key) != 4:
            return ""
        where = f"sample index: {key[3]}"
    return f" ({where})"


def damage_report(op: str, message: str, where: str | None = None) -> None:
    """Reports a damaged JPEG (data that ends early, or other corruption ``jpeg_damaged`` sees): an
    error under ``set_strict_decode(True)``, else an ``ImageDataWarning`` (the caller returns the
    image decoded past the damage)."""
    if jpeg_ends_early(message):
        detail = f"The JPEG data ends early{_where(where)}: libjpeg says {message!r}; the missing part decodes as grey"
    else:
        detail = f"The JPEG data is corrupt{_where(where)}: libjpeg says {message!r}; the image decodes degraded"
    if _limits.current().strict_decode:
        raise decode_error(op, f"{detail} (an error because ds.config.set_strict_decode(True)).")
    warnings.warn(f"{op}: {detail}. The file is truncated or damaged; ds.config.set_strict_decode(True) makes "
                  "this an error.", ImageDataWarning, stacklevel=4)


def _jpeg(buf: bytes | memoryview, op: str, min_height: int = 0, min_width: int = 0,
          where: str | None = None) -> np.ndarray | None:
    try:
        return simplejpeg.decode_jpeg(buf, colorspace="RGB", min_height=min_height, min_width=min_width)
    except ValueError as exc:
        text = str(exc)
        if "tjDecompressHeader" in text or "subsampling" in text:
            return None  # not readable by the TurboJPEG API: let OpenCV try
        short = jpeg_ends_early(text)
        if short and _limits.current().strict_decode:
            damage_report(op, text, where)
        try:  # a recoverable warning (e.g. extraneous bytes): decode leniently
            img = simplejpeg.decode_jpeg(buf, colorspace="RGB", min_height=min_height,
                                         min_width=min_width, strict=False)
        except ValueError:
            if short:
                raise decode_error(op, f"The JPEG data ends early{_where(where)} and cannot be decoded "
                                       f"({text}).") from None
            return None  # some warnings stay fatal in the TurboJPEG API: OpenCV's libjpeg tries
        if jpeg_damaged(text):
            damage_report(op, text, where)
        return img


def decode_rgb(data: Any, op: str = "Decode", where: str | None = None) -> np.ndarray:
    """Decodes an encoded image to an HWC uint8 RGB array (grey and alpha become 3 channels).

    ``where`` names the sample in messages (e.g. ``"file: x.jpg"``); by default the sample index
    the engine is processing. Raises the decode error for images over ``max_image_pixels``.
    """
    buf = encoded_bytes(data, op)
    size = image_size(buf, op)
    if size is not None:
        check_pixels(*size, op, where)
    return _decode_checked(buf, op, where)


def _decode_checked(buf: bytes | memoryview, op: str, where: str | None) -> np.ndarray:
    """``decode_rgb`` once the size has been checked."""
    if is_jpeg(buf):
        img = _jpeg(buf, op, where=where)
        if img is not None:
            return img
    arr = np.frombuffer(buf, np.uint8)
    try:
        img = cv2.imdecode(arr, cv2.IMREAD_COLOR)
    except cv2.error:
        img = None
    if img is None:
        if is_jpeg(buf):
            raise decode_error(op, "The JPEG data is corrupt or truncated (its header or image data "
                                   "cannot be read).")
        return _pil_rgb(buf, op)
    return cv2.cvtColor(img, cv2.COLOR_BGR2RGB)


def _pil_rgb(buf: bytes | memoryview, op: str) -> np.ndarray:
    try:
        with Image.open(io.BytesIO(bytes(buf))) as im:
            return np.asarray(im.convert("RGB"))
    except Exception as exc:  # noqa: BLE001 - Pillow raises many types for bad data
        raise decode_error(op, _pil_reason(exc)) from None


def _pil_reason(exc: Exception) -> str:
    if "cannot identify image file" in str(exc):
        return "The data is not in a known image format (or is corrupt)."
    return f"{type(exc).__name__}: {exc}"


def check_jpeg_data(buf: bytes | memoryview, op: str, where: str | None = None) -> bool:
    """Reports (``damage_report``) a JPEG whose data ends early or is otherwise damaged, for decoders
    that do not say (Pillow, OpenCV): entropy-decodes the whole file at 1/8 scale, grey (no IDCT
    beyond DC). True when it is damaged (and the mode is not strict). Damage other than an early end
    is reported only when libjpeg decodes past it (else the decoder fails with its own error)."""
    size = jpeg_size(buf)
    if size is None:
        return False
    h, w = size
    mh, mw = -(-h // 8), -(-w // 8)
    try:
        simplejpeg.decode_jpeg(buf, colorspace="GRAY", min_height=mh, min_width=mw)
    except ValueError as exc:
        text = str(exc)
        if "tjDecompressHeader" in text or "subsampling" in text or not jpeg_damaged(text):
            return False
        if not jpeg_ends_early(text):
            try:
                simplejpeg.decode_jpeg(buf, colorspace="GRAY", min_height=mh, min_width=mw, strict=False)
            except ValueError:
                return False
        damage_report(op, text, where)
        return True
    return False


def decode_pil(data: Any, op: str = "Decode") -> Image.Image:
    """Decodes with Pillow and returns an RGB ``PIL.Image`` (MindSpore's ``Decode(to_pil=True)``)."""
    buf = encoded_bytes(data, op)
    size = image_size(buf, op)
    if size is not None:
        check_pixels(*size, op)
    if is_jpeg(buf) and check_jpeg_data(buf, op):
        try:  # reported; decoded as libjpeg does it (Pillow refuses a JPEG without EOI)
            return Image.fromarray(simplejpeg.decode_jpeg(buf, colorspace="RGB", strict=False))
        except ValueError:
            pass  # Pillow says why
    try:
        im = Image.open(io.BytesIO(bytes(buf)))
        return im.convert("RGB")
    except Exception as exc:  # noqa: BLE001
        raise decode_error(op, _pil_reason(exc)) from None


def decode_jpeg_reduced(buf: bytes | memoryview, factor: int, op: str) -> np.ndarray | None:
    """Decodes a JPEG at 1/``factor`` scale (factor 1, 2, 4 or 8) with libjpeg-turbo's scaled IDCT.

    Returns None if the data cannot be decoded this way (the caller falls back to a full decode).
    The result is ``ceil(H / factor) x ceil(W / factor)``.
    """
    size = jpeg_size(buf)
    if size is None:
        return None
    h, w = size
    check_pixels(h, w, op)
    return _jpeg(buf, op, min_height=-(-h // factor), min_width=-(-w // factor))


_TURBO_VERSION = re.compile(rb"libjpeg-turbo version (\d+\.\d+\.\d+)")
_libraries: dict[str, str | None] | None = None


def jpeg_libraries() -> dict[str, str | None]:
    """The libjpeg-turbo versions in use: ``"full"``, the one simplejpeg bundles (whole images),
    and ``"region"``, the one the region extension runs with (None without the extension; the
    version of the library loaded in this process, else of the headers it was built with). Read
    from the libraries' files on the first call."""
    global _libraries
    if _libraries is None:
        region = None
        if _jpegregion is not None:
            region = _turbo_version(_loaded_libjpeg())
            if region is None:
                n = int(getattr(_jpegregion, "LIBJPEG_TURBO_VERSION_NUMBER", 0))
                region = f"{n // 1000000}.{n // 1000 % 1000}.{n % 1000}" if n else None
        _libraries = {"full": _turbo_version(getattr(simplejpeg._jpeg, "__file__", None)), "region": region}
    return dict(_libraries)


def _turbo_version(path: str | None) -> str | None:
    """The version that a libjpeg-turbo library (or a module linking one in) names in its text."""
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            found = _TURBO_VERSION.search(f.read())
    except OSError:
        return None
    return found.group(1).decode() if found else None


def _loaded_libjpeg() -> str | None:
    """The path of the shared libjpeg loaded in this process (the region extension's), if any."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.rstrip("\n").partition("/")[2]
                if path and os.path.basename(path).startswith("libjpeg.so"):
                    return "/" + path
    except OSError:
        pass
    return None


_region_usable: bool | None = None


def _region_ok() -> bool:
    """Whether the region extension gives the whole-image decoder's pixels (see the module doc)."""
    global _region_usable
    if _region_usable is None:
        libs = jpeg_libraries()
        _region_usable = bool(getattr(_jpegregion, "CHECKS_SMOOTHING", 0)) or libs["full"] == libs["region"]
    return _region_usable


def decode_jpeg_region(buf: bytes | memoryview, top: int, left: int, height: int, width: int,
                       factor: int = 1) -> np.ndarray | None:
    """Rows ``top:top+height``, columns ``left:left+width`` of the JPEG decoded at 1/``factor`` scale
    (1, 2, 4 or 8; the box is in the coordinates of that scaled image), decoding only that region.

    The pixels equal those of ``decode_rgb`` (factor 1) or ``decode_jpeg_reduced`` (factor > 1,
    on images of at least 16 x 16 pixels: for tinier ones simplejpeg may pick another scale that
    gives the same size) cropped to the box; the result is a view into a slightly wider buffer.

    Returns None when the extension is missing (or cannot give the same pixels: see the module
    doc), the JPEG is not 3-component YCbCr with usual sampling (grey, CMYK, 4:1:1, ...), a
    progressive JPEG's scans are incomplete, or the data is corrupt or truncated: the caller then
    decodes the whole image, which raises the usual errors (and reports data that ends early).
    Also None when libjpeg warned (extraneous bytes, damaged data): the full decode reports damage
    (``damage_report``), and ``decode_jpeg_reduced`` may refuse such data and its caller then
    decodes at full size.

    Data that ends early below the box is not seen unless ``ds.config.set_strict_decode(True)``:
    then the whole file is entropy-decoded (``whole``) so that any cut is an error, as with a full
    decode. With an extension built before ``whole`` existed, strict mode returns None.
    """
    if _jpegregion is None or not _region_ok():
        return None
    strict = _limits.current().strict_decode
    if strict and not _HAS_WHOLE:
        return None
    out = np.empty(height * (width + _jpegregion.EXTRA_COLUMNS) * 3, np.uint8)
    try:
        if strict:
            got = _jpegregion.decode_region(buf, out, top, left, height, width, factor, True)
        else:
            got = _jpegregion.decode_region(buf, out, top, left, height, width, factor)
    except _jpegregion.Error:
        return None
    if got is None:
        return None
    row_width, x, warnings = got  # rows hold a few columns of margin: return a view without them
    if warnings:  # damaged data, or an old build passing a cut inside the box: a full decode reports it
        return None
    return out[:height * row_width * 3].reshape(height, row_width, 3)[:, x:x + width]


def decode_with_mode(data: Any, mode: int, op: str = "read_image") -> np.ndarray:
    """Decodes for ``read_image``: mode 0 as stored (grey stays 1 channel, alpha kept), 1 grey,
    2 RGB. Always HWC uint8."""
    buf = encoded_bytes(data, op)
    arr = np.frombuffer(buf, np.uint8)
    if mode == 2:
        return decode_rgb(buf, op)
    size = image_size(buf, op)
    if size is not None:
        check_pixels(*size, op)
    if is_jpeg(buf):
        check_jpeg_data(buf, op)
    flag = cv2.IMREAD_GRAYSCALE if mode == 1 else cv2.IMREAD_UNCHANGED
    try:
        img = cv2.imdecode(arr, flag)
    except cv2.error:
        img = None
    if img is None:
        try:
            with Image.open(io.BytesIO(bytes(buf))) as im:
                img = np.asarray(im.convert("L") if mode == 1 else im)
        except Exception as exc:  # noqa: BLE001
            raise decode_error(op, _pil_reason(exc)) from None
        return img[..., None] if img.ndim == 2 else img
    if img.ndim == 2:
        return img[..., None]
    if img.dtype != np.uint8:
        img = (img >> 8).astype(np.uint8) if img.dtype == np.uint16 else img.astype(np.uint8)
    code = cv2.COLOR_BGRA2RGBA if img.shape[2] == 4 else cv2.COLOR_BGR2RGB
    return cv2.cvtColor(img, code)
