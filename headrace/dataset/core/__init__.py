"""Mirror of ``mindspore.dataset.core``."""
from headrace.dataset.core import config

__all__ = ["config"]
