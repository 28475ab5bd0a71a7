#!/usr/bin/env bash
# Moves the pins to the newest releases: installs them into fresh virtual environments, runs the
# whole test command there (the suite on this Python, then the version smoke on the others), and
# only when all of it is green rewrites constraints/py<version>.txt and constraints/smoke-py*.txt
# from what was installed. A red run leaves the pins as they were; fix the code, then refresh again.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .cache/refresh-venv .cache/refresh-smoke
mkdir -p .cache/refresh-smoke
# the smoke venvs of the refresh live apart from the test command's
for d in .cache/smoke-py*; do [ -d "$d" ] && mv "$d" ".cache/refresh-smoke/keep-${d##*/}"; done
restore() {
  rm -rf .cache/smoke-py*
  for d in .cache/refresh-smoke/keep-*; do [ -d "$d" ] && mv "$d" ".cache/${d##*/keep-}"; done
  return 0
}
trap restore EXIT
HEADRACE_CONSTRAINTS=none HEADRACE_VENV=.cache/refresh-venv bash scripts/test.sh "$@"
pyver="$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
freeze() { "$1" -m pip freeze --exclude-editable --disable-pip-version-check | grep -v '^-e ' | LC_ALL=C sort; }
{ echo "# Pins of the test command on Python $pyver, written by scripts/refresh_constraints.sh on $(date -u +%F)"
  freeze .cache/refresh-venv/bin/python; } > "constraints/py$pyver.txt"
for venv in .cache/smoke-py*; do
  [ -x "$venv/bin/python" ] || continue
  v="${venv##*smoke-py}"
  { echo "# Pins of the version smoke on Python $v, written by scripts/refresh_constraints.sh on $(date -u +%F)"
    freeze "$venv/bin/python"; } > "constraints/smoke-py$v.txt"
done
echo "refresh_constraints.sh: green on the newest releases; constraints/ rewritten (review with git diff)"
