"""``DataLoader``: MindSpore 2.10's PyTorch-style loader on headrace's engine.

With ``num_workers=0`` batches are fetched and collated in the calling process, as MindSpore
does. With workers (``_pool``), each worker is a process of its own, started the way
``multiprocessing_context`` says ('fork' or 'spawn'; None: ``ds.config``'s
``multiprocessing_start_method``) by headrace's engine:

* map-style dataset: the batch sampler's index lists are handed to the workers in turn; each
  worker fetches and collates its batches;
* iterable dataset: each worker iterates its own copy of the dataset (``get_worker_info()``
  tells it which worker it is, to shard) and makes batches of it; batches are taken from the
  workers in turn, and a worker whose iterator has ended is skipped;
* ``worker_init_fn(worker_id)`` runs once in each worker when it starts;
* at most ``num_workers * prefetch_factor`` batches are fetched ahead of what the caller took;
* ``in_order=True`` delivers batches in the order they were handed out; ``in_order=False``
  delivers each as soon as its worker has made it;
* an exception in a worker reaches the caller as MindSpore's RuntimeError ("DataLoader worker 1
  (pid: ...) caught ValueError with message: <traceback>") in that batch's place, with the
  original exception as its cause (when it can be pickled); one in ``worker_init_fn`` ends the
  iteration; ``timeout`` bounds each wait for a batch.

Differences from MindSpore 2.10 on purpose:
* 'fork' in a process that already runs threads has headrace's fork server fork the workers (a
  fork of a process with threads can deadlock): the dataset and functions are then pickled
  (cloudpickle), and functions of importable modules see their module as a fresh import leaves
  it, as with 'spawn';
* 'forkserver' starts the workers as 'spawn' does (fresh interpreters, the dataset pickled to
  them): what Python's fork server guarantees, by another road (their parent is this process);
* MindSpore also calls ``iter(dataset)`` of an iterable dataset once in the calling process when
  workers are used; headrace does not;
* a worker's NumPy global RNG is seeded with ``(base_seed + worker_id) mod 2**32``;
* ``pin_memory`` has no device to pin for: it logs MindSpore's CPU warning and does nothing.
"""
from __future__ import annotations

import dataclasses
import functools
import logging
import multiprocessing
from typing import Any

import numpy as np

from headrace._engine import options as _options
from headrace.dataset.dataloader._collate import default_collate, default_convert
from headrace.dataset.dataloader._datasets import IterableDataset
from headrace.dataset.dataloader._pool import WorkerIter
from headrace.dataset.dataloader._samplers import (
    BatchSampler, InfiniteSampler, RandomSampler, SequentialSampler, check_non_negative, check_positive, check_type,
)
from headrace.dataset.dataloader._worker import IterableBatches, WorkerProgram, fetch

_log = logging.getLogger("headrace.dataset.dataloader")
_INT64_END = np.iinfo(np.int64).max + 1


# Python's start methods -> the engine's. 'forkserver' gives what Python's does: workers that
# inherit nothing of the caller's state but what is pickled to them, as 'spawn' gives.
_START_METHODS = {"fork": "fork", "spawn": "spawn", "forkserver": "spawn"}


def _start_method(context: Any) -> str | None:
    """The engine's start method for ``multiprocessing_context`` (None: the configured one).

    Raises:
        ValueError: a start method other than 'fork', 'spawn' or 'forkserver'.
    """
    if context is None:
        return None
    if isinstance(context, str):
        method = context
    else:  # the default context has no method of its own until one is set: the platform default then
        method = context.get_start_method(allow_none=True) or multiprocessing.get_all_start_methods()[0]
    if method not in _START_METHODS:
        raise ValueError(f"multiprocessing_context must be one of {list(_START_METHODS)} or a multiprocessing "
                         f"context with one of these start methods, but got: {context!r}.")
    return _START_METHODS[method]


def _exclusive(condition: bool, name: str, description: str) -> None:
    if condition:
        raise ValueError(f"{name} cannot be specified {description}.")


def _check_args(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, pin_memory, drop_last, timeout,
                multiprocessing_context, generator, prefetch_factor, persistent_workers, in_order):
    if isinstance(dataset, IterableDataset):
        how = "when dataset is iterable style"
        _exclusive(bool(shuffle), "shuffle", how)
        _exclusive(sampler is not None, "sampler", how)
        _exclusive(batch_sampler is not None, "batch_sampler", how)
    elif not hasattr(dataset, "__getitem__"):
        raise NotImplementedError(f"{type(dataset).__name__} should implement __getitem__ method if it is map style.")
    check_type(batch_size, "batch_size", int, bool, allow_none=True)
    check_positive(batch_size, "batch_size", allow_none=True)
    check_type(shuffle, "shuffle", bool, allow_none=True)
    if sampler is not None and shuffle:
        raise ValueError("sampler cannot be specified with shuffle.")
    if batch_sampler is not None:
        how = "with batch_sampler"
        _exclusive(batch_size != 1, "batch_size", how)
        _exclusive(bool(shuffle), "shuffle", how)
        _exclusive(sampler is not None, "sampler", how)
        _exclusive(drop_last, "drop_last", how)
    check_type(num_workers, "num_workers", int, bool)
    check_non_negative(num_workers, "num_workers")
    check_type(pin_memory, "pin_memory", bool)
    check_type(drop_last, "drop_last", bool)
    check_type(timeout, "timeout", (int, float), bool)
    check_non_negative(timeout, "timeout")
    if multiprocessing_context is not None:
        if num_workers <= 0:
            raise ValueError("multiprocessing_context must only be specified when num_workers is greater than 0, "
                             f"but got: {num_workers}.")
        if not isinstance(multiprocessing_context, (str, multiprocessing.context.BaseContext)):
            raise TypeError(f"multiprocessing_context must be {multiprocessing.get_all_start_methods()} or "
                            f"multiprocessing.context.BaseContext, but got: {multiprocessing_context}.")
        _start_method(multiprocessing_context)
    check_type(generator, "generator", np.random.Generator, allow_none=True)
    if prefetch_factor is not None:
        if num_workers <= 0:
            raise ValueError("prefetch_factor must only be specified when num_workers is greater than 0, "
                             f"but got: {num_workers}.")
        check_type(prefetch_factor, "prefetch_factor", int, bool)
        check_positive(prefetch_factor, "prefetch_factor")
    check_type(persistent_workers, "persistent_workers", bool)
    if persistent_workers and num_workers <= 0:
        raise ValueError("persistent_workers must only be specified when num_workers is greater than 0, "
                         f"but got: {num_workers}.")
    check_type(in_order, "in_order", bool)


