"""sox's time-varying effects, vectorised: overdrive, phaser, flanger, and the NCCF pitch detector.

sox runs these sample by sample. Here the linear recurrences go through ``scipy.signal.lfilter``;
the phaser's modulated feedback delay (each output depends on one earlier output) is solved for all
samples at once by pointer jumping (:func:`chain_recurrence`); the flanger, without feedback, reads
its delay line with array indexing, and with feedback runs in blocks as long as its shortest delay.
Signals are computed in float64.
"""
from __future__ import annotations

import math

import numpy as np

from headrace._audio.filters import scipy_signal

__all__ = ["best_lag", "chain_recurrence", "detect_pitch", "flanger", "overdrive", "phaser", "wave_table"]


def wave_table(kind: str, size: int, lo: float, hi: float, phase: float, as_int: bool) -> np.ndarray:
    """One period of a sine or triangle LFO of ``size`` points between ``lo`` and ``hi``, starting
    at ``phase`` radians; ``as_int`` rounds half away from zero to integers, else float32 values
    (returned as float64)."""
    offset = int(phase / math.pi / 2 * size + 0.5)
    point = (np.arange(size) + offset) % size
    # float32 values are MindSpore's table to the last bit: the unit sine computed in float64, the
    # unit triangle in float32, scaled in float32 (a rounding for the product, one for the sum).
    # Computed in float64 and rounded once, 1 value in 9 (sine) or 11 (triangle) was a float32 step
    # off: up to 1.5e-5 of the peak in the flanger's output
    dt = np.float64 if as_int else np.float32
    if kind == "sine":
        d = ((np.sin(point / size * 2 * math.pi) + 1) / 2).astype(dt)
    else:
        d = point.astype(dt) * dt(2) / dt(size)
        quarter = (4 * point) // size
        d = np.select([quarter == 0, quarter == 1, quarter == 2], [d + dt(0.5), dt(1.5) - d, dt(1.5) - d],
                      d - dt(1.5))
    d = d * dt(hi - lo) + dt(lo)
    if as_int:
        return np.where(d < 0, d - 0.5, d + 0.5).astype(np.int64)
    return d.astype(np.float64)


def overdrive(x: np.ndarray, gain_db: float, colour: float) -> np.ndarray:
    """sox's ``overdrive``: a soft clipper (cubic between -1 and 1) with a DC-blocking high-pass
    (``y[n] = t[n] - t[n-1] + 0.995 y[n-1]``), mixed back with half the dry signal, clipped."""
    t = x * math.exp(gain_db * math.log(10) * 0.05) + colour / 200.0
    t = np.where(t < -1, -2.0 / 3.0, np.where(t > 1, 2.0 / 3.0, t - t ** 3 / 3.0))
    y = scipy_signal().lfilter([1.0, -1.0], [1.0, -0.995], t, axis=-1)
    return np.clip(x * 0.5 + y * 0.75, -1.0, 1.0)


def chain_recurrence(u: np.ndarray, coef: float, parent: np.ndarray) -> np.ndarray:
    """Solves ``y[..., i] = u[..., i] + coef * y[..., parent[i]]`` (``parent[i] < i``; -1: no term)
    over the last axis, by pointer jumping: ceil(log2(n)) vectorised rounds instead of n steps."""
    n = u.shape[-1]
    acc = u.astype(np.float64, copy=True)
    mult = np.where(parent >= 0, coef, 0.0)
    par = np.where(parent >= 0, parent, n)  # n: a sentinel slot holding zeros
    acc = np.concatenate([acc, np.zeros(acc.shape[:-1] + (1,))], axis=-1)
    mult = np.append(mult, 0.0)
    par = np.append(par, n)
    while True:
        live = par[:n] != n
        if not live.any():
            break
        acc[..., :n] += mult[:n] * acc[..., par[:n]]
        mult[:n] = mult[:n] * mult[par[:n]]
        par[:n] = par[par[:n]]
    return acc[..., :n]


