"""An Orbax checkpoint handler for headrace loaders (``pip install headrace[orbax]``).

Saves ``loader.state_dict()`` (a headrace.jax or headrace.torch ``Loader``) as one small JSON
file per JAX process, named after the process index and count, and restores it with
``loader.load_state_dict``, which checks it against the loader's pipeline.

Restored by as many processes, each process reads its own file. Restored by another number of
processes (elastic resume), process ``i`` reads the file of process ``i mod N`` of the ``N`` that
saved: any one of them holds the position of the whole job (the loader's ranks step in lockstep),
and the loader deals the rows no process had received over the new processes (see
``Loader.load_state_dict``).

Examples:
    >>> import orbax.checkpoint as ocp                                      # doctest: +SKIP
    >>> ckpt = ocp.Checkpointer(LoaderCheckpointHandler())                  # doctest: +SKIP
    >>> ckpt.save(path, args=LoaderSave(loader))                            # doctest: +SKIP
    >>> ckpt.restore(path, args=LoaderRestore(other_loader))                # doctest: +SKIP
With a ``CheckpointManager``: ``args=ocp.args.Composite(data=LoaderSave(loader), ...)``.
"""
from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import jax

try:
    import orbax.checkpoint as ocp
except ImportError as e:  # pragma: no cover - exercised only where orbax is missing
    raise ImportError("headrace.jax.orbax_handler needs Orbax: pip install headrace[orbax] (or orbax-checkpoint)") from e

__all__ = ["LoaderCheckpointHandler", "LoaderRestore", "LoaderSave"]


_FILE = re.compile(r"headrace_loader_process_(\d+)_of_(\d+)\.json")


def _file_name(index: int | None = None, count: int | None = None) -> str:
    """The file of process ``index`` of ``count`` (default: this process of this job)."""
    index = jax.process_index() if index is None else index
    count = jax.process_count() if count is None else count
    return f"headrace_loader_process_{index}_of_{count}.json"


def _check_loader(loader: Any, name: str) -> Any:
    if not (callable(getattr(loader, "state_dict", None)) and callable(getattr(loader, "load_state_dict", None))):
        raise TypeError(f"{name}: expected a headrace loader (with state_dict and load_state_dict), but got "
                        f"{type(loader).__name__}.")
    return loader


class LoaderCheckpointHandler(ocp.CheckpointHandler):
    """Saves and restores a headrace loader's position (see the module docstring)."""

    def save(self, directory, item=None, args=None):
        loader = _check_loader(args.item if args is not None else item, "LoaderCheckpointHandler.save")
        (directory / _file_name()).write_text(json.dumps(loader.state_dict()))

    def restore(self, directory, item=None, args=None):
        loader = _check_loader(args.item if args is not None else item, "LoaderCheckpointHandler.restore")
        loader.load_state_dict(json.loads(_saved_file(directory).read_text()))
        return loader


def _saved_file(directory: Any) -> Any:
    """The file this process restores from (see the module docstring)."""
    path = directory / _file_name()
    if path.exists():
        return path
    name = "LoaderCheckpointHandler.restore"
    counts = set()
    for p in directory.glob("headrace_loader_process_*_of_*.json"):
        match = _FILE.fullmatch(p.name)
        if match:
            counts.add(int(match.group(2)))
    if not counts:
        raise FileNotFoundError(f"{name}: {directory} holds no loader state (no headrace_loader_process_*.json file).")
    if len(counts) > 1:
        raise ValueError(f"{name}: {directory} holds loader states saved by {sorted(counts)} processes: one "
                         "checkpoint directory must hold one save.")
    saved = counts.pop()
    missing = [i for i in range(saved) if not (directory / _file_name(i, saved)).exists()]
    if missing:
        raise FileNotFoundError(f"{name}: {directory} lacks the loader states of processes {missing} of the {saved} "
                                "that saved it: the checkpoint is incomplete.")
    return directory / _file_name(jax.process_index() % saved, saved)


@ocp.args.register_with_handler(LoaderCheckpointHandler, for_save=True)
@dataclasses.dataclass
class LoaderSave(ocp.args.CheckpointArgs):
    """``args`` for saving ``item`` (a headrace loader) with :class:`LoaderCheckpointHandler`."""
    item: Any


@ocp.args.register_with_handler(LoaderCheckpointHandler, for_restore=True)
@dataclasses.dataclass
class LoaderRestore(ocp.args.CheckpointArgs):
    """``args`` for restoring into ``item`` (a headrace loader) with :class:`LoaderCheckpointHandler`."""
    item: Any
