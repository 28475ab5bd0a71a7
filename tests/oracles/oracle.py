"""Runs code in MindSpore 2.10 (its own virtual environment, NumPy 1.26) and returns its result.

The snippet sees ``ds`` (mindspore.dataset), ``np``, ``INPUTS`` (the decoded ``inputs``) and
``catch(fn)`` (returns fn() or the exception as a value); it stores its answer in ``RESULT``.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import tempfile
import textwrap

from . import oracle_codec as codec

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent

_PRELUDE = """
import sys, os, json
sys.path.insert(0, {here!r})
import numpy as np
import oracle_codec as codec
import mindspore.dataset as ds
INPUTS = codec.loads(open({inp!r}).read())
def catch(fn):
    try:
        return fn()
    except Exception as e:
        return e
RESULT = None
"""


def oracle_python() -> pathlib.Path | None:
    """Path of the oracle interpreter, or None if it is not set up."""
    env = os.environ.get("HEADRACE_ORACLE_PYTHON")
    path = pathlib.Path(env) if env else ROOT / ".cache" / "oracle" / "bin" / "python"
    return path if path.exists() else None


class OracleError(RuntimeError):
    pass


def run_ms(code: str, inputs=None, timeout: float = 600):
    """Executes ``code`` under MindSpore and returns its ``RESULT`` (decoded)."""
    py = oracle_python()
    if py is None:
        raise OracleError("the MindSpore oracle is not set up: run scripts/oracle_env.sh")
    with tempfile.TemporaryDirectory(prefix="hr-oracle-") as tmp:
        inp = os.path.join(tmp, "in.json")
        out = os.path.join(tmp, "out.json")
        with open(inp, "w") as f:
            f.write(codec.dumps(inputs))
        script = (_PRELUDE.format(here=str(HERE), inp=inp) + textwrap.dedent(code)
                  + f"\nopen({out!r}, 'w').write(codec.dumps(RESULT))\n")
        path = os.path.join(tmp, "snippet.py")
        with open(path, "w") as f:
            f.write(script)
        # TMPDIR: a snippet's own tempfile.mkdtemp() goes in the folder removed below.
        env = dict(os.environ, GLOG_v="3", PYTHONWARNINGS="ignore", PYTHONHASHSEED="0", TMPDIR=tmp)
        env.pop("PYTHONPATH", None)
        proc = subprocess.run([str(py), path], cwd=tmp, env=env, capture_output=True, text=True,
                              timeout=timeout)
        if proc.returncode != 0 or not os.path.exists(out):
            raise OracleError(f"oracle snippet failed (rc={proc.returncode}):\n{proc.stderr[-4000:]}")
        with open(out) as f:
            return codec.loads(f.read())


def _catch(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - returned as a value, as the oracle's catch does
        return e


def run_headrace(code: str, inputs=None):
    """Executes ``code`` as ``run_ms`` does, in this process with ``ds`` bound to headrace.dataset
    (and ``np``, ``INPUTS``, ``catch``); returns its ``RESULT``. The same program text then runs
    under both libraries."""
    import numpy as np  # noqa: PLC0415

    import headrace.dataset as ds  # noqa: PLC0415
    env = {"np": np, "ds": ds, "INPUTS": inputs, "catch": _catch, "RESULT": None}
    exec(textwrap.dedent(code), env)
    return env["RESULT"]
