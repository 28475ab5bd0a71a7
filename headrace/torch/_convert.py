"""NumPy batches to torch tensors, and the transfer the device queue runs for each batch.

``torch.from_numpy`` shares the array's memory (no copy) when the array is writeable, in native
byte order and has no negative strides, which is what headrace's batches are (the engine builds
each batch column as one fresh contiguous array). A copy happens for a read-only array (a row
of a ``NumpySlicesDataset`` without ``batch`` can be a view of read-only user data; torch
refuses to share read-only memory without a warning), a byte-swapped dtype or negative strides.
Each of these copies is reported once per process and cause by a :class:`CopyWarning`. Text and
object columns (NumPy ``U``/``S``/``O`` arrays) have no torch type: they stay NumPy arrays. Dict
values (Python-object columns) are converted item by item.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch

_TENSOR_KINDS = frozenset("biufc")
_ndarray = np.ndarray
_from_numpy = torch.from_numpy
_SHARED: dict = {}  # dtype -> whether torch.from_numpy shares an array of it (its kind and byte order)


class CopyWarning(UserWarning):
    """A NumPy array was copied to make a tensor: torch could not share its memory."""


def _copied(value: np.ndarray) -> np.ndarray:
    """A copy of ``value`` that ``torch.from_numpy`` can share (native byte order, writeable,
    contiguous), with a :class:`CopyWarning` that says why."""
    if not value.flags.writeable:
        why = "is read-only (torch shares only writeable memory)"
    elif not value.dtype.isnative:
        why = "is not in this machine's byte order"
    else:
        why = "has negative strides (a reversed view)"
    # (one text per cause: Python's default filter shows it once per process)
    warnings.warn(f"headrace.torch: a NumPy array {why}, so its tensor is a copy, not a view of its memory.",
                  CopyWarning, stacklevel=4)
    return np.array(value, dtype=value.dtype.newbyteorder("="))


def to_tensor(value: Any) -> Any:
    """``value`` (an iterator's NumPy output) as a torch tensor where torch has its type.

    Examples:
        >>> import numpy as np
        >>> a = np.arange(3)
        >>> t = to_tensor(a)
        >>> t.tolist(), t.data_ptr() == a.ctypes.data   # shared memory, no copy
        ([0, 1, 2], True)
    """
    return to_tensors((value,))[0]


def to_tensors(row: Any) -> list:
    """Each value of ``row`` (a list or tuple) as :func:`to_tensor` makes it.

    An array of a native numeric dtype that is writeable and C-contiguous (the engine's batch
    columns) costs one dict lookup and two flag reads before ``torch.from_numpy``: 2.1-2.6 us a
    batch of two columns, against 5.7 us with the full checks of each value (warm, on the 2-core
    VM)."""
    out = []
    for v in row:
        if type(v) is _ndarray:
            shared = _SHARED.get(v.dtype)
            if shared is None:
                shared = _SHARED[v.dtype] = v.dtype.kind in _TENSOR_KINDS and v.dtype.isnative
            if shared:
                flags = v.flags
                # (C-contiguous: no negative strides)
                if flags.writeable and (flags.c_contiguous or min(v.strides, default=0) >= 0):
                    out.append(_from_numpy(v))
                    continue
        out.append(_any_to_tensor(v))
    return out


def _any_to_tensor(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _TENSOR_KINDS:
            return value
        if not value.flags.writeable or not value.dtype.isnative or min(value.strides, default=0) < 0:
            value = _copied(value)
        return torch.from_numpy(value)
    if isinstance(value, dict):
        return {k: to_tensor(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_tensors(value))
    return value


def usable_device(device: Any) -> torch.device:
    """``torch.device(device)``, checked to hold a tensor here (this torch build, this machine):
    a ValueError naming ``device`` otherwise, rather than torch's error at the first batch."""
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as e:
        raise ValueError(f"device must name a torch device ('cpu', 'cuda', 'cuda:1', an accelerator index or a "
                         f"torch.device), but got {device!r}: {e}") from None
    if dev.type != "cpu":
        try:
            torch.empty(0, device=dev)
        except Exception as e:  # noqa: BLE001 - each backend has its own (AssertionError, RuntimeError, ...)
            raise ValueError(f"device={device!r}: torch cannot place tensors on {dev} here "
                             f"({type(e).__name__}: {e})") from None
    return dev


def accelerator_available() -> bool:
    acc = getattr(torch, "accelerator", None)
    if acc is not None and hasattr(acc, "is_available"):
        return bool(acc.is_available())
    return torch.cuda.is_available()


def pinned(t: torch.Tensor) -> torch.Tensor:
    """A copy of CPU tensor ``t`` in pinned memory (torch's caching host allocator).

    NumPy does the copy: one thread, with the GIL let go. ``Tensor.pin_memory()`` copies with
    torch's intra-op thread pool, on every core of the host (torch's own DataLoader sets its pinning
    thread to one intra-op thread for that reason; headrace leaves torch's thread settings alone).
    Measured on an H100 host feeding W2 at 8 workers: the main process used 1.1-1.5 ms of CPU per
    image with ``pin_memory()``, 0.30 ms with this copy.
    """
    try:
        src = t.numpy()
    except (TypeError, RuntimeError):  # a dtype NumPy lacks, or a tensor that needs grad
        return t.pin_memory()
    out = torch.empty(t.shape, dtype=t.dtype, pin_memory=True)
    np.copyto(out.numpy(), src)
    return out


def _map_tensors(value: Any, fn) -> Any:
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, dict):
        return {k: _map_tensors(v, fn) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_map_tensors(v, fn) for v in value)
    return value


