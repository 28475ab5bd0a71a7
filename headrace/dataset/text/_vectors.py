"""Pre-trained word vectors (Vectors, GloVe, FastText, CharNGram) and the ToVectors op.

A vectors text file (``token v1 v2 ...`` a line, an optional ``count dim`` first line) is parsed
once, in chunks with NumPy's C parser, and cached as a ``.npy`` matrix plus a token list under
``$HEADRACE_VECTORS_CACHE`` (default ``~/.cache/headrace/vectors``), keyed by the file's path, size,
modification time and ``max_vectors``. Later ``from_file`` calls memory-map the matrix, so a
GloVe-sized table reloads in a fraction of a second. ``vectors.vectors`` is a float32 array
(rows in file order) ready for ``torch.from_numpy`` or ``jax.numpy.asarray``.
"""
from __future__ import annotations

import hashlib
import os
import re
import tempfile
import warnings
from itertools import repeat
from typing import Any

import numpy as np

from headrace._util.checks import check_type
from headrace.dataset.text._common import TextOperation, decode_item, nonempty

__all__ = ["CharNGram", "FastText", "GloVe", "ToVectors", "Vectors"]

INT32_MAX = 2**31 - 1
_CHUNK = 20000
_FLOAT_PREFIX = re.compile(r"\s*([+-]?(?:0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*(?:[pP][+-]?\d+)?|inf(?:inity)?|nan"
                           r"|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))", re.I)


def _strtof(s: str) -> float:
    """C ``strtof``: the longest numeric prefix (decimal, hex, inf, nan), 0 when there is none."""
    m = _FLOAT_PREFIX.match(s)
    if not m:
        return 0.0
    t = m.group(1)
    try:
        return float.fromhex(t) if "x" in t.lower() and "n" not in t.lower()[:3] else float(t)
    except (ValueError, OverflowError):
        return float("inf") if not t.startswith("-") else float("-inf")


