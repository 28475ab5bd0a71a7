"""The sync methods every ``Dataset`` has (``sync_wait``, ``sync_update``, ...), kept apart from
``_datasets.py``; they live in ``_sync.py``, which subclasses Dataset and so sits above it: it hands them to
``_provided`` when imported."""
from __future__ import annotations

from headrace.dataset import _provided


class SyncMethods:
    """``Dataset``'s flow-control methods (see ``headrace/dataset/_sync.py``)."""

    def sync_wait(self, condition_name, num_batch=1, callback=None):
        """Holds rows after ``num_batch`` batches until ``sync_update(condition_name)`` (see ``_sync.py``)."""
        return _provided.get("SyncWaitDataset")(self, condition_name, num_batch, callback)

    def sync_update(self, condition_name, num_batch=None, data=None):
        """Runs the sync_wait's callback with ``data`` and lets ``num_batch`` more batches through."""
        _provided.get("sync_update")(self, condition_name, num_batch, data)

    def disable_sync(self):
        """Lets rows through every sync_wait of this pipeline from now on."""
        _provided.get("disable_sync")(self)

    def get_sync_notifiers(self):
        """condition name -> release function of each sync_wait along the inputs."""
        return _provided.get("sync_notifiers")(self)

    def is_sync(self):
        """Whether a sync_wait is along the inputs."""
        return _provided.get("is_sync")(self)
