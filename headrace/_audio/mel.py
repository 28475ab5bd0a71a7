"""Filter banks and the DCT matrix of mel and linear cepstra, and the mel-to-linear inversion.

Banks are float64 internally and have the layout ``(n_freqs, n_filters)``: a spectrum
``(..., n_freqs, time)`` goes to the filters as ``bank.T @ spectrum``.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["create_dct", "hz_to_mel", "inverse_mel", "linear_fbanks", "mel_to_hz", "melscale_fbanks"]

_F_SP = 200.0 / 3          # Slaney: Hz per mel below 1 kHz
_MIN_LOG_HZ = 1000.0
_LOGSTEP = math.log(6.4) / 27.0


def hz_to_mel(f: np.ndarray, slaney: bool) -> np.ndarray:
    """Hertz to mels: HTK's ``2595 log10(1 + f / 700)``, or Slaney's (linear below 1 kHz, log above)."""
    f = np.asarray(f, np.float64)
    if not slaney:
        return 2595.0 * np.log10(1.0 + f / 700.0)
    mel = f / _F_SP
    min_log_mel = _MIN_LOG_HZ / _F_SP
    log_part = min_log_mel + np.log(np.maximum(f, 1e-300) / _MIN_LOG_HZ) / _LOGSTEP
    return np.where(f >= _MIN_LOG_HZ, log_part, mel)


def mel_to_hz(m: np.ndarray, slaney: bool) -> np.ndarray:
    """Inverse of :func:`hz_to_mel`."""
    m = np.asarray(m, np.float64)
    if not slaney:
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)
    min_log_mel = _MIN_LOG_HZ / _F_SP
    return np.where(m >= min_log_mel, _MIN_LOG_HZ * np.exp(_LOGSTEP * (m - min_log_mel)), _F_SP * m)


def _triangles(all_freqs: np.ndarray, f_pts: np.ndarray) -> np.ndarray:
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts[None, :] - all_freqs[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        down = -slopes[:, :-2] / f_diff[:-1]
        up = slopes[:, 2:] / f_diff[1:]
    return np.maximum(0.0, np.minimum(down, up)) + 0.0  # (+ 0.0: no negative zeros)


def melscale_fbanks(n_freqs: int, f_min: float, f_max: float, n_mels: int, sample_rate: int,
                    slaney_norm: bool = False, slaney_scale: bool = False) -> np.ndarray:
    """Triangular mel filters over ``n_freqs`` bins spanning 0 .. ``sample_rate // 2``: (n_freqs, n_mels).

    The ``n_mels + 2`` corner frequencies are equally spaced in mels between ``f_min`` and ``f_max``
    (HTK's scale, or Slaney's with ``slaney_scale``); ``slaney_norm`` scales each filter to unit area.

    Examples:
        >>> melscale_fbanks(3, 0.0, 8000.0, 1, 16000).round(4).tolist()
        [[0.0], [0.6418], [0.0]]
    """
    all_freqs = np.linspace(0.0, sample_rate // 2, n_freqs)
    m = np.linspace(hz_to_mel(np.float64(f_min), slaney_scale), hz_to_mel(np.float64(f_max), slaney_scale),
                    n_mels + 2)
    f_pts = mel_to_hz(m, slaney_scale)
    fb = _triangles(all_freqs, f_pts)
    if slaney_norm:
        fb = fb * (2.0 / (f_pts[2:n_mels + 2] - f_pts[:n_mels]))[None, :]
    return fb


def linear_fbanks(n_freqs: int, f_min: float, f_max: float, n_filter: int, sample_rate: int) -> np.ndarray:
    """Triangular filters with corners equally spaced in Hz: (n_freqs, n_filter)."""
    all_freqs = np.linspace(0.0, sample_rate // 2, n_freqs)
    f_pts = np.linspace(f_min, f_max, n_filter + 2)
    return _triangles(all_freqs, f_pts)


def create_dct(n_out: int, n_in: int, ortho: bool) -> np.ndarray:
    """DCT-II matrix (n_in, n_out): ``cos(pi / n_in * (n + 0.5) * k)``, orthonormal with ``ortho``,
    otherwise scaled by 2.

    Examples:
        >>> create_dct(2, 2, True).round(4).tolist()
        [[0.7071, 0.7071], [0.7071, -0.7071]]
    """
    n = np.arange(n_in, dtype=np.float64)
    k = np.arange(n_out, dtype=np.float64)[:, None]
    dct = np.cos(math.pi / n_in * (n + 0.5) * k)
    if ortho:
        dct[0] *= 1.0 / math.sqrt(2.0)
        dct *= math.sqrt(2.0 / n_in)
    else:
        dct *= 2.0
    return dct.T.copy()


def inverse_mel(mel: np.ndarray, fb: np.ndarray, max_iter: int, tolerance_loss: float,
                tolerance_change: float, lr: float, momentum: float, start: np.ndarray) -> np.ndarray:
    """A non-negative linear spectrogram ``S`` (..., n_freqs, time) with ``fb.T @ S`` close to
    ``mel`` (..., n_mels, time), by SGD with momentum on the mean squared error from ``start``;
    stops after ``max_iter`` steps, when the loss is under ``tolerance_loss``, or when it changes
    by less than ``tolerance_change``."""
    fbt = fb.T
    s = start.astype(np.float64).copy()
    velocity = np.zeros_like(s)
    prev = math.inf
    n = mel.shape[-2] * mel.shape[-1]
    for _ in range(max_iter):
        diff = fbt @ s - mel
        loss = float(np.sum(diff * diff, axis=(-2, -1)).mean() / n) if diff.ndim > 2 else float(np.sum(diff * diff) / n)
        grad = (2.0 / n) * (fb @ diff)
        velocity = momentum * velocity + grad
        s = s - lr * velocity
        s = np.maximum(s, 0.0)
        if loss < tolerance_loss or abs(prev - loss) < tolerance_change:
            break
        prev = loss
    return s
