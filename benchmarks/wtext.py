"""Text workload: 25,000 generated IMDB-like reviews -> BertTokenizer (lower case) -> Lookup ->
Truncate(128) -> pad to 128 -> batch 32 (int32 [32, 128] id batches).

The reviews are ASCII English-like text made from a fixed word list with a seeded generator
(capitals, punctuation, numbers, ``<br />`` as in IMDB); the vocab is BERT-style: specials,
punctuation, whole words and ``##`` suffix pieces, so some words split and a few are unknown.
"""
from __future__ import annotations

import os

import numpy as np

from .config import Config

N = 25_000
BATCH = 32
MAXLEN = 128
_STEMS = ["movie", "film", "act", "play", "direct", "story", "plot", "charm", "bore", "love", "hate", "watch",
          "scene", "music", "write", "cast", "star", "end", "begin", "laugh", "cry", "thrill", "horror", "comedy",
          "drama", "effect", "dialog", "camera", "light", "dark", "fun", "slow", "fast", "great", "bad", "good",
          "terrible", "awesome", "average", "boring", "brilliant", "actor", "actress", "role", "script", "budget",
          "sequel", "series", "season", "episode", "character", "hero", "villain", "twist", "song", "dance"]
_SUFFIXES = ["", "", "", "s", "ing", "ed", "er", "ly", "ness", "ful"]
_SMALL = ["the", "a", "an", "and", "but", "or", "is", "was", "it", "this", "that", "i", "you", "they", "of", "to",
          "in", "on", "with", "for", "not", "very", "so", "too", "really", "just", "my", "his", "her", "their"]
_PUNCT = [",", ".", "!", "?", "'", "-", "(", ")", ":", ";", "\""]
_RARE = ["zorblax", "quintessentially", "flibbertigibbet", "xylophonic", "snollygoster"]


def text_dir(root: str) -> str:
    return os.path.join(root, "text")


def vocab_words() -> list[str]:
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + _PUNCT + ["br", "<", ">", "/"] + _SMALL + _STEMS
    words += ["##" + s for s in _SUFFIXES if s] + [str(d) for d in range(10)] + ["##" + str(d) for d in range(10)]
    out, seen = [], set()
    for w in words:
        if w not in seen:
            seen.add(w)
            out.append(w)
    return out


def _review(rng: np.random.Generator) -> str:
    parts = []
    for _ in range(int(rng.integers(3, 12))):   # sentences
        words = []
        for _ in range(int(rng.integers(5, 25))):
            r = rng.random()
            if r < 0.45:
                w = _SMALL[int(rng.integers(len(_SMALL)))]
            elif r < 0.93:
                w = _STEMS[int(rng.integers(len(_STEMS)))] + _SUFFIXES[int(rng.integers(len(_SUFFIXES)))]
            elif r < 0.97:
                w = str(int(rng.integers(1, 2000)))
            else:
                w = _RARE[int(rng.integers(len(_RARE)))]
            if rng.random() < 0.08:
                w = w.capitalize()
            words.append(w)
            if rng.random() < 0.06:
                words[-1] += _PUNCT[int(rng.integers(len(_PUNCT)))]
        s = " ".join(words)
        parts.append(s[0].upper() + s[1:] + ("." if rng.random() < 0.8 else "!"))
    sep = " <br /><br />" if rng.random() < 0.3 else " "
    return sep.join(parts)


def generate(root: str, n: int = N) -> tuple[str, str]:
    """Writes text/reviews_<n>.txt (one review a line) and text/vocab.txt unless they exist."""
    d = text_dir(root)
    os.makedirs(d, exist_ok=True)
    reviews, vocab = os.path.join(d, f"reviews_{n}.txt"), os.path.join(d, "vocab.txt")
    if not os.path.exists(vocab):
        with open(vocab + ".tmp", "w", encoding="utf-8") as f:
            f.write("".join(w + "\n" for w in vocab_words()))
        os.replace(vocab + ".tmp", vocab)
    if not os.path.exists(reviews):
        rng = np.random.default_rng(17)
        with open(reviews + ".tmp", "w", encoding="utf-8") as f:
            for _ in range(n):
                f.write(_review(rng) + "\n")
        os.replace(reviews + ".tmp", reviews)
    return reviews, vocab


def check_batch(ids) -> None:
    ids = np.asarray(ids)
    assert ids.shape == (BATCH, MAXLEN) and ids.dtype == np.int32, (ids.shape, ids.dtype)
    assert (ids[:, 0] != 0).all(), "a review starts with padding"


CONFIGS = [
    Config("text", "headrace", "pipeline", compare="pipeline"),
    Config("text", "mindspore", "pipeline", compare="pipeline"),
    Config("text", "hf", "encode_batch", compare="pipeline",
           note="HF tokenizers BertWordPieceTokenizer.encode_batch, 32 a call, RAYON_NUM_THREADS=workers"),
]
