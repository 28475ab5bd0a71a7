"""Stable fingerprints of values, functions and files, for cache keys.

``fingerprint(*parts)`` hashes a canonical encoding of its arguments with SHA-256. The encoding
is the same in every process and every run (no ``id()``, no ``hash()`` of strings), so two
processes building the same pipeline get the same key:

* None, bools, numbers, strings, bytes: their type and value;
* lists, tuples, dicts (sorted by the encoding of their keys), sets: element by element;
* NumPy arrays and scalars: dtype, shape and bytes;
* functions: module, qualified name, byte code, constants, names, defaults, closure values and
  the module-level values the code reads (so editing a lambda's body or a constant it uses
  changes the key); builtins and classes: module and qualified name;
* other objects: their class and their attributes (``__dict__`` and ``__slots__``), recursively,
  leaving out attributes whose name starts with ``_cache`` (memo fields), or their pickle when
  they have no attributes.

``file_stamp(path)`` describes a file or, for a folder, every file under it: names relative to
the root, sizes and modification times in nanoseconds. Any edit, touch, rename or new file
changes it.
"""
from __future__ import annotations

import enum
import hashlib
import os
import pickle
import types
from typing import Any

import numpy as np

_MAX_DEPTH = 24


def fingerprint(*parts: Any) -> str:
    """The SHA-256 hex digest of the canonical encoding of ``parts``."""
    h = hashlib.sha256()
    for part in parts:
        _feed(h, part, 0, set())
    return h.hexdigest()


def _tag(h: Any, tag: str, payload: bytes = b"") -> None:
    h.update(tag.encode())
    h.update(len(payload).to_bytes(8, "little"))
    h.update(payload)


def _feed(h: Any, value: Any, depth: int, seen: set[int]) -> None:
    if depth > _MAX_DEPTH:
        _tag(h, "deep", type(value).__qualname__.encode())
        return
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, enum.Enum)):
        _tag(h, type(value).__qualname__, repr(value).encode())
        return
    if isinstance(value, np.ndarray):
        _feed_array(h, value)
        return
    if isinstance(value, np.generic):
        _tag(h, "npscalar", value.dtype.str.encode() + value.tobytes())
        return
    if id(value) in seen:
        _tag(h, "cycle")
        return
    seen = seen | {id(value)}
    if isinstance(value, (list, tuple)):
        _tag(h, type(value).__qualname__, str(len(value)).encode())
        for v in value:
            _feed(h, v, depth + 1, seen)
    elif isinstance(value, dict):
        _feed_dict(h, value, depth, seen)
    elif isinstance(value, (set, frozenset)):
        _tag(h, "set", "".join(sorted(fingerprint(v) for v in value)).encode())
    elif isinstance(value, (types.FunctionType, types.MethodType)):
        _feed_function(h, value, depth, seen)
    elif isinstance(value, (type, types.BuiltinFunctionType, types.ModuleType)):
        _tag(h, "named", f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', value.__name__)}".encode())
    else:
        _feed_object(h, value, depth, seen)


def _feed_array(h: Any, a: np.ndarray) -> None:
    if a.dtype.hasobject:
        _tag(h, "objarray", repr(a.shape).encode())
        for v in a.ravel().tolist():
            _feed(h, v, 1, set())
        return
    _tag(h, "array", f"{a.dtype.str}{a.shape}".encode())
    h.update(np.ascontiguousarray(a).tobytes())


def _feed_dict(h: Any, d: dict, depth: int, seen: set[int]) -> None:
    items = sorted(((fingerprint(k), k, v) for k, v in d.items()), key=lambda t: t[0])
    _tag(h, "dict", str(len(items)).encode())
    for kf, _, v in items:
        _tag(h, "key", kf.encode())
        _feed(h, v, depth + 1, seen)


def _feed_function(h: Any, fn: Any, depth: int, seen: set[int]) -> None:
    if isinstance(fn, types.MethodType):
        _tag(h, "method")
        _feed(h, fn.__self__, depth + 1, seen)
        fn = fn.__func__
    _tag(h, "function", f"{fn.__module__}.{fn.__qualname__}".encode())
    _feed_code(h, fn.__code__, depth, seen)
    _feed(h, fn.__defaults__, depth + 1, seen)
    _feed(h, fn.__kwdefaults__, depth + 1, seen)
    cells = fn.__closure__ or ()
    for cell in cells:
        try:
            contents = cell.cell_contents
        except ValueError:  # an empty cell
            contents = None
        _feed(h, contents, depth + 1, seen)
    # The module-level values the code reads (constants, helper functions): editing one changes
    # what the function computes. Modules and classes count by name only.
    g = getattr(fn, "__globals__", {})
    for name in sorted(_global_names(fn.__code__)):
        if name in g and not isinstance(g[name], types.ModuleType):
            _tag(h, "global", name.encode())
            _feed(h, g[name], depth + 1, seen)


def _global_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _feed_code(h: Any, code: types.CodeType, depth: int, seen: set[int]) -> None:
    _tag(h, "code", code.co_code)
    _tag(h, "names", repr(code.co_names).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _feed_code(h, const, depth, seen)
        else:
            _feed(h, const, depth + 1, seen)


def _feed_object(h: Any, obj: Any, depth: int, seen: set[int]) -> None:
    cls = type(obj)
    _tag(h, "object", f"{cls.__module__}.{cls.__qualname__}".encode())
    attrs: dict[str, Any] = {}
    for klass in cls.__mro__:
        for name in getattr(klass, "__slots__", ()):
            if isinstance(name, str) and hasattr(obj, name):
                attrs[name] = getattr(obj, name)
    attrs.update(getattr(obj, "__dict__", {}) or {})
    attrs = {k: v for k, v in attrs.items() if not k.startswith(("_cache", "__weakref__"))}
    if attrs:
        _feed_dict(h, attrs, depth, seen)
        return
    try:
        _tag(h, "pickle", pickle.dumps(obj, protocol=4))
    except Exception:  # noqa: BLE001 - an unpicklable object without attributes: its type alone
        _tag(h, "opaque")


def file_stamp(path: str) -> list[tuple[str, int, int]]:
    """(name relative to ``path``, size, mtime in ns) of ``path`` itself, or of every file under a
    folder (sorted); a missing path gives ``[(path, -1, -1)]``."""
    try:
        st = os.stat(path)
    except OSError:
        return [(path, -1, -1)]
    if not os.path.isdir(path):
        return [(os.path.abspath(path), st.st_size, st.st_mtime_ns)]
    out: list[tuple[str, int, int]] = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(root, name)
            try:
                s = os.stat(full)
            except OSError:
                continue
            out.append((os.path.relpath(full, path), s.st_size, s.st_mtime_ns))
    return [(os.path.abspath(path), len(out), st.st_mtime_ns)] + out
