"""The file autotune writes (``ds.config.set_enable_autotune(True, filepath_prefix)``).

``<prefix>_<rank>.json`` (rank: the ``RANK_ID`` environment variable, 0 without it), in
MindSpore's layout: ``{"remark": ..., "summary": [one line per op], "tree": the pipeline}``,
where the tree is what ``ds.serialize`` writes for the iterator's dataset, with the tuned
``num_parallel_workers`` and ``python_multiprocessing`` of the ops the tuner changed and the tuned
prefetch depth as the top op's ``connector_queue_size``. ``ds.deserialize`` reads the file (it takes
the tree) and builds the tuned pipeline. The file is written to a temporary name and renamed.
"""
from __future__ import annotations

import json
import os
from typing import Any

from headrace.dataset import _provided
from headrace.dataset.core import config as _config

REMARK = "Written by headrace's dataset autotune: the pipeline with the settings it tuned."


def attach(run: Any, dataset: Any) -> None:
    """Has a tuned ``run`` of ``dataset``'s pipeline write the file, when a prefix is set."""
    prefix = _config._autotune_filepath()
    if run.tuner is None or prefix is None:
        return
    run.tuner.writer = lambda tuner: write(dataset, tuner, prefix)


def path_for(prefix: str) -> str:
    return f"{prefix}_{os.environ.get('RANK_ID', '0')}.json"


def write(dataset: Any, tuner: Any, prefix: str) -> str:
    """Writes the tuned pipeline of ``dataset``; returns the file's path."""
    tuned, prefetch = tuner.settings()
    by_node = {id(node): (workers, procs) for node, workers, procs in tuned}
    tree = _provided.get("serialize")(dataset)  # _serdes, the JSON layer, sits above every dataset class
    summary: list[str] = []
    _apply(dataset, tree, by_node, summary)
    tree["connector_queue_size"] = prefetch
    summary.insert(0, f"prefetch_size: {prefetch}")
    path = path_for(prefix)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"remark": REMARK, "summary": summary, "tree": tree}, f, indent=4, sort_keys=True)
    os.replace(tmp, path)
    return path


def _apply(d: Any, out: dict, by_node: dict, summary: list[str]) -> None:
    for node in _own_nodes(d):
        got = by_node.get(id(node))
        if got is not None:
            workers, procs = got
            out["num_parallel_workers"] = workers
            if "python_multiprocessing" in out:
                out["python_multiprocessing"] = procs
    mp = out.get("python_multiprocessing")
    mode = "" if mp is None else f", python_multiprocessing: {mp}"
    summary.append(f"{out['op_type']}: num_parallel_workers: {out.get('num_parallel_workers')}{mode}")
    for child, child_out in zip(d.children, out.get("children", [])):
        _apply(child, child_out, by_node, summary)


def _own_nodes(d: Any) -> list:
    """The plan nodes a Dataset made on top of its children's."""
    stop = {id(c._plan) for c in d.children}
    out, seen, todo = [], set(), [d._plan]
    while todo:
        n = todo.pop()
        if id(n) in stop or id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        todo.extend(n.children)
    return out
