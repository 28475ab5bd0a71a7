"""``DataLoader``: MindSpore 2.10's PyTorch-style loader on headrace's engine.

With ``num_workers=0`` batches are fetched and collated in the calling process, as MindSpore
does. With workers, a map-style dataset runs as a headrace pipeline: the batch sampler's index
lists are read in order by the pipeline's source, a ``map`` in ``num_workers`` headrace worker
processes fetches and collates each batch (see ``_worker``), and batches come back in sampler
order (``in_order=False`` is accepted: in-order delivery is one of the orders it allows). Worker
processes come from headrace's fork server, whatever ``multiprocessing_context`` says; the
engine decides how far it reads ahead (``prefetch_factor`` is checked, not used).

Differences from MindSpore 2.10 on purpose:
* an ``IterableDataset`` is read in the calling process even with ``num_workers > 0`` (each
  MindSpore worker would iterate its own copy; code that shards by ``get_worker_info()`` reads
  every sample once either way, code that does not would read each sample ``num_workers`` times
  there and once here);
* a worker's NumPy global RNG is seeded with ``(base_seed + worker_id) mod 2**32``;
* ``pin_memory`` has no device to pin for: it logs MindSpore's CPU warning and does nothing.
"""
from __future__ import annotations

import logging
import multiprocessing
import pickle

import numpy as np

from headrace._util.device_queue import Feeder
from headrace.dataset.dataloader._collate import default_collate, default_convert
from headrace.dataset.dataloader._datasets import IterableDataset
from headrace.dataset.dataloader._samplers import (
    BatchSampler, InfiniteSampler, RandomSampler, SequentialSampler, check_non_negative, check_positive, check_type,
)
from headrace.dataset.dataloader._worker import FetchBatch, fetch, unpack

_log = logging.getLogger("headrace.dataset.dataloader")
_INT64_END = np.iinfo(np.int64).max + 1


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

    def _collate(self):
        if self.collate_fn is not None:
            return self.collate_fn
        return default_collate if self.auto_collation else default_convert

    def __iter__(self):
        if self.pin_memory:
            _log.warning("Set pin_memory as True on CPU device will not have any effect.")
        if self.iterable:
            return _IterableIter(self)
        if self.num_workers == 0:
            return _MapIter(self)
        if self.persistent_workers:
            if self._persistent is None:
                self._persistent = _EngineIter(self, persistent=True)
            else:
                self._persistent.reset()
            return self._persistent
        return _EngineIter(self, persistent=False)

    def __len__(self):
        if self.iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else (n - 1) // self.batch_size + 1
        return len(self.index_sampler)


class _MapIter:
    """A map-style dataset read in the calling process."""

    def __init__(self, loader: DataLoader) -> None:
        self._indices = iter(loader.index_sampler)
        self._dataset, self._auto, self._collate = loader.dataset, loader.auto_collation, loader._collate()
        self._len = loader.index_sampler

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._len)

    def __next__(self):
        return fetch(self._dataset, next(self._indices), self._auto, self._collate)


class _IterableIter:
    """An iterable dataset read in the calling process (``batch_size`` items per batch)."""

    def __init__(self, loader: DataLoader) -> None:
        self._items = iter(loader.dataset)
        self._batch = loader.batch_size if loader.auto_collation else None
        self._drop_last = loader.drop_last
        self._collate = loader._collate()
        self._ended = False

    def __iter__(self):
        return self

    def __next__(self):
        if self._batch is None:
            return self._collate(next(self._items))
        if self._ended:
            raise StopIteration
        data = []
        for _ in range(self._batch):
            try:
                data.append(next(self._items))
            except StopIteration:
                self._ended = True
                break
        if not data or (self._drop_last and len(data) < self._batch):
            raise StopIteration
        return self._collate(data)


class _EngineIter:
    """A map-style dataset fetched and collated by headrace worker processes (see the module notes)."""

    def __init__(self, loader: DataLoader, persistent: bool) -> None:
        self._loader = loader
        self._persistent = persistent
        self._base_seed = int(loader.generator.integers(0, _INT64_END, dtype=np.int64))
        self._timeout = loader.timeout or None
        self._it = None
        self._feeder = None
        self._len = loader.index_sampler
        self.reset()

    def _pipeline(self):
        from headrace.dataset import GeneratorDataset  # noqa: PLC0415 - dataset is the layer above this package
        loader = self._loader
        sampler = loader.index_sampler

        def indices():
            for idx in sampler:
                yield (np.frombuffer(pickle.dumps(idx, protocol=pickle.HIGHEST_PROTOCOL), dtype=np.uint8),)

        fn = FetchBatch(loader.dataset, loader.auto_collation, loader._collate(), loader.num_workers,
                        self._base_seed, loader.worker_init_fn)
        source = GeneratorDataset(indices, ["indices"], python_multiprocessing=False)
        return source.map(fn, input_columns="indices", output_columns="batch",
                          num_parallel_workers=loader.num_workers, python_multiprocessing=True)

    def reset(self) -> None:
        """Starts an epoch (persistent workers: on the same pipeline and workers)."""
        self._stop_feeder()
        if self._it is not None and not self._persistent:
            self.close()
        if self._it is None:
            self._it = self._pipeline().create_tuple_iterator(num_epochs=-1 if self._persistent else 1,
                                                              output_numpy=True)
        elif not self._at_epoch_start():  # an epoch left early: its rows are not wanted
            self.close()
            self._it = self._pipeline().create_tuple_iterator(num_epochs=-1, output_numpy=True)
        if self._timeout is not None:
            it = self._it

            def pull():
                try:
                    return next(it), None
                except StopIteration:
                    raise StopIteration(None) from None

            self._feeder = Feeder(pull, lambda row: row, 2, "DataLoader timeout watcher")

    def _at_epoch_start(self) -> bool:
        return self._it._run.step == 0

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._len)

    def __next__(self):
        if self._it is None:
            raise StopIteration
        if self._feeder is not None:
            item = self._feeder.get(self._timeout)
            if item is None:
                raise RuntimeError(f"DataLoader timed out waiting for data after {self._loader.timeout} seconds.")
            kind, row, _ = item
            if kind == "end":
                self._end()
                raise StopIteration
        else:
            try:
                row = next(self._it)
            except StopIteration:
                self._end()
                raise
        return unpack(row[0])

    def _end(self) -> None:
        self._stop_feeder()
        if not self._persistent:
            self.close()

    def _stop_feeder(self) -> None:
        feeder, self._feeder = self._feeder, None
        if feeder is not None and not feeder.stop(timeout=0.5) and self._it is not None:
            self.close()
            feeder.stop()

    def close(self) -> None:
        """Stops the workers. Idempotent."""
        it, self._it = self._it, None
        if it is not None:
            it.stop()

    def __del__(self):
        try:
            self._stop_feeder()
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


