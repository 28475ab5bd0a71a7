"""``Dataset.sync_wait`` / ``sync_update``: a training loop paces the pipeline and feeds data back.

``d.sync_wait(condition_name, num_batch=1, callback=None)`` lets ``num_batch`` batches through at
the start of each iterator (counted in rows of the first ``batch`` built after it), then holds the
next row until the loop calls ``d.sync_update(condition_name, num_batch=None, data=None)``, which
runs ``callback(data)`` and lets ``num_batch`` more batches through. Rows read after an update see
what the callback changed. A gate left waiting ``ds.config.get_callback_timeout()`` seconds opens for
good with a warning (as MindSpore: a loop without ``sync_update`` does not hang). No ``shuffle``
may follow a ``sync_wait``; condition names are unique along a pipeline.
"""
from __future__ import annotations

import os
from typing import Any

from headrace._engine import plan as P
from headrace._engine.ops.gate import RowGate
from headrace._util import checks
from headrace.dataset import _provided
from headrace.dataset._datasets import Dataset
from headrace.dataset.core import config

__all__ = ["SyncWaitDataset", "disable_sync", "is_sync", "notify_batch", "sync_notifiers", "sync_update"]


class SyncWaitDataset(Dataset):
    """The result of ``sync_wait`` (see the module docstring).

    Raises:
        TypeError: ``condition_name`` is not a str or ``num_batch`` not an int.
        ValueError: ``num_batch`` is not positive.
        RuntimeError: the condition name is already used along the pipeline, or the
            ``MS_INDEPENDENT_DATASET`` mode is on (MindSpore has no sync_wait there).
    """

    def __init__(self, input_dataset, condition_name, num_batch=1, callback=None):
        checks.check_type(condition_name, str, "condition_name")
        checks.check_type(num_batch, int, "num_batch")
        if os.environ.get("MS_INDEPENDENT_DATASET", "").strip() in ("True", "true"):
            raise RuntimeError("Dataset sync wait is not supported in Dataset Independent mode.")
        if num_batch <= 0:
            raise ValueError("num_batch need to be greater than 0.")
        if callback is not None and not callable(callback):
            raise TypeError(f"callback should be a callable, but got {type(callback)}.")
        if condition_name in sync_notifiers(input_dataset):
            raise RuntimeError("Condition name is already in use.")
        super().__init__([input_dataset])
        self.condition_name = condition_name
        self._gate = RowGate(num_batch, config.get_callback_timeout(), callback, condition_name)

    def _make_plan(self):
        parent = self.children[0]._plan
        return P.GateNode((parent,), parent.columns, self._gate)

    def _batch_size_after(self, batch_size: int) -> None:
        self._gate.scale(batch_size)


def _walk(dataset: Any):
    yield dataset
    for child in getattr(dataset, "children", ()):
        yield from _walk(child)


def sync_notifiers(dataset: Any) -> dict:
    """condition name -> the release function of every sync_wait along ``dataset``'s inputs."""
    return {d.condition_name: d._gate.release for d in _walk(dataset) if isinstance(d, SyncWaitDataset)}


def is_sync(dataset: Any) -> bool:
    return any(isinstance(d, SyncWaitDataset) for d in _walk(dataset))


def disable_sync(dataset: Any) -> None:
    """Opens every gate along ``dataset``'s inputs for good."""
    for d in _walk(dataset):
        if isinstance(d, SyncWaitDataset):
            d._gate.open()


def notify_batch(dataset: Any, batch_size: Any) -> None:
    """A batch of ``batch_size`` rows now follows ``dataset``: its sync_waits count in batches of it."""
    if isinstance(batch_size, int) and batch_size > 0:
        for d in _walk(dataset):
            if isinstance(d, SyncWaitDataset):
                d._batch_size_after(batch_size)


def sync_update(dataset: Any, condition_name: Any, num_batch: Any = None, data: Any = None) -> None:
    """Releases the sync_wait ``condition_name`` along ``dataset`` (see the module docstring).

    Raises:
        RuntimeError: ``num_batch`` is not a positive int (or None), or no sync_wait has that name;
            every sync_wait of the pipeline is opened first, so that the pipeline cannot hang.
        TypeError: ``condition_name`` is not a str.
    """
    if (not isinstance(num_batch, int) and num_batch is not None) or isinstance(num_batch, bool) or \
            (isinstance(num_batch, int) and num_batch <= 0):
        disable_sync(dataset)
        raise RuntimeError(f"Sync_update batch size can only be positive integer, got: {num_batch}.")
    if not isinstance(condition_name, str):
        raise TypeError(f"Argument condition_name with value {condition_name} is not of type str, but got "
                        f"{type(condition_name)}.")
    notifiers = sync_notifiers(dataset)
    if condition_name not in notifiers:
        disable_sync(dataset)
        raise RuntimeError("Condition name not found.")
    if num_batch is not None:
        num_batch *= dataset.get_batch_size()
    notifiers[condition_name](num_batch, data)


# Dataset's sync methods (_sync_api) call these; this module subclasses Dataset, so sits above it.
_provided.provide(SyncWaitDataset=SyncWaitDataset, sync_update=sync_update, disable_sync=disable_sync,
                  sync_notifiers=sync_notifiers, is_sync=is_sync, notify_batch=notify_batch)
