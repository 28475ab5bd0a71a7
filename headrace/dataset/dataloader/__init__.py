"""MindSpore 2.10's PyTorch-style data loading (``mindspore.dataset.dataloader``) on headrace's
engine: ``DataLoader``, ``Dataset``, ``IterableDataset``, ``TensorDataset``, the samplers,
``default_collate``, ``default_convert`` and ``get_worker_info``.

Examples:
    >>> from headrace.dataset.dataloader import DataLoader, Dataset
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 5
    ...     def __getitem__(self, i):
    ...         return {"x": i, "x2": i * i}
    >>> [b["x2"].tolist() for b in DataLoader(Squares(), batch_size=2)]
    [[0, 1], [4, 9], [16]]
"""
from headrace.dataset.dataloader._collate import default_collate, default_convert
from headrace.dataset.dataloader._datasets import Dataset, IterableDataset, TensorDataset
from headrace.dataset.dataloader._loader import DataLoader
from headrace.dataset.dataloader._samplers import (
    BatchSampler, DistributedSampler, RandomSampler, Sampler, SequentialSampler,
)
from headrace.dataset.dataloader._worker import get_worker_info

__all__ = [
    "BatchSampler", "DataLoader", "Dataset", "DistributedSampler", "IterableDataset", "RandomSampler", "Sampler",
    "SequentialSampler", "TensorDataset", "default_collate", "default_convert", "get_worker_info",
]
