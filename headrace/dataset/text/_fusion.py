"""Fusion rules for text ops in a map (registered with ``transforms.register_fusion``).

``[BertTokenizer(vocab, ...), Lookup(vocab, unknown_token=<the tokenizer's>)]`` becomes one op that
returns the ids directly: on the HF fast path they are the ids HF computes from the same vocab
(identical to looking the tokens up), elsewhere it tokenizes and looks up as the two ops do.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from headrace.dataset.text._common import TextOperation
from headrace.dataset.text._vocab import Lookup
from headrace.dataset.text._wordpiece import BertTokenizer, hf_encode
from headrace.dataset.transforms._fusion import register_fusion

__all__ = ["BertLookup"]


class BertLookup(TextOperation):
    """A BertTokenizer followed by a Lookup on the same vocab, as one op (made by ``fuse_ops``)."""

    def __init__(self, bert: BertTokenizer, lookup: Lookup) -> None:
        self.bert, self.lookup = bert, lookup
        self.source_ops = (bert, lookup)
        self._dtype = lookup._dtype

    def __call__(self, *args: Any) -> Any:
        if len(args) != 1:
            return self.lookup(self.bert(*args))
        bert = self.bert
        text = bert._basic._scalar(args[0])
        if self._dtype.kind in "biuf" and bert._hf_eligible(text):
            tok = bert._fast()
            if tok is not None:
                ids = hf_encode(tok, text).ids
                if ids:
                    return np.array(ids, dtype=self._dtype)
                # no token: MindSpore's tokenizer gives [""], which the Lookup maps to the unknown id
                return self.lookup(np.array([""]))
        return self.lookup(bert.tokenize_slow(text))


def _bert_lookup(first: Any, second: Any, options: dict) -> Any:
    if type(first) is not BertTokenizer or type(second) is not Lookup:
        return None
    if first.with_offsets or second.vocab is not first.vocab or second.unknown_token != first.unknown_token:
        return None
    return BertLookup(first, second)


register_fusion(_bert_lookup)
