"""The array type iterators return when ``output_numpy=False``.

A NumPy array that also answers ``asnumpy()``, so code written for MindSpore's Tensor keeps
working while every NumPy function still accepts it. ``Tensor(data, dtype)`` builds one from data
the way ``mindspore.Tensor(data, dtype)`` does.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from headrace.common import dtype as mstype

_ACCEPTED = ("Tensor, ndarray, numpy scalar, list, tuple, float, int, bool")


class Tensor(np.ndarray):
    """An ndarray with MindSpore Tensor's most used accessors.

    Args:
        input_data (Union[Tensor, numpy.ndarray, numpy scalar, list, tuple, float, int, bool]): the
            data, copied. Python floats (alone or in lists) become float32 as in MindSpore, Python
            ints int64, bools bool, an empty list float32; arrays and NumPy scalars keep their dtype.
        dtype (mindspore.dtype, optional): the type to cast the data to, e.g. ``mstype.float32``.
            Default: None.

    Raises:
        TypeError: if `input_data` has another type or is ragged, or `dtype` is not a MindSpore type.

    Examples:
        >>> import headrace.common.dtype as mstype
        >>> Tensor([1.0, 2.0]).dtype, Tensor(3).shape, Tensor([1, 2], mstype.int32).dtype
        (mindspore.float32, (), mindspore.int32)
        >>> t = Tensor([1.0, 2.0])
        >>> t.dtype == mstype.float32, str(t.dtype), t.asnumpy().dtype
        (True, 'Float32', dtype('float32'))
    """

    def __new__(cls, input_data: Any = None, dtype: Any = None) -> "Tensor":
        if dtype is not None and not isinstance(dtype, mstype.Type):
            raise TypeError(f"For 'Tensor', the 'dtype' should be a mindspore dtype such as "
                            f"mindspore.float32, but got {dtype!r}.")
        arr = _as_data(input_data)
        if dtype is not None:
            arr = arr.astype(dtype.np_dtype)
        return arr.view(cls)

    @property  # type: ignore[override]
    def dtype(self) -> Any:
        """The element type as MindSpore names it (``mstype.float32``, ``str()`` gives ``Float32``).

        It also answers NumPy's dtype attributes (``kind``, ``itemsize``, ``type``, ...),
        ``np.dtype(t.dtype)`` and equality with the NumPy dtype, so NumPy functions and code
        written for arrays keep working with a Tensor; ``asnumpy().dtype`` is the NumPy dtype. A
        dtype MindSpore has no type for (complex) stays a NumPy dtype.
        """
        dt = _NDARRAY_DTYPE.__get__(self)
        return _ARRAY_TYPES.get(dt, dt)

    @dtype.setter
    def dtype(self, value: Any) -> None:  # NumPy's view(dtype) sets it on a subclass
        _NDARRAY_DTYPE.__set__(self, value.np_dtype if isinstance(value, mstype.Type) else value)

    def asnumpy(self) -> np.ndarray:
        return self.view(np.ndarray)

    @property
    def dtype_name(self) -> str:
        return str(self.dtype)

    def __repr__(self) -> str:
        return "Tensor(" + repr(self.view(np.ndarray))[6:]


class _ArrayType(mstype.Type):
    """An ``mstype`` type (equal to it, same hash and text) that also answers the attributes of the
    NumPy dtype it stands for, which NumPy's Python code reads from an array's ``dtype``.

    It also equals that NumPy dtype (MindSpore's type does not): NumPy already finds
    ``np.dtype('int32') == t.dtype`` true (it converts through ``.dtype``), and code that compares
    a Tensor's dtype with an array's (``a.dtype != t.dtype``) keeps working.
    """

    __slots__ = ()
    _is_numeric = True  # what NumPy's testing functions read from type(a.dtype)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, mstype.Type):
            return other.name == self.name
        try:
            return bool(self.np_dtype == other)
        except TypeError:
            return False

    __hash__ = mstype.Type.__hash__

    @property
    def dtype(self) -> np.dtype:  # np.dtype(x) reads x.dtype
        return self.np_dtype

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.np_dtype, name)


_NDARRAY_DTYPE = np.ndarray.dtype
_ARRAY_TYPES = {t.np_dtype: _ArrayType(t.name, str(t), t.np_dtype)
                for t in mstype.number_type + (mstype.bool_,)}


def _as_data(data: Any) -> np.ndarray:
    """``data`` as a fresh array with MindSpore's default dtypes for Python numbers."""
    if isinstance(data, np.ndarray):
        return np.array(data.view(np.ndarray) if isinstance(data, Tensor) else data)
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return np.array(data)
    if isinstance(data, bool):
        return np.array(data, np.bool_)
    if isinstance(data, int):
        return np.array(data, np.int64)
    if isinstance(data, float):
        return np.array(data, np.float32)
    if isinstance(data, (list, tuple)):
        try:
            arr = np.array(data)
        except ValueError as e:  # ragged
            raise TypeError(f"For Tensor, the input_data is {data} that contain unsupported element.") from e
        if arr.dtype.kind not in "biuf" and arr.size:
            raise TypeError(f"For Tensor, the input_data is {data} that contain unsupported element.")
        if arr.dtype == np.float64 and not _has_numpy_float64(data) or arr.size == 0:
            arr = arr.astype(np.float32)  # Python floats (and an empty list) are float32
        elif arr.dtype.kind in "iu" and arr.dtype != np.int64 and _all_python(data):
            arr = arr.astype(np.int64)
        return arr
    raise TypeError(f"For 'Tensor', the type of 'input_data' should be one of [{_ACCEPTED}], but got "
                    f"{type(data).__name__}.")


def _has_numpy_float64(data: Any) -> bool:
    """Whether a (nested) list holds a float64 array or NumPy float64 (which keeps float64)."""
    for v in data:
        if isinstance(v, (list, tuple)):
            if _has_numpy_float64(v):
                return True
        elif isinstance(v, (np.ndarray, np.floating)) and np.asarray(v).dtype == np.float64:
            return True
    return False


def _all_python(data: Any) -> bool:
    return all(_all_python(v) if isinstance(v, (list, tuple)) else not isinstance(v, (np.ndarray, np.generic))
               for v in data)
