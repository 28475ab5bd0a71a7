"""Elementwise and per-frame transforms of spectra: decibels and back, angle, norm and magnitude /
phase of complex values, deltas, sliding-window mean normalisation.
"""
from __future__ import annotations

import math

import numpy as np

from headrace._audio import spectral as sk
from headrace._util.checks import INT32_MAX, check_range
from headrace.dataset.audio._base import AudioTensorOperation
from headrace.dataset.audio._spectral_base import _FREQ_TIME, _complex_in, _nonneg_int, _numeric, _OwnRankError, _power

from headrace.dataset.audio.utils import BorderType, ScaleType
from headrace.dataset.transforms._checks import check_float32, check_pos_float32, type_check
__all__ = ["AmplitudeToDB", "Angle", "ComplexNorm", "ComputeDeltas", "DBToAmplitude", "Magphase", "SlidingWindowCmn"]

class AmplitudeToDB(AudioTensorOperation):
    """Power or magnitude to decibels: ``m * log10(max(x, amin)) - m * log10(max(amin, ref_value))``
    (m = 10 for power, 20 for magnitude), clipped at ``top_db`` below the maximum of each
    spectrogram (the last three axes). Input (..., freq, time).

    Args:
        stype (ScaleType, optional): what the input holds. Default: ScaleType.POWER.
        ref_value (float, optional): reference scaled to 0 dB. Default: 1.0.
        amin (float, optional): floor of the input. Default: 1e-10.
        top_db (float, optional): dynamic range kept. Default: 80.0.

    Examples:
        >>> AmplitudeToDB()(np.array([[1.0, 10.0]], np.float32)).tolist()
        [[0.0, 10.0]]
    """

    def __init__(self, stype=ScaleType.POWER, ref_value=1.0, amin=1e-10, top_db=80.0):
        type_check(stype, (ScaleType,), "stype")
        type_check(ref_value, (int, float), "ref_value")
        check_pos_float32(ref_value, "ref_value")
        type_check(amin, (int, float), "amin")
        check_pos_float32(amin, "amin")
        type_check(top_db, (int, float), "top_db")
        check_pos_float32(top_db, "top_db")
        self.stype, self.ref_value, self.amin, self.top_db = stype, ref_value, amin, top_db
        self._mult = 10.0 if stype == ScaleType.POWER else 20.0
        self._db_mult = math.log10(max(amin, ref_value))

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _numeric(x, "AmplitudeToDB", 2, _FREQ_TIME)
        return sk.amplitude_to_db(x, self._mult, self.amin, self._db_mult, self.top_db)


class DBToAmplitude(AudioTensorOperation):
    """Decibels back to power or amplitude: ``ref * (10 ** (x / 10)) ** power``.

    Args:
        ref (float): scale of the output.
        power (float): 1 for power, 0.5 for amplitude.

    Examples:
        >>> DBToAmplitude(1.0, 1.0)(np.array([10.0, 20.0], np.float32)).tolist()
        [10.0, 100.0]
    """

    def __init__(self, ref, power):
        type_check(ref, (float, int), "ref")
        check_float32(ref, "ref")
        type_check(power, (float, int), "power")
        check_float32(power, "power")
        self.ref, self.power = ref, power

    def _run(self, x: np.ndarray) -> np.ndarray:
        return sk.db_to_amplitude(_numeric(x, "DBToAmplitude"), self.ref, self.power)


class Angle(_OwnRankError):
    """Phase angle of complex values (..., 2) -> (...), in radians.

    Examples:
        >>> Angle()(np.array([[0.0, 1.0], [-1.0, 0.0]])).tolist() == [np.pi / 2, np.pi]
        True
    """

    _rank_error = ("Angle: the shape of input tensor does not match the requirement of operator. Expecting tensor "
                   "in shape of <..., complex=2>.")

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _complex_in(x, "Angle")
        return np.arctan2(x[..., 1], x[..., 0])


