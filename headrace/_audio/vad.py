"""sox's voice-activity detector (``vad``): where the first speech in a recording starts.

The detector measures the signal every ``1 / measure_freq`` seconds: a Hann-windowed spectrum of
the last ``measure_duration`` seconds, smoothed over time, less a running estimate of the noise
spectrum, then the energy of its cepstrum between two lifter frequencies, on a log scale. Once the
smoothed measure of any channel reaches the trigger level, the recording is cut ``search_time``
(plus ``pre_trigger_time``) seconds before that point, less the measures that were quiet enough.

sox steps through every sample; nothing happens between two measures but the storing of samples,
so here the loop runs once per measure (20 per second by default), over all channels at once.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["VadParams", "vad_start"]


@dataclass(frozen=True)
class VadParams:
    """The detector's settings, in sox's units (seconds, Hz, dB-like levels)."""

    sample_rate: int
    trigger_level: float = 7.0
    trigger_time: float = 0.25
    search_time: float = 1.0
    allowed_gap: float = 0.25
    pre_trigger_time: float = 0.0
    boot_time: float = 0.35
    noise_up_time: float = 0.1
    noise_down_time: float = 0.01
    noise_reduction_amount: float = 1.35
    measure_freq: float = 20.0
    measure_duration: float | None = None
    measure_smooth_time: float = 0.4
    hp_filter_freq: float = 50.0
    lp_filter_freq: float = 6000.0
    hp_lifter_freq: float = 150.0
    lp_lifter_freq: float = 2000.0


def _hann(n: int) -> np.ndarray:
    return 0.5 - 0.5 * np.cos(2.0 * math.pi * np.arange(n) / n) if n > 0 else np.zeros(0)


def vad_start(x: np.ndarray, p: VadParams) -> int:
    """The index of the first sample to keep of ``x`` (channels, time), as sox's ring buffer gives
    it: negative when the stretch kept reaches back past the start."""
    sr = p.sample_rate
    duration = 2.0 / p.measure_freq if p.measure_duration is None else p.measure_duration
    measure_len = int(sr * duration + 0.5)
    dft_len = 16
    while dft_len < measure_len:
        dft_len *= 2
    period = int(sr / p.measure_freq + 0.5)
    n_meas = math.ceil(p.search_time * p.measure_freq)
    gap_len = int(p.allowed_gap * p.measure_freq + 0.5)
    ring = int(p.pre_trigger_time * sr + 0.5) + n_meas * period + measure_len
    spec_window = (2.0 / math.sqrt(measure_len) * _hann(measure_len)).astype(np.float32)
    lo = max(int(p.hp_filter_freq / sr * dft_len + 0.5), 1)
    hi = min(int(p.lp_filter_freq / sr * dft_len + 0.5), dft_len // 2)
    width = max(hi - lo, 0)
    cep_window = (2.0 / math.sqrt(width) * _hann(width)).astype(np.float32) if width else np.zeros(0)
    cep_lo = math.ceil(sr * 0.5 / p.lp_lifter_freq)
    cep_hi = min(math.floor(sr * 0.5 / p.hp_lifter_freq), dft_len // 4)
    up = math.exp(-1.0 / (p.noise_up_time * p.measure_freq))
    down = math.exp(-1.0 / (p.noise_down_time * p.measure_freq))
    smooth = math.exp(-1.0 / (p.measure_smooth_time * p.measure_freq))
    trigger_mult = math.exp(-1.0 / (p.trigger_time * p.measure_freq))
    boot_max = int(p.boot_time * p.measure_freq - 0.5)

    channels, n = x.shape
    padded = np.concatenate([np.zeros((channels, measure_len)), x], axis=1)
    spectrum = np.zeros((channels, max(width, 0)))
    noise = np.zeros_like(spectrum)
    measures = np.zeros((channels, n_meas))
    mean = np.zeros(channels)
    boot = 0
    index = 0
    at = measure_len - 1  # the sample at which the next measure is taken
    while at < n:
        # the measure_len samples before `at` (sox's ring holds zeros before the start)
        frame = padded[:, at:at + measure_len] * spec_window
        mag = np.abs(np.fft.rfft(frame, dft_len, axis=1)[:, lo:hi])
        mult = boot / (1.0 + boot) if boot >= 0 else smooth
        spectrum = spectrum * mult + mag * (1 - mult)
        power = spectrum ** 2
        nmult = 0.0 if boot >= 0 else np.where(power > noise, up, down)
        noise = noise * nmult + power * (1 - nmult)
        clean = np.sqrt(np.maximum(0.0, power - p.noise_reduction_amount * noise))
        cep_in = np.zeros((channels, dft_len // 2))
        cep_in[:, lo:hi] = clean * cep_window
        cep = np.abs(np.fft.rfft(cep_in, axis=1)[:, cep_lo:cep_hi]) ** 2
        total = cep.sum(axis=1)
        with np.errstate(divide="ignore"):
            level = np.where(total > 0, np.log(np.where(total > 0, total, 1.0) / (cep_hi - cep_lo)), -np.inf)
        meas = np.maximum(0.0, 21.0 + level)
        measures[:, index] = meas
        mean = mean * trigger_mult + meas * (1.0 - trigger_mult)
        fired = np.nonzero(mean >= p.trigger_level)[0]
        if fired.size:
            flush = 0
            for c in range(int(fired[0]), channels):  # sox scans the channels from the first one that fired
                flush = min(max(flush, _quiet_measures(measures[c], index, p.trigger_level, gap_len)), n_meas)
            return at + 1 - ring + (n_meas - flush) * period
        index = (index + 1) % n_meas
        if boot >= 0:
            boot = -1 if boot == boot_max else boot + 1
        at += period
    return n - ring


def _quiet_measures(measures: np.ndarray, newest: int, level: float, gap_len: int) -> int:
    """How many of the newest measures (going back from ``newest``) to keep before the trigger:
    up to the oldest one at the trigger level that is within ``gap_len`` of a later one, and back
    to the zero measures (silence, or none yet) just before it."""
    n = measures.size
    j_trigger = j_zero = n
    k = newest
    for j in range(n):
        if measures[k] >= level and j <= j_trigger + gap_len:
            j_zero = j_trigger = j
        elif measures[k] == 0 and j_trigger >= j_zero:
            j_zero = j
        k = (k + n - 1) % n
    return j_zero
