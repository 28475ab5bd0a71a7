"""Mirror of ``mindspore.dataset.engine.samplers``."""
from headrace.dataset.samplers import (
    BuiltinSampler, DistributedSampler, IterSampler, PKSampler, RandomSampler, Sampler, SequentialSampler,
    Shuffle, SubsetRandomSampler, SubsetSampler, WeightedRandomSampler,
)

__all__ = ["BuiltinSampler", "DistributedSampler", "IterSampler", "PKSampler", "RandomSampler", "Sampler",
           "SequentialSampler", "Shuffle", "SubsetRandomSampler", "SubsetSampler", "WeightedRandomSampler"]
