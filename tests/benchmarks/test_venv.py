"""The suite runs from a virtualenv (issue 19): the benchmark venv it makes sees the packages of the
interpreter that started it, not only the base interpreter's, and a quick run from a venv measures."""
import json
import os
import subprocess
import sys
import sysconfig

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def purelib(python):
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return subprocess.run([python, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.fixture
def user_venv(tmp_path):
    """A venv without system site-packages whose packages are this interpreter's (a `.pth`, as an
    installed environment would have them) plus one module found nowhere else."""
    venv = tmp_path / "user-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    lib = purelib(python)
    here = sysconfig.get_paths()["purelib"]
    with open(os.path.join(lib, "parent.pth"), "w") as f:
        f.write(f"import site; site.addsitedir({here!r})\n")
    with open(os.path.join(lib, "only_in_user_venv.py"), "w") as f:
        f.write("WHERE = 'user venv'\n")
    return python


def test_bench_venv_sees_the_starting_venvs_packages(user_venv, tmp_path):
    bench = tmp_path / "bench-venv"
    code = "import sys; from benchmarks import envs; print(envs.make_venv(sys.argv[1]))"
    made = subprocess.run([user_venv, "-c", code, str(bench)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    bench_py = made.stdout.strip().splitlines()[-1]
    assert bench_py == str(bench / "bin" / "python")
    probe = subprocess.run(
        [bench_py, "-c", "import only_in_user_venv, numpy; print(only_in_user_venv.WHERE)"],
        capture_output=True, text=True, cwd="/", timeout=120)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == "user venv"


def test_quick_run_from_a_venv_measures(user_venv, tmp_path):
    out = tmp_path / "out"
    run = subprocess.run(
        [user_venv, "-m", "benchmarks", "--quick", "-w", "w1", "-s", "headrace,python",
         "--variant", "processes", "--variant", "bare loop", "--workers", "1", "--no-setup",
         "--data", str(tmp_path / "data"), "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    with open(out / "latest.json") as f:
        results = json.load(f)["results"]
    rows = {(r["system"], r["variant"]): r for r in results}
    # "processes" also picks the row run inside ds.profile()
    assert set(rows) == {("headrace", "processes"), ("headrace", "processes, profiled"), ("python", "bare loop")}
    for r in rows.values():
        assert r["status"] == "ok", r
        assert r["python"] == sys.version.split()[0]
        assert sum(e["items"] for e in r["epochs"]) == 5_120
