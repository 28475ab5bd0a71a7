import subprocess
import sys


def test_demo_runs_and_reports_throughput(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "headrace", "demo", "--dir", str(tmp_path), "--images", "24",
                           "--epochs", "2", "--batch-size", "8", "--workers", "1", "--size", "32"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "3 steps/epoch" in out
    assert "throughput:" in out and "images/s" in out and "time to first batch:" in out
    assert "batch shape (8, 3, 32, 32) float32" in out
    for op in ("Decode", "RandomResizedCrop", "RandomHorizontalFlip", "Normalize", "HWC2CHW", "batch", "MindDataset"):
        assert f"\n  {op:<28} " in out  # a row of the profiler's per-op table
    assert "per-op time over one profiled epoch" in out and "CPU s  CPU % wall %  us/image" in out
    assert " is the bottleneck: " in out or "No op is saturated" in out
    assert (tmp_path / "demo_24.mindrecord").exists() and (tmp_path / "demo_24.mindrecord.db").exists()
    # One worker cannot take turns on the GIL: the probe keeps the threads.
    assert "\nsetting: map threads (this verdict does not advise worker processes)\n" in out
    assert ", 1 worker(s), map threads\n" in out and "\nverdict on the main job (map threads): " in out


ADVICE = "Run it in worker processes (python_multiprocessing=True)."


def _demo(tmp_path, *extra):
    proc = subprocess.run([sys.executable, "-m", "headrace", "demo", "--dir", str(tmp_path), "--images", "48",
                           "--epochs", "1", "--batch-size", "8", "--workers", "2", "--size", "32", *extra],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {line.split(":", 1)[0]: line.split(":", 1)[1] for line in proc.stdout.splitlines() if ":" in line}


def test_demo_runs_as_its_verdict_advises(tmp_path):
    lines = _demo(tmp_path)
    probe = lines["probe epoch with map threads"]
    mode = "processes" if ADVICE in probe else "threads"
    assert lines["setting"] == (" map in worker processes, as this verdict advises" if mode == "processes"
                                else " map threads (this verdict does not advise worker processes)")
    assert lines["dataset"].endswith(f", 2 worker(s), map {mode}")
    main = lines[f"verdict on the main job (map {mode})"]
    assert ADVICE not in main or mode == "threads"  # processes: the verdict on the job has no advice to switch


def test_demo_mode_processes_skips_the_probe(tmp_path):
    lines = _demo(tmp_path, "--mode", "processes")
    assert "probe epoch with map threads" not in lines and "setting" not in lines
    assert lines["dataset"].endswith(", 2 worker(s), map processes")
    assert ADVICE not in lines["verdict on the main job (map processes)"]


def test_cli_usage_errors():
    proc = subprocess.run([sys.executable, "-m", "headrace", "nope"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "invalid choice" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "headrace", "demo", "--images", "0"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2 and "--images must be a positive integer, but got 0" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "headrace", "demo", "--mode", "fork"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2 and "argument --mode: invalid choice: 'fork' (choose from 'auto', 'threads', " \
        "'processes')" in proc.stderr
