"""Mirror of ``mindspore.dataset.engine.iterators``."""
from headrace.dataset._iterators import DictIterator, Iterator, TupleIterator
from headrace.dataset._tensor import Tensor

__all__ = ["DictIterator", "Iterator", "Tensor", "TupleIterator"]
