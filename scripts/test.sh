#!/usr/bin/env bash
# The test command: installs headrace with its test extras, sets up the MindSpore oracle for the
# compat tests (cached in .cache/oracle), and runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# The optional JPEG region decoder (headrace/_native) compiles against libjpeg-turbo's headers.
# Best effort: install them when missing and apt-get is usable as root; without them the build
# skips the extension and headrace decodes whole images.
if [ ! -e /usr/include/jpeglib.h ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    { apt-get install -y -q libjpeg62-turbo-dev || { apt-get update -q && apt-get install -y -q libjpeg62-turbo-dev; } \
        || apt-get install -y -q libjpeg-dev; } >/dev/null 2>&1 || true
fi
python3 -m pip install -q --disable-pip-version-check -e ".[test]"
bash scripts/oracle_env.sh
export HEADRACE_REQUIRE_ORACLE=1
# With libjpeg-turbo's headers present the region decoder must have been built (a test checks).
if [ -e /usr/include/jpeglib.h ]; then export HEADRACE_REQUIRE_NATIVE=1; fi
python3 -m pytest -q -p no:cacheprovider "$@"
