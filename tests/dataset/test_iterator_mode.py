"""``ds.config.set_iterator_mode(do_copy, parallel_convert)``."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import headrace.dataset as ds
from headrace.dataset._tensor import Tensor


def _source():
    return ds.NumpySlicesDataset({"a": np.arange(12, dtype=np.int64).reshape(6, 2), "b": np.arange(6)},
                                 shuffle=False).batch(2)


def test_do_copy_is_the_iterators_default():
    data = np.arange(12, dtype=np.int64).reshape(6, 2)
    d = ds.NumpySlicesDataset({"a": data}, shuffle=False)
    rows = list(d.create_tuple_iterator(num_epochs=1))
    assert [type(r[0]) for r in rows] == [Tensor] * 6
    assert all(np.shares_memory(r[0], data) for r in rows)  # a view of the user's array
    ds.config.set_iterator_mode(do_copy=True)
    assert ds.config.get_iterator_mode() == {"do_copy": True, "parallel_convert": False}
    rows = list(d.create_tuple_iterator(num_epochs=1))
    assert [r[0].tolist() for r in rows] == data.tolist()
    assert not any(np.shares_memory(r[0], data) for r in rows)
    assert not any(np.shares_memory(r["a"], data) for r in d.create_dict_iterator(num_epochs=1))
    rows = list(d.create_tuple_iterator(num_epochs=1, do_copy=False))  # an explicit argument wins
    assert all(np.shares_memory(r[0], data) for r in rows)


def _read(it):
    out = []
    for r in it:
        out.append([r["b"].tolist(), type(r["b"]).__name__] if isinstance(r, dict) else [r[0].tolist(), type(r[0]).__name__])
    return out


@pytest.mark.parametrize("numpy_out", [False, True])
def test_parallel_convert_converts_in_the_prefetch_thread_with_the_same_rows(monkeypatch, numpy_out):
    plain = _read(_source().create_tuple_iterator(num_epochs=1, columns=["b"], output_numpy=numpy_out))
    ds.config.set_iterator_mode(parallel_convert=True)
    from headrace.dataset import _iterators
    seen = []
    call = _iterators._Rows.__call__
    monkeypatch.setattr(_iterators._Rows, "__call__", lambda self, row: (seen.append(threading.current_thread().name),
                                                                         call(self, row))[1])
    it = _source().create_tuple_iterator(num_epochs=1, columns=["b"], output_numpy=numpy_out)
    assert _read(it) == plain
    assert plain[0] == [[0, 1], "ndarray" if numpy_out else "Tensor"]
    assert seen == ["headrace-prefetch"] * 3
    d = _source().create_dict_iterator(num_epochs=1)
    assert _read(d) == [[[0, 1], "Tensor"], [[2, 3], "Tensor"], [[4, 5], "Tensor"]]


def test_parallel_convert_keeps_checkpoints_at_the_rows_handed_out():
    ds.config.set_iterator_mode(parallel_convert=True)
    d = ds.NumpySlicesDataset(np.arange(20), ["x"], shuffle=True).batch(3)
    ds.config.set_seed(4)
    whole = [r[0].tolist() for r in d.create_tuple_iterator(num_epochs=1, output_numpy=True)]
    it = d.create_tuple_iterator(num_epochs=1, output_numpy=True)
    head = [next(it)[0].tolist() for _ in range(2)]
    state = it.get_state()
    assert state["step"] == 2  # not the rows the prefetch thread converted ahead
    it.stop()
    again = d.create_tuple_iterator(num_epochs=1, output_numpy=True)
    again.set_state(state)
    assert head + [r[0].tolist() for r in again] == whole


def test_parallel_convert_in_debug_mode_converts_in_the_reading_thread():
    ds.config.set_iterator_mode(parallel_convert=True)
    ds.config.set_debug_mode(True, [])
    with pytest.warns(UserWarning):
        it = _source().create_tuple_iterator(num_epochs=1, output_numpy=True)
    assert [r[1].tolist() for r in it] == [[0, 1], [2, 3], [4, 5]]
    assert not any(t.name == "headrace-prefetch" for t in threading.enumerate())


@pytest.mark.parametrize("kwargs, name", [({"do_copy": 1}, "do_copy"), ({"parallel_convert": "yes"}, "parallel_convert")])
def test_the_setter_checks_its_arguments(kwargs, name):
    with pytest.raises(TypeError, match=f"{name} must be of type bool."):
        ds.config.set_iterator_mode(**kwargs)
