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


def test_cli_usage_errors():
    proc = subprocess.run([sys.executable, "-m", "headrace", "nope"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "invalid choice" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "headrace", "demo", "--images", "0"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2 and "--images must be a positive integer, but got 0" in proc.stderr
