"""STFT- and mel-based audio transforms: Spectrogram and its inverse, MelSpectrogram, MFCC, LFCC,
SpectralCentroid, MelScale and its inverse, GriffinLim.

The kernels are in :mod:`headrace._audio.spectral` and :mod:`headrace._audio.mel`; the shared checks
in :mod:`headrace.dataset.audio._spectral_base`. The masking, elementwise and time / pitch transforms
are in ``_masking``, ``_features`` and ``_stretch`` beside this module.
"""
from __future__ import annotations

import math

import numpy as np

from headrace._audio import mel as melk
from headrace._audio import spectral as sk
from headrace._util.rng import sample_rng
from headrace.dataset.audio._base import AudioTensorOperation, op_error
from headrace.dataset.audio._spectral_base import (_check_f_max, _check_stft_args, _check_win_hop, _complex_spec,
                                                   _frame_lengths, _FREQ_TIME, _mel_freqs, _nonneg_int, _numeric,
                                                   _OwnRankError, _pos_int, _power, _power_out, _signal, _Stft,
                                                   _to_db)
from headrace.dataset.audio.utils import BorderType, MelType, NormMode, NormType, WindowType
from headrace.dataset.transforms._checks import check_non_negative_float32, check_pos_float32, type_check

__all__ = ["GriffinLim", "InverseMelScale", "InverseSpectrogram", "LFCC", "MFCC", "MelScale",
           "MelSpectrogram", "SpectralCentroid", "Spectrogram"]

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
        _check_win_hop(n_fft, win_length, hop_length)
        _nonneg_int(pad, "pad")
        type_check(window, (WindowType,), "window")
        _power(power)
        type_check(normalized, (bool,), "normalized")
        type_check(center, (bool,), "center")
        type_check(onesided, (bool,), "onesided")
        type_check(pad_mode, (BorderType,), "pad_mode")
        self.n_fft = n_fft
        self.win_length, self.hop_length = _frame_lengths(n_fft, win_length, hop_length)
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
        _check_f_max(f_min, f_max, sample_rate, "MelSpectrogram: sample_rate // 2 should be greater than f_min when "
                                                f"f_max is set to None, but got f_min: {f_min}.")
        type_check(norm, (NormType,), "norm")
        type_check(mel_scale, (MelType,), "mel_type")
        check_pos_float32(power, "power")
        _check_stft_args(n_fft, win_length, hop_length, pad, window, normalized, center, pad_mode, onesided)
        self.sample_rate, self.n_fft = sample_rate, n_fft
        self.win_length, self.hop_length = _frame_lengths(n_fft, win_length, hop_length)
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
        self._fb32 = np.ascontiguousarray(fb, np.float32)
        self._fb64 = np.ascontiguousarray(fb)

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _signal(x, "MelSpectrogram")
        # in the FFT's (frames, freq) layout: the power spectrum without strided halves and the
        # product without a transposed operand: 34 against 39 us on a 1 s clip (one BLAS thread)
        p = sk.power_spectrum(self._stft(x, freq_last=True), self.power)
        fb = self._fb64 if x.dtype == np.float64 else self._fb32
        return np.swapaxes(np.matmul(p.astype(x.dtype, copy=False), fb), -1, -2)


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
        _check_f_max(f_min, f_max, sample_rate, "Input sample_rate // 2 should be greater than f_min when f_max is "
                                                f"set to None, but got f_min: {f_min} and sample_rate: {sample_rate}.")
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
        _check_win_hop(n_fft, win_length, hop_length)
        self.sample_rate, self.pad, self.window, self.n_fft = sample_rate, pad, window, n_fft
        self.win_length, self.hop_length = _frame_lengths(n_fft, win_length, hop_length)
        self._stft = _Stft("SpectralCentroid", n_fft, self.win_length, self.hop_length, pad, window, False, True,
                           BorderType.REFLECT, True, strict_reflect=False)

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _numeric(x, "SpectralCentroid")
        return sk.spectral_centroid(np.abs(self._stft(x)), self.sample_rate, self.n_fft).astype(x.dtype)


# ---- mel scale ----

def _check_mel_scale(n_mels, sample_rate, f_min, f_max, n_stft, norm, mel_type) -> None:
    """The checks MelScale and InverseMelScale share, in MindSpore's order."""
    _pos_int(n_mels, "n_mels")
    _pos_int(sample_rate, "sample_rate")
    _mel_freqs(f_min, f_max, sample_rate)
    _pos_int(n_stft, "n_stft")
    type_check(norm, (NormType,), "norm")
    type_check(mel_type, (MelType,), "mel_type")


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
        _check_mel_scale(n_mels, sample_rate, f_min, f_max, n_stft, norm, mel_type)
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
        _check_mel_scale(n_mels, sample_rate, f_min, f_max, n_stft, norm, mel_type)
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


# ---- inversion ----

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
        _check_stft_args(n_fft, win_length, hop_length, pad, window, normalized, center, pad_mode, onesided)
        self.length, self.n_fft = length, n_fft
        self.win_length, self.hop_length = _frame_lengths(n_fft, win_length, hop_length)
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
        _check_win_hop(n_fft, win_length, hop_length, zero_ok=True)
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
        self.win_length, self.hop_length = _frame_lengths(n_fft, win_length, hop_length)
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
