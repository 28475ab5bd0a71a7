"""The fused text chain [BertTokenizer, Lookup, Truncate, PadEnd] (``text/_fusion.py``, issue 42):
one op whose output equals the four ops run one after the other (ids, dtype, shape), on the ASCII
word-cache path and on the paths it hands back to the ops; in a map with threads and processes;
and against MindSpore 2.10's own chain."""
from __future__ import annotations

import pickle
import random
import string

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import headrace.common.dtype as mt
import headrace.dataset as ds
from headrace.dataset import text, transforms
from headrace.dataset.text import _wordpiece
from headrace.dataset.text._fusion import BertLookup
from headrace.dataset.transforms import fuse_ops

WORDS = ["[PAD]", "[UNK]", "[CLS]", "the", "movie", "play", "##ing", "##s", "##ed", "un", "##aff", "##able", "a",
         "##b", "##c", "b", "c", "1", "##2", "12", ",", ".", "!", "'", "-", "(", ")", "[", "]", "_", "$", "x", "##x",
         "good", "bad", "br", "<", ">", "/", "Movie", "The", "A"]


def _unfused(ops, s):
    out = s
    for op in ops:
        out = op(out)
    return out


def _same(got, want):
    assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == want.shape, (got, want)
    assert got.tolist() == want.tolist()


def _chain(vocab, lower=True, keep=128, length=128, pad_value=0, dtype=mt.int32, unk="[UNK]", **bert):
    return [text.BertTokenizer(vocab, lower_case=lower, unknown_token=unk, **bert), text.Lookup(vocab, unk, dtype),
            text.Truncate(keep), transforms.PadEnd([length], pad_value)]


def test_the_four_ops_fuse_into_one_op_that_keeps_them():
    vocab = text.Vocab.from_list(WORDS)
    ops = _chain(vocab, keep=5, length=8, pad_value=-1)
    fused = fuse_ops(ops)
    assert len(fused) == 1 and type(fused[0]) is BertLookup
    assert fused[0].source_ops == tuple(ops)
    assert fused[0]("The movie, playing!").tolist() == [3, 4, 20, 5, 6, -1, -1, -1]
    assert fused[0]("a b c the movie the movie").tolist() == [12, 15, 16, 3, 4, -1, -1, -1]
    # a PadEnd shorter than the Truncate crops
    short = fuse_ops(_chain(vocab, keep=5, length=3))[0]
    assert short("a b c the movie").tolist() == [12, 15, 16]


def test_what_does_not_fuse_stays_as_it_was():
    vocab = text.Vocab.from_list(WORDS)
    bert, lookup = text.BertTokenizer(vocab), text.Lookup(vocab, "[UNK]")
    pad, trunc = transforms.PadEnd([4], 0), text.Truncate(3)
    # PadEnd before Truncate: the PadEnd joins, the Truncate after it does not
    assert [type(o) for o in fuse_ops([bert, lookup, pad, trunc])] == [BertLookup, text.Truncate]
    # a text fill value, a two-dimensional pad shape: PadEnd raises, so it stays an op of its own
    assert [type(o) for o in fuse_ops([bert, lookup, transforms.PadEnd([4], "x")])] == [BertLookup, transforms.PadEnd]
    assert [type(o) for o in fuse_ops([bert, lookup, transforms.PadEnd([4, 2])])] == [BertLookup, transforms.PadEnd]
    # a second Truncate stays
    assert [type(o) for o in fuse_ops([bert, lookup, trunc, text.Truncate(2)])] == [BertLookup, text.Truncate]
    # no Lookup in between: nothing fuses
    assert [type(o) for o in fuse_ops([bert, trunc, pad])] == [text.BertTokenizer, text.Truncate, transforms.PadEnd]


def test_fill_values_cast_as_padend_casts_them():
    vocab = text.Vocab.from_list(WORDS)
    for dtype, value in [(mt.int32, 2.7), (mt.uint8, -1), (mt.float32, 0.5), (mt.bool_, 0), (mt.int64, True),
                         (mt.int32, None)]:
        ops = _chain(vocab, keep=3, length=6, pad_value=value, dtype=dtype)
        fused = fuse_ops(ops)
        assert len(fused) == 1
        for s in ["the movie", "", "the movie a b c", "zzz", "naïve the", "[CLS] the"]:
            _same(fused[0](s), _unfused(ops, s))


def test_pad_shape_none_keeps_the_truncated_length():
    vocab = text.Vocab.from_list(WORDS)
    ops = _chain(vocab, keep=3, length=None)
    fused = fuse_ops(ops)[0]
    for s in ["the", "the movie playing", "", "a b c the"]:
        _same(fused(s), _unfused(ops, s))
    assert fused("a b c the").tolist() == [12, 15, 16]


