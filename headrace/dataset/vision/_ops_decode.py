"""Decoding ops: Decode, RandomCropDecodeResize, and the fused Decode + RandomResizedCrop.

JPEG goes through libjpeg-turbo (simplejpeg); other formats through OpenCV, then Pillow. When a
random crop will be shrunk to its output size by 2x or more in both directions, the JPEG is decoded
at 1/2, 1/4 or 1/8 scale by libjpeg-turbo's scaled IDCT (less work than decoding every pixel and
throwing most away), and the crop box is mapped onto the smaller image. Smaller non-power-of-two
scales are not used: libjpeg-turbo decodes them more slowly than full size.

At either scale only the crop is decoded when the C extension is built (``dec.decode_jpeg_region``:
rows above the box are skipped without IDCT, columns beside it are not transformed, decoding stops
after its last row). Its pixels equal the full decode's cropped, so this changes speed only.
"""
from __future__ import annotations

import numpy as np

from headrace._util.rng import sample_rng
from headrace.dataset.transforms._base import Implementation, contiguous, returns_contiguous
from headrace.dataset.vision import _checks as ck
from headrace.dataset.vision._base import ONE_TO_ONE, ImageTensorOperation
from headrace.dataset.vision._color_checks import _Device
from headrace._image import decode as dec
from headrace._image import geometry as geo
from headrace.dataset.vision._ops_geometry import (RandomResizedCrop, _device_resize_mode, _keep_window_args,
                                                   _resize_array)
from headrace.dataset.vision.utils import Inter

__all__ = ["Decode", "DecodeRandomResizedCrop", "RandomCropDecodeResize", "decode_crop_resize"]


class _DecodeOperation(_Device, ImageTensorOperation):
    """Decode and RandomCropDecodeResize: ops on one encoded image (bytes or a 1-D array, which
    the base's image check would refuse); ``_decode`` does the work."""

    @returns_contiguous
    def __call__(self, *args):
        if len(args) != 1:
            raise RuntimeError(ONE_TO_ONE)
        if self.device_target != "CPU":
            self._check_device()
        return contiguous(self._decode(args[0]))

    def _decode(self, data):
        raise NotImplementedError


class Decode(_DecodeOperation):
    """Decodes an encoded image (JPEG, PNG, BMP, TIFF, ...) to RGB.

    Args:
        to_pil (bool, optional): return a PIL image (decoded by Pillow) instead of an <H, W, 3>
            uint8 array. Default: False.

    Raises:
        TypeError: if `to_pil` is not a bool, or the input is not bytes / a 1-D array.
        RuntimeError: ``"Decode: image decode failed. ..."`` for empty, corrupt or unknown data,
            for an image whose header claims more than ``ds.config.get_max_image_pixels()``
            pixels, and for a JPEG whose data ends early under ``ds.config.set_strict_decode(True)``
            (by default such a JPEG decodes with a grey tail and an ``ImageDataWarning``).

    Examples:
        >>> import numpy as np, cv2
        >>> data = cv2.imencode(".png", np.zeros((2, 3, 3), np.uint8))[1]
        >>> Decode()(data).shape
        (2, 3, 3)
    """

    def __init__(self, to_pil=False):
        ck.type_check(to_pil, (bool,), "to_pil")
        self.to_pil = to_pil
        self.implementation = Implementation.PY if to_pil else Implementation.C

    def fuse_next(self, nxt, options):
        """``[Decode(), RandomResizedCrop(...)]`` -> :class:`DecodeRandomResizedCrop` (the crop box
        comes from the JPEG header; with ``options["reduced_decode"]`` the JPEG may be decoded at
        1/2, 1/4 or 1/8 scale when the crop shrinks that much)."""
        if (type(self) is Decode and not self.to_pil and type(nxt) is RandomResizedCrop
                and nxt.interpolation not in (Inter.ANTIALIAS,) and self.device_target == "CPU"
                and nxt.device_target == "CPU"):
            return DecodeRandomResizedCrop(self, nxt, reduced=options.get("reduced_decode", True))
        return None

    def _decode(self, data):
        return dec.decode_pil(data) if self.to_pil else dec.decode_rgb(data)

    def _check_gpu(self) -> None:
        if self.to_pil:
            raise ValueError("Decode: to_pil=True decodes to a PIL image on the CPU; the GPU stage makes "
                             "arrays. Use Decode() with device_target 'GPU'.")

    def _device_decode_plan(self, h: int, w: int) -> tuple[list[tuple], tuple[int, ...]]:
        """The GPU stage's steps for a baseline JPEG of h x w (its header's size)."""
        dec.check_pixels(h, w, "Decode")
        return [("decode", "Decode")], (h, w, 3)


