"""A source's sampling arguments (``num_samples``, ``shuffle``, ``sampler``, ``num_shards``, ``shard_id``) checked as
MindSpore checks them and turned into one engine plan."""
from __future__ import annotations
import numpy as np
from headrace._engine.samplers import builtin as _plans
from headrace._util import checks
from headrace.dataset._shuffle import Shuffle, _as_shuffle
from headrace.dataset.samplers import (
    DistributedSampler, IterSampler, RandomSampler, SequentialSampler, SubsetSampler, is_index_sequence,
)
from headrace.dataset._sampler_base import BuiltinSampler, _is_int


__all__ = ["check_sampler_shuffle_shard_options", "resolve_sampler", "select_sampler"]


def resolve_sampler(num_samples, shuffle, sampler, num_shards, shard_id):
    """The sampler MindSpore builds for a random-access source's arguments.

    * A ``sampler`` given with any of ``num_samples``, ``shuffle``, ``num_shards``, ``shard_id``
      is a conflict (ValueError) when it is a sampler object; a list, tuple or array of ids
      becomes a :class:`SubsetSampler` (taking ``num_samples``), any other iterable an
      :class:`IterSampler`, an int a one-id :class:`SubsetSampler`.
    * Otherwise ``shuffle`` None or True means ``Shuffle.GLOBAL``. With ``num_shards``: a
      :class:`DistributedSampler` (shuffled unless ``shuffle`` is False). Shuffled without shards:
      a :class:`RandomSampler`, drawing with replacement when ``num_samples`` is given.
      Not shuffled: a :class:`SequentialSampler`.

    Returns:
        BuiltinSampler.
    """
    if sampler is not None:
        if isinstance(sampler, BuiltinSampler):
            if any(arg is not None for arg in (num_shards, shard_id, shuffle, num_samples)):
                raise ValueError(f"Conflicting arguments during sampler assignments. num_samples: {num_samples}, "
                                 f"num_shards: {num_shards}, shard_id: {shard_id}, shuffle: {shuffle}.")
            return sampler
        if isinstance(sampler, (np.ndarray, list, tuple)):
            return SubsetSampler(sampler, num_samples)
        if _is_int(sampler):
            return SubsetSampler([sampler])
        if is_index_sequence(sampler):
            return IterSampler(sampler, num_samples)
        raise TypeError(f"Unsupported sampler object of type ({type(sampler)})")
    if shuffle is None or shuffle is True:
        mode = Shuffle.GLOBAL
    elif shuffle is False:
        mode = Shuffle.FALSE
    else:
        mode = _as_shuffle(shuffle) if not isinstance(shuffle, bool) else None
        if mode is None:
            raise RuntimeError(f"The input parameter shuffle: {shuffle} is not valid.")
    if mode is not Shuffle.FALSE:
        if num_shards is not None:
            return DistributedSampler(num_shards, shard_id, shuffle=mode, num_samples=num_samples)
        if num_samples is not None:
            return RandomSampler(replacement=True, num_samples=num_samples, shuffle=mode)
        return RandomSampler(shuffle=mode)
    if num_shards is not None:
        return DistributedSampler(num_shards, shard_id, shuffle=mode, num_samples=num_samples)
    return SequentialSampler(num_samples=num_samples)


def select_sampler(num_samples, shuffle, sampler, num_shards, shard_id) -> _plans.SamplerPlan:
    """The engine plan for a random-access source's sampling arguments (see :func:`resolve_sampler`).

    Examples:
        >>> from headrace._util.types import SampleContext
        >>> select_sampler(None, False, None, 3, 2).indices(SampleContext(10, 0, 0)).tolist()
        [2, 5, 8, 1]
    """
    return resolve_sampler(num_samples, shuffle, sampler, num_shards, shard_id).plan()


def check_sampler_shuffle_shard_options(sampler=None, shuffle=None, num_shards=None, shard_id=None,
                                        num_samples=None):
    """MindSpore's combined check of these arguments for file and folder sources.

    (``GeneratorDataset`` and ``NumpySlicesDataset`` skip it and rely on :func:`resolve_sampler`.)

    Raises:
        RuntimeError: If ``sampler`` is combined with shuffle, sharding or num_samples, or only one
            of num_shards / shard_id is given.
        TypeError, ValueError: If num_shards or shard_id is not an int in range.
    """
    if sampler is not None:
        if shuffle is not None:
            raise RuntimeError("sampler and shuffle cannot be specified at the same time.")
        if num_shards is not None or shard_id is not None:
            raise RuntimeError("sampler and sharding cannot be specified at the same time.")
        if num_samples is not None:
            raise RuntimeError("sampler and num_samples cannot be specified at the same time.")
    if num_shards is not None:
        checks.check_pos_int32(num_shards, "num_shards")
        if shard_id is None:
            raise RuntimeError("num_shards is specified and currently requires shard_id as well.")
        checks.check_int(shard_id, "shard_id")
        checks.check_range(shard_id, (0, num_shards - 1), "shard_id")
    if num_shards is None and shard_id is not None:
        raise RuntimeError("shard_id is specified but num_shards is not.")