class ComplexNorm(_OwnRankError):
    """Norm of complex values (..., 2) -> (...), raised to ``power``.

    Args:
        power (float, optional): exponent, >= 0. Default: 1.0.

    Examples:
        >>> ComplexNorm()(np.array([[3.0, 4.0]], np.float32)).tolist()
        [5.0]
    """

    _rank_error = ("ComplexNorm: the shape of input tensor does not match the requirement of operator. Expecting tensor "
                   "in shape of <..., complex=2>.")

    def __init__(self, power=1.0):
        _power(power)
        self.power = power

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _complex_in(x, "ComplexNorm")
        sq = x[..., 0] * x[..., 0] + x[..., 1] * x[..., 1]
        return np.power(sq, x.dtype.type(self.power / 2.0))


class Magphase(_OwnRankError):
    """Magnitude (raised to ``power``) and phase of complex values (..., 2): a tuple of two (...) arrays.

    Args:
        power (float, optional): exponent of the magnitude, >= 0. Default: 1.0.

    Examples:
        >>> [a.tolist() for a in Magphase()(np.array([[3.0, 0.0]], np.float32))]
        [[3.0], [0.0]]
    """

    _rank_error = ("Magphase: the shape of input tensor does not match the requirement of operator. Expecting tensor "
                   "in shape of <..., complex=2>.")

    def __init__(self, power=1.0):
        _power(power)
        self.power = power

    def _run(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = _complex_in(x, "Magphase")
        sq = x[..., 0] * x[..., 0] + x[..., 1] * x[..., 1]
        return np.power(sq, x.dtype.type(self.power / 2.0)), np.arctan2(x[..., 1], x[..., 0])


# ---- per-frame feature transforms ----

class ComputeDeltas(AudioTensorOperation):
    """Delta coefficients over time of a spectrogram (..., freq, time).

    Args:
        win_length (int, optional): frames in the regression window, >= 3. Default: 5.
        pad_mode (BorderType, optional): padding of the ends. Default: BorderType.EDGE.

    Examples:
        >>> ComputeDeltas(3)(np.array([[0.0, 1.0, 2.0]], np.float32)).tolist()
        [[0.5, 1.0, 0.5]]
    """

    def __init__(self, win_length=5, pad_mode=BorderType.EDGE):
        type_check(pad_mode, (BorderType,), "pad_mode")
        type_check(win_length, (int,), "win_length")
        check_range(win_length, (3, INT32_MAX), "win_length")
        self.win_length, self.pad_mode = win_length, pad_mode

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _numeric(x, "ComputeDeltas", 2, _FREQ_TIME)
        return sk.compute_deltas(x, self.win_length, self.pad_mode.value)


class SlidingWindowCmn(AudioTensorOperation):
    """Sliding-window cepstral mean (and variance) normalisation of features (..., time, feature).

    Args:
        cmn_window (int, optional): frames in the window. Default: 600.
        min_cmn_window (int, optional): least frames used at the start (when not centred). Default: 100.
        center (bool, optional): centre the window on the frame. Default: False.
        norm_vars (bool, optional): also divide by the standard deviation. Default: False.

    Examples:
        >>> SlidingWindowCmn(2, 1)(np.array([[1.0], [3.0]], np.float32)).tolist()
        [[0.0], [1.0]]
    """

    def __init__(self, cmn_window=600, min_cmn_window=100, center=False, norm_vars=False):
        _nonneg_int(cmn_window, "cmn_window")
        _nonneg_int(min_cmn_window, "min_cmn_window")
        type_check(center, (bool,), "center")
        type_check(norm_vars, (bool,), "norm_vars")
        self.cmn_window, self.min_cmn_window, self.center, self.norm_vars = (
            cmn_window, min_cmn_window, center, norm_vars)

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _numeric(x, "SlidingWindowCmn", 2, _FREQ_TIME)
        return sk.sliding_window_cmn(x, self.cmn_window, self.min_cmn_window, self.center, self.norm_vars)
