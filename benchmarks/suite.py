"""What the suite runs: one Config per (workload, system, variant), with the worker counts it is run
at, and the interpreter + runner module that runs each system."""
from __future__ import annotations

import os
from . import harness, limits, w1, w2, w3, wcache, wfeed, wray, wspeech, wtext
from .config import Config

__all__ = ["BENCH_PY", "BENCH_VENV", "Config", "ORACLE_PY", "SYSTEMS", "TORCHAUDIO_PY", "TORCHAUDIO_VENV", "UNITS",
           "configs"]

ORACLE_PY = os.path.join(harness.ROOT, ".cache", "oracle", "bin", "python")
BENCH_VENV = os.path.join(harness.ROOT, ".cache", "bench", "venv")
BENCH_PY = os.path.join(BENCH_VENV, "bin", "python")
# torchaudio's wheel is built against an older torch than the benchmark venv's: a venv of its own
TORCHAUDIO_VENV = os.path.join(harness.ROOT, ".cache", "bench", "torchaudio-venv")
TORCHAUDIO_PY = os.path.join(TORCHAUDIO_VENV, "bin", "python")

# system -> (runner module, interpreter, extra runner args)
SYSTEMS = {
    "headrace": ("benchmarks.peers.msapi", "main", ["--module", "headrace"]),
    "mindspore": ("benchmarks.peers.msapi", ORACLE_PY, ["--module", "mindspore"]),
    "torch": ("benchmarks.peers.torchdl", BENCH_PY, []),
    "tf": ("benchmarks.peers.tfdata", BENCH_PY, []),
    "grain": ("benchmarks.peers.grainpy", BENCH_PY, []),
    "dali": ("benchmarks.peers.dalicpu", BENCH_PY, []),
    "python": ("benchmarks.peers.plain", "main", []),
    "hf": ("benchmarks.peers.hftok", "main", []),
    "torchaudio": ("benchmarks.peers.tadl", TORCHAUDIO_PY, []),
    "ray": ("benchmarks.wray", "main", []),
}
UNITS = {"w1": "rows/s", "w2": "images/s", "w3": "MB/s", "limits": "images/s", "text": "reviews/s",
         "cache": "images/s", "feed": "steps/s", "speech": "clips/s",
         "ray": "images/s"}


def configs() -> list[Config]:
    return [*w1.CONFIGS, *w2.CONFIGS, *w3.CONFIGS, *limits.CONFIGS, *wtext.CONFIGS, *wcache.CONFIGS,
            *wfeed.CONFIGS, *wspeech.CONFIGS, *wray.CONFIGS]
