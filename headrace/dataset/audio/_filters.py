"""Audio filters: the biquad family, LFilter and Filtfilt (MindSpore's names and argument checks
over the kernels of ``headrace._audio.filters``); the sample-wise effects of ``_effects`` and the
sox-style effects of ``_sox`` are exported from here too.

Every filter takes a float waveform of shape <..., time> (float16, float32 or float64), filters the
last axis and returns the input's shape and dtype; the biquads and, with ``clamp``, LFilter and
Filtfilt clip the output to [-1, 1].
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from headrace._audio import filters as kf
from headrace.dataset.audio import _checks as ck
from headrace.dataset.audio._base import AudioTensorOperation, require_float
from headrace.dataset.audio._effects import Contrast, DCShift, Dither, Fade, Gain, MuLawDecoding, MuLawEncoding, Vol
from headrace.dataset.audio._sox import DetectPitchFrequency, Flanger, Overdrive, Phaser, Vad

__all__ = ["AllpassBiquad", "BandBiquad", "BandpassBiquad", "BandrejectBiquad", "BassBiquad", "Biquad",
           "Contrast", "DCShift", "DeemphBiquad", "DetectPitchFrequency", "Dither", "EqualizerBiquad",
           "Fade", "Filtfilt", "Flanger", "Gain", "HighpassBiquad", "LFilter", "LowpassBiquad",
           "MuLawDecoding", "MuLawEncoding", "Overdrive", "Phaser", "RiaaBiquad", "TrebleBiquad", "Vad", "Vol"]


_NO_GAIN = object()  # (a design without a gain; None is a bad gain, checked as any other value)


def _check_q(q: object) -> float:
    return ck.check_float(q, "Q", 0, 1, left_open=True)


class _Biquad(AudioTensorOperation):
    """A fixed second-order filter: ``self._b``, ``self._a`` set by the constructor."""

    _b: np.ndarray
    _a: np.ndarray

    def _check_rate_freq_q(self, sample_rate: object, central_freq: object, q: object, gain: object = _NO_GAIN) -> None:
        """The arguments most designs share, checked in MindSpore's order and kept under its attribute
        names; a shelf's ``gain`` is checked after the rate."""
        self.sample_rate = ck.check_nonzero_rate(sample_rate)
        if gain is not _NO_GAIN:
            self.gain = ck.check_float(gain, "gain")
        self.central_freq = ck.check_float(central_freq, "central_freq")
        self.quality_factor = _check_q(q)

    def _run(self, x: np.ndarray) -> np.ndarray:
        require_float(x, self.op_name)
        return kf.lfilter(x, self._b, self._a, clamp=True)


class AllpassBiquad(_Biquad):
    """Two-pole all-pass filter: flat magnitude, phase turning through 180 degrees at `central_freq`.

    Args:
        sample_rate (int): sampling rate of the waveform in Hz, not 0.
        central_freq (float): central frequency in Hz, in [-16777216, 16777216].
        Q (float, optional): quality factor, in (0, 1]. Default: 0.707.

    Raises:
        TypeError: if an argument has the wrong type.
        ValueError: if an argument is out of its range.
        RuntimeError: (on call) if the waveform is not of a float type.

    Examples:
        >>> import numpy as np
        >>> AllpassBiquad(44100, 200.0)(np.array([[1.0, 2.0, 3.0]])).round(4).tolist()
        [[0.9605, 1.0, 1.0]]
    """

    def __init__(self, sample_rate, central_freq, Q=0.707):  # noqa: N803 (MindSpore's name)
        self._check_rate_freq_q(sample_rate, central_freq, Q)
        self._b, self._a = kf.allpass(self.sample_rate, self.central_freq, self.quality_factor)


class BandBiquad(_Biquad):
    """Two-pole band filter (sox's ``band``) at `central_freq`, bandwidth `central_freq / Q`.

    Args:
        sample_rate (int): sampling rate in Hz, not 0.
        central_freq (float): central frequency in Hz.
        Q (float, optional): quality factor, in (0, 1]. Default: 0.707.
        noise (bool, optional): tune for unpitched audio (noise) rather than tones. Default: False.

    Examples:
        >>> import numpy as np
        >>> BandBiquad(44100, 200.0)(np.array([[1.0, 2.0, 3.0]])).round(4).tolist()
        [[0.0014, 0.0055, 0.0135]]
    """

    def __init__(self, sample_rate, central_freq, Q=0.707, noise=False):  # noqa: N803
        self._check_rate_freq_q(sample_rate, central_freq, Q)
        self.noise = ck.check_bool(noise, "noise")
        self._b, self._a = kf.band(self.sample_rate, self.central_freq, self.quality_factor, self.noise)


