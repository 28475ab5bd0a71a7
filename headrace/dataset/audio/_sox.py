"""sox's time-varying effects: Overdrive, Phaser, Flanger and DetectPitchFrequency (MindSpore's
names and argument checks over the vectorised kernels of ``headrace._audio.sox``)."""
from __future__ import annotations

import numpy as np

from headrace._audio import sox
from headrace._audio.vad import VadParams, vad_start
from headrace.dataset.audio import _checks as ck
from headrace.dataset.audio._base import (AudioTensorOperation, as_float, op_error, require_float, require_numeric,
                                          require_rank)
from headrace.dataset.audio.utils import Interpolation, Modulation

__all__ = ["DetectPitchFrequency", "Flanger", "Overdrive", "Phaser", "Vad"]


class Overdrive(AudioTensorOperation):
    """sox's ``overdrive``: soft clipping with a DC-blocking filter, mixed with the dry signal.

    Args:
        gain (float, optional): drive in dB, in [0, 100]. Default: 20.0.
        color (float, optional): even harmonics added, in [0, 100]. Default: 20.0.

    Examples:
        >>> import numpy as np
        >>> Overdrive()(np.array([[0.1, 0.2, 0.3]])).round(4).tolist()
        [[0.55, 0.5975, 0.645]]
    """

    def __init__(self, gain=20.0, color=20.0):
        self.gain = ck.check_float(gain, "gain", 0, 100)
        self.color = ck.check_float(color, "color", 0, 100)

    def _run(self, x: np.ndarray) -> np.ndarray:
        require_numeric(x, self.op_name)
        x = as_float(x)
        return sox.overdrive(x.astype(np.float64), self.gain, self.color).astype(x.dtype)


class Phaser(AudioTensorOperation):
    """sox's ``phaser``: a feedback delay swept by a sine or triangle LFO.

    Args:
        sample_rate (int): sampling rate in Hz, in [-2147483648, 2147483647].
        gain_in (float, optional): input gain, in [0, 1]. Default: 0.4.
        gain_out (float, optional): output gain, in [0, 1e9]. Default: 0.74.
        delay_ms (float, optional): longest delay in ms, in [0, 5.0]. Default: 3.0.
        decay (float, optional): feedback gain, in [0, 0.99]. Default: 0.4.
        mod_speed (float, optional): LFO frequency in Hz, in [0.1, 2]. Default: 0.5.
        sinusoidal (bool, optional): sine LFO (else triangle). Default: True.

    Examples:
        >>> import numpy as np
        >>> Phaser(44100)(np.array([[0.1, 0.2, 0.3]])).round(4).tolist()
        [[0.0296, 0.071, 0.1172]]
    """

    def __init__(self, sample_rate, gain_in=0.4, gain_out=0.74, delay_ms=3.0, decay=0.4, mod_speed=0.5,
                 sinusoidal=True):
        self.sample_rate = ck.check_int(sample_rate, "sample_rate", ck.INT32_MIN)
        self.gain_in = ck.check_float(gain_in, "gain_in", 0, 1)
        self.gain_out = ck.check_float(gain_out, "gain_out", 0, 1e9)
        self.delay_ms = ck.check_float(delay_ms, "delay_ms", 0, 5.0)
        self.decay = ck.check_float(decay, "decay", 0, 0.99)
        self.mod_speed = ck.check_float(mod_speed, "mod_speed", 0.1, 2)
        self.sinusoidal = ck.check_bool(sinusoidal, "sinusoidal")

    def _run(self, x: np.ndarray) -> np.ndarray:
        require_numeric(x, self.op_name)
        x = as_float(x)
        y = sox.phaser(x.astype(np.float64), self.sample_rate, self.gain_in, self.gain_out, self.delay_ms,
                       self.decay, self.mod_speed, self.sinusoidal)
        return y.astype(x.dtype)


