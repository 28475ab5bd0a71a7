"""Word vectors: parsing, the memory-mapped cache, ToVectors, and the torch / JAX recipe."""
from __future__ import annotations

import os

import numpy as np
import pytest

from headrace.dataset import text


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HEADRACE_VECTORS_CACHE", str(tmp_path / "cache"))


def _write(path, rows, header=None):
    lines = ([header] if header else []) + [w + " " + " ".join(repr(float(x)) for x in v) for w, v in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_parse_then_reload_from_memory_mapped_cache(tmp_path):
    rng = np.random.default_rng(0)
    mat = rng.normal(size=(45000, 7)).astype(np.float32)  # more than one parsing chunk
    words = [f"w{i}" for i in range(len(mat))]
    path = _write(tmp_path / "vec.txt", zip(words, mat), header=f"{len(mat)} 7")
    first = text.Vectors.from_file(path)
    assert first.tokens == words and first.dim == 7
    np.testing.assert_array_equal(np.asarray(first.vectors), mat)
    again = text.Vectors.from_file(path)
    assert isinstance(again.vectors, np.memmap)
    np.testing.assert_array_equal(np.asarray(again.vectors), mat)
    cached = os.listdir(tmp_path / "cache")
    assert len(cached) == 1 and sorted(os.listdir(tmp_path / "cache" / cached[0])) == ["tokens.txt", "vectors.npy"]
    # another max_vectors is another cache entry; an edited file is parsed again
    assert len(text.Vectors.from_file(path, max_vectors=3)) == 3
    _write(tmp_path / "vec.txt", [("only", [1.0] * 7)])
    os.utime(path, ns=(1, 1))
    assert text.Vectors.from_file(path).tokens == ["only"]
    assert text.Vectors.from_file(path, cache=False).tokens == ["only"]


def test_to_vectors_values(tmp_path):
    v = text.Vectors.from_file(_write(tmp_path / "v.txt", [("a", [1, 2]), ("B", [3, 4]), ("a", [9, 9])]))
    tv = text.ToVectors(v, unk_init=[-1, -1], lower_case_backup=True)
    out = tv(np.array(["a", "b", "B", "zz"]))
    assert out.dtype == np.float32 and out.tolist() == [[1, 2], [-1, -1], [3, 4], [-1, -1]]
    assert tv("a").tolist() == [1, 2] and tv(np.array([["a"]])).shape == (2,)
    v2 = text.Vectors.from_file(_write(tmp_path / "w.txt", [("a", [1, 2])]))
    assert text.ToVectors(v2, lower_case_backup=True)(np.array(["A", "c"])).tolist() == [[1, 2], [0, 0]]
    with pytest.raises(RuntimeError, match="unk_init must be the same length as vectors"):
        text.ToVectors(v, [1.0])("a")
    with pytest.raises(RuntimeError, match="file is empty"):
        text.Vectors.from_file(_write(tmp_path / "e.txt", []))


def test_char_ngram_mean_of_2_to_4_grams(tmp_path):
    rows = [("2gram-#BEGIN#a", [1, 0]), ("2gram-ab", [3, 0]), ("3gram-ab#END#", [5, 3]), ("1gram-a", [100, 100])]
    c = text.CharNGram.from_file(_write(tmp_path / "c.txt", rows))
    assert text.ToVectors(c)(np.array(["ab", "zz"])).tolist() == [[3, 1], [0, 0]]


def test_named_files():
    with pytest.raises(RuntimeError, match=r"can not find file 'glove.6B.\*.txt'"):
        text.GloVe.from_file(__file__)
    with pytest.raises(RuntimeError, match=r"can not find file '\*.vec'"):
        text.FastText.from_file(__file__)


def test_readme_recipe_torch_and_jax(tmp_path):
    torch = pytest.importorskip("torch")
    jnp = pytest.importorskip("jax.numpy")
    glove = text.GloVe.from_file(_write(tmp_path / "glove.6B.2d.txt", [("the", [0.5, 1.5]), ("cat", [2, 3])]))
    vocab = text.Vocab.from_list(["<pad>", "cat", "the", "dog"])
    ids_in_order = vocab.ids_to_tokens(list(range(len(vocab))))
    weights = text.ToVectors(glove)(np.array(ids_in_order))  # row i = vector of the token with id i
    emb = torch.nn.Embedding.from_pretrained(torch.from_numpy(weights), freeze=False, padding_idx=0)
    assert emb(torch.tensor([2, 1])).tolist() == [[0.5, 1.5], [2.0, 3.0]]
    table = jnp.asarray(weights)
    assert table[jnp.array([3])].tolist() == [[0.0, 0.0]]
