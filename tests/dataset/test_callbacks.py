"""Dataset callbacks (issue 16): ``map(callbacks=...)`` with ``DSCallback`` / ``WaitedDSCallback``.

Counting is MindSpore 2.10's (tests/compat/test_debug_callbacks_compat.py compares the events with
the oracle): epochs from 1, steps are rows of the map, an epoch spans the repeats above the map.
"""
from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import headrace.dataset as ds
import headrace.dataset.vision as vision
from headrace.dataset.callback import DSCallback, DSRunContext, TrainSync, WaitedDSCallback


class Rec(DSCallback):
    """Records every event as (name, what, epoch, step in epoch, step), with where it ran."""

    def __init__(self, events, name="cb", step_size=1):
        super().__init__(step_size)
        self.events, self.name, self.where = events, name, set()

    def _rec(self, what, c):
        assert type(c) is DSRunContext
        self.where.add((os.getpid(), threading.current_thread().name))
        self.events.append((self.name, what, c.cur_epoch_num, c.cur_step_num_in_epoch, c.cur_step_num))

    def ds_begin(self, c):
        self._rec("begin", c)

    def ds_epoch_begin(self, c):
        self._rec("epoch_begin", c)

    def ds_epoch_end(self, c):
        self._rec("epoch_end", c)

    def ds_step_begin(self, c):
        self._rec("step_begin", c)

    def ds_step_end(self, c):
        self._rec("step_end", c)


def expected(epochs, rows, step_size=1, name="cb"):
    """The events of one callback, in the order a serial map makes them."""
    out = [(name, "begin", 0, 0, 0)]
    total = 0
    for e in range(1, epochs + 1):
        out.append((name, "epoch_begin", e, 0, total))
        for s in range(1, rows + 1):
            total += 1
            if (s - 1) % step_size == 0:
                out += [(name, "step_begin", e, s, total), (name, "step_end", e, s, total)]
        out.append((name, "epoch_end", e, rows, total))
    return out


def read(d, epochs):
    it = d.create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    return [[np.asarray(c).tolist() for c in r] for _ in range(epochs) for r in it]


@pytest.mark.parametrize("epochs, rows, step_size", [(1, 1, 1), (1, 4, 1), (2, 3, 1), (3, 4, 2), (2, 5, 3)])
def test_exact_events_of_a_serial_map(epochs, rows, step_size):
    events = []
    d = ds.NumpySlicesDataset(list(range(rows)), shuffle=False)
    d = d.map(lambda x: x, callbacks=Rec(events, step_size=step_size), num_parallel_workers=1)
    assert read(d, epochs) == [[i] for i in range(rows)] * epochs
    assert events == expected(epochs, rows, step_size)


@pytest.mark.parametrize("repeat", [2, 3])
def test_an_epoch_spans_the_repeats_above(repeat):
    events = []
    d = ds.NumpySlicesDataset([1, 2], shuffle=False)
    d = d.map(lambda x: x, callbacks=Rec(events, step_size=2), num_parallel_workers=1).repeat(repeat)
    d = d.map(lambda x: x, callbacks=Rec(events, "top", step_size=3), num_parallel_workers=1).repeat(2)
    read(d, 2)
    mine = [e for e in events if e[0] == "cb"]
    top = [e for e in events if e[0] == "top"]
    assert mine == expected(2, 2 * repeat * 2, step_size=2)
    assert top == expected(2, 2 * repeat * 2, step_size=3, name="top")


def test_several_callbacks_and_maps_keep_their_order():
    events = []
    d = ds.NumpySlicesDataset([1, 2], shuffle=False)
    d = d.map(lambda x: x, callbacks=[Rec(events, "a"), Rec(events, "b")], num_parallel_workers=1)
    d = d.map(lambda x: x, callbacks=Rec(events, "c"), num_parallel_workers=1)
    read(d, 1)
    # a pass starts from the top (c), a row goes up from the bottom (a, b, then c)
    assert events[:12] == [("c", "begin", 0, 0, 0), ("c", "epoch_begin", 1, 0, 0), ("a", "begin", 0, 0, 0),
                           ("b", "begin", 0, 0, 0), ("a", "epoch_begin", 1, 0, 0), ("b", "epoch_begin", 1, 0, 0),
                           ("a", "step_begin", 1, 1, 1), ("b", "step_begin", 1, 1, 1), ("a", "step_end", 1, 1, 1),
                           ("b", "step_end", 1, 1, 1), ("c", "step_begin", 1, 1, 1), ("c", "step_end", 1, 1, 1)]
    for name in "abc":
        assert [e for e in events if e[0] == name] == expected(1, 2, name=name)


