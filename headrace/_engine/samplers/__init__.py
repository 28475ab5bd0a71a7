"""Index plans: which source rows one pass reads, and in what order (pure functions of a
``SampleContext``). ``builtin`` holds the plans of MindSpore's public samplers, ``mindrecord`` the
orders of MindRecord files, ``files`` those of sources read file by file (TFRecord, CSV, text)."""
from headrace._engine.samplers.builtin import (
    ChainedPlan, DistributedPlan, PKPlan, RandomPlan, SamplerPlan, SequentialPlan, SubsetPlan, UserPlan,
    WeightedRandomPlan, chain,
)
from headrace._engine.samplers.files import FileRowsPlan
from headrace._engine.samplers.mindrecord import MindFilePlan, MindShufflePlan, MindSubsetRandomPlan

__all__ = [
    "ChainedPlan", "DistributedPlan", "FileRowsPlan", "MindFilePlan", "MindShufflePlan", "MindSubsetRandomPlan",
    "PKPlan", "RandomPlan", "SamplerPlan", "SequentialPlan", "SubsetPlan", "UserPlan", "WeightedRandomPlan",
    "chain",
]
