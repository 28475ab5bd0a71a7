"""Shared pieces of the text ops: enums, string input/output helpers, optional-library loading.

Strings travel as NumPy unicode arrays (``<U``), the way MindSpore returns them. Offsets
(``with_offsets=True``) are UTF-8 byte positions in the string the op tokenised, as ``uint32``.
"""
from __future__ import annotations

import enum
import importlib
from typing import Any, Iterable, Sequence

import numpy as np

from headrace.dataset.transforms._base import TensorOperation

__all__ = ["JiebaMode", "NormalizeForm", "SPieceTokenizerLoadType", "SPieceTokenizerOutType",
           "SentencePieceModel", "TextOperation", "optional", "str_array", "to_bytes", "to_str"]

EXTRA_HINT = "pip install headrace[text]"


class JiebaMode(enum.IntEnum):
    """Segmentation algorithm of :class:`JiebaTokenizer`."""

    MIX = 0
    MP = 1
    HMM = 2


class NormalizeForm(enum.IntEnum):
    """Unicode normalisation form of :class:`NormalizeUTF8` (``NONE`` leaves the text as it is)."""

    NONE = 0
    NFC = 1
    NFKC = 2
    NFD = 3
    NFKD = 4


class SentencePieceModel(enum.IntEnum):
    """Model type trained by :meth:`SentencePieceVocab.from_dataset` / ``from_file``."""

    UNIGRAM = 0
    BPE = 1
    CHAR = 2
    WORD = 3


class SPieceTokenizerLoadType(enum.IntEnum):
    """Whether :class:`SentencePieceTokenizer` gets a model file path or a SentencePieceVocab."""

    FILE = 0
    MODEL = 1


class SPieceTokenizerOutType(enum.IntEnum):
    """Output of :class:`SentencePieceTokenizer`: piece strings or piece ids."""

    STRING = 0
    INT = 1


