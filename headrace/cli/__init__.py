"""The ``headrace`` command: ``demo``, ``mindrecord`` (info, reindex, verify), ``convert``, ``cache``, ``profile``."""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

import headrace

# subcommand -> (module with main(argv), one-line help)
COMMANDS = {
    "demo": ("headrace.cli.demo", "build a small image dataset as MindRecord and train-read it, with throughput"),
    "mindrecord": ("headrace.cli.mindrecord", "inspect or verify MindRecord files, or rebuild their .db index"),
    "convert": ("headrace.cli.convert", "convert CIFAR/MNIST/ImageNet folders/CSV/TFRecord to MindRecord"),
    "cache": ("headrace.cli.cache", "manage the host's dataset cache (MindSpore's cache_admin flags)"),
    "profile": ("headrace.cli.profile", "run a script under the pipeline profiler: per-op table, bottleneck "
                "verdict, JSON, trace, chart"),
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="headrace", description="headrace data pipelines")
    parser.add_argument("command", choices=sorted(COMMANDS), help="; ".join(f"{k}: {v[1]}" for k, v in COMMANDS.items()))
    parser.add_argument("--version", action="version", version=f"headrace {headrace.__version__}")
    if argv and argv[0] == "--version":
        parser.parse_args(argv[:1])  # prints the version and exits 0
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help()
        return 0 if argv else 2
    if argv[0] not in COMMANDS:
        parser.parse_args(argv[:1])  # prints the usage error and exits 2
    module = importlib.import_module(COMMANDS[argv[0]][0])
    return int(module.main(argv[1:]) or 0)


if __name__ == "__main__":
    sys.exit(main())