class Flanger(AudioTensorOperation):
    """sox's ``flanger`` on a waveform of shape <..., channel, time> (the output keeps its dtype).

    Args:
        sample_rate (int): sampling rate in Hz, not 0.
        delay (float, optional): base delay in ms, in [0, 30]. Default: 0.0.
        depth (float, optional): swept delay in ms, in [0, 10]. Default: 2.0.
        regen (float, optional): feedback in percent, in [-95, 95]. Default: 0.0.
        width (float, optional): delayed signal mixed in, percent, in [0, 100]. Default: 71.0.
        speed (float, optional): sweeps per second, in [0.1, 10]. Default: 0.5.
        phase (float, optional): LFO shift between channels in percent, in [0, 100]. Default: 25.0.
        modulation (Modulation, optional): Default: Modulation.SINUSOIDAL.
        interpolation (Interpolation, optional): Default: Interpolation.LINEAR.

    Examples:
        >>> import numpy as np
        >>> Flanger(44100, delay=0.1)(np.array([[0.1, 0.2, 0.3, 0.4]])).round(4).tolist()
        [[0.0585, 0.117, 0.1754, 0.2339]]
    """

    layout = "<..., channel, time>"

    def __init__(self, sample_rate, delay=0.0, depth=2.0, regen=0.0, width=71.0, speed=0.5, phase=25.0,
                 modulation=Modulation.SINUSOIDAL, interpolation=Interpolation.LINEAR):
        self.sample_rate = ck.check_nonzero_rate(sample_rate)
        self.delay = ck.check_float(delay, "delay", 0, 30)
        self.depth = ck.check_float(depth, "depth", 0, 10)
        self.regen = ck.check_float(regen, "regen", -95, 95)
        self.width = ck.check_float(width, "width", 0, 100)
        self.speed = ck.check_float(speed, "speed", 0.1, 10)
        self.phase = ck.check_float(phase, "phase", 0, 100)
        self.modulation = ck.check_enum(modulation, Modulation, "modulation")
        self.interpolation = ck.check_enum(interpolation, Interpolation, "interpolation")

    def _run(self, x: np.ndarray) -> np.ndarray:
        require_numeric(x, self.op_name)
        require_rank(x, self.op_name, 2, "<..., channel, time>")
        y = sox.flanger(x.astype(np.float64), self.sample_rate, self.delay, self.depth, self.regen, self.width,
                        self.speed, self.phase, self.modulation == Modulation.TRIANGULAR,
                        self.interpolation == Interpolation.QUADRATIC)
        return y.astype(x.dtype)


