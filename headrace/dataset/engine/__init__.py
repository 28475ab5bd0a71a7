"""Mirror of ``mindspore.dataset.engine``: the same names, re-exported from where they live."""
from headrace.dataset import *  # noqa: F403 - this module is a mirror of the public surface
from headrace.dataset import __all__ as _public
from headrace.dataset._iterators import Iterator  # noqa: F401 - in __all__ below

__all__ = sorted(set(_public) | {"Iterator"})
