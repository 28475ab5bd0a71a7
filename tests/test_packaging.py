"""What a package index takes (issue 38, item 5): an sdist that builds, a pure-Python wheel with
PEP 639 license metadata, ``py.typed`` and the extras, and ``headrace --version``.
scripts/build_wheels.sh also makes the manylinux wheel with the JPEG region decoder (auditwheel)."""
from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile

import pytest

import headrace

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(args, **kw):
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=ROOT, **kw)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    env = dict(os.environ, HEADRACE_NO_NATIVE="1")
    _run([sys.executable, "-m", "build", "--sdist", "--outdir", str(out), "."], env=env)
    sdist = next(out.glob("*.tar.gz"))
    # the wheel is built from the sdist, as an index's installer would
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(sdist)], env=env)
    return sdist, next(out.glob("*.whl"))


def test_the_sdist_holds_what_a_build_needs(built):
    sdist, _ = built
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    assert {"LICENSE", "pyproject.toml", "setup.py", "headrace/_native/_jpegregion.c", "headrace/_native/_pixels.c",
            "headrace/_native/_rows.c", "headrace/py.typed", "constraints/py3.11.txt"} <= names


def test_the_wheel_is_pure_python_with_license_metadata_types_and_extras(built):
    _, wheel = built
    assert wheel.name == f"headrace-{headrace.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta = z.read(f"headrace-{headrace.__version__}.dist-info/METADATA").decode()
    assert "headrace/py.typed" in names
    assert f"headrace-{headrace.__version__}.dist-info/licenses/LICENSE" in names
    assert not any(n.endswith(".so") for n in names)
    lines = meta.splitlines()
    assert "License-Expression: Apache-2.0" in lines and "License-File: LICENSE" in lines
    assert "Requires-Python: >=3.10" in lines
    assert {"Provides-Extra: torch", "Provides-Extra: jax", "Provides-Extra: text"} <= set(lines)
    assert any(ln.startswith("Requires-Dist: torch") and 'extra == "torch"' in ln for ln in lines)


def test_headrace_version():
    proc = _run([sys.executable, "-c", "from headrace.cli import main; main(['--version'])"])
    assert proc.stdout == f"headrace {headrace.__version__}\n"