def _reduction(ch: int, cw: int, oh: int, ow: int) -> int:
    """The largest DCT scale-down (8, 4, 2 or 1) that keeps the crop at least the output size."""
    for k in (8, 4, 2):
        if ch >= k * oh and cw >= k * ow:
            return k
    return 1


def _scaled_box(top: int, left: int, ch: int, cw: int, h: int, w: int, sh: int, sw: int
                ) -> tuple[int, int, int, int]:
    """The crop box (y0, x0, y1, x1) of an h x w image mapped onto it decoded at sh x sw."""
    sy, sx = sh / h, sw / w
    y0, x0 = int(round(top * sy)), int(round(left * sx))
    y1 = min(sh, max(y0 + 1, int(round((top + ch) * sy))))
    x1 = min(sw, max(x0 + 1, int(round((left + cw) * sx))))
    return y0, x0, y1, x1


def decode_crop_resize(data, box_fn, out_hw: tuple[int, int], inter: Inter, op: str,
                       reduced: bool = True) -> np.ndarray:
    """Decodes ``data``, crops the box ``box_fn(h, w)`` returns, and resizes it to ``out_hw``.

    For a JPEG the box is drawn from the header's size before decoding, and the image is decoded
    at a reduced DCT scale when ``reduced`` and the crop shrinks by >= 2x (see module docstring).
    """
    buf = dec.encoded_bytes(data, op)
    oh, ow = out_hw
    if dec.is_jpeg(buf):
        size = dec.jpeg_size(buf)
        if size is not None:
            h, w = size
            dec.check_pixels(h, w, op)
            top, left, ch, cw = box_fn(h, w)
            k = _reduction(ch, cw, oh, ow) if reduced and inter != Inter.PILCUBIC else 1
            if k > 1:
                if min(h, w) >= 16:  # tinier images may be decoded at another scale of equal size
                    y0, x0, y1, x1 = _scaled_box(top, left, ch, cw, h, w, -(-h // k), -(-w // k))
                    crop = dec.decode_jpeg_region(buf, y0, x0, y1 - y0, x1 - x0, k)
                    if crop is not None:
                        return _resize_array(crop, oh, ow, inter, op)
                img = dec.decode_jpeg_reduced(buf, k, op)  # ceil(h / k) x ceil(w / k) too
                if img is not None:
                    y0, x0, y1, x1 = _scaled_box(top, left, ch, cw, h, w, *img.shape[:2])
                    return _resize_array(img[y0:y1, x0:x1], oh, ow, inter, op)
            crop = dec.decode_jpeg_region(buf, top, left, ch, cw)
            if crop is None:
                crop = dec.decode_rgb(buf, op)[top:top + ch, left:left + cw]
            return _resize_array(crop, oh, ow, inter, op)
    img = dec.decode_rgb(buf, op)
    top, left, ch, cw = box_fn(img.shape[0], img.shape[1])
    return _resize_array(img[top:top + ch, left:left + cw], oh, ow, inter, op)


class RandomCropDecodeResize(_DecodeOperation):
    """Decodes an encoded image, crops a random window and resizes it (RandomResizedCrop on the
    decoded image, computed from the JPEG header so only the needed resolution is decoded, and
    with headrace's C extension only the window's region of the JPEG).

    Args:
        size (Union[int, Sequence[int]]): output (height, width), or one int for a square.
        scale (Sequence[float], optional): range of the window's area fraction. Default: (0.08, 1.0).
        ratio (Sequence[float], optional): range of its aspect ratio. Default: (3/4, 4/3).
        interpolation (Inter, optional): the resize interpolation. Default: Inter.BILINEAR.
        max_attempts (int, optional): tries before falling back to a centre crop. Default: 10.

    Raises:
        TypeError: if an argument has the wrong type.
        ValueError: if a range is reversed or out of bounds.
        RuntimeError: if the data cannot be decoded.

    Examples:
        >>> import numpy as np, cv2
        >>> data = cv2.imencode(".jpg", np.zeros((64, 48, 3), np.uint8))[1]
        >>> RandomCropDecodeResize(16)(data).shape
        (16, 16, 3)
    """

    implementation = Implementation.C
    random = True

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3. / 4., 4. / 3.), interpolation=Inter.BILINEAR,
                 max_attempts=10):
        _keep_window_args(self, size, scale, ratio, interpolation, max_attempts)

    def _box(self, h: int, w: int) -> tuple[int, int, int, int]:
        return geo.random_resized_crop_box(sample_rng(), h, w, self._scale, self._ratio, self.max_attempts)

    def _decode(self, data):
        if self.interpolation == Inter.ANTIALIAS:
            raise RuntimeError(_RCDR_INTER)
        return decode_crop_resize(data, self._box, self._hw, self.interpolation, "RandomCropDecodeResize")

    def _device_decode_plan(self, h: int, w: int) -> tuple[list[tuple], tuple[int, ...]]:
        """The GPU stage's steps for a baseline JPEG of h x w: the window drawn as on the CPU."""
        if self.interpolation == Inter.ANTIALIAS:
            raise RuntimeError(_RCDR_INTER)
        dec.check_pixels(h, w, "RandomCropDecodeResize")
        top, left, ch, cw = self._box(h, w)
        oh, ow = self._hw
        return [("decode", "RandomCropDecodeResize"), ("crop", top, left, ch, cw),
                ("resize", oh, ow, _device_resize_mode(self.interpolation))], (oh, ow, 3)


