"""Dataset.device_que(): MindSpore's transfer dataset, its queue API and the status report."""
import re
import threading
import time
import warnings

import numpy as np
import pytest

import headrace.dataset as ds
from headrace.dataset import _transfer
from headrace.dataset._transfer import SENDER_THREAD, WATCHDOG_THREAD, TransferDataset

NOTHING_PRODUCED = ("verdict: nothing produced: the pipeline has not made its first batch; check the source (paths, "
                    "sizes) and time the first map (headrace profile) or lower the batch size.")
TOO_SLOW = ("verdict: preprocessing too slow: the device queue is empty and the sender is waiting for the pipeline's "
            "next batch; add workers (num_parallel_workers), move work out of Python functions, or check the "
            "bottleneck with headrace profile.")
RELEASED = "the sender was stopped (release() was called) before the requested epochs were sent"


def numbers(n=10, batch=2):
    return ds.NumpySlicesDataset({"x": np.arange(n * 2, dtype=np.float32).reshape(n, 2), "y": np.arange(n)},
                                 shuffle=False).batch(batch)


class Gate:
    """A map function that holds row ``i`` until ``open(i)`` (or until ``closed`` is set): a
    pipeline whose preprocessing is exactly as slow as the test says."""

    def __init__(self, n):
        self.rows = [threading.Event() for _ in range(n)]
        self.closed = threading.Event()

    def __call__(self, x):
        row = self.rows[int(x)]
        while not (row.wait(0.05) or self.closed.is_set()):
            pass
        return x

    def open(self, *rows):
        for i in rows:
            self.rows[i].set()


def gated(gate):
    return ds.NumpySlicesDataset({"x": np.arange(len(gate.rows))}, shuffle=False).map(gate)


def release(t, gate=None):
    """Releases ``t`` (after letting a gated pipeline go, so that no worker waits in the gate) and
    checks that neither of its threads is left."""
    if gate is not None:
        gate.closed.set()
    t.release()
    assert device_threads() == []


def device_threads():
    return [th.name for th in threading.enumerate() if th.name in (SENDER_THREAD, WATCHDOG_THREAD)]


def in_thread(call):
    """Runs ``call`` in a thread (a training step waiting in get_next); ``out`` gets its value or error."""
    out = {}

    def run():
        try:
            out["value"] = call()
        except BaseException as e:  # noqa: BLE001 - the test looks at it
            out["error"] = e

    th = threading.Thread(target=run, name="test training step", daemon=True)
    th.start()
    return th, out


def wait_for(condition, what, deadline_s=60.0):
    end = time.monotonic() + deadline_s
    while not condition():
        assert time.monotonic() < end, f"gave up waiting for {what}"
        time.sleep(0.01)


def stall_warnings(caught, prefix):
    return [str(w.message) for w in list(caught)
            if issubclass(w.category, RuntimeWarning) and str(w.message).startswith(prefix)]


def drain_epoch(t):
    out = []
    while True:
        try:
            out.append(t.get_next(timeout=60)[1].tolist())
        except StopIteration:
            return out


def test_is_a_dataset_that_cannot_be_iterated():
    t = numbers().device_que()
    assert isinstance(t, TransferDataset) and t.get_dataset_size() == 5 and t.get_col_names() == ["x", "y"]
    assert re.fullmatch(r"[0-9a-f-]{36}", t.queue_name)
    assert numbers().device_que(queue_name="q1").queue_name == "q1"
    for call in (lambda: iter(t), lambda: t.create_tuple_iterator(), lambda: t.create_dict_iterator()):
        with pytest.raises(RuntimeError, match="TransferDataset is not iterable."):
            call()
    with pytest.raises(RuntimeError, match="TransferDataset does not support obtaining output_shapes."):
        t.output_shapes()


