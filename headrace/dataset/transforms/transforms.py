"""General transforms: MindSpore's ``mindspore.dataset.transforms`` operations on NumPy arrays."""
from __future__ import annotations

import enum
import operator as _operator
from typing import Any

import numpy as np

from headrace._util.errors import kernel_error
from headrace.common import dtype as mstype
from headrace.dataset.transforms._base import (Implementation, TensorOperation, contiguous, not_random, returns_contiguous)
from headrace.dataset.transforms._cast import c_cast, type_name
from headrace.dataset.transforms._checks import (check_positive, check_range, type_check,
                                                 type_check_list)
from headrace.dataset.transforms._compound import (
    _NO_INPUT, Compose, RandomApply, RandomChoice, RandomOrder, _as_array,
)

__all__ = ["Compose", "Concatenate", "Duplicate", "Fill", "Mask", "OneHot", "PadEnd", "RandomApply",
           "RandomChoice", "RandomOrder", "Relational", "Slice", "TypeCast", "Unique", "not_random"]

# MindSpore caches one C++ executor per (process, thread) for eager calls here and scripts check that
# the cache is released. headrace's ops run without executors, so its cache is always empty.
EXECUTORS_LIST: dict = {}

_SCALAR_TYPES = (str, float, bool, int, bytes)
_ONE_TO_ONE = "The op is OneToOne, can only accept one tensor as input."


def _err(op: str, detail: str) -> RuntimeError:
    """``RuntimeError("<op>: <detail>")``; in a map, laid out as MindSpore's C++ ops' failures."""
    return kernel_error(f"{op}: {detail}")


class _OneToOne(TensorOperation):
    """An op on exactly one array (MindSpore rejects more with a fixed message)."""

    implementation = Implementation.C

    @returns_contiguous
    def __call__(self, *args: Any) -> Any:
        if len(args) != 1:
            raise RuntimeError(_ONE_TO_ONE if args else _NO_INPUT)
        a = args[0]
        if type(a) is not np.ndarray:
            a = _as_array(a)
        out = self._run(a)
        if type(out) is np.ndarray and out.flags.c_contiguous:
            return out
        return contiguous(out)


def _is_text(dtype: np.dtype) -> bool:
    return dtype.kind in "US"


# --------------------------------------------------------------------------- compound operations


# --------------------------------------------------------------------------- tensor operations


class TypeCast(_OneToOne):
    """Casts the input to another data type (float to int truncates, as MindSpore's C++ kernel).

    Args:
        data_type (Union[mindspore.dtype, numpy.dtype]): the target type, e.g. ``mstype.int32``,
            ``np.float32`` or ``"float32"``.

    Raises:
        TypeError: if `data_type` is not a data type.

    Examples:
        >>> import numpy as np
        >>> from headrace.common import dtype as mstype
        >>> TypeCast(mstype.int32)(np.array([1.7, -1.7])).tolist()
        [1, -1]
    """

    def __init__(self, data_type: Any) -> None:
        if not isinstance(data_type, mstype.Type):
            try:
                np.dtype(data_type)
            except (TypeError, ValueError):
                type_check(data_type, (mstype.Type, np.dtype), "data_type")
            if data_type is None:
                type_check(data_type, (mstype.Type, np.dtype), "data_type")
        self.data_type = data_type
        dt = data_type.np_dtype if isinstance(data_type, mstype.Type) else np.dtype(data_type)
        if dt.kind not in "biufUS":
            raise kernel_error("TypeCast: Invalid data type")
        self._dtype = dt

    def _run(self, a: np.ndarray) -> np.ndarray:
        dt = self._dtype
        if _is_text(a.dtype):
            if a.dtype.kind == "U" and dt.kind == "U":
                return a
            raise _err("TypeCast", f"TypeCast does not support cast from {type_name(a.dtype)} to "
                                   f"{type_name(dt)}")
        if dt.kind in "US":
            raise RuntimeError("Failed to create empty tensor, number of elements should be 0 when "
                               "data type is string.")
        return c_cast(a, dt)

    def __repr__(self) -> str:
        return f"TypeCast({self.data_type!r})"