class BandpassBiquad(_Biquad):
    """Two-pole band-pass filter at `central_freq`.

    Args:
        sample_rate (int): sampling rate in Hz, not 0.
        central_freq (float): central frequency in Hz.
        Q (float, optional): quality factor, in (0, 1]. Default: 0.707.
        const_skirt_gain (bool, optional): constant skirt gain (peak gain = Q) instead of a constant
            0 dB peak gain. Default: False.

    Examples:
        >>> import numpy as np
        >>> BandpassBiquad(44100, 200.0)(np.array([[1.0, 2.0, 3.0]])).round(4).tolist()
        [[0.0198, 0.0782, 0.1738]]
    """

    def __init__(self, sample_rate, central_freq, Q=0.707, const_skirt_gain=False):  # noqa: N803
        self._check_rate_freq_q(sample_rate, central_freq, Q)
        self.const_skirt_gain = ck.check_bool(const_skirt_gain, "const_skirt_gain")
        self._b, self._a = kf.bandpass(self.sample_rate, self.central_freq, self.quality_factor,
                                       self.const_skirt_gain)


class BandrejectBiquad(_Biquad):
    """Two-pole band-reject (notch) filter at `central_freq`.

    Args:
        sample_rate (int): sampling rate in Hz, not 0.
        central_freq (float): central frequency in Hz.
        Q (float, optional): quality factor, in (0, 1]. Default: 0.707.

    Examples:
        >>> import numpy as np
        >>> BandrejectBiquad(44100, 200.0)(np.array([[0.1, 0.2, 0.3]])).round(4).tolist()
        [[0.098, 0.1922, 0.2826]]
    """

    def __init__(self, sample_rate, central_freq, Q=0.707):  # noqa: N803
        self._check_rate_freq_q(sample_rate, central_freq, Q)
        self._b, self._a = kf.bandreject(self.sample_rate, self.central_freq, self.quality_factor)


class BassBiquad(_Biquad):
    """Low-shelf filter: boosts or cuts the bass below `central_freq` by `gain` dB.

    Args:
        sample_rate (int): sampling rate in Hz, not 0.
        gain (float): gain in dB, in [-16777216, 16777216].
        central_freq (float, optional): shelf frequency in Hz. Default: 100.0.
        Q (float, optional): quality factor, in (0, 1]. Default: 0.707.

    Examples:
        >>> import numpy as np
        >>> BassBiquad(44100, 10.0)(np.array([[0.1, 0.2, 0.3]])).round(4).tolist()
        [[0.1006, 0.2024, 0.3053]]
    """

    def __init__(self, sample_rate, gain, central_freq=100.0, Q=0.707):  # noqa: N803
        self._check_rate_freq_q(sample_rate, central_freq, Q, gain)
        self._b, self._a = kf.shelf(self.sample_rate, self.central_freq, self.gain, self.quality_factor, high=False)


class TrebleBiquad(_Biquad):
    """High-shelf filter: boosts or cuts the treble above `central_freq` by `gain` dB.

    Args:
        sample_rate (int): sampling rate in Hz, not 0.
        gain (float): gain in dB, in [-16777216, 16777216].
        central_freq (float, optional): shelf frequency in Hz. Default: 3000.0.
        Q (float, optional): quality factor, in (0, 1]. Default: 0.707.

    Examples:
        >>> import numpy as np
        >>> TrebleBiquad(44100, 6.0)(np.array([[0.1, 0.2, 0.3]])).round(4).tolist()
        [[0.18, 0.3254, 0.4454]]
    """

    def __init__(self, sample_rate, gain, central_freq=3000, Q=0.707):  # noqa: N803
        self._check_rate_freq_q(sample_rate, central_freq, Q, gain)
        self._b, self._a = kf.shelf(self.sample_rate, self.central_freq, self.gain, self.quality_factor, high=True)


