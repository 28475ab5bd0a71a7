"""``default_convert`` and ``default_collate``: MindSpore 2.10's rules for turning samples into
batches (``Tensor`` is ``headrace.dataset.Tensor``, an ndarray)."""
from __future__ import annotations

import copy
from collections.abc import Mapping, MutableMapping, MutableSequence, Sequence
from typing import Any

import numpy as np

from headrace.dataset._tensor import Tensor

_NO_TENSOR_KINDS = frozenset("SaUOV")  # text, bytes and objects stay NumPy arrays


_SCALAR_LIST_DTYPES = {np.dtype(np.int32): np.dtype(np.int64), np.dtype(np.float64): np.dtype(np.float32)}


def _no_tensor(a: np.ndarray) -> bool:
    return a.dtype.kind in _NO_TENSOR_KINDS


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def _rebuild_mapping(like: Mapping, values: dict) -> Mapping:
    try:
        if isinstance(like, MutableMapping):
            out = copy.copy(like)
            out.update(values)
            return out
        return type(like)(values)
    except TypeError:  # a mapping type that cannot be built from a dict
        return values


def _rebuild_sequence(like: Sequence, values: list) -> Sequence:
    try:
        if isinstance(like, MutableSequence):
            out = copy.copy(like)
            for i, v in enumerate(values):
                out[i] = v
            return out
        return type(like)(values)
    except TypeError:
        return values


def default_convert(data):
    """Converts one sample when batching is off: NumPy arrays (but text, bytes and objects) and
    NumPy scalars become Tensors; mappings and sequences are converted item by item (a plain
    tuple becomes a list); anything else is returned unchanged.

    Examples:
        >>> import numpy as np
        >>> default_convert({"x": np.array([1, 2]), "t": (np.int32(3), "s")})
        {'x': Tensor([1, 2]), 't': [Tensor(3, dtype=int32), 's']}
    """
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.number, np.bool_)):
        return Tensor(data)
    if isinstance(data, np.ndarray):
        return data if _no_tensor(data) else data.view(Tensor)
    if isinstance(data, Mapping):
        return _rebuild_mapping(data, {k: default_convert(data[k]) for k in data})
    if _is_namedtuple(data):
        return type(data)(*(default_convert(v) for v in data))
    if isinstance(data, tuple):
        return [default_convert(v) for v in data]
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(v) for v in data])
    return data


def _stack(batch: list) -> Tensor:
    return np.stack([np.asarray(b) for b in batch], axis=0).view(Tensor)


def _collate_array(batch: list) -> Tensor:
    if _no_tensor(batch[0]):
        raise TypeError(f"NumPy arrays with dtype {batch[0].dtype} are not supported for collation.")
    return _stack(batch)


def default_collate(batch):
    """Joins a list of samples into a batch along a new first axis: Tensors, arrays and NumPy
    scalars stack into a Tensor, Python floats into a float64 Tensor, ints (and bools) into a
    Tensor; str and bytes stay a sequence of them; mappings collate key by key, sequences
    position by position (a tuple's positions come back as a list).

    Raises:
        TypeError: an element of a type that cannot be collated (or a text array).
        RuntimeError: sequences of different lengths in the batch.

    Examples:
        >>> default_collate([{"x": 1, "y": 0.5}, {"x": 2, "y": 1.5}])
        {'x': Tensor([1, 2]), 'y': Tensor([0.5, 1.5])}
    """
    elem = batch[0]
    if isinstance(elem, np.ndarray):  # Tensor included
        return _collate_array(batch)
    if isinstance(elem, (np.bool_, np.number, np.object_)):
        arr = np.array(batch)
        # MindSpore builds Tensor(list of NumPy scalars): int32 comes out int64, float64 float32
        return arr.astype(_SCALAR_LIST_DTYPES.get(arr.dtype, arr.dtype)).view(Tensor)
    if isinstance(elem, float):
        return np.array(batch, dtype=np.float64).view(Tensor)
    if isinstance(elem, int):
        return Tensor(list(batch))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, Mapping):
        return _rebuild_mapping(elem, {k: default_collate([d[k] for d in batch]) for k in elem})
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, Sequence):
        if len({len(e) for e in batch}) > 1:
            raise RuntimeError("Each element in list of batch must be of equal size.")
        columns = [default_collate(s) for s in zip(*batch)]
        return columns if isinstance(elem, tuple) else _rebuild_sequence(elem, columns)
    raise TypeError(f"Cannot find the appropriate collate function for type {type(elem)} in collate_fn_map.")