class OneHot(_OneToOne):
    """Turns class indices into one-hot vectors, optionally label-smoothed.

    A scalar (or any one-element input) gives a vector of `num_classes`; a 1-D input of n labels
    gives an (n, num_classes) array. Negative labels give an all-zero row. The output keeps the
    input's integer type, or is float64 when `smoothing_rate` > 0 (then each row is
    ``(1 - smoothing_rate) * one_hot + smoothing_rate / num_classes``).

    Args:
        num_classes (int): number of classes, positive.
        smoothing_rate (float, optional): label smoothing in [0, 1]. Default: 0.0.

    Raises:
        TypeError: if `num_classes` is not an int or `smoothing_rate` not a number.
        ValueError: if `num_classes` <= 0 or `smoothing_rate` is outside [0, 1].
        RuntimeError: at call time, for non-integer input, rank > 1, or a label >= num_classes.

    Examples:
        >>> import numpy as np
        >>> OneHot(3)(np.array([0, 2])).tolist()
        [[1, 0, 0], [0, 0, 1]]
    """

    def __init__(self, num_classes: int, smoothing_rate: float = 0.0) -> None:
        type_check(smoothing_rate, (int, float), "smoothing_rate")
        type_check(num_classes, (int,), "num_classes")
        check_positive(num_classes)
        check_range(smoothing_rate, (0.0, 1.0), "smoothing_rate")
        self.num_classes = num_classes
        self.smoothing_rate = smoothing_rate
        self._eye = None

    def _run(self, a: np.ndarray) -> np.ndarray:
        if a.dtype.kind not in "iu":
            raise _err("OneHot", f"Only support input of int type, but got: {type_name(a.dtype)}")
        n = self.num_classes
        if a.size == 1:
            labels = a.reshape(1)
            squeeze = True
        elif a.ndim == 1:
            labels, squeeze = a, False
        else:  # MindSpore drops the size-1 axes first: (N, 1) labels are N labels
            labels, squeeze = a.reshape([d for d in a.shape if d != 1]), False
            if labels.ndim != 1:
                raise _err("OneHot", f"Only support scalar or 1D input, got rank: {labels.ndim}")
        if labels.size and labels.max() >= n:
            bad = labels.max()
            raise _err("OneHot", f"index values should not bigger than num classes: {n}, but got: {bad}")
        valid = labels >= 0 if a.dtype.kind == "i" else np.ones(labels.shape, bool)
        out = np.zeros((labels.shape[0], n), dtype=a.dtype)
        rows = np.nonzero(valid)[0]
        out[rows, labels[rows]] = 1
        if self.smoothing_rate:
            s = float(self.smoothing_rate)
            out = out.astype(np.float64) * (1.0 - s) + s / n
        return out[0] if squeeze else out

    def __repr__(self) -> str:
        return f"OneHot(num_classes={self.num_classes}, smoothing_rate={self.smoothing_rate})"


class Fill(_OneToOne):
    """Returns an array of the input's shape and type filled with `fill_value`.

    Numbers are cast to the input's type the way MindSpore's kernel casts (truncating, wrapping);
    strings fill string arrays and bytes fill bytes arrays only.

    Args:
        fill_value (Union[str, bytes, int, float, bool]): the value to fill with.

    Raises:
        TypeError: if `fill_value` is not one of those types.
        RuntimeError: at call time, when mixing text and numbers.

    Examples:
        >>> import numpy as np
        >>> Fill(3)(np.zeros((2,), np.float32)).tolist()
        [3.0, 3.0]
    """

    def __init__(self, fill_value: Any) -> None:
        type_check(fill_value, _SCALAR_TYPES, "fill_value")
        self.fill_value = fill_value
        self._value = np.asarray(fill_value)

    def _run(self, a: np.ndarray) -> np.ndarray:
        v = self._value
        if _is_text(a.dtype) or _is_text(v.dtype):
            if a.dtype.kind != v.dtype.kind:
                raise _err("Fill", "fill_value and the input tensor must be of the same data type when "
                                   "involving strings or bytes, but got fill_value data type "
                                   f"{type_name(v.dtype)} and input tensor data type {type_name(a.dtype)}")
            return np.full(a.shape, v, dtype=v.dtype)
        return np.full(a.shape, c_cast(v, a.dtype), dtype=a.dtype)

    def __repr__(self) -> str:
        return f"Fill({self.fill_value!r})"


