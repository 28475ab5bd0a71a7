"""Speech workload (issue 41): SpeechCommands-like 1 s clips (16 kHz, 16-bit mono WAV) ->
MelSpectrogram(n_fft 400, hop 160, 64 mels) -> AmplitudeToDB -> TimeMasking(20) ->
FrequencyMasking(8) -> shuffled batches of 32 (float32 [32, 1, 64, 101]), in clips/s.

The clips lie in Speech Commands' layout (``<word>/<speaker>_nohash_<n>.wav`` with empty test and
validation lists), so MindSpore's and headrace's ``SpeechCommandsDataset`` read them as they read the
corpus; the torchaudio peer reads the same files with the standard library's ``wave``. Each clip
is a few seeded tones under a random envelope plus noise: the values do not matter to the timing,
only that every clip is a full second.
"""
from __future__ import annotations

import os
import struct
import wave

import numpy as np

from .config import Config

N = 3_200          # clips per epoch (100 batches of 32)
QUICK = 320
BATCH = 32
RATE = 16_000
N_FFT, HOP, N_MELS = 400, 160, 64
TIME_MASK, FREQ_MASK = 20, 8
FRAMES = RATE // HOP + 1   # 101 with the centred STFT of both APIs
WORDS = ("yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go", "zero", "one")


def speech_dir(root: str, n: int) -> str:
    return os.path.join(root, "speech", f"commands_{n}")


def clip(index: int) -> np.ndarray:
    """Clip ``index``: int16, RATE samples, a function of the index only."""
    rng = np.random.default_rng([41, index])
    t = np.arange(RATE) / RATE
    tones = sum(rng.uniform(0.05, 0.3) * np.sin(2 * np.pi * rng.uniform(100, 3000) * t + rng.uniform(0, 6.3))
                for _ in range(3))
    start, length = rng.uniform(0.0, 0.5), rng.uniform(0.2, 0.5)
    envelope = np.exp(-(((t - start - length / 2) / (length / 2)) ** 2))
    sig = tones * envelope + rng.normal(0, 0.01, RATE)
    return np.clip(np.round(sig * 32767), -32768, 32767).astype("<i2")


def _write_wav(path: str, samples: np.ndarray) -> None:
    data = samples.astype("<i2").tobytes()
    with open(path + ".tmp", "wb") as f:
        f.write(b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt "
                + struct.pack("<IHHIIHH", 16, 1, 1, RATE, RATE * 2, 2, 16) + b"data" + struct.pack("<I", len(data))
                + data)
    os.replace(path + ".tmp", path)


def relative_path(index: int) -> str:
    word = WORDS[index % len(WORDS)]
    return os.path.join(word, f"{index // len(WORDS):08x}_nohash_{index % 5}.wav")


def generate(root: str, n: int = N) -> str:
    """Writes the ``n`` clips under ``speech_dir(root, n)`` unless they are there; returns the folder."""
    d = speech_dir(root, n)
    done = os.path.join(d, ".complete")
    if os.path.exists(done):
        return d
    for i in range(n):
        path = os.path.join(d, relative_path(i))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.exists(path):
            _write_wav(path, clip(i))
    for name in ("testing_list.txt", "validation_list.txt"):
        with open(os.path.join(d, name), "w"):
            pass
    with open(done, "w") as f:
        f.write(f"{n}\n")
    return d


def files(root: str, n: int) -> list[tuple[str, str]]:
    """(path, word) of every clip, in path order."""
    d = speech_dir(root, n)
    return sorted((os.path.join(d, relative_path(i)), WORDS[i % len(WORDS)]) for i in range(n))


def read_clip(path: str) -> np.ndarray:
    """A clip as float32 of shape (1, samples), int16 / 32768 (what torchaudio's loaders return)."""
    with wave.open(path, "rb") as w:
        raw = w.readframes(w.getnframes())
    return (np.frombuffer(raw, "<i2").astype(np.float32) / 32768.0)[None, :]


def ops(audio) -> list:
    """The chain in MindSpore's API (``audio`` is ``<module>.dataset.audio``)."""
    return [audio.MelSpectrogram(sample_rate=RATE, n_fft=N_FFT, hop_length=HOP, n_mels=N_MELS),
            audio.AmplitudeToDB(), audio.TimeMasking(time_mask_param=TIME_MASK),
            audio.FrequencyMasking(freq_mask_param=FREQ_MASK)]


def check_batch(x) -> None:
    x = np.asarray(x)
    assert x.shape == (BATCH, 1, N_MELS, FRAMES) and x.dtype == np.float32, (x.shape, x.dtype)
    assert np.isfinite(x).all(), "a spectrogram holds a non-finite value"


PROCESSES = ", processes"  # the map in worker processes (python_multiprocessing=True)

CONFIGS = [
    Config("speech", "headrace", "SpeechCommandsDataset", compare="SpeechCommandsDataset"),
    Config("speech", "headrace", "SpeechCommandsDataset" + PROCESSES, (2,), compare="SpeechCommandsDataset" + PROCESSES,
           note="the map in 2 worker processes (python_multiprocessing=True), as the profiler advises for this "
                "GIL-bound chain"),
    Config("speech", "mindspore", "SpeechCommandsDataset", compare="SpeechCommandsDataset"),
    Config("speech", "torchaudio", "DataLoader", compare="SpeechCommandsDataset",
           note="torchaudio 2.11 transforms in a torch DataLoader (worker processes), clips read with wave"),
]
