#!/usr/bin/env bash
# Runs scripts/version_smoke.py (error paths, a process pipeline, a MindRecord round trip, the
# torch adapter where torch installs) on every supported Python (3.10-3.13) this machine has other
# than the one the suite ran on: pyenv's, or python3.X on PATH. Each gets its own virtual
# environment (.cache/smoke-py3.X) pinned to constraints/smoke-py3.X.txt when that file exists.
# torch is installed only where its CPU wheel is at hand (pip would fetch the CUDA build otherwise):
# the suite's own Python has it. HEADRACE_CONSTRAINTS=none installs the newest releases.
set -euo pipefail
cd "$(dirname "$0")/.."
main="$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
found=0
for v in 3.10 3.11 3.12 3.13; do
  [ "$v" = "$main" ] && continue
  exe=""
  if [ -d "${PYENV_ROOT:-$HOME/.pyenv}/versions" ]; then
    exe="$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/python 2>/dev/null | sort -V | tail -1 || true)"
  fi
  # python3.X on PATH, if it runs (a pyenv shim of a version not selected exists but fails)
  if [ -z "$exe" ] && command -v "python$v" >/dev/null 2>&1 && "python$v" -c pass >/dev/null 2>&1; then
    exe="$(command -v "python$v")"
  fi
  if [ -z "$exe" ]; then
    echo "version_smoke.sh: Python $v not found: not checked" >&2
    continue
  fi
  venv=".cache/smoke-py$v"
  [ -x "$venv/bin/python" ] || "$exe" -m venv "$venv"
  pin=()
  if [ "${HEADRACE_CONSTRAINTS:-}" != none ] && [ -f "constraints/smoke-py$v.txt" ]; then
    pin=(-c "constraints/smoke-py$v.txt")
  fi
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${pin[@]}" -e .
  "$venv/bin/python" scripts/version_smoke.py
  found=$((found + 1))
done
echo "version_smoke.sh: $found other Python version(s) checked (the suite ran on $main)"
