"""``as_iterable_dataset``: a headrace dataset as a ``torch.utils.data.IterableDataset``.

For code that must keep ``torch.utils.data.DataLoader``. The dataset reads its rank's share of
the pipeline as ``Loader`` does: shard ``rank`` of ``world_size`` (of ``torch.distributed``, when
initialised where the dataset was made), a short shard repeating rows (MindSpore's
``DistributedSampler`` rule) so that every rank yields as many items. DataLoader workers split
that share: worker ``i`` of ``num_workers`` runs its own copy of the pipeline over positions
``i, i + num_workers, ...`` of the rank's order, so the workers read the rank's rows once each,
and torch, which takes the workers' items in turn, delivers an unbatched pipeline in the rank's
order. Operations that count rows (``batch``, ``take``, ``skip``, ``repeat``, a shuffle buffer)
count each worker's own rows: with workers, batches mix rows differently and a worker may end
with a short batch. A source with ``cache`` cannot be split by position: it is dealt as shard
``rank + world_size * i`` of ``world_size * num_workers``, where a short shard repeats rows
(MindSpore's rule). Several sources (zip, concat), a generator or a Python sampler object cannot
be split (read those with ``num_workers=0``).

Shuffling is headrace's (the pipeline's own, seeded order, pass ``epoch`` of it: call
``set_epoch`` before each epoch as with torch's ``DistributedSampler``; it reaches persistent
workers too, through shared memory each worker reads when an iteration starts). A sharded or
split pipeline repeats its order until ``set_epoch``, and so does one under ``ds.config.set_seed``;
read by one process without a seed, an unsharded one draws a new order each iteration (workers
must agree on one order, so without a seed they use MindSpore's unset seed). torch's DataLoader
refuses ``shuffle=True`` for an iterable dataset, so nothing shuffles twice. If the pipeline
batches, pass ``batch_size=None`` to the DataLoader (it would otherwise stack batches into batches
of one). 0-d text values (one string per item) come out as Python ``str``/``bytes``, which
torch's default collate takes; text arrays stay NumPy arrays. ``Loader`` is faster: headrace's
workers already run in parallel.
"""
from __future__ import annotations

import multiprocessing
import multiprocessing.context
from typing import Any

import numpy as np
import torch.utils.data

from headrace._engine import options as _options
from headrace._feed.args import check_epoch, check_source
from headrace._feed.shard import reshard
from headrace.torch._convert import to_tensors
from headrace.torch._dist import torch_shard


class HeadraceIterableDataset(torch.utils.data.IterableDataset):
    """See :func:`as_iterable_dataset`."""

    def __init__(self, dataset: Any, columns: list[str] | None, as_dict: bool, shard: bool) -> None:
        super().__init__()
        self.dataset = dataset
        self.columns = columns
        self.as_dict = as_dict
        self.shard = shard
        self.world = torch_shard() if shard else (1, 0)
        world, rank = self.world
        # this rank's pipeline, as Loader reads it: for len(), and refused here rather than in a worker
        self._rank_data = reshard(dataset, world, rank, f"as_iterable_dataset (torch.distributed rank {rank} of "
                                                        f"{world})")
        # shared memory, so that set_epoch reaches persistent DataLoader workers (forked or spawned)
        self._epoch = multiprocessing.RawValue("q", 0)

    @property
    def epoch(self) -> int:
        return int(self._epoch.value)

    def set_epoch(self, epoch: int) -> None:
        """Iterations start reading pass ``epoch`` of the pipeline (its shuffle order)."""
        self._epoch.value = check_epoch(epoch)

    def __len__(self) -> int:
        """Items this rank yields when one process reads it (its shard's rows, or batches).

        Exact for an unbatched pipeline with any number of workers. A batching pipeline batches
        each worker's rows, so with workers it may yield up to ``num_workers - 1`` more (short)
        batches, or as many fewer with ``drop_remainder``. torch takes an IterableDataset's length
        as an estimate: ``len(DataLoader)`` is it (divided by the DataLoader's ``batch_size``, though
        torch batches each worker's items apart too), and after asking it torch warns if more
        items than it arrive.
        """
        return int(self._rank_data.get_dataset_size())

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        if multiprocessing.context.get_spawning_popen() is None:
            state["_epoch"] = self.epoch  # pickle or deepcopy: a copy with its own epoch
        else:
            # a worker being spawned shares the epoch, and takes this process's settings (seed
            # included), which a forked one inherits
            state["_options"] = _options.to_plain(_options.snapshot())
        return state

    def __setstate__(self, state: dict) -> None:
        settings = state.pop("_options", None)
        if settings is not None:
            _options.install(settings)
        if isinstance(state["_epoch"], int):
            state["_epoch"] = multiprocessing.RawValue("q", state["_epoch"])
        self.__dict__.update(state)

    def _for_worker(self) -> Any:
        world, rank = self.world
        info = torch.utils.data.get_worker_info()
        if not self.shard or info is None or info.num_workers == 1:
            return self._rank_data
        workers, wid = info.num_workers, info.id
        return reshard(self.dataset, world, rank, f"as_iterable_dataset (torch.distributed rank {rank} of {world}, "
                                                  f"DataLoader worker {wid} of {workers})", split=(workers, wid))

    def __iter__(self):
        epoch = self.epoch
        data = self._for_worker()
        names = self.columns if self.columns is not None else [
            c for c in data.get_col_names() if not c.startswith("_meta-")]
        it = data.create_tuple_iterator(columns=self.columns, num_epochs=-1, output_numpy=True)
        try:
            if epoch:
                it._run.start_at(epoch, 0)
            for row in it:
                value = _plain_text(to_tensors(row))
                yield dict(zip(names, value)) if self.as_dict else value
        finally:
            it.stop()


def _plain_text(values: list) -> list:
    """0-d str/bytes arrays as Python str/bytes: torch's default_collate takes those, not NumPy text."""
    return [v.item() if type(v) is np.ndarray and v.ndim == 0 and v.dtype.kind in "SU" else v for v in values]


def as_iterable_dataset(dataset, columns=None, as_dict=False, shard=True):
    """``dataset`` as a ``torch.utils.data.IterableDataset`` of tensor batches (see the module notes).

    Args:
        dataset (Dataset): the headrace dataset.
        columns (list[str], optional): columns to read. Default: None (all).
        as_dict (bool, optional): items as {column: tensor} dicts. Default: False.
        shard (bool, optional): shard by torch.distributed rank and split the rank's rows between
            DataLoader workers. Default: True.

    Returns:
        HeadraceIterableDataset, with ``set_epoch(epoch)`` and ``len()``.

    Raises:
        TypeError: ``dataset`` is not a headrace dataset, or an argument has the wrong type.
        ValueError: ``shard`` under torch.distributed with a pipeline that cannot be resharded
            (see ``Loader``); when iterated by DataLoader workers, a pipeline they cannot split.

    Examples:
        >>> import numpy as np, headrace.dataset as ds, torch
        >>> data = ds.NumpySlicesDataset({"x": np.arange(4)}, shuffle=False).batch(2)
        >>> [b[0].tolist() for b in torch.utils.data.DataLoader(as_iterable_dataset(data), batch_size=None)]
        [[0, 1], [2, 3]]
    """
    columns = check_source(dataset, columns, as_dict, shard)
    return HeadraceIterableDataset(dataset, columns, as_dict, shard)
