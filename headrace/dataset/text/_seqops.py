"""Ops on token sequences: Ngram, SlidingWindow, ToNumber, Truncate, TruncateSequencePair, AddToken."""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from headrace._util.checks import check_type
from headrace.common import dtype as mstype
from headrace.dataset.text._common import TextOperation, as_input, compact, decode_item, nonempty

__all__ = ["AddToken", "Ngram", "SlidingWindow", "ToNumber", "Truncate", "TruncateSequencePair"]

INT32_MAX = 2**31 - 1


def _one(args: tuple, op: str = "") -> np.ndarray:
    if len(args) != 1:
        raise RuntimeError("The op is OneToOne, can only accept one tensor as input.")
    v = args[0]
    if isinstance(v, bytes):
        raise RuntimeError(f"{op}: the input should be of string type, but got bytes.")
    return np.array(v) if isinstance(v, str) else as_input(v)


def _check_pad(pad: Any, name: str) -> tuple[str, int]:
    if not (isinstance(pad, tuple) and len(pad) == 2 and isinstance(pad[0], str) and isinstance(pad[1], int)
            and not isinstance(pad[1], bool)):
        raise ValueError(f"{name} needs to be a tuple of (str, int) str is pad token and int is pad_width.")
    if pad[1] < 0:
        raise ValueError("padding width need to be positive numbers.")
    return pad


class Ngram(TextOperation):
    """The n-grams of a 1-D string array, for each n in `n` in turn (an n with no n-gram gives "").

    Args:
        n (Union[int, list[int]]): the gram sizes.
        left_pad (tuple[str, int]): pad token and how many to add on the left (at most n-1 are
            used). Default: ("", 0).
        right_pad (tuple[str, int]): the same on the right. Default: ("", 0).
        separator (str): joins the tokens of a gram. Default: " ".

    Examples:
        >>> Ngram([2, 3])(np.array(["a", "b", "c"])).tolist()
        ['a b', 'b c', 'a b c']
    """

    def __init__(self, n: Any, left_pad: tuple = ("", 0), right_pad: tuple = ("", 0), separator: str = " ") -> None:
        grams = [n] if isinstance(n, int) else n
        if not isinstance(grams, list) or not grams:
            raise ValueError("n needs to be a non-empty list of positive integers.")
        for i, g in enumerate(grams):
            check_type(g, (int,), f"gram[{i}]")
            if g <= 0:
                raise ValueError(f"Input gram_{i} must be greater than 0.")
        self.left_pad = _check_pad(left_pad, "left_pad")
        self.right_pad = _check_pad(right_pad, "right_pad")
        check_type(separator, str, "separator")
        self.n, self.separator = grams, separator

    def __call__(self, *args: Any) -> np.ndarray:
        a = _one(args, "Ngram")
        if a.ndim != 1 or a.dtype.kind not in "US":
            raise RuntimeError("Ngram: input is not a 1D data with string datatype.")
        tokens = [decode_item(t) for t in a.tolist()]
        sep, out = self.separator, []
        (lt, lw), (rt, rw) = self.left_pad, self.right_pad
        for g in self.n:
            seq = [lt] * min(lw, g - 1) + tokens + [rt] * min(rw, g - 1)
            if len(seq) < g:
                out.append("")
                continue
            out.extend(sep.join(seq[i:i + g]) for i in range(len(seq) - g + 1))
        return np.array(out, dtype=str)


class SlidingWindow(TextOperation):
    """Windows of `width` consecutive elements of a 1-D array, as a 2-D array (one window a row).

    Examples:
        >>> SlidingWindow(2)(np.array([1, 2, 3])).tolist()
        [[1, 2], [2, 3]]
    """

    def __init__(self, width: int, axis: int = 0) -> None:
        check_type(width, int, "width")
        if not 1 <= width <= INT32_MAX:
            raise ValueError(f"Input width is not within the required interval of [1, {INT32_MAX}].")
        check_type(axis, int, "axis")
        self.width, self.axis = width, axis

    def __call__(self, *args: Any) -> np.ndarray:
        a = _one(args)
        if a.ndim != 1:
            raise RuntimeError(f"SlidingWindow: SlidingWindow supports 1D input only for now, but got {a.ndim}D.")
        if self.axis not in (0, -1):
            raise RuntimeError(f"SlidingWindow: The parameter axis supports 0 or -1 only for now, but got "
                               f"{self.axis}.")
        w = self.width
        if w > a.shape[0]:
            return np.empty(0, dtype=a.dtype)
        return compact(np.lib.stride_tricks.sliding_window_view(a, w).copy())


_INT_PREFIX = re.compile(r"\s*([+-]?\d+)")
_FLOAT_PREFIX = re.compile(r"\s*([+-]?(?:inf(?:inity)?|nan|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))", re.I)


