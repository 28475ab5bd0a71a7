"""headrace._util.pickling: objects sent to worker processes come back with their attributes inline
and a fresh lock (see NOTE [ attributes of unpickled objects ] in _engine/exec/launch.py)."""
from __future__ import annotations

import gc
import pickle
import threading

from headrace._util.pickling import FreshLock, set_attributes


def has_dict(obj, names) -> bool:
    """True when the attributes ``names`` live in a materialised ``__dict__`` (looked for among the
    object's referents: ``vars(obj)`` would materialise it)."""
    return any(type(r) is dict and set(r) == set(names) for r in gc.get_referents(obj))


class Cached(FreshLock):
    def __init__(self):
        self._lock = threading.Lock()
        self.files = ["a", "b"]
        self._cache = {"a": 1}

    def __getstate__(self):
        return self._state(_cache={})


def test_a_fresh_lock_object_comes_back_with_a_new_unlocked_lock_and_its_attributes_inline():
    obj = Cached()
    obj._lock.acquire()  # held while pickled: the copy must not inherit that
    got = pickle.loads(pickle.dumps(obj))
    assert got._lock is not obj._lock and got._lock.acquire(blocking=False)
    assert (got.files, got._cache) == (["a", "b"], {})
    assert obj._cache == {"a": 1}  # the original keeps its cache
    names = ["_lock", "files", "_cache"]
    assert not has_dict(got, names)
    vars(got)
    assert has_dict(got, names)  # (the check sees a materialised dict)


def test_set_attributes_is_dict_update_without_the_dict():
    class Plain:
        pass

    obj = Plain()
    set_attributes(obj, {"x": 1, "y": [2]})
    assert (obj.x, obj.y) == (1, [2]) and vars(obj) == {"x": 1, "y": [2]}
