"""Data types by MindSpore's names (``mindspore.common.dtype`` / ``mstype``), mapped to NumPy.

headrace has no tensor type of its own: every column is a NumPy array. These objects exist so that
code written as ``TypeCast(mstype.int32)`` or ``Mask(..., dtype=mstype.bool_)`` keeps working; each
names one NumPy dtype. :func:`to_numpy_dtype` accepts any of the spellings users pass.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "Type", "bool_", "byte", "double", "dtype_to_nptype", "float16", "float32", "float64", "half",
    "int16", "int32", "int64", "int8", "intc", "intp", "long", "number_type", "pytype_to_dtype",
    "short", "single", "string", "to_numpy_dtype", "ubyte", "uint16", "uint32", "uint64", "uint8",
    "uintc", "uintp", "ushort",
]


class Type:
    """One data type: its display name (``Int32``) and the NumPy dtype it stands for.

    Attributes:
        name: the short name (``int32``), as in ``mstype.int32``.
        np_dtype: the NumPy dtype (``np.dtype('int32')``); ``<U`` (unicode) for ``string``.
    """

    __slots__ = ("name", "np_dtype", "_title")

    def __init__(self, name: str, title: str, np_dtype: Any) -> None:
        self.name = name
        self._title = title
        self.np_dtype = np.dtype(np_dtype)

    def __repr__(self) -> str:
        return f"mindspore.{self.name}"

    def __str__(self) -> str:
        return self._title

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Type) and other.name == self.name

    def __hash__(self) -> int:
        # the NumPy dtype's hash: a Tensor's dtype (headrace/dataset/_tensor.py) equals both this
        # type and that dtype, and so finds either in a dict or set
        return hash(self.np_dtype)

    def __reduce__(self):
        return (_by_name, (self.name,))


int8 = Type("int8", "Int8", np.int8)
int16 = Type("int16", "Int16", np.int16)
int32 = Type("int32", "Int32", np.int32)
int64 = Type("int64", "Int64", np.int64)
uint8 = Type("uint8", "UInt8", np.uint8)
uint16 = Type("uint16", "UInt16", np.uint16)
uint32 = Type("uint32", "UInt32", np.uint32)
uint64 = Type("uint64", "UInt64", np.uint64)
float16 = Type("float16", "Float16", np.float16)
float32 = Type("float32", "Float32", np.float32)
float64 = Type("float64", "Float64", np.float64)
bool_ = Type("bool", "Bool", np.bool_)
string = Type("string", "String", np.str_)

# MindSpore's C-style aliases.
byte, short, intc, long, intp = int8, int16, int32, int64, int64
ubyte, ushort, uintc, uintp = uint8, uint16, uint32, uint64
half, single, double = float16, float32, float64

number_type = (int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64)

_ALL = {t.name: t for t in number_type + (bool_, string)}
_BY_NP = {t.np_dtype: t for t in number_type + (bool_,)}


def _by_name(name: str) -> Type:
    return _ALL[name]


def dtype_to_nptype(type_: Type) -> type:
    """The NumPy scalar type of a headrace/MindSpore type (``int32`` -> ``numpy.int32``)."""
    if not isinstance(type_, Type):
        raise TypeError(f"dtype_to_nptype expects a mindspore dtype, but got {type(type_)}.")
    return type_.np_dtype.type


def pytype_to_dtype(obj: Any) -> Type:
    """The type for a NumPy dtype or Python type (``np.float32`` -> ``float32``, ``bool`` -> ``bool_``)."""
    if isinstance(obj, Type):
        return obj
    if obj is bool:
        return bool_
    if obj is int:
        return int64
    if obj is float:
        return float64
    if obj is str:
        return string
    dt = np.dtype(obj)
    if dt.kind in "US":
        return string
    if dt not in _BY_NP:
        raise NotImplementedError(f"Unsupported convert python type {obj} to MindSpore type.")
    return _BY_NP[dt]


def to_numpy_dtype(value: Any, name: str = "data_type") -> np.dtype:
    """Normalises a MindSpore dtype, a NumPy dtype/scalar type, a Python type or a dtype name.

    Args:
        value: ``mstype.int32``, ``np.int32``, ``np.dtype('int32')``, ``int`` or ``"int32"``.
        name (str): the parameter name used in error messages. Default: "data_type".

    Returns:
        numpy.dtype, the dtype (``<U`` for strings).

    Raises:
        TypeError: if `value` names no data type.

    Examples:
        >>> from headrace.common import dtype as mstype
        >>> to_numpy_dtype(mstype.uint8), to_numpy_dtype("float32")
        (dtype('uint8'), dtype('float32'))
    """
    if isinstance(value, Type):
        return value.np_dtype
    if isinstance(value, np.dtype):
        return value
    if isinstance(value, str) or (isinstance(value, type) and (issubclass(value, np.generic)
                                                               or value in (bool, int, float, str))):
        try:
            return np.dtype(value)
        except TypeError:
            pass
    raise TypeError(f"Argument {name} with value {value!r} is not of type "
                    f"[{Type!r}, {np.dtype!r}], but got {type(value)}.")