class Concatenate(TensorOperation):
    """Concatenates 1-D inputs (one or several columns) with optional 1-D arrays around them.

    Args:
        axis (int, optional): the axis; only 0 or -1 (1-D). Default: 0.
        prepend (numpy.ndarray, optional): a 1-D array put before the input. Default: None.
        append (numpy.ndarray, optional): a 1-D array put after the input. Default: None.

    Raises:
        TypeError: if `axis` is not an int or `prepend`/`append` is not an ndarray.
        ValueError: if `axis` is not 0 or -1, or `prepend`/`append` is not 1-D.
        RuntimeError: at call time, if the input is not 1-D or the types differ.

    Examples:
        >>> import numpy as np
        >>> Concatenate(0, np.array([0]), np.array([9]))(np.array([1, 2])).tolist()
        [0, 1, 2, 9]
    """

    def __init__(self, axis: int = 0, prepend: np.ndarray | None = None,
                 append: np.ndarray | None = None) -> None:
        if axis is not None:
            type_check(axis, (int,), "axis")
            if axis not in (0, -1):
                raise ValueError("only 1D concatenation supported.")
        if prepend is not None:
            type_check(prepend, (np.ndarray,), "prepend")
            if prepend.ndim != 1:
                raise ValueError("can only prepend 1D arrays.")
        if append is not None:
            type_check(append, (np.ndarray,), "append")
            if append.ndim != 1:
                raise ValueError("can only append 1D arrays.")
        self.axis, self.prepend, self.append = axis, prepend, append

    implementation = Implementation.C

    def __call__(self, *args: Any) -> Any:
        arrays = [a if type(a) is np.ndarray else _as_array(a) for a in args]
        for a in arrays:
            if a.ndim != 1:
                raise _err("Concatenate", f"only 1D input supported, got rank of input: {a.ndim}")
        a = arrays[0] if len(arrays) == 1 else np.concatenate(arrays)
        return self._run(a)

    def _run(self, a: np.ndarray) -> np.ndarray:
        if a.ndim != 1:
            raise _err("Concatenate", f"only 1D input supported, got rank of input: {a.ndim}")
        parts = []
        for name, extra in (("prepend", self.prepend), ("append", self.append)):
            if extra is None:
                continue
            same = extra.dtype == a.dtype or (extra.dtype.kind == a.dtype.kind and _is_text(a.dtype))
            if not same:
                raise _err("Concatenate", f"input datatype does not match the {name} datatype, got input "
                                          f"datatype: {type_name(a.dtype)}, {name} datatype:"
                                          f"{type_name(extra.dtype)}")
        if self.prepend is not None:
            parts.append(self.prepend)
        parts.append(a)
        if self.append is not None:
            parts.append(self.append)
        return np.concatenate(parts) if len(parts) > 1 else a


class Duplicate(TensorOperation):
    """Returns the input and a copy of it (two columns).

    Examples:
        >>> import numpy as np
        >>> a, b = Duplicate()(np.array([1, 2]))
        >>> b.tolist()
        [1, 2]
    """

    implementation = Implementation.C

    @returns_contiguous
    def __call__(self, *args: Any) -> Any:
        if len(args) != 1:
            raise _err("Duplicate", f"only supports transform one column each time, got column num: "
                                    f"{len(args)}, check 'input_columns' when call this operator.")
        a = args[0] if type(args[0]) is np.ndarray else _as_array(args[0])
        if not a.flags.c_contiguous:
            a = a.copy()
        return a, a.copy()


class Relational(enum.IntEnum):
    """Comparison operators of :class:`Mask`."""

    EQ = 0
    NE = 1
    GT = 2
    GE = 3
    LT = 4
    LE = 5


_COMPARE = {Relational.EQ: _operator.eq, Relational.NE: _operator.ne, Relational.GT: _operator.gt,
            Relational.GE: _operator.ge, Relational.LT: _operator.lt, Relational.LE: _operator.le}


