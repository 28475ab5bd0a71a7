"""The dataset base classes of the PyTorch-style API: map-style ``Dataset`` (``__getitem__``,
usually ``__len__``), ``IterableDataset`` (``__iter__``) and ``TensorDataset``."""
from __future__ import annotations

from typing import Generic, Iterable, TypeVar

_T = TypeVar("_T")


class Dataset(Generic[_T]):
    """A map-style dataset: subclasses implement ``__getitem__`` (and ``__len__`` for the
    default samplers)."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__ method.")


class IterableDataset(Dataset[_T], Iterable[_T]):
    """An iterable-style dataset: subclasses implement ``__iter__``."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__ method.")


class TensorDataset(Dataset):
    """Samples are the rows of the given tensors (or arrays), as tuples.

    Raises:
        ValueError: the tensors differ in their first dimension.

    Examples:
        >>> import numpy as np
        >>> d = TensorDataset(np.arange(6).reshape(3, 2), np.arange(3))
        >>> len(d), [v.tolist() for v in d[1]]
        (3, [[2, 3], 1])
    """

    def __init__(self, *tensors):
        super().__init__()
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise ValueError("All tensors must have the same size in the first dimension.")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]
