"""One-core CPU time of every ``headrace.dataset.audio`` transform on a 10 s 16 kHz float32 clip
(issue 41's speed goals: MelSpectrogram <= 3 ms, Spectrogram <= 2 ms, sinc Resample 44.1 -> 16 kHz
<= 6 ms, a biquad <= 1 ms, every loop-style op >= 100x real time).

    python -m benchmarks.audio_ops [--calls 20] [--only NAME,NAME]

Each op is called ``--calls`` times on the same input after one warm-up call; the table gives the
median CPU time of the calling thread (``time.thread_time``, so a busy machine's other work does not
count), the clip's 10 s over that time (x real time) and the goal where issue 41 sets one. BLAS and
OpenMP pools are held to one thread (set below, before NumPy is imported). Spectrogram-domain ops
get the clip's 201 x 1001 power spectrogram (or its complex STFT, or its 128 mel bands), Resample
44.1 -> 16 kHz gets 10 s at 44.1 kHz, Vad-quiet a clip of faint noise (where Vad triggers late). Nothing is
asserted: the machine may be shared.
"""
from __future__ import annotations

import os

if __name__ == "__main__":  # (before NumPy loads its BLAS; imported by a test, the environment stays as it is)
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

SECONDS, RATE = 10.0, 16000
LOOP_GOAL = "loop: >= 100x"


def inputs() -> dict[str, np.ndarray]:
    """The clip (one channel: (1, time)) and what the spectrogram-domain ops take, all float32."""
    import headrace.dataset.audio as audio
    rng = np.random.default_rng(0)
    t = np.arange(int(SECONDS * RATE)) / RATE
    wave = (0.4 * np.sin(2 * np.pi * (220 + 40 * t) * t) + 0.05 * rng.standard_normal(t.size)).astype(np.float32)[None]
    t44 = np.arange(int(SECONDS * 44100)) / 44100
    wave44 = (0.4 * np.sin(2 * np.pi * 220 * t44) + 0.05 * rng.standard_normal(t44.size)).astype(np.float32)[None]
    spec = audio.Spectrogram(n_fft=400)(wave)
    cplx = audio.Spectrogram(n_fft=400, power=0)(wave)
    mel = audio.MelScale(n_mels=128, sample_rate=RATE, n_stft=201)(spec)
    quiet = (0.001 * rng.standard_normal(wave.shape)).astype(np.float32)  # (Vad searches longer)
    return {"wave": wave, "wave44": wave44, "quiet": quiet, "spec": spec, "cplx": cplx, "mel": mel,
            "db": audio.AmplitudeToDB()(spec), "mulaw": audio.MuLawEncoding()(wave)}