@pytest.mark.parametrize("workers, procs", [(2, False), (2, True)])
def test_workers_run_the_map_and_the_main_process_the_callbacks(workers, procs):
    events = []
    cb = Rec(events)
    ds.config.set_seed(11)
    base = ds.NumpySlicesDataset({"x": np.arange(40, dtype=np.uint8).reshape(10, 2, 2)}, shuffle=True)
    plain = base.map(vision.RandomCrop(1), num_parallel_workers=workers, python_multiprocessing=procs).batch(3)
    hooked = base.map(vision.RandomCrop(1), num_parallel_workers=workers, python_multiprocessing=procs,
                      callbacks=cb).batch(3)
    assert read(hooked, 2) == read(plain, 2)  # same rows: callbacks change no op's random key
    assert sorted(events) == sorted(expected(2, 10))
    assert {pid for pid, _ in cb.where} == {os.getpid()}
    for e in (1, 2):  # each row's step begins before it ends; epochs bracket their steps
        mine = [x for x in events if x[2] == e]
        assert mine[0][1] == "epoch_begin" and mine[-1][1] == "epoch_end"
        for s in range(1, 11):
            assert mine.index(("cb", "step_begin", e, s, (e - 1) * 10 + s)) < \
                mine.index(("cb", "step_end", e, s, (e - 1) * 10 + s))


def test_size_getters_call_no_callback():
    events = []
    d = ds.NumpySlicesDataset([1, 2, 3, 4], shuffle=False).map(lambda x: x, callbacks=Rec(events))
    d = d.filter(lambda x: x > 0)  # a size that only reading can tell
    assert d.get_dataset_size() == 4
    assert d.output_shapes() == [[]]
    assert events == []
    read(d, 1)
    assert len(events) == 11


def test_checkpoints_ignore_callbacks():
    events = []
    ds.config.set_seed(5)
    plain = ds.NumpySlicesDataset(list(range(6)), shuffle=True).map(lambda x: x * 2)
    hooked = ds.NumpySlicesDataset(list(range(6)), shuffle=True).map(lambda x: x * 2, callbacks=Rec(events),
                                                                     num_parallel_workers=1)
    it = plain.create_tuple_iterator(num_epochs=2, output_numpy=True)
    first = [int(next(it)[0]) for _ in range(4)]
    state = it.get_state()
    rest = [int(r[0]) for r in it]
    it2 = hooked.create_tuple_iterator(num_epochs=2, output_numpy=True)
    it2.set_state(state)
    assert [int(r[0]) for r in it2] == rest and len(first + rest) == 6
    assert events[:2] == [("cb", "begin", 0, 0, 0), ("cb", "epoch_begin", 1, 0, 0)]
    assert [e[1:] for e in events[2:4]] == [("step_begin", 1, 5, 5), ("step_end", 1, 5, 5)]


def test_arguments_are_checked():
    d = ds.NumpySlicesDataset([1])
    with pytest.raises(TypeError, match=r"^Argument callbacks with value 0 is not of type \[<class 'list'>, "):
        d.map(abs, callbacks=0)
    with pytest.raises(TypeError, match=r"^Argument callbacks\[1\] with value 0 is not of type "):
        d.map(abs, callbacks=[Rec([]), 0])
    with pytest.raises(ValueError, match=r"^Input step_size is not within the required interval of \[1, 2147483647\]"):
        Rec([], step_size=0)
    with pytest.raises(TypeError, match="^Argument step_size with value 1.5 is not of type"):
        Rec([], step_size=1.5)

    class Nothing(DSCallback):
        pass

    bad = d.map(abs, callbacks=Nothing())
    with pytest.raises(AttributeError, match="^Inheriting Callback class without overriding any methods"):
        bad.create_tuple_iterator()


