"""Warnings raised in a worker process, delivered to the main process as warnings.

A worker's own ``warnings`` filters and stderr are not the user's: a decode warning printed there
never meets the main process's ``warnings.simplefilter("error")``, ``catch_warnings(record=True)``
or ``pytest.warns``. So a worker lets every warning through (``always``) into a list instead of
printing it (``capture``); each task's result carries the warnings raised since the previous one
(``take``), and the main process raises them again with ``warnings.warn_explicit`` under its own
filters (``reissue``), with the worker's category, text, file, line and module. What the filters
then do (show, ignore, raise) happens in the thread that reads the result.

Within one task, repeats of the same warning (category, text, file, line) travel once, and at most
``MAX_PER_TASK`` distinct ones travel; the rest are counted in one last ``RuntimeWarning``.
"""
from __future__ import annotations

import pickle
import sys
import warnings
from typing import Any

MAX_PER_TASK = 64

# (category, text, filename, lineno, module) of each warning raised since the last take().
Record = tuple[type, str, str, int, str]
_caught: dict[tuple[type, str, str, int], str] = {}
_dropped = [0]
_modules: dict[str, str] = {}  # filename -> module name
_picklable: dict[type, bool] = {}
# The main process's registry for reissued warnings: the "default" action shows each (text,
# category, line) once, as a module's own __warningregistry__ would.
_REGISTRY: dict[Any, Any] = {}


def capture() -> None:
    """In a worker process, before any task: every warning from now on is recorded, not printed."""
    warnings.simplefilter("always")
    warnings.showwarning = _record


def _record(message: Warning | str, category: type[Warning], filename: str, lineno: int,
            file: Any = None, line: str | None = None) -> None:
    key = (category, str(message), filename, lineno)
    if key in _caught:
        return
    if len(_caught) >= MAX_PER_TASK:
        _dropped[0] += 1
        return
    _caught[key] = _module_of(filename)


def _module_of(filename: str) -> str:
    """The module a file belongs to (what ``warnings.warn`` puts in a filter's module field)."""
    name = _modules.get(filename)
    if name is None:
        name = next((n for n, m in list(sys.modules.items()) if getattr(m, "__file__", None) == filename), "")
        if not name:
            name = filename[:-3] if filename.endswith(".py") else filename  # warn_explicit's own guess
        _modules[filename] = name
    return name


def take() -> list[Record] | None:
    """The warnings raised since the last call (None: none), ready to travel with a result."""
    if not _caught and not _dropped[0]:
        return None
    out = [(_sendable(cat), text if _sendable(cat) is cat else f"{cat.__name__}: {text}", filename, lineno, module)
           for (cat, text, filename, lineno), module in _caught.items()]
    if _dropped[0]:
        out.append((RuntimeWarning, f"{_dropped[0]} more warnings of one worker task were dropped "
                    f"(at most {MAX_PER_TASK} distinct ones travel per task).", __file__, 0, __name__))
    _caught.clear()
    _dropped[0] = 0
    return out


def _sendable(category: type) -> type:
    """``category``, or UserWarning if it cannot be pickled by reference (its name then goes into
    the text)."""
    ok = _picklable.get(category)
    if ok is None:
        try:
            ok = pickle.loads(pickle.dumps(category)) is category
        except Exception:  # noqa: BLE001 - a class local to a function, or of another __main__
            ok = False
        _picklable[category] = ok
    return category if ok else UserWarning


def reissue(records: list[Record]) -> None:
    """In the main process: raises a worker's warnings again under this process's filters."""
    for category, text, filename, lineno, module in records:
        warnings.warn_explicit(text, category, filename, lineno, module=module, registry=_REGISTRY)