class DataLoader:
    """Batches of a map-style or iterable dataset, MindSpore 2.10's (and PyTorch's) way; see the
    module notes for how it runs and where it differs.

    Examples:
        >>> from headrace.dataset.dataloader import DataLoader, TensorDataset
        >>> import numpy as np
        >>> [b[1].tolist() for b in DataLoader(TensorDataset(np.zeros((5, 2)), np.arange(5)), batch_size=2)]
        [[0, 1], [2, 3], [4]]
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0.0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 in_order=True):
        _check_args(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers, pin_memory, drop_last,
                    timeout, multiprocessing_context, generator, prefetch_factor, persistent_workers, in_order)
        self.dataset = dataset
        self.num_workers = num_workers
        self.collate_fn = collate_fn
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.generator = generator if generator is not None else np.random.default_rng()
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self.multiprocessing_context = multiprocessing_context
        self.iterable = isinstance(dataset, IterableDataset)
        if sampler is None:
            if self.iterable:
                sampler = InfiniteSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=self.generator)
            else:
                sampler = SequentialSampler(dataset)
        self.sampler = sampler
        if batch_sampler is not None:
            batch_size, drop_last = None, False
        elif batch_size is not None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.batch_sampler = batch_sampler
        self.auto_collation = batch_sampler is not None
        self.index_sampler = batch_sampler if self.auto_collation else sampler
        if prefetch_factor is None and num_workers > 0:
            prefetch_factor = 2
        self.prefetch_factor = prefetch_factor
        self._persistent = None

    def _collate(self) -> Any:
        if self.collate_fn is not None:
            return self.collate_fn
        return default_collate if self.auto_collation else default_convert

    def __iter__(self) -> Any:
        if self.pin_memory:
            _log.warning("Set pin_memory as True on CPU device will not have any effect.")
        if self.num_workers == 0:
            return _IterableIter(self) if self.iterable else _MapIter(self)
        if self.persistent_workers:
            if self._persistent is None or self._persistent.closed:
                self._persistent = self._workers(persistent=True)
            else:
                self._persistent.reset()
            return self._persistent
        return self._workers(persistent=False)

    def _workers(self, persistent: bool) -> WorkerIter:
        options = _options.snapshot()
        method = _start_method(self.multiprocessing_context)
        if method is not None:
            options = dataclasses.replace(options, multiprocessing_start_method=method)
        base_seed = int(self.generator.integers(0, _INT64_END, dtype=np.int64))
        n, collate = self.num_workers, self._collate()
        programs = [WorkerProgram(self.dataset, w, n, base_seed, self.worker_init_fn, self.auto_collation, collate,
                                  self.batch_size, self.drop_last) for w in range(n)]
        length = functools.partial(_length, self.dataset if self.iterable else None, self.index_sampler,
                                   self.batch_size, self.drop_last)
        return WorkerIter(programs, None if self.iterable else self.index_sampler, persistent=persistent,
                          in_order=self.in_order, timeout=self.timeout, prefetch_factor=self.prefetch_factor,
                          options=options, length=length)

    def __len__(self) -> int:
        return _length(self.dataset if self.iterable else None, self.index_sampler, self.batch_size, self.drop_last)


def _length(iterable: Any, index_sampler: Any, batch_size: int | None, drop_last: bool) -> int:
    """Batches in an epoch: of the iterable dataset's length when there is one, else of the sampler's."""
    if iterable is None:
        return len(index_sampler)
    n = len(iterable)
    if batch_size is None:
        return n
    return n // batch_size if drop_last else (n - 1) // batch_size + 1


class _MapIter:
    """A map-style dataset read in the calling process."""

    def __init__(self, loader: DataLoader) -> None:
        self._indices = iter(loader.index_sampler)
        self._dataset, self._auto, self._collate = loader.dataset, loader.auto_collation, loader._collate()
        self._len = loader.index_sampler

    def __iter__(self) -> "_MapIter":
        return self

    def __len__(self) -> int:
        return len(self._len)

    def __next__(self) -> Any:
        return fetch(self._dataset, next(self._indices), self._auto, self._collate)


class _IterableIter:
    """An iterable dataset read in the calling process (``batch_size`` items per batch)."""

    def __init__(self, loader: DataLoader) -> None:
        self._batches = IterableBatches(loader.dataset, loader.batch_size if loader.auto_collation else None,
                                        loader.drop_last, loader._collate())

    def __iter__(self) -> "_IterableIter":
        return self

    def __next__(self) -> Any:
        return self._batches.next_batch()
