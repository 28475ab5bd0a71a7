"""Enums and filter-bank functions of the audio transforms (MindSpore's
``mindspore.dataset.audio.utils``)."""
from __future__ import annotations

import enum

__all__ = ["BorderType", "DensityFunction", "FadeShape", "GainType", "Interpolation", "MelType",
           "Modulation", "NormMode", "NormType", "ResampleMethod", "ScaleType", "WindowType"]


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

    LINEAR = "linear"
    EXPONENTIAL = "exponential"
    LOGARITHMIC = "logarithmic"
    QUARTER_SINE = "quarter_sine"
    HALF_SINE = "half_sine"


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

    MAGNITUDE = "mag"
    POWER = "power"


class WindowType(str, enum.Enum):
    """Window function of the STFT-based transforms."""

    BARTLETT = "bartlett"
    BLACKMAN = "blackman"
    HAMMING = "hamming"
    HANN = "hann"
    KAISER = "kaiser"
