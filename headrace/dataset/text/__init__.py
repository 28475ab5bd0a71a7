"""Mirror of ``mindspore.dataset.text``: tokenizers, vocabularies and string ops.

Strings are NumPy unicode arrays, as MindSpore returns them. The ops that need optional libraries
(ICU via PyICU, ``regex``, HF ``tokenizers``, ``sentencepiece``, ``jieba``) import them when they
are built and name the ``headrace[text]`` extra when one is missing; importing this module needs
none of them.
"""
from headrace.dataset.text._common import (
    JiebaMode, NormalizeForm, SentencePieceModel, SPieceTokenizerLoadType, SPieceTokenizerOutType, to_bytes,
    to_str,
)
from headrace.dataset.text._jieba import JiebaTokenizer
from headrace.dataset.text._normalize import CaseFold, FilterWikipediaXML, NormalizeUTF8, RegexReplace
from headrace.dataset.text._seqops import AddToken, Ngram, SlidingWindow, ToNumber, Truncate, TruncateSequencePair
from headrace.dataset.text._sentencepiece import SentencePieceTokenizer, SentencePieceVocab
from headrace.dataset.text._tokenizers import (
    BasicTokenizer, PythonTokenizer, RegexTokenizer, UnicodeCharTokenizer, UnicodeScriptTokenizer,
    WhitespaceTokenizer,
)
from headrace.dataset.text._vectors import CharNGram, FastText, GloVe, ToVectors, Vectors
from headrace.dataset.text._vocab import Lookup, Vocab
from headrace.dataset.text._wordpiece import BertTokenizer, WordpieceTokenizer
from headrace.dataset.text import _fusion  # noqa: E402,F401  (registers the BertTokenizer + Lookup fusion)
from headrace.dataset.text import transforms, utils  # noqa: E402,F401  (MindSpore's submodules)

__all__ = [
    "AddToken", "BasicTokenizer", "BertTokenizer", "CaseFold", "CharNGram", "FastText",
    "FilterWikipediaXML", "GloVe", "JiebaMode", "JiebaTokenizer", "Lookup", "Ngram",
    "NormalizeForm", "NormalizeUTF8", "PythonTokenizer", "RegexReplace", "RegexTokenizer",
    "SPieceTokenizerLoadType", "SPieceTokenizerOutType", "SentencePieceModel",
    "SentencePieceTokenizer", "SentencePieceVocab", "SlidingWindow", "ToNumber", "ToVectors",
    "Truncate", "TruncateSequencePair", "UnicodeCharTokenizer", "UnicodeScriptTokenizer", "Vectors",
    "Vocab", "WhitespaceTokenizer", "WordpieceTokenizer", "to_bytes", "to_str",
]
