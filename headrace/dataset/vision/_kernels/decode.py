"""Image decoding kernels: libjpeg-turbo (simplejpeg) for JPEG, OpenCV for other formats, Pillow
for the PIL path. Plain functions on bytes/arrays; they raise ``RuntimeError`` with the op name.

JPEG decoding matches MindSpore's (libjpeg-turbo, accurate integer IDCT, fancy upsampling) pixel
for pixel. A JPEG whose data ends early is an error (MindSpore sometimes decodes it with a grey
tail, sometimes fails, and crashes on some); other recoverable libjpeg warnings (extraneous bytes
before a marker, which real datasets contain) are tolerated, as in MindSpore.

``decode_jpeg_region`` decodes only a rectangle, with the optional C extension
``headrace._native._jpegregion`` (imported here and nowhere else); without it, or for JPEGs it does
not handle, callers decode the whole image instead.
"""
from __future__ import annotations

import io
from typing import Any

import cv2
import numpy as np
import simplejpeg
from PIL import Image

try:  # optional: built by setup.py when a C compiler and libjpeg-turbo's headers are present
    from headrace._native import _jpegregion
except ImportError:
    _jpegregion = None

_JPEG_SOI = b"\xff\xd8"
DECODE_FAILED = "image decode failed."


def decode_error(op: str, detail: str | None = None) -> RuntimeError:
    msg = f"{op}: {DECODE_FAILED}"
    return RuntimeError(f"{msg} {detail}" if detail else msg)


def encoded_bytes(data: Any, op: str = "Decode") -> bytes | memoryview:
    """The encoded file inside ``data``: bytes, a 1-D array (its raw bytes) or a one-element ``|S``
    array. Raises TypeError for other inputs, like MindSpore."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        buf = bytes(data) if not isinstance(data, bytes) else data
    elif isinstance(data, np.ndarray):
        if data.ndim != 1:
            raise TypeError(f"The number of array dimensions of the encoded image should be 1, but got "
                            f"{data.ndim}.")
        if data.dtype.kind == "S":
            if data.size != 1:
                raise RuntimeError(f"{op}: couldn't decode bytes field with multi dims.")
            buf = data[0]
        elif data.dtype.kind in "OU":
            raise decode_error(op, f"The input is an array of {data.dtype}, not encoded image bytes.")
        else:
            buf = memoryview(np.ascontiguousarray(data)).cast("B")
    else:
        raise TypeError(f"The type of the encoded image should be {np.ndarray}, but got {type(data)}.")
    if len(buf) == 0:
        raise decode_error(op, "The input is empty (0 bytes).")
    return buf


def is_jpeg(buf: bytes | memoryview) -> bool:
    return bytes(buf[:2]) == _JPEG_SOI


def jpeg_size(buf: bytes | memoryview) -> tuple[int, int] | None:
    """(height, width) from a JPEG header, or None if simplejpeg cannot read it."""
    try:
        h, w, _, _ = simplejpeg.decode_jpeg_header(buf, strict=False)
        return h, w
    except (ValueError, KeyError):  # KeyError: simplejpeg 1.9 on a header cut short
        return None


def _jpeg(buf: bytes | memoryview, op: str, min_height: int = 0, min_width: int = 0) -> np.ndarray | None:
    try:
        return simplejpeg.decode_jpeg(buf, colorspace="RGB", min_height=min_height, min_width=min_width)
    except ValueError as exc:
        text = str(exc)
        if "Premature end" in text:
            raise decode_error(op, "The JPEG data ends early (truncated or incomplete file).") from None
        if "tjDecompressHeader" in text or "subsampling" in text:
            return None  # not readable by the TurboJPEG API: let OpenCV try
        try:  # a recoverable warning (e.g. extraneous bytes): decode leniently
            return simplejpeg.decode_jpeg(buf, colorspace="RGB", min_height=min_height,
                                          min_width=min_width, strict=False)
        except ValueError:
            return None  # some warnings stay fatal in the TurboJPEG API: OpenCV's libjpeg tries


def decode_rgb(data: Any, op: str = "Decode") -> np.ndarray:
    """Decodes an encoded image to an HWC uint8 RGB array (grey and alpha become 3 channels)."""
    buf = encoded_bytes(data, op)
    if is_jpeg(buf):
        img = _jpeg(buf, op)
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


def decode_pil(data: Any, op: str = "Decode") -> Image.Image:
    """Decodes with Pillow and returns an RGB ``PIL.Image`` (MindSpore's ``Decode(to_pil=True)``)."""
    buf = encoded_bytes(data, op)
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
    return _jpeg(buf, op, min_height=-(-h // factor), min_width=-(-w // factor))


def decode_jpeg_region(buf: bytes | memoryview, top: int, left: int, height: int, width: int,
                       factor: int = 1) -> np.ndarray | None:
    """Rows ``top:top+height``, columns ``left:left+width`` of the JPEG decoded at 1/``factor`` scale
    (1, 2, 4 or 8; the box is in the coordinates of that scaled image), decoding only that region.

    The pixels equal those of ``decode_rgb`` (factor 1) or ``decode_jpeg_reduced`` (factor > 1,
    on images of at least 16 x 16 pixels: for tinier ones simplejpeg may pick another scale that
    gives the same size) cropped to the box; the result is a view into a slightly wider buffer.

    Returns None when the extension is missing, the JPEG is not 3-component YCbCr with usual
    sampling (grey, CMYK, 4:1:1, ...), or the data is corrupt or truncated: the caller then
    decodes the whole image, which raises the usual errors. Also None when ``factor > 1`` and
    libjpeg warned (extraneous bytes, damaged data), because ``decode_jpeg_reduced`` may refuse
    such data and its caller then decodes at full size.
    """
    if _jpegregion is None:
        return None
    out = np.empty(height * (width + _jpegregion.EXTRA_COLUMNS) * 3, np.uint8)
    try:
        got = _jpegregion.decode_region(buf, out, top, left, height, width, factor)
    except _jpegregion.Error:
        return None
    if got is None:
        return None
    row_width, x, warnings = got  # rows hold a few columns of margin: return a view without them
    if warnings and factor > 1:
        return None
    return out[:height * row_width * 3].reshape(height, row_width, 3)[:, x:x + width]


def decode_with_mode(data: Any, mode: int, op: str = "read_image") -> np.ndarray:
    """Decodes for ``read_image``: mode 0 as stored (grey stays 1 channel, alpha kept), 1 grey,
    2 RGB. Always HWC uint8."""
    buf = encoded_bytes(data, op)
    arr = np.frombuffer(buf, np.uint8)
    if mode == 2:
        return decode_rgb(buf, op)
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