class EqualizerBiquad(_Biquad):
    """Peaking equaliser: `gain` dB around `center_freq`.

    Args:
        sample_rate (int): sampling rate in Hz, not 0.
        center_freq (float): centre frequency in Hz.
        gain (float): gain in dB.
        Q (float, optional): quality factor, in (0, 1]. Default: 0.707.

    Examples:
        >>> import numpy as np
        >>> EqualizerBiquad(44100, 1500, 5.5)(np.array([[0.1, 0.2, 0.3]])).round(4).tolist()
        [[0.1087, 0.2328, 0.3681]]
    """

    def __init__(self, sample_rate, center_freq, gain, Q=0.707):  # noqa: N803
        self.sample_rate = ck.check_nonzero_rate(sample_rate)
        self.center_freq = ck.check_float(center_freq, "central_freq")  # MindSpore's name in its messages
        self.gain = ck.check_float(gain, "gain")
        self.quality_factor = _check_q(Q)
        self._b, self._a = kf.equalizer(self.sample_rate, self.center_freq, self.gain, self.quality_factor)


class _CutoffBiquad(_Biquad):
    """A two-pole filter designed from a cut-off frequency and Q by the kernel ``_design``."""

    _design: Callable[[int, float, float], tuple[np.ndarray, np.ndarray]]

    def __init__(self, sample_rate, cutoff_freq, Q=0.707):  # noqa: N803
        self.sample_rate = ck.check_nonzero_rate(sample_rate)
        self.cutoff_freq = ck.check_float(cutoff_freq, "cutoff_freq")
        self.quality_factor = _check_q(Q)
        self._b, self._a = self._design(self.sample_rate, self.cutoff_freq, self.quality_factor)


class HighpassBiquad(_CutoffBiquad):
    """Two-pole high-pass filter with cut-off `cutoff_freq`.

    Args:
        sample_rate (int): sampling rate in Hz, not 0.
        cutoff_freq (float): cut-off frequency in Hz.
        Q (float, optional): quality factor, in (0, 1]. Default: 0.707.

    Examples:
        >>> import numpy as np
        >>> HighpassBiquad(44100, 1000)(np.array([[0.1, 0.2, 0.3]])).round(4).tolist()
        [[0.0904, 0.1627, 0.2187]]
    """

    _design = staticmethod(kf.highpass)


class LowpassBiquad(_CutoffBiquad):
    """Two-pole low-pass filter with cut-off `cutoff_freq`.

    Args:
        sample_rate (int): sampling rate in Hz, not 0.
        cutoff_freq (float): cut-off frequency in Hz.
        Q (float, optional): quality factor, in (0, 1]. Default: 0.707.

    Examples:
        >>> import numpy as np
        >>> LowpassBiquad(44100, 1000)(np.array([[0.1, 0.2, 0.3]])).round(4).tolist()
        [[0.0005, 0.0027, 0.0081]]
    """

    _design = staticmethod(kf.lowpass)


class DeemphBiquad(_Biquad):
    """Compact-disc de-emphasis (ISO 908) at 44.1 or 48 kHz.

    Args:
        sample_rate (int): 44100 or 48000.

    Examples:
        >>> import numpy as np
        >>> DeemphBiquad(44100)(np.array([[0.1, 0.2, 0.3]])).round(4).tolist()
        [[0.046, 0.1122, 0.1907]]
    """

    def __init__(self, sample_rate):
        ck.check_type(sample_rate, int, "sample_rate")
        if sample_rate not in (44100, 48000):
            raise ValueError(f"Argument sample_rate should be 44100 or 48000, but got {sample_rate}.")
        self.sample_rate = sample_rate
        self._b, self._a = kf.deemph(sample_rate)


class RiaaBiquad(_Biquad):
    """RIAA vinyl playback equalisation.

    Args:
        sample_rate (int): 44100, 48000, 88200 or 96000.

    Examples:
        >>> import numpy as np
        >>> RiaaBiquad(44100)(np.array([[0.1, 0.2, 0.3]])).round(4).tolist()
        [[0.0238, 0.0709, 0.1365]]
    """

    def __init__(self, sample_rate):
        ck.check_type(sample_rate, int, "sample_rate")
        if sample_rate not in (44100, 48000, 88200, 96000):
            raise ValueError(f"sample_rate should be one of [44100, 48000, 88200, 96000], but got {sample_rate}.")
        self.sample_rate = sample_rate
        self._b, self._a = kf.riaa(sample_rate)


