"""Short-time Fourier analysis on the last axis of a signal: windows, the STFT and its inverse,
power spectra, decibels, and the per-frame measures built on them (spectral centroid, deltas,
sliding-window mean normalisation, phase vocoder, Griffin-Lim).

Complex values travel as real arrays with a trailing axis of 2 (real, imaginary). Spectra have the
layout ``(..., freq, time)``. A float64 input is computed in float64; any other input in float32.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable

import numpy as np

from headrace._audio.filters import native

__all__ = ["KAISER_BETA", "amplitude_to_db", "as_complex", "as_pairs", "compute_deltas", "db_to_amplitude", "fft_module",
           "griffin_lim", "istft", "linspace_as", "phase_vocoder", "sliding_window_cmn", "spectral_centroid", "stft",
           "window", "work_dtype"]

KAISER_BETA = 12.0
_PAD_MODES = ("constant", "edge", "reflect", "symmetric")


def fft_module() -> Any:
    """``scipy.fft``, imported on first use (SciPy's import is slow: only once an op computes an
    STFT). The STFT ops call it when they are made, so that a pipeline's fork server preloads it
    and its worker processes do not import it each (~0.13 s before a worker's first clip)."""
    from scipy import fft  # noqa: PLC0415

    return fft


def work_dtype(x: np.ndarray) -> np.dtype:
    """float64 for a float64 signal, float32 for anything else."""
    return np.dtype(np.float64) if x.dtype == np.float64 else np.dtype(np.float32)


def as_complex(x: np.ndarray) -> np.ndarray:
    """A ``(..., 2)`` real array as complex (complex128 for float64, else complex64)."""
    dt = np.complex128 if x.dtype == np.float64 else np.complex64
    return (x[..., 0] + 1j * x[..., 1]).astype(dt, copy=False)


def as_pairs(z: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A complex array as real ``(..., 2)`` of ``dtype``."""
    return np.stack([z.real, z.imag], axis=-1).astype(dtype, copy=False)


def window(kind: str, length: int, dtype: np.dtype | type = np.float64) -> np.ndarray:
    """A periodic window of ``length`` samples: ``hann``, ``hamming``, ``blackman``, ``bartlett``
    or ``kaiser`` (beta 12).

    Examples:
        >>> window("hann", 4).round(6).tolist()
        [0.0, 0.5, 1.0, 0.5]
    """
    if length <= 0:
        return np.zeros(0, dtype)
    n = np.arange(length, dtype=np.float64)
    t = 2.0 * math.pi * n / length
    # MindSpore's constants are float32 (0.54, 0.46, 0.42, 0.08), and bartlett's and kaiser's 2 n / length
    # is a float32 division; the rest is float64, rounded to float32 at the end
    f32 = np.float32
    if kind == "hann":
        w = 0.5 - 0.5 * np.cos(t)
    elif kind == "hamming":
        w = float(f32(0.54)) - float(f32(0.46)) * np.cos(t)
    elif kind == "blackman":
        w = float(f32(0.42)) - 0.5 * np.cos(t) + float(f32(0.08)) * np.cos(2.0 * t)
    elif kind in ("bartlett", "kaiser"):
        # (kaiser: periodic, the symmetric window of length + 1 without its last point)
        r = (n.astype(f32) * f32(2) / f32(length)).astype(np.float64) - 1.0
        if kind == "bartlett":
            w = 1.0 - np.abs(r)
        else:
            w = np.i0(KAISER_BETA * np.sqrt(np.clip(1.0 - r * r, 0.0, None))) / np.i0(KAISER_BETA)
    else:
        raise ValueError(f"unknown window {kind!r}")
    return w.astype(dtype)


@functools.lru_cache(maxsize=16)
def _padded_window(kind: str, n_fft: int, win_length: int, dtype: np.dtype) -> np.ndarray:
    """The window centred in ``n_fft`` zeros; read-only (kept: making it took 7.6 us, each STFT)."""
    w = np.zeros(n_fft, dtype)
    left = (n_fft - win_length) // 2
    w[left:left + win_length] = window(kind, win_length, dtype)
    w.flags.writeable = False
    return w


def _pad_last(x: np.ndarray, half: int, mode: str) -> np.ndarray:
    """``x`` padded by ``half`` samples on both sides of its last axis in ``mode``; reflect (the
    default of every centred STFT) by slices (2.2 against ``np.pad``'s 11.7 us on a 1 s clip)."""
    n = x.shape[-1]
    if mode != "reflect" or half == 0 or half >= n:
        return np.pad(x, [(0, 0)] * (x.ndim - 1) + [(half, half)], mode=mode)  # type: ignore[call-overload]
    out = np.empty(x.shape[:-1] + (n + 2 * half,), x.dtype)
    out[..., half:half + n] = x
    r = x[..., ::-1]  # r[j] = x[n - 1 - j]: the left edge is x[half] .. x[1], the right x[n - 2] .. x[n - 1 - half]
    out[..., :half] = r[..., n - 1 - half:n - 1]
    out[..., half + n:] = r[..., 1:half + 1]
    return out


def _frames(x: np.ndarray, n_fft: int, hop_length: int) -> np.ndarray:
    """Read-only view of ``x``'s frames of ``n_fft`` samples every ``hop_length``: (..., frames, n_fft)."""
    x = np.ascontiguousarray(x)
    count = (x.shape[-1] - n_fft) // hop_length + 1
    step = x.strides[-1]
    return np.lib.stride_tricks.as_strided(x, x.shape[:-1] + (count, n_fft), x.strides[:-1] + (hop_length * step, step),
                                           writeable=False)


def stft(x: np.ndarray, n_fft: int, hop_length: int, win_length: int, window_kind: str, *, pad: int = 0,
         center: bool = True, pad_mode: str = "reflect", onesided: bool = True,
         normalized: bool = False, direct: bool = False, freq_last: bool = False) -> np.ndarray:
    """Complex STFT of ``x`` (..., time) -> (..., freq, frames) (complex64, or complex128 for a
    float64 signal). ``pad`` zeros on each side first; with ``center`` the signal is padded by
    ``n_fft // 2`` on each side in ``pad_mode`` (``constant``, ``edge``, ``reflect``,
    ``symmetric``). ``normalized`` divides by the window's L2 norm. ``direct`` (onesided, with the
    C extension) sums the DFT term by term in the signal's precision as MindSpore does, instead of
    an FFT: equal to MindSpore's spectrum, ~n_fft / 10 times slower. ``freq_last``: the layout
    (..., frames, freq) instead, contiguous (the FFT's own; the default is a view of it).

    Raises:
        ValueError: the signal is too short for one frame, or for ``reflect`` padding.
    """
    dt = work_dtype(x)
    x = x.astype(dt, copy=False)
    if pad > 0:
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(pad, pad)])
    if center:
        half = n_fft // 2
        if pad_mode == "reflect" and x.shape[-1] <= half:
            raise ValueError(f"reflect padding of {half} needs more than {half} samples, got {x.shape[-1]}")
        x = _pad_last(x, half, pad_mode)
    if x.shape[-1] < n_fft:
        raise ValueError(f"a frame of {n_fft} samples needs at least {n_fft} samples, got {x.shape[-1]}")
    w = _padded_window(window_kind, n_fft, win_length, dt)
    seg = _frames(x, n_fft, hop_length) * w
    sfft = fft_module()

    if direct and onesided and native is not None:
        spec = _direct_dft(seg)
    else:
        # scipy's pocketfft keeps float32 in complex64 and is ~8x faster than np.fft on 400-point frames here
        spec = sfft.rfft(seg, axis=-1) if onesided else sfft.fft(seg, axis=-1)
    if normalized:
        spec = spec / np.sqrt(np.sum(w.astype(np.float64) ** 2)).astype(dt)
    return spec if freq_last else np.swapaxes(spec, -1, -2)


@functools.lru_cache(maxsize=8)
def _dft_tables(n: int, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of ``2 pi i k / n`` for the onesided bins i and k < n: computed in float64 by the
    C library, then rounded to ``dtype`` (MindSpore's twiddles); read-only."""
    i = np.arange(n // 2 + 1, dtype=np.float64)[:, None]
    k = np.arange(n, dtype=np.float64)[None, :]
    phase = np.ascontiguousarray(2.0 * math.pi * i * k / n)
    pairs = np.empty(phase.shape + (2,))
    native.polar(np.ones_like(phase), phase, pairs)
    cos, sin = np.ascontiguousarray(pairs[..., 0], dtype), np.ascontiguousarray(pairs[..., 1], dtype)
    cos.flags.writeable = sin.flags.writeable = False
    return cos, sin


def _direct_dft(seg: np.ndarray) -> np.ndarray:
    """The onesided DFT of each frame of ``seg`` (..., frames, n) by direct sums, in its precision."""
    n = seg.shape[-1]
    cos, sin = _dft_tables(n, seg.dtype)
    src = np.ascontiguousarray(seg)
    out = np.empty(src.shape[:-1] + (cos.shape[0], 2), src.dtype)
    native.dft(src, cos, sin, out, n)
    return out[..., 0] + 1j * out[..., 1]


def istft(spec: np.ndarray, n_fft: int, hop_length: int, win_length: int, window_kind: str, *,
          center: bool = True, onesided: bool = True, normalized: bool = False,
          length: int | None = None, pad: int = 0) -> np.ndarray:
    """Inverse of :func:`stft` by least-squares overlap-add: complex (..., freq, frames) ->
    (..., time), the squared window's overlap-add divided out where it is not tiny. ``length``
    fixes the output length (cut or zero-padded); ``pad`` removes the zeros :func:`stft` added.
    """
    real_dt = np.float64 if spec.dtype == np.complex128 else np.float32
    w = _padded_window(window_kind, n_fft, win_length, np.dtype(np.float64))
    if normalized:
        spec = spec * np.sqrt(np.sum(w ** 2))
    z = np.swapaxes(spec, -1, -2)
    frames = np.fft.irfft(z, n=n_fft, axis=-1) if onesided else np.fft.ifft(z, n=n_fft, axis=-1).real
    frames = frames.astype(np.float64) * w
    n_frames = frames.shape[-2]
    total = n_fft + hop_length * (n_frames - 1)
    y = np.zeros(frames.shape[:-2] + (total,))
    env = np.zeros(total)
    w2 = w * w
    for i in range(n_frames):
        s = i * hop_length
        y[..., s:s + n_fft] += frames[..., i, :]
        env[s:s + n_fft] += w2
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length + 2 * pad
    else:  # MindSpore drops 2 * (n_fft // 2) samples with or without centring (from the end when not centred)
        end = start + total - 2 * (n_fft // 2)
    end = min(end, total)
    y = y[..., start:end]
    env = env[start:end]
    if np.any(np.abs(env) < 1e-11):
        raise ValueError("window overlap-add is zero somewhere: the STFT cannot be inverted")
    y = y / env
    if pad > 0:
        y = y[..., pad:y.shape[-1] - pad] if length is None else y[..., pad:pad + length]
    if length is not None and y.shape[-1] < length:
        y = np.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, length - y.shape[-1])])
    return y.astype(real_dt)


def power_spectrum(spec: np.ndarray, power: float) -> np.ndarray:
    """``|spec| ** power`` (``re² + im²`` for power 2, without a square root), in ``spec``'s layout."""
    if power == 2.0:
        if spec.ndim >= 2 and spec.strides[-1] != spec.itemsize and spec.strides[-2] == spec.itemsize:
            return np.swapaxes(power_spectrum(np.swapaxes(spec, -1, -2), power), -1, -2)
        if spec.ndim and spec.strides[-1] == spec.itemsize and spec.dtype.kind == "c":
            # the squares of (re, im) pairs in one pass, then pairwise sums: the same float roundings
            # as re * re + im * im, in 9.0 against 13.9 us on a 1 s clip's spectrum (3 temporaries of strided halves)
            sq = np.square(spec.view(spec.real.dtype))
            return np.add(sq[..., 0::2], sq[..., 1::2])
        return spec.real * spec.real + spec.imag * spec.imag
    mag = np.abs(spec)
    return mag if power == 1.0 else mag ** power


__all__ += ["power_spectrum"]


def amplitude_to_db(x: np.ndarray, multiplier: float, amin: float, db_multiplier: float,
                    top_db: float | None) -> np.ndarray:
    """``multiplier * log10(max(x, amin)) - multiplier * db_multiplier``; with ``top_db`` values
    below (maximum - top_db) are raised to it, the maximum taken over the last three axes (all
    channels of one item of a batch)."""
    dt = work_dtype(x)
    x = x.astype(dt, copy=False)
    db = multiplier * np.log10(np.maximum(x, dt.type(amin)))
    db -= dt.type(multiplier * db_multiplier)
    if top_db is not None and db.size:
        axes = tuple(range(max(0, db.ndim - 3), db.ndim))
        floor = db.max(axis=axes, keepdims=True) - dt.type(top_db)
        db = np.maximum(db, floor)
    return db.astype(dt, copy=False)


def db_to_amplitude(x: np.ndarray, ref: float, power: float) -> np.ndarray:
    """``ref * 10 ** (x / 10) ** power``: decibels back to power (power 1) or amplitude (0.5)."""
    dt = work_dtype(x)
    # in float64 and as one power, so that a float32 result in range is not lost to an overflowing
    # intermediate (10 ** 50 ** 0.5)
    return (ref * np.power(10.0, x.astype(np.float64) * (0.1 * power))).astype(dt)


def compute_deltas(x: np.ndarray, win_length: int, pad_mode: str) -> np.ndarray:
    """Delta coefficients over the last axis: ``sum_n n (x[t+n] - x[t-n]) / (2 sum_n n²)`` for
    ``n = 1 .. (win_length - 1) // 2``, the ends padded in ``pad_mode``."""
    dt = work_dtype(x)
    x = x.astype(dt, copy=False)
    n = (win_length - 1) // 2
    denom = n * (n + 1) * (2 * n + 1) / 3.0
    xp = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)], mode=pad_mode)  # type: ignore[call-overload]
    t = x.shape[-1]
    out = np.zeros(x.shape, np.float64)
    for k in range(1, n + 1):
        out += k * (xp[..., n + k:n + k + t].astype(np.float64) - xp[..., n - k:n - k + t])
    return (out / denom).astype(dt)


