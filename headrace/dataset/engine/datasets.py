"""Mirror of ``mindspore.dataset.engine.datasets``."""
from headrace.dataset import __all__ as _public
from headrace.dataset import *  # noqa: F403 - mirror module

__all__ = sorted(n for n in _public if n.endswith("Dataset") or n in ("BatchInfo", "zip"))