def test_a_failing_callback_fails_the_pipeline():
    class Bad(DSCallback):
        def ds_step_end(self, c):
            if c.cur_step_num == 2:
                raise ValueError("bad step")

    it = ds.NumpySlicesDataset([1, 2, 3], shuffle=False).map(abs, callbacks=Bad()).create_tuple_iterator()
    next(it)
    with pytest.raises(ValueError, match="^bad step$"):
        next(it)


class Waited(WaitedDSCallback):
    def __init__(self, events, step_size=1):
        super().__init__(step_size)
        self.events = events

    def sync_epoch_begin(self, train_run_context, ds_run_context):
        args = train_run_context.original_args()
        self.events.append(f"ds_epoch_begin_{ds_run_context.cur_epoch_num}_{ds_run_context.cur_step_num}"
                           f"_after_{args.cur_epoch_num}")

    def sync_step_begin(self, train_run_context, ds_run_context):
        args = train_run_context.original_args()
        self.events.append(f"ds_step_begin_{ds_run_context.cur_epoch_num}_{ds_run_context.cur_step_num}"
                           f"_after_{args.cur_step_num}")


def train(loader_batches, sync, events, epochs):
    for e in range(epochs):
        for _ in loader_batches():
            events.append(f"train_step_{sync.step + 1}")
            sync.step_end()
        events.append(f"train_epoch_{e + 1}")
        sync.epoch_end()


WAITED_1 = ["train_step_1", "ds_step_begin_1_2_after_1", "train_step_2", "ds_step_begin_1_3_after_2",
            "train_step_3", "train_epoch_1", "ds_epoch_begin_2_3_after_1", "ds_step_begin_2_4_after_3",
            "train_step_4", "ds_step_begin_2_5_after_4", "train_step_5", "ds_step_begin_2_6_after_5",
            "train_step_6", "train_epoch_2"]


@pytest.mark.parametrize("workers", [1, 2])
def test_waited_callback_in_step_with_a_plain_loop(workers):
    events = []
    cb = Waited(events)
    d = ds.NumpySlicesDataset([1, 2, 3], shuffle=False).map(lambda x: x, callbacks=cb, num_parallel_workers=workers)
    it = d.create_tuple_iterator(num_epochs=2, output_numpy=True)
    sync = TrainSync(d)
    assert sync.callbacks == [cb]
    train(lambda: it, sync, events, 2)
    assert events == WAITED_1


def test_waited_callback_steps_of_a_batch():
    events = []
    d = ds.NumpySlicesDataset([1, 2, 3, 4], shuffle=False).map(lambda x: x, callbacks=Waited(events, 2)).batch(2)
    it = d.create_tuple_iterator(num_epochs=2, output_numpy=True)
    train(lambda: it, TrainSync(d), events, 2)
    assert events == ["train_step_1", "ds_step_begin_1_3_after_1", "train_step_2", "train_epoch_1",
                      "ds_epoch_begin_2_4_after_1", "ds_step_begin_2_5_after_2", "train_step_3",
                      "ds_step_begin_2_7_after_3", "train_step_4", "train_epoch_2"]


def test_waited_callback_times_out_without_the_training_side():
    ds.config.set_callback_timeout(1)
    d = ds.NumpySlicesDataset([1, 2], shuffle=False).map(lambda x: x, callbacks=Waited([]))
    it = d.create_tuple_iterator(output_numpy=True)
    next(it)
    with pytest.raises(RuntimeError, match=r"^ds_step_begin timed out after 1 second\(s\): the training side "
                                           r"did not call step_end on this Waited"):
        next(it)


def test_end_releases_the_pipeline():
    events = []
    cb = Waited(events)
    d = ds.NumpySlicesDataset([1, 2, 3], shuffle=False).map(lambda x: x, callbacks=cb)
    TrainSync(d).end()
    assert [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)] == [1, 2, 3]
    assert events == ["ds_step_begin_1_2_after_0", "ds_step_begin_1_3_after_0"]


def _loader_events(make_loader):
    events = []
    d = ds.NumpySlicesDataset([1, 2, 3, 4], shuffle=False).map(lambda x: x, callbacks=Waited(events, 2)).batch(2)
    loader = make_loader(d)
    try:
        for e in range(2):
            for i, _ in enumerate(loader):
                events.append(f"train_{e + 1}_{i + 1}")
            events.append(f"train_epoch_{e + 1}")
    finally:
        loader.close()
    return events


