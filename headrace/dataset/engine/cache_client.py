"""Mirror of ``mindspore.dataset.engine.cache_client``."""
from headrace.dataset.cache import DatasetCache

__all__ = ["DatasetCache"]
