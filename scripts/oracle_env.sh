#!/usr/bin/env bash
# Creates (once) the MindSpore 2.10 oracle used by tests/compat and benchmarks: its own virtual
# environment with numpy<2, cached in .cache/oracle (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
ORACLE=.cache/oracle
if [ -x "$ORACLE/bin/python" ] && "$ORACLE/bin/python" -c "import mindspore.dataset" >/dev/null 2>&1; then
  exit 0
fi
mkdir -p .cache
rm -rf "$ORACLE"
python3 -m venv "$ORACLE"
"$ORACLE/bin/python" -m pip install -q --disable-pip-version-check "numpy<2" "mindspore==2.10.0" "opencv-python-headless" "pillow"
"$ORACLE/bin/python" -c "import mindspore.dataset" >/dev/null 2>&1
echo "MindSpore oracle ready in $ORACLE"