def phaser(x: np.ndarray, sample_rate: int, gain_in: float, gain_out: float, delay_ms: float, decay: float,
           mod_speed: float, sinusoidal: bool) -> np.ndarray:
    """sox's ``phaser``: ``y[i] = gain_in x[i] + decay y[i - lag_i]`` with the lag swept by an LFO
    between 1 and the delay line's length, output ``gain_out y`` clipped to [-1, 1]."""
    n = x.shape[-1]
    length = int(delay_ms * 0.001 * sample_rate + 0.5)
    mod_len = int(sample_rate / mod_speed + 0.5)
    if length <= 0 or mod_len <= 0:
        return np.clip(x * gain_in * gain_out, -1.0, 1.0)
    table = wave_table("sine" if sinusoidal else "triangle", mod_len, 1.0, float(length), math.pi / 2, True)
    i = np.arange(n)
    # step i reads the slot after the one written last, shifted by the LFO, then writes the next
    # slot: the value read is the output of L - m + 1 steps before (m in [1, L])
    lag = length - table[i % mod_len] + 1
    parent = i - lag
    y = chain_recurrence(x * gain_in, decay, np.where(parent >= 0, parent, -1))
    return np.clip(y * gain_out, -1.0, 1.0)


def flanger(x: np.ndarray, sample_rate: int, delay: float, depth: float, regen: float, width: float,
            speed: float, phase: float, triangular: bool, quadratic: bool) -> np.ndarray:
    """sox's ``flanger`` on <..., channel, time>: the dry signal mixed with a copy delayed by
    ``delay`` + an LFO sweep of ``depth`` ms (channel c's LFO ``phase`` % of a period later than
    channel c-1's), read with linear or quadratic interpolation, ``regen`` % of it fed back into the
    delay line; clipped to [-1, 1]."""
    n = x.shape[-1]
    channels = x.shape[-2]
    feedback = regen / 100.0
    wet = width / 100.0
    in_gain = 1.0 / (1.0 + wet)
    wet = wet / (1.0 + wet) * (1.0 - abs(feedback))
    line = int((delay + depth) / 1000.0 * sample_rate + 0.5) + 2
    lfo_len = int(sample_rate / speed)
    lo = math.floor(delay / 1000.0 * sample_rate + 0.5)
    lfo = wave_table("triangle" if triangular else "sine", lfo_len, float(lo), float(line - 2),
                     3 * math.pi / 2, False)
    shift = (np.arange(channels) * lfo_len * (phase / 100.0) + 0.5).astype(np.int64)
    delays = lfo[(np.arange(n)[None, :] + shift[:, None]) % lfo_len]  # (channel, time)
    whole = np.floor(delays).astype(np.int64)
    frac = delays - whole
    taps = 3 if quadratic else 2
    # the delay line (a ring of `line` slots) holds s[j] = x[j] + feedback * d[j - 1]; tap k at step
    # i reads s[i - (whole + k) % line] (a tap one ring length back reads the slot just written)
    steps = np.arange(n)[None, :]
    srcs = [steps - (whole + k) % line for k in range(taps)]  # (channel, time) each

    # the interpolation is linear in the taps: weights per tap, (channel, time) each
    if quadratic:
        weights = [1.0 + 0.5 * frac * frac - 1.5 * frac, 2.0 * frac - frac * frac, 0.5 * frac * frac - 0.5 * frac]
    else:
        weights = [1.0 - frac, frac]
    lead = x.shape[:-2]
    xs = x.reshape((-1, channels, n))
    pad = line + taps + 1
    padded = np.concatenate([np.zeros((xs.shape[0], channels, pad)), xs], axis=-1)
    ch = np.arange(channels)[:, None]
    d = sum(w * padded[:, ch, src + pad] for w, src in zip(weights, srcs))  # the taps of x
    if feedback != 0:
        d = _flanger_feedback(d, feedback, srcs, weights, pad)
    return np.clip(x * in_gain + d.reshape(lead + (channels, n)) * wet, -1.0, 1.0)