def test_ids_beyond_the_dtype_raise_as_the_lookup_does():
    # ids 0..299 do not fit int8: the Lookup raises even for ids a Truncate would cut off
    words = ["[UNK]"] + [f"w{i}" for i in range(299)]
    vocab = text.Vocab.from_list(words)
    ops = _chain(vocab, keep=1, length=2, dtype=mt.int8)
    fused = fuse_ops(ops)[0]
    _same(fused("w1 w2"), _unfused(ops, "w1 w2"))
    with pytest.raises(OverflowError):
        _unfused(ops, "w1 w298")
    with pytest.raises(OverflowError):
        fused("w1 w298")


def test_every_scalar_string_form_gives_the_unfused_result():
    ops = _chain(text.Vocab.from_list(WORDS), keep=4, length=6)
    fused = fuse_ops(ops)[0]
    for value in ["The movie, a", np.array("The movie, a"), np.str_("The movie, a"), np.array(b"The movie, a"),
                  np.array("na\u00efve the"), np.array("")]:
        _same(fused(value), _unfused(ops, value))
    assert fused(np.array("The movie, a")).tolist() == [3, 4, 20, 12, 0, 0]


def test_errors_are_the_tokenizers():
    fused = fuse_ops(_chain(text.Vocab.from_list(WORDS)))[0]
    with pytest.raises(RuntimeError, match="BasicTokenizer: the input should be string type."):
        fused(b"the")
    with pytest.raises(RuntimeError, match="BertTokenizer: input should be one column data."):
        fused("a", "b")
    with pytest.raises(RuntimeError, match="the input should be a scalar, but got a tensor with rank: 1"):
        fused(np.array(["a", "b"]))
    # a vocab without the unknown token: the Lookup's error
    no_unk = text.Vocab.from_list(["the"])
    fused = fuse_ops(_chain(no_unk))[0]
    with pytest.raises(RuntimeError, match='Lookup: "\\[UNK\\]" doesn\'t exist in vocab.'):
        fused("the zz")


def test_word_cache_is_bounded_and_not_pickled(monkeypatch):
    vocab = text.Vocab.from_list(WORDS)
    bert = text.BertTokenizer(vocab, lower_case=True)
    monkeypatch.setattr(_wordpiece, "WORD_CACHE", 3)
    assert bert.ascii_ids("The movie playing unaffable.") == [3, 4, 5, 6, 9, 10, 11, 21]
    assert dict(bert._part_ids) == {"unaffable.": (9, 10, 11, 21)}  # full at the fourth part: started again
    assert bert.ascii_ids("The movie playing unaffable.") == [3, 4, 5, 6, 9, 10, 11, 21]
    assert bert.ascii_ids("(the)movie,,a-b") == [25, 3, 26, 4, 20, 20, 12, 24, 15]
    assert len(bert._part_ids) == 3
    long_part = "the," * 20  # 80 characters: computed, not kept
    assert bert.ascii_ids(long_part) == [3, 20] * 20 and long_part not in bert._part_ids
    copy = pickle.loads(pickle.dumps(bert))
    assert len(copy._part_ids) == 0 and copy.ascii_ids("the movie") == [3, 4]
    # texts the path leaves to the ops
    assert bert.ascii_ids("naïve") is None and bert.ascii_ids("a\x01b") is None and bert.ascii_ids("[CLS]") is None
    assert bert.ascii_ids("") == [] and bert.ascii_ids(" \t\r\n") == []
    assert text.BertTokenizer(vocab, with_offsets=True).ascii_ids("the") is None
    assert text.BertTokenizer(vocab, preserve_unused_token=False).ascii_ids("[the]") == [27, 3, 28]


_ASCII = st.text(alphabet=st.sampled_from(list(string.ascii_letters[:8] + "tThe" + string.digits[:3] + " \t\n\r\x0b\x0c"
                                                 + ".,!'-[]()_$#" + "\x01\x7fé")), max_size=60)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(_ASCII, min_size=1, max_size=6),
       vocab_words=st.lists(st.text(alphabet="abcdeTh12#.,!'-", min_size=1, max_size=4), max_size=25, unique=True),
       lower=st.booleans(), preserve=st.booleans(), max_bytes=st.integers(1, 8),
       keep=st.integers(1, 12), length=st.one_of(st.none(), st.integers(1, 12)), pad_value=st.integers(-3, 3),
       suffix=st.sampled_from(["##", "#", ""]), unk=st.sampled_from(["[UNK]", "a"]),
       form=st.sampled_from(list(text.NormalizeForm)))
