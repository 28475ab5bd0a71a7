"""STFT- and mel-based audio transforms, masking, and the elementwise transforms.

The kernels are in :mod:`headrace._audio.spectral`, :mod:`headrace._audio.mel` and
:mod:`headrace._audio.resample`; these classes check arguments the way MindSpore words it and
check each input's type and shape at call time. A float64 input gives float64; any other numeric
input (ints, bool, float16, float32) is computed and returned as float32. Complex values are real
arrays with a last axis of 2 (real, imaginary).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from headrace._audio import mel as melk
from headrace._audio import resample as rsk
from headrace._audio import spectral as sk
from headrace._util.checks import INT32_MAX, check_range
from headrace._util.rng import sample_rng
from headrace._util.errors import kernel_error
from headrace.dataset.audio._base import AudioTensorOperation, op_error
from headrace.dataset.audio.utils import (BorderType, MelType, NormMode, NormType, ResampleMethod, ScaleType,
                                          WindowType)
from headrace.dataset.transforms._base import returns_contiguous
from headrace.dataset.transforms._cast import type_name
from headrace.dataset.transforms._checks import (check_float32, check_non_negative_float32, check_pos_float32,
                                                 type_check)

__all__ = ["AmplitudeToDB", "Angle", "ComplexNorm", "ComputeDeltas", "DBToAmplitude", "FrequencyMasking",
           "GriffinLim", "InverseMelScale", "InverseSpectrogram", "LFCC", "MFCC", "Magphase", "MaskAlongAxis",
           "MaskAlongAxisIID", "MelScale", "MelSpectrogram", "PhaseVocoder", "PitchShift", "Resample",
           "SlidingWindowCmn", "SpectralCentroid", "Spectrogram", "TimeMasking", "TimeStretch"]

_FREQ_TIME = "<..., freq, time>"


_COMPLEX = "<..., complex=2>"


# ---- argument checks (MindSpore's order and words) ----

def _pos_int(value: Any, name: str) -> None:
    type_check(value, (int,), name)
    check_range(value, (1, INT32_MAX), name)


def _nonneg_int(value: Any, name: str) -> None:
    type_check(value, (int,), name)
    check_range(value, (0, INT32_MAX), name)


def _win_not_over(win_length: int, n_fft: int) -> None:
    if win_length > n_fft:
        raise ValueError(f"Input win_length should be no more than n_fft, but got win_length: {win_length} "
                         f"and n_fft: {n_fft}.")


def _mel_freqs(f_min: Any, f_max: Any, sample_rate: int) -> None:
    type_check(f_min, (int, float), "f_min")
    check_float32(f_min, "f_min")
    if f_max is not None:
        type_check(f_max, (int, float), "f_max")
        check_pos_float32(f_max, "f_max")
        if f_min >= f_max:
            raise ValueError("MelScale: f_max should be greater than f_min.")
    elif f_min >= sample_rate // 2:
        raise ValueError("MelScale: sample_rate // 2 should be greater than f_min when f_max is set to None.")


def _power(power: Any) -> None:
    type_check(power, (int, float), "power")
    check_non_negative_float32(power, "power")


# ---- input checks ----

def _numeric(x: np.ndarray, op: str, rank: int = 1, layout: str = "<..., time>") -> np.ndarray:
    """``x`` as float32 (float64 stays), after MindSpore's type and rank checks."""
    if x.dtype.kind not in "biuf":
        raise op_error(op, "the data type of input tensor does not match the requirement of operator. "
                           f"Expecting tensor in type of [int, float, double]. But got type {type_name(x.dtype)}.")
    if x.ndim < rank:
        raise op_error(op, "the shape of input tensor does not match the requirement of operator. Expecting "
                           f"tensor in shape of {layout}. But got tensor with dimension {x.ndim}.")
    return x.astype(sk.work_dtype(x), copy=False)


def _complex_in(x: np.ndarray, op: str) -> np.ndarray:
    x = _numeric(x, op, 1, _COMPLEX)
    if x.shape[-1] != 2:
        raise op_error(op, "the shape of input tensor does not match the requirement of operator. "
                           f"Expecting tensor in shape of {_COMPLEX}.")
    return x


def _signal(x: np.ndarray, op: str) -> np.ndarray:
    if x.dtype.kind not in "biuf":
        raise op_error(op, f"input tensor type should be int, float or double, but got: {type_name(x.dtype)}")
    if x.ndim < 1:
        raise op_error(op, "input tensor is not in shape of <..., time>.")
    return x.astype(sk.work_dtype(x), copy=False)


class _OwnRankError(AudioTensorOperation):
    """An op whose refusal of a 0-d input MindSpore words its own way (``_rank_error``)."""

    _rank_error = ""

    @returns_contiguous  # AudioTensorOperation.__call__ makes the array contiguous
    def __call__(self, *args: Any) -> Any:
        if len(args) == 1 and isinstance(args[0], np.ndarray) and args[0].ndim == 0:
            raise kernel_error(self._rank_error)
        return AudioTensorOperation.__call__(self, *args)


