"""Enums and filter-bank functions of the audio transforms (MindSpore's
``mindspore.dataset.audio.utils``)."""
from __future__ import annotations

import enum

import numpy as np

from headrace._audio import mel as _mel
from headrace._util.checks import INT32_MAX, check_range
from headrace.dataset.transforms._checks import check_non_negative_float32, check_pos_float32
from headrace.dataset.transforms._checks import type_check as _type_check

__all__ = ["BorderType", "DensityFunction", "FadeShape", "GainType", "Interpolation", "MelType",
           "Modulation", "NormMode", "NormType", "ResampleMethod", "ScaleType", "WindowType", "create_dct",
           "linear_fbanks", "melscale_fbanks"]


class BorderType(str, enum.Enum):
    """Padding of a signal's ends: CONSTANT (zeros), EDGE (repeat the end sample), REFLECT (mirror
    without the end sample), SYMMETRIC (mirror with it)."""

    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"


class DensityFunction(str, enum.Enum):
    """Noise shape of Dither: triangular, rectangular or Gaussian."""

    TPDF = "TPDF"
    RPDF = "RPDF"
    GPDF = "GPDF"


class FadeShape(str, enum.Enum):
    """Curve of a Fade."""

    QUARTER_SINE = "quarter_sine"
    HALF_SINE = "half_sine"
    LINEAR = "linear"
    LOGARITHMIC = "logarithmic"
    EXPONENTIAL = "exponential"


class GainType(str, enum.Enum):
    """How Vol reads its gain: an amplitude ratio, a power ratio or decibels."""

    AMPLITUDE = "amplitude"
    POWER = "power"
    DB = "db"


class Interpolation(str, enum.Enum):
    """Interpolation of Flanger's delay line."""

    LINEAR = "linear"
    QUADRATIC = "quadratic"


class MelType(str, enum.Enum):
    """Mel scale formula."""

    HTK = "htk"
    SLANEY = "slaney"


class Modulation(str, enum.Enum):
    """Shape of Flanger's modulation."""

    SINUSOIDAL = "sinusoidal"
    TRIANGULAR = "triangular"


class NormMode(str, enum.Enum):
    """Normalisation of the DCT matrix."""

    ORTHO = "ortho"
    NONE = "none"


class NormType(str, enum.Enum):
    """Normalisation of the mel filter bank (SLANEY: area under each filter)."""

    SLANEY = "slaney"
    NONE = "none"


class ResampleMethod(str, enum.Enum):
    """Kernel of Resample."""

    SINC_INTERPOLATION = "sinc_interpolation"
    KAISER_WINDOW = "kaiser_window"


class ScaleType(str, enum.Enum):
    """What AmplitudeToDB's input holds: power or magnitude."""

    POWER = "power"
    MAGNITUDE = "magnitude"


class WindowType(str, enum.Enum):
    """Window function of the STFT-based transforms."""

    BARTLETT = "bartlett"
    BLACKMAN = "blackman"
    HAMMING = "hamming"
    HANN = "hann"
    KAISER = "kaiser"


def create_dct(n_mfcc, n_mels, norm=NormMode.NONE):
    """The DCT-II matrix (n_mels, n_mfcc), float32: column k is ``cos(pi / n_mels * (n + 0.5) * k)``,
    orthonormal with ``NormMode.ORTHO``, scaled by 2 with ``NormMode.NONE``.

    Args:
        n_mfcc (int): coefficients kept, > 0.
        n_mels (int): mel bins, > 0.
        norm (NormMode, optional): Default: NormMode.NONE.

    Raises:
        TypeError: an argument of the wrong type.
        ValueError: n_mfcc or n_mels not positive.

    Examples:
        >>> create_dct(1, 2).tolist()
        [[2.0], [2.0]]
    """
    if not isinstance(n_mfcc, int):
        raise TypeError(f"n_mfcc with value {n_mfcc} is not of type {int}, but got {type(n_mfcc)}.")
    if not isinstance(n_mels, int):
        raise TypeError(f"n_mels with value {n_mels} is not of type {int}, but got {type(n_mels)}.")
    if not isinstance(norm, NormMode):
        raise TypeError(f"norm with value {norm} is not of type {NormMode}, but got {type(norm)}.")
    if n_mfcc <= 0:
        raise ValueError(f"n_mfcc must be greater than 0, but got {n_mfcc}.")
    if n_mels <= 0:
        raise ValueError(f"n_mels must be greater than 0, but got {n_mels}.")
    return _mel.create_dct(n_mfcc, n_mels, norm == NormMode.ORTHO).astype(np.float32)


def _check_fbank_freqs(n_freqs, f_min, f_max) -> None:
    _type_check(n_freqs, (int,), "n_freqs")
    check_range(n_freqs, (0, INT32_MAX), "n_freqs")
    _type_check(f_min, (int, float), "f_min")
    check_non_negative_float32(f_min, "f_min")
    _type_check(f_max, (int, float), "f_max")
    check_pos_float32(f_max, "f_max")
    if f_min > f_max:
        raise ValueError(f"Input f_min should be no more than f_max, but got f_min: {f_min} and f_max: {f_max}.")


def _check_pos(value, name: str) -> None:
    _type_check(value, (int,), name)
    check_range(value, (1, INT32_MAX), name)


def linear_fbanks(n_freqs, f_min, f_max, n_filter, sample_rate):
    """Triangular filters with corners equally spaced in Hz between f_min and f_max, over
    ``n_freqs`` bins spanning 0 .. sample_rate // 2: float32 (n_freqs, n_filter).

    Args:
        n_freqs (int): frequency bins.
        f_min (float): lowest corner, >= 0.
        f_max (float): highest corner, > 0 and >= f_min.
        n_filter (int): filters, > 0.
        sample_rate (int): sample rate, > 0.

    Examples:
        >>> linear_fbanks(3, 0.0, 8000.0, 1, 16000).tolist()
        [[0.0], [1.0], [0.0]]
    """
    _check_fbank_freqs(n_freqs, f_min, f_max)
    _check_pos(n_filter, "n_filter")
    _check_pos(sample_rate, "sample_rate")
    return _mel.linear_fbanks(n_freqs, float(f_min), float(f_max), n_filter, sample_rate).astype(np.float32)


def melscale_fbanks(n_freqs, f_min, f_max, n_mels, sample_rate, norm=NormType.NONE, mel_type=MelType.HTK):
    """Triangular mel filters over ``n_freqs`` bins spanning 0 .. sample_rate // 2, corners equally
    spaced in mels between f_min and f_max: float32 (n_freqs, n_mels).

    Args:
        n_freqs (int): frequency bins.
        f_min (float): lowest corner, >= 0.
        f_max (float): highest corner, > 0 and >= f_min.
        n_mels (int): filters, > 0.
        sample_rate (int): sample rate, > 0.
        norm (NormType, optional): SLANEY scales each filter to unit area. Default: NormType.NONE.
        mel_type (MelType, optional): Default: MelType.HTK.

    Examples:
        >>> melscale_fbanks(3, 0.0, 8000.0, 1, 16000).astype(np.float64).round(4).tolist()
        [[0.0], [0.6418], [0.0]]
    """
    _check_fbank_freqs(n_freqs, f_min, f_max)
    _check_pos(n_mels, "n_mels")
    _check_pos(sample_rate, "sample_rate")
    _type_check(norm, (NormType,), "norm")
    _type_check(mel_type, (MelType,), "mel_type")
    return _mel.melscale_fbanks(n_freqs, float(f_min), float(f_max), n_mels, sample_rate,
                                norm == NormType.SLANEY, mel_type == MelType.SLANEY).astype(np.float32)
