"""Automatic augmentation kernels: AutoAugment, RandAugment, TrivialAugmentWide.

Each draws a few named sub-operations (shear, translate, rotate, colour ops, ...) with
magnitudes from a table and applies them to an HWC RGB uint8 image. The tables and the way each
sub-operation is carried out reproduce MindSpore's C++ ops exactly; which operations get drawn
depends on our generator (``rng``), not MindSpore's:

* magnitude tables are float32 ``start + i * step`` ramps over ``num_magnitude_bins`` bins;
* ShearX/ShearY shear by ``degrees(magnitude)`` degrees about the image centre
  ``((w - 1) / 2, (h - 1) / 2)``; TranslateX/TranslateY go through the affine op whose
  translation is a fraction of the image size, so the shift is ``magnitude * width`` pixels
  (most draws move the image out of view entirely, as in MindSpore);
* Rotate turns by ``magnitude`` degrees (counter-clockwise) about the same centre and fills
  with the channels of ``fill_value`` in the order (1, 2, 0), as MindSpore does;
* geometric warps use OpenCV 4's fixed-point sampling (``geometry.warp_affine``), which
  MindSpore's OpenCV build uses and newer OpenCV releases no longer do.
"""
from __future__ import annotations

import math
from typing import Sequence

import cv2
import numpy as np

from headrace._image import color, geometry

__all__ = ["AUTO_AUGMENT_POLICIES", "apply_augment", "auto_augment", "magnitude_ramp", "rand_augment",
           "trivial_augment_wide"]

_F32 = np.float32

# MindSpore's Inter values -> OpenCV flags for warps (AREA warps bilinearly, as in OpenCV).
_WARP_FLAGS = {0: cv2.INTER_NEAREST, 2: cv2.INTER_LINEAR, 3: cv2.INTER_CUBIC, 4: cv2.INTER_LINEAR}


def _warp(img: np.ndarray, matrix: np.ndarray, interpolation: int, fill: Sequence[int]) -> np.ndarray:
    """Warps with OpenCV 4's fixed-point sampling (``geometry.warp_affine``), same size out."""
    h, w = img.shape[:2]
    return geometry.warp_affine(img, matrix, w, h, _WARP_FLAGS[int(interpolation)], tuple(int(v) for v in fill))


def magnitude_ramp(start: float, end: float, bins: int) -> np.ndarray:
    """``bins`` float32 values from ``start`` to ``end``: ``start + i * ((end - start) / (bins - 1))``."""
    step = (_F32(end) - _F32(start)) / _F32(bins - 1)
    return (_F32(start) + np.arange(bins, dtype=np.float32) * step).astype(np.float32)


def _posterize_bits(bins: int, levels: int) -> np.ndarray:
    return (8 - np.round(np.arange(bins) / ((bins - 1) / levels))).astype(np.float32)


def apply_augment(img: np.ndarray, name: str, magnitude: float, interpolation: int,
                  fill: Sequence[int]) -> np.ndarray:
    """Applies one named sub-operation with a (signed) magnitude.

    Args:
        img: HWC RGB uint8 image.
        name: Identity, ShearX, ShearY, TranslateX, TranslateY, Rotate, Brightness, Color,
            Contrast, Sharpness, Posterize, Solarize, AutoContrast, Equalize or Invert.
        magnitude: the operation's magnitude (ignored by the ones that take none).
        interpolation: Inter value for the geometric ones.
        fill: fill colour for the geometric ones.

    Returns:
        the transformed image (the input itself for Identity).
    """
    h, w = img.shape[:2]
    m = _F32(magnitude)
    if name == "Identity":
        return img
    if name == "ShearX":
        mat = geometry.affine_matrix(h, w, 0.0, (0.0, 0.0), 1.0, (math.degrees(m), 0.0))
    elif name == "ShearY":
        mat = geometry.affine_matrix(h, w, 0.0, (0.0, 0.0), 1.0, (0.0, math.degrees(m)))
    elif name == "TranslateX":
        mat = geometry.affine_matrix(h, w, 0.0, (float(m) * w, 0.0), 1.0, (0.0, 0.0))
    elif name == "TranslateY":
        mat = geometry.affine_matrix(h, w, 0.0, (0.0, float(m) * h), 1.0, (0.0, 0.0))
    elif name == "Rotate":
        mat, _, _ = geometry.rotation_matrix(h, w, float(m), None, False)
        return _warp(img, mat, interpolation, (fill[1], fill[2], fill[0]))
    elif name == "Brightness":
        return color.adjust_brightness(img, _F32(1) + m)
    elif name == "Color":
        return color.adjust_saturation(img, _F32(1) + m)
    elif name == "Contrast":
        return color.adjust_contrast(img, _F32(1) + m)
    elif name == "Sharpness":
        return color.adjust_sharpness(img, _F32(1) + m)
    elif name == "Posterize":
        return color.posterize(img, int(m))
    elif name == "Solarize":
        return color.solarize(img, (float(m), float(m)))
    elif name == "AutoContrast":
        return color.auto_contrast(img)
    elif name == "Equalize":
        return color.equalize(img)
    elif name == "Invert":
        return color.invert(img)
    else:
        raise ValueError(f"unknown augmentation {name!r}")
    return _warp(img, mat, interpolation, fill)


