"""``headrace profile``: run a script (or a saved pipeline) under the pipeline profiler.

    headrace profile [-o DIR] [--op-sample-seconds S] train.py [ARGS...]
    headrace profile [-o DIR] -m package.module [ARGS...]
    headrace profile [-o DIR] [--epochs N] pipeline.json     # a pipeline saved by ds.serialize

Like ``python -m cProfile``, the script runs as ``__main__`` with ``sys.argv`` set to it and its
arguments and its folder first on ``sys.path``. Every iterator it creates is profiled; at the end
(also after an error or ``sys.exit``) the op table and the bottleneck verdict are printed and
``DIR/profile.json``, ``DIR/profile.trace.json`` (Chrome / Perfetto) and ``DIR/profile.png`` are
written (default DIR: ``headrace-profile``).
"""
from __future__ import annotations

import argparse
import os
import runpy
import sys
from typing import Sequence


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="headrace profile", description=__doc__.split("\n\n")[0])
    p.add_argument("-o", "--output", default="headrace-profile", help="folder for the profile's files")
    p.add_argument("--op-sample-seconds", type=float, default=0.2,
                   help="seconds between tasks (per worker) that time each of their ops (default 0.2)")
    p.add_argument("--epochs", type=int, default=1, help="epochs to read a saved pipeline (.json) for")
    p.add_argument("-m", dest="module", help="run a module as a script (as python -m)")
    p.add_argument("target", nargs="?", help="the script, or a pipeline saved by ds.serialize (.json)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return p


_VALUED = {"-o", "--output", "--op-sample-seconds", "--epochs"}  # options followed by a value


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    # As with python -m: everything after "-m NAME" belongs to the module.
    module_args: list[str] | None = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-m" and i + 1 < len(argv):
            argv, module_args = argv[:i + 2], argv[i + 2:]
            break
        if a in _VALUED:
            i += 2
        elif a.startswith("-") and a != "--":
            i += 1
        else:
            break  # the script: what follows is its own
    opts = parser.parse_args(argv)
    if module_args is not None:
        opts.args = module_args
    if opts.module is None and opts.target is None:
        parser.error("give a script, a saved pipeline (.json) or -m MODULE")
    if not 0 <= opts.op_sample_seconds <= 3600:
        parser.error(f"--op-sample-seconds must be in [0, 3600], got {opts.op_sample_seconds}")
    if opts.epochs < 1:
        parser.error(f"--epochs must be >= 1, got {opts.epochs}")
    if opts.target is not None and not os.path.isfile(opts.target):
        parser.error(f"no such file: {opts.target}")
    import headrace.dataset as ds  # noqa: PLC0415 - after the arguments are checked

    code = 0
    prof = ds.profile(op_sample_seconds=opts.op_sample_seconds)
    with prof:
        try:
            if opts.module is not None:
                _run_module(opts.module, opts.args)
            elif opts.target.endswith(".json"):
                _run_saved(ds, opts.target, opts.epochs)
            else:
                _run_script(opts.target, opts.args)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # noqa: BLE001 - the script's failure: report it, still write the profile
            code = 1
            import traceback  # noqa: PLC0415
            traceback.print_exc()
    paths = prof.write(opts.output)
    print(prof.table(), file=sys.stderr)
    print(f"profile written: {paths['json']}, {paths['trace']} (open in https://ui.perfetto.dev), "
          f"{paths['png']}", file=sys.stderr)
    return code


def _run_script(path: str, args: list[str]) -> None:
    sys.argv = [path, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    runpy.run_path(path, run_name="__main__")


def _run_module(name: str, args: list[str]) -> None:
    sys.argv = [name, *args]
    sys.path.insert(0, os.getcwd())
    runpy.run_module(name, run_name="__main__", alter_sys=True)


def _run_saved(ds: object, path: str, epochs: int) -> None:
    pipeline = ds.deserialize(json_filepath=path)  # type: ignore[attr-defined]
    it = pipeline.create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    for _ in range(epochs):
        for _row in it:
            pass
