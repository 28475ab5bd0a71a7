"""Dataset.split: sizes as MindSpore computes them, and parts that never share a row.

A source read by index (and a file source, which headrace reads by index too) is split by giving
each part a ``SplitPlan`` (``headrace/_engine/samplers/split.py``): one fixed order of the rows,
sliced. Other datasets are split as MindSpore splits them: a buffer shuffle of 10000 rows that
draws the same order every epoch, then consecutive parts (skip / take). The seed of the split is
the configured one, or one drawn once for all parts, so that the parts are disjoint without a
seed too (MindSpore draws one per part then, and its parts overlap).
"""
from __future__ import annotations

import math
import warnings
from typing import Any

from headrace._engine import options as _options
from headrace._engine.samplers.split import SplitPlan
from headrace._util import checks, rng
from headrace.dataset._sources._mind_chain import split_parts


_SPLIT_BUFFER = 10000


def _is_int(s: Any) -> bool:
    return isinstance(s, int) and not isinstance(s, bool)


def split_sizes(sizes: Any, total: int) -> list[int]:
    """The rows of each part of a split of ``total`` rows, as MindSpore 2.10 computes them.

    Ints are taken as they are (they must sum to ``total``). Fractions are rounded (Python's
    ``round``); the difference to ``total`` goes to the first part, or, when that would leave it
    empty, to the largest one.

    Raises:
        TypeError: ``sizes`` is not a list.
        ValueError: ``sizes`` is empty, mixes ints and floats (or holds anything else), holds an
            int <= 0 or a fraction outside (0, 1], or fractions that do not sum to 1.
        RuntimeError: the ints do not sum to ``total``, a fraction leaves its part empty, or
            no part can take the rounding difference.

    Examples:
        >>> split_sizes([0.33, 0.33, 0.34], 10)
        [4, 3, 3]
        >>> split_sizes([0.15, 0.15, 0.15, 0.55], 10)
        [2, 2, 2, 4]
    """
    if not isinstance(sizes, list):
        raise TypeError(f"Argument sizes with value {sizes!r} is not of type [<class 'list'>], "
                        f"but got {type(sizes)}.")
    if not sizes:
        raise ValueError("sizes cannot be empty.")
    if all(_is_int(s) for s in sizes):
        if any(s <= 0 for s in sizes):
            raise ValueError("sizes is a list of int, but there should be no negative or zero numbers.")
        if sum(sizes) != total:
            raise RuntimeError(f"Sum of split sizes {sum(sizes)} is not equal to dataset size {total}.")
        return [int(s) for s in sizes]
    if not all(isinstance(s, float) for s in sizes):
        raise ValueError("sizes should be list of int or list of float.")
    if any(not 0 < s <= 1 for s in sizes):
        raise ValueError("sizes is a list of float, but there should be no numbers outside the range (0, 1].")
    if not math.isclose(sum(sizes), 1.0, abs_tol=1e-6):
        raise ValueError("sizes is a list of float, but the percentages do not sum up to 1.")
    out = []
    for s in sizes:
        n = round(s * total)
        if n == 0:
            raise RuntimeError(f"Split percentage {s} is too small.")
        out.append(n)
    diff = total - sum(out)
    if out[0] + diff > 0:
        out[0] += diff
    else:
        largest = out.index(max(out))
        if out[largest] + diff > 0:
            out[largest] += diff
    if sum(out) != total:
        raise RuntimeError(f"Sum of calculated split sizes {sum(out)} is not equal to dataset size {total}.")
    return out


def split_dataset(dataset: Any, sizes: Any, randomize: bool) -> list[Any]:
    """The parts of ``dataset`` (see ``Dataset.split``)."""
    checks.check_bool(randomize, "randomize")
    if dataset.is_sharded():
        raise RuntimeError("Dataset should not be sharded before split.")
    total = dataset.get_dataset_size()
    counts = split_sizes(sizes, total)
    configured = _options.snapshot().seed
    seed = rng.new_seed() if configured is None else configured
    if getattr(dataset, "reads_as_mindrecord", False):
        parts = split_parts(dataset, counts, randomize, seed)
        if parts is not None:
            return parts
    if dataset.reads_by_index and hasattr(dataset, "_with_split_plan"):
        base = dataset._split_base_plan()
        order = "none" if not randomize else ("buffer" if getattr(dataset, "streamed_in_mindspore", False)
                                              else "random")
        out, start = [], 0
        for n in counts:
            plan = SplitPlan(base, start, n, order, seed, configured is not None, _SPLIT_BUFFER)
            out.append(dataset._with_split_plan(plan))
            start += n
        return out
    if configured is None and dataset.is_shuffled():
        warnings.warn("split: this pipeline shuffles before the split and no seed is set, so each part draws "
                      "its own order and the parts may share rows; call ds.config.set_seed() first (or split "
                      "the source, whose parts never share rows).", UserWarning, stacklevel=3)
    out, start = [], 0
    for n in counts:
        part = dataset
        if randomize:
            # as MindSpore: a buffer shuffle of 10000 rows, the same order every epoch; one seed
            # for all parts
            part = dataset.shuffle(_SPLIT_BUFFER)
            part._seed = seed
            part.reshuffle_each_epoch = False
        out.append(part.skip(start).take(n) if start else part.take(n))
        start += n
    return out

