"""The limits the decoders apply: a process-wide value that the engine's options keep current.

``ds.config.set_max_image_pixels`` / ``set_strict_decode`` change the engine's ``Options``; the
engine hands every change (and a worker process its iterator's settings) to :func:`configure`, so
the kernels read plain values here and never import the engine.
"""
from __future__ import annotations

import dataclasses

DEFAULT_MAX_IMAGE_PIXELS = 89_478_485  # Pillow's MAX_IMAGE_PIXELS


@dataclasses.dataclass(frozen=True)
class DecodeLimits:
    max_image_pixels: int | None = DEFAULT_MAX_IMAGE_PIXELS  # None: no limit
    strict_decode: bool = False  # a JPEG whose data ends early: error, not warning


_current = DecodeLimits()


def current() -> DecodeLimits:
    """The limits in force now."""
    return _current


def configure(max_image_pixels: int | None, strict_decode: bool) -> None:
    """Replaces the limits (one assignment of an immutable value: readers never see half of it)."""
    global _current
    _current = DecodeLimits(max_image_pixels, strict_decode)