def _parse_rows(rests: list[str], dim: int) -> np.ndarray:
    """The float32 rows of ``rests`` (the numbers of each line, ``dim`` of them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            flat = np.fromstring(" ".join(rests), dtype=np.float64, sep=" ")
        except ValueError:
            flat = np.zeros(0)
    if flat.size == len(rests) * dim:
        with np.errstate(over="ignore"):
            return flat.astype(np.float32).reshape(len(rests), dim)
    rows = [[_strtof(v) for v in r.split(" ")] for r in rests]
    with np.errstate(over="ignore"):
        return np.array(rows, dtype=np.float64).astype(np.float32).reshape(len(rests), dim)


def _parse_file(path: str, max_vectors: int | None, name: str) -> tuple[list[str], np.ndarray]:
    tokens: list[str] = []
    blocks: list[np.ndarray] = []
    rests: list[str] = []
    dim = None
    limit = max_vectors or None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if limit is not None and len(tokens) >= limit:
                break
            line = line.rstrip("\r\n").rstrip(" ")
            token, _, rest = line.partition(" ")
            count = rest.count(" ") + 1 if rest else 0
            if count <= 1:
                if dim is None:
                    continue  # a "count dim" header line
                raise RuntimeError(f"{name}: token with 1-dimensional vector.")
            if dim is None:
                dim = count
            elif count != dim:
                raise RuntimeError(f"{name}: all vectors must have the same number of dimensions, but got dim "
                                   f"{count} while expecting {dim}")
            tokens.append(token)
            rests.append(rest)
            if len(rests) == _CHUNK:
                blocks.append(_parse_rows(rests, dim))
                rests = []
    if dim is None:
        raise RuntimeError(f"{name}: invalid file, file is empty.")
    if rests:
        blocks.append(_parse_rows(rests, dim))
    return tokens, np.concatenate(blocks) if len(blocks) > 1 else blocks[0]


def _cache_dir() -> str:
    return os.environ.get("HEADRACE_VECTORS_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "headrace",
                                                                    "vectors")


def _cache_key(path: str, max_vectors: int | None) -> str:
    st = os.stat(path)
    ident = f"{os.path.realpath(path)}|{st.st_size}|{st.st_mtime_ns}|{max_vectors or 0}|v1"
    return hashlib.sha1(ident.encode("utf-8")).hexdigest()


def _load_cached(folder: str) -> tuple[list[str], np.ndarray] | None:
    mat, toks = os.path.join(folder, "vectors.npy"), os.path.join(folder, "tokens.txt")
    if not (os.path.isfile(mat) and os.path.isfile(toks)):
        return None
    try:
        vectors = np.load(mat, mmap_mode="r")
        with open(toks, encoding="utf-8", newline="\n") as f:
            tokens = f.read().split("\n")[:-1]
    except (OSError, ValueError):
        return None
    return (tokens, vectors) if len(tokens) == vectors.shape[0] else None


def _store(folder: str, tokens: list[str], vectors: np.ndarray) -> None:
    """Writes the cache atomically (a temporary folder renamed into place); failures are ignored."""
    try:
        parent = os.path.dirname(folder)
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".tmp-", dir=parent)
        np.save(os.path.join(tmp, "vectors.npy"), vectors)
        with open(os.path.join(tmp, "tokens.txt"), "w", encoding="utf-8", newline="\n") as f:
            f.write("".join(t + "\n" for t in tokens))
        try:
            os.rename(tmp, folder)
        except OSError:  # another process cached it first
            for n in os.listdir(tmp):
                os.unlink(os.path.join(tmp, n))
            os.rmdir(tmp)
    except OSError:
        pass


class Vectors:
    """Pre-trained vectors from a text file: ``tokens`` (file order), ``vectors`` (float32, one row a
    token) and ``dim``. Build with :meth:`from_file`.

    Examples:
        >>> v = Vectors.from_file("vectors.txt")  # doctest: +SKIP
        >>> v.vectors.shape, v.tokens[:2]  # doctest: +SKIP
        ((6, 6), ['ok', '!'])
    """

    _file_rule: tuple[str, str] | None = None

    def __init__(self, tokens: list[str], vectors: np.ndarray) -> None:
        self.tokens = tokens
        self.vectors = vectors
        self.dim = int(vectors.shape[1])
        self.stoi: dict[str, int] = {}
        for i, t in enumerate(tokens):
            self.stoi.setdefault(t, i)

    def __len__(self) -> int:
        return len(self.tokens)

    @classmethod
    def from_file(cls, file_path: str, max_vectors: int | None = None, *, cache: bool = True) -> "Vectors":
        """Loads a vectors file (the first `max_vectors` vectors; None or 0 for all), from the
        memory-mapped cache when this file was parsed before (``cache=False`` parses again)."""
        name = cls.__name__
        check_type(file_path, str, "file_path")
        if max_vectors is not None:
            check_type(max_vectors, int, "max_vectors")
            if not 0 <= max_vectors <= INT32_MAX:
                raise ValueError(f"Input max_vectors is not within the required interval of [0, {INT32_MAX}].")
        cls._check_name(file_path)
        if not os.path.isfile(file_path):
            detail = "invalid file, " if cls._file_rule is not None else ""
            raise RuntimeError(f"{name}: {detail}get real path failed, path: {file_path}")
        folder = os.path.join(_cache_dir(), _cache_key(file_path, max_vectors)) if cache else None
        loaded = _load_cached(folder) if folder else None
        if loaded is None:
            loaded = _parse_file(file_path, max_vectors, name)
            if folder:
                _store(folder, *loaded)
                loaded = _load_cached(folder) or loaded
        return cls(*loaded)

    @classmethod
    def _check_name(cls, path: str) -> None:
        if cls._file_rule is not None:
            pattern, shown = cls._file_rule
            if not re.fullmatch(pattern, os.path.basename(path)):
                raise RuntimeError(f"{cls.__name__}: invalid file, can not find file '{shown}', but got: {path}")

    def __getstate__(self) -> dict:
        return {"tokens": self.tokens, "vectors": np.asarray(self.vectors)}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["tokens"], state["vectors"])

    def lookup_rows(self, tokens: list[str], lower_case_backup: bool) -> np.ndarray:
        """Row of each token (-1 when missing; ASCII-lowered retry with `lower_case_backup`)."""
        rows = np.array(list(map(self.stoi.get, tokens, repeat(-1))), dtype=np.intp)
        if lower_case_backup:
            get = self.stoi.get
            for i in np.flatnonzero(rows < 0).tolist():
                rows[i] = get(_ascii_lower(tokens[i]), -1)
        return rows

    def lookup(self, tokens: list[str], unk: np.ndarray, lower_case_backup: bool) -> np.ndarray:
        """The (len(tokens), dim) float32 vectors of `tokens` (`unk` for unknown ones)."""
        rows = self.lookup_rows(tokens, lower_case_backup)
        missing = rows < 0
        some_missing = bool(missing.any())
        if some_missing and len(self.tokens) == 0:
            return np.tile(unk, (len(tokens), 1))
        if some_missing:
            rows[missing] = 0
        out = np.asarray(self.vectors)[rows]
        if some_missing:
            out[missing] = unk
        return out


_ASCII_LOWER = {c: c + 32 for c in range(65, 91)}


def _ascii_lower(s: str) -> str:
    return s.translate(_ASCII_LOWER)


class GloVe(Vectors):
    """GloVe vectors; the file must be named ``glove.6B.*.txt``."""

    _file_rule = (r"glove\.6B\..*\.txt", "glove.6B.*.txt")


class FastText(Vectors):
    """fastText vectors; the file must be a ``*.vec`` file."""

    _file_rule = (r".*\.vec", "*.vec")


class CharNGram(Vectors):
    """Character n-gram vectors (``2gram-th`` ... keys); a word's vector is the mean of the vectors of
    its 2-, 3- and 4-grams, with ``#BEGIN#`` / ``#END#`` marking the word's ends."""

    def lookup(self, tokens: list[str], unk: np.ndarray, lower_case_backup: bool) -> np.ndarray:
        out = np.empty((len(tokens), self.dim), np.float32)
        table = np.asarray(self.vectors)
        for i, t in enumerate(tokens):
            vec = self._word(t, table)
            if vec is None and lower_case_backup:
                vec = self._word(_ascii_lower(t), table)
            out[i] = unk if vec is None else vec
        return out

    def _word(self, word: str, table: np.ndarray) -> np.ndarray | None:
        chars = ["#BEGIN#"] + list(word) + ["#END#"]
        get = self.stoi.get
        rows = []
        for n in (2, 3, 4):
            for i in range(len(chars) - n + 1):
                r = get(f"{n}gram-{''.join(chars[i:i + n])}")
                if r is not None:
                    rows.append(r)
        if not rows:
            return None
        acc = np.zeros(self.dim, np.float32)
        for r in rows:  # float32, in n-gram order: MindSpore's rounding
            acc += table[r]
        return acc / np.float32(len(rows))


