"""What the suite runs: one Config per (workload, system, variant), with the worker counts it is run
at, and the interpreter + runner module that runs each system."""
from __future__ import annotations

import os
from dataclasses import dataclass

from . import harness

ORACLE_PY = os.path.join(harness.ROOT, ".cache", "oracle", "bin", "python")
BENCH_VENV = os.path.join(harness.ROOT, ".cache", "bench", "venv")
BENCH_PY = os.path.join(BENCH_VENV, "bin", "python")

# system -> (runner module, interpreter, extra runner args)
SYSTEMS = {
    "headrace": ("benchmarks.peers.msapi", "main", ["--module", "headrace"]),
    "mindspore": ("benchmarks.peers.msapi", ORACLE_PY, ["--module", "mindspore"]),
    "torch": ("benchmarks.peers.torchdl", BENCH_PY, []),
    "tf": ("benchmarks.peers.tfdata", BENCH_PY, []),
    "python": ("benchmarks.peers.plain", "main", []),
    "hf": ("benchmarks.peers.hftok", "main", []),
}
UNITS = {"w1": "rows/s", "w2": "images/s", "w3": "MB/s", "limits": "images/s", "text": "reviews/s"}


@dataclass(frozen=True)
class Config:
    workload: str
    system: str
    variant: str
    workers: tuple[int, ...] = (1, 2)   # (0,) = not applicable / in-process
    items: int = 0                      # W1 rows or W3 records per epoch; 0 = the spec's size
    compare: str | None = None          # headrace variant this row's ratio is taken against
    note: str = ""


def configs() -> list[Config]:
    from . import limits, w1, w2, w3, wtext
    return [*w1.CONFIGS, *w2.CONFIGS, *w3.CONFIGS, *limits.CONFIGS, *wtext.CONFIGS]
