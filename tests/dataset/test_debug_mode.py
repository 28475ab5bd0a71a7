"""Debug mode (issue 16): ``ds.config.set_debug_mode``, ``headrace.dataset.debug`` hooks.

MindSpore 2.10's behaviour (checked in the oracle, see tests/compat/test_debug_callbacks_compat.py):
hooks are copied before a map's first operation and after each operation, they print a header
naming the operation, the pipeline runs in one thread, seed 1 is set when none is.
"""
from __future__ import annotations

import os
import threading
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import headrace.dataset as ds
import headrace.dataset.transforms as T
import headrace.dataset.vision as vision
from headrace.dataset import debug

pytestmark = pytest.mark.filterwarnings("ignore:Dataset pipeline debug mode is enabled",
                                        "ignore:Debug mode is enabled")


LOG: list = []  # module level: MindSpore deep-copies hooks (and their attributes) per point


class Recorder(debug.DebugHook):
    def __init__(self, log):
        super().__init__()
        log.clear()
        self.calls = 0

    def compute(self, *args):
        self.calls += 1
        LOG.append((self.prev_op_name, self.is_first_op, len(args),
                         [np.asarray(c).tolist() for c in args[0]], self.calls, id(self)))
        return "ignored"  # a hook's result is not the data: the data flows on unchanged


def plus1(x):
    return x + 1


def test_public_names():
    assert debug.__all__ == ["DebugHook", "PrintDataHook", "PrintMetaDataHook"]
    with pytest.raises(TypeError, match="abstract"):
        debug.DebugHook()  # compute is abstract


@pytest.mark.parametrize("args, err, msg", [
    ((1,), TypeError, "debug_mode_flag isn't of type boolean."),
    ((True, debug.PrintDataHook()), TypeError, "debug_hook_list is not a list."),
    ((True, [debug.PrintDataHook(), print]), TypeError, "All items in debug_hook_list must be of type DebugHook."),
])
def test_arguments_are_checked(args, err, msg):
    with pytest.raises(err) as e:
        ds.config.set_debug_mode(*args)
    assert str(e.value) == msg
    assert ds.config.get_debug_mode() is False


def test_get_and_one_notice():
    assert ds.config.get_debug_mode() is False
    with pytest.warns(UserWarning, match="debug mode is enabled: pipelines run in a single thread") as w:
        ds.config.set_debug_mode(True)
    assert len(w) == 1 and "num_parallel_workers, auto_num_workers, python_multiprocessing, autotune" in str(w[0].message)
    assert ds.config.get_debug_mode() is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds.config.set_debug_mode(True)  # already on: no second notice
        ds.config.set_debug_mode(False)
    assert ds.config.get_debug_mode() is False


def test_hooks_around_every_operation_in_order():
    log = LOG
    d = ds.NumpySlicesDataset({"a": [1, 2], "b": [10, 20]}, shuffle=False)
    d = d.map([plus1, T.TypeCast(np.float32), lambda x: x * 2], input_columns=["a"])
    ds.config.set_seed(3)
    ds.config.set_debug_mode(True, debug_hook_list=[Recorder(log)])  # after the pipeline was built
    rows = [[c.tolist() for c in r] for r in d.create_tuple_iterator(output_numpy=True)]
    assert rows == [[4.0, 10], [6.0, 20]]
    names = [(n, first, nargs, data, calls) for n, first, nargs, data, calls, _ in log]
    assert names == [
        ("plus1", True, 1, [1], 1), ("plus1", False, 1, [2], 1), ("TypeCast", False, 1, [2.0], 1),
        ("<lambda>", False, 1, [4.0], 1),
        ("plus1", True, 1, [2], 2), ("plus1", False, 1, [3], 2), ("TypeCast", False, 1, [3.0], 2),
        ("<lambda>", False, 1, [6.0], 2),
    ]
    # one copy of the hook per point (MindSpore deep-copies them), each called once per row
    assert len({hook_id for *_, hook_id in log}) == 4


def test_default_hook_prints_what_mindspore_prints(capsys):
    ds.config.set_seed(0)
    ds.config.set_debug_mode(True)
    d = ds.NumpySlicesDataset({"a": [[1, 2, 3]]}, shuffle=False).map([plus1, T.TypeCast(np.float32)])
    list(d.create_tuple_iterator(output_numpy=True))
    assert capsys.readouterr().out.splitlines() == [
        "[Dataset debugger] Print the [INPUT] of the operation [plus1].",
        "Column 0. The dtype is [int64]. The shape is [(3,)].",
        "[Dataset debugger] Print the [OUTPUT] of the operation [plus1].",
        "Column 0. The dtype is [int64]. The shape is [(3,)].",
        "[Dataset debugger] Print the [OUTPUT] of the operation [TypeCast].",
        "Column 0. The dtype is [float32]. The shape is [(3,)].",
    ]


def test_print_data_hook(capsys):
    ds.config.set_seed(0)
    ds.config.set_debug_mode(True, [debug.PrintDataHook()])
    d = ds.NumpySlicesDataset({"a": [[1, 2]]}, shuffle=False).map(plus1)
    list(d.create_tuple_iterator(output_numpy=True))
    assert capsys.readouterr().out.splitlines() == [
        "[Dataset debugger] Print the [INPUT] of the operation [plus1].", "Column 0. The data is [[1 2]].",
        "[Dataset debugger] Print the [OUTPUT] of the operation [plus1].", "Column 0. The data is [[2 3]].",
    ]


