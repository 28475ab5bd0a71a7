"""Samplers of the PyTorch-style API: which sample indices an epoch reads, in which order.

``RandomSampler`` draws with a ``numpy.random.Generator`` (a fresh one seeded from NumPy's global
RNG when none is given): a permutation of all indices per round, or 32 draws at a time with
replacement, as MindSpore 2.10 does, so a seeded generator gives MindSpore's order.
``DistributedSampler`` permutes with ``default_rng(seed + epoch)``, pads by repeating the first
indices (or drops the tail with ``drop_last``) and deals rank ``rank``'s share.
"""
from __future__ import annotations

import itertools
import math
from typing import Generic, TypeVar

import numpy as np

_T = TypeVar("_T")
_INT64_END = np.iinfo(np.int64).max + 1


def check_type(value, name, valid, invalid=(), allow_none=False):
    if allow_none and value is None:
        return
    if not isinstance(value, valid) or isinstance(value, invalid):
        raise TypeError(f"{name} must be {valid}, but got: {type(value).__name__}.")


def check_positive(value, name, allow_none=False):
    if allow_none and value is None:
        return
    if value <= 0:
        raise ValueError(f"{name} must be positive, but got: {value}.")


def check_non_negative(value, name):
    if value < 0:
        raise ValueError(f"{name} must be non-negative, but got: {value}.")


class Sampler(Generic[_T]):
    """Base of samplers: subclasses implement ``__iter__`` (and ``__len__`` where they can)."""

    def __init__(self, data_source=None):
        pass


class SequentialSampler(Sampler[int]):
    """Indices 0 .. len(data_source) - 1 in order."""

    def __init__(self, data_source):
        super().__init__(data_source)
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Indices in random order (see the module notes).

    Raises:
        TypeError / ValueError: replacement not a bool, num_samples not a positive int, generator
            not a ``numpy.random.Generator``.

    Examples:
        >>> import numpy as np
        >>> list(RandomSampler(range(5), generator=np.random.default_rng(0)))
        [2, 4, 3, 0, 1]
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        super().__init__(data_source)
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement must be bool, but got: {type(replacement).__name__}")
        if num_samples is not None and not isinstance(num_samples, int):
            raise TypeError(f"num_samples must be int, but got: {type(num_samples).__name__}")
        if num_samples is not None and num_samples <= 0:
            raise ValueError(f"num_samples must be a positive integer value, but got num_samples = {num_samples}")
        if generator is not None and not isinstance(generator, np.random.Generator):
            raise TypeError(f"generator must be numpy.random.Generator, but got: {type(generator).__name__}")
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, total = len(self.data_source), self.num_samples
        gen = self.generator
        if gen is None:
            gen = np.random.default_rng(np.random.randint(0, _INT64_END, dtype=np.int64))
        if self.replacement:
            for _ in range(total // 32):
                yield from gen.integers(0, n, size=32, dtype=np.int64).tolist()
            yield from gen.integers(0, n, size=total % 32, dtype=np.int64).tolist()
            return
        for _ in range(total // n):
            yield from gen.permutation(n).tolist()
        yield from gen.permutation(n).tolist()[:total % n]

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter unless
    ``drop_last``)."""

    def __init__(self, sampler, batch_size, drop_last):
        super().__init__()
        check_type(batch_size, "batch_size", int, bool)
        check_positive(batch_size, "batch_size")
        check_type(drop_last, "drop_last", bool)
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


class InfiniteSampler(Sampler):
    """For iterable datasets: an endless stream of None (the dataset decides when to stop)."""

    def __iter__(self):
        return itertools.repeat(None)


def _distributed_default(name: str) -> int:
    """The world size (``name`` "num_replicas") or rank of an initialised torch.distributed; else
    those of one process, 1 and 0, as MindSpore gives them before its communication is set up."""
    try:
        import torch.distributed as dist  # noqa: PLC0415 - optional: only when the caller asks for it
    except ImportError:
        dist = None
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return 1 if name == "num_replicas" else 0
    return dist.get_world_size() if name == "num_replicas" else dist.get_rank()


class DistributedSampler(Sampler[int]):
    """Rank ``rank``'s share of the indices of ``dataset`` (see the module notes).

    Examples:
        >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
        [1, 3, 0]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        super().__init__(dataset)
        if num_replicas is not None and not isinstance(num_replicas, int):
            raise TypeError(f"num_replicas must be int, but got: {type(num_replicas).__name__}")
        if rank is not None and not isinstance(rank, int):
            raise TypeError(f"rank must be int, but got: {type(rank).__name__}")
        for value, name in ((shuffle, "shuffle"), (drop_last, "drop_last")):
            if not isinstance(value, bool):
                raise TypeError(f"{name} must be bool, but got: {type(value).__name__}")
        if not isinstance(seed, int):
            raise TypeError(f"seed must be int, but got: {type(seed).__name__}")
        if num_replicas is None:
            num_replicas = _distributed_default("num_replicas")
        if rank is None:
            rank = _distributed_default("rank")
        if num_replicas <= 0:
            raise ValueError(f"Invalid num_replicas: {num_replicas}, num_replicas must be greater than 0.")
        if not 0 <= rank < num_replicas:
            raise ValueError(f"Invalid rank: {rank}, rank must be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last = shuffle, seed, drop_last
        self.epoch = 0
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_samples = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            order = np.random.default_rng(self.seed + self.epoch).permutation(n).tolist()
        else:
            order = list(range(n))
        if self.drop_last:
            order = order[:self.total_samples]
        else:
            missing = self.total_samples - len(order)
            order += (order * math.ceil(missing / len(order)))[:missing] if missing > 0 else []
        return iter(order[self.rank:self.total_samples:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Shuffles as epoch ``epoch`` (all ranks must call it with the same value)."""
        if not isinstance(epoch, int):
            raise TypeError(f"epoch must be int, but got: {type(epoch).__name__}")
        self.epoch = epoch


__all__ = ["BatchSampler", "DistributedSampler", "RandomSampler", "Sampler", "SequentialSampler"]
