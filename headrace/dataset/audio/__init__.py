"""Audio transforms (MindSpore's ``mindspore.dataset.audio``), on NumPy and SciPy.

Importing this package stays light: SciPy is imported by the first op that needs it.
"""
from headrace.dataset.audio import transforms, utils
from headrace.dataset.audio.transforms import *  # noqa: F403
from headrace.dataset.audio.utils import *  # noqa: F403

__all__ = list(transforms.__all__) + list(utils.__all__)
