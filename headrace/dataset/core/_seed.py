"""Seeds (``ds.config.set_seed``): the global seed of shuffles and random operations."""
from __future__ import annotations

import random

import numpy as np

from headrace._engine import options as _options
from headrace._util import rng as _rng
from headrace._util.checks import UINT32_MAX
from headrace.dataset.core import _store


DEFAULT_SEED = 5489  # what get_seed() reports before set_seed (mt19937's default seed)


def set_seed(seed):
    """Seeds shuffles and random operations of pipelines created from now on.

    Like MindSpore, this also seeds Python's ``random`` and NumPy's global generator, which user
    functions in ``map`` may use. Setting 5489 (mt19937's default) means "unseeded", as in MindSpore.

    Args:
        seed (int): A value in [0, 4294967295].
    """
    _store.check_int_type(seed, "seed")
    if not 0 <= seed <= UINT32_MAX:
        raise ValueError(f"seed given is not within the required range [0, UINT32_MAX({UINT32_MAX})].")
    _options.update(seed=None if seed == DEFAULT_SEED else seed)
    _rng.seed_eager(None if seed == DEFAULT_SEED else seed)
    random.seed(seed)
    np.random.seed(seed)


def get_seed():
    seed = _options.snapshot().seed
    return DEFAULT_SEED if seed is None else seed

