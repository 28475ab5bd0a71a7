"""Pickling for objects that travel to worker processes (fork server, spawn).

A plain object unpickled with ``__dict__.update(state)`` has its attributes in a materialised dict,
which CPython 3.11+ reads about 1.7x slower than the inline values ``__init__`` leaves; setting
them one by one keeps them inline (NOTE [ attributes of unpickled objects ] in
``_engine/exec/launch.py``). Per-row objects (sources, readers) are read in the hot path.
"""
from __future__ import annotations

import threading
from typing import Any


def set_attributes(obj: Any, state: dict) -> None:
    """``obj.__dict__.update(state)`` without materialising ``obj.__dict__``."""
    for name, value in state.items():
        object.__setattr__(obj, name, value)


class FreshLock:
    """For classes holding a ``threading.Lock`` in ``_lock``: pickled without it, unpickled with a
    new one. A class that resets more on the way (caches, descriptors) returns ``self._state(name=
    value, ...)`` from its own ``__getstate__``."""

    _lock: threading.Lock

    def _state(self, **reset: Any) -> dict:
        state = dict(self.__dict__)
        state.update(_lock=None, **reset)
        return state

    def __getstate__(self) -> dict:
        return self._state()

    def __setstate__(self, state: dict) -> None:
        set_attributes(self, state)
        self._lock = threading.Lock()