def sliding_window_cmn(x: np.ndarray, cmn_window: int, min_cmn_window: int, center: bool,
                       norm_vars: bool) -> np.ndarray:
    """Cepstral mean (and variance) normalisation over a sliding window of frames; ``x`` is
    (..., time, feature). Each frame subtracts the mean of its window (Kaldi's rules: the window
    is shifted to fit inside the signal, at least ``min_cmn_window`` frames when not centred)."""
    dt = work_dtype(x)
    xf = x.astype(np.float64)
    t = xf.shape[-2]
    c0 = np.concatenate([np.zeros(xf.shape[:-2] + (1, xf.shape[-1])), np.cumsum(xf, axis=-2)], axis=-2)
    c1 = None
    if norm_vars:
        c1 = np.concatenate([np.zeros(xf.shape[:-2] + (1, xf.shape[-1])), np.cumsum(xf * xf, axis=-2)], axis=-2)
    out = np.empty_like(xf)
    last_window_start = -1
    last_window_end = -1
    for i in range(t):
        if center:
            start = i - cmn_window // 2
            end = start + cmn_window
        else:
            start = i - cmn_window
            end = i + 1
        if start < 0:
            end -= start
            start = 0
        if not center and end > i:
            end = max(i + 1, min_cmn_window)
        if end > t:
            start -= end - t
            end = t
            if start < 0:
                start = 0
        last_window_start, last_window_end = start, end
        n = last_window_end - last_window_start
        s = c0[..., last_window_end, :] - c0[..., last_window_start, :]
        mean = s / n
        out[..., i, :] = xf[..., i, :] - mean
        if c1 is not None:
            sq = c1[..., last_window_end, :] - c1[..., last_window_start, :]
            var = sq / n - mean * mean
            out[..., i, :] /= np.sqrt(var)
    return out.astype(dt)


