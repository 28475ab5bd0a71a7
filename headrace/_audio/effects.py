"""Sample-wise audio effects on the last axis of a signal: gains, DC shift with a limiter, contrast,
mu-law companding, fades and dither (the sox effects of those names).

Floats are computed in float64 and returned in the input's dtype unless a function says otherwise.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["FADE_SHAPES", "bartlett", "contrast", "dcshift", "dither", "fade", "fade_curve", "gain", "mu_law_decode",
           "mu_law_encode", "vol"]


def _out(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    return y.astype(x.dtype, copy=False)


def gain(x: np.ndarray, gain_db: float) -> np.ndarray:
    """``x`` scaled by ``gain_db`` decibels (no clipping)."""
    return _out(x * 10.0 ** (gain_db / 20.0), x)


def vol(x: np.ndarray, factor: float) -> np.ndarray:
    """``x`` scaled by an amplitude ``factor`` and clipped to [-1, 1]."""
    return _out(np.clip(x * factor, -1.0, 1.0), x)


def contrast(x: np.ndarray, amount: float) -> np.ndarray:
    """sox's ``contrast``: ``sin(t + amount/750 * sin(4 t))`` with ``t = x * pi / 2``."""
    t = x.astype(np.float64) * (math.pi / 2)
    return _out(np.sin(t + amount / 750.0 * np.sin(4.0 * t)), x)


def dcshift(x: np.ndarray, shift: float, limiter_gain: float | None) -> np.ndarray:
    """``x + shift`` clipped to [-1, 1]. With ``limiter_gain``, the samples beyond the threshold
    ``1 - (|shift| - limiter_gain)`` on the side the shift pushes towards are compressed by
    ``limiter_gain`` instead, so they stay at or below the threshold."""
    xd = x.astype(np.float64)
    shifted = np.clip(xd + shift, -1.0, 1.0)
    if limiter_gain is None or shift == 0:
        return _out(shifted, x)
    thr = 1.0 - (abs(shift) - limiter_gain)
    with np.errstate(divide="ignore", invalid="ignore"):  # thr == 1: the limiter's slope is infinite
        if shift > 0:
            over = xd > thr
            limited = np.minimum((xd - thr) * limiter_gain / (1.0 - thr) + thr + shift, thr)
        else:  # MindSpore's negative branch: the compressed part is offset by +thr, floored at -thr
            over = xd < -thr
            limited = np.maximum((xd + thr) * limiter_gain / (1.0 - thr) + thr + shift, -thr)
    return _out(np.where(over, limited, shifted), x)


def mu_law_encode(x: np.ndarray, channels: int) -> np.ndarray:
    """Mu-law companding of ``x`` (in [-1, 1]) to integers in [0, channels - 1], as int32.

    A float64 signal is companded in float64, any other in float32 (a value near a level's edge
    falls on MindSpore's side of it only so): ``sign(x) log1p(mu |x|) / log1p(mu)``, then
    ``(y + 1) / 2 mu + 0.5`` (the last addition in float64, rounded back) truncated towards zero."""
    t = np.float64 if x.dtype == np.float64 else np.float32
    mu = t(channels - 1)
    xd = x.astype(t)
    y = np.sign(xd) * np.log1p(mu * np.abs(xd)) / np.log1p(mu)
    z = ((y + t(1)) / t(2) * mu).astype(np.float64) + 0.5
    return z.astype(t).astype(np.int32)


def mu_law_decode(x: np.ndarray, channels: int, dtype: np.dtype) -> np.ndarray:
    """The inverse of :func:`mu_law_encode`: integers in [0, channels - 1] back to [-1, 1], computed
    in ``dtype`` (float32 gives MindSpore's float32 results bit for bit)."""
    t = np.dtype(dtype).type
    mu = t(channels - 1)
    y = x.astype(dtype) / mu * t(2) - t(1)
    return (np.sign(y) * np.expm1(np.abs(y) * np.log1p(mu)) / mu).astype(dtype)


FADE_SHAPES = ("linear", "exponential", "logarithmic", "quarter_sine", "half_sine")


def fade_curve(n: int, shape: str, rising: bool) -> np.ndarray:
    """The gain of a fade-in (``rising``) or fade-out over ``n`` samples, float64."""
    t = np.linspace(0.0, 1.0, n)
    if not rising:
        t = 1.0 - t  # a one-sample fade-in is [0], a one-sample fade-out [1]
    if shape == "linear":
        return t
    if shape == "exponential":  # MindSpore's curve: t * 2 ** (t - 1), 0 to 1
        return t * 2.0 ** (t - 1.0)
    if shape == "logarithmic":
        return np.log10(0.1 + t) + 1.0
    if shape == "quarter_sine":
        return np.sin(t * math.pi / 2.0)
    if shape == "half_sine":
        return np.sin(t * math.pi - math.pi / 2.0) / 2.0 + 0.5
    raise ValueError(f"fade shape must be one of {FADE_SHAPES}, but got {shape!r}.")


def fade(x: np.ndarray, fade_in: int, fade_out: int, shape: str) -> np.ndarray:
    """``x`` with a fade-in over its first ``fade_in`` and a fade-out over its last ``fade_out``
    samples (both at most the signal's length)."""
    n = x.shape[-1]
    g = np.ones(n)
    g[:fade_in] = fade_curve(fade_in, shape, True)
    g[n - fade_out:] *= fade_curve(fade_out, shape, False)
    return _out(x * g, x)


def bartlett(n: int) -> np.ndarray:
    """The periodic Bartlett (triangular) window of ``n`` points: 0 at the start, 1 in the middle."""
    if n == 1:
        return np.ones(1)
    return 1.0 - np.abs(2.0 * np.arange(n) / n - 1.0)


def dither(x: np.ndarray, offset: np.ndarray | float, noise_shaping: bool) -> np.ndarray:
    """``x`` requantised to 16 bits: ``round(x * 32766 + offset) / 32768``, with ``offset`` the
    dither in LSB (a scalar or an array broadcast over ``x``; rounding half away from zero), and with
    ``noise_shaping`` each sample's quantisation error added to the next sample of its channel.
    Computed in the input's float dtype."""
    dt = x.dtype
    scaled = x * dt.type(32766) + np.asarray(offset, dtype=dt)
    q = (np.sign(scaled) * np.floor(np.abs(scaled) + dt.type(0.5))) / dt.type(32768)
    if noise_shaping and x.shape[-1] > 1:
        q[..., 1:] += q[..., :-1] - x[..., :-1]
    return q.astype(dt, copy=False)
