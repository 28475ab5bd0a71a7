"""Fuzzing of damaged MindRecord files (issue 12 items 14, 15): see fuzz_integrity.py. The examples
run in a child process whose address space is capped at 3 GiB (an attempt to allocate a TiB fails
there at once) and which must finish within a hard timeout (no hang)."""
import os
import resource
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIMIT = 3 << 30


def _cap():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def test_fuzz_damaged_files(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "tests.mindrecord.fuzz_integrity", str(tmp_path), "120"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=250, preexec_fn=_cap)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-6000:])
    assert proc.stdout.strip().endswith("fuzz ok")
    assert sorted(os.listdir(tmp_path)) == ["pristine"]     # every example's copy was removed
