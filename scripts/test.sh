#!/usr/bin/env bash
# The test command. Installs headrace with its test extras into its own virtual environment
# (.cache/test-venv: packages installed on the machine by hand can neither hide a missing pin nor
# break the run), pinned to the exact versions the suite was last green with
# (constraints/py<version>.txt; scripts/refresh_constraints.sh moves them to the newest releases),
# runs the gates (ruff, mypy; the import contract is tests/test_layers.py), sets up the MindSpore
# oracle for the compat tests (cached in .cache/oracle), runs the whole suite, then the version
# smoke on every other supported Python it finds (scripts/version_smoke.sh). Any step that fails
# stops the run.
#   HEADRACE_CONSTRAINTS=none  install the newest releases instead (what the refresh does)
#   HEADRACE_VENV=DIR          another virtual environment (default .cache/test-venv)
#   HEADRACE_SMOKE=0           skip the other Pythons' smoke
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system_deps.sh  # may install libjpeg headers (system packages); says so on stderr
venv="${HEADRACE_VENV:-.cache/test-venv}"
pyver="$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
pin=()
if [ "${HEADRACE_CONSTRAINTS:-}" = none ]; then
  echo "test.sh: installing the newest releases (HEADRACE_CONSTRAINTS=none)" >&2
elif [ -f "constraints/py$pyver.txt" ]; then
  pin=(-c "constraints/py$pyver.txt")
else
  echo "test.sh: no constraints/py$pyver.txt for Python $pyver: installing the newest releases" >&2
fi
# A fresh install writes ~3.5 GB (this venv: torch, JAX, Ray) and ~3 GB (the oracle), plus pip's
# temporary files: on a fuller disk pip stops midway with "No space left on device" (seen in CI).
need_mb=500
[ -x "$venv/bin/python" ] || need_mb=$((need_mb + 3500))
[ -x .cache/oracle/bin/python ] || need_mb=$((need_mb + 3000))
free_mb=$(df -Pm . | awk 'NR == 2 {print $4}')
if [ "$free_mb" -lt "$need_mb" ]; then
  echo "test.sh: $free_mb MB free on the disk of $PWD; installing the test environment needs about" \
       "$need_mb MB. Free some space (old clones, .cache folders) and run it again." >&2
  exit 1
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
py="$venv/bin/python"
pip=("$py" -m pip install -q --disable-pip-version-check "${pin[@]}")
"${pip[@]}" -e ".[test,text,jax,audio]"
# The adapters' tests need torch: 2.13.0 is a local CPU wheel here (a bare "torch" would pull the CUDA
# build). Where torch or Orbax cannot be installed, say so: their tests then skip. Those installed are
# named in HEADRACE_REQUIRE_FRAMEWORKS, and the suite refuses to start if one of them is not found.
frameworks=jax
"${pip[@]}" "torch==2.13.0" && frameworks="$frameworks,torch" \
  || echo "test.sh: torch 2.13.0 is not installable here: tests/torch skip" >&2
"${pip[@]}" orbax-checkpoint && frameworks="$frameworks,orbax.checkpoint" \
  || echo "test.sh: orbax-checkpoint is not installable here: the Orbax handler's tests skip" >&2
"${pip[@]}" -e ".[ray]" && frameworks="$frameworks,ray" \
  || echo "test.sh: ray is not installable here: tests/ray skip" >&2
export HEADRACE_REQUIRE_FRAMEWORKS="$frameworks"
"$py" -m ruff check headrace benchmarks tests   # rules in pyproject.toml [tool.ruff]
"$py" -m mypy                                  # strict on the typed layers, see [tool.mypy]
bash scripts/oracle_env.sh
export HEADRACE_REQUIRE_ORACLE=1
# With libjpeg-turbo's headers present the region decoder must have been built (a test checks).
if [ -e /usr/include/jpeglib.h ]; then export HEADRACE_REQUIRE_NATIVE=1; fi
# The suite's subprocesses (sys.executable) and `headrace` commands run from the venv too.
export PATH="$PWD/$venv/bin:$PATH"
"$py" -m pytest -q -p no:cacheprovider "$@"
if [ "${HEADRACE_SMOKE:-1}" != 0 ]; then
  bash scripts/version_smoke.sh
fi
