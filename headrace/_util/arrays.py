"""Turning the values user code produces into the NumPy arrays a pipeline carries, and allocating
the large ones a pipeline makes (batches) where frameworks can use them without a copy."""
from __future__ import annotations

import math
import os
import threading
from threading import get_ident
from typing import Any

import numpy as np

_ndarray = np.ndarray
ALIGN = 64            # bytes: the alignment XLA's CPU client needs to use host memory as it is
ALIGN_FROM = 1 << 20  # arrays of at least this many bytes are allocated aligned


def empty_aligned(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """``np.empty(shape, dtype)``, starting on an ``ALIGN``-byte boundary when it holds at least
    ``ALIGN_FROM`` bytes (smaller ones are plain ``np.empty``).

    NumPy's large arrays start 16 bytes into a page (the allocator's header). ``jax.device_put`` on
    a CPU device uses a 64-byte aligned array as it is and copies any other: W2's 77 MB batch took
    3 ms aligned against 70 ms unaligned (2026-11-27). A large array is writeable and
    C-contiguous, and its memory may be that of an array freed before (see ``Buffers``): like
    ``np.empty``, its values are whatever was there.
    """
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize  # (math.prod: np.prod costs 6 us a call)
    if nbytes < ALIGN_FROM:
        return np.empty(shape, dtype)
    return np.asarray(_Lease(BUFFERS.take(nbytes + ALIGN), nbytes)).view(dtype).reshape(shape)


class _Lease:
    """The owner (``base``) of a large array's memory and of every view of it: NumPy refers views
    to the object that lent an array its memory. When the last of them goes, so does the lease,
    which gives the buffer back to ``BUFFERS``."""

    __slots__ = ("buf", "__array_interface__")

    def __init__(self, buf: np.ndarray, nbytes: int) -> None:
        self.buf = buf
        address = buf.ctypes.data
        self.__array_interface__ = {"data": (address + -address % ALIGN, False), "shape": (nbytes,),
                                    "typestr": "|u1", "version": 3}

    def __del__(self) -> None:
        try:
            BUFFERS.give_back(self.buf)
        except Exception:  # noqa: BLE001, S110 - at interpreter exit the module may be gone
            pass


class Buffers:
    """The memory of ``empty_aligned``'s large arrays, reused once no array refers to it.

    A new 77 MB batch (W2) cost ~18 ms more than one written into memory used before: glibc maps
    every allocation over 32 MB anew, and the kernel faults in and zeroes each page, with worker
    threads contending for the process's memory map. Collating W2's batches of 128 took 0.43
    CPU-seconds an epoch against 0.14 for batches of 32 (which glibc's heap reuses); reusing the
    memory made W2 over 2 thread workers ~14% faster an epoch (2026-11-28, pairs of epochs).

    An array's memory comes back when its ``_Lease`` is freed, which is when the last array viewing
    that memory is (slices, reshapes, ``torch.from_numpy`` and JAX's zero-copy CPU arrays all keep
    a reference to the array they were made from). The free buffers kept, the last given back, are
    as many as were lent at once at the most (``KEEP`` at least, ``KEEP_MAX`` at the most); that
    is the memory that stays with the process after a pipeline ends. Fewer lost the buffers of
    each epoch's end: a pipeline drains then, and the next epoch refills as many batches as were in
    flight (W2 over 2 workers: 5 at the most, so 3-4 of its 16 batches an epoch were new with 2 kept).
    """

    KEEP = 2
    KEEP_MAX = 6

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner = 0  # the thread changing the free list, while it does
        self._free: list[np.ndarray] = []   # the last given back last
        self._lent = 0  # buffers taken and not given back
        self._peak = 0  # the most lent at once

    def take(self, nbytes: int) -> np.ndarray:
        """A uint8 buffer of ``nbytes``: a free one of that size, else a new one."""
        with self._lock:
            self._owner = get_ident()
            try:
                self._lent += 1
                self._peak = max(self._peak, self._lent)
                free = self._free
                for i in range(len(free) - 1, -1, -1):
                    if free[i].nbytes == nbytes:
                        return free.pop(i)
            finally:
                self._owner = 0
        return np.empty(nbytes, np.uint8)

    def give_back(self, buf: np.ndarray) -> None:
        me = get_ident()
        if self._owner == me:
            # A lease freed by a garbage collection that ran inside take() or give_back() in this
            # thread: the list is being searched or cut, so the buffer is freed, not kept (this
            # thread holds the lock).
            self._lent = max(0, self._lent - 1)  # (a child's leases from before a fork: _forked)
            return
        with self._lock:
            self._owner = me
            try:
                self._lent = max(0, self._lent - 1)
                self._free.append(buf)
                del self._free[:-min(self.KEEP_MAX, max(self.KEEP, self._peak))]
            finally:
                self._owner = 0

    def clear(self) -> None:
        """Frees the buffers kept."""
        with self._lock:
            self._free = []
            self._peak = self._lent

    def _forked(self) -> None:
        self.__init__()  # type: ignore[misc]  # a child must not inherit a lock a parent's thread held


BUFFERS = Buffers()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=BUFFERS._forked)


def to_array(value: Any) -> np.ndarray | dict:
    """Converts one column value with MindSpore's rules (as under NumPy 1).

    int -> int64, float -> float64, bool -> bool, str -> '<U', bytes -> '|S', list/tuple -> array,
    NumPy scalar -> 0-d array of its dtype, PIL image -> HWC uint8 array, ndarray -> itself,
    dict -> itself (a Python object column).
    """
    if type(value) is _ndarray:
        return value
    if isinstance(value, _ndarray):  # subclasses (our Tensor) become plain arrays
        return value.view(_ndarray)
    if isinstance(value, bool):
        return np.array(value, dtype=np.bool_)
    if isinstance(value, int):
        return np.array(value, dtype=np.int64)
    if isinstance(value, float):
        return np.array(value, dtype=np.float64)
    if isinstance(value, (str, bytes, np.generic)):
        return np.array(value)
    if isinstance(value, dict):
        return value  # a dict travels as one Python object column (map functions read it)
    if hasattr(value, "asnumpy"):
        return np.asarray(value.asnumpy())
    if hasattr(value, "getbands") and hasattr(value, "mode"):  # PIL image, without importing PIL
        return np.asarray(value)
    if isinstance(value, (list, tuple)):
        arr = np.array(value)
        if arr.dtype == np.int32 and _all_python_ints(value):
            arr = arr.astype(np.int64)  # NumPy 1 on Windows-like platforms picks int32; keep int64
        return arr
    arr = np.asarray(value)
    if arr.dtype == object:
        raise TypeError(f"cannot convert a value of type {type(value).__name__} to a NumPy array of "
                        "numbers, strings or bytes")
    return arr


def _all_python_ints(value: Any) -> bool:
    return all(isinstance(v, int) or (isinstance(v, (list, tuple)) and _all_python_ints(v)) for v in value)

