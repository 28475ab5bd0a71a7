"""The array type iterators return when ``output_numpy=False``.

A NumPy array that also answers ``asnumpy()``, so code written for MindSpore's Tensor keeps
working while every NumPy function still accepts it.
"""
from __future__ import annotations

import numpy as np


class Tensor(np.ndarray):
    """An ndarray with MindSpore Tensor's most used accessors."""

    def asnumpy(self) -> np.ndarray:
        return self.view(np.ndarray)

    @property
    def dtype_name(self) -> str:
        return str(self.dtype)

    def __repr__(self) -> str:
        return "Tensor(" + repr(self.view(np.ndarray))[6:]
