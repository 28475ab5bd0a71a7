"""The sync methods every ``Dataset`` has (``sync_wait``, ``sync_update``, ...), kept apart from
``_datasets.py``; they live in ``_sync.py``, imported when first used (it subclasses Dataset)."""
from __future__ import annotations


class SyncMethods:
    """``Dataset``'s flow-control methods (see ``headrace/dataset/_sync.py``)."""

    def sync_wait(self, condition_name, num_batch=1, callback=None):
        """Holds rows after ``num_batch`` batches until ``sync_update(condition_name)`` (see ``_sync.py``)."""
        from headrace.dataset._sync import SyncWaitDataset  # noqa: PLC0415 - it imports Dataset
        return SyncWaitDataset(self, condition_name, num_batch, callback)

    def sync_update(self, condition_name, num_batch=None, data=None):
        """Runs the sync_wait's callback with ``data`` and lets ``num_batch`` more batches through."""
        from headrace.dataset._sync import sync_update  # noqa: PLC0415 - it imports Dataset
        sync_update(self, condition_name, num_batch, data)

    def disable_sync(self):
        """Lets rows through every sync_wait of this pipeline from now on."""
        from headrace.dataset._sync import disable_sync  # noqa: PLC0415 - it imports Dataset
        disable_sync(self)

    def get_sync_notifiers(self):
        """condition name -> release function of each sync_wait along the inputs."""
        from headrace.dataset._sync import sync_notifiers  # noqa: PLC0415 - it imports Dataset
        return sync_notifiers(self)

    def is_sync(self):
        """Whether a sync_wait is along the inputs."""
        from headrace.dataset._sync import is_sync  # noqa: PLC0415 - it imports Dataset
        return is_sync(self)
