"""Pickling for objects that travel to worker processes (fork server, spawn).

A plain object unpickled with ``__dict__.update(state)`` has its attributes in a materialised dict,
which CPython 3.11+ reads about 1.7x slower than the inline values ``__init__`` leaves; setting
them one by one keeps them inline (NOTE [ attributes of unpickled objects ] in
``_engine/exec/launch.py``). Per-row objects (sources, readers) are read in the hot path.
"""
from __future__ import annotations

import linecache
import marshal
import os
import threading
import types
from typing import Any

from headrace._util.forksafe import fork_safe


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
        self._lock = fork_safe(threading.Lock())


# NOTE [ code objects keep their file and lines ]
# cloudpickle (3.1.3 and later) sends a function's code with ``co_filename = "<dynamic-code>"``, so
# a worker's traceback or stall report of a user function showed ``File "<dynamic-code>"`` instead
# of the user's script and line. Code objects travel here as ``marshal`` data instead, which keeps
# every field (filename, line table, nested code) whatever the cloudpickle version; a worker runs
# the same interpreter as its parent, so the format always matches. Code from a file that is not
# on disk (a notebook cell, ``<stdin>``) carries its source lines as the parent's ``linecache``
# has them, and the worker registers them, so its tracebacks quote the lines too.

def reduce_code(code: types.CodeType) -> tuple:
    """Pickle reduction of a code object that keeps its filename and, for code whose file is not
    on disk, its source lines (NOTE [ code objects keep their file and lines ])."""
    filename = code.co_filename
    lines = None
    if not os.path.isfile(filename):
        lines = linecache.getlines(filename) or None
    return rebuild_code, (marshal.dumps(code), lines)


def rebuild_code(data: bytes, lines: list[str] | None) -> types.CodeType:
    """The code object of :func:`reduce_code`; its source lines, if sent, go into ``linecache``."""
    code = marshal.loads(data)
    if lines and code.co_filename not in linecache.cache:
        # mtime None: linecache.checkcache keeps the entry (there is no file to compare with)
        linecache.cache[code.co_filename] = (sum(map(len, lines)), None, lines, code.co_filename)
    if not isinstance(code, types.CodeType):
        raise TypeError(f"expected a code object, got {type(code).__name__}")
    return code