_SIGNED = frozenset(("ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness",
                     "Color", "Contrast", "Sharpness"))


def _augment_space(bins: int, shear: float, translate: tuple[float, float], rotate: float, enhance: float,
                   posterize_levels: int) -> list[tuple[str, np.ndarray | None]]:
    """The 14 operations RandAugment and TrivialAugmentWide draw from, each with its magnitudes over
    ``bins`` steps from 0 to the given top (``translate``: x, y); Solarize runs from 255 down to 0."""
    return [
        ("Identity", None),
        ("ShearX", magnitude_ramp(0.0, shear, bins)),
        ("ShearY", magnitude_ramp(0.0, shear, bins)),
        ("TranslateX", magnitude_ramp(0.0, translate[0], bins)),
        ("TranslateY", magnitude_ramp(0.0, translate[1], bins)),
        ("Rotate", magnitude_ramp(0.0, rotate, bins)),
        ("Brightness", magnitude_ramp(0.0, enhance, bins)),
        ("Color", magnitude_ramp(0.0, enhance, bins)),
        ("Contrast", magnitude_ramp(0.0, enhance, bins)),
        ("Sharpness", magnitude_ramp(0.0, enhance, bins)),
        ("Posterize", _posterize_bits(bins, posterize_levels)),
        ("Solarize", magnitude_ramp(255.0, 0.0, bins)),
        ("AutoContrast", None),
        ("Equalize", None),
    ]


def _rand_augment_space(bins: int, h: int, w: int) -> list[tuple[str, np.ndarray | None]]:
    return _augment_space(bins, 0.3, (150.0 / 331.0 * w, 150.0 / 331.0 * h), 30.0, 0.9, 4)


def _trivial_augment_space(bins: int) -> list[tuple[str, np.ndarray | None]]:
    return _augment_space(bins, 0.99, (32.0, 32.0), 135.0, 0.99, 6)


def _signed(name: str, magnitude: float, rng: np.random.Generator) -> float:
    if name in _SIGNED and rng.random() < 0.5:
        return -magnitude
    return magnitude


def rand_augment(img: np.ndarray, num_ops: int, magnitude: int, num_magnitude_bins: int,
                 interpolation: int, fill: Sequence[int], rng: np.random.Generator) -> np.ndarray:
    """RandAugment: ``num_ops`` operations (how many to apply in sequence) drawn uniformly, all at
    magnitude bin ``magnitude`` (in [0, num_magnitude_bins)); the other arguments and the result
    as in :func:`trivial_augment_wide`."""
    h, w = img.shape[:2]
    space = _rand_augment_space(num_magnitude_bins, h, w)
    for _ in range(num_ops):
        name, mags = space[int(rng.integers(len(space)))]
        mag = float(mags[magnitude]) if mags is not None else 0.0
        img = apply_augment(img, name, _signed(name, mag, rng), interpolation, fill)
    return img