class Mask(_OneToOne):
    """Compares every element with a constant and returns the result as `dtype` (bool by default).

    The constant is first cast to the input's type (for numbers), as MindSpore does.

    Args:
        operator (Relational): EQ, NE, GT, GE, LT or LE.
        constant (Union[str, bytes, int, float, bool]): the value to compare with.
        dtype (mindspore.dtype, optional): type of the result. Default: ``mstype.bool_``.

    Raises:
        TypeError: if an argument has the wrong type.
        RuntimeError: at call time, when comparing text with numbers.

    Examples:
        >>> import numpy as np
        >>> Mask(Relational.GT, 1)(np.array([0, 1, 2])).tolist()
        [False, False, True]
    """

    def __init__(self, operator: Relational, constant: Any, dtype: Any = mstype.bool_) -> None:
        type_check(operator, (Relational,), "operator")
        type_check(constant, _SCALAR_TYPES, "constant")
        type_check(dtype, (mstype.Type,), "dtype")
        self.operator, self.constant, self.dtype = operator, constant, dtype
        self._cmp = _COMPARE[operator]
        self._value = np.asarray(constant)
        self._out = dtype.np_dtype

    def _run(self, a: np.ndarray) -> np.ndarray:
        if _is_text(self._out):
            raise _err("Mask", f"Only supports bool or numeric datatype for generated mask type, but "
                               f"got:{type_name(self._out)}")
        v = self._value
        if _is_text(a.dtype) != _is_text(v.dtype):
            raise _err("Mask", "input datatype does not match the value datatype, both should be numeric "
                               "or non-numerical in the same time.")
        if _is_text(a.dtype):
            text = v.item()
            text = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
            a = a.astype(str) if a.dtype.kind == "S" else a
            result = self._cmp(a, text)
        else:
            result = self._cmp(a, c_cast(v, a.dtype))
        result = np.asarray(result)
        return result if self._out == np.bool_ else result.astype(self._out)

    def __repr__(self) -> str:
        return f"Mask({self.operator!r}, {self.constant!r}, {self.dtype!r})"


class PadEnd(_OneToOne):
    """Pads (or crops) each dimension at its end to `pad_shape`.

    Args:
        pad_shape (list[int]): the target shape; None in an entry keeps that dimension.
        pad_value (Union[str, bytes, int, float, bool], optional): the value to pad with.
            Default: None (0 for numbers, an empty string for text).

    Raises:
        TypeError: if `pad_shape` is not a list of ints or `pad_value` has the wrong type.
        ValueError: if an entry of `pad_shape` is not positive.
        RuntimeError: at call time, if the ranks differ or text meets numbers.

    Examples:
        >>> import numpy as np
        >>> PadEnd([4], pad_value=-1)(np.array([1, 2])).tolist()
        [1, 2, -1, -1]
    """

    def __init__(self, pad_shape: list, pad_value: Any = None) -> None:
        if pad_value is not None:
            type_check(pad_value, _SCALAR_TYPES, "pad_value")
        type_check(pad_shape, (list,), "pad_shape")
        for dim in pad_shape:
            if dim is not None:
                if isinstance(dim, int) and not isinstance(dim, bool):
                    check_range(dim, (1, 2**63 - 1))
                else:
                    raise TypeError("a value in the list is not an integer.")
        self.pad_shape, self.pad_value = pad_shape, pad_value
        self._value = None if pad_value is None else np.asarray(pad_value)

    def _run(self, a: np.ndarray) -> np.ndarray:
        shape = self.pad_shape
        if a.ndim == 0:
            return a  # as MindSpore: a scalar is returned unpadded, whatever the pad shape
        if len(shape) != a.ndim:
            raise _err("PadEnd", f"invalid pad shape, as rank of input is: {a.ndim}, and rank of pad "
                                 f"value: {len(shape)}")
        target = tuple(a.shape[i] if s is None else s for i, s in enumerate(shape))
        v = self._value
        if v is None:
            fill = np.zeros((), a.dtype)
        elif _is_text(a.dtype) or _is_text(v.dtype):
            if _is_text(a.dtype) and _is_text(v.dtype) and a.dtype.kind != v.dtype.kind:
                raise _err("PadEnd", f"can not pad string and byte tensors together, but got: "
                                     f"{type_name(v.dtype)} and {type_name(a.dtype)}.")
            if not (_is_text(a.dtype) and _is_text(v.dtype)):
                raise _err("PadEnd", f"can not pad numeric and string tensors together, but got: "
                                     f"{type_name(v.dtype)} and {type_name(a.dtype)}.")
            fill = v
        else:
            fill = c_cast(v, a.dtype)
        dtype = np.result_type(a.dtype, fill.dtype) if _is_text(a.dtype) else a.dtype
        out = np.full(target, fill, dtype=dtype)
        region = tuple(slice(0, min(t, s)) for t, s in zip(target, a.shape))
        out[region] = a[region]
        return out

    def __repr__(self) -> str:
        return f"PadEnd({self.pad_shape!r}, pad_value={self.pad_value!r})"


