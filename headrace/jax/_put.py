"""Putting NumPy batches on one JAX device with less of JAX's Python around each copy.

``jax.device_put(array, device)`` spends ~60 us per array in JAX's Python layers (tree handling,
sharding and abstract-value checks) before the C++ copy, with the GIL held. On the device thread of
a GIL-bound pipeline (W1: a Python map on threads, 256-row batches), that made the thread the
bottleneck: headrace.jax delivered 0.71-0.73x of the NumPy output, against 0.99x with the put
removed. JAX's own NumPy path ends in ``pxla.batched_device_put(aval, sharding, [array], [device],
committed)``, a thin Python wrapper of the C++ ``xla_client.batched_device_put``; calling the C++
function directly, with the abstract value kept per shape and dtype, costs ~10 us per array
(~19 us through the wrapper with a new abstract value each time).

That function is JAX's internal API, so ``DevicePut`` uses it for a dtype only after checking,
for the first array of that dtype each epoch, that it gives what ``jax.device_put`` gives for the
first values of that array: the same type, abstract value, sharding, committed flag and values (a
dtype JAX converts is converted by NumPy first, as JAX does it). Otherwise (another JAX version,
any error) it calls ``jax.device_put``. The device, for ``device=None``, is the one
``jax.device_put`` picked in that check (under the default device the loader was made with),
uncommitted as JAX leaves it.
"""
from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as np

try:  # JAX's internals; their absence only means the public path
    from jax._src import core as _core
    from jax._src.interpreters import pxla as _pxla
except ImportError:  # pragma: no cover - a JAX version without them
    _core = _pxla = None
try:
    from jax._src.lib import xla_client as _xc
    _batched_put = _xc.batched_device_put
except (ImportError, AttributeError):  # pragma: no cover - then the Python wrapper
    _batched_put = _pxla.batched_device_put if _pxla is not None else None

ARRAY_KINDS = frozenset("biufc")  # the dtype kinds put on devices (other columns stay NumPy arrays)
_ndarray = np.ndarray
MAX_AVALS = 64  # abstract values kept (one per batch shape and dtype: a few in a pipeline)
PROBE = 64  # values of a dtype's first array that the direct path is checked on


class DevicePut:
    """``put(array)`` = ``jax.device_put(array, device)`` for an array of numbers (dtype kind
    ``biufc``, which the Loader checks), through the direct path where it was checked to agree
    (see the module docstring). One instance serves the puts of one epoch.

    A dtype JAX converts (int64 to int32, float64 to float32, ... unless 64-bit mode is on) is
    converted here by NumPy, as JAX itself does it (``np.asarray(x, canonical dtype)``: the same
    values, the same overflow warning), then put directly. Through ``jax.device_put``, the loader
    cost 166 us a batch of a float32 and an int64 column (warm), against 20 us now. Each dtype's
    first array of an epoch takes the public path, and the direct path is used for that dtype
    only if it gave the same array."""

    def __init__(self, device: jax.Device | None, default: Any = None) -> None:
        self.device = device
        # for device None: the default device (``jax.default_device``) in force where the loader
        # was made, which the threads that put do not see (it is per thread)
        self._default = default
        self._fast: Callable[[np.ndarray], Any] | None = None
        self._broken = False  # the direct path disagreed or failed: public puts only
        self._target: dict = {}  # dtype -> the dtype JAX keeps it as, once checked to agree
        self._tried: set = set()  # dtypes checked (whether they agreed or not)

    def __call__(self, value: np.ndarray) -> Any:
        return self.row((value,))[0]

    def row(self, row: Any) -> list:
        """Each array of numbers in ``row`` (a list or tuple) put as ``self(array)`` puts it; other
        values (text, Python objects) as they are. An array whose dtype took the direct path costs
        no call of its own: a frame fewer per column, on the loop's side of a batch."""
        out = []
        target_of, fast = self._target.get, self._fast
        for v in row:
            if type(v) is _ndarray:
                target = target_of(v.dtype)
                if target is not None:
                    out.append(fast(v if target is v.dtype else np.asarray(v, target)))  # type: ignore[misc]
                    continue
            if isinstance(v, np.ndarray) and v.dtype.kind in ARRAY_KINDS:
                out.append(self._public(v))
                target_of, fast = self._target.get, self._fast  # (the call may have checked a dtype)
            else:
                out.append(v)
        return out

    def _public(self, value: np.ndarray) -> Any:
        """``jax.device_put(value, device)``; the first array of a dtype also checks the direct
        path for that dtype."""
        out = self._device_put(value)
        dtype = value.dtype
        if dtype not in self._tried and not self._broken:
            self._tried.add(dtype)
            # checked on a few of its values: comparing a whole 77 MB batch (W2) cost ~0.1-0.5 s
            probe = np.array(value.reshape(-1)[:PROBE])
            self._check(probe, self._device_put(probe))
        return out

    def _device_put(self, value: np.ndarray) -> Any:
        if self.device is None and self._default is not None:
            with jax.default_device(self._default):
                return jax.device_put(value)
        return jax.device_put(value, self.device)

    def _check(self, value: np.ndarray, reference: Any) -> None:
        """Registers ``value``'s dtype for the direct path if it reproduces ``reference``
        (``jax.device_put(value, self.device)``)."""
        canonical = np.dtype(jax.dtypes.canonicalize_dtype(value.dtype))
        if self._fast is None:
            self._fast = _direct_put(reference)
        converted = value if canonical == value.dtype else np.asarray(value, canonical)
        if self._fast is not None and _agrees(self._fast, converted, reference):
            self._target[value.dtype] = value.dtype if canonical == value.dtype else canonical
        elif canonical == value.dtype:  # the direct path itself is wrong here: never use it
            self._broken, self._fast, self._target = True, None, {}


def _direct_put(reference: Any) -> Callable[[np.ndarray], Any] | None:
    """The direct put onto ``reference``'s device, sharding and committed flag (what
    ``jax.device_put`` made of an array); None without JAX's internals."""
    if _core is None or _batched_put is None:  # pragma: no cover
        return None
    try:
        sharding = reference.sharding
        devices = [next(iter(reference.devices()))]
        committed = reference._committed
    except Exception:  # noqa: BLE001 - any difference in JAX's internals means the public path
        return None
    shaped, put = _core.ShapedArray, _batched_put
    avals: dict = {}

    def fast(x: np.ndarray) -> Any:
        key = (x.shape, x.dtype)
        aval = avals.get(key)
        if aval is None:
            if len(avals) >= MAX_AVALS:
                avals.clear()
            aval = avals[key] = shaped(x.shape, x.dtype)
        return put(aval, sharding, [x], devices, committed)
    return fast


def _agrees(fast: Callable[[np.ndarray], Any], value: np.ndarray, reference: Any) -> bool:
    """Whether ``fast(value)`` is the array ``reference`` is: type, abstract value, sharding,
    committed flag and values."""
    try:
        trial = fast(value)
        return (type(trial) is type(reference) and trial.aval == reference.aval
                and trial.sharding == reference.sharding and trial._committed == reference._committed
                and np.array_equal(np.asarray(trial), np.asarray(reference), equal_nan=True))
    except Exception:  # noqa: BLE001 - any difference in JAX's internals means the public path
        return False