class ToVectors(TextOperation):
    """Replaces tokens by their vectors: a string (or one-element array) gives a (dim,) float32
    vector, an array of n strings an (n, dim) matrix.

    Args:
        vectors (Vectors): the table (Vectors, GloVe, FastText or CharNGram).
        unk_init (Sequence[float], optional): the vector of unknown tokens. Default: zeros.
        lower_case_backup (bool): look an unknown token up again in ASCII lower case. Default: False.

    Examples:
        >>> ToVectors(Vectors(["a"], np.ones((1, 2), np.float32)))(np.array(["a", "b"])).tolist()
        [[1.0, 1.0], [0.0, 0.0]]
    """

    def __init__(self, vectors: Vectors, unk_init: Any = None, lower_case_backup: bool = False) -> None:
        check_type(vectors, Vectors, "vectors")
        if unk_init is not None:
            check_type(unk_init, (list, tuple), "unk_init")
            for i, v in enumerate(unk_init):
                check_type(v, (int, float), f"unk_init[{i}]")
        check_type(lower_case_backup, bool, "lower_case_backup")
        self.vectors, self.unk_init, self.lower_case_backup = vectors, unk_init, lower_case_backup
        self._unk = (np.zeros(vectors.dim, np.float32) if not unk_init
                     else np.array(unk_init, dtype=np.float32))

    def __call__(self, *args: Any) -> np.ndarray:
        if len(args) != 1:
            raise RuntimeError(f"Input should be one column data, but got {len(args)} columns.")
        value = args[0]
        a = np.array(value) if isinstance(value, str) else np.asarray(value)
        if a.dtype.kind not in "US":
            raise RuntimeError("ToVectors: input tensor type should be string.")
        nonempty(a)
        if self._unk.shape[0] != self.vectors.dim:
            raise RuntimeError(f"ToVectors: unk_init must be the same length as vectors, but got unk_init: "
                               f"{self._unk.shape[0]} and vectors: {self.vectors.dim}")
        tokens = a.reshape(-1).tolist()
        if a.dtype.kind == "S":
            tokens = [decode_item(t) for t in tokens]
        out = self.vectors.lookup(tokens, self._unk, self.lower_case_backup)
        return out[0] if out.shape[0] == 1 else out
