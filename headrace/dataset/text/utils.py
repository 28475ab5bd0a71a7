"""``mindspore.dataset.text.utils``: the vocab and vector classes, enums and string helpers."""
from headrace.dataset.text._common import (
    JiebaMode, NormalizeForm, SentencePieceModel, SPieceTokenizerLoadType, SPieceTokenizerOutType, to_bytes,
    to_str,
)
from headrace.dataset.text._sentencepiece import SentencePieceVocab
from headrace.dataset.text._vectors import CharNGram, FastText, GloVe, Vectors
from headrace.dataset.text._vocab import Vocab

__all__ = ["CharNGram", "FastText", "GloVe", "JiebaMode", "NormalizeForm", "SPieceTokenizerLoadType",
           "SPieceTokenizerOutType", "SentencePieceModel", "SentencePieceVocab", "Vectors", "Vocab", "to_bytes",
           "to_str"]
