"""The gates of scripts/test.sh, also run by the suite itself: ruff and mypy with the settings in
pyproject.toml must find nothing (the import contract is tests/test_layers.py). Skipped only where
the tools are not installed (``pip install -e .[test]`` installs them)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(args, tmp_path):
    env = dict(os.environ, RUFF_CACHE_DIR=str(tmp_path / "ruff"))
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)


def test_ruff_finds_nothing(tmp_path):
    pytest.importorskip("ruff")
    got = run(["ruff", "check", "headrace", "benchmarks", "tests"], tmp_path)
    assert got.returncode == 0, got.stdout + got.stderr


def test_mypy_finds_nothing(tmp_path):
    pytest.importorskip("mypy")
    got = run(["mypy", "--cache-dir", str(tmp_path / "mypy")], tmp_path)
    assert got.returncode == 0 and "Success: no issues found" in got.stdout, got.stdout + got.stderr