class ToNumber(TextOperation):
    """Parses strings (any shape) into numbers of a numeric type, reading the longest numeric prefix
    as C's ``strtoll`` / ``strtod`` do, and refusing values outside the type's range.

    Examples:
        >>> ToNumber(mstype.int32)(np.array(["1", "-2"])).tolist()
        [1, -2]
    """

    def __init__(self, data_type: Any) -> None:
        check_type(data_type, mstype.Type, "data_type")
        if data_type.np_dtype.kind not in "iuf":
            raise TypeError(f"data_type: {data_type} is not numeric data type.")
        self.data_type = data_type
        self._dtype = data_type.np_dtype

    def __call__(self, *args: Any) -> np.ndarray:
        a = _one(args, "ToNumber")
        if a.dtype.kind not in "US":
            raise RuntimeError("ToNumber: input should be string datatype.")
        parse = self._float if self._dtype.kind == "f" else self._int
        values = [parse(decode_item(s)) for s in a.reshape(-1).tolist()]
        return np.array(values, dtype=self._dtype).reshape(a.shape)

    def _int(self, s: str) -> int:
        m = _INT_PREFIX.match(s)
        if not m:
            raise RuntimeError(f'ToNumber: it is invalid to convert "{s}" to a number.')
        v = int(m.group(1))
        info = np.iinfo(self._dtype)
        if not info.min <= v <= info.max:
            raise RuntimeError(f"ToNumber: string input {s} will be out of bounds if cast to {self._dtype}. "
                               f"The valid range is: [{info.min}, {info.max}].")
        return v

    def _float(self, s: str) -> float:
        m = _FLOAT_PREFIX.match(s)
        if not m:
            raise RuntimeError(f'ToNumber: it is invalid to convert "{s}" to a number.')
        v = float(m.group(1))
        hi = float(np.finfo(self._dtype).max)
        if abs(v) > hi:
            if self._dtype == np.float16:
                raise RuntimeError(f"ToFloat16: value {v:f}in input data is outside of valid float16 range "
                                   f"[{hi:f}, {-hi:f}].")
            raise RuntimeError(f"ToNumber: string input {s} will be out of bounds if cast to {self._dtype}. "
                               f"The valid range is: [{-hi:f}, {hi:f}].")
        return v


class Truncate(TextOperation):
    """Keeps the first `max_seq_len` elements of a 1-D array (of each row of a 2-D array).

    Examples:
        >>> Truncate(2)(np.array([1, 2, 3])).tolist()
        [1, 2]
    """

    def __init__(self, max_seq_len: int) -> None:
        check_type(max_seq_len, int, "max_seq_len")
        if not 1 <= max_seq_len <= INT32_MAX:
            raise ValueError(f"Input max_seq_len is not within the required interval of [1, {INT32_MAX}].")
        self.max_seq_len = max_seq_len

    def __call__(self, *args: Any) -> np.ndarray:
        a = _one(args)
        if a.ndim not in (1, 2):
            raise RuntimeError("Truncate: the input tensor should be of dimension 1 or 2.")
        return compact(a[..., :self.max_seq_len])


class TruncateSequencePair(TextOperation):
    """Shortens two 1-D arrays, always the longer one (the second on ties), until their lengths add
    up to at most `max_length`.

    Examples:
        >>> [x.tolist() for x in TruncateSequencePair(4)(np.array([1, 2, 3]), np.array([4, 5, 6]))]
        [[1, 2], [4, 5]]
    """

    def __init__(self, max_length: int) -> None:
        self.max_length = max_length

    def __call__(self, *args: Any) -> tuple[np.ndarray, np.ndarray]:
        if not isinstance(self.max_length, int) or isinstance(self.max_length, bool):
            raise TypeError("TruncateSequencePair: max_length must be an int.")
        if len(args) != 2:
            raise RuntimeError(f"TruncateSequencePair: Expected two inputs, but got {len(args)} inputs.")
        a, b = (np.array(x) if isinstance(x, str) else np.asarray(x) for x in args)
        if a.ndim != 1 or b.ndim != 1:
            raise RuntimeError("TruncateSequencePair: both data column should be of rank 1.")
        la, lb = len(a), len(b)
        limit = max(self.max_length, 0)
        while la + lb > limit:
            if la > lb:
                la -= 1
            else:
                lb -= 1
        return compact(a[:la]), compact(b[:lb])


class AddToken(TextOperation):
    """Adds a token at the start (or end) of a 1-D string array, or of each row of a 2-D one.

    Examples:
        >>> AddToken("[CLS]")(np.array(["a", "b"])).tolist()
        ['[CLS]', 'a', 'b']
    """

    def __init__(self, token: str, begin: bool = True) -> None:
        check_type(token, str, "token")
        check_type(begin, bool, "begin")
        self.token, self.begin = token, begin

    def __call__(self, *args: Any) -> np.ndarray:
        a = _one(args)
        if a.dtype.kind not in "US":
            raise RuntimeError("AddToken: input tensor type should be string.")
        if a.ndim not in (1, 2):
            raise RuntimeError("AddToken: input tensor rank should be 1 or 2.")
        nonempty(a)
        if a.dtype.kind == "S":
            a = np.char.decode(a, "utf-8")
        tok = np.full(a.shape[:-1] + (1,), self.token)
        parts = (tok, a) if self.begin else (a, tok)
        return compact(np.concatenate(parts, axis=-1))