class DetectPitchFrequency(AudioTensorOperation):
    """Pitch of each frame in Hz (float32, shape <..., frames>), by normalised cross-correlation and
    a running median.

    Args:
        sample_rate (int): sampling rate in Hz, not 0.
        frame_time (float, optional): frame length in seconds, > 0. Default: 0.01.
        win_length (int, optional): median window in frames, >= 1. Default: 30.
        freq_low (float, optional): lowest detectable pitch in Hz, > 0. Default: 85.
        freq_high (float, optional): highest detectable pitch in Hz, > 0. Default: 3400.

    Raises:
        RuntimeError: (on call) for a non-float waveform, or one too short for `win_length` frames.

    Examples:
        >>> import numpy as np
        >>> t = np.arange(8000) / 16000
        >>> DetectPitchFrequency(16000, win_length=3)(np.sin(2 * np.pi * 250 * t)[None]).round(1)[0, :4].tolist()
        [250.0, 250.0, 250.0, 250.0]
    """

    def __init__(self, sample_rate, frame_time=0.01, win_length=30, freq_low=85, freq_high=3400):
        self.sample_rate = ck.check_nonzero_rate(sample_rate)
        self.frame_time = ck.check_float(frame_time, "frame_time", 0, ck.FLOAT_MAX, left_open=True)
        self.win_length = ck.check_int(win_length, "win_length", 1)
        self.freq_low = ck.check_float(freq_low, "freq_low", 0, ck.FLOAT_MAX, left_open=True, types=(int, float))
        self.freq_high = ck.check_float(freq_high, "freq_high", 0, ck.FLOAT_MAX, left_open=True,
                                        types=(int, float))

    def _run(self, x: np.ndarray) -> np.ndarray:
        require_float(x, self.op_name)
        frame = int(np.ceil(self.sample_rate * self.frame_time))
        frames = -(-x.shape[-1] // frame)
        if frames + (self.win_length - 1) // 2 + 1 < self.win_length:
            raise op_error(self.op_name, f"Failed to create empty tensor, tensor shape is unknown: "
                                         f"{x.shape[-1]} samples give {frames} frames of {frame}, too few for a "
                                         f"median over win_length {self.win_length}.")
        y = sox.detect_pitch(x.astype(np.float64), self.sample_rate, self.frame_time, self.win_length,
                             self.freq_low, self.freq_high)
        return y.astype(np.float32)


_TIME_MAX = ck.FLOAT_MAX
_IF = (int, float)


class Vad(AudioTensorOperation):
    """sox's voice-activity detector: trims the quiet start of a recording, up to shortly before
    the first speech (of any channel; all channels are cut at the same sample). Without speech
    found, the last `search_time` + `pre_trigger_time` + one measure of audio is kept (the whole
    clip when shorter).

    MindSpore 2.10 never finds speech for a positive `trigger_level` (its measures stay 0: noise,
    tones, clicks and speech-like clips all come back as that last stretch); this is sox's
    detector, so on audio where speech triggers it cuts where sox does (mono: the same sample as
    sox 14.4.2's ``vad`` on every clip and setting compared), not where MindSpore does. Where
    nothing triggers it keeps MindSpore's last stretch (sox outputs nothing), and each channel is
    measured on its own samples (sox measures a channel on its neighbour's).

    Args:
        sample_rate (int): sampling rate in Hz, in [1, 2147483647].
        trigger_level (float, optional): measure level that triggers. Default: 7.0.
        trigger_time (float, optional): smoothing time constant of the trigger in s, >= 0. Default: 0.25.
        search_time (float, optional): audio kept before the trigger point, in s, >= 0. Default: 1.0.
        allowed_gap (float, optional): longest gap between quieter bursts kept, in s, >= 0. Default: 0.25.
        pre_trigger_time (float, optional): extra audio kept before, in s, >= 0. Default: 0.0.
        boot_time (float, optional): time to learn the noise, in s, >= 0. Default: 0.35.
        noise_up_time (float, optional): noise-estimate rise time constant in s, at least
            `noise_down_time`. Default: 0.1.
        noise_down_time (float, optional): noise-estimate fall time constant in s, >= 0. Default: 0.01.
        noise_reduction_amount (float, optional): noise subtracted from the spectrum, >= 0. Default: 1.35.
        measure_freq (float, optional): measures per second, > 0. Default: 20.0.
        measure_duration (float, optional): length of a measure in s, >= 0; None: twice the
            measure period (as is 0). Default: None.
        measure_smooth_time (float, optional): spectrum smoothing time constant in s, >= 0. Default: 0.4.
        hp_filter_freq (float, optional): lowest frequency measured, Hz, > 0. Default: 50.0.
        lp_filter_freq (float, optional): highest frequency measured, Hz, > 0. Default: 6000.0.
        hp_lifter_freq (float, optional): high-pass lifter frequency, Hz, > 0. Default: 150.0.
        lp_lifter_freq (float, optional): low-pass lifter frequency, Hz, > 0. Default: 2000.0.

    Examples:
        >>> import numpy as np
        >>> t = np.arange(32000) / 16000
        >>> speech = np.where(t > 1.5, np.sin(2 * np.pi * 300 * t), 0.0) * 0.5
        >>> Vad(16000)(speech[None]).shape  # from 1.4 s on
        (1, 9600)
    """

    def __init__(self, sample_rate, trigger_level=7.0, trigger_time=0.25, search_time=1.0, allowed_gap=0.25,
                 pre_trigger_time=0.0, boot_time=0.35, noise_up_time=0.1, noise_down_time=0.01,
                 noise_reduction_amount=1.35, measure_freq=20.0, measure_duration=None, measure_smooth_time=0.4,
                 hp_filter_freq=50.0, lp_filter_freq=6000.0, hp_lifter_freq=150.0, lp_lifter_freq=2000.0):
        def time(value: object, name: str) -> float:
            return ck.check_float(value, name, 0, _TIME_MAX, types=_IF)

        def freq(value: object, name: str) -> float:
            return ck.check_float(value, name, 0, _TIME_MAX, left_open=True, types=_IF)

        rate = ck.check_rate(sample_rate)
        level = ck.check_float(trigger_level, "trigger_level", types=_IF)
        values = dict(trigger_time=time(trigger_time, "trigger_time"), search_time=time(search_time, "search_time"),
                      allowed_gap=time(allowed_gap, "allowed_gap"),
                      pre_trigger_time=time(pre_trigger_time, "pre_trigger_time"),
                      boot_time=time(boot_time, "boot_time"), noise_up_time=time(noise_up_time, "noise_up_time"),
                      noise_down_time=time(noise_down_time, "noise_down_time"),
                      noise_reduction_amount=time(noise_reduction_amount, "noise_reduction_amount"),
                      measure_freq=freq(measure_freq, "measure_freq"),
                      # MindSpore checks (and uses) a measure_duration only when it is truthy
                      measure_duration=time(measure_duration, "measure_duration") if measure_duration else None,
                      measure_smooth_time=time(measure_smooth_time, "measure_smooth_time"),
                      hp_filter_freq=freq(hp_filter_freq, "hp_filter_freq"),
                      lp_filter_freq=freq(lp_filter_freq, "lp_filter_freq"),
                      hp_lifter_freq=freq(hp_lifter_freq, "hp_lifter_freq"),
                      lp_lifter_freq=freq(lp_lifter_freq, "lp_lifter_freq"))
        if noise_up_time < noise_down_time:
            raise ValueError(f"Input noise_up_time should be greater than noise_down_time, but got noise_up_time: "
                             f"{noise_up_time} and noise_down_time: {noise_down_time}.")
        self.params = VadParams(sample_rate=rate, trigger_level=level, **values)  # type: ignore[arg-type]

    def _run(self, x: np.ndarray) -> np.ndarray:
        require_numeric(x, self.op_name)
        x = as_float(x)
        flat = x.reshape(-1, x.shape[-1])
        start = vad_start(flat.astype(np.float64), self.params)
        # a negative start keeps that many samples from the end, as MindSpore does (its ring buffer
        # of search_time + pre_trigger_time + one measure, longer than a short clip)
        return x[..., start:] if -start < x.shape[-1] else x