_RCDR_INTER = ("RandomCropDecodeResize: Unsupported interpolation, only support NEAREST, LINEAR, CUBIC, AREA "
               "and PILCUBIC.")


class DecodeRandomResizedCrop(ImageTensorOperation):
    """``[Decode(), RandomResizedCrop(...)]`` as one op (made by ``fuse_ops``).

    It draws the crop box from ``sample_rng()`` exactly as the RandomResizedCrop it replaces (same
    calls, same order, from the image size in the header), so with the same generator the crop
    windows are identical. The pixels differ only when ``reduced`` is on and the window is shrunk
    by 2x or more: the JPEG is then decoded at reduced DCT scale, the window's edges snap to that
    scale's pixel grid (a shift of under half a reduced pixel) and the reduced pixels are
    resampled. On the benchmark's photos at output 112 that gives 26.5 dB median PSNR against the
    unfused result, but against an alias-free (area-averaged) downscale of the window it covers,
    35.7 dB median where the unfused bilinear result gets 31.0 dB (``python -m benchmarks.limits
    --psnr``). Run it under the sample key of the RandomResizedCrop (``source_ops[-1]``).

    Args:
        rrc (RandomResizedCrop): the crop op being fused (NumPy path).
        reduced (bool, optional): allow reduced-scale JPEG decoding. Default: True.
    """

    implementation = Implementation.C
    random = True

    def __init__(self, decode: Decode, rrc: RandomResizedCrop, reduced: bool = True):
        self.source_ops = (decode, rrc)
        self.rrc = rrc
        self.reduced = reduced

    @returns_contiguous
    def __call__(self, *args):
        if len(args) != 1:
            raise RuntimeError(ONE_TO_ONE)
        rrc = self.rrc
        return contiguous(decode_crop_resize(args[0], rrc.box, rrc._hw, rrc.interpolation, "Decode", self.reduced))

    @property
    def op_name(self) -> str:
        return "Decode+RandomResizedCrop"

    def __repr__(self) -> str:
        return f"DecodeRandomResizedCrop({self.rrc!r}, reduced={self.reduced})"
