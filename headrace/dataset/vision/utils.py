"""Enums and image file helpers of ``headrace.dataset.vision`` (MindSpore's names and values)."""
from __future__ import annotations

import enum

__all__ = ["AutoAugmentPolicy", "Border", "ConvertMode", "ImageBatchFormat", "ImageReadMode",
           "Inter", "SliceMode"]


class Inter(enum.IntEnum):
    """Interpolation methods. ``LINEAR`` and ``CUBIC`` are aliases of ``BILINEAR`` and ``BICUBIC``."""

    NEAREST = 0
    ANTIALIAS = 1
    BILINEAR = LINEAR = 2
    BICUBIC = CUBIC = 3
    AREA = 4
    PILCUBIC = 5


class Border(str, enum.Enum):
    """Padding modes: CONSTANT fills with a value, EDGE repeats the edge, REFLECT mirrors without
    the edge pixel, SYMMETRIC mirrors with it."""

    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"


class ImageBatchFormat(enum.IntEnum):
    """Layout of an image batch: NHWC or NCHW."""

    NHWC = 0
    NCHW = 1


class ImageReadMode(enum.IntEnum):
    """How ``read_image`` decodes: as stored, as one grey channel, or as RGB."""

    UNCHANGED = 0
    GRAYSCALE = 1
    COLOR = 2


class SliceMode(enum.IntEnum):
    """What SlicePatches does with a remainder: pad it or drop it."""

    PAD = 0
    DROP = 1


class AutoAugmentPolicy(str, enum.Enum):
    """The policy sets of AutoAugment, learned on these datasets."""

    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


class ConvertMode(enum.IntEnum):
    """Colour conversions of ConvertColor (the RGB spellings alias the BGR ones)."""

    COLOR_BGR2BGRA = COLOR_RGB2RGBA = 0
    COLOR_BGRA2BGR = COLOR_RGBA2RGB = 1
    COLOR_BGR2RGBA = COLOR_RGB2BGRA = 2
    COLOR_RGBA2BGR = COLOR_BGRA2RGB = 3
    COLOR_BGR2RGB = COLOR_RGB2BGR = 4
    COLOR_BGRA2RGBA = COLOR_RGBA2BGRA = 5
    COLOR_BGR2GRAY = 6
    COLOR_RGB2GRAY = 7
    COLOR_GRAY2BGR = COLOR_GRAY2RGB = 8
    COLOR_GRAY2BGRA = COLOR_GRAY2RGBA = 9
    COLOR_BGRA2GRAY = 10
    COLOR_RGBA2GRAY = 11
