"""The interpreters the suite runs systems in, and their one-time setup.

* main python (this one): headrace, the plain references and the limits;
* .cache/oracle (scripts/oracle_env.sh): MindSpore 2.10 with numpy 1.26;
* .cache/bench/venv: torch, tensorflow-cpu, scikit-image from requirements.txt.
"""
from __future__ import annotations

import os
import site
import subprocess
import sys

from . import harness
from .suite import BENCH_PY, BENCH_VENV, ORACLE_PY, SYSTEMS, TORCHAUDIO_PY, TORCHAUDIO_VENV

REQUIREMENTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "requirements.txt")
LOG = os.path.join(harness.ROOT, ".cache", "bench", "install.log")
IMPORT_NAME = {"torch": "torch", "scikit-image": "skimage", "tensorflow-cpu": "tensorflow",
               "grain": "grain", "nvidia-dali-cuda120": "nvidia.dali"}


def interpreter(system: str) -> str:
    py = SYSTEMS[system][1]
    return sys.executable if py == "main" else py


def can_import(python: str, module: str) -> bool:
    if not os.path.exists(python):
        return False
    r = subprocess.run([python, "-c", f"import {module}"], capture_output=True, cwd="/",
                       env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    return r.returncode == 0


def requirements() -> list[str]:
    out = []
    with open(REQUIREMENTS) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                out.append(line)
    return out


def _log(cmd: list[str]) -> int:
    os.makedirs(os.path.dirname(LOG), exist_ok=True)
    with open(LOG, "a") as log:
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        return subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=harness.ROOT).returncode


def make_venv(path: str) -> str:
    """A venv at `path` that sees every package this interpreter sees; returns its python.

    `venv --system-site-packages` only adds the *base* interpreter's site-packages. When the suite is
    started from a virtualenv (or with packages in the user site), OpenCV, numpy and headrace live
    in this interpreter's own site directories, so a `.pth` file in the new venv adds them with
    `site.addsitedir` (which also runs their own `.pth` files: editable installs). Rewritten on every
    call, so a venv made earlier from another interpreter follows the current one.
    """
    py = os.path.join(path, "bin", "python")
    if not os.path.exists(py):
        _log([sys.executable, "-m", "venv", "--system-site-packages", path])
    dirs = [d for d in (*site.getsitepackages(), site.getusersitepackages()) if os.path.isdir(d)]
    purelib = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    with open(os.path.join(purelib, "_bench_parent_site.pth"), "w") as f:
        f.write("import site; " + "; ".join(f"site.addsitedir({d!r})" for d in dirs) + "\n")
    return py


def setup_bench_venv() -> dict[str, str]:
    """Creates the benchmark venv and installs what is missing; returns {requirement: status}."""
    make_venv(BENCH_VENV)
    status = {}
    for req in requirements():
        name = req.split("=")[0].split("<")[0].split(">")[0].strip()
        module = IMPORT_NAME.get(name, name)
        if can_import(BENCH_PY, module):
            status[req] = "ok"
            continue
        print(f"[setup] pip install {req} into {BENCH_VENV} (log: {LOG})", file=sys.stderr)
        rc = _log([BENCH_PY, "-m", "pip", "install", "-q", req])
        status[req] = "ok" if rc == 0 and can_import(BENCH_PY, module) else f"install failed (rc={rc}, see {LOG})"
    return status


# torchaudio's newest wheel is built against torch 2.11 (its extension links torch's CUDA libraries,
# so the benchmark venv's CPU torch cannot load it): both pinned, in a venv of their own.
TORCHAUDIO_REQUIREMENTS = ["torch==2.11.0", "torchaudio==2.11.0", "numpy"]


def setup_torchaudio_venv() -> dict[str, str]:
    """Creates the torchaudio venv and installs torch and torchaudio into it when missing."""
    if can_import(TORCHAUDIO_PY, "torchaudio"):
        return {"torchaudio venv": "ok"}
    if not os.path.exists(TORCHAUDIO_PY):
        _log([sys.executable, "-m", "venv", TORCHAUDIO_VENV])
    print(f"[setup] pip install {' '.join(TORCHAUDIO_REQUIREMENTS)} into {TORCHAUDIO_VENV} (log: {LOG})",
          file=sys.stderr)
    rc = _log([TORCHAUDIO_PY, "-m", "pip", "install", "-q", *TORCHAUDIO_REQUIREMENTS])
    ok = rc == 0 and can_import(TORCHAUDIO_PY, "torchaudio")
    return {"torchaudio venv": "ok" if ok else f"install failed (rc={rc}, see {LOG})"}


def setup_oracle() -> str:
    if can_import(ORACLE_PY, "mindspore.dataset"):
        return "ok"
    print("[setup] bash scripts/oracle_env.sh (MindSpore 2.10 venv)", file=sys.stderr)
    rc = _log(["bash", os.path.join(harness.ROOT, "scripts", "oracle_env.sh")])
    return "ok" if rc == 0 and can_import(ORACLE_PY, "mindspore.dataset") else f"setup failed (rc={rc}, see {LOG})"
