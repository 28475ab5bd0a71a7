"""An Orbax checkpoint handler for headrace loaders (``pip install orbax-checkpoint``).

Saves ``loader.state_dict()`` (a headrace.jax or headrace.torch ``Loader``) as one small JSON
file per JAX process, named after the process index and count, and restores it with
``loader.load_state_dict``, which checks it against the loader's pipeline.

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
from typing import Any

import jax

try:
    import orbax.checkpoint as ocp
except ImportError as e:  # pragma: no cover - exercised only where orbax is missing
    raise ImportError("headrace.jax.orbax_handler needs Orbax: pip install orbax-checkpoint") from e

__all__ = ["LoaderCheckpointHandler", "LoaderRestore", "LoaderSave"]


def _file_name() -> str:
    return f"headrace_loader_process_{jax.process_index()}_of_{jax.process_count()}.json"


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
        path = directory / _file_name()
        if not path.exists():
            raise FileNotFoundError(f"LoaderCheckpointHandler.restore: {path} does not exist: the checkpoint was "
                                    f"saved by another number of JAX processes or holds no loader state.")
        loader.load_state_dict(json.loads(path.read_text()))
        return loader


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
