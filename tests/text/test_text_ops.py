"""headrace.dataset.text ops with literal expected values (no oracle needed)."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import headrace.common.dtype as mt
import headrace.dataset as ds
from headrace.dataset import text

pytest.importorskip("regex")
pytest.importorskip("icu")

VOCAB = text.Vocab.from_list(["[UNK]", "[CLS]", "hello", "world", "##s", "play", "##ing", "!", "北", "京"])


def test_ds_text_is_the_module():
    assert ds.text is text
    assert "BertTokenizer" in text.__all__ and len(text.__all__) == 35


def test_whitespace_tokenizer_values_and_offsets():
    out = text.WhitespaceTokenizer()("a b\u00a0c\u3000d\x1ce")
    assert out.tolist() == ["a", "b", "c", "d\x1ce"] and out.dtype == np.dtype("<U3")
    tok, start, limit = text.WhitespaceTokenizer(True)("é  ab")
    assert tok.tolist() == ["é", "ab"]
    assert start.tolist() == [0, 4] and limit.tolist() == [2, 6] and start.dtype == np.uint32
    assert text.WhitespaceTokenizer()("").tolist() == [""]


def test_unicode_tokenizers():
    assert text.UnicodeCharTokenizer()("a😀").tolist() == ["a", "😀"]
    tok, s, e = text.UnicodeScriptTokenizer(True, True)("ab12 北京")
    assert tok.tolist() == ["ab", "12", " ", "北京"]
    assert s.tolist() == [0, 2, 4, 5] and e.tolist() == [2, 4, 5, 11]


def test_case_fold_is_nfkc_casefold():
    assert text.CaseFold()("Straße ＡＢ ① İ ǅ soft\u00adhy").item() == "strasse ab 1 i̇ dž softhy"
    assert text.CaseFold()(np.array([["AB"], ["Cd"]])).tolist() == [["ab"], ["cd"]]
    with pytest.raises(RuntimeError, match="CaseFold: input is not string datatype."):
        text.CaseFold()(np.array([1]))


def test_normalize_forms():
    s = "ＡＢ ﬁ é"
    assert text.NormalizeUTF8()(s).item() == "AB fi é"
    assert text.NormalizeUTF8(text.NormalizeForm.NFD)("é").item() == "e\u0301"
    assert text.NormalizeUTF8(text.NormalizeForm.NONE)(s).item() == s
    with pytest.raises(TypeError, match="should be enum of 'NormalizeForm'"):
        text.NormalizeUTF8("NFC")


def test_regex_ops_use_icu_syntax():
    assert text.RegexReplace(r"(\w+)@(\w+)", r"$2 at \1")("me@x").item() == "x at 1"
    assert text.RegexReplace(r"[\x{4E00}-\x{9FFF}]", "#")("a北b").item() == "a#b"
    # element by element (MindSpore 2.10 writes every result into the first element)
    assert text.RegexReplace("a", "b")(np.array(["aa", "ba", "ca"])).tolist() == ["bb", "bb", "cb"]
    assert text.RegexTokenizer(r"\s+|,", ",")("a, b,c").tolist() == ["a", ",", "b", ",", "c"]
    with pytest.raises(RuntimeError, match="create ICU RegexMatcher failed"):
        text.RegexTokenizer("[")


def test_basic_tokenizer():
    assert text.BasicTokenizer(True)("Héllo, WORLD! 北京x").tolist() == ["hello", ",", "world", "!", "北", "京", "x"]
    tok, s, e = text.BasicTokenizer(keep_whitespace=True, with_offsets=True)("a\x01b")
    assert tok.tolist() == ["a", " ", "b"] and s.tolist() == [0, 1, 2] and e.tolist() == [1, 2, 3]
    # MindSpore 2.10's folding with preserved tokens repeats the text before each of them
    assert text.BasicTokenizer(True)("A [CLS] B").tolist() == ["a", "[CLS]", "a", "[", "cls", "]", "b"]
    assert text.BasicTokenizer()("[CLS]Hi[unused3]").tolist() == ["[CLS]", "Hi", "[unused3]"]
    with pytest.raises(RuntimeError, match="rank: 1"):
        text.BasicTokenizer()(np.array(["a"]))


def test_wordpiece_and_bert():
    wp = text.WordpieceTokenizer(VOCAB, with_offsets=True)
    tok, s, e = wp(np.array(["plays", "xyz"]))
    assert tok.tolist() == ["play", "##s", "[UNK]"] and s.tolist() == [0, 4, 0] and e.tolist() == [4, 5, 3]
    # a word that fails part-way keeps the offsets of its matched pieces, as MindSpore 2.10 does
    tok, s, e = wp(np.array(["playx"]))
    assert tok.tolist() == ["[UNK]"] and s.tolist() == [0, 0] and e.tolist() == [4, 5]
    assert text.WordpieceTokenizer(VOCAB, unknown_token="")(np.array(["xyz"])).tolist() == ["xyz"]
    bert = text.BertTokenizer(VOCAB, lower_case=True)
    assert bert("Hello worlds! playing").tolist() == ["hello", "world", "##s", "!", "play", "##ing"]
    assert bert("北京 Hellos").tolist() == ["北", "京", "hello", "##s"]
    assert text.BertTokenizer(VOCAB)("Hello").tolist() == ["[UNK]"]


@pytest.mark.parametrize("lower", [False, True])
def test_bert_fast_path_equals_own_code(lower):
    pytest.importorskip("tokenizers")
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    bert = text.BertTokenizer(VOCAB, lower_case=lower, max_bytes_per_token=8)
    alphabet = st.sampled_from(list("helowrdsplayingHELOW !?,.'-_$[]\t\n\r\x0b\x0c0123456789"))

    @hypothesis.settings(max_examples=300, deadline=None)
    @hypothesis.given(st.text(alphabet, max_size=40))
    def check(s):
        if bert._hf_eligible(s):
            np.testing.assert_array_equal(bert(s), bert.tokenize_slow(s))
    check()


def test_vocab_and_lookup():
    v = text.Vocab.from_list(["a", "b"], ["<pad>"], special_first=False)
    assert v.vocab() == {"a": 0, "b": 1, "<pad>": 2}
    assert v.tokens_to_ids(["b", "zz"]) == [1, -1] and v.ids_to_tokens([2, 7]) == ["<pad>", ""]
    lk = text.Lookup(v, "<pad>", mt.int64)
    out = lk(np.array([["a", "q"]]))
    assert out.tolist() == [[0, 2]] and out.dtype == np.int64
    with pytest.raises(RuntimeError, match='token: "q" doesn\'t exist in vocab'):
        text.Lookup(v)(np.array(["q"]))
    v2 = pickle.loads(pickle.dumps(v))
    assert v2.vocab() == v.vocab() and v2.ids_to_tokens(1) == "b"


def test_vocab_from_file_and_dataset(tmp_path):
    f = tmp_path / "v.txt"
    f.write_text("x,1\ny,2\nz,3\n", encoding="utf-8")
    assert text.Vocab.from_file(str(f), ",", 2, ["<s>"]).vocab() == {"<s>": 0, "x": 1, "y": 2}
    d = ds.NumpySlicesDataset({"t": ["b a c a", "c c a d"]}, shuffle=False).map(text.WhitespaceTokenizer())
    assert text.Vocab.from_dataset(d, "t", top_k=3).vocab() == {"a": 0, "c": 1, "b": 2}


def test_sequence_ops():
    assert text.Ngram([2, 3], ("<", 1), (">", 1))(np.array(["a", "b"])).tolist() == ["< a", "a b", "b >", "< a b",
                                                                                       "a b >"]
    assert text.SlidingWindow(2)(np.array([1, 2, 3])).tolist() == [[1, 2], [2, 3]]
    assert text.ToNumber(mt.int16)(np.array(["7", " -3x"])).tolist() == [7, -3]
    with pytest.raises(RuntimeError, match="out of bounds if cast to int8"):
        text.ToNumber(mt.int8)(np.array(["128"]))
    assert text.Truncate(2)(np.array([["abc", "d", "e"]])).dtype == np.dtype("<U3")
    a, b = text.TruncateSequencePair(3)(np.array([1, 2, 3]), np.array([4, 5]))
    assert a.tolist() == [1, 2] and b.tolist() == [4]
    assert text.AddToken("<s>")(np.array([["a"], ["b"]])).tolist() == [["<s>", "a"], ["<s>", "b"]]


def test_filter_wikipedia_xml():
    f = text.FilterWikipediaXML()
    assert f("<b>Hi</b> [[Link|Text]] 42 &amp; Ü").item() == "link text four two"
    assert f("#REDIRECT [[x]]").item() == ""
    assert f("Rock").item() == "ock"  # MindSpore 2.10 drops upper-case R


def test_python_tokenizer_and_bytes():
    assert text.PythonTokenizer(str.split)(np.array("a b")).tolist() == ["a", "b"]
    with pytest.raises(TypeError, match="input should be a NumPy array"):
        text.PythonTokenizer(str.split)("a b")
    assert text.to_str(np.array([b"\xc3\xa9"])).tolist() == ["é"]
    assert text.to_bytes(np.array(["é"])).tolist() == [b"\xc3\xa9"]


def test_ops_in_map_with_offsets_columns():
    d = ds.NumpySlicesDataset({"t": ["Hello worlds", "北京"]}, shuffle=False)
    d = d.map(text.BertTokenizer(VOCAB, lower_case=True, with_offsets=True), "t", ["tok", "s", "e"])
    rows = list(d.create_dict_iterator(output_numpy=True))
    assert [r["tok"].tolist() for r in rows] == [["hello", "world", "##s"], ["北", "京"]]
    assert rows[0]["s"].tolist() == [0, 6, 11] and rows[1]["e"].tolist() == [3, 6]
    d = ds.NumpySlicesDataset({"t": ["hello play", "world"]}, shuffle=False)
    d = d.map([text.WhitespaceTokenizer(), text.Lookup(VOCAB, "[UNK]"), text.Truncate(1)], "t")
    assert [r["t"].tolist() for r in d.create_dict_iterator(output_numpy=True)] == [[2], [3]]


def test_ops_pickle():
    bert = text.BertTokenizer(VOCAB, lower_case=True)
    bert("warm the fast path")
    again = pickle.loads(pickle.dumps(bert))
    assert again("Hello!").tolist() == ["hello", "!"]


def test_bert_lookup_fusion_equals_the_two_ops():
    from headrace.dataset.text._fusion import BertLookup
    from headrace.dataset.transforms import fuse_ops
    from tests.text.compat_harness import CORPUS, VOCAB as WORDS
    vocab = text.Vocab.from_list(WORDS)
    bert, lookup = text.BertTokenizer(vocab, lower_case=True), text.Lookup(vocab, "[UNK]", mt.int64)
    fused = fuse_ops([bert, lookup])
    assert len(fused) == 1 and isinstance(fused[0], BertLookup)
    assert len(fuse_ops([bert, text.Lookup(vocab)])) == 2  # other unknown token: not fused
    assert len(fuse_ops([bert, text.Lookup(text.Vocab.from_list(WORDS), "[UNK]")])) == 2  # other vocab
    for s in CORPUS + ["plain ascii words, hello!", "hello [CLS] world"]:
        want = lookup(bert(s))
        got = fused[0](s)
        assert got.dtype == want.dtype and got.tolist() == want.tolist(), s


def test_inputs_mindspore_refuses():
    with pytest.raises(RuntimeError, match="string"):
        text.WhitespaceTokenizer()(b"a b")
    with pytest.raises(RuntimeError, match="string"):
        text.CaseFold()(b"A")
    with pytest.raises(TypeError, match="Invalid user input. Got <class 'dict'>"):
        text.BertTokenizer(VOCAB)({"a": 1})
    with pytest.raises(RuntimeError, match="The op is OneToOne, can only accept one tensor as input."):
        text.ToNumber(mt.int8)(np.array(["1"]), np.array(["2"]))
    assert VOCAB.tokens_to_ids(np.array("hello")) == 2 and VOCAB.ids_to_tokens(np.array(3)) == "world"
    with pytest.raises(TypeError):
        VOCAB.tokens_to_ids([1, "hello"])
    # a word over max_bytes_per_token: MindSpore's limit offset is max_bytes_per_token + 1
    _, s, e = text.WordpieceTokenizer(VOCAB, max_bytes_per_token=4, with_offsets=True)(np.array(["favorite"]))
    assert s.tolist() == [0] and e.tolist() == [5]
