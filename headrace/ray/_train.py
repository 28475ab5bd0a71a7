"""Per-rank loaders inside Ray Train: each training worker runs its own headrace pipeline.

Ray Train only schedules and restarts the workers; the data comes from headrace as it would under
``torch.distributed``: worker ``rank`` of ``world_size`` reads shard ``rank`` of the pipeline
(MindSpore's ``num_shards`` / ``shard_id`` rule, every rank as many rows), in the pipeline's own
order, and keeps a position after each batch it hands out. The position goes into the Ray Train
checkpoint (``save_to`` a directory the worker reports) and comes back from it (``restore``): on
the same ranks each continues right after its last batch; on another number of ranks the rows of
the epoch that no rank had received are dealt out over the new ranks (``headrace/_feed/elastic.py``).

The same holds for the framework loaders (``headrace.torch.Loader``, ``headrace.jax`` loaders):
``train_shard()`` gives them Ray Train's rank and world size, ``save_loader`` / ``restore_loader``
put their state into the Ray Train checkpoint and take it back.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, Iterator

import ray.train

from headrace._feed.args import check_epoch, check_source
from headrace._feed.shard import check_shard, reshard
from headrace._feed.stream import EpochReader

__all__ = ["RankLoader", "restore_loader", "save_loader", "train_shard"]

_NAME = "headrace.ray.RankLoader"


class _AsIs:
    """The batches as the pipeline makes them (NumPy arrays), in the loop's thread."""

    inline = True

    def __call__(self, row: list) -> list:
        return row


_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\Z")


def state_file(rank: int, key: str = "loader") -> str:
    """The base name of rank ``rank``'s state of the loader ``key`` in a checkpoint directory."""
    return f"headrace-{key}-rank{rank:05d}.json"


def train_shard() -> dict:
    """This Ray Train worker's ``{"rank": world rank, "world_size": number of workers}``, from
    ``ray.train.get_context()``: ``headrace.torch.Loader(dataset, **train_shard())`` reads this
    worker's shard.

    Raises:
        RuntimeError: called outside a Ray Train training function.
    """
    try:
        ctx = ray.train.get_context()
        return {"rank": ctx.get_world_rank(), "world_size": ctx.get_world_size()}
    except RuntimeError as e:
        raise RuntimeError(f"headrace.ray.train_shard: no Ray Train context here ({e}); call it inside "
                           "train_loop_per_worker, or pass rank= and world_size= yourself.") from None


def _check_loader(loader: Any, key: Any, who: str) -> None:
    if not isinstance(key, str) or not _KEY.match(key):
        raise ValueError(f"{who}: key must be a name of letters, digits, '_', '.' and '-' (not starting with '.' or "
                         f"'-'), but got {key!r}.")
    if not (callable(getattr(loader, "state_dict", None)) and callable(getattr(loader, "load_state_dict", None))):
        raise TypeError(f"{who}: loader must be a headrace loader (headrace.ray.RankLoader, headrace.torch.Loader, a "
                        f"headrace.jax loader: it has state_dict and load_state_dict), but got "
                        f"{type(loader).__name__}.")


def save_loader(loader: Any, directory: Any, key: str = "loader") -> str:
    """Writes ``loader``'s position (``state_dict()``) into ``directory``, under a name of its rank
    and ``key`` (the folder a worker passes to ``ray.train.Checkpoint.from_directory``: Ray Train
    gathers the ranks' files into one checkpoint). Returns the file's path.

    Args:
        loader: a headrace loader (``headrace.torch.Loader``, a ``headrace.jax`` loader, ``RankLoader``).
        directory (str): an existing directory.
        key (str, optional): names this loader's files, so that one checkpoint holds several
            loaders (say "train" and "eval"). Default: "loader".

    Raises:
        TypeError: ``loader`` is not a headrace loader.
        ValueError: ``directory`` is not an existing directory; ``key`` is not a plain name.
    """
    _check_loader(loader, key, "headrace.ray.save_loader")
    if not isinstance(directory, (str, os.PathLike)) or not os.path.isdir(directory):
        raise ValueError(f"directory must be an existing directory, but got {directory!r}.")
    state = loader.state_dict()
    path = os.path.join(os.fspath(directory), state_file(state["shard_id"], key))
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f)
    os.replace(tmp, path)
    return path