def trivial_augment_wide(img: np.ndarray, num_magnitude_bins: int, interpolation: int,
                         fill: Sequence[int], rng: np.random.Generator) -> np.ndarray:
    """TrivialAugmentWide: one operation and one magnitude bin, both drawn uniformly.

    Args:
        img: HWC RGB uint8 image.
        num_magnitude_bins: number of bins of each magnitude table.
        interpolation: Inter value for geometric operations.
        fill: fill colour for geometric operations.
        rng: the generator the draws come from.

    Returns:
        the augmented image.
    """
    space = _trivial_augment_space(num_magnitude_bins)
    name, mags = space[int(rng.integers(len(space)))]
    mag = float(mags[int(rng.integers(num_magnitude_bins))]) if mags is not None else 0.0
    return apply_augment(img, name, _signed(name, mag, rng), interpolation, fill)


# AutoAugment policies (Cubuk et al., 2019): 25 sub-policies of two (operation, probability,
# magnitude bin) steps each, learned on ImageNet, CIFAR-10 and SVHN.
AUTO_AUGMENT_POLICIES: dict[str, tuple] = {
    "imagenet": (
        (("Posterize", 0.4, 8), ("Rotate", 0.6, 9)), (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)), (("Posterize", 0.6, 7), ("Posterize", 0.6, 6)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)), (("Equalize", 0.4, None), ("Rotate", 0.8, 8)),
        (("Solarize", 0.6, 3), ("Equalize", 0.6, None)), (("Posterize", 0.8, 5), ("Equalize", 1.0, None)),
        (("Rotate", 0.2, 3), ("Solarize", 0.6, 8)), (("Equalize", 0.6, None), ("Posterize", 0.4, 6)),
        (("Rotate", 0.8, 8), ("Color", 0.4, 0)), (("Rotate", 0.4, 9), ("Equalize", 0.6, None)),
        (("Equalize", 0.0, None), ("Equalize", 0.8, None)), (("Invert", 0.6, None), ("Equalize", 1.0, None)),
        (("Color", 0.6, 4), ("Contrast", 1.0, 8)), (("Rotate", 0.8, 8), ("Color", 1.0, 2)),
        (("Color", 0.8, 8), ("Solarize", 0.8, 7)), (("Sharpness", 0.4, 7), ("Invert", 0.6, None)),
        (("ShearX", 0.6, 5), ("Equalize", 1.0, None)), (("Color", 0.4, 0), ("Equalize", 0.6, None)),
        (("Equalize", 0.4, None), ("Solarize", 0.2, 4)), (("Solarize", 0.6, 5), ("AutoContrast", 0.6, None)),
        (("Invert", 0.6, None), ("Equalize", 1.0, None)), (("Color", 0.6, 4), ("Contrast", 1.0, 8)),
        (("Equalize", 0.8, None), ("Equalize", 0.6, None)),
    ),
    "cifar10": (
        (("Invert", 0.1, None), ("Contrast", 0.2, 6)), (("Rotate", 0.7, 2), ("TranslateX", 0.3, 9)),
        (("Sharpness", 0.8, 1), ("Sharpness", 0.9, 3)), (("ShearY", 0.5, 8), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.5, None), ("Equalize", 0.9, None)), (("ShearY", 0.2, 7), ("Posterize", 0.3, 7)),
        (("Color", 0.4, 3), ("Brightness", 0.6, 7)), (("Sharpness", 0.3, 9), ("Brightness", 0.7, 9)),
        (("Equalize", 0.6, None), ("Equalize", 0.5, None)), (("Contrast", 0.6, 7), ("Sharpness", 0.6, 5)),
        (("Color", 0.7, 7), ("TranslateX", 0.5, 8)), (("Equalize", 0.3, None), ("AutoContrast", 0.4, None)),
        (("TranslateY", 0.4, 3), ("Sharpness", 0.2, 6)), (("Brightness", 0.9, 6), ("Color", 0.2, 8)),
        (("Solarize", 0.5, 2), ("Invert", 0.0, None)), (("Equalize", 0.2, None), ("AutoContrast", 0.6, None)),
        (("Equalize", 0.2, None), ("Equalize", 0.6, None)), (("Color", 0.9, 9), ("Equalize", 0.6, None)),
        (("AutoContrast", 0.8, None), ("Solarize", 0.2, 8)), (("Brightness", 0.1, 3), ("Color", 0.7, 0)),
        (("Solarize", 0.4, 5), ("AutoContrast", 0.9, None)), (("TranslateY", 0.9, 9), ("TranslateY", 0.7, 9)),
        (("AutoContrast", 0.9, None), ("Solarize", 0.8, 3)), (("Equalize", 0.8, None), ("Invert", 0.1, None)),
        (("TranslateY", 0.7, 9), ("AutoContrast", 0.9, None)),
    ),
    "svhn": (
        (("ShearX", 0.9, 4), ("Invert", 0.2, None)), (("ShearY", 0.9, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.6, None), ("Solarize", 0.6, 6)), (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Equalize", 0.6, None), ("Rotate", 0.9, 3)), (("ShearX", 0.9, 4), ("AutoContrast", 0.8, None)),
        (("ShearY", 0.9, 8), ("Invert", 0.4, None)), (("ShearY", 0.9, 5), ("Solarize", 0.2, 6)),
        (("Invert", 0.9, None), ("AutoContrast", 0.8, None)), (("Equalize", 0.6, None), ("Rotate", 0.9, 3)),
        (("ShearX", 0.9, 4), ("Solarize", 0.3, 3)), (("ShearY", 0.8, 8), ("Invert", 0.7, None)),
        (("Equalize", 0.9, None), ("TranslateY", 0.6, 6)), (("Invert", 0.9, None), ("Equalize", 0.6, None)),
        (("Contrast", 0.3, 3), ("Rotate", 0.8, 4)), (("Invert", 0.8, None), ("TranslateY", 0.0, 2)),
        (("ShearY", 0.7, 6), ("Solarize", 0.4, 8)), (("Invert", 0.6, None), ("Rotate", 0.8, 4)),
        (("ShearY", 0.3, 7), ("TranslateX", 0.9, 3)), (("ShearX", 0.1, 6), ("Invert", 0.6, None)),
        (("Solarize", 0.7, 2), ("TranslateY", 0.6, 7)), (("ShearY", 0.8, 4), ("Invert", 0.8, None)),
        (("ShearX", 0.7, 9), ("TranslateY", 0.8, 3)), (("ShearY", 0.8, 5), ("AutoContrast", 0.7, None)),
        (("ShearX", 0.7, 2), ("Invert", 0.1, None)),
    ),
}

