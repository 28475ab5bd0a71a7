"""Dataset.split: consecutive (skip/take) or dealt in a seeded random order."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from headrace._engine import options as _options
from headrace._engine.samplers import RandomPlan
from headrace._util import checks, rng
from headrace._util.types import SampleContext
from headrace.dataset.samplers import SubsetSampler


_SPLIT_BUFFER = 10000


def _sizes_from(sizes: Any, total: int) -> list[int]:
    if not isinstance(sizes, list) or not sizes:
        raise TypeError(f"Argument sizes with value {sizes!r} is not of type [list], but got {type(sizes)}.")
    if all(isinstance(s, int) and not isinstance(s, bool) for s in sizes):
        if any(s <= 0 for s in sizes):
            raise ValueError("sizes is a list of int, but there should be no negative or zero numbers.")
        if sum(sizes) != total:
            raise RuntimeError(f"Sum of split sizes {sum(sizes)} is not equal to dataset size {total}.")
        return list(sizes)
    if all(isinstance(s, float) for s in sizes):
        if any(not 0 < s <= 1 for s in sizes):
            raise ValueError("sizes is a list of float, but there should be no numbers outside the range (0, 1].")
        if not math.isclose(sum(sizes), 1.0, abs_tol=1e-6):
            raise ValueError("sizes is a list of float, but the percentages do not sum up to 1.")
        out = [round(s * total) for s in sizes]
        out[-1] += total - sum(out)  # rounding remainder goes to the last split
        if any(s <= 0 for s in out):
            raise RuntimeError(f"Split sizes {out} of a dataset of {total} rows leave a split empty.")
        return out
    raise TypeError("sizes should be a list of int or a list of float.")


def split_dataset(dataset: Any, sizes: Any, randomize: bool) -> list[Any]:
    checks.check_bool(randomize, "randomize")
    total = dataset.get_dataset_size()
    counts = _sizes_from(sizes, total)
    if not randomize:
        out, start = [], 0
        for n in counts:
            out.append(dataset.skip(start).take(n) if start else dataset.take(n))
            start += n
        return out
    if not dataset.reads_by_index:
        # as MindSpore: a buffer shuffle of 10000 rows, the same order every epoch, then consecutive parts
        out, start = [], 0
        for n in counts:
            shuffled = dataset.shuffle(_SPLIT_BUFFER)
            shuffled.reshuffle_each_epoch = False
            out.append(shuffled.skip(start).take(n) if start else shuffled.take(n))
            start += n
        return out
    seed = _options.snapshot().seed
    order = random_order(total, rng.new_seed() if seed is None else seed)
    out, start = [], 0
    for n in counts:
        out.append(dataset._with_sampler(SubsetSampler(order[start:start + n].tolist())))
        start += n
    return out


def random_order(n: int, seed: int) -> np.ndarray:
    """The order a seeded shuffle of ``n`` rows gives on its first pass."""
    return np.asarray(RandomPlan().indices(SampleContext(n, 0, seed)))
