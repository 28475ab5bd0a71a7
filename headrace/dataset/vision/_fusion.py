"""Vision fusion rules for ``headrace.dataset.transforms.fuse_ops`` (registered on import)."""
from __future__ import annotations

import numpy as np

from headrace.dataset.transforms._base import Implementation
from headrace.dataset.transforms._fusion import register_fusion
from headrace.dataset.vision._base import ImageTensorOperation
from headrace.dataset.vision._kernels import convert as cv
from headrace.dataset.vision._ops_convert import HWC2CHW, Normalize
from headrace.dataset.vision._ops_decode import Decode, DecodeRandomResizedCrop
from headrace.dataset.vision._ops_geometry import RandomResizedCrop
from headrace.dataset.vision.utils import Inter


class NormalizeHWC2CHW(ImageTensorOperation):
    """``[Normalize(mean, std), HWC2CHW()]`` as one op: writes the CHW float32 result directly.

    Falls back to running the two ops for anything but an <H, W, C> array whose channel count
    matches `mean` (so errors and edge cases are those of the original ops).
    """

    implementation = Implementation.C

    def __init__(self, normalize: Normalize, hwc2chw: HWC2CHW):
        self.source_ops = (normalize, hwc2chw)
        self._norm, self._t = normalize, hwc2chw
        self._mean, self._std = normalize._mean, normalize._std

    def _run(self, img: np.ndarray) -> np.ndarray:
        if img.ndim == 3 and img.shape[2] == self._mean.size and img.dtype.kind in "biuf" and self._mean.size:
            return cv.normalize_hwc_to_chw(img, self._mean, self._std)
        return self._t._run(self._norm._run(img))

    @property
    def op_name(self) -> str:
        return "Normalize+HWC2CHW"


@register_fusion
def _decode_rrc(first, second, options):
    if (type(first) is Decode and not first.to_pil and type(second) is RandomResizedCrop
            and second.interpolation not in (Inter.ANTIALIAS,)):
        return DecodeRandomResizedCrop(first, second, reduced=options.get("reduced_decode", True))
    return None


@register_fusion
def _normalize_chw(first, second, options):
    if type(first) is Normalize and first.is_hwc and type(second) is HWC2CHW:
        return NormalizeHWC2CHW(first, second)
    return None


__all__ = ["NormalizeHWC2CHW"]
