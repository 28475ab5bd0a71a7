"""Time and pitch: the phase vocoder (PhaseVocoder, TimeStretch), windowed-sinc resampling
(Resample) and PitchShift built on both.
"""
from __future__ import annotations

import math

import numpy as np

from headrace._audio import resample as rsk
from headrace._audio import spectral as sk
from headrace._util.checks import INT32_MAX, check_range
from headrace.dataset.audio._base import AudioTensorOperation, op_error
from headrace.dataset.audio._spectral_base import _complex_spec, _nonneg_int, _numeric, _pos_int, _signal, _win_not_over

from headrace.dataset.audio.utils import ResampleMethod, WindowType
from headrace.dataset.transforms._cast import type_name
from headrace.dataset.transforms._checks import check_pos_float32, type_check
__all__ = ["PhaseVocoder", "PitchShift", "Resample", "TimeStretch"]

class PhaseVocoder(AudioTensorOperation):
    """Speeds a complex STFT (..., freq, time, 2) up by ``rate`` without changing its pitch.

    Args:
        rate (float): speed-up factor (> 1 shortens).
        phase_advance (numpy.ndarray): expected phase advance per hop, shape (freq, 1).

    Examples:
        >>> PhaseVocoder(2.0, np.zeros((3, 1), np.float32))(np.ones((3, 4, 2), np.float32)).shape
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
        # (summed as MindSpore sums it: the vocoder carries a spectrum's last bit on into its output)
        spec = sk.stft(x, self.n_fft, self.hop_length, self.win_length, self.window.value, direct=True)
        advance = sk.linspace_as(math.pi * self.hop_length, spec.shape[-2], sk.work_dtype(x))
        stretched = sk.phase_vocoder(spec, rate, advance)
        len_stretch = int(math.floor(n / rate + 0.5))
        y = sk.istft(stretched, self.n_fft, self.hop_length, self.win_length, self.window.value,
                     length=len_stretch)
        y = rsk.resample(y, int(self.sample_rate / rate), self.sample_rate)
        if y.shape[-1] >= n:
            return y[..., :n].astype(x.dtype)
        return np.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, n - y.shape[-1])]).astype(x.dtype)
