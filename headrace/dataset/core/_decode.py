"""Image decoding (headrace only; MindSpore has neither setting).

Decoders read these settings when they decode (worker processes get the values of the iterator
that started them); set them before creating iterators.
"""
from __future__ import annotations

from headrace._engine import options as _options
from headrace.dataset.core import _store


DEFAULT_MAX_IMAGE_PIXELS = _options.Options.max_image_pixels
_MAX_PIXELS_LIMIT = 1 << 40


def set_max_image_pixels(max_pixels):
    """Largest image (height x width, from its header) that decoding accepts (headrace only).

    An image whose header claims more pixels is refused before anything is allocated, with an
    error naming its size: a 'decompression bomb', or a damaged header claiming 65500 x 65500,
    would otherwise allocate gigabytes. Applies to every decoder (Decode, RandomCropDecodeResize,
    the fused decode ops, ``decode=True`` sources, ``read_image``; JPEG, PNG and what Pillow
    identifies). Default: 89,478,485, Pillow's ``MAX_IMAGE_PIXELS`` (about 268 MiB decoded).
    Pillow's own limit still applies to images Pillow decodes (``Decode(to_pil=True)``).

    Args:
        max_pixels (Union[int, None]): A limit in [1, 2**40], or None for no limit.
    """
    if max_pixels is not None:
        if isinstance(max_pixels, bool) or not isinstance(max_pixels, int):
            raise TypeError(f"max_pixels must be an int or None, but got {type(max_pixels).__name__}.")
        if not 1 <= max_pixels <= _MAX_PIXELS_LIMIT:
            raise ValueError(f"max_pixels must be in [1, 2**40] (or None for no limit), but got {max_pixels}.")
    _options.update(max_image_pixels=max_pixels)


def get_max_image_pixels():
    """The pixel limit of ``set_max_image_pixels`` (None: no limit)."""
    return _options.snapshot().max_image_pixels


def set_strict_decode(strict):
    """How a JPEG whose data ends early is reported (headrace only).

    A JPEG cut short (libjpeg's "premature end of data segment" / "Premature end of JPEG file",
    e.g. a truncated download, with or without an EOI marker appended) decodes with a grey tail.
    By default headrace returns that image and emits an ``ImageDataWarning`` naming the op and the
    sample index or file; with ``strict`` True it is an error. In strict mode the ops that decode
    only a window of a JPEG (RandomCropDecodeResize, the fused Decode + RandomResizedCrop) check
    the whole file, which makes them slower (about 13% more decode time in one measurement);
    by default they warn only when the missing part lies inside the window they decode.

    Args:
        strict (bool): True to make such JPEGs an error.
    """
    _options.update(strict_decode=_store.check_bool(strict, "strict"))


def get_strict_decode():
    """Whether a JPEG whose data ends early is an error (``set_strict_decode``)."""
    return _options.snapshot().strict_decode