def test_fused_equals_the_ops_and_mindspores_algorithm(texts, vocab_words, lower, preserve, max_bytes, keep,
                                                       length, pad_value, suffix, unk, form):
    words = [unk] + [w for w in vocab_words if w != unk]
    vocab = text.Vocab.from_list(words)
    ops = _chain(vocab, lower=lower, keep=keep, length=length, pad_value=pad_value, max_bytes_per_token=max_bytes,
                 preserve_unused_token=preserve, suffix_indicator=suffix, normalization_form=form, unk=unk)
    fused = fuse_ops(ops)
    assert len(fused) == 1
    bert, lookup = ops[0], ops[1]
    for s in texts:
        want = _unfused(ops, s)
        _same(fused[0](s), want)
        ids = bert.ascii_ids(s)
        if ids is not None:  # the word-cache path: MindSpore's algorithm (this module's Python code)
            slow = bert.tokenize_slow(s).tolist()  # [""] for no token
            assert ids == ([] if slow == [""] else lookup(np.array(slow)).tolist())


def _reviews(n, seed=5):
    """ASCII review-like texts with the benchmark's features, and some that leave the ASCII path."""
    rng = random.Random(seed)
    pool = ["the", "The", "movie", "movies", "playing", "played", "unaffable", "good", "bad", "12", "1999", "x",
            "xx", "zorblax", "a", "b", "c", "abc", "(", ")", ",", ".", "!", "'", "-", "<br />", "_", "$", "#"]
    out = []
    for i in range(n):
        words = [rng.choice(pool) for _ in range(rng.randint(0, 40))]
        s = " ".join(words)
        if i % 7 == 3:
            s += " naïve"
        if i % 11 == 5:
            s = "[CLS] " + s
        if i % 13 == 6:
            s = s.replace(" ", "\t", 2)
        out.append(s)
    return out + ["", "   ", "Movie!!!", "x" * 120]


@pytest.mark.parametrize("workers,multiprocessing", [(1, False), (2, False), (2, True)])
def test_in_a_map_every_mode_gives_the_unfused_rows(workers, multiprocessing):
    vocab = text.Vocab.from_list(WORDS)
    reviews = _reviews(60)
    want = [_unfused(_chain(vocab, keep=10, length=12), s) for s in reviews]
    data = ds.NumpySlicesDataset({"text": reviews}, shuffle=False)
    data = data.map(_chain(vocab, keep=10, length=12), input_columns=["text"], num_parallel_workers=workers,
                    python_multiprocessing=multiprocessing).batch(8, drop_remainder=False)
    got = [b[0] for b in data.create_tuple_iterator(output_numpy=True, num_epochs=1)]
    assert [g.shape for g in got] == [(8, 12)] * 8
    assert all(g.dtype == np.int32 for g in got)
    assert np.concatenate(got).tolist() == [w.tolist() for w in want]


_MS_CHAIN = """
import mindspore.dataset as ds, mindspore.dataset.text as text, mindspore.dataset.transforms as transforms
import mindspore.common.dtype as mt
vocab = text.Vocab.from_list(INPUTS['words'])
RESULT = []
for lower, keep, length, value, dtype in INPUTS['configs']:
    ops = [text.BertTokenizer(vocab, lower_case=lower), text.Lookup(vocab, '[UNK]', getattr(mt, dtype)),
           text.Truncate(keep), transforms.PadEnd([length], value)]
    data = ds.NumpySlicesDataset({'text': INPUTS['texts']}, shuffle=False).map(ops, input_columns=['text'])
    RESULT.append([r[0] for r in data.create_tuple_iterator(output_numpy=True, num_epochs=1)])
"""


@pytest.mark.compat
def test_the_fused_chain_equals_mindspores_chain():
    from tests.oracles.oracle import oracle_python, run_ms
    if oracle_python() is None:
        pytest.skip("MindSpore oracle not set up (scripts/oracle_env.sh)")
    texts = _reviews(80, seed=9) + ["Hello, World! I'm here.", "x1.5 12:30 1,000 a-b 'q' \"r\" (s)", "a_b $5+3=8",
                                     "the\x0bmovie\x0cplay\rplaying\tb\nc", "a\x1cb the", "the\x7fmovie", "~`^{|}@"]
    configs = [(True, 16, 20, 0, "int32"), (False, 6, 4, -1, "int64"), (True, 128, 128, 0, "int32")]
    expected = run_ms(_MS_CHAIN, {"words": WORDS, "texts": texts, "configs": configs})
    vocab = text.Vocab.from_list(WORDS)
    for (lower, keep, length, value, dtype), want in zip(configs, expected):
        ops = _chain(vocab, lower=lower, keep=keep, length=length, pad_value=value, dtype=getattr(mt, dtype))
        data = ds.NumpySlicesDataset({"text": texts}, shuffle=False).map(ops, input_columns=["text"])
        got = [r[0] for r in data.create_tuple_iterator(output_numpy=True, num_epochs=1)]
        assert len(got) == len(want) == len(texts)
        for g, w, s in zip(got, want, texts):
            assert g.dtype == w.dtype and g.shape == w.shape and g.tolist() == w.tolist(), s