def optional(module: str, what: str) -> Any:
    """Imports an optional library, or raises ImportError naming the ``headrace[text]`` extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{what} needs the '{module}' package, which is not installed: "
                          f"{EXTRA_HINT}") from exc


def str_array(items: Sequence[str]) -> np.ndarray:
    """A 1-D ``<U`` array of ``items``; ``['']`` when there are none (MindSpore's empty token list)."""
    if not items:
        return np.array([""])
    return np.array(items, dtype=str)


def compact(a: np.ndarray) -> np.ndarray:
    """A unicode array with the narrowest itemsize that holds its strings (MindSpore's string tensors
    come back that way); other arrays pass unchanged."""
    if a.dtype.kind != "U" or a.size == 0:
        return a
    width = max(1, int(np.char.str_len(a).max()))
    return a if a.dtype.itemsize == 4 * width else a.astype(f"<U{width}")


def byte_offsets(text: str, spans: Iterable[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 byte (start, limit) arrays for character spans of ``text``."""
    spans = list(spans)
    if not spans:
        return np.zeros(1, np.uint32), np.zeros(1, np.uint32)
    if text.isascii():
        arr = np.array(spans, dtype=np.uint32)
    else:
        cum = np.zeros(len(text) + 1, np.int64)
        cum[1:] = np.cumsum([len(c.encode("utf-8")) for c in text])
        arr = cum[np.array(spans, dtype=np.int64)].astype(np.uint32)
    return np.ascontiguousarray(arr[:, 0]), np.ascontiguousarray(arr[:, 1])


def as_input(value: Any) -> np.ndarray:
    """``value`` as an array, or TypeError in MindSpore's words when it cannot be a tensor."""
    if isinstance(value, np.ndarray):
        return value
    a = np.asarray(value)
    if a.dtype == object:
        raise TypeError(f"Invalid user input. Got {type(value)}: {value}, cannot be converted into tensor.")
    return a


def decode_item(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, (bytes, np.bytes_)) else str(value)


class TextOperation(TensorOperation):
    """Base of the text ops: strings in, NumPy arrays out."""

    def _is_string(self, a: np.ndarray) -> bool:
        return a.dtype.kind in "US"


class ScalarTokenizer(TextOperation):
    """Base of the tokenizers that take one string (a 0-d string array) and give a 1-D token array,
    plus the start/limit byte offsets when ``with_offsets`` is set.

    Subclasses define ``_spans(text) -> (tokens, [(start_char, end_char), ...])`` or ``_tokens``."""

    with_offsets = False
    _scalar_error = "the input shape should be scalar and the input datatype should be string."

    def __call__(self, *args: Any) -> Any:
        if len(args) != 1:
            raise RuntimeError(f"{self._err_name}: input should be one column data.")
        text = self._scalar(args[0])
        if self.with_offsets:
            tokens, spans = self._spans(text)
            starts, limits = byte_offsets(text, spans)
            return str_array(tokens), starts, limits
        return str_array(self._tokens(text))

    @property
    def _err_name(self) -> str:
        return f"{type(self).__name__}Op"

    def _scalar(self, value: Any) -> str:
        if isinstance(value, str):
            return value
        if isinstance(value, bytes):
            raise RuntimeError(f"{self._err_name}: {self._scalar_error}")
        a = as_input(value)
        if a.ndim != 0 or a.dtype.kind not in "US":
            raise RuntimeError(f"{self._err_name}: {self._scalar_error}")
        return decode_item(a.item())

    def _tokens(self, text: str) -> list[str]:
        return self._spans(text)[0]

    def _spans(self, text: str) -> tuple[list[str], list[tuple[int, int]]]:
        raise NotImplementedError


def string_input(value: Any, op: str, message: str = "input is not string datatype.") -> np.ndarray:
    """``value`` as a ``<U`` array, or RuntimeError ``"<op>: <message>"`` if it holds no strings."""
    if isinstance(value, str):
        return np.array(value)
    if isinstance(value, bytes):
        raise RuntimeError(f"{op}: {message}")
    a = as_input(value)
    if a.dtype.kind == "U":
        return a
    if a.dtype.kind == "S":
        return to_str(a)
    raise RuntimeError(f"{op}: {message}")


def map_strings(a: np.ndarray, fn: Any) -> np.ndarray:
    """``fn`` applied to every string of ``a`` (any shape), as a ``<U`` array of the same shape."""
    if a.ndim == 0:
        return np.array(fn(str(a.item())))
    flat = [fn(s) for s in a.reshape(-1).tolist()]
    return np.array(flat, dtype=str).reshape(a.shape) if flat else np.empty(a.shape, dtype="<U1")


def to_str(array: Any, encoding: str = "utf8") -> np.ndarray:
    """Decodes a NumPy bytes array (``|S``) to a unicode array with `encoding`.

    Examples:
        >>> to_str(np.array([b"a", b"\\xc3\\xa9"])).tolist()
        ['a', 'é']
    """
    if not isinstance(array, np.ndarray):
        raise TypeError("input should be a NumPy array.")
    return np.char.decode(array, encoding)


def to_bytes(array: Any, encoding: str = "utf8") -> np.ndarray:
    """Encodes a NumPy unicode array to bytes (``|S``) with `encoding`.

    Examples:
        >>> to_bytes(np.array(["a", "é"])).tolist()
        [b'a', b'\\xc3\\xa9']
    """
    if not isinstance(array, np.ndarray):
        raise ValueError("input should be a NumPy array.")
    return np.char.encode(array, encoding)


def check_bool(value: Any, name: str) -> None:
    """TypeError ``Wrong input type for <name>, should be boolean.`` (MindSpore's text wording)."""
    if not isinstance(value, bool):
        raise TypeError(f"Wrong input type for {name}, should be boolean.")


def check_str(value: Any, name: str) -> None:
    """TypeError ``Wrong input type for <name>, should be string.``"""
    if not isinstance(value, str):
        raise TypeError(f"Wrong input type for {name}, should be string.")


def check_form(value: Any, name: str) -> None:
    if not isinstance(value, NormalizeForm):
        raise TypeError(f"Wrong input type for {name}, should be enum of 'NormalizeForm'.")


def nonempty(a: np.ndarray) -> np.ndarray:
    if a.size == 0:
        raise RuntimeError("Input Tensor has no data.")
    return a
