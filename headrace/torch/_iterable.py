"""``as_iterable_dataset``: a headrace dataset as a ``torch.utils.data.IterableDataset``.

For code that must keep ``torch.utils.data.DataLoader``. Each DataLoader worker runs its own copy
of the headrace pipeline on its shard of the source: shard ``rank * num_workers + worker_id`` of
``world_size * num_workers`` (the rank and world size of ``torch.distributed`` when initialised
where the dataset was made). Shuffling is headrace's (the pipeline's own, seeded order, pass
``epoch`` of it: call ``set_epoch`` before each epoch as with torch's ``DistributedSampler``;
a sharded pipeline repeats its order until then, and so does an unsharded one under
``ds.config.set_seed``; an unsharded one without a seed draws a new order each iteration);
torch's DataLoader refuses ``shuffle=True`` for an iterable dataset, so nothing shuffles twice.
If the pipeline batches, pass ``batch_size=None`` to the DataLoader (it would otherwise stack
batches into batches of one). With workers, each worker batches its own rows, so batches mix
rows differently than ``Loader`` does, and a shard that comes up short repeats rows (MindSpore's
``DistributedSampler`` rule). ``Loader`` is faster: headrace's workers already run in parallel.
"""
from __future__ import annotations

from typing import Any

import torch.utils.data

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
        self.epoch = 0
        self.world = torch_shard() if shard else (1, 0)

    def set_epoch(self, epoch: int) -> None:
        """Iterations start reading pass ``epoch`` of the pipeline (its shuffle order)."""
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"epoch must be an int >= 0, but got {epoch!r}.")
        self.epoch = epoch

    def _shard_for_worker(self) -> Any:
        world, rank = self.world
        info = torch.utils.data.get_worker_info()
        workers, wid = (info.num_workers, info.id) if info is not None else (1, 0)
        shards, sid = world * workers, rank * workers + wid
        if shards == 1:
            return self.dataset
        return reshard(self.dataset, shards, sid, f"as_iterable_dataset (shard {sid} of {shards}: rank {rank} of "
                                                   f"{world}, DataLoader worker {wid} of {workers})")

    def __iter__(self):
        data = self._shard_for_worker()
        names = self.columns if self.columns is not None else [
            c for c in data.get_col_names() if not c.startswith("_meta-")]
        it = data.create_tuple_iterator(columns=self.columns, num_epochs=-1, output_numpy=True)
        try:
            if self.epoch:
                it._run.start_at(self.epoch, 0)
            for row in it:
                value = to_tensors(row)
                yield dict(zip(names, value)) if self.as_dict else value
        finally:
            it.stop()


def as_iterable_dataset(dataset, columns=None, as_dict=False, shard=True):
    """``dataset`` as a ``torch.utils.data.IterableDataset`` of tensor batches (see the module notes).

    Args:
        dataset (Dataset): the headrace dataset.
        columns (list[str], optional): columns to read. Default: None (all).
        as_dict (bool, optional): items as {column: tensor} dicts. Default: False.
        shard (bool, optional): shard by DataLoader worker and torch.distributed rank. Default: True.

    Returns:
        HeadraceIterableDataset, with ``set_epoch(epoch)``.

    Raises:
        TypeError: ``dataset`` is not a headrace dataset, or an argument has the wrong type.

    Examples:
        >>> import numpy as np, headrace.dataset as ds, torch
        >>> data = ds.NumpySlicesDataset({"x": np.arange(4)}, shuffle=False).batch(2)
        >>> [b[0].tolist() for b in torch.utils.data.DataLoader(as_iterable_dataset(data), batch_size=None)]
        [[0, 1], [2, 3]]
    """
    from headrace.dataset import Dataset  # noqa: PLC0415
    if not isinstance(dataset, Dataset):
        raise TypeError(f"dataset must be a headrace dataset (headrace.dataset.Dataset), but got "
                        f"{type(dataset).__name__}.")
    if columns is not None:
        if isinstance(columns, str):
            columns = [columns]
        if not isinstance(columns, (list, tuple)) or not all(isinstance(c, str) for c in columns):
            raise TypeError(f"columns must be a list of column names (str) or None, but got {columns!r}.")
        columns = list(columns)
    for value, name in ((as_dict, "as_dict"), (shard, "shard")):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be True or False, but got {value!r}.")
    return HeadraceIterableDataset(dataset, columns, as_dict, shard)
