"""Feeding JAX from headrace (``pip install headrace[jax]``).

``Loader`` reads a headrace dataset into JAX arrays with two buffers: a CPU buffer (a background
thread keeps ``cpu_buffer`` batches read ahead) and a device buffer (``device_buffer`` batches
already dispatched to the devices, whose copies run while the training step runs). With
``sharding=`` each batch becomes a global array built from every process's local batch
(``jax.make_array_from_process_local_data``). With several JAX processes each reads its own
shard. ``state_dict`` / ``load_state_dict`` checkpoint the position after the last batch
delivered; ``headrace.jax.orbax_handler`` saves that with Orbax.

Examples:
    >>> import numpy as np, headrace.dataset as ds
    >>> from headrace.jax import Loader
    >>> data = ds.NumpySlicesDataset({"x": np.arange(5, dtype=np.float32)}, shuffle=False).batch(2)
    >>> [b[0].tolist() for b in Loader(data)]
    [[0.0, 1.0], [2.0, 3.0], [4.0]]
"""
try:
    import jax  # noqa: F401 - absolute: the real jax, not this package
except ImportError as e:  # pragma: no cover - exercised only where jax is missing
    raise ImportError("headrace.jax needs JAX: pip install headrace[jax]") from e

from headrace.jax._loader import Loader

__all__ = ["Loader"]