LOADER_EVENTS = ["train_1_1", "ds_step_begin_1_3_after_1", "train_1_2", "train_epoch_1",
                 "ds_epoch_begin_2_4_after_1", "ds_step_begin_2_5_after_2", "train_2_1",
                 "ds_step_begin_2_7_after_3", "train_2_2", "train_epoch_2"]


def test_torch_loader_is_the_training_side():
    torch_mod = pytest.importorskip("headrace.torch")
    assert _loader_events(lambda d: torch_mod.Loader(d, queue_depth=4)) == LOADER_EVENTS


def test_jax_loader_is_the_training_side():
    jax_mod = pytest.importorskip("headrace.jax")
    assert _loader_events(lambda d: jax_mod.Loader(d, device_buffer=3)) == LOADER_EVENTS


def test_leaving_a_loader_epoch_early_releases_the_pipeline():
    torch_mod = pytest.importorskip("headrace.torch")
    ds.config.set_callback_timeout(20)  # a wait that is never released would fail, not hang
    events = []

    class W(WaitedDSCallback):
        def sync_step_begin(self, train_run_context, ds_run_context):
            events.append(("step", ds_run_context.cur_epoch_num, ds_run_context.cur_step_num))

        def sync_epoch_begin(self, train_run_context, ds_run_context):
            events.append(("epoch", ds_run_context.cur_epoch_num))

    d = ds.NumpySlicesDataset(list(range(8)), shuffle=False).map(lambda x: x, callbacks=W(2)).batch(2)
    loader = torch_mod.Loader(d, queue_depth=3)
    got = []
    try:
        for e in range(3):
            for i, b in enumerate(loader):
                got.append(b[0].tolist())
                if e == 0 and i == 1:
                    break
    finally:
        loader.close()
    assert got == [[0, 1], [2, 3]] + [[0, 1], [2, 3], [4, 5], [6, 7]] * 2
    # the next epoch opens a new iterator: its steps count from its own start
    after = events[events.index(("epoch", 2)):]
    assert after == [("epoch", 2), ("step", 2, 3), ("step", 2, 5), ("step", 2, 7), ("epoch", 3),
                     ("step", 3, 9), ("step", 3, 11), ("step", 3, 13), ("step", 3, 15)]


def test_closing_a_run_ends_its_hook_wait_without_taking_the_next_runs_event():
    # NOTE [ hooks that wait, and closed runs ]: the reading thread of a closed run that went on
    # waiting would take the next step_end, meant for the run that replaced it (a loader leaving an
    # epoch early), and that run would wait until the callback timeout.
    ds.config.set_callback_timeout(60)

    class W(WaitedDSCallback):
        def sync_step_begin(self, train_run_context, ds_run_context):
            pass

    cb = W(2)
    waiting, waiter = threading.Event(), []
    plain_wait = cb.step_event.wait

    def watched_wait(timeout=None):
        if not waiter:
            waiter.append(threading.current_thread())
        waiting.set()
        return plain_wait(timeout)

    cb.step_event.wait = watched_wait
    d = ds.NumpySlicesDataset(list(range(8)), shuffle=False).map(lambda x: x, callbacks=cb).batch(2)
    it = d.create_tuple_iterator(num_epochs=1, output_numpy=True)
    assert next(it)[0].tolist() == [0, 1]       # step 1
    got = []

    def read():                                  # step 2 waits for the training side's step_end
        try:
            got.append(next(it))
        except BaseException as e:  # noqa: BLE001 - whatever ends it is recorded
            got.append(e)

    reader = threading.Thread(target=read)
    reader.start()
    assert waiting.wait(30)
    it.stop()
    for t in (waiter[0], reader):
        t.join(30)
        assert not t.is_alive()                  # the wait ended with its run
    # the reader learns that the iterator was stopped: from the wait itself when it ran the wait,
    # else (the prefetch thread ran it) from the stopped iterator
    assert len(got) == 1 and isinstance(got[0], RuntimeError), got
    assert str(got[0]) in ("ds_step_begin: the pipeline was closed while it waited for the training side.",
                           "'TupleIterator' object has no attribute '_runtime_context': the iterator was stopped "
                           "or released; create a new iterator to read again."), got
    cb.step_end(None)
    assert cb.step_event.is_set()                # nobody took the event meant for a next run