_AUTO_BINS = 10


def _auto_augment_magnitude(name: str, index: int, h: int, w: int) -> float:
    ramps = {
        "ShearX": (0.0, 0.3), "ShearY": (0.0, 0.3),
        "TranslateX": (0.0, 150.0 / 331.0 * w), "TranslateY": (0.0, 150.0 / 331.0 * h),
        "Rotate": (0.0, 30.0), "Brightness": (0.0, 0.9), "Color": (0.0, 0.9),
        "Contrast": (0.0, 0.9), "Sharpness": (0.0, 0.9),
        # AutoAugment's solarize table starts at 256 (RandAugment's at 255).
        "Solarize": (256.0, 0.0),
    }
    if name == "Posterize":
        return float(_posterize_bits(_AUTO_BINS, 4)[index])
    start, end = ramps[name]
    return float(magnitude_ramp(start, end, _AUTO_BINS)[index])


def auto_augment(img: np.ndarray, policy: str, interpolation: int, fill: Sequence[int],
                 rng: np.random.Generator) -> np.ndarray:
    """AutoAugment: one sub-policy of ``policy`` ("imagenet", "cifar10" or "svhn") drawn
    uniformly; each of its two steps runs with its probability. The other arguments and the
    result as in :func:`trivial_augment_wide`."""
    h, w = img.shape[:2]
    sub = AUTO_AUGMENT_POLICIES[policy]
    steps = sub[int(rng.integers(len(sub)))]
    for name, prob, index in steps:
        if rng.random() < prob:
            mag = _auto_augment_magnitude(name, index, h, w) if index is not None else 0.0
            img = apply_augment(img, name, _signed(name, mag, rng), interpolation, fill)
    return img