class Slice(_OneToOne):
    """Slices the input, one argument per leading dimension; dimensions are always kept.

    Each argument is an int (that one index, the dimension kept with size 1), a list of ints (those
    indices), a Python ``slice``, or None/True/Ellipsis (the whole dimension). Missing trailing
    dimensions are kept whole.

    Args:
        *slices (Union[int, list[int], slice, None, bool, Ellipsis]): one per dimension.

    Raises:
        TypeError: if an argument has the wrong type.
        RuntimeError: at call time, for an index out of range or more arguments than dimensions.

    Examples:
        >>> import numpy as np
        >>> Slice(1, [0, 1])(np.array([[1, 2, 3], [4, 5, 6]])).tolist()
        [[4, 5]]
    """

    def __init__(self, *slices: Any) -> None:
        for s in slices:
            if s is not None:
                type_check(s, (int, list, slice, bool, type(Ellipsis)), "slice")
                if isinstance(s, list) and s and isinstance(s[0], int):
                    type_check_list(s, (int,), "slice")
                elif isinstance(s, list):  # MindSpore's wording for a list of something else
                    for k, item in enumerate(s):
                        type_check(item, (int,), f"slice_option[{k}]")
        self.slices = slices
        self._all = not slices

    def _run(self, a: np.ndarray) -> np.ndarray:
        if self._all:
            return a
        if len(self.slices) > a.ndim:
            raise kernel_error("Invalid shape, should be greater than slices index.")
        index = []
        for dim, s in enumerate(self.slices):
            n = a.shape[dim]
            if s is None or s is True or s is Ellipsis:
                index.append(slice(None))
            elif s is False or (isinstance(s, list) and not s):
                raise kernel_error("Both indices and slices can not be empty.")
            elif isinstance(s, slice):
                if s.step == 0:
                    raise kernel_error("Wrong slice object")
                index.append(s)
            else:
                items = [s] if isinstance(s, int) else s
                fixed = []
                for i in items:
                    j = i + n if i < 0 else i
                    if j < 0 or j >= n:
                        raise kernel_error(f"Index {j} is out of bounds.")
                    fixed.append(j)
                index.append(np.asarray(fixed, dtype=np.intp))
        out = a
        for dim, ix in enumerate(index):  # one axis at a time: lists index independently
            if not (isinstance(ix, slice) and ix == slice(None)):
                out = out[(slice(None),) * dim + (ix,)]
        return out

    def __repr__(self) -> str:
        return f"Slice{self.slices!r}"


class Unique(TensorOperation):
    """Returns the distinct elements of a numeric input (at least 2-D, flattened) in order of first
    occurrence, the index of each input element into them, and their counts (both int32).

    Raises:
        RuntimeError: at call time, for input of rank < 2 or non-numeric input.

    Examples:
        >>> import numpy as np
        >>> out, idx, cnt = Unique()(np.array([[3, 1], [3, 2]]))
        >>> out.tolist(), idx.tolist(), cnt.tolist()
        ([3, 1, 2], [0, 1, 0, 2], [2, 1, 1])
    """

    implementation = Implementation.C

    @returns_contiguous
    def __call__(self, *args: Any) -> Any:
        if len(args) != 1:
            raise RuntimeError(_ONE_TO_ONE if args else _NO_INPUT)
        a = args[0] if type(args[0]) is np.ndarray else _as_array(args[0])
        return contiguous(self._run(a))

    def _run(self, a: np.ndarray) -> tuple:
        if _is_text(a.dtype):
            raise _err("Unique", f"only support numeric datatype of input, got {type_name(a.dtype)}.")
        if a.ndim < 2:
            raise _err("Unique", f"input must be at least 2-D in order to do unique op, got rank:{a.ndim}")
        if a.dtype.kind not in "iuf":
            raise _err("Unique", "Unique op only supports numeric input.")
        flat = a.reshape(-1)
        values, first, inverse, counts = np.unique(flat, return_index=True, return_inverse=True,
                                                   return_counts=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        return (values[order], rank[inverse.reshape(-1)].astype(np.int32),
                counts[order].astype(np.int32))