def _flanger_feedback(dry: np.ndarray, feedback: float, srcs: list[np.ndarray], weights: list[np.ndarray],
                      pad: int) -> np.ndarray:
    """The flanger's delayed signal with feedback, ``d[i] = dry[i] + feedback * sum_k w_k[i]
    d[src_k[i] - 1]`` (a tap reads s[j] = x[j] + feedback d[j - 1]; ``dry`` holds the x part).
    Every src_k[i] <= i, so samples go in blocks [i0, i1) whose taps all read at or before i0: a
    block needs only d before it. The blocks follow the LFO (long where the delay is long); a
    sample is computed alone only where its delay is 0."""
    batch, channels, n = dry.shape
    row = pad + n
    dp = np.zeros((batch, channels * row))  # d[c, j] at c * row + pad + j; zeros before the signal
    base = (np.arange(channels) * row + pad)[:, None]
    reads = [base + src - 1 for src in srcs]  # flat index of d[src - 1]
    writes = base + np.arange(n)[None, :]
    scaled = [feedback * w for w in weights]
    newest = np.max([src.max(axis=0) for src in srcs], axis=0)  # the latest s[j] a sample reads
    reach = np.maximum.accumulate(newest)
    i0 = 0
    while i0 < n:
        i1 = int(np.searchsorted(reach, i0, side="right"))
        acc = dry[:, :, i0:i1].copy()
        for w, r in zip(scaled, reads):
            acc += w[:, i0:i1] * dp[:, r[:, i0:i1]]
        dp[:, writes[:, i0:i1]] = acc
        i0 = i1
    return dp.reshape(batch, channels, row)[:, :, pad:]


def detect_pitch(x: np.ndarray, sample_rate: int, frame_time: float, win_length: int, freq_low: float,
                 freq_high: float) -> np.ndarray:
    """Pitch per frame in Hz over the last axis: the normalised cross-correlation of each frame
    with the signal ``lag`` samples later for lags up to ``sample_rate / freq_low``, the best lag
    above ``sample_rate / freq_high`` (see :func:`best_lag`), smoothed by a running median of
    ``win_length`` frames. Returns float64 of <..., frames>."""
    eps = 1e-9
    lags = int(math.ceil(sample_rate / freq_low))
    frame = int(math.ceil(sample_rate * frame_time))
    n = x.shape[-1]
    frames = int(math.ceil(n / frame))
    pad = lags + frames * frame - n
    xp = np.concatenate([x, np.zeros(x.shape[:-1] + (pad,))], axis=-1)
    head = xp[..., :frames * frame].reshape(x.shape[:-1] + (frames, frame))
    head_energy = (eps + np.sqrt((head * head).sum(-1))) ** 2
    nccf = np.empty(x.shape[:-1] + (frames, lags))
    for lag in range(1, lags + 1):
        tail = xp[..., lag:lag + frames * frame].reshape(x.shape[:-1] + (frames, frame))
        tail_energy = (eps + np.sqrt((tail * tail).sum(-1))) ** 2
        nccf[..., lag - 1] = (head * tail).sum(-1) / head_energy / tail_energy
    idx = best_lag(nccf, int(math.ceil(sample_rate / freq_high))).astype(np.float64)
    # running median (the lower one of an even window), the first frame repeated in front
    left = (win_length - 1) // 2
    idx = np.concatenate([np.repeat(idx[..., :1], left, axis=-1), idx], axis=-1)
    if idx.shape[-1] < win_length:
        smooth = np.zeros(idx.shape[:-1] + (0,))
    else:
        windows = np.lib.stride_tricks.sliding_window_view(idx, win_length, axis=-1)
        smooth = np.sort(windows, axis=-1)[..., (win_length - 1) // 2]
    return sample_rate / (eps + smooth)


def best_lag(nccf: np.ndarray, lag_min: int) -> np.ndarray:
    """The lag (1-based) of each frame's NCCF row over the last axis (lag ``k`` at index ``k - 1``),
    MindSpore's rule: the highest value at index ``lag_min`` or later (the first of equal ones);
    replaced by the highest of the first half ``[lag_min, lags // 2)`` when that one is above 0.99
    times it. Where the first half holds no index from ``lag_min`` on, the half is the single index
    ``lag_min`` (its lag wins whenever its value is within 1 % of the best: found against MindSpore
    2.10, where at freq_low 300, freq_high 400 it decides 16 of the 1,558 frames of 24 clips). Where
    no index is ``lag_min`` or later, every frame gets ``lag_min + 1``."""
    lags = nccf.shape[-1]
    if lag_min >= lags:
        return np.full(nccf.shape[:-1], lag_min + 1, np.int64)
    best_idx = nccf[..., lag_min:].argmax(-1)
    half = max(lags // 2, lag_min + 1)
    if half <= lags:
        best_val = nccf[..., lag_min:].max(-1)
        head = nccf[..., lag_min:half]
        best_idx = np.where(head.max(-1) > 0.99 * best_val, head.argmax(-1), best_idx)
    return best_idx + lag_min + 1