def test_calls_before_send_use_mindspore_messages():
    t = numbers().device_que()
    with pytest.raises(RuntimeError, match="^Calling get_data_info with bad state.$"):
        t.get_data_info()
    with pytest.raises(RuntimeError, match="^Calling get_send_info with bad state, data queue is not initialized.$"):
        t.get_send_info()
    with pytest.raises(RuntimeError, match="^Device queue is not init, call get_mbuf_queue_size failed.$"):
        t.get_mbuf_queue_size()
    with pytest.raises(RuntimeError, match="call send\\(\\) first"):
        t.get_next()
    t.stop_send()  # no-ops, as in MindSpore
    t.continue_send()
    t.release()


def test_sends_epochs_with_end_markers_and_names_extra_steps():
    t = numbers().device_que(create_data_info_queue=True)
    t.send(2)
    assert t.get_data_info() == (["float32", "int64"], [[2, 2], [2]])
    expected = [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    assert drain_epoch(t) == expected and drain_epoch(t) == expected
    with pytest.raises(RuntimeError, match="asked for more data than was sent: 10 batches over 2 epoch"):
        t.get_next(timeout=60)
    info = t.get_send_info()
    assert info[0] == 10 and len(info[2]) == 10 and info[1] == info[2][0]
    assert all(type(v) is int and a <= b for a, b in info[2] for v in (a, b))
    report = t.status_report()
    lines = report.splitlines()
    assert lines[0] == f"channel_name: {t.queue_name};" and lines[1] == "have_sent: 10;"
    assert re.fullmatch(r"host_queue: \d+(, \d+){9};", lines[2])
    assert re.fullmatch(r"device_queue: \d+(, \d+){9};", lines[3])
    assert lines[4] == "      push_first_start_time -> push_first_end_time"
    assert re.fullmatch(r"\d{13} -> \d{13}", lines[5]) and lines[6] == "            push_start_time -> push_end_time"
    assert all(re.fullmatch(r"\d{13} -> \d{13}", x) for x in lines[7:17])
    assert lines[17].startswith("For more details, please refer to the FAQ")
    assert lines[18].startswith("verdict: every requested epoch was sent (10 batches); a step asking for more is "
                                "the 'batches sent != steps' case")
    t.release()


def test_without_epoch_end_markers_epochs_run_together():
    t = numbers(n=4).device_que(send_epoch_end=False)
    t.send(2)
    got = [t.get_next(timeout=60)[1].tolist() for _ in range(4)]
    assert got == [[0, 1], [2, 3], [0, 1], [2, 3]]
    t.release()


def test_stop_send_pauses_and_the_report_says_so():
    t = numbers(n=200, batch=1).device_que()
    t.send()
    assert t.get_next(timeout=60)[1].tolist() == [0]
    t.stop_send()
    deadline = time.monotonic() + 30
    while t.get_mbuf_queue_size() and time.monotonic() < deadline:  # take what was pushed before the pause
        t.get_next(timeout=60)
    time.sleep(0.3)
    sent = t.get_send_info()[0]
    assert t.get_mbuf_queue_size() <= 1 and sent < 200
    assert "verdict: produced but not sent: stop_send() was called; call continue_send()" in t.status_report()
    t.continue_send()
    rest = [t.get_next(timeout=60)[1].tolist() for _ in range(5)]
    assert rest[0][0] > 0 and [r[0] for r in rest] == list(range(rest[0][0], rest[0][0] + 5))
    t.release()


def test_sending_batches_caps_each_epoch_until_raised():
    ds.config.set_sending_batches(3)
    t = numbers(n=10, batch=1).device_que()
    t.send(1)
    assert [t.get_next(timeout=60)[1].tolist() for _ in range(3)] == [[0], [1], [2]]
    with pytest.raises(RuntimeError, match="no batch for 0.5 s"):
        t.get_next(timeout=0.5)
    assert "verdict: produced but not sent: ds.config.set_sending_batches() caps this epoch" in t.status_report()
    ds.config.set_sending_batches(0)
    assert [t.get_next(timeout=60)[1].tolist() for _ in range(7)] == [[k] for k in range(3, 10)]
    t.release()


def test_a_pipeline_error_reaches_get_next_with_the_report():
    def bad(x):
        if int(x[0]) == 6:
            raise ValueError("broken sample")
        return x

    data = ds.NumpySlicesDataset({"x": np.arange(10).reshape(10, 1)}, shuffle=False).map(bad, input_columns="x")
    t = data.device_que()
    t.send(1)
    got = []
    with pytest.raises(Exception, match="broken sample") as info:
        for _ in range(10):
            got.append(t.get_next(timeout=60)[0].tolist())
    assert got == [[0], [1], [2], [3], [4], [5]]
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "have_sent: 6;" in notes and "verdict: the pipeline failed" in notes
    assert "sample index: 6" in str(info.value)
    t.release()


def one_batch_sent():
    """``(gate, t)``: a transfer dataset over 3 gated rows, sending, whose first batch the training
    side has taken (rows 1 and 2 wait in the gate)."""
    gate = Gate(3)
    t = gated(gate).device_que()
    t.send(1)
    gate.open(0)
    assert t.get_next(timeout=60)[0].tolist() == 0
    wait_for(lambda: t.get_send_info()[0] == 1, "the first push to be counted")
    return gate, t


def warned_while_waiting(t, gate, row):
    """Lines of the stall warning a ``get_next`` gives while it waits for gated ``row``, which is
    let through once it has warned (and then is what get_next returns)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        waiter, out = in_thread(lambda: t.get_next(timeout=60))
        wait_for(lambda: stall_warnings(caught, "get_next has waited"), "get_next's warning")
        gate.open(row)
        waiter.join(60)
    assert out["value"][0].tolist() == row
    return stall_warnings(caught, "get_next has waited")[0].splitlines()


def test_get_next_warns_while_the_first_batch_is_late_and_names_the_case():
    gate = Gate(3)
    t = gated(gate).device_que()
    t.stall_warning_s = 0.05
    t.send(1)
    lines = warned_while_waiting(t, gate, 0)
    assert re.fullmatch(r"get_next has waited \d+\.\d s for the first batch\.", lines[0])
    assert lines[1:8] == [f"channel_name: {t.queue_name};", "have_sent: 0;", "host_queue: ;", "device_queue: ;",
                          "      push_first_start_time -> push_first_end_time", "-1 -> -1",
                          "            push_start_time -> push_end_time"]
    assert lines[-1] == NOTHING_PRODUCED
    release(t, gate)


def test_release_ends_the_sender_and_is_idempotent():
    t = numbers(n=1000, batch=1).device_que()
    t.send()
    t.get_next(timeout=60)
    sender = t._to_device
    t.release()
    t.release()
    assert not sender.thread.is_alive() and not sender.watchdog.is_alive() and device_threads() == []
    with pytest.raises(RuntimeError, match="call send\\(\\) first"):
        t.get_next()


@pytest.mark.parametrize("kwargs, message", [({"send_epoch_end": 1}, "send_epoch_end"),
                                             ({"queue_name": 3}, "queue_name"),
                                             ({"create_data_info_queue": "y"}, "create_data_info_queue")])
def test_arguments_are_checked(kwargs, message):
    with pytest.raises(TypeError, match=message):
        numbers().device_que(**kwargs)
    t = numbers().device_que()
    with pytest.raises(ValueError, match="num_epochs should be either -1 or positive integer, but got 0"):
        t.send(0)


def test_create_data_info_queue_is_needed_for_get_data_info():
    t = numbers().device_que()
    t.send(1)
    with pytest.raises(RuntimeError, match="DataInfo queue is not created"):
        t.get_data_info()
    t.release()


def test_set_sending_batches_checks_its_argument():
    with pytest.raises(TypeError, match="batch_num"):
        ds.config.set_sending_batches("3")


REPORT_HEAD_BEFORE_ANY_PUSH = ["have_sent: 0;", "host_queue: ;", "device_queue: ;",
                               "      push_first_start_time -> push_first_end_time", "-1 -> -1",
                               "            push_start_time -> push_end_time"]


def test_the_watchdog_warns_once_when_the_first_batch_is_late_though_nobody_asks():
    gate = Gate(2)
    t = gated(gate).device_que()
    t.stall_warning_s = 0.05
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t.send(1)
        sender = t._to_device
        sender.watchdog.join(60)  # it ends by itself after its one warning
        assert not sender.watchdog.is_alive() and sender.thread.is_alive()
        texts = stall_warnings(caught, "device_que:")
    assert len(texts) == 1 and stall_warnings(caught, "get_next") == []
    lines = texts[0].splitlines()
    assert lines[0] == "device_que: the first batch has not been sent 0.05 s after send()."
    assert lines[1] == f"channel_name: {t.queue_name};" and lines[2:8] == REPORT_HEAD_BEFORE_ANY_PUSH
    assert lines[-1] == NOTHING_PRODUCED
    gate.open(0, 1)
    assert t.get_next(timeout=60)[0].tolist() == 0
    release(t, gate)


def test_the_watchdog_ends_at_the_first_push_or_on_release_without_a_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = numbers().device_que()
        t.stall_warning_s = 600.0
        t.send(1)
        assert t.get_next(timeout=60)[1].tolist() == [0, 1]
        sender = t._to_device
        sender.watchdog.join(60)  # the first batch was pushed: nothing left to watch
        assert not sender.watchdog.is_alive()
        release(t)

        gate = Gate(1)
        t = gated(gate).device_que()
        t.stall_warning_s = 600.0
        t.send(1)
        sender = t._to_device
        assert sender.watchdog.is_alive()  # waiting for the first batch
        release(t, gate)
        assert not sender.watchdog.is_alive() and not sender.thread.is_alive()
    assert stall_warnings(caught, "device_que:") == []


def test_get_next_warns_for_a_later_batch_and_gives_have_sent():
    gate = Gate(4)
    t = gated(gate).device_que()
    t.stall_warning_s = 0.05
    t.send(1)
    for i in (0, 1):
        gate.open(i)
        assert t.get_next(timeout=60)[0].tolist() == i
    wait_for(lambda: t.get_send_info()[0] == 2, "the second push to be counted")
    lines = warned_while_waiting(t, gate, 2)
    assert re.fullmatch(r"get_next has waited \d+\.\d s for a later batch, batch 3 \(have_sent: 2\)\.", lines[0])
    assert lines[2:4] == ["have_sent: 2;", "host_queue: 0, 0;"]
    assert lines[-1] == TOO_SLOW
    release(t, gate)


def test_a_pipeline_slower_than_training_is_preprocessing_too_slow():
    gate, t = one_batch_sent()
    lines = t.status_report().splitlines()
    assert lines[1:3] == ["have_sent: 1;", "host_queue: 0;"] and lines[-1] == TOO_SLOW
    with pytest.raises(RuntimeError) as info:
        t.get_next(timeout=0.05)
    lines = str(info.value).splitlines()
    assert lines[0] == "get_next: no batch for 0.05 s." and lines[2] == "have_sent: 1;" and lines[-1] == TOO_SLOW
    gate.open(1)  # a batch waiting in the device queue: the training side is the slower one
    wait_for(lambda: t.get_send_info()[0] == 2 and t.get_mbuf_queue_size() == 1, "the second batch to wait")
    assert t.status_report().splitlines()[-1] == ("verdict: sending normally (2 batches sent, 1 waiting in the "
                                                  "device queue).")
    release(t, gate)


def test_batches_waiting_on_the_host_while_the_sender_gets_no_time_is_device_queue_starved(monkeypatch):
    # The device queue (4 batches) fills while training does not ask; the sender then waits in its
    # push, so the pipeline starts its prefetch thread (a consumer away between rows). From its
    # 6th push on, the sender thread is held (as a training side holding the GIL would hold it),
    # while the prefetch thread goes on filling the host queue, and training empties the device queue.
    held = threading.Event()
    allowed = _transfer._Sender._wait_allowed

    def held_after_six_pushes(sender):
        if sender.have_sent >= 6:
            held.wait()
        return allowed(sender)

    monkeypatch.setattr(_transfer._Sender, "_wait_allowed", held_after_six_pushes)
    t = numbers(n=20, batch=1).device_que()
    t.send(1)
    sender = t._to_device
    try:
        wait_for(lambda: t.get_mbuf_queue_size() == 4 and sender.produced == 5, "a full device queue")
        time.sleep(0.05)  # the sender waits in its push: to the pipeline, a consumer away between rows
        assert [t.get_next(timeout=60)[1].tolist() for _ in range(6)] == [[i] for i in range(6)]
        wait_for(lambda: sender.host_size() == 14, "the other 14 batches ready in the host queue")
        with pytest.raises(RuntimeError) as info:
            t.get_next(timeout=0.05)
    finally:
        held.set()  # (also when the test fails: no sender is left held)
    lines = str(info.value).splitlines()
    assert lines[0] == "get_next: no batch for 0.05 s." and lines[2] == "have_sent: 6;"
    assert lines[-1] == ("verdict: device queue starved: 14 batches are ready in the host queue but the device "
                         "queue is empty: the sender thread does not get to push them; check the push times above, and "
                         "whether the training side holds the GIL (Python work between steps) or more threads are busy "
                         "than there are cores.")
    # the sender runs again: the rest arrives, in order
    assert [t.get_next(timeout=60)[1].tolist() for _ in range(14)] == [[i] for i in range(6, 20)]
    release(t)


def test_release_while_get_next_waits_is_the_device_side_failed_case():
    ds.config.set_sending_batches(1)  # the sender then waits on the cap, outside the pipeline
    try:
        t = numbers(n=10, batch=1).device_que()
        t.stall_warning_s = 0.05
        t.send(1)
        assert t.get_next(timeout=60)[1].tolist() == [0]
        sender = t._to_device
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            waiter, out = in_thread(lambda: t.get_next(timeout=60))
            wait_for(lambda: stall_warnings(caught, "get_next has waited"), "get_next to be waiting")
            release(t)
            waiter.join(60)
    finally:
        ds.config.set_sending_batches(0)
    assert not waiter.is_alive() and type(out["error"]) is RuntimeError
    lines = str(out["error"]).splitlines()
    assert lines[0] == f"get_next: {RELEASED}." and lines[2] == "have_sent: 1;"
    assert lines[-1] == f"verdict: device side failed: {RELEASED}; call send() again."
    assert not sender.thread.is_alive() and not sender.watchdog.is_alive()


def test_a_failed_push_is_the_device_side_failed_case():
    def unplugged(*args, **kwargs):
        raise OSError("device gone")

    gate, t = one_batch_sent()
    sender = t._to_device
    sender.device.put = unplugged  # the device side fails from the next push on
    gate.open(1)
    with pytest.raises(RuntimeError) as info:
        t.get_next(timeout=60)
    cause = "the sender failed sending batch 2: OSError: device gone"
    lines = str(info.value).splitlines()
    assert lines[0] == f"get_next: {cause}." and lines[2] == "have_sent: 1;"
    assert lines[-1] == f"verdict: device side failed: {cause}; fix the cause and call send() again."
    assert type(info.value.__cause__) is OSError and str(info.value.__cause__) == "device gone"
    assert not sender.thread.is_alive() and t.status_report().splitlines()[-1] == lines[-1]
    release(t, gate)


def test_stall_warning_s_is_checked():
    t = numbers().device_que()
    assert t.stall_warning_s == 25.0
    t.stall_warning_s = 2
    assert t.stall_warning_s == 2.0 and type(t.stall_warning_s) is float
    types = "[<class 'int'>, <class 'float'>]"
    for bad, message in [("1", f"value 1 is not of type {types}, but got <class 'str'>."),
                         (None, f"value None is not of type {types}, but got <class 'NoneType'>."),
                         (True, "value True is not of type (<class 'int'>, <class 'float'>), but got <class 'bool'>.")]:
        with pytest.raises(TypeError, match="^" + re.escape(f"Argument stall_warning_s with {message}") + "$"):
            t.stall_warning_s = bad
    for bad in (0, -1.5, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="^" + re.escape(f"stall_warning_s must be a positive, finite number of "
                                                             f"seconds, but got {bad!r}.") + "$"):
            t.stall_warning_s = bad
    assert t.stall_warning_s == 2.0
