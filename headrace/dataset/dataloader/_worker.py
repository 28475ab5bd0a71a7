"""What runs in a DataLoader worker process, and ``get_worker_info``.

A worker runs a :class:`WorkerProgram` (the program of a one-process engine pool, see ``_pool``).
Its first task sets the worker up as MindSpore does: ``get_worker_info()``, Python's and NumPy's
global RNGs seeded from the loader's base seed and the worker id, then ``worker_init_fn(worker_id)``.
Every later task is one batch: the batch of a list of indices (map-style dataset), or the next
batch of the worker's own iterator over its copy of the dataset (iterable dataset; an empty
result says that iterator has ended).
"""
from __future__ import annotations

import os
import random
import traceback
from typing import Any

import numpy as np
from headrace._util.errors import add_note

_INFO: "WorkerInfo | None" = None
_INFO_PID: int | None = None

# task kinds (the first item of a task's payload)
INIT, FETCH, NEXT = "init", "fetch", "next"


class WorkerInfo:
    """``id``, ``num_workers``, ``seed`` and ``dataset`` of the DataLoader worker running the
    caller (read-only)."""

    __slots__ = ("id", "num_workers", "seed", "dataset")
    id: int
    num_workers: int
    seed: int
    dataset: Any

    def __init__(self, id: int, num_workers: int, seed: int, dataset: Any) -> None:  # noqa: A002 - MindSpore's name
        for k, v in (("id", id), ("num_workers", num_workers), ("seed", seed), ("dataset", dataset)):
            object.__setattr__(self, k, v)

    def __setattr__(self, key: str, value: Any) -> None:
        raise RuntimeError("Cannot modify the attributes of WorkerInfo object after initialization.")

    def __repr__(self) -> str:
        return (f"WorkerInfo: {{id: {self.id}, num_workers: {self.num_workers}, seed: {self.seed}, "
                f"dataset: {self.dataset}}}")


def get_worker_info() -> WorkerInfo | None:
    """The :class:`WorkerInfo` of the DataLoader worker process calling it; None elsewhere.

    Returns:
        WorkerInfo or None: ``id``, ``num_workers``, ``seed`` and ``dataset`` (this worker's copy)
        in a worker process, None in any other process.

    Examples:
        >>> from headrace.dataset.dataloader import get_worker_info
        >>> get_worker_info() is None
        True
    """
    return _INFO if _INFO_PID == os.getpid() else None


def fetch(dataset: Any, indices: Any, auto_collation: bool, collate_fn: Any) -> Any:
    """The batch of the sampler's ``indices`` (one index when there is no automatic batching)."""
    if auto_collation:
        return collate_fn([dataset[i] for i in indices])
    return collate_fn(dataset[indices])


class IterableBatches:
    """Batches of ``batch_size`` items (None: single items) from an iterator over ``dataset``;
    ``next_batch()`` raises StopIteration at its end (a short last batch is dropped with
    ``drop_last``)."""

    def __init__(self, dataset: Any, batch_size: int | None, drop_last: bool, collate_fn: Any) -> None:
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.collate_fn = collate_fn
        self._items: Any = None
        self._ended = False

    def reset(self) -> None:
        self._items = iter(self.dataset)
        self._ended = False

    def next_batch(self) -> Any:
        if self._items is None:
            self.reset()
        if self._ended:
            raise StopIteration
        if self.batch_size is None:
            try:
                return self.collate_fn(next(self._items))
            except StopIteration:
                self._ended = True
                raise
        data = []
        for _ in range(self.batch_size):
            try:
                data.append(next(self._items))
            except StopIteration:
                self._ended = True
                break
        if not data or (self.drop_last and len(data) < self.batch_size):
            raise StopIteration
        return self.collate_fn(data)


def caught(worker_id: int, e: BaseException) -> RuntimeError:
    """MindSpore's report of an exception a worker caught: a RuntimeError carrying the type, the
    worker, its pid and the worker's traceback text (the original travels as the cause)."""
    text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    err = RuntimeError(f"DataLoader worker {worker_id} (pid: {os.getpid()}) caught {type(e).__name__} with message:\n{text}")
    err.__cause__ = e
    return err


class WorkerProgram:
    """The program of DataLoader worker ``worker_id`` (runs in that worker's process).

    ``run(task)`` follows the engine's pool contract: ``task`` is ``(seed, epoch, order, (payload,),
    num)``, the result ``(rows, error)``; ``rows`` is ``[(batch,)]``, or ``[]`` once an iterable
    dataset's iterator has ended.
    """

    def __init__(self, dataset: Any, worker_id: int, num_workers: int, base_seed: int, worker_init_fn: Any,
                 auto_collation: bool, collate_fn: Any, batch_size: int | None, drop_last: bool) -> None:
        self.dataset = dataset
        self.worker_id = worker_id
        self.num_workers = num_workers
        self.base_seed = base_seed
        self.worker_init_fn = worker_init_fn
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.batches = IterableBatches(dataset, batch_size if auto_collation else None, drop_last, collate_fn)
        self.epoch = -1
        self.init_error: BaseException | None = None

    def parts(self) -> list[tuple[str, Any]]:
        """What the program carries, for the engine's message about something that cannot be pickled."""
        return [("the dataset", self.dataset), ("collate_fn", self.collate_fn), ("worker_init_fn", self.worker_init_fn)]

    def _start(self) -> None:
        global _INFO, _INFO_PID
        wid = self.worker_id
        seed = self.base_seed + wid
        random.seed(seed)
        np.random.seed(seed & 0xFFFFFFFF)
        _INFO, _INFO_PID = WorkerInfo(wid, self.num_workers, seed, self.dataset), os.getpid()
        if self.worker_init_fn is not None:
            self.worker_init_fn(wid)

    def run(self, task: tuple) -> tuple[list, BaseException | None]:
        _, epoch, _, (payload,), _ = task
        kind, arg = payload
        if kind == INIT:
            try:
                self._start()
            except Exception as e:  # noqa: BLE001 - reported to the main process
                self.init_error = caught(self.worker_id, e)
            return [], self.init_error
        if self.init_error is not None:
            return [], self.init_error
        try:
            if kind == FETCH:
                return [(fetch(self.dataset, arg, self.auto_collation, self.collate_fn),)], None
            if epoch != self.epoch:  # a new epoch (persistent workers): a new iterator
                self.epoch = epoch
                self.batches.reset()
            try:
                return [(self.batches.next_batch(),)], None
            except StopIteration:
                return [], None
        except Exception as e:  # noqa: BLE001 - reported to the main process, in the batch's place
            err = caught(self.worker_id, e)
            if kind == FETCH:
                add_note(err, f"(fetching the batch of indices {arg!r})" if self.auto_collation
                             else f"(fetching index {arg!r})")
            return [], err
