"""Runs jax_cases.py in a pytest process of its own (see its docstring): JAX never runs in the
suite's own process."""
import importlib.util
import os
import subprocess
import sys

import pytest


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed (pip install headrace[jax])")
def test_jax_cases_in_their_own_process(tmp_path):
    here = os.path.dirname(os.path.abspath(__file__))
    env = {**os.environ, "PYTHONPATH": os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                          f"--basetemp={tmp_path / 'inner'}", os.path.join(here, "jax_cases.py")], capture_output=True, text=True, timeout=900, env=env)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and "failed" not in out.stdout, out.stdout[-2000:]
