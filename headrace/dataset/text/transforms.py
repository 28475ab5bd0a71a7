"""``mindspore.dataset.text.transforms``: the text operations (and the enums they take)."""
from headrace.dataset.text._common import (
    JiebaMode, NormalizeForm, SPieceTokenizerLoadType, SPieceTokenizerOutType, to_str,
)
from headrace.dataset.text._jieba import JiebaTokenizer
from headrace.dataset.text._normalize import CaseFold, FilterWikipediaXML, NormalizeUTF8, RegexReplace
from headrace.dataset.text._sentencepiece import SentencePieceTokenizer, SentencePieceVocab
from headrace.dataset.text._seqops import AddToken, Ngram, SlidingWindow, ToNumber, Truncate, TruncateSequencePair
from headrace.dataset.text._tokenizers import (
    BasicTokenizer, PythonTokenizer, RegexTokenizer, UnicodeCharTokenizer, UnicodeScriptTokenizer,
    WhitespaceTokenizer,
)
from headrace.dataset.text._vectors import ToVectors
from headrace.dataset.text._vocab import Lookup
from headrace.dataset.text._wordpiece import BertTokenizer, WordpieceTokenizer

__all__ = ["AddToken", "BasicTokenizer", "BertTokenizer", "CaseFold", "FilterWikipediaXML", "JiebaMode",
           "JiebaTokenizer", "Lookup", "Ngram", "NormalizeForm", "NormalizeUTF8", "PythonTokenizer", "RegexReplace",
           "RegexTokenizer", "SPieceTokenizerLoadType", "SPieceTokenizerOutType", "SentencePieceTokenizer",
           "SentencePieceVocab", "SlidingWindow", "ToNumber", "ToVectors", "Truncate", "TruncateSequencePair",
           "UnicodeCharTokenizer", "UnicodeScriptTokenizer", "WhitespaceTokenizer", "WordpieceTokenizer", "to_str"]