def restore_loader(loader: Any, checkpoint: Any = None, key: str = "loader") -> bool:
    """Loads ``loader``'s position from a checkpoint that ``save_loader`` filled: the file of its
    rank, or, where the checkpoint has none (it was taken on fewer ranks), rank 0's. A state of
    another rank or rank count restores as the position of the whole job (elastic resume, see
    ``headrace.torch.Loader.load_state_dict``). Returns whether a position was loaded.

    Args:
        loader: a headrace loader, made over the same pipeline as the saved one.
        checkpoint (Union[ray.train.Checkpoint, str], optional): the checkpoint or its directory.
            Default: None (``ray.train.get_checkpoint()``: the latest checkpoint of this run when
            Ray Train restarted its workers; None in a fresh run, and then nothing is loaded).
        key (str, optional): the ``key`` the loader was saved under. Default: "loader".

    Raises:
        TypeError: ``loader`` is not a headrace loader, or ``checkpoint`` of another type.
        ValueError: the checkpoint holds no headrace loader state under ``key``, or a state of
            another pipeline (the message names the field); ``key`` is not a plain name.
        RuntimeError: called while an epoch is being read; no ``checkpoint`` outside a Ray Train
            training function.
    """
    _check_loader(loader, key, "headrace.ray.restore_loader")
    if checkpoint is None:
        try:
            checkpoint = ray.train.get_checkpoint()
        except RuntimeError as e:
            raise RuntimeError(f"headrace.ray.restore_loader: no Ray Train context here ({e}); pass checkpoint= (a "
                               "ray.train.Checkpoint or a directory).") from None
        if checkpoint is None:
            return False
    rank = loader.state_dict()["shard_id"]
    if hasattr(checkpoint, "as_directory"):   # (a ray.train.Checkpoint is PathLike too, but refuses fspath)
        with checkpoint.as_directory() as directory:
            _restore_dir(loader, rank, directory, key)
    elif isinstance(checkpoint, (str, os.PathLike)):
        _restore_dir(loader, rank, os.fspath(checkpoint), key)
    else:
        raise TypeError(f"checkpoint must be a ray.train.Checkpoint, a directory or None, but got "
                        f"{type(checkpoint).__name__}.")
    return True


def _restore_dir(loader: Any, rank: int, directory: str, key: str) -> None:
    for saved in (rank, 0):
        path = os.path.join(directory, state_file(saved, key))
        if os.path.isfile(path):
            with open(path) as f:
                loader.load_state_dict(json.load(f))
            return
    raise ValueError(f"headrace.ray.restore_loader: the checkpoint {directory} holds no loader state "
                     f"({state_file(rank, key)} or {state_file(0, key)}); save it with save_loader.")


class RankLoader:
    """This Ray Train worker's shard of a headrace dataset, as NumPy batches, resumable.

    Each iteration is one epoch; ``set_epoch``, ``state_dict`` and ``load_state_dict`` behave as
    ``headrace.torch.Loader``'s (the position after the last batch the loop received).

    Args:
        dataset (Dataset): the headrace dataset (usually ending in ``batch``), the same on every rank.
        columns (list[str], optional): columns to read, in this order. Default: None (all).
        as_dict (bool, optional): batches as {column: array} dicts. Default: False (lists).
        rank (int, optional): this worker's rank. Default: None (``ray.train.get_context()``'s).
        world_size (int, optional): the number of ranks. Default: None (Ray Train's).
        shard (bool, optional): read this rank's shard. Default: True.

    Raises:
        TypeError, ValueError: an argument of the wrong type or value; a pipeline that cannot be
            resharded (its source was sharded already, it joins several sources, it reads a
            generator); ``rank`` without ``world_size`` or the reverse.
        RuntimeError: no rank given outside a Ray Train training function.
    """

    def __init__(self, dataset: Any, columns: Any = None, as_dict: bool = False, *, rank: int | None = None,
                 world_size: int | None = None, shard: bool = True) -> None:
        cols = check_source(dataset, columns, as_dict, shard)
        if (rank is None) != (world_size is None):
            raise ValueError(f"rank and world_size go together: give both or neither, but got rank={rank!r}, "
                             f"world_size={world_size!r}.")
        if rank is None:
            job = train_shard()
            world_size, rank = job["world_size"], job["rank"]
        world, rank = check_shard(world_size, rank)
        world, rank = (world, rank) if shard else (1, 0)
        unsharded = dataset
        if world > 1:
            dataset = reshard(dataset, world, rank, f"{_NAME} (Ray Train rank {rank} of {world})")
        self.dataset = dataset
        self.rank, self.world_size = rank, world
        self._columns = cols if cols is not None else [c for c in dataset.get_col_names()
                                                       if not c.startswith("_meta-")]
        self._as_dict = as_dict
        self._reader = EpochReader(dataset, cols, _AsIs(), None, (world, rank), _NAME, unsharded)
        self._reader.prestart()

    def __iter__(self) -> Iterator[Any]:
        batches = self._reader.epoch()
        try:
            if not self._as_dict:
                yield from batches
                return
            for item in batches:
                yield dict(zip(self._columns, item))
        finally:
            batches.close()

    def __len__(self) -> int:
        """Batches per epoch (of this rank's shard)."""
        return self.dataset.get_dataset_size()

    def set_epoch(self, epoch: int) -> None:
        """The next iteration reads epoch ``epoch`` (see ``headrace.torch.Loader.set_epoch``)."""
        self._reader.set_epoch(check_epoch(epoch))

    def state_dict(self) -> dict:
        """The position after the last batch received (a dict of str and int)."""
        return self._reader.state()

    def load_state_dict(self, state_dict: dict) -> None:
        """Continues after the batch where ``state_dict`` was taken (any rank's, any rank count:
        see ``headrace.torch.Loader.load_state_dict``)."""
        self._reader.load_state(state_dict)

    def save_to(self, directory: str) -> str:
        """Writes this rank's position into ``directory`` (see ``save_loader``); returns the file's path."""
        return save_loader(self, directory)

    def restore(self, checkpoint: Any = None) -> bool:
        """Loads the position from a checkpoint that ``save_to`` filled (see ``restore_loader``);
        returns whether a position was loaded."""
        return restore_loader(self, checkpoint)

    def close(self) -> None:
        """Stops the pipeline's workers. Idempotent."""
        self._reader.close()

