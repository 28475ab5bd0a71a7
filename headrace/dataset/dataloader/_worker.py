"""What runs in a DataLoader worker: fetching and collating one batch, and ``get_worker_info``.

Workers are headrace's worker processes (a ``map`` op with ``python_multiprocessing``): each
task is one batch's indices, and the batch comes back pickled into a byte array (so that any
Python structure the collate function builds, Tensors in dicts and tuples of strings included,
arrives exactly as built). The first task in a process sets up the worker as MindSpore does:
``get_worker_info()``, Python's and NumPy's global RNGs seeded from the loader's base seed and
the worker id, then ``worker_init_fn(worker_id)``.
"""
from __future__ import annotations

import os
import pickle
import random
from typing import Any

import numpy as np

_INFO: "WorkerInfo | None" = None
_INFO_PID: int | None = None


class WorkerInfo:
    """``id``, ``num_workers``, ``seed`` and ``dataset`` of the DataLoader worker running the
    caller (read-only)."""

    __slots__ = ("id", "num_workers", "seed", "dataset")

    def __init__(self, id, num_workers, seed, dataset):  # noqa: A002 - MindSpore's name
        for k, v in (("id", id), ("num_workers", num_workers), ("seed", seed), ("dataset", dataset)):
            object.__setattr__(self, k, v)

    def __setattr__(self, key, value):
        raise RuntimeError("Cannot modify the attributes of WorkerInfo object after initialization.")

    def __repr__(self):
        return (f"WorkerInfo: {{id: {self.id}, num_workers: {self.num_workers}, seed: {self.seed}, "
                f"dataset: {self.dataset}}}")


def get_worker_info():
    """The :class:`WorkerInfo` of the DataLoader worker process calling it; None elsewhere."""
    return _INFO if _INFO_PID == os.getpid() else None


def _worker_index() -> int:
    from headrace._engine.exec import process_worker  # noqa: PLC0415 - only inside worker processes
    return process_worker.WORKER_INDEX or 0


class FetchBatch:
    """The map function of the DataLoader pipeline: pickled indices in, pickled batch out."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Any, num_workers: int, base_seed: int,
                 worker_init_fn: Any) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.num_workers = num_workers
        self.base_seed = base_seed
        self.worker_init_fn = worker_init_fn

    def _start_worker(self) -> None:
        global _INFO, _INFO_PID
        wid = _worker_index()
        seed = self.base_seed + wid
        random.seed(seed)
        np.random.seed(seed & 0xFFFFFFFF)
        _INFO, _INFO_PID = WorkerInfo(wid, self.num_workers, seed, self.dataset), os.getpid()
        if self.worker_init_fn is not None:
            self.worker_init_fn(wid)

    def __call__(self, packed: np.ndarray) -> np.ndarray:
        if _INFO_PID != os.getpid():
            self._start_worker()
        indices = pickle.loads(packed.tobytes())
        return pack(fetch(self.dataset, indices, self.auto_collation, self.collate_fn))


def fetch(dataset: Any, indices: Any, auto_collation: bool, collate_fn: Any) -> Any:
    if auto_collation:
        return collate_fn([dataset[i] for i in indices])
    return collate_fn(dataset[indices])


def pack(value: Any) -> np.ndarray:
    return np.frombuffer(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), dtype=np.uint8)


def unpack(arr: np.ndarray) -> Any:
    return pickle.loads(arr.tobytes())
