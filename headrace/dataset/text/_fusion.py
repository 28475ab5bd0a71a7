"""Fusion rules for text ops in a map (registered with ``transforms.register_fusion``).

``[BertTokenizer(vocab, ...), Lookup(vocab, unknown_token=<the tokenizer's>)]`` becomes one op,
:class:`BertLookup`, that returns the ids directly, and a ``Truncate`` then a one-dimensional
``PadEnd`` after it join that op: ``[BertTokenizer, Lookup, Truncate(n), PadEnd([m], v)]`` is one
Python call per text instead of four. On ASCII text (``BertTokenizer.ascii_ids``) it looks each
word's ids up in a per-tokenizer cache of WordPiece results and writes them, cut and padded, into
the output array; elsewhere it runs the ops it replaces, one after the other. Either way the
result is the unfused chain's: the same ids, dtype and shape.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from headrace.dataset.text._common import TextOperation
from headrace.dataset.text._seqops import Truncate
from headrace.dataset.text._vocab import Lookup
from headrace.dataset.text._wordpiece import BertTokenizer
from headrace.dataset.transforms._base import returns_contiguous
from headrace.dataset.transforms._fusion import register_fusion
from headrace.dataset.transforms.transforms import PadEnd

__all__ = ["BertLookup"]

_ndarray = np.ndarray


class BertLookup(TextOperation):
    """A BertTokenizer followed by a Lookup on the same vocab, and optionally a Truncate and then a
    one-dimensional PadEnd, as one op (made by ``fuse_ops``)."""

    def __init__(self, bert: BertTokenizer, lookup: Lookup, truncate: Truncate | None = None,
                 pad: PadEnd | None = None) -> None:
        self.bert, self.lookup, self.truncate, self.pad = bert, lookup, truncate, pad
        self.source_ops = tuple(op for op in (bert, lookup, truncate, pad) if op is not None)
        self._dtype = lookup._dtype
        # the ids path needs every id of the vocab to fit the dtype (else the Lookup raises on a
        # text whose ids a Truncate would cut off)
        self._direct = self._dtype.kind in "bf" or (self._dtype.kind in "iu" and _fits(lookup._table, self._dtype))
        self._keep = truncate.max_seq_len if truncate is not None else None
        # a padded row: PadEnd's output for no id (its fill value in the lookup's dtype, as
        # PadEnd casts it); None when there is no PadEnd or it keeps the length (pad_shape [None])
        self._template: np.ndarray | None = None
        if pad is not None and pad.pad_shape[0] is not None:
            self._template = pad(np.zeros(0, self._dtype))
            length = int(self._template.shape[0])
            self._keep = length if self._keep is None else min(self._keep, length)

    @returns_contiguous  # a new array, or the ops' own (contiguous) results
    def __call__(self, *args: Any) -> Any:
        if len(args) != 1:
            return self._tail(self.lookup(self.bert(*args)))
        bert = self.bert
        value = args[0]
        if type(value) is _ndarray and value.ndim == 0 and value.dtype.kind == "U":
            text = value.item()  # a text column's value: what _scalar gives, in one call
        else:
            text = bert._basic._scalar(value)
        if self._direct:
            ids = bert.ascii_ids(text)
            if ids:
                keep = self._keep
                a = np.array(ids if keep is None or len(ids) <= keep else ids[:keep], dtype=self._dtype)
                template = self._template
                if template is None:
                    return a if self.pad is None else self.pad(a)
                out = template.copy()
                out[:len(a)] = a
                return out
            if ids is not None:
                # no token: MindSpore's tokenizer gives [""], which the Lookup maps to the unknown id
                return self._tail(self.lookup(np.array([""])))
        return self._tail(self.lookup(bert(text)))

    def _tail(self, ids: np.ndarray) -> np.ndarray:
        """The Truncate and PadEnd of the chain on the looked-up ``ids``, as the ops do it."""
        if self.truncate is not None:
            ids = self.truncate(ids)
        return ids if self.pad is None else self.pad(ids)


def _fits(table: dict, dtype: np.dtype) -> bool:
    """Whether every id of ``table`` is a value of the integer ``dtype``."""
    if not table:
        return True
    info = np.iinfo(dtype)
    return info.min <= min(table.values()) and max(table.values()) <= info.max


def _bert_lookup(first: Any, second: Any, options: dict) -> Any:
    if type(first) is BertLookup:
        return _add_tail(first, second)
    if type(first) is not BertTokenizer or type(second) is not Lookup:
        return None
    if first.with_offsets or second.vocab is not first.vocab or second.unknown_token != first.unknown_token:
        return None
    return BertLookup(first, second)


def _add_tail(fused: BertLookup, op: Any) -> BertLookup | None:
    """``fused`` with a Truncate (before any PadEnd) or a PadEnd that cannot fail on its ids
    (one dimension, a numeric fill value that casts to the ids' dtype) added; None otherwise."""
    if fused.pad is not None or fused._dtype.kind not in "biuf":
        return None
    if type(op) is Truncate and fused.truncate is None:
        return BertLookup(fused.bert, fused.lookup, op, None)
    if type(op) is not PadEnd or len(op.pad_shape) != 1:
        return None
    if op._value is not None and op._value.dtype.kind not in "biuf":
        return None
    try:
        return BertLookup(fused.bert, fused.lookup, fused.truncate, op)
    except Exception:  # noqa: BLE001 - a fill value PadEnd refuses for these ids: not fused, PadEnd says so
        return None


register_fusion(_bert_lookup)
