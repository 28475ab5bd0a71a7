"""What the upper modules of ``headrace.dataset`` lend the lower ones, so that no import goes up.

``Dataset`` (``_datasets.py``) and the helpers it builds on (``_cache_plan``, ``_dataset_reading``,
``_autotune_file``) sit below the classes that subclass ``Dataset`` (sources, ``SyncWaitDataset``,
``TransferDataset``) and below the JSON layer (``_serdes``), yet a few of their methods need one of
those. Each upper module hands it here when it is imported (``headrace.dataset``'s ``__init__``
imports them all before any dataset exists), and the lower module asks for it by name when called.
"""
from __future__ import annotations

from typing import Any

__all__ = ["get", "provide"]

_PROVIDED: dict[str, Any] = {}


def provide(**names: Any) -> None:
    """Records ``names`` (name -> class or function) for the lower modules."""
    _PROVIDED.update(names)


def get(name: str) -> Any:
    """What an upper module provided under ``name``.

    Raises:
        RuntimeError: no module provided ``name`` (``headrace.dataset`` was not fully imported).
    """
    try:
        return _PROVIDED[name]
    except KeyError:
        raise RuntimeError(f"headrace.dataset: {name} is not provided; its module was not imported "
                           "(import headrace.dataset)") from None
