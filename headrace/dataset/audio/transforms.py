"""The audio transforms (MindSpore's ``mindspore.dataset.audio.transforms``): filters and effects
in ``_filters``; STFT- and mel-based transforms in ``_spectral``, masking in ``_masking``, the
elementwise transforms of spectra in ``_features``, time and pitch in ``_stretch``."""
from headrace.dataset.audio import _features, _filters, _masking, _spectral, _stretch
from headrace.dataset.audio._features import *  # noqa: F403
from headrace.dataset.audio._filters import *  # noqa: F403
from headrace.dataset.audio._masking import *  # noqa: F403
from headrace.dataset.audio._spectral import *  # noqa: F403
from headrace.dataset.audio._stretch import *  # noqa: F403

__all__ = sorted(list(_features.__all__) + list(_filters.__all__) + list(_masking.__all__) + list(_spectral.__all__)
                 + list(_stretch.__all__))