def test_empty_list_keeps_the_previous_hooks(capsys):
    log = LOG
    ds.config.set_seed(0)
    ds.config.set_debug_mode(True, [Recorder(log)])
    ds.config.set_debug_mode(True, [])
    list(ds.NumpySlicesDataset([5], shuffle=False).map(plus1).create_tuple_iterator(output_numpy=True))
    assert [data for _, _, _, data, _, _ in log] == [[5], [6]]
    assert capsys.readouterr().out.splitlines() == [
        "[Dataset debugger] Print the [INPUT] of the operation [plus1].",
        "[Dataset debugger] Print the [OUTPUT] of the operation [plus1]."]


def test_a_hook_written_into_the_operations():
    log = LOG
    d = ds.NumpySlicesDataset([7], shuffle=False).map([plus1, Recorder(log), plus1])
    with pytest.raises(ValueError, match="^It is not allowed to inject DebugHook object in non-debug mode.$"):
        d.create_tuple_iterator()
    ds.config.set_seed(0)
    ds.config.set_debug_mode(True, [])  # no hooks of its own: only the user's
    assert [r[0].item() for r in d.create_tuple_iterator(output_numpy=True)] == [9]
    assert [(n, data) for n, _, _, data, _, _ in log] == [("plus1", [8])]


def test_debug_mode_off_again_drops_the_hooks():
    log = LOG
    d = ds.NumpySlicesDataset([1], shuffle=False).map(plus1)
    ds.config.set_debug_mode(True, [Recorder(log)])
    list(d.create_tuple_iterator())
    assert len(log) == 2
    ds.config.set_debug_mode(False)
    list(d.create_tuple_iterator())
    assert len(log) == 2


def test_seed_1_when_none_is_set():
    ds.config.set_debug_mode(True, [])
    assert ds.config.get_seed() == 5489
    d = ds.NumpySlicesDataset(list(range(10)), shuffle=True)
    with pytest.warns(UserWarning, match="^Debug mode is enabled. Set seed to ensure deterministic results. Seed value: 1.$"):
        first = [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)]
    assert ds.config.get_seed() == 1
    ds.config.set_seed(1)
    ds.config.set_debug_mode(False)
    assert [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)] == first
    ds.config.set_seed(7)
    ds.config.set_debug_mode(True, [])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        list(d.create_tuple_iterator())
    assert ds.config.get_seed() == 7  # a seed the user set is kept


class Indexed:
    """A random-access source that records where it is read (what `dataset[i]` debugging needs)."""

    def __init__(self):
        self.where = []

    def __getitem__(self, i):
        self.where.append((threading.current_thread() is threading.main_thread(), os.getpid()))
        return (np.array(i),)

    def __len__(self):
        return 6


def test_everything_runs_in_the_reading_thread():
    src = Indexed()
    seen = []

    def fn(x):
        seen.append((threading.current_thread() is threading.main_thread(), os.getpid()))
        return x * 2

    ds.config.set_seed(0)
    ds.config.set_debug_mode(True, [])
    d = ds.GeneratorDataset(src, ["x"], num_parallel_workers=2, python_multiprocessing=True, shuffle=False)
    d = d.map(fn, num_parallel_workers=2, python_multiprocessing=True)
    d = d.batch(2, num_parallel_workers=2, per_batch_map=lambda x, info: ([v + 1 for v in x],), python_multiprocessing=True)
    threads = threading.active_count()
    it = d.create_tuple_iterator(output_numpy=True)
    rows = []
    for r in it:
        rows.append(r[0].tolist())
        assert threading.active_count() == threads  # no worker or prefetch thread
    assert rows == [[1, 3], [5, 7], [9, 11]]
    me = (True, os.getpid())
    assert set(src.where) == {me} and len(src.where) == 6
    assert set(seen) == {me} and len(seen) == 6


def _pipeline(shuffle, workers, procs, ops, batch):
    d = ds.NumpySlicesDataset({"x": np.arange(24, dtype=np.uint8).reshape(6, 2, 2)}, shuffle=shuffle,
                              num_parallel_workers=workers)
    table = {
        "crop": vision.RandomCrop(1),
        "flip": vision.RandomHorizontalFlip(),
        "user": lambda x: x + np.random.randint(0, 100, size=x.shape).astype(np.uint8),
        "cast": T.TypeCast(np.int32),
    }
    d = d.map([table[o] for o in ops], num_parallel_workers=workers, python_multiprocessing=procs)
    if batch:
        d = d.batch(batch)
    return d


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 1000), shuffle=st.booleans(), workers=st.integers(1, 3), procs=st.booleans(),
       ops=st.lists(st.sampled_from(["crop", "flip", "user", "cast"]), min_size=1, max_size=3),
       batch=st.sampled_from([None, 2, 4]), epochs=st.integers(1, 2))
def test_same_rows_as_outside_debug_mode(seed, shuffle, workers, procs, ops, batch, epochs):
    def read():
        d = _pipeline(shuffle, workers, procs, ops, batch)
        it = d.create_tuple_iterator(output_numpy=True, num_epochs=epochs)
        return [[c.tolist() for c in r] for _ in range(epochs) for r in it]

    ds.config.set_debug_mode(False)
    ds.config.set_seed(seed)
    normal = read()
    ds.config.set_debug_mode(True, [])
    ds.config.set_seed(seed)
    assert read() == normal
    ds.config.set_debug_mode(False)
