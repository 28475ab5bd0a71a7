"""Feeding PyTorch from headrace (``pip install headrace[torch]``).

``Loader`` reads a headrace dataset as torch tensors, with device placement and pinning on a
background thread (a bounded device queue), ``len()``, ``set_epoch`` and a checkpoint that
``torch.distributed.checkpoint`` saves (``state_dict`` / ``load_state_dict``). Under
``torch.distributed`` each rank reads its own shard. ``as_iterable_dataset`` wraps a dataset for
code that keeps ``torch.utils.data.DataLoader``.

Examples:
    >>> import numpy as np, headrace.dataset as ds
    >>> from headrace.torch import Loader
    >>> data = ds.NumpySlicesDataset({"x": np.arange(6, dtype=np.float32)}, shuffle=False).batch(4)
    >>> [b[0].tolist() for b in Loader(data)]
    [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0]]
"""
try:
    import torch  # noqa: F401 - absolute: the real torch, not this package
except ImportError as e:  # pragma: no cover - exercised only where torch is missing
    raise ImportError("headrace.torch needs PyTorch: pip install headrace[torch]") from e

from headrace.torch._convert import CopyWarning, to_tensor, to_tensors
from headrace.torch._iterable import as_iterable_dataset
from headrace.torch._loader import Loader

__all__ = ["CopyWarning", "Loader", "as_iterable_dataset", "to_tensor", "to_tensors"]
