#!/usr/bin/env bash
# The test command: installs headrace with its test extras, runs the gates (ruff, mypy; the import
# contract is tests/test_layers.py), sets up the MindSpore oracle for the compat tests (cached in
# .cache/oracle), and runs the whole suite. Any gate that fails stops the run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system_deps.sh  # may install libjpeg headers (system packages); says so on stderr
python3 -m pip install -q --disable-pip-version-check -e ".[test,text,jax]"
# The adapters' tests need torch: 2.13.0 is a local CPU wheel here (a bare "torch" would pull the CUDA
# build). Where torch or Orbax cannot be installed, say so: their tests then skip. Those installed are
# named in HEADRACE_REQUIRE_FRAMEWORKS, and the suite refuses to start if one of them is not found.
frameworks=jax
python3 -m pip install -q --disable-pip-version-check "torch==2.13.0" && frameworks="$frameworks,torch" \
  || echo "test.sh: torch 2.13.0 is not installable here: tests/torch skip" >&2
python3 -m pip install -q --disable-pip-version-check orbax-checkpoint && frameworks="$frameworks,orbax.checkpoint" \
  || echo "test.sh: orbax-checkpoint is not installable here: the Orbax handler's tests skip" >&2
export HEADRACE_REQUIRE_FRAMEWORKS="$frameworks"
python3 -m ruff check headrace benchmarks tests   # rules in pyproject.toml [tool.ruff]
python3 -m mypy                                  # strict on the typed layers, see [tool.mypy]
bash scripts/oracle_env.sh
export HEADRACE_REQUIRE_ORACLE=1
# With libjpeg-turbo's headers present the region decoder must have been built (a test checks).
if [ -e /usr/include/jpeglib.h ]; then export HEADRACE_REQUIRE_NATIVE=1; fi
python3 -m pytest -q -p no:cacheprovider "$@"
