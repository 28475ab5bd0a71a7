"""The audio transforms (MindSpore's ``mindspore.dataset.audio.transforms``): filters and effects
in ``_filters``, STFT- and mel-based transforms and the rest in ``_spectral``."""
from headrace.dataset.audio import _filters, _spectral
from headrace.dataset.audio._filters import *  # noqa: F403
from headrace.dataset.audio._spectral import *  # noqa: F403

__all__ = list(_filters.__all__) + list(_spectral.__all__)
