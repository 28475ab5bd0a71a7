"""Dataset.device_que(): MindSpore's transfer dataset, its queue API and the status report."""
import re
import time
import warnings

import numpy as np
import pytest

import headrace.dataset as ds
from headrace.dataset._transfer import TransferDataset


def numbers(n=10, batch=2):
    return ds.NumpySlicesDataset({"x": np.arange(n * 2, dtype=np.float32).reshape(n, 2), "y": np.arange(n)},
                                 shuffle=False).batch(batch)


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


def test_a_slow_first_batch_warns_with_the_report_and_names_the_case():
    def slow(x):
        time.sleep(1.5)
        return x

    t = ds.NumpySlicesDataset({"x": np.arange(3)}, shuffle=False).map(slow).device_que()
    t.stall_warning_s = 0.3
    t.send(1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert t.get_next(timeout=60)[0].tolist() == 0
    texts = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert texts and texts[0].startswith("get_next has waited") and "for the first batch" in texts[0]
    assert "have_sent: 0;" in texts[0] and "verdict: nothing produced: the pipeline has not made its first batch" \
        in texts[0]
    t.release()


def test_release_ends_the_sender_and_is_idempotent():
    t = numbers(n=1000, batch=1).device_que()
    t.send()
    t.get_next(timeout=60)
    sender = t._to_device
    t.release()
    t.release()
    assert not sender.thread.is_alive()
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