class _Stft:
    """The STFT settings Spectrogram, MelSpectrogram, MFCC, LFCC and SpectralCentroid share."""

    def __init__(self, op: str, n_fft: int, win_length: int, hop_length: int, pad: int, window: WindowType,
                 normalized: bool, center: bool, pad_mode: BorderType, onesided: bool, strict_reflect: bool):
        self.op, self.n_fft, self.win_length, self.hop_length, self.pad = op, n_fft, win_length, hop_length, pad
        self.window, self.normalized, self.center = window.value, normalized, center
        self.pad_mode, self.onesided, self.strict_reflect = pad_mode.value, onesided, strict_reflect

    def __call__(self, x: np.ndarray) -> np.ndarray:
        n = x.shape[-1] + 2 * self.pad
        if self.center and self.strict_reflect and self.pad_mode == "reflect" and self.n_fft // 2 >= n:
            raise op_error(self.op, "Padding size should be less than the corresponding input dimension.")
        if not self.center and n < self.n_fft:
            raise op_error(self.op, f"n_fft should be more than 0 and less than {n}, but got n_fft: {self.n_fft}.")
        if self.center and n + 2 * (self.n_fft // 2) < self.n_fft:
            raise op_error(self.op, f"n_fft should be more than 0 and less than {n}, but got n_fft: {self.n_fft}.")
        return sk.stft(x, self.n_fft, self.hop_length, self.win_length, self.window, pad=self.pad,
                       center=self.center, pad_mode=self.pad_mode, onesided=self.onesided,
                       normalized=self.normalized)


def _power_out(spec: np.ndarray, power: float, dtype: np.dtype) -> np.ndarray:
    if power == 0:
        return sk.as_pairs(spec, dtype)
    return sk.power_spectrum(spec, power).astype(dtype, copy=False)


# ---- spectrograms ----

class Spectrogram(_OwnRankError):
    """Power spectrogram of a signal (..., time) -> (..., freq, frames).

    Args:
        n_fft (int, optional): FFT size; ``n_fft // 2 + 1`` bins when onesided. Default: 400.
        win_length (int, optional): window size, at most n_fft (zero-padded to it). Default: None (n_fft).
        hop_length (int, optional): samples between frames. Default: None (win_length // 2).
        pad (int, optional): zeros added on both sides first. Default: 0.
        window (WindowType, optional): window function. Default: WindowType.HANN.
        power (float, optional): exponent of the magnitude; 0 gives the complex STFT (last axis 2).
            Default: 2.0.
        normalized (bool, optional): divide by the window's L2 norm. Default: False.
        center (bool, optional): pad ``n_fft // 2`` on both sides so frames are centred. Default: True.
        pad_mode (BorderType, optional): padding used by ``center``. Default: BorderType.REFLECT.
        onesided (bool, optional): keep only the non-negative frequencies. Default: True.

    Raises:
        TypeError / ValueError: an argument of the wrong type or out of range.
        RuntimeError: the input is not numeric, is a scalar, or is too short for one frame.

    Examples:
        >>> Spectrogram(n_fft=4, center=False)(np.array([1.0, 1.0, 1.0, 1.0], np.float32)).tolist()
        [[4.0], [1.0], [0.0]]
    """

    _rank_error = "Spectrogram: input tensor is not in shape of <..., time>."

    def __init__(self, n_fft=400, win_length=None, hop_length=None, pad=0, window=WindowType.HANN, power=2.0,
                 normalized=False, center=True, pad_mode=BorderType.REFLECT, onesided=True):
        _pos_int(n_fft, "n_fft")
        if win_length is not None:
            _pos_int(win_length, "win_length")
            _win_not_over(win_length, n_fft)
        if hop_length is not None:
            _pos_int(hop_length, "hop_length")
        _nonneg_int(pad, "pad")
        type_check(window, (WindowType,), "window")
        _power(power)
        type_check(normalized, (bool,), "normalized")
        type_check(center, (bool,), "center")
        type_check(onesided, (bool,), "onesided")
        type_check(pad_mode, (BorderType,), "pad_mode")
        self.n_fft = n_fft
        self.win_length = win_length if win_length else n_fft
        self.hop_length = hop_length if hop_length else self.win_length // 2
        self.pad, self.window, self.power, self.normalized = pad, window, power, normalized
        self.center, self.pad_mode, self.onesided = center, pad_mode, onesided
        self._stft = _Stft("Spectrogram", n_fft, self.win_length, self.hop_length, pad, window, normalized,
                           center, pad_mode, onesided, strict_reflect=False)

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _signal(x, "Spectrogram")
        return _power_out(self._stft(x), self.power, x.dtype)


class MelSpectrogram(AudioTensorOperation):
    """Mel-scale spectrogram: the power spectrogram through a mel filter bank, (..., time) ->
    (..., n_mels, frames).

    Args:
        sample_rate (int, optional): sample rate in Hz. Default: 16000.
        n_fft (int, optional): FFT size. Default: 400.
        win_length (int, optional): window size. Default: None (n_fft).
        hop_length (int, optional): samples between frames. Default: None (win_length // 2).
        f_min (float, optional): lowest frequency. Default: 0.0.
        f_max (float, optional): highest frequency. Default: None (sample_rate // 2).
        pad (int, optional): zeros added on both sides. Default: 0.
        n_mels (int, optional): number of mel filters. Default: 128.
        window (WindowType, optional): Default: WindowType.HANN.
        power (float, optional): exponent of the magnitude, > 0. Default: 2.0.
        normalized (bool, optional): Default: False.
        center (bool, optional): Default: True.
        pad_mode (BorderType, optional): Default: BorderType.REFLECT.
        onesided (bool, optional): Default: True.
        norm (NormType, optional): SLANEY scales each filter to unit area. Default: NormType.NONE.
        mel_scale (MelType, optional): Default: MelType.HTK.

    Examples:
        >>> MelSpectrogram(n_fft=16, n_mels=4)(np.zeros(32, np.float32)).shape
        (4, 5)
    """

    def __init__(self, sample_rate=16000, n_fft=400, win_length=None, hop_length=None, f_min=0.0, f_max=None,
                 pad=0, n_mels=128, window=WindowType.HANN, power=2.0, normalized=False, center=True,
                 pad_mode=BorderType.REFLECT, onesided=True, norm=NormType.NONE, mel_scale=MelType.HTK):
        _nonneg_int(sample_rate, "sample_rate")
        _pos_int(n_fft, "n_fft")
        _nonneg_int(n_mels, "n_mels")
        type_check(f_min, (float,), "f_min")
        if f_max is not None:
            check_non_negative_float32(f_max, "f_max")
            if f_min > f_max:
                raise ValueError(f"f_max should be greater than or equal to f_min, but got f_min: {f_min} and "
                                 f"f_max: {f_max}.")
        elif f_min >= sample_rate // 2:
            raise ValueError("MelSpectrogram: sample_rate // 2 should be greater than f_min when f_max is set to "
                             f"None, but got f_min: {f_min}.")
        type_check(norm, (NormType,), "norm")
        type_check(mel_scale, (MelType,), "mel_type")
        check_pos_float32(power, "power")
        type_check(window, (WindowType,), "window")
        type_check(normalized, (bool,), "normalized")
        type_check(center, (bool,), "center")
        type_check(pad_mode, (BorderType,), "pad_mode")
        type_check(onesided, (bool,), "onesided")
        _nonneg_int(pad, "pad")
        if hop_length is not None:
            _pos_int(hop_length, "hop_length")
        if win_length is not None:
            _pos_int(win_length, "win_length")
            _win_not_over(win_length, n_fft)
        self.sample_rate, self.n_fft = sample_rate, n_fft
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.f_min = f_min
        self.f_max = f_max if f_max is not None else sample_rate // 2
        self.pad, self.n_mels, self.window, self.power = pad, n_mels, window, power
        self.normalized, self.center, self.pad_mode, self.onesided = normalized, center, pad_mode, onesided
        self.norm, self.mel_scale = norm, mel_scale
        self._stft = _Stft("MelSpectrogram", n_fft, self.win_length, self.hop_length, pad, window, normalized,
                           center, pad_mode, onesided, strict_reflect=True)
        n_freqs = n_fft // 2 + 1 if onesided else n_fft
        fb = melk.melscale_fbanks(n_freqs, float(self.f_min), float(self.f_max), n_mels, sample_rate,
                                  norm == NormType.SLANEY, mel_scale == MelType.SLANEY)
        self._fbt32 = np.ascontiguousarray(fb.T, np.float32)
        self._fbt64 = np.ascontiguousarray(fb.T)

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _signal(x, "MelSpectrogram")
        p = sk.power_spectrum(self._stft(x), self.power)
        fbt = self._fbt64 if x.dtype == np.float64 else self._fbt32
        return np.matmul(fbt, p.astype(x.dtype, copy=False))


def _to_db(x: np.ndarray, power_scale: bool, top_db: float | None = 80.0) -> np.ndarray:
    return sk.amplitude_to_db(x, 10.0 if power_scale else 20.0, 1e-10, 0.0, top_db)


class MFCC(AudioTensorOperation):
    """Mel-frequency cepstral coefficients: MelSpectrogram, then decibels (or ``log(x + 1e-6)``
    with ``log_mels``), then a DCT-II over the mel axis: (..., time) -> (..., n_mfcc, frames).

    Args:
        sample_rate (int, optional): Default: 16000.
        n_mfcc (int, optional): coefficients kept, at most n_mels. Default: 40.
        dct_type (int, optional): only 2. Default: 2.
        norm (NormMode, optional): DCT normalisation. Default: NormMode.ORTHO.
        log_mels (bool, optional): log of the mels instead of decibels. Default: False.
        melkwargs (dict, optional): MelSpectrogram's arguments. Default: None.

    Examples:
        >>> MFCC(n_mfcc=4, melkwargs={"n_fft": 16, "n_mels": 8})(np.ones(32, np.float32)).shape
        (4, 5)
    """

    def __init__(self, sample_rate=16000, n_mfcc=40, dct_type=2, norm=NormMode.ORTHO, log_mels=False,
                 melkwargs=None):
        _nonneg_int(sample_rate, "sample_rate")
        type_check(log_mels, (bool,), "log_mels")
        type_check(norm, (NormMode,), "norm")
        _nonneg_int(n_mfcc, "n_mfcc")
        if dct_type != 2:
            raise ValueError(f"Input dct_type must be 2, but got : {dct_type}.")
        kw = dict(n_fft=400, f_min=0.0, f_max=sample_rate // 2, pad=0, n_mels=128, window=WindowType.HANN,
                  power=2.0, normalized=False, center=True, pad_mode=BorderType.REFLECT, onesided=True,
                  norm=NormType.NONE, mel_scale=MelType.HTK)
        if melkwargs is not None:
            type_check(melkwargs, (dict,), "melkwargs")
            kw.update(melkwargs)
        if "win_length" not in kw:
            kw["win_length"] = kw["n_fft"]
        if "hop_length" not in kw:
            kw["hop_length"] = kw["win_length"] // 2 if isinstance(kw["win_length"], int) else None
        _pos_int(kw["n_fft"], "n_fft")
        _pos_int(kw["n_mels"], "n_mels")
        _mel_freqs(kw["f_min"], kw["f_max"], sample_rate)
        type_check(kw["norm"], (NormType,), "norm")
        type_check(kw["mel_scale"], (MelType,), "mel_type")
        _power(kw["power"])
        for key, types in (("window", WindowType), ("normalized", bool), ("center", bool),
                           ("pad_mode", BorderType), ("onesided", bool)):
            type_check(kw[key], (types,), key)
        _nonneg_int(kw["pad"], "pad")
        if kw["hop_length"] is not None:
            _pos_int(kw["hop_length"], "hop_length")
        if kw["win_length"] is not None:
            _nonneg_int(kw["win_length"], "win_length")
        if kw["n_mels"] < n_mfcc:
            raise ValueError(f"Input n_mels should be greater than or equal to n_mfcc, but got n_mfcc: {n_mfcc} "
                             f"and n_mels: {kw['n_mels']}.")
        self.sample_rate, self.n_mfcc, self.dct_type, self.norm, self.log_mels = (
            sample_rate, n_mfcc, dct_type, norm, log_mels)
        self.melkwargs = kw
        self._mel: MelSpectrogram | None = None  # built on first use (MindSpore checks the rest at run time)
        self._dct = melk.create_dct(n_mfcc, kw["n_mels"], norm == NormMode.ORTHO)
        self._power_scale = kw["power"] == 2.0

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _signal(x, "MFCC").astype(np.float32, copy=False)
        if self._mel is None:
            try:
                self._mel = MelSpectrogram(sample_rate=self.sample_rate,
                                           **{k: (float(v) if k == "f_min" else v) for k, v in self.melkwargs.items()})
            except ValueError as e:
                raise op_error("MFCC", str(e)) from None
        mel = self._mel._run(x)
        if self.log_mels:
            mel = np.log(mel + mel.dtype.type(1e-6))
        else:
            mel = _to_db(mel, True)
        out = np.matmul(np.swapaxes(mel, -1, -2), self._dct.astype(mel.dtype))
        return np.swapaxes(out, -1, -2)


class LFCC(_OwnRankError):
    """Linear-frequency cepstral coefficients: Spectrogram, a linear triangular filter bank,
    decibels (or ``log(x + 1e-6)`` with ``log_lf``), then a DCT-II: (..., time) -> (..., n_lfcc, frames).

    Args:
        sample_rate (int, optional): Default: 16000.
        n_filter (int, optional): number of linear filters. Default: 128.
        n_lfcc (int, optional): coefficients kept. Default: 40.
        f_min (float, optional): Default: 0.0.
        f_max (float, optional): Default: None (sample_rate // 2).
        dct_type (int, optional): only 2. Default: 2.
        norm (NormMode, optional): Default: NormMode.ORTHO.
        log_lf (bool, optional): Default: False.
        speckwargs (dict, optional): Spectrogram's arguments. Default: None.

    Examples:
        >>> LFCC(n_filter=8, n_lfcc=4, speckwargs={"n_fft": 16})(np.ones(32, np.float32)).shape
        (4, 5)
    """

    _rank_error = Spectrogram._rank_error

    def __init__(self, sample_rate=16000, n_filter=128, n_lfcc=40, f_min=0.0, f_max=None, dct_type=2,
                 norm=NormMode.ORTHO, log_lf=False, speckwargs=None):
        _nonneg_int(sample_rate, "sample_rate")
        _pos_int(n_filter, "n_filter")
        _pos_int(n_lfcc, "n_lfcc")
        type_check(log_lf, (bool,), "log_lf")
        type_check(norm, (NormMode,), "norm")
        type_check(f_min, (int, float), "f_min")
        check_non_negative_float32(f_min, "f_min")
        if f_max is not None:
            type_check(f_max, (int, float), "f_max")
            check_non_negative_float32(f_max, "f_max")
            if f_min > f_max:
                raise ValueError(f"f_max should be greater than or equal to f_min, but got f_min: {f_min} and "
                                 f"f_max: {f_max}.")
        elif f_min >= sample_rate // 2:
            raise ValueError("Input sample_rate // 2 should be greater than f_min when f_max is set to None, but "
                             f"got f_min: {f_min} and sample_rate: {sample_rate}.")
        if dct_type != 2:
            raise ValueError(f"Input dct_type must be 2, but got : {dct_type}.")
        kw: dict = dict(n_fft=400, pad=0, window=WindowType.HANN, power=2.0, normalized=False, center=True,
                        pad_mode=BorderType.REFLECT, onesided=True)
        if speckwargs is not None:
            type_check(speckwargs, (dict,), "speckwargs")
            kw.update(speckwargs)
        kw.setdefault("win_length", kw["n_fft"])
        kw.setdefault("hop_length", kw["win_length"] // 2)
        if speckwargs is not None:
            type_check(kw["window"], (WindowType,), "window")
            type_check(kw["pad_mode"], (BorderType,), "pad_mode")
            _nonneg_int(kw["pad"], "pad")
            type_check(kw["power"], (float,), "power")
            check_non_negative_float32(kw["power"], "power")
            if kw["n_fft"] < n_lfcc:
                raise ValueError(f"n_fft should be greater than or equal to n_lfcc, but got n_fft: {kw['n_fft']} "
                                 f"and n_lfcc: {n_lfcc}.")
            if kw["win_length"] > kw["n_fft"]:
                raise ValueError("win_length must be less than or equal to n_fft, but got win_length: "
                                 f"{kw['win_length']} and n_fft: {kw['n_fft']}.")
        self.sample_rate, self.n_filter, self.n_lfcc, self.f_min = sample_rate, n_filter, n_lfcc, f_min
        self.f_max = f_max if f_max is not None else sample_rate // 2
        self.dct_type, self.norm, self.log_lf, self.speckwargs = dct_type, norm, log_lf, kw
        self._spec = Spectrogram(**kw)
        n_freqs = kw["n_fft"] // 2 + 1 if kw["onesided"] else kw["n_fft"]
        self._fbt = melk.linear_fbanks(n_freqs, float(f_min), float(self.f_max), n_filter, sample_rate).T
        self._dct = melk.create_dct(n_lfcc, n_filter, norm == NormMode.ORTHO)

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _signal(x, "LFCC").astype(np.float32, copy=False)
        spec = self._spec._run(x)
        lf = np.matmul(self._fbt.astype(spec.dtype), spec)
        lf = np.log(lf + lf.dtype.type(1e-6)) if self.log_lf else _to_db(lf, True)
        out = np.matmul(np.swapaxes(lf, -1, -2), self._dct.astype(lf.dtype))
        return np.swapaxes(out, -1, -2)


class SpectralCentroid(AudioTensorOperation):
    """Centroid of each frame's magnitude spectrum in Hz: (..., time) -> (..., 1, frames).

    Args:
        sample_rate (int): sample rate in Hz.
        n_fft (int, optional): Default: 400.
        win_length (int, optional): Default: None (n_fft).
        hop_length (int, optional): Default: None (win_length // 2).
        pad (int, optional): Default: 0.
        window (WindowType, optional): Default: WindowType.HANN.

    Examples:
        >>> SpectralCentroid(8000, n_fft=8)(np.ones(16, np.float32)).shape
        (1, 5)
    """

    def __init__(self, sample_rate, n_fft=400, win_length=None, hop_length=None, pad=0, window=WindowType.HANN):
        _nonneg_int(sample_rate, "sample_rate")
        _nonneg_int(pad, "pad")
        type_check(window, (WindowType,), "window")
        _pos_int(n_fft, "n_fft")
        if win_length is not None:
            _pos_int(win_length, "win_length")
            _win_not_over(win_length, n_fft)
        if hop_length is not None:
            _pos_int(hop_length, "hop_length")
        self.sample_rate, self.pad, self.window, self.n_fft = sample_rate, pad, window, n_fft
        self.win_length = win_length if win_length else n_fft
        self.hop_length = hop_length if hop_length else self.win_length // 2
        self._stft = _Stft("SpectralCentroid", n_fft, self.win_length, self.hop_length, pad, window, False, True,
                           BorderType.REFLECT, True, strict_reflect=False)

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _numeric(x, "SpectralCentroid")
        return sk.spectral_centroid(np.abs(self._stft(x)), self.sample_rate, self.n_fft).astype(x.dtype)


# ---- decibels and complex values ----

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
        [[-1.0], [1.0]]
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


# ---- masking ----

def _mask(x: np.ndarray, op: str, start: int, width: int, value: float, axis: int) -> np.ndarray:
    """``x`` with ``width`` entries from ``start`` along ``axis`` (-1 time, -2 freq) set to ``value``."""
    n = x.shape[axis]
    if start > n:  # (MindSpore's words say 'less than', its test is 'no more than')
        raise op_error("MaskAlongAxis", "invalid parameter, 'mask_start' should be less than the length of the "
                                        f"masked dimension, but got: 'mask_start' {start} and length {n}")
    if start + width > n:
        raise op_error("MaskAlongAxis", "invalid parameter, the sum of 'mask_start' and 'mask_width' should be no "
                                        f"more than the length of the masked dimension, but got: 'mask_start' "
                                        f"{start}, 'mask_width' {width} and length {n}")
    out = x.copy()
    if width > 0:
        if axis == -1:
            out[..., start:start + width] = value
        else:
            out[..., start:start + width, :] = value
    return out


def _iid_masks(x: np.ndarray, param: int, value: float, axis: int) -> np.ndarray:
    """Each (freq, time) matrix of ``x`` masked along ``axis`` over a random band: width uniform in
    [0, param), start uniform over the rest (drawn from the sample's keyed generator)."""
    out = x.copy()
    n = x.shape[axis]
    flat = out.reshape((-1,) + x.shape[-2:])
    rng = sample_rng()
    for m in flat:
        width = int(rng.random() * param)
        start = int(rng.random() * (n - width))
        if axis == -1:
            m[:, start:start + width] = value
        else:
            m[start:start + width, :] = value
    return out


def _check_masking(iid_masks: Any, param: Any, mask_start: Any, mask_value: Any) -> None:
    type_check(iid_masks, (bool,), "iid_masks")
    type_check(param, (int,), "mask_param")
    check_non_negative_float32(param, "mask_param")
    type_check(mask_start, (int,), "mask_start")
    check_non_negative_float32(mask_start, "mask_start")
    type_check(mask_value, (int, float), "mask_value")
    check_non_negative_float32(mask_value, "mask_value")


class TimeMasking(AudioTensorOperation):
    """Masks consecutive time steps of a spectrogram (..., freq, time) with ``mask_value``.

    With ``iid_masks`` False the mask covers ``[mask_start, mask_start + time_mask_param)``; with
    True each (freq, time) matrix gets its own random band of width below ``time_mask_param``.

    Args:
        iid_masks (bool, optional): random masks. Default: False.
        time_mask_param (int, optional): mask width (its upper bound when random). Default: 0.
        mask_start (int, optional): first masked step when not random. Default: 0.
        mask_value (float, optional): Default: 0.0.

    Examples:
        >>> TimeMasking(time_mask_param=1, mask_start=1)(np.ones((1, 3), np.float32)).tolist()
        [[1.0, 0.0, 1.0]]
    """

    _axis, _name, _label, _dim = -1, "TimeMasking", "time_mask_param", "time"
    random = True

    def __init__(self, iid_masks=False, time_mask_param=0, mask_start=0, mask_value=0.0):
        _check_masking(iid_masks, time_mask_param, mask_start, mask_value)
        self.iid_masks, self.time_mask_param = iid_masks, time_mask_param
        self.mask_start, self.mask_value = mask_start, mask_value
        self.random = iid_masks

    def _param(self) -> int:
        return self.time_mask_param

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _numeric(x, self._name, 2, _FREQ_TIME)
        param = self._param()
        n = x.shape[self._axis]
        if param > n:
            raise op_error(self._name, f"invalid parameter, '{self._label}' should be less than or equal to the "
                                       f"length of {self._dim} dimension, but got: 'frequency_mask_param' {param} "
                                       f"and length {n}")
        if self.iid_masks:
            return _iid_masks(x, param, self.mask_value, self._axis)
        return _mask(x, self._name, self.mask_start, param, self.mask_value, self._axis)


class FrequencyMasking(TimeMasking):
    """Masks consecutive frequency bins of a spectrogram (..., freq, time) with ``mask_value``.

    With ``iid_masks`` False the mask covers ``[mask_start, mask_start + freq_mask_param)``; with
    True each (freq, time) matrix gets its own random band of width below ``freq_mask_param``.

    Args:
        iid_masks (bool, optional): random masks. Default: False.
        freq_mask_param (int, optional): mask width (its upper bound when random). Default: 0.
        mask_start (int, optional): first masked bin when not random. Default: 0.
        mask_value (float, optional): Default: 0.0.

    Examples:
        >>> FrequencyMasking(freq_mask_param=1, mask_start=1)(np.ones((3, 1), np.float32)).tolist()
        [[1.0], [0.0], [1.0]]
    """

    _axis, _name, _label, _dim = -2, "FrequencyMasking", "frequency_mask_param", "frequency"

    def __init__(self, iid_masks=False, freq_mask_param=0, mask_start=0, mask_value=0.0):  # noqa: D107
        _check_masking(iid_masks, freq_mask_param, mask_start, mask_value)
        self.iid_masks, self.freq_mask_param = iid_masks, freq_mask_param
        self.mask_start, self.mask_value = mask_start, mask_value
        self.random = iid_masks

    def _param(self) -> int:
        return self.freq_mask_param


class MaskAlongAxis(AudioTensorOperation):
    """Sets ``mask_width`` entries from ``mask_start`` along ``axis`` (1: frequency, 2: time) of a
    spectrogram (..., freq, time) to ``mask_value``.

    Examples:
        >>> MaskAlongAxis(0, 1, 5.0, 2)(np.zeros((1, 2), np.float32)).tolist()
        [[5.0, 0.0]]
    """

    def __init__(self, mask_start, mask_width, mask_value, axis):
        type_check(mask_start, (int,), "mask_start")
        type_check(mask_width, (int,), "mask_width")
        type_check(mask_value, (int, float), "mask_value")
        type_check(axis, (int,), "axis")
        _nonneg_int(mask_start, "mask_start")
        _pos_int(mask_width, "mask_width")
        check_float32(mask_value, "mask_value")
        check_range(axis, (1, 2), "axis")
        self.mask_start, self.mask_width, self.mask_value, self.axis = mask_start, mask_width, mask_value, axis

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _numeric(x, "MaskAlongAxis", 2, _FREQ_TIME)
        return _mask(x, "MaskAlongAxis", self.mask_start, self.mask_width, self.mask_value,
                     -1 if self.axis == 2 else -2)


class MaskAlongAxisIID(AudioTensorOperation):
    """Masks a random band along ``axis`` (1: frequency, 2: time) of each (freq, time) matrix: width
    uniform in [0, mask_param), start uniform over the rest, from the sample's keyed generator.

    Examples:
        >>> MaskAlongAxisIID(0, 5.0, 2)(np.zeros((1, 2), np.float32)).tolist()
        [[0.0, 0.0]]
    """

    random = True

    def __init__(self, mask_param, mask_value, axis):
        _nonneg_int(mask_param, "mask_param")
        type_check(mask_value, (int, float), "mask_value")
        check_float32(mask_value, "mask_value")
        type_check(axis, (int,), "axis")
        check_range(axis, (1, 2), "axis")
        self.mask_param, self.mask_value, self.axis = mask_param, mask_value, axis

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _numeric(x, "MaskAlongAxisIID", 2, _FREQ_TIME)
        axis = -1 if self.axis == 2 else -2
        if self.mask_param > x.shape[axis]:
            dim = "time" if axis == -1 else "frequency"
            raise op_error("MaskAlongAxisIID", f"mask_param should be less than or equal to the length of {dim} "
                                               "dimension.")
        return _iid_masks(x, self.mask_param, self.mask_value, axis)


# ---- mel scale ----

class MelScale(AudioTensorOperation):
    """A linear spectrogram (..., n_stft, time) through a mel filter bank -> (..., n_mels, time).

    Args:
        n_mels (int, optional): Default: 128.
        sample_rate (int, optional): Default: 16000.
        f_min (float, optional): Default: 0.0.
        f_max (float, optional): Default: None (sample_rate // 2).
        n_stft (int, optional): frequency bins of the input. Default: 201.
        norm (NormType, optional): Default: NormType.NONE.
        mel_type (MelType, optional): Default: MelType.HTK.

    Examples:
        >>> MelScale(n_mels=2, n_stft=5)(np.ones((5, 1), np.float32)).shape
        (2, 1)
    """

    def __init__(self, n_mels=128, sample_rate=16000, f_min=0.0, f_max=None, n_stft=201, norm=NormType.NONE,
                 mel_type=MelType.HTK):
        _pos_int(n_mels, "n_mels")
        _pos_int(sample_rate, "sample_rate")
        _mel_freqs(f_min, f_max, sample_rate)
        _pos_int(n_stft, "n_stft")
        type_check(norm, (NormType,), "norm")
        type_check(mel_type, (MelType,), "mel_type")
        self.n_mels, self.sample_rate, self.f_min = n_mels, sample_rate, f_min
        self.f_max = f_max if f_max is not None else sample_rate // 2
        self.n_stft, self.norm, self.mel_type = n_stft, norm, mel_type
        self._fb = melk.melscale_fbanks(n_stft, float(f_min), float(self.f_max), n_mels, sample_rate,
                                        norm == NormType.SLANEY, mel_type == MelType.SLANEY)

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _numeric(x, "MelScale", 2, _FREQ_TIME)
        if x.shape[-2] != self.n_stft:
            raise op_error("MelScale", f"invalid parameter, 'n_stft' should be equal to 'freq', but got: n_stft "
                                       f"{self.n_stft} while freq {x.shape[-2]}.")
        return np.matmul(self._fb.T.astype(x.dtype), x)


class InverseMelScale(AudioTensorOperation):
    """A linear spectrogram (..., n_stft, time) from a mel spectrogram (..., n_mels, time), solved
    by SGD with momentum from a random non-negative start (the sample's keyed generator).

    Args:
        n_stft (int): frequency bins of the output.
        n_mels (int, optional): Default: 128.
        sample_rate (int, optional): Default: 16000.
        f_min (float, optional): Default: 0.0.
        f_max (float, optional): Default: None (sample_rate // 2).
        max_iter (int, optional): most SGD steps. Default: 100000.
        tolerance_loss (float, optional): stop when the loss is below it. Default: 1e-5.
        tolerance_change (float, optional): stop when the loss changes less. Default: 1e-8.
        sgdargs (dict, optional): ``{"sgd_lr": 0.1, "sgd_momentum": 0.9}`` by default.
        norm (NormType, optional): Default: NormType.NONE.
        mel_type (MelType, optional): Default: MelType.HTK.

    Examples:
        >>> InverseMelScale(5, n_mels=2, max_iter=10)(np.ones((2, 1), np.float32)).shape
        (5, 1)
    """

    random = True

    def __init__(self, n_stft, n_mels=128, sample_rate=16000, f_min=0.0, f_max=None, max_iter=100000,
                 tolerance_loss=1e-5, tolerance_change=1e-8, sgdargs=None, norm=NormType.NONE,
                 mel_type=MelType.HTK):
        _pos_int(n_mels, "n_mels")
        _pos_int(sample_rate, "sample_rate")
        _mel_freqs(f_min, f_max, sample_rate)
        _pos_int(n_stft, "n_stft")
        type_check(norm, (NormType,), "norm")
        type_check(mel_type, (MelType,), "mel_type")
        _pos_int(max_iter, "max_iter")
        type_check(tolerance_loss, (int, float), "tolerance_loss")
        check_pos_float32(tolerance_loss, "tolerance_loss")
        type_check(tolerance_change, (int, float), "tolerance_change")
        check_pos_float32(tolerance_change, "tolerance_change")
        if sgdargs is not None:
            for key in ("sgd_lr", "sgd_momentum"):
                type_check(sgdargs[key], (int, float), key)
                check_non_negative_float32(sgdargs[key], key)
        self.n_stft, self.n_mels, self.sample_rate, self.f_min = n_stft, n_mels, sample_rate, f_min
        self.f_max = f_max if f_max is not None else sample_rate // 2
        self.max_iter, self.tolerance_loss, self.tolerance_change = max_iter, tolerance_loss, tolerance_change
        self.sgdargs = sgdargs if sgdargs is not None else {"sgd_lr": 0.1, "sgd_momentum": 0.9}
        self.norm, self.mel_type = norm, mel_type
        self._fb = melk.melscale_fbanks(n_stft, float(f_min), float(self.f_max), n_mels, sample_rate,
                                        norm == NormType.SLANEY, mel_type == MelType.SLANEY)

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _numeric(x, "InverseMelScale", 2, _FREQ_TIME)
        if x.shape[-2] != self.n_mels:
            raise op_error("InverseMelScale", f"n_mels of input should be {self.n_mels}, but got {x.shape[-2]}.")
        start = sample_rng().random(x.shape[:-2] + (self.n_stft, x.shape[-1]))
        out = melk.inverse_mel(x.astype(np.float64), self._fb, self.max_iter, self.tolerance_loss,
                               self.tolerance_change, float(self.sgdargs["sgd_lr"]),
                               float(self.sgdargs["sgd_momentum"]), start)
        return out.astype(x.dtype)


# ---- inversion, phase vocoder, resampling ----

class InverseSpectrogram(AudioTensorOperation):
    """The waveform of a complex STFT (..., freq, time, 2) by inverse FFT and overlap-add.

    Args:
        length (int, optional): output length. Default: None (from the frames).
        n_fft (int, optional): Default: 400.
        win_length (int, optional): Default: None (n_fft).
        hop_length (int, optional): Default: None (win_length // 2).
        pad (int, optional): zeros the forward transform added on both sides. Default: 0.
        window (WindowType, optional): Default: WindowType.HANN.
        normalized (bool, optional): Default: False.
        center (bool, optional): Default: True.
        pad_mode (BorderType, optional): Default: BorderType.REFLECT.
        onesided (bool, optional): Default: True.

    Examples:
        >>> x = np.ones(16, np.float32)
        >>> spec = Spectrogram(n_fft=8, power=0.0)(x)
        >>> np.allclose(InverseSpectrogram(length=16, n_fft=8)(spec), x, atol=1e-5)
        True
    """

    def __init__(self, length=None, n_fft=400, win_length=None, hop_length=None, pad=0, window=WindowType.HANN,
                 normalized=False, center=True, pad_mode=BorderType.REFLECT, onesided=True):
        if length is not None:
            _nonneg_int(length, "length")
        _pos_int(n_fft, "n_fft")
        type_check(window, (WindowType,), "window")
        type_check(normalized, (bool,), "normalized")
        type_check(center, (bool,), "center")
        type_check(pad_mode, (BorderType,), "pad_mode")
        type_check(onesided, (bool,), "onesided")
        _nonneg_int(pad, "pad")
        if hop_length is not None:
            _pos_int(hop_length, "hop_length")
        if win_length is not None:
            _pos_int(win_length, "win_length")
            _win_not_over(win_length, n_fft)
        self.length, self.n_fft = length, n_fft
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.pad, self.window, self.normalized, self.center = pad, window, normalized, center
        self.pad_mode, self.onesided = pad_mode, onesided

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _complex_spec(x, "InverseSpectrogram", "<..., freq, time, complex=2>")
        try:
            return sk.istft(sk.as_complex(x), self.n_fft, self.hop_length, self.win_length, self.window.value,
                            center=self.center, onesided=self.onesided, normalized=self.normalized,
                            length=self.length or None, pad=self.pad).astype(x.dtype)
        except ValueError as e:
            raise op_error("InverseSpectrogram", str(e)) from None


class GriffinLim(AudioTensorOperation):
    """A waveform whose STFT magnitude approximates a spectrogram (..., freq, time), by the fast
    Griffin-Lim algorithm; the starting phases are random (the sample's keyed generator) with
    ``rand_init``, zero otherwise.

    Args:
        n_fft (int, optional): Default: 400.
        n_iter (int, optional): iterations. Default: 32.
        win_length (int, optional): Default: None (n_fft).
        hop_length (int, optional): Default: None (win_length // 2).
        window_type (WindowType, optional): Default: WindowType.HANN.
        power (float, optional): exponent the spectrogram was raised to. Default: 2.0.
        momentum (float, optional): in [0, 1). Default: 0.99.
        length (int, optional): output length. Default: None.
        rand_init (bool, optional): Default: True.

    Examples:
        >>> GriffinLim(n_fft=8, n_iter=2, rand_init=False)(np.ones((5, 3), np.float32)).shape
        (8,)
    """

    random = True

    def __init__(self, n_fft=400, n_iter=32, win_length=None, hop_length=None, window_type=WindowType.HANN,
                 power=2.0, momentum=0.99, length=None, rand_init=True):
        _pos_int(n_fft, "n_fft")
        _pos_int(n_iter, "n_iter")
        if win_length is not None:
            _nonneg_int(win_length, "win_length")
            _win_not_over(win_length, n_fft)
        if hop_length is not None:
            _nonneg_int(hop_length, "hop_length")
        type_check(window_type, (WindowType,), "window_type")
        type_check(power, (int, float), "power")
        check_pos_float32(power, "power")
        type_check(momentum, (int, float), "momentum")
        check_non_negative_float32(momentum, "momentum")
        if length is not None:
            _nonneg_int(length, "length")
        type_check(rand_init, (bool,), "rand_init")
        if momentum >= 1:  # MindSpore refuses it when the pipeline is built: a RuntimeError, in its words
            raise RuntimeError(f"GriffinLim: momentum equal to or greater than 1 can be unstable, but got: "
                               f"{momentum:.6f}")
        if length and length <= n_fft:
            raise RuntimeError("GriffinLim: n_fft must be less than length.")
        self.n_fft, self.n_iter = n_fft, n_iter
        self.win_length = win_length if win_length else n_fft
        self.hop_length = hop_length if hop_length else self.win_length // 2
        self.window_type, self.power, self.momentum = window_type, power, momentum
        self.length = length if length else 0
        self.rand_init = rand_init
        self.random = rand_init

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _numeric(x, "GriffinLim", 2, _FREQ_TIME)
        n_freq = self.n_fft // 2 + 1
        if x.shape[-2] != n_freq:
            raise op_error("GriffinLim", "the frequency of the input should equal to n_fft / 2 + 1")
        init = None
        if self.rand_init:
            rng = sample_rng()
            def init(shape: tuple[int, ...]) -> np.ndarray:  # noqa: E306
                return rng.random(shape) * (2.0 * math.pi)
        return sk.griffin_lim(x, self.n_fft, self.n_iter, self.win_length, self.hop_length,
                              self.window_type.value, self.power, self.momentum, self.length or None, init)


def _complex_spec(x: np.ndarray, op: str, layout: str = "<..., freq, num_frame, complex=2>") -> np.ndarray:
    x = _numeric(x, op, 0)
    if x.ndim < 3 or x.shape[-1] != 2:
        raise op_error(op, "the shape of input tensor does not match the requirement of operator. Expecting "
                           f"tensor in shape of {layout}.")
    return x


class PhaseVocoder(AudioTensorOperation):
    """Speeds a complex STFT (..., freq, time, 2) up by ``rate`` without changing its pitch.

    Args:
        rate (float): speed-up factor (> 1 shortens).
        phase_advance (numpy.ndarray): expected phase advance per hop, shape (freq, 1).

    Examples:
        >>> PhaseVocoder(2.0, np.zeros((3, 1)))(np.ones((3, 4, 2), np.float32)).shape
        (3, 2, 2)
    """

    def __init__(self, rate, phase_advance):
        type_check(rate, (int, float), "rate")
        check_pos_float32(rate, "rate")
        type_check(phase_advance, (np.ndarray,), "phase_advance")
        self.rate, self.phase_advance = rate, phase_advance

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _complex_spec(x, "PhaseVocoder")
        if self.phase_advance.ndim != 2 or self.phase_advance.shape[1] != 1:
            raise op_error("PhaseVocoder", "invalid parameter, 'phase_advance' should be in shape of <freq, 1>.")
        if self.phase_advance.shape[0] != x.shape[-3]:
            raise op_error("PhaseVocoder", "invalid parameter, 'first dimension of 'phase_advance'' should be equal "
                                           "to 'freq dimension length of input tensor', but got: first dimension of "
                                           f"'phase_advance' {self.phase_advance.shape[0]} while freq dimension "
                                           f"length of input tensor {x.shape[-3]}.")
        if self.phase_advance.dtype != x.dtype:
            raise op_error("PhaseVocoder", "invalid parameter, data type of phase_advance should be equal to data "
                                           "type of input tensor, but got: data type of phase_advance "
                                           f"{type_name(self.phase_advance.dtype)} while data type of input tensor "
                                           f"{type_name(x.dtype)}.")
        out = sk.phase_vocoder(sk.as_complex(x), float(self.rate), self.phase_advance.astype(np.float64))
        return sk.as_pairs(out, x.dtype)


class TimeStretch(AudioTensorOperation):
    """Stretches a complex STFT (..., freq, time, 2) in time by ``1 / fixed_rate`` with a phase vocoder.

    Args:
        hop_length (int, optional): hop of the STFT. Default: None (n_fft // 2, n_fft = 2 * (n_freq - 1)).
        n_freq (int, optional): frequency bins. Default: 201.
        fixed_rate (float, optional): speed-up factor. Default: None (1).

    Examples:
        >>> TimeStretch(n_freq=3, fixed_rate=2.0)(np.ones((3, 4, 2), np.float32)).shape
        (3, 2, 2)
    """

    def __init__(self, hop_length=None, n_freq=201, fixed_rate=None):
        if hop_length is not None:
            _pos_int(hop_length, "hop_length")
        _pos_int(n_freq, "n_freq")
        if fixed_rate is not None:
            type_check(fixed_rate, (int, float), "fixed_rate")
            check_pos_float32(fixed_rate, "fixed_rate")
        self.n_freq = n_freq
        self.hop_length = hop_length if hop_length is not None else (n_freq - 1)
        self.fixed_rate = fixed_rate if fixed_rate is not None else 1

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _complex_spec(x, "TimeStretch")
        if x.shape[-3] != self.n_freq:
            raise op_error("TimeStretch", f"the freq dimension of input should be n_freq {self.n_freq}, but got "
                                          f"{x.shape[-3]}.")
        advance = sk.linspace_as(math.pi * self.hop_length, self.n_freq, sk.work_dtype(x))
        out = sk.phase_vocoder(sk.as_complex(x), float(self.fixed_rate), advance)
        return sk.as_pairs(out, x.dtype)


class Resample(AudioTensorOperation):
    """Resamples a signal (..., time) from ``orig_freq`` to ``new_freq`` with a windowed sinc.

    Args:
        orig_freq (float, optional): Default: 16000.
        new_freq (float, optional): Default: 16000.
        resample_method (ResampleMethod, optional): Hann (SINC_INTERPOLATION) or Kaiser window.
            Default: ResampleMethod.SINC_INTERPOLATION.
        lowpass_filter_width (int, optional): zero crossings of the sinc on each side. Default: 6.
        rolloff (float, optional): cutoff as a fraction of the lower Nyquist rate, in (0, 1]. Default: 0.99.
        beta (float, optional): Kaiser beta. Default: None (14.769656459379492).

    Examples:
        >>> Resample(2, 1)(np.ones(8, np.float32)).shape
        (4,)
    """

    def __init__(self, orig_freq=16000, new_freq=16000, resample_method=ResampleMethod.SINC_INTERPOLATION,
                 lowpass_filter_width=6, rolloff=0.99, beta=None):
        type_check(orig_freq, (float, int), "orig_freq")
        check_pos_float32(orig_freq, "orig_freq")
        type_check(new_freq, (float, int), "new_freq")
        check_pos_float32(new_freq, "new_freq")
        type_check(resample_method, (ResampleMethod,), "resample_method")
        _pos_int(lowpass_filter_width, "lowpass_filter_width")
        type_check(rolloff, (float,), "rolloff")
        check_range(rolloff, (0, 1.0), "rolloff", left_open=True)
        if beta is not None:
            type_check(beta, (int, float), "beta")
        self.orig_freq, self.new_freq, self.resample_method = orig_freq, new_freq, resample_method
        self.lowpass_filter_width, self.rolloff = lowpass_filter_width, rolloff
        self.beta = beta if beta is not None else 14.769656459379492

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _numeric(x, "Resample")
        beta = self.beta if self.resample_method == ResampleMethod.KAISER_WINDOW else None
        return rsk.resample(x, self.orig_freq, self.new_freq, self.lowpass_filter_width, self.rolloff, beta)


class PitchShift(AudioTensorOperation):
    """Shifts the pitch of a signal (..., time) by ``n_steps`` steps of ``1 / bins_per_octave``
    octave, keeping its length: phase-vocoder time stretch, then resampling.

    Args:
        sample_rate (int): sample rate in Hz.
        n_steps (int): steps to shift (negative: down).
        bins_per_octave (int, optional): steps per octave. Default: 12.
        n_fft (int, optional): Default: 512.
        win_length (int, optional): Default: None (n_fft).
        hop_length (int, optional): Default: None (win_length // 4).
        window (WindowType, optional): Default: WindowType.HANN.

    Examples:
        >>> PitchShift(16000, 2, n_fft=16)(np.ones(64, np.float32)).shape
        (64,)
    """

    def __init__(self, sample_rate, n_steps, bins_per_octave=12, n_fft=512, win_length=None, hop_length=None,
                 window=WindowType.HANN):
        _nonneg_int(sample_rate, "sample_rate")
        type_check(n_steps, (int,), "n_steps")
        check_range(n_steps, (-2**31, INT32_MAX), "n_steps")
        type_check(bins_per_octave, (int,), "bins_per_octave ")  # (sic: MindSpore's name has a trailing space)
        if bins_per_octave == 0 or not -2**31 <= bins_per_octave <= INT32_MAX:
            raise ValueError("Input bins_per_octave is not within the required interval of [-2147483648, 0) and "
                             "(0, 2147483647].")
        _pos_int(n_fft, "n_fft")
        type_check(window, (WindowType,), "window")
        if win_length is not None:
            _pos_int(win_length, "win_length")
            _win_not_over(win_length, n_fft)
        if hop_length is not None:
            _pos_int(hop_length, "hop_length")
        self.sample_rate, self.n_steps, self.bins_per_octave, self.n_fft = (
            sample_rate, n_steps, bins_per_octave, n_fft)
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 4
        self.window = window

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _signal(x, "PitchShift")
        n = x.shape[-1]
        # the rate in float32, as MindSpore computes it
        rate = float(np.float32(2.0 ** float(np.float32(-self.n_steps) / np.float32(self.bins_per_octave))))
        spec = sk.stft(x, self.n_fft, self.hop_length, self.win_length, self.window.value)
        advance = sk.linspace_as(math.pi * self.hop_length, spec.shape[-2], sk.work_dtype(x))
        stretched = sk.phase_vocoder(spec, rate, advance)
        len_stretch = int(math.floor(n / rate + 0.5))
        y = sk.istft(stretched, self.n_fft, self.hop_length, self.win_length, self.window.value,
                     length=len_stretch)
        y = rsk.resample(y, int(self.sample_rate / rate), self.sample_rate)
        if y.shape[-1] >= n:
            return y[..., :n].astype(x.dtype)
        return np.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, n - y.shape[-1])]).astype(x.dtype)