# name: (expression after "audio.", input); the goal of each: goal_of
OPS = {
    "AllpassBiquad": ("AllpassBiquad(RATE, 200.0)", "wave"),
    "BandBiquad": ("BandBiquad(RATE, 200.0)", "wave"),
    "BandpassBiquad": ("BandpassBiquad(RATE, 1000.0)", "wave"),
    "BandrejectBiquad": ("BandrejectBiquad(RATE, 1000.0)", "wave"),
    "BassBiquad": ("BassBiquad(RATE, 6.0)", "wave"),
    "Biquad": ("Biquad(0.01, 0.02, 0.13, 1.0, 0.12, 0.3)", "wave"),
    "DeemphBiquad": ("DeemphBiquad(44100)", "wave"),
    "EqualizerBiquad": ("EqualizerBiquad(RATE, 1500.0, 5.0)", "wave"),
    "HighpassBiquad": ("HighpassBiquad(RATE, 1000.0)", "wave"),
    "LowpassBiquad": ("LowpassBiquad(RATE, 1000.0)", "wave"),
    "RiaaBiquad": ("RiaaBiquad(44100)", "wave"),
    "TrebleBiquad": ("TrebleBiquad(RATE, 6.0)", "wave"),
    "LFilter": ("LFilter([1.0, -0.5, 0.2], [0.3, 0.2, 0.1])", "wave"),
    "Filtfilt": ("Filtfilt([1.0, -0.5, 0.2], [0.3, 0.2, 0.1])", "wave"),
    "Contrast": ("Contrast()", "wave"),
    "DCShift": ("DCShift(0.1)", "wave"),
    "Dither": ("Dither()", "wave"),
    "Fade": ("Fade(16000, 16000)", "wave"),
    "Gain": ("Gain(3.0)", "wave"),
    "Vol": ("Vol(0.5)", "wave"),
    "MuLawEncoding": ("MuLawEncoding()", "wave"),
    "MuLawDecoding": ("MuLawDecoding()", "mulaw"),
    "Overdrive": ("Overdrive()", "wave"),
    "Phaser": ("Phaser(RATE)", "wave"),
    "Flanger": ("Flanger(RATE)", "wave"),
    "Vad": ("Vad(RATE)", "wave"),
    "Vad-quiet": ("Vad(RATE)", "quiet"),
    "DetectPitchFrequency": ("DetectPitchFrequency(RATE)", "wave"),
    "Spectrogram": ("Spectrogram(n_fft=400)", "wave"),
    "MelSpectrogram": ("MelSpectrogram(RATE, n_fft=400)", "wave"),
    "MFCC": ("MFCC(RATE)", "wave"),
    "LFCC": ("LFCC(RATE)", "wave"),
    "SpectralCentroid": ("SpectralCentroid(RATE)", "wave"),
    "InverseSpectrogram": ("InverseSpectrogram(n_fft=400)", "cplx"),
    "GriffinLim": ("GriffinLim(n_fft=400, n_iter=8, rand_init=False)", "spec"),
    "MelScale": ("MelScale(128, RATE, n_stft=201)", "spec"),
    "InverseMelScale": ("InverseMelScale(201, 128, RATE, max_iter=20)", "mel"),
    "AmplitudeToDB": ("AmplitudeToDB()", "spec"),
    "DBToAmplitude": ("DBToAmplitude(1.0, 1.0)", "db"),
    "Angle": ("Angle()", "cplx"),
    "ComplexNorm": ("ComplexNorm()", "cplx"),
    "Magphase": ("Magphase()", "cplx"),
    "ComputeDeltas": ("ComputeDeltas()", "spec"),
    "SlidingWindowCmn": ("SlidingWindowCmn()", "spec"),
    "TimeMasking": ("TimeMasking(time_mask_param=80)", "spec"),
    "FrequencyMasking": ("FrequencyMasking(freq_mask_param=27)", "spec"),
    "MaskAlongAxis": ("MaskAlongAxis(5, 20, 0.0, 2)", "spec"),
    "MaskAlongAxisIID": ("MaskAlongAxisIID(20, 0.0, 2)", "spec"),
    "PhaseVocoder": ("PhaseVocoder(1.3, np.linspace(0, np.pi * 200, 201, dtype=np.float32)[:, None])", "cplx"),
    "TimeStretch": ("TimeStretch(fixed_rate=1.3)", "cplx"),
    "PitchShift": ("PitchShift(RATE, 3)", "wave"),
    "Resample": ("Resample(44100.0, 16000.0)", "wave44"),
}


LOOP_OPS = ("Overdrive", "Phaser", "Flanger", "Vad", "Vad-quiet", "DetectPitchFrequency")


def goal_of(name: str) -> float | str | None:
    """Issue 41's goal for the row ``name``: at most so many ms (a biquad 1, Spectrogram 2,
    MelSpectrogram 3, Resample 6), ``LOOP_GOAL`` for the loop-style ops, None for the others."""
    if name.endswith("Biquad"):
        return 1.0
    if name in LOOP_OPS:
        return LOOP_GOAL
    return {"Spectrogram": 2.0, "MelSpectrogram": 3.0, "Resample": 6.0}.get(name)


def measure(fn, x, calls: int) -> float:
    """Median CPU time of the calling thread of ``calls`` calls (ms), after one warm-up call."""
    fn(x)
    times = []
    for _ in range(calls):
        t0 = time.thread_time()
        fn(x)
        times.append(time.thread_time() - t0)
    return statistics.median(times) * 1e3


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.audio_ops", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--calls", type=int, default=20, help="calls per op (the median is reported); default 20")
    p.add_argument("--only", default="", help="comma-separated op names; default all")
    a = p.parse_args(argv)
    if a.calls < 1:
        p.error(f"--calls must be at least 1, got {a.calls}")
    only = {n for n in a.only.split(",") if n}
    unknown = only - set(OPS)
    if unknown:
        p.error(f"--only: unknown op(s) {sorted(unknown)}; choose from {list(OPS)}")
    import headrace.dataset.audio as audio
    data = inputs()
    print(f"{'op':22s} {'ms':>9s} {'x real time':>12s}  goal")
    for name, (expr, inp) in OPS.items():
        if only and name not in only:
            continue
        goal = goal_of(name)
        op = eval("audio." + expr, {"audio": audio, "np": np, "RATE": RATE})
        ms = measure(op, data[inp], a.calls)
        if goal is None:
            verdict = ""
        elif isinstance(goal, str):
            verdict = f"{goal} ({'met' if SECONDS * 1e3 / ms >= 100 else 'MISSED'})"
        else:
            verdict = f"<= {goal:g} ms ({'met' if ms <= goal else 'MISSED'})"
        print(f"{name:22s} {ms:9.3f} {SECONDS * 1e3 / ms:12.0f}  {verdict}", flush=True)


if __name__ == "__main__":
    main()
