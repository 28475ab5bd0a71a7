"""The "ray" workload (benchmarks/wray.py): its rows in the suite, its report, and one run of its
rows on a tiny W2 (no timing asserts: the figures are the machine's)."""
import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest

from benchmarks import __main__ as cli
from benchmarks import harness, suite, w2, wray

from .test_data import synthetic_photos

N = 16


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench-ray-data")
    w2.generate(str(root), N, synthetic_photos())
    return str(root)


def test_ray_rows_registered():
    a = cli.parse_args(["-w", "ray", "-s", "ray", "--no-setup"])
    got = [(cfg.workload, cfg.system, cfg.variant, w) for cfg, w in cli.plan(a)]
    assert got == [("ray", "ray", v, 2) for v in wray.VARIANTS]
    assert cli.items_for(a, cli.plan(a)[0][0]) == w2.COUNT
    assert suite.UNITS["ray"] == "images/s" and suite.SYSTEMS["ray"][0] == "benchmarks.wray"
    assert cli.parse_args(["-w", "ray", "--quick", "--no-setup"]).sizes["ray"] == w2.QUICK_COUNT


def row(variant, rates, first=0.5, **extra):
    return {"variant": variant, "status": "ok", "measured": {"load1_start": 1.5, "load1_end": 2.0},
            "epochs": [{"seconds": 1.0, "items": r, "bytes": 0, "first_batch_s": first} for r in rates], **extra}


def test_report_gives_rates_and_the_goals_ratios():
    read = {"read_mindrecord_mb_s": 200.0, "in_process_mb_s": 400.0, "read_parquet_mb_s": 50.0,
            "over_in_process": 0.5, "over_parquet": 4.0, "first_batch_warm_s": 0.25, "ray_floor_mb_s": 260.0,
            "floor_over_in_process": 0.65}
    results = [row("headrace.ray", [90, 100, 120]), row("Ray Data", [40, 50, 60]), row("headrace", [110, 125]),
               row(wray.FREE_OPS, [150, 160, 170]), row("read", [300], first=None, read=read)]
    assert wray.ratios({"headrace.ray": 100.0, "Ray Data": 50.0, "headrace": 125.0}) == {
        "headrace.ray / Ray Data": 2.0, "headrace.ray / headrace": 0.8}
    text = wray.report(results).splitlines()
    assert text[0] == "  headrace.ray:    100.0 images/s (min 90.0, max 120.0; 1st batch 0.50 s; load1 1.50->2.00)"
    assert text[2].startswith("      headrace:    117.5 images/s (min 110.0, max 125.0;")
    assert text[3].startswith("  Ray free ops:    160.0 images/s (min 150.0, max 170.0;")
    assert text[4] == "          read:    300.0 images/s (min 300.0, max 300.0; load1 1.50->2.00)"   # no first batch
    assert text[5] == ("                read_mindrecord 2nd epoch 200 MB/s, same tasks in-process 400 MB/s (0.50x; "
                       "goal >= 0.6), read_parquet 50 MB/s (4.00x; goal >= 2); first batch on a warm Ray 0.25 s "
                       "(goal <= 1)")
    assert text[6] == ("                Ray alone (blocks of the same rows and bytes, made for free) 260 MB/s "
                       "(0.65x of in-process)")
    assert text[7] == "headrace.ray / Ray Data 2.00x (goal >= 1.5); headrace.ray / headrace 0.85x (goal >= 0.8)"
    assert text[8] == "Ray's floor for the job (Ray free ops) / headrace 1.36x; headrace.ray / that floor 0.62x"
    failed = wray.report([{"variant": "Ray Data", "status": "failed", "error": "RuntimeError: boom"}, results[0]])
    assert failed.splitlines()[0] == "      Ray Data: failed: RuntimeError: boom"
    assert "goal >= 1.5" not in failed   # no ratio without its rows


def test_a_ray_data_row_is_w2s_opencv_chain(data):
    with open(w2.manifest(w2.w2_dir(data, N))[3][0], "rb") as f:
        buf = f.read()
    path = "/x/jpeg/c5/000003.jpg"
    out = wray.cv2_rows({"bytes": [buf, buf], "path": [path, "/x/jpeg/c2/000004.jpg"]})
    assert out["image"].shape == (2, 3, w2.SIZE, w2.SIZE) and out["image"].dtype == np.float32
    assert out["label"].tolist() == [5, 2] and out["label"].dtype == np.int32
    np.testing.assert_array_equal(out["image"][0], w2.chain_cv2(buf, random.Random(path)))   # keyed by path


def test_free_ops_give_the_chains_output_shape_for_nothing():
    out = wray.free_ops({"image": [b"x", b"y", b"z"], "label": np.array([4, 1, 7])})
    assert out["image"].shape == (3, 3, w2.SIZE, w2.SIZE) and out["image"].dtype == np.float32
    assert not out["image"].any() and out["label"].tolist() == [4, 1, 7] and out["label"].dtype == np.int32
    w2.check_batch(out["image"], out["label"])


def test_the_rows_run_on_a_tiny_w2(data, tmp_path):
    pytest.importorskip("ray")
    out = tmp_path / "ray.json"
    proc = subprocess.run([sys.executable, "-m", "benchmarks.wray", "--data", data, "--items", str(N), "--epochs", "1",
                           "--warmup", "0", "--json", str(out)], cwd=harness.ROOT, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-3000:])
    results = json.loads(out.read_text())
    assert [r["variant"] for r in results] == list(wray.VARIANTS)
    for r in results:
        assert r["status"] == "ok", (r["variant"], r.get("error"), r.get("traceback"))
        assert len(r["epochs"]) == 1 and r["epochs"][0]["items"] == N
    payload = sum(os.path.getsize(p) for p, _ in w2.manifest(w2.w2_dir(data, N))) + 4 * N
    read = results[-1]
    assert read["epochs"][0]["bytes"] == payload   # every row's image and label, once
    figures = read["read"]
    assert figures["over_in_process"] == pytest.approx(figures["read_mindrecord_mb_s"] / figures["in_process_mb_s"])
    assert figures["over_parquet"] == pytest.approx(figures["read_mindrecord_mb_s"] / figures["read_parquet_mb_s"])
    assert 0 < figures["first_batch_warm_s"] < 60
    assert figures["floor_over_in_process"] == pytest.approx(figures["ray_floor_mb_s"] / figures["in_process_mb_s"])
    lines = proc.stdout.splitlines()
    assert [ln.split(":")[0].strip() for ln in lines if "images/s" in ln] == list(wray.VARIANTS)
    assert lines[-2].startswith("headrace.ray / Ray Data ") and "(goal >= 0.8)" in lines[-2]
    assert lines[-1].startswith("Ray's floor for the job (Ray free ops) / headrace ")
