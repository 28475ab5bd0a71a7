"""scripts/: the test command says what it installs on the system (issue 12, item 22)."""
import os
import subprocess

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
