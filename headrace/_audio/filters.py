"""IIR filters on the last axis of a signal: the linear recurrence, its forward-backward form, and
the second-order (biquad) designs of the RBJ audio-EQ cookbook and of sox.

A design returns ``(b, a)``, numerator and denominator as float64 arrays of three coefficients;
:func:`lfilter` runs them. A float32 or float64 signal is filtered in its own precision by
``headrace._native._audiofilter`` (imported here and nowhere else), in MindSpore's order of
operations: a float32 recurrence whose poles lie near the unit circle carries every rounding step
on, so only the same arithmetic gives the same output (float64 arithmetic differs from MindSpore's
float32 result by up to ~8e-5 of the peak). Without the extension, and for other dtypes, signals are
filtered in float64 by SciPy with the coefficients rounded as the signal's type would round them.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["allpass", "band", "bandpass", "bandreject", "deemph", "equalizer", "filtfilt", "highpass",
           "lfilter", "lowpass", "native", "riaa", "scipy_signal", "shelf"]

Coeffs = tuple[np.ndarray, np.ndarray]


def scipy_signal() -> Any:
    """``scipy.signal``, imported on first use (its import takes ~0.2 s); without SciPy, an error
    saying which package to install."""
    try:
        from scipy import signal  # noqa: PLC0415  (slow import: only when a filter runs)
    except ModuleNotFoundError as e:
        e.add_note("headrace's audio filters need SciPy: pip install scipy")
        raise
    return signal


try:
    from headrace._native import _audiofilter as native
except ImportError:  # built without a C compiler: SciPy in float64 (and NumPy's trigonometry in spectral)
    native = None


def _in_precision(x: np.ndarray, b: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``b / a[0]`` and ``a / a[0]`` (``a[0]`` kept) in the precision of ``x``, as float64."""
    dt = x.dtype if x.dtype in (np.float32, np.float64) else np.dtype(np.float64)
    bq, aq = np.asarray(b, np.float64).astype(dt), np.asarray(a, np.float64).astype(dt)
    with np.errstate(all="ignore"):
        aq[1:] = aq[1:] / aq[0]
        bq = bq / aq[0]
    aq[0] = 1
    return bq.astype(np.float64), aq.astype(np.float64)


def lfilter(x: np.ndarray, b: np.ndarray, a: np.ndarray, clamp: bool = True) -> np.ndarray:
    """``y[n] = (sum_k b[k] x[n-k] - sum_{k>0} a[k] y[n-k]) / a[0]`` over the last axis of ``x``,
    from rest (zero initial state); with ``clamp`` the output is clipped to [-1, 1] afterwards (the
    clipped values are not fed back). ``b`` and ``a`` have the same length.

    Examples:
        >>> lfilter(np.array([0.1, 0.2, 0.3]), np.array([0.5, 0.4, 0.2]), np.array([0.2, 0.2, 0.3])).round(6).tolist()
        [0.25, 0.45, 0.425]
    """
    if native is not None and x.dtype in (np.float32, np.float64) and x.size:
        src = np.ascontiguousarray(x)
        y = np.empty_like(src)
        native.lfilter(src, y, x.shape[-1], [float(v) for v in b], [float(v) for v in a], clamp)
        return y
    bq, aq = _in_precision(x, b, a)
    y = scipy_signal().lfilter(bq, aq, x.astype(np.float64, copy=False), axis=-1)
    if clamp:
        np.clip(y, -1.0, 1.0, out=y)
    return y.astype(x.dtype, copy=False)


def filtfilt(x: np.ndarray, b: np.ndarray, a: np.ndarray, clamp: bool = True) -> np.ndarray:
    """:func:`lfilter` forwards (unclipped), then backwards over the reversed result (clipped with
    ``clamp``): zero phase, squared magnitude response, no edge padding."""
    y = lfilter(x, b, a, clamp=False)
    return np.ascontiguousarray(lfilter(np.ascontiguousarray(y[..., ::-1]), b, a, clamp)[..., ::-1])


def _w0_alpha(sample_rate: float, freq: float, q: float) -> tuple[float, float]:
    w0 = 2.0 * math.pi * freq / sample_rate
    return w0, math.sin(w0) / (2.0 * q)


def _db_amp(gain_db: float) -> float:
    """The amplitude of a shelf or peak of ``gain_db`` dB (inf past float64's range, never an error)."""
    with np.errstate(over="ignore"):
        return float(np.power(10.0, gain_db / 40.0))


def _coeffs(b: list[float], a: list[float]) -> Coeffs:
    return np.array(b, np.float64), np.array(a, np.float64)


def allpass(sample_rate: float, freq: float, q: float) -> Coeffs:
    """Second-order all-pass centred on ``freq`` Hz."""
    w0, al = _w0_alpha(sample_rate, freq, q)
    c = math.cos(w0)
    return _coeffs([1 - al, -2 * c, 1 + al], [1 + al, -2 * c, 1 - al])


def bandpass(sample_rate: float, freq: float, q: float, const_skirt_gain: bool) -> Coeffs:
    """Band-pass: constant skirt gain (peak gain Q) or constant 0 dB peak gain."""
    w0, al = _w0_alpha(sample_rate, freq, q)
    c = math.cos(w0)
    g = math.sin(w0) / 2 if const_skirt_gain else al
    return _coeffs([g, 0.0, -g], [1 + al, -2 * c, 1 - al])


def bandreject(sample_rate: float, freq: float, q: float) -> Coeffs:
    """Notch at ``freq`` Hz."""
    w0, al = _w0_alpha(sample_rate, freq, q)
    c = math.cos(w0)
    return _coeffs([1.0, -2 * c, 1.0], [1 + al, -2 * c, 1 - al])