class Biquad(_Biquad):
    """Second-order IIR filter with the given coefficients (normalised by `a0`).

    Args:
        b0, b1, b2 (float): numerator coefficients, in [-16777216, 16777216].
        a0 (float): leading denominator coefficient, non-zero.
        a1, a2 (float): the other denominator coefficients.

    Examples:
        >>> import numpy as np
        >>> Biquad(0.01, 0.02, 0.13, 1, 0.12, 0.3)(np.array([[0.1, 0.2, 0.3]])).round(4).tolist()
        [[0.001, 0.0039, 0.0192]]
    """

    def __init__(self, b0, b1, b2, a0, a1, a2):
        coeffs = []
        for name, v in (("b0", b0), ("b1", b1), ("b2", b2), ("a0", a0), ("a1", a1), ("a2", a2)):
            ck.check_type(v, (float, int), name)
            if name == "a0" and (v == 0 or v < -ck.FLOAT_MAX or v > ck.FLOAT_MAX):  # NaN passes
                raise ValueError(f"Input a0 is not within the required interval of [{-ck.FLOAT_MAX}, 0) and "
                                 f"(0, {ck.FLOAT_MAX}].")
            coeffs.append(ck.check_float(v, name))
        self.b0, self.b1, self.b2, self.a0, self.a1, self.a2 = coeffs
        self._b, self._a = np.array(coeffs[:3]), np.array(coeffs[3:])


class LFilter(AudioTensorOperation):
    """IIR filter by its difference equation:
    ``a[0] y[n] = sum_k b[k] x[n-k] - sum_{k>=1} a[k] y[n-k]``, from rest.

    Args:
        a_coeffs (Sequence[float]): denominator coefficients, `a_coeffs[0]` non-zero.
        b_coeffs (Sequence[float]): numerator coefficients, as many as `a_coeffs`.
        clamp (bool, optional): clip the output to [-1, 1]. Default: True.

    Raises:
        TypeError, ValueError: for bad arguments.
        RuntimeError: (on call) for a non-float waveform or `a_coeffs[0]` of 0.

    Examples:
        >>> import numpy as np
        >>> LFilter([0.2, 0.2, 0.3], [0.5, 0.4, 0.2])(np.array([[0.1, 0.2, 0.3]])).round(4).tolist()
        [[0.25, 0.45, 0.425]]
    """

    def __init__(self, a_coeffs, b_coeffs, clamp=True):
        self.a_coeffs, self.b_coeffs = ck.check_coeffs(a_coeffs, b_coeffs)
        self.clamp = ck.check_bool(clamp, "clamp")

    def _coeffs(self) -> tuple[np.ndarray, np.ndarray]:
        if np.float32(self.a_coeffs[0]) == 0:  # (MindSpore tests it as float32: 1e-50 is 0)
            raise RuntimeError(f"{self.op_name.lower()}: a_coeffs[0] can not be equal to zero, but got: 0.000000")
        # MindSpore keeps the coefficients as float32, for a float64 waveform too
        return (np.array(self.b_coeffs, np.float32).astype(np.float64),
                np.array(self.a_coeffs, np.float32).astype(np.float64))

    _kernel = staticmethod(kf.lfilter)  # (Filtfilt: kf.filtfilt)

    def _run(self, x: np.ndarray) -> np.ndarray:
        require_float(x, self.op_name)
        b, a = self._coeffs()
        return self._kernel(x, b, a, self.clamp)


class Filtfilt(LFilter):
    """Zero-phase IIR filter: LFilter forwards, then backwards over the reversed result (no edge
    padding); `clamp` applies to the second pass.

    Args:
        a_coeffs (Sequence[float]): denominator coefficients, `a_coeffs[0]` non-zero.
        b_coeffs (Sequence[float]): numerator coefficients, as many as `a_coeffs`.
        clamp (bool, optional): clip the output to [-1, 1]. Default: True.

    Examples:
        >>> import numpy as np
        >>> Filtfilt([1.0, 0.1], [0.5, 0.2])(np.array([[0.1, 0.2, 0.3]])).round(4).tolist()
        [[0.0396, 0.0843, 0.0893]]
    """

    _kernel = staticmethod(kf.filtfilt)
