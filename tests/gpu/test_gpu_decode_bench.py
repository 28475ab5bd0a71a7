"""benchmarks/gpu_decode.py on the fake backend (the device check's code, run on every machine)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks import gpu_decode


def test_the_device_script_runs_on_the_fake_backend(tmp_path, monkeypatch):
    monkeypatch.delenv("HEADRACE_GPU_BACKEND", raising=False)
    out = tmp_path / "gpu.json"
    res = gpu_decode.main(["--fake", "--images", "40", "--batch", "16", "--size", "80", "--workers", "2",
                           "--out-size", "24", "--out", str(out)])
    assert res["backend"] == "fake" and res["identical"] is True
    assert res["raw_decode"]["images"] == 40 and res["raw_decode"]["decoded"] == 40
    chain = res["w2_chain"]
    assert chain["images"] == 40 and chain["backend"] == "fake" and chain["fallback_pct"] == 0.0
    assert chain["fallbacks"] == {} and 0 <= chain["loop_wait_pct"] <= 100
    assert res["psnr"] == {"images": 40, "median_db": float("inf"), "min_db": float("inf")}
    assert res["memory"] == {"batch": 16, "bytes": None, "note": "the fake backend holds no device memory"}
    assert json.loads(out.read_text())["w2_chain"]["sha256"] == chain["sha256"]


def test_its_arguments_are_checked():
    with pytest.raises(SystemExit):
        gpu_decode.main(["--fake", "--workers", "5"])
    with pytest.raises(SystemExit):
        gpu_decode.main(["--fake", "--images", "0"])


def test_psnr():
    a = np.zeros((4, 4, 3), np.uint8)
    b = a.copy()
    assert gpu_decode.psnr(a, b) == float("inf")
    b[0, 0, 0] = 255  # mse = 255^2 / 48
    assert gpu_decode.psnr(a, b) == pytest.approx(10 * np.log10(48))
    with pytest.raises(ValueError, match=r"psnr: shapes differ: \(4, 4, 3\) and \(4, 3, 3\)"):
        gpu_decode.psnr(a, b[:, :3])
