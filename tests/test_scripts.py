"""scripts/: the test command says what it installs on the system (issue 12, item 22)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

APT_STUB = """#!/bin/sh
echo "$*" >> "$APT_LOG"
case "$*" in *"$APT_MISSING"*) exit 100;; esac
exit 0
"""


def run_system_deps(tmp_path, header_exists=False, missing="none-missing"):
    stubs = tmp_path / "bin"
    stubs.mkdir()
    (stubs / "apt-get").write_text(APT_STUB)
    (stubs / "id").write_text("#!/bin/sh\necho 0\n")
    for f in stubs.iterdir():
        f.chmod(0o755)
    header = tmp_path / "jpeglib.h"
    if header_exists:
        header.write_text("")
    log = tmp_path / "apt.log"
    env = dict(os.environ, PATH=f"{stubs}:{os.environ['PATH']}", JPEGLIB_H=str(header), APT_LOG=str(log),
               APT_MISSING=missing)
    proc = subprocess.run(["bash", os.path.join(ROOT, "scripts", "system_deps.sh")], env=env,
                          capture_output=True, text=True, timeout=60)
    calls = log.read_text().splitlines() if log.exists() else []
    return proc, calls


def test_installing_the_jpeg_headers_is_said_on_stderr(tmp_path):
    proc, calls = run_system_deps(tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1
    assert "libjpeg62-turbo-dev" in lines[0] and "apt-get" in lines[0] and "JPEG region decoder" in lines[0]
    assert calls == ["install -y -q libjpeg62-turbo-dev"]


def test_the_fallback_package_is_named_too(tmp_path):
    proc, calls = run_system_deps(tmp_path, missing="libjpeg62-turbo-dev")
    assert proc.returncode == 0
    lines = proc.stderr.splitlines()
    assert len(lines) == 2 and "libjpeg62-turbo-dev" in lines[0] and "libjpeg-dev" in lines[1]
    assert calls == ["install -y -q libjpeg62-turbo-dev", "update -q", "install -y -q libjpeg62-turbo-dev",
                     "install -y -q libjpeg-dev"]


def test_nothing_is_installed_or_said_when_the_headers_are_there(tmp_path):
    proc, calls = run_system_deps(tmp_path, header_exists=True)
    assert (proc.returncode, proc.stdout, proc.stderr, calls) == (0, "", "", [])


def test_the_test_command_runs_the_system_step():
    with open(os.path.join(ROOT, "scripts", "test.sh")) as f:
        script = f.read()
    assert "bash scripts/system_deps.sh" in script and "apt-get" not in script


# ---- issue 38, item 1: a test environment that reproduces --------------------------------------

def _pins(path) -> dict[str, str]:
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                name, sep, version = line.partition("==")
                assert sep and name and version and " " not in line, f"{path}: {line!r} is not NAME==VERSION"
                out[name.lower().replace("_", "-")] = version
    return out


def test_the_test_command_pins_the_suites_own_environment():
    with open(os.path.join(ROOT, "scripts", "test.sh")) as f:
        script = f.read()
    assert 'constraints/py$pyver.txt' in script and ".cache/test-venv" in script
    pins = _pins(os.path.join(ROOT, "constraints", "py3.11.txt"))
    # every runtime and test dependency the suite installs is pinned exactly
    for name in ("numpy", "cloudpickle", "opencv-python-headless", "pillow", "simplejpeg", "msgpack", "tqdm",
                 "cryptography", "pytest", "hypothesis", "pytest-timeout", "ruff", "mypy", "jax", "torch",
                 "tokenizers", "sentencepiece", "regex", "orbax-checkpoint", "scipy", "soundfile", "ray", "mkdocs",
                 "build"):
        assert name in pins, name
    assert pins["torch"].startswith("2.13.0")


def test_the_smoke_pins_name_only_exact_versions():
    folder = os.path.join(ROOT, "constraints")
    smoke = [f for f in os.listdir(folder) if f.startswith("smoke-py")]
    assert smoke
    for f in smoke:
        assert "numpy" in _pins(os.path.join(folder, f)), f


def test_the_version_smoke_passes_on_this_python():
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "version_smoke.py")],
                          capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "error paths, process pipeline, MindRecord" in proc.stdout and proc.stdout.rstrip().endswith(": ok")


def test_the_test_command_stops_before_installing_on_a_full_disk(tmp_path):
    # The disk check runs before any venv is made: a copy of test.sh beside a system step that does
    # nothing, with a df that reports 100 MB free.
    (tmp_path / "scripts").mkdir()
    with open(os.path.join(ROOT, "scripts", "test.sh")) as f:
        (tmp_path / "scripts" / "test.sh").write_text(f.read())
    (tmp_path / "scripts" / "system_deps.sh").write_text("exit 0\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    df = bin_dir / "df"
    df.write_text("#!/bin/sh\necho 'Filesystem 1M-blocks Used Available Capacity Mounted'\necho '/dev/x 1000 900 100 90% /'\n")
    df.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", str(tmp_path / "scripts" / "test.sh")], capture_output=True, text=True, env=env,
                          timeout=60)
    assert proc.returncode == 1
    assert f"test.sh: 100 MB free on the disk of {tmp_path}; installing the test environment needs about 7000 MB." \
        in proc.stderr
    assert not (tmp_path / ".cache").exists()
