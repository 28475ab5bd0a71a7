"""Band-limited resampling on the last axis by a windowed-sinc polyphase kernel.

The rates are reduced by their greatest common divisor to ``orig`` input and ``new`` output samples
per period; one kernel row per output phase is applied as a strided convolution.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["resample", "sinc_kernel"]


def sinc_kernel(orig: int, new: int, lowpass_filter_width: int, rolloff: float, kaiser_beta: float | None
                ) -> tuple[np.ndarray, int]:
    """The (new, 2 * width + orig) polyphase kernel and its half ``width`` in input samples; a
    Hann window (``kaiser_beta`` None) or a Kaiser window with that beta tapers the sinc.

    Examples:
        >>> k, w = sinc_kernel(1, 2, 6, 0.99, None)
        >>> k.shape, w
        ((2, 15), 7)
    """
    base = min(orig, new) * rolloff
    width = math.ceil(lowpass_filter_width * orig / base)
    idx = np.arange(-width, width + orig, dtype=np.float64) / orig
    t = (np.arange(0, -new, -1, dtype=np.float64)[:, None] / new + idx[None, :]) * base
    return _sinc_window(t, lowpass_filter_width, kaiser_beta) * (base / orig), width


def resample(x: np.ndarray, orig_freq: float, new_freq: float, lowpass_filter_width: int = 6,
             rolloff: float = 0.99, kaiser_beta: float | None = None) -> np.ndarray:
    """``x`` (..., time) resampled from ``orig_freq`` to ``new_freq``: ``ceil(new * n / orig)``
    samples (rates reduced by their gcd), in ``x``'s float dtype.

    Examples:
        >>> resample(np.ones(4), 2, 2).tolist()
        [1.0, 1.0, 1.0, 1.0]
    """
    orig, new = int(orig_freq), int(new_freq)
    if orig == new:
        return x.copy()
    g = math.gcd(orig, new)
    orig, new = orig // g, new // g
    dt = x.dtype
    n = x.shape[-1]
    target = math.ceil(new * n / orig)
    base = min(orig, new) * rolloff
    width = math.ceil(lowpass_filter_width * orig / base)
    xp = np.pad(x.astype(np.float64), [(0, 0)] * (x.ndim - 1) + [(width, width + orig)])
    if new * (2 * width + orig) <= _DENSE_LIMIT:
        kernel, _ = sinc_kernel(orig, new, lowpass_filter_width, rolloff, kaiser_beta)
        frames = np.lib.stride_tricks.sliding_window_view(xp, kernel.shape[1], axis=-1)[..., ::orig, :]
        y = np.matmul(frames, kernel.T).reshape(x.shape[:-1] + (-1,))
        return y[..., :target].astype(dt, copy=False)
    # Co-prime rates far apart (e.g. 19027 -> 16000): the dense kernel would have new x (orig + 2 width)
    # entries, almost all zero; each output sample takes only the taps where the window is non-zero.
    j = np.arange(target)
    frame, phase = j // new, j % new
    centre = width + orig * phase / new
    reach = orig * lowpass_filter_width / base
    first = np.maximum(np.floor(centre - reach).astype(np.int64), 0)
    taps = first[:, None] + np.arange(int(math.ceil(2 * reach)) + 2)[None, :]
    taps = np.minimum(taps, 2 * width + orig - 1)
    t = (-phase[:, None] / new + (taps - width) / orig) * base
    weights = _sinc_window(t, lowpass_filter_width, kaiser_beta) * (base / orig)
    weights[np.diff(taps, axis=1, prepend=-1) == 0] = 0.0   # taps clipped at the end count once
    y = np.sum(xp[..., frame[:, None] * orig + taps] * weights, axis=-1)
    return y.astype(dt, copy=False)


_DENSE_LIMIT = 4_000_000


def _sinc_window(t: np.ndarray, lowpass_filter_width: int, kaiser_beta: float | None) -> np.ndarray:
    """The windowed sinc at ``t`` (in zero crossings), clipped to +-lowpass_filter_width."""
    t = np.clip(t, -lowpass_filter_width, lowpass_filter_width)
    if kaiser_beta is None:
        win = np.cos(t * math.pi / lowpass_filter_width / 2.0) ** 2
    else:
        r = t / lowpass_filter_width
        win = np.i0(kaiser_beta * np.sqrt(np.clip(1.0 - r * r, 0.0, None))) / np.i0(kaiser_beta)
    t = t * math.pi
    with np.errstate(divide="ignore", invalid="ignore"):
        sinc = np.where(t == 0.0, 1.0, np.sin(t) / np.where(t == 0.0, 1.0, t))
    return sinc * win