def lowpass(sample_rate: float, freq: float, q: float) -> Coeffs:
    """Second-order low-pass with cut-off ``freq`` Hz."""
    w0, al = _w0_alpha(sample_rate, freq, q)
    c = math.cos(w0)
    return _coeffs([(1 - c) / 2, 1 - c, (1 - c) / 2], [1 + al, -2 * c, 1 - al])


def highpass(sample_rate: float, freq: float, q: float) -> Coeffs:
    """Second-order high-pass with cut-off ``freq`` Hz."""
    w0, al = _w0_alpha(sample_rate, freq, q)
    c = math.cos(w0)
    return _coeffs([(1 + c) / 2, -1 - c, (1 + c) / 2], [1 + al, -2 * c, 1 - al])


def equalizer(sample_rate: float, freq: float, gain_db: float, q: float) -> Coeffs:
    """Peaking EQ: ``gain_db`` at ``freq`` Hz, width from ``q``."""
    w0, al = _w0_alpha(sample_rate, freq, q)
    c = math.cos(w0)
    amp = _db_amp(gain_db)
    return _coeffs([1 + al * amp, -2 * c, 1 - al * amp], [1 + al / amp, -2 * c, 1 - al / amp])


def _shelf(w0: float, al: float, gain_db: float, high: bool) -> Coeffs:
    amp = _db_amp(gain_db)
    c = math.cos(w0)
    k = 2 * math.sqrt(amp) * al
    s = -1.0 if high else 1.0  # the high shelf is the low shelf with cos(w0) negated in the sums
    p, m = amp + 1, amp - 1
    b = [amp * (p - s * m * c + k), 2 * s * amp * (m - s * p * c), amp * (p - s * m * c - k)]
    a = [p + s * m * c + k, -2 * s * (m + s * p * c), p + s * m * c - k]
    return _coeffs(b, a)


def shelf(sample_rate: float, freq: float, gain_db: float, q: float, high: bool) -> Coeffs:
    """Low (bass) or high (treble) shelving filter: ``gain_db`` below / above ``freq`` Hz."""
    w0, al = _w0_alpha(sample_rate, freq, q)
    return _shelf(w0, al, gain_db, high)


def band(sample_rate: float, freq: float, q: float, noise: bool) -> Coeffs:
    """sox's ``band``: a two-pole resonator at ``freq`` Hz, bandwidth ``freq / q``; ``noise`` scales
    it for unpitched audio (unit noise power gain) instead of tones (unit peak gain). Degenerate
    arguments give NaN or infinite coefficients, never an error."""
    with np.errstate(all="ignore"):
        bw = np.float64(freq) / q
        a2 = np.exp(-2.0 * np.pi * bw / np.float64(sample_rate))
        a1 = -4.0 * a2 / (1.0 + a2) * np.cos(2.0 * np.pi * freq / np.float64(sample_rate))
        b0 = np.sqrt(1.0 - a1 * a1 / (4.0 * a2)) * (1.0 - a2)
        if noise:
            b0 *= np.sqrt(((1.0 + a2) ** 2 - a1 * a1) * (1.0 - a2) / (1.0 + a2)) / b0
    return _coeffs([b0, 0.0, 0.0], [1.0, a1, a2])


# sox's de-emphasis shelf of a compact disc (50/15 us) for its two sample rates:
# (centre Hz, shelf slope, gain dB)
_DEEMPH = {44100: (5283.0, 0.4845, -9.477), 48000: (5356.0, 0.479, -9.62)}


def deemph(sample_rate: int) -> Coeffs:
    """Compact-disc de-emphasis (a high shelf given by its slope) at 44.1 or 48 kHz."""
    freq, slope, gain = _DEEMPH[sample_rate]
    w0 = 2.0 * math.pi * freq / sample_rate
    amp = _db_amp(gain)
    al = math.sin(w0) / 2.0 * math.sqrt((amp + 1.0 / amp) * (1.0 / slope - 1.0) + 2.0)
    return _shelf(w0, al, gain, high=True)


# sox's RIAA playback equalisation: (zeros, poles) of the digital filter per sample rate
_RIAA = {44100: ((-0.2014898, 0.9233820), (0.7083149, 0.9924091)),
         48000: ((-0.1766069, 0.9321590), (0.7396325, 0.9931330)),
         88200: ((-0.1168735, 0.9648312), (0.8590646, 0.9964002)),
         96000: ((-0.1141486, 0.9676817), (0.8699137, 0.9966946))}


def riaa(sample_rate: int) -> Coeffs:
    """RIAA vinyl playback equalisation at 44.1, 48, 88.2 or 96 kHz, normalised to 0 dB at 1 kHz.

    The design is computed in float32 throughout, as MindSpore does: its poles lie within 0.004 of
    the unit circle, where float64 coefficients would move the output by ~2e-5 of full scale.
    """
    f = np.float32
    (z0, z1), (p0, p1) = ((f(v) for v in pair) for pair in _RIAA[sample_rate])
    b = np.array([f(1), -(z0 + z1), z0 * z1], np.float32)
    a = np.array([f(1), -(p0 + p1), p0 * p1], np.float32)
    w = f(2) * f(math.pi) * f(1000) / f(sample_rate)
    k = np.arange(3, dtype=np.float32)
    cos, sin = np.cos(-w * k), np.sin(-w * k)
    b_re, b_im, a_re, a_im = (b * cos).sum(), (b * sin).sum(), (a * cos).sum(), (a * sin).sum()
    b = b * (f(1) / np.sqrt((b_re * b_re + b_im * b_im) / (a_re * a_re + a_im * a_im)))
    return b.astype(np.float64), a.astype(np.float64)
