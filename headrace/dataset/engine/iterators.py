"""Mirror of ``mindspore.dataset.engine.iterators``.

``ITERATORS_LIST`` holds weak references to the live iterators, oldest first: an iterator leaves it
when it is stopped or collected, so the list never keeps one (or its workers) alive. ``_cleanup()``
releases every live iterator, newest first, and raises the cleanup flag that
``check_iterator_cleanup()`` reads until the next iterator is made; ``_unset_iterator_cleanup()``
lowers it.
"""
from headrace.dataset import _iterators
from headrace.dataset._iterators import (ITERATORS_LIST, DictIterator, Iterator, IteratorReleasedError,
                                         TupleIterator)
from headrace.dataset._tensor import Tensor

__all__ = ["DictIterator", "ITERATORS_LIST", "Iterator", "IteratorReleasedError", "Tensor", "TupleIterator",
           "check_iterator_cleanup"]

_flag = {"cleanup": False}


def _set_iterator_cleanup():
    _flag["cleanup"] = True


def _unset_iterator_cleanup():
    _flag["cleanup"] = False


def check_iterator_cleanup():
    """Whether ``_cleanup()`` ran after the last iterator was made."""
    return _flag["cleanup"]


def _cleanup():
    """Releases every live iterator (newest first): their workers stop and their buffers are freed."""
    _set_iterator_cleanup()
    for ref in reversed(list(ITERATORS_LIST)):
        itr = ref()
        if itr is not None:
            itr.release()


_iterators._on_new_iterator = _unset_iterator_cleanup