def spectral_centroid(mag: np.ndarray, sample_rate: int, n_fft: int) -> np.ndarray:
    """Centroid frequency of each frame of a onesided magnitude spectrum (..., freq, frames) ->
    (..., 1, frames); NaN for a silent frame."""
    freqs = np.linspace(0.0, sample_rate // 2, 1 + n_fft // 2).reshape(-1, 1)
    m = mag.astype(np.float64)
    num = np.sum(freqs * m, axis=-2, keepdims=True)
    den = np.sum(m, axis=-2, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return num / den


def _angle(pairs: np.ndarray) -> np.ndarray:
    """atan2(imaginary, real) of (..., 2) pairs, in their precision (the C library's, see
    ``headrace/_native/_audiofilter.c``; NumPy's without the extension)."""
    if native is None:
        return np.arctan2(pairs[..., 1], pairs[..., 0])
    src = np.ascontiguousarray(pairs)
    out = np.empty(src.shape[:-1], src.dtype)
    native.angle(src, out)
    return out


def _polar(mag: np.ndarray, phase: np.ndarray) -> np.ndarray:
    """(cos(phase) * mag, sin(phase) * mag) as (..., 2) pairs, in the precision of ``mag``."""
    if native is None:
        return np.stack([np.cos(phase) * mag, np.sin(phase) * mag], axis=-1)
    mag, phase = np.ascontiguousarray(mag), np.ascontiguousarray(phase, mag.dtype)
    out = np.empty(mag.shape + (2,), mag.dtype)
    native.polar(mag, phase, out)
    return out


def linspace_as(stop: float, n: int, dtype: np.dtype) -> np.ndarray:
    """``n`` points from 0 to ``stop`` as MindSpore lays them out in ``dtype``: ``i * (stop / (n -
    1))`` with every step rounded to ``dtype`` (the float32 points differ from float64's rounded)."""
    t = np.dtype(dtype).type
    step = t(t(stop) / t(n - 1)) if n > 1 else t(0)
    return np.arange(n, dtype=dtype) * step


def phase_vocoder(spec: np.ndarray, rate: float, phase_advance: np.ndarray) -> np.ndarray:
    """Speeds a complex STFT (..., freq, frames) up by ``rate`` without changing its pitch:
    magnitudes interpolated between neighbouring frames, phases advanced by each bin's measured
    frequency. ``phase_advance`` is (freq, 1), the expected advance per hop.

    The phases of a complex64 spectrum are summed in float32 over the frames and reach hundreds of
    radians, where one float32 step moves the output by ~1e-5 of its peak, so every step follows
    MindSpore's arithmetic (checked against its outputs, equal to the last bit with the C
    extension): frame positions ``float32(i) * float32(rate)``; the measured advance wrapped to
    [-pi, pi] in float64 and rounded once; angles and the polar form from the C library's atan2 /
    cos / sin; magnitudes ``sqrt(re**2 + im**2)`` in float64."""
    real_dt = np.dtype(np.float64) if spec.dtype == np.complex128 else np.dtype(np.float32)
    rate32 = np.float32(rate)
    if abs(float(rate32) - 1.0) <= float(np.finfo(np.float32).eps):
        return spec
    n = spec.shape[-1]
    steps = np.arange(int(n / float(rate32)) + 3, dtype=np.float32) * rate32
    steps = steps[steps < n]  # (non-decreasing: the values below n are a prefix)
    alphas = np.fmod(steps.astype(np.float64), 1.0).astype(real_dt)
    idx = steps.astype(np.int64)
    pairs = np.stack([spec.real, spec.imag], axis=-1).astype(real_dt, copy=False)
    pairs = np.concatenate([pairs, np.zeros(pairs.shape[:-2] + (2, 2), real_dt)], axis=-2)
    angles = _angle(pairs)
    norms = np.sqrt(np.square(pairs[..., 0], dtype=np.float64) + np.square(pairs[..., 1], dtype=np.float64))
    norms = norms.astype(real_dt, copy=False)
    adv = phase_advance.reshape(-1, 1).astype(real_dt)
    d = (angles[..., idx + 1] - angles[..., idx] - adv).astype(np.float64)
    q = d / (2.0 * math.pi)
    d = d - 2.0 * math.pi * np.where(q >= 0, np.floor(q + 0.5), np.ceil(q - 0.5)) + adv.astype(np.float64)
    phase = np.concatenate([angles[..., :1], d[..., :-1].astype(real_dt)], axis=-1)
    phase_acc = np.cumsum(phase, axis=-1, dtype=real_dt)  # (sequential, in real_dt)
    mag = alphas * norms[..., idx + 1] + (1 - alphas) * norms[..., idx]
    out = _polar(mag, phase_acc)
    return (out[..., 0] + 1j * out[..., 1]).astype(spec.dtype, copy=False)


def _as_shape(spec: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``spec`` (..., freq, frames) read row-major into ``shape`` per (freq, frames) matrix."""
    if spec.shape == shape:
        return spec
    n = shape[-2] * shape[-1]
    flat = spec.reshape(spec.shape[:-2] + (-1,))
    if flat.shape[-1] >= n:
        flat = flat[..., :n]
    else:
        flat = np.concatenate([flat, np.zeros(flat.shape[:-1] + (n - flat.shape[-1],), flat.dtype)], axis=-1)
    return flat.reshape(shape)


def griffin_lim(spec: np.ndarray, n_fft: int, n_iter: int, win_length: int, hop_length: int,
                window_kind: str, power: float, momentum: float, length: int | None,
                init: Callable[[tuple[int, ...]], np.ndarray] | None) -> np.ndarray:
    """A waveform whose STFT magnitude approximates ``spec`` (..., freq, frames) ** (1 / power),
    by ``n_iter`` fast Griffin-Lim iterations (each projection pushed on by ``momentum / (1 +
    momentum)`` of its change). With ``length`` every inverse is cut or padded to it; a re-analysed
    spectrogram of another frame count is laid over the original's shape in row-major order, as
    MindSpore does (extra values dropped; missing ones zero, where MindSpore reads past its data).
    ``init(shape)`` returns the starting phase angles (None: zero phase)."""
    dt = work_dtype(spec)
    mag = np.power(spec.astype(np.float64), 1.0 / power)
    if init is None:
        angles = np.ones(mag.shape, np.complex128)
    else:
        angles = np.exp(1j * init(mag.shape))
    rebuilt = np.zeros(mag.shape, np.complex128)
    for _ in range(n_iter):
        tprev = rebuilt
        wave = istft(mag * angles, n_fft, hop_length, win_length, window_kind, length=length)
        rebuilt = _as_shape(stft(wave, n_fft, hop_length, win_length, window_kind), mag.shape)
        angles = rebuilt + (momentum / (1.0 + momentum)) * (rebuilt - tprev) if momentum else rebuilt
        angles = angles / (np.abs(angles) + 1e-16)
    wave = istft(mag * angles, n_fft, hop_length, win_length, window_kind, length=length)
    return wave.astype(dt)
