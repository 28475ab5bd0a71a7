"""Every runner runs on a tiny size in its own interpreter and gives a result (no timing asserts).

Peers whose interpreter is not set up here (MindSpore's venv, the benchmark venv with torch and
tensorflow) are skipped; headrace may say "unavailable" while its modules are being written.
"""
import json
import os
import subprocess
import sys
import time

import pytest

from benchmarks import __main__ as cli
from benchmarks import envs, report, suite, w1, w2

from .test_data import synthetic_photos

TINY = ["--w1-rows", "512", "--w2-images", "16", "--w3-rows", "12", "--feed-steps", "40", "--epochs", "1",
        "--warmup", "0", "--no-setup", "--timeout", "300"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("bench-data")
    w1.generate(str(root))
    w2.generate(str(root), 16, synthetic_photos())
    return str(root)


def run(data, tmp_path, *extra, tiny=TINY):
    a = cli.parse_args(["--data", data, "--out", str(tmp_path), *tiny, *extra])
    results = [cli.run_one(a, cfg, w) for cfg, w in cli.plan(a)]
    assert results, "nothing planned"
    return results


def assert_ran(results, allow_unavailable=False):
    ok = {"ok", "unavailable"} if allow_unavailable else {"ok"}
    for r in results:
        assert r["status"] in ok, (r["system"], r["variant"], r.get("error"), r.get("traceback"))
        if r["status"] == "ok":
            assert r["epochs"] and r["epochs"][0]["items"] > 0
            assert r["measured"]["peak_rss_mib"] > 0


def need(system, module):
    if not envs.can_import(envs.interpreter(system), module):
        pytest.skip(f"{module} is not set up for {system}")


def assert_peer_ran(system, module, data, tmp_path, *extra, tiny=TINY):
    """``system``'s runner runs with one worker and gives results; skipped where its interpreter
    cannot import ``module``."""
    need(system, module)
    assert_ran(run(data, tmp_path, "-s", system, "--workers", "1", *extra, tiny=tiny))


def test_plain_references_and_limits(data, tmp_path):
    assert_ran(run(data, tmp_path, "-s", "python"))


def test_headrace_runner(data, tmp_path):
    assert_ran(run(data, tmp_path, "-s", "headrace", "--workers", "1",
                   "--variant", "threads", "--variant", "MindDataset", "--variant", "write",
                   "--variant", "read cold"), allow_unavailable=True)


@pytest.mark.slow
def test_mindspore_runner(data, tmp_path):
    assert_peer_ran("mindspore", "mindspore.dataset", data, tmp_path, "--variant", "threads",
                    "--variant", "MindDataset", "--variant", "write", "--variant", "read cold")


@pytest.mark.slow
def test_torch_runner(data, tmp_path):
    assert_peer_ran("torch", "torch", data, tmp_path)


@pytest.mark.slow
def test_tf_runner(data, tmp_path):
    assert_peer_ran("tf", "tensorflow", data, tmp_path, "--variant", "numpy_function",
                    "--variant", "decode_and_crop_jpeg")


@pytest.mark.slow
def test_grain_runner(data, tmp_path):
    need("grain", "grain")
    results = run(data, tmp_path, "-s", "grain", "--workers", "1", "-w", "w1,w2")
    assert {(r["workload"], r["variant"]) for r in results} == {
        (w, v) for w in ("w1", "w2") for v in ("threads", "mp_prefetch")}
    assert_ran(results)
    w2_rows = [r for r in results if r["workload"] == "w2"]
    assert [r["batch_bytes"] for r in w2_rows] == [16 * 3 * 224 * 224 * 4 + 16 * 4] * 2
    # Grain's JAX path (the peer of headrace.jax) runs at 2 workers, and gives JAX arrays of W2's batch
    put = run(data, tmp_path, "-s", "grain", "--workers", "2", "-w", "w1,w2", "--variant", "device_put")
    assert {(r["workload"], r["variant"]) for r in put} == {
        (w, f"{v} + device_put") for w in ("w1", "w2") for v in ("threads", "mp_prefetch")}
    assert_ran(put)
    assert all("jax" in r["versions"] for r in put)
    # (mp_prefetch: each of the 2 workers batches its own 8 of the 16 images)
    assert {r["variant"]: r["batch_bytes"] for r in put if r["workload"] == "w2"} == {
        "threads + device_put": 16 * (3 * 224 * 224 * 4 + 4), "mp_prefetch + device_put": 8 * (3 * 224 * 224 * 4 + 4)}


@pytest.mark.slow
def test_dali_runner(data, tmp_path):
    need("dali", "nvidia.dali")
    results = run(data, tmp_path, "-s", "dali", "--workers", "1", "-w", "w2")
    assert sorted(r["variant"] for r in results) == ["decode + random_resized_crop",
                                                     "image_random_crop"]
    assert_ran(results)
    # DALI fills every batch: the 16 images of one epoch come as one batch of 128.
    assert [r["epochs"][0]["items"] for r in results] == [128, 128]


def test_feed_runner_measures_the_loops_waits(data, tmp_path):
    pytest.importorskip("torch")
    results = run(data, tmp_path, "-s", "headrace", "-w", "feed", "--variant", "headrace.torch")
    assert_ran(results)
    (r,) = results
    (epoch,) = r["epochs"]
    assert epoch["items"] == 40                              # --feed-steps 40
    assert 0 <= epoch["wait_fraction"] < 1 and epoch["first_wait_s"] > 0
    report.add_summaries(results)
    md = report.feed_waits(results)
    assert md.splitlines()[-1].startswith("| headrace | headrace.torch | ")


def test_time_paired_reads_the_two_in_turns_and_keeps_the_ratio_of_each_pair():
    from benchmarks import harness
    order = []

    def maker(name, batches):
        def make():
            order.append(name)
            return iter([[0] * 4] * batches)
        return make

    checked = []
    out = harness.time_paired(maker("base", 3), maker("other", 2), lambda b: (len(b), 0), epochs=3, warmup=1,
                              check=checked.append)
    assert order == ["base", "other", "other", "base", "base", "other", "other", "base"]
    assert checked == [[0] * 4, [0] * 4]  # the first batch of each, in the first pair only
    assert len(out["warmup"]) == 1 and len(out["epochs"]) == 3
    for rec in out["epochs"]:
        assert rec["items"] == 8
        assert rec["paired_ratio"] == pytest.approx(rec["items"] / rec["seconds"] / rec["base_rate"])


def test_paired_runner_reads_a_loader_and_numpy_in_one_process(data, tmp_path):
    pytest.importorskip("torch")
    results = run(data, tmp_path, "-s", "headrace", "-w", "w1", "--epochs", "3",
                  "--variant", "threads + headrace.torch, paired")
    assert_ran(results)
    (r,) = results
    # 3 pairs per epoch asked
    assert len(r["epochs"]) == 9 and all(e["items"] == 512 and e["paired_ratio"] > 0 for e in r["epochs"])
    report.add_summaries(results)
    lines = report.paired(results).splitlines()
    assert lines[-1].startswith("| w1 | threads + headrace.torch, paired | 2 | 9 | ")
    assert report.paired([{**r, "variant": "threads", "epochs": [{"items": 1, "seconds": 1}]}]) == ""


def test_paired_variant_closes_both_sides_inside_their_epoch(monkeypatch):
    # each side of a pair is closed before its epoch's clock stops (before, only the loader's
    # close was timed, so the loader's epochs carried a teardown the NumPy epochs did not)
    import argparse

    import headrace.dataset as ds
    from benchmarks import harness
    from benchmarks.peers import msapi
    pytest.importorskip("torch")
    events = []

    class Iterator:
        def __init__(self, it):
            self.it = it

        def __iter__(self):
            return iter(self.it)

        def stop(self):
            events.append("numpy stopped")
            self.it.stop()

    class Loader:
        def __init__(self, data, shard):
            import headrace.torch as ht
            del data.create_tuple_iterator  # (the loader's own iterator is not the NumPy side's)
            self.loader = ht.Loader(data, shard=shard)

        def __iter__(self):
            return iter(self.loader)

        def close(self):
            events.append("loader closed")
            self.loader.close()

    def make_data():
        data = ds.NumpySlicesDataset(list(range(8)), ["x"], shuffle=False).batch(4)
        make = data.create_tuple_iterator
        data.create_tuple_iterator = lambda **kw: Iterator(make(**kw))
        return data

    clock = harness.time.perf_counter
    monkeypatch.setattr(harness, "time", argparse.Namespace(perf_counter=lambda: events.append("clock") or clock()))
    monkeypatch.setattr(msapi, "import_or_unavailable", lambda name: argparse.Namespace(Loader=Loader))
    a = argparse.Namespace(variant="threads + headrace.torch, paired", epochs=1, warmup=0)
    monkeypatch.setattr(msapi, "PAIRS_PER_EPOCH", 1)
    out = msapi.time_variant(a, make_data, lambda b: (len(b[0]), 0), None)
    assert [r["items"] for r in out["epochs"]] == [8]
    # each epoch: its start, its first batch, its close, then its end, on the clock
    assert events == ["clock", "clock", "numpy stopped", "clock", "clock", "clock", "loader closed", "clock"]


def test_batch_bytes_counts_arrays_of_tuples_and_dicts():
    import numpy as np

    from benchmarks import harness
    a, b = np.zeros((4, 3), np.float32), np.zeros(4, np.int64)
    assert harness.batch_bytes((a, b)) == 48 + 32
    assert harness.batch_bytes({"x": a, "y": b}) == 80
    assert harness.batch_bytes(a) == 48
    assert harness.batch_bytes(["not an array"]) == 0


def test_memory_section_sets_pss_against_one_batch():
    m = {"wall_s": 1, "peak_rss_mib": 300, "peak_pss_mib": 250, "max_procs": 1,
         "load1_start": 0.5, "load1_end": 0.6, "machine_busy_cores": 1.0, "our_cores": 0.9,
         "other_busy_cores": 0.1}
    ep = [{"seconds": 1.0, "items": 100, "bytes": 0, "first_batch_s": 0.01}]
    results = [
        {"workload": "w2", "system": "headrace", "variant": "MindDataset", "workers": 2,
         "status": "ok", "epochs": ep, "measured": m, "batch_bytes": 50 * 2**20},
        {"workload": "w3", "system": "headrace", "variant": "read", "workers": 1,
         "status": "ok", "epochs": ep, "measured": m, "batch_bytes": 2**20},
        {"workload": "w2", "system": "torch", "variant": "OpenCV", "workers": 1,
         "status": "failed", "epochs": [], "measured": m},
    ]
    report.add_summaries(results)
    lines = report.memory(results).splitlines()
    assert lines[0] == "### Memory"
    assert lines[-1] == "| w2 | headrace | MindDataset | 2 | 50 | 300 | 250 | 5 |"
    assert sum(line.startswith(("| w1 ", "| w2 ", "| w3 ")) for line in lines) == 1  # no W3, no failed
    assert report.memory(results[1:]) == ""


def test_report_ratios_and_unavailable_rows():
    m = {"wall_s": 1, "peak_rss_mib": 10, "peak_pss_mib": 8, "max_procs": 1, "load1_start": 0.5,
         "load1_end": 0.6, "machine_busy_cores": 1.0, "our_cores": 0.9, "other_busy_cores": 0.1}
    ep = lambda s: [{"seconds": s, "items": 100, "bytes": 0, "first_batch_s": 0.01}] * 3  # noqa
    results = [
        {"workload": "w1", "system": "headrace", "variant": "threads", "workers": 1,
         "status": "ok", "epochs": ep(1.0), "measured": m, "compare": "threads"},
        {"workload": "w1", "system": "torch", "variant": "DataLoader", "workers": 1,
         "status": "ok", "epochs": ep(2.0), "measured": m, "compare": "threads"},
        {"workload": "w1", "system": "tf", "variant": "native", "workers": 1,
         "status": "unavailable", "error": "not available yet: x", "measured": m,
         "compare": "threads"},
    ]
    report.add_summaries(results)
    report.add_ratios(results)
    assert results[1]["ratio"] == pytest.approx(2.0)
    md = report.table(results, "w1")
    assert "| torch | DataLoader | 1 | 100 | 50 | 50–50 |" in md and "2.00" in md
    assert "**unavailable**" in md and "not available yet: x" in md


FORKED = """
import json, numpy as np
from benchmarks.peers import plain
got = list(plain.forked_batches(lambda s: (s, np.arange(s, s + 3)), range(0, 30, 3), 3))
ok = [g[0] for g in got] == list(range(0, 30, 3)) and all(np.array_equal(a, np.arange(s, s + 3)) for s, a in got)
def boom(s):
    if s == 4:
        raise ValueError("x")
    return s
try:
    list(plain.forked_batches(boom, range(6), 2))  # worker 0 fails at its third batch
    err = None
except RuntimeError as e:
    err = str(e)
g = plain.forked_batches(lambda s: np.zeros(100000), range(50), 2)
next(g)
g.close()  # the reader stops early: no error
print(json.dumps({"ok": ok, "err": err}))
"""


def test_forked_batches_come_back_in_order_and_a_failed_worker_raises():
    # in a fresh interpreter: this one may have threads (JAX's), which a fork must not inherit
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", FORKED], cwd=root, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.splitlines()[-1]) == {"ok": True, "err": "1 forked worker(s) failed (wait status 256)"}


def test_report_w1_against_twice_the_bare_loop():
    ep = lambda s: [{"seconds": s, "items": 200_000, "bytes": 0, "first_batch_s": 0.01}] * 3  # noqa
    row = lambda system, variant, workers, s: {"workload": "w1", "system": system, "variant": variant,  # noqa
                                               "workers": workers, "status": "ok", "epochs": ep(s)}
    results = [row("python", "bare loop", 0, 0.8), row("headrace", "threads", 1, 1.0),
               row("headrace", "threads", 2, 0.5), row("headrace", "processes", 2, 0.625),
               row("headrace", "threads, kept", 2, 0.4), row("torch", "DataLoader", 2, 0.4)]
    report.add_summaries(results)
    text = w1.limit_ratios(results)
    assert text.splitlines() == [
        "W1 against the machine's limit: headrace at 2 workers over 2 x the bare Python loop (250,000 rows/s in "
        "one process), from this run.", "",
        "| variant | workers | median rows/s | headrace / (2 x bare loop) | headrace / forked loop |",
        "|---|---|---|---|---|", "| threads | 2 | 400,000 | 0.800 | – |", "| processes | 2 | 320,000 | 0.640 | – |"]
    assert text in report.markdown(results, "# R\n")
    assert w1.limit_ratios(results[1:]) == "" and w1.limit_ratios(results[:2]) == ""
    forked = [row("python", "bare loop, forked", 2, 0.4)]
    report.add_summaries(forked)
    lines = w1.limit_ratios(results + forked).splitlines()
    assert lines[0] == ("W1 against the machine's limit: headrace at 2 workers over 2 x the bare Python loop "
                        "(250,000 rows/s in one process), from this run; and over the same loop split over 2 "
                        "forked processes without a framework ('bare loop, forked', 500,000 rows/s: 1.000 of 2 x "
                        "the loop).")
    assert lines[4:] == ["| threads | 2 | 400,000 | 0.800 | 0.800 |", "| processes | 2 | 320,000 | 0.640 | 0.640 |"]


def test_report_w2_goal_ratios():
    ep = lambda rate: [{"seconds": 1.0, "items": rate, "bytes": 0, "first_batch_s": 0.01}] * 3  # noqa
    row = lambda system, variant, workers, rate, workload="w2": {  # noqa
        "workload": workload, "system": system, "variant": variant, "workers": workers, "status": "ok",
        "epochs": ep(rate)}
    results = [row("headrace", "MindDataset", 1, 1500), row("headrace", "MindDataset", 2, 2700),
               row("headrace", "RandomCropDecodeResize", 2, 9000),  # not the main row
               row("torch", "OpenCV", 1, 600), row("torch", "OpenCV", 2, 1000), row("torch", "Pillow", 2, 1),
               row("grain", "threads", 1, 1000), row("grain", "threads", 2, 1500),
               row("grain", "threads + device_put", 2, 2000),  # another job: left out
               row("mindspore", "RandomCropDecodeResize", 2, 1800), row("dali", "image_random_crop", 1, 500),
               row("python", "headrace RandomCropDecodeResize 224", 0, 1800, "limits"),
               row("python", "W2 chain, OpenCV", 0, 5000, "limits")]
    report.add_summaries(results)
    text = w2.goal_ratios(results)
    assert text.splitlines()[2:] == [
        "| workers | headrace images/s | / PyTorch + OpenCV | / best other peer | / (workers x fused decode limit) |",
        "|---|---|---|---|---|",
        "| 1 | 1,500 | 2.50 | 1.50 (grain threads, 1,000) | 0.833 |",
        "| 2 | 2,700 | 2.70 | 1.50 (mindspore RandomCropDecodeResize, 1,800) | 0.750 |"]
    assert "1,800 images/s" in text.splitlines()[0] and text in report.markdown(results, "# R\n")
    no_limit = w2.goal_ratios(results[:-2])
    assert no_limit.splitlines()[-1] == "| 2 | 2,700 | 2.70 | 1.50 (mindspore RandomCropDecodeResize, 1,800) | – |"
    assert "not in this run" in no_limit
    assert w2.goal_ratios(results[2:]) == "" and w2.goal_ratios(results[:2]) == ""


def test_every_config_names_a_known_system_and_unit():
    for cfg in suite.configs():
        assert cfg.system in suite.SYSTEMS and cfg.workload in suite.UNITS
    assert os.path.exists(envs.REQUIREMENTS)


def test_a_hung_runner_is_killed_as_stalled_and_a_busy_one_is_not():
    from benchmarks import harness
    sleeper = harness.Launch(sys.executable, "timeit", ["-n", "1", "-r", "1", "-s", "import time",
                                                        "time.sleep(60)"], timeout=60, stall_s=1.5)
    t0 = time.monotonic()
    res = harness.launch(sleeper)
    assert time.monotonic() - t0 < 15
    assert res["status"] == "failed"
    assert res["error"].startswith("runner gave no result (stalled: its processes used ")
    assert "looks hung); killed)" in res["error"]
    # A runner that keeps a core busy for longer than the stall window is left alone.
    busy = harness.Launch(sys.executable, "timeit", ["-n", "1", "-r", "1", "-s", "import time",
                                                     "t = time.time()\nwhile time.time() - t < 6: pass"],
                          timeout=60, stall_s=3)  # a wide window: a loaded machine still gives it 20%
    res = harness.launch(busy)
    assert res["error"] == "runner gave no result (exit code 0)"


_UNREAPED = """
import os, time
r, w = os.pipe()
if os.fork() == 0:  # a worker that no process of the tree waits for (as a fork server's are, at the end)
    end = time.process_time() + 0.6
    while time.process_time() < end:
        pass
    os.write(w, b"x")
    os._exit(0)
os.read(r, 1)
time.sleep(0.8)  # the monitor sees the finished worker (a zombie: its CPU is in its own stat)
os._exit(0)  # without reaping it: its CPU is not in RUSAGE_CHILDREN
"""


def test_the_cpu_of_a_worker_no_one_reaps_counts_as_the_runners():
    from benchmarks import harness
    res = harness.launch(harness.Launch(sys.executable, "timeit", ["-n", "1", "-r", "1", _UNREAPED], timeout=60,
                                        stall_s=0))
    m = res["measured"]
    assert m["our_cores"] * m["wall_s"] >= 0.55  # the worker's 0.6 s of CPU, at most a period missed


def test_the_quality_check_scores_the_reduced_dct_decode(data):
    from benchmarks import limits
    rows = limits.quality(w2.w2_dir(data, 16), count=16)
    assert [(r["size"], r["images"]) for r in rows] == [(224, 16), (112, 16)]
    assert rows[0]["identical"] == 16 and "min_db" not in rows[0]  # no 2x shrink: exact pixels
    r = rows[1]
    assert r["identical"] < 16 and 0 < r["min_db"] <= r["median_db"] < float("inf")
    assert r["rcdr_area"][1] > r["chain_area"][1]  # the reduced decode aliases less than bilinear
    table = limits.quality_markdown(rows)
    assert table.splitlines()[2] == "| 224 | 16 | 16 | – | – | – | – |"
    assert table.splitlines()[3].startswith(f"| 112 | 16 | {r['identical']} | {r['min_db']:.1f} / ")
