"""General transforms (MindSpore's ``mindspore.dataset.transforms``).

Every transform is callable eagerly (``op(array)``) and usable in ``Dataset.map``.
"""
from headrace.dataset.transforms._base import (FuncWrapper, Implementation, PyTensorOperation,
                                               TensorOperation, not_random, to_output)
from headrace.dataset.transforms._fusion import fuse_ops, register_fusion
from headrace.dataset.transforms.transforms import (Compose, Concatenate, Duplicate, Fill, Mask,
                                                    OneHot, PadEnd, RandomApply, RandomChoice,
                                                    RandomOrder, Relational, Slice, TypeCast, Unique)

__all__ = ["Compose", "Concatenate", "Duplicate", "Fill", "FuncWrapper", "Implementation", "Mask",
           "OneHot", "PadEnd", "PyTensorOperation", "RandomApply", "RandomChoice", "RandomOrder",
           "Relational", "Slice", "TensorOperation", "TypeCast", "Unique", "fuse_ops", "not_random",
           "register_fusion", "to_output"]
