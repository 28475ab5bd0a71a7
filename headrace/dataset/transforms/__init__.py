"""General transforms (MindSpore's ``mindspore.dataset.transforms``)."""
from headrace.dataset.transforms._base import (FuncWrapper, Implementation, PyTensorOperation,
                                               TensorOperation, not_random, to_output)

__all__ = ["FuncWrapper", "Implementation", "PyTensorOperation", "TensorOperation", "not_random",
           "to_output"]