class Transfer:
    """What the device queue thread does to a batch: tensors, pinned, then copied to ``device``.

    On a CUDA device the copies are ``non_blocking`` on a side stream of the queue's own, and an
    event recorded after them; ``arrive`` (on the training thread) makes the current stream wait
    for that event and tells the allocator the tensors are used there. On any other device the
    same path runs with plain ``.to(device)`` (a no-op for CPU tensors going to the CPU).
    """

    def __init__(self, device: Any, pin_memory: bool) -> None:
        self.device = None if device is None else usable_device(device)
        self.pin = bool(pin_memory)
        if self.pin and not accelerator_available():
            warnings.warn("headrace.torch.Loader: pin_memory=True but no accelerator is available; pinned "
                          "memory is not used.", UserWarning, stacklevel=3)
            self.pin = False
        self.cuda = self.device is not None and self.device.type == "cuda"
        # CPU tensors with nothing to pin: a few microseconds a batch, made by the pipeline's
        # prefetch thread or the loop's (``_util/device_queue.Direct``), not by a thread of its own
        self.inline = not self.pin and (self.device is None or self.device.type == "cpu")
        self.stream = torch.cuda.Stream(self.device) if self.cuda else None

    def __call__(self, row: list) -> Any:
        """``row`` transferred: its tensors for an ``inline`` transfer, else ``(value, event)``
        for ``arrive``."""
        value = to_tensors(row)
        if self.inline:
            return value
        if self.pin:
            value = _map_tensors(value, pinned)
        if self.device is None:
            return value, None
        if self.stream is None:
            return _map_tensors(value, lambda t: t.to(self.device)), None
        with torch.cuda.stream(self.stream):
            value = _map_tensors(value, lambda t: t.to(self.device, non_blocking=True))
            event = torch.cuda.Event()
            event.record(self.stream)
        return value, event

    def arrive(self, value: Any, event: Any) -> Any:
        """On the training thread: ``value`` ready to use on the current stream."""
        if event is not None:
            current = torch.cuda.current_stream(self.device)
            current.wait_event(event)
            _map_tensors(value, lambda t: t.record_stream(current))
        return value
