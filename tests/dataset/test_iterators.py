import json

import numpy as np
import pytest

import headrace.dataset as ds


def data():
    return ds.NumpySlicesDataset({"a": [1, 2, 3], "s": ["x", "y", "z"]}, shuffle=False)


def test_tuple_iterator_rows_are_lists_with_tensors_for_numbers():
    row = next(iter(data()))
    assert isinstance(row, list)
    assert isinstance(row[0], ds.Tensor) and isinstance(row[0], np.ndarray)
    assert row[0].asnumpy().item() == 1 and type(row[0].asnumpy()) is np.ndarray
    assert type(row[1]) is np.ndarray and row[1].item() == "x"


def test_dict_iterator_and_output_numpy():
    rows = list(data().create_dict_iterator(output_numpy=True))
    assert [sorted(r) for r in rows] == [["a", "s"]] * 3
    assert type(rows[0]["a"]) is np.ndarray


def test_columns_selects_and_orders():
    it = data().create_tuple_iterator(columns=["s", "a"], output_numpy=True)
    assert it.get_col_names() == ["s", "a"]
    assert [(r[0].item(), r[1].item()) for r in it] == [("x", 1), ("y", 2), ("z", 3)]
    with pytest.raises(ValueError, match="does not exist"):
        data().create_tuple_iterator(columns=["zz"])


def test_epochs_and_reading_past_them():
    it = data().create_tuple_iterator(num_epochs=2, output_numpy=True)
    assert [r[0].item() for r in it] == [1, 2, 3]
    assert [r[0].item() for r in it] == [1, 2, 3]
    with pytest.raises(RuntimeError, match="EOF buffer encountered. User tries to fetch data beyond the specified "
                                           "number of epochs."):
        next(it)
    it = data().create_tuple_iterator(output_numpy=True)  # -1: any number of epochs
    for _ in range(3):
        assert len(list(it)) == 3


def test_num_epochs_checks():
    with pytest.raises(ValueError, match=r"Input num_epochs is not within the required interval of \[-1, 2147483647\]."):
        data().create_tuple_iterator(num_epochs=-2)
    with pytest.raises(ValueError, match="num_epochs"):
        data().create_tuple_iterator(num_epochs=0)
    with pytest.raises(TypeError, match="output_numpy"):
        data().create_tuple_iterator(output_numpy=1)


def test_do_copy_gives_independent_buffers():
    arr = np.zeros((2, 3), np.float32)
    d = ds.NumpySlicesDataset(arr, shuffle=False)
    copied = next(iter(d.create_tuple_iterator(do_copy=True)))[0]
    assert not np.shares_memory(copied, arr)


def test_state_is_small_json_and_versioned():
    it = data().create_tuple_iterator()
    next(it)
    state = it.get_state()
    assert json.loads(json.dumps(state)) == state
    assert state["version"] == 2 and state["epoch"] == 0 and state["step"] == 1
    with pytest.raises(ValueError, match="state must be a dict from get_state"):
        data().create_tuple_iterator().set_state({"version": 99})


def test_stop_is_idempotent_and_ends_reading():
    it = data().create_tuple_iterator()
    next(it)
    it.stop()
    it.stop()
    with pytest.raises(RuntimeError, match="stopped"):
        next(it)


def test_meta_columns_are_hidden_unless_renamed():
    d = ds.NumpySlicesDataset({"a": [1, 2], "_meta-filename": ["x", "y"]}, shuffle=False)
    assert d.get_col_names() == ["a", "_meta-filename"]
    assert [list(r) for r in d.create_dict_iterator(output_numpy=True)] == [["a"], ["a"]]
    renamed = d.rename("_meta-filename", "filename")
    assert [sorted(r) for r in renamed.create_dict_iterator(output_numpy=True)] == [["a", "filename"]] * 2
    it = d.create_tuple_iterator(columns=["_meta-filename"], output_numpy=True)  # asked for by name: given
    assert [r[0].item() for r in it] == ["x", "y"]


def test_iterators_list_holds_the_live_iterators_weakly():
    import gc
    import weakref

    from headrace.dataset.engine import iterators as it

    before = list(it.ITERATORS_LIST)
    d = data()
    a, b, c = d.create_tuple_iterator(num_epochs=1), d.create_dict_iterator(), d.create_tuple_iterator()
    mine = it.ITERATORS_LIST[len(before):]
    assert [r() for r in mine] == [a, b, c] and all(type(r) is weakref.ref for r in mine)
    gc.disable()      # entries leave by reference counting alone
    try:
        del a
        assert [r() for r in it.ITERATORS_LIST[len(before):]] == [b, c]
        assert next(b) == {"a": 1, "s": np.array("x")}
        b.stop()      # a stopped iterator leaves too
        assert [r() for r in it.ITERATORS_LIST[len(before):]] == [c]
        with pytest.raises(AttributeError, match="^'DictIterator' object has no attribute '_runtime_context': the "
                                                 "iterator was stopped or released") as err:
            next(b)
        assert isinstance(err.value, RuntimeError) and isinstance(err.value, it.IteratorReleasedError)
        e = d.create_tuple_iterator()
        assert it.check_iterator_cleanup() is False
        it._cleanup()   # releases every live iterator, the older ones of other tests too
        assert it.ITERATORS_LIST == [] and it.check_iterator_cleanup() is True
        with pytest.raises(it.IteratorReleasedError):
            next(c)
        with pytest.raises(it.IteratorReleasedError):
            next(e)
        f = d.create_tuple_iterator(output_numpy=True)
        assert it.check_iterator_cleanup() is False
        it._set_iterator_cleanup()
        it._unset_iterator_cleanup()
        assert it.check_iterator_cleanup() is False
        assert [x[0].item() for x in f] == [1, 2, 3]
        del c, e, f
        assert it.ITERATORS_LIST == []
    finally:
        gc.enable()
