"""Band-limited resampling on the last axis by a windowed-sinc polyphase kernel.

The rates are reduced by their greatest common divisor to ``orig`` input and ``new`` output samples
per period; one kernel row per output phase is applied as a strided convolution.
"""
from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["resample", "sinc_kernel"]


def sinc_kernel(orig: int, new: int, lowpass_filter_width: int, rolloff: float, kaiser_beta: float | None,
                dtype: np.dtype = np.dtype(np.float64)) -> tuple[np.ndarray, int]:
    """The (new, 2 * width + orig) polyphase kernel and its half ``width`` in input samples; a
    Hann window (``kaiser_beta`` None) or a Kaiser window with that beta tapers the sinc.

    Computed as MindSpore computes it: the cut-off ``min(orig, new) * rolloff`` in float32, every
    step after it in ``dtype`` (float32 for a float32 signal: its taps differ from float64's rounded
    by up to ~1e-5 of the output's peak).

    Examples:
        >>> k, w = sinc_kernel(1, 2, 6, 0.99, None)
        >>> k.shape, w
        ((2, 15), 7)
    """
    base = _base(orig, new, rolloff)
    width = _width(orig, lowpass_filter_width, base)
    phase = np.arange(new)[:, None]
    taps = np.arange(2 * width + orig)[None, :]
    return _taps(phase, taps, orig, new, width, lowpass_filter_width, base, kaiser_beta, np.dtype(dtype)), width


def _taps(phase: np.ndarray, taps: np.ndarray, orig: int, new: int, width: int, lowpass_filter_width: int,
          base32: np.float32, kaiser_beta: float | None, dtype: np.dtype) -> np.ndarray:
    """The windowed sinc of output ``phase`` (0 .. new - 1) at input tap ``taps`` (0 .. 2 width +
    orig - 1) of a period, each step in ``dtype`` as MindSpore takes them: the time ``(-phase / new +
    (tap - width) / orig) * base`` clipped to +-lowpass_filter_width zero crossings, a Hann
    (``cos(t pi / width / 2) ** 2``) or Kaiser window, ``base / orig * sin(pi t) / (pi t)``."""
    t_ = dtype.type
    base = t_(base32)
    t = ((-phase).astype(dtype) / t_(new) + (taps - width).astype(dtype) / t_(orig)) * base
    t = np.clip(t, -lowpass_filter_width, lowpass_filter_width).astype(dtype, copy=False)
    if kaiser_beta is None:
        win = np.square(np.cos(t * t_(math.pi) / t_(lowpass_filter_width) / t_(2)))
    else:
        r = (t / t_(lowpass_filter_width)).astype(np.float64)
        arg = float(np.float32(kaiser_beta)) * np.sqrt(np.clip(1.0 - r * r, 0.0, None))
        win = (np.i0(arg) / t_(np.i0(float(np.float32(kaiser_beta))))).astype(dtype)
    t = t * t_(math.pi)
    scale = base / t_(orig)
    with np.errstate(divide="ignore", invalid="ignore"):
        sinc = np.where(t == 0, scale, scale * (np.sin(t) / np.where(t == 0, t_(1), t)))
    return (sinc * win).astype(dtype, copy=False)


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
    base = _base(orig, new, rolloff)
    width = _width(orig, lowpass_filter_width, base)
    # a float32 signal is filtered in float32 (the kernel rounded to it), as MindSpore does
    work = np.dtype(np.float32 if dt == np.float32 else np.float64)
    xp = np.zeros(x.shape[:-1] + (n + 2 * width + orig,), work)
    xp[..., width:width + n] = x
    if new * (2 * width + orig) <= _DENSE_LIMIT:
        kernel_t = _dense_kernel_t(orig, new, lowpass_filter_width, rolloff, kaiser_beta, work)
        frames = np.lib.stride_tricks.sliding_window_view(xp, kernel_t.shape[0], axis=-1)[..., ::orig, :]
        y = np.matmul(frames, kernel_t).reshape(x.shape[:-1] + (-1,))
        return y[..., :target].astype(dt, copy=False)
    # Co-prime rates far apart (e.g. 19027 -> 16000): the dense kernel would have new x (orig + 2 width)
    # entries, almost all zero; each output sample takes only the taps where the window is non-zero.
    j = np.arange(target)
    frame, phase = j // new, j % new
    centre = width + orig * phase / new
    reach = orig * lowpass_filter_width / float(base)
    first = np.maximum(np.floor(centre - reach).astype(np.int64), 0)
    taps = first[:, None] + np.arange(int(math.ceil(2 * reach)) + 2)[None, :]
    taps = np.minimum(taps, 2 * width + orig - 1)
    weights = _taps(phase[:, None], taps, orig, new, width, lowpass_filter_width, base, kaiser_beta, work)
    weights[np.diff(taps, axis=1, prepend=-1) == 0] = 0.0   # taps clipped at the end count once
    y = np.sum(xp[..., frame[:, None] * orig + taps] * weights, axis=-1)
    return y.astype(dt, copy=False)


_DENSE_LIMIT = 4_000_000


def _base(orig: int, new: int, rolloff: float) -> np.float32:
    """The cut-off ``min(orig, new) * rolloff``, in float32 as MindSpore keeps it."""
    return np.float32(min(orig, new)) * np.float32(rolloff)


def _width(orig: int, lowpass_filter_width: int, base: np.float32) -> int:
    """Half the kernel's length in input samples: ``ceil(lowpass_filter_width * orig / base)``."""
    return math.ceil(float(np.float32(lowpass_filter_width * orig) / base))


@functools.lru_cache(maxsize=16)
def _dense_kernel_t(orig: int, new: int, lowpass_filter_width: int, rolloff: float, kaiser_beta: float | None,
                    dtype: np.dtype) -> np.ndarray:
    """:func:`sinc_kernel` transposed, contiguous, in ``dtype`` and read-only (kept: building it
    costs as much as applying it to a 10 s clip)."""
    kernel, _ = sinc_kernel(orig, new, lowpass_filter_width, rolloff, kaiser_beta, dtype)
    out = np.ascontiguousarray(kernel.T, dtype)
    out.flags.writeable = False
    return out
