#!/usr/bin/env bash
# The test command: installs headrace with its test extras, sets up the MindSpore oracle for the
# compat tests (cached in .cache/oracle), and runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --disable-pip-version-check -e ".[test]"
bash scripts/oracle_env.sh
export HEADRACE_REQUIRE_ORACLE=1
python3 -m pytest -q -p no:cacheprovider "$@"
