"""What worker processes report to the main process (issue 39): the warnings they raise."""
import warnings

import numpy as np
import pytest

import headrace.dataset as ds
from headrace._engine.exec import worker_warnings


class SampleWarning(UserWarning):
    """A user's own warning category, raised in the workers."""


def warn_odd(x):
    if int(x) % 2:
        warnings.warn(f"odd sample {int(x)}", SampleWarning)
        warnings.warn(f"odd sample {int(x)}", SampleWarning)  # the same text from the next line
    return x


LINE = warn_odd.__code__.co_firstlineno + 2


def _odd_pipeline(n=6, workers=2):
    return ds.NumpySlicesDataset({"x": np.arange(n)}, shuffle=False).map(
        warn_odd, input_columns="x", num_parallel_workers=workers, python_multiprocessing=True)


def _rows(data):
    return [int(r[0]) for r in data.create_tuple_iterator(output_numpy=True)]


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_worker_warnings_reach_the_main_process_filters(method):
    ds.config.set_multiprocessing_start_method(method)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        assert _rows(_odd_pipeline()) == list(range(6))
    got = [(w.category, str(w.message), w.filename, w.lineno) for w in rec if w.category is SampleWarning]
    assert sorted(got, key=lambda g: g[1]) == [(SampleWarning, f"odd sample {i}", __file__, line)
                                               for i in (1, 3, 5) for line in (LINE, LINE + 1)]


def test_simplefilter_error_raises_a_worker_warning_in_the_main_process():
    with warnings.catch_warnings():
        warnings.simplefilter("error", SampleWarning)
        with pytest.raises(SampleWarning, match="^odd sample 1$"):
            _rows(_odd_pipeline())


def test_main_process_filters_decide_what_is_shown():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", message="odd sample [15]", category=SampleWarning)
        warnings.filterwarnings("ignore", category=SampleWarning, module="tests.engine.test_worker_reports",
                                lineno=LINE + 1)
        assert _rows(_odd_pipeline()) == list(range(6))
    assert [str(w.message) for w in rec if w.category is SampleWarning] == ["odd sample 3"]


def test_a_worker_decode_warning_names_the_sample():
    import cv2

    from headrace._image.decode import ImageDataWarning
    from headrace.dataset import vision
    ok, enc = cv2.imencode(".jpg", np.random.RandomState(0).randint(0, 256, (64, 64, 3), np.uint8))
    good = enc.tobytes()
    cut = good[:len(good) // 2] + b"\xff\xd9"
    data = ds.NumpySlicesDataset([np.frombuffer(b, np.uint8) for b in (good, good, cut, good)], ["img"],
                                 shuffle=False)
    data = data.map(lambda x: vision.Decode()(x), input_columns="img", num_parallel_workers=2,
                    python_multiprocessing=True)
    with pytest.warns(ImageDataWarning, match=r"^Decode: The JPEG data ends early \(sample index: 2\)"):
        shapes = [r[0].shape for r in data.create_tuple_iterator(output_numpy=True)]
    assert shapes == [(64, 64, 3)] * 4


def test_one_task_sends_each_warning_once_and_at_most_a_bounded_number(monkeypatch):
    monkeypatch.setattr(worker_warnings, "MAX_PER_TASK", 3)
    rec = worker_warnings._record
    for i in range(5):
        rec(SampleWarning(f"w{i}"), SampleWarning, __file__, 7)
        rec(SampleWarning(f"w{i}"), SampleWarning, __file__, 7)
    got = worker_warnings.take()
    assert [g[1] for g in got] == ["w0", "w1", "w2", "4 more warnings of one worker task were dropped "
                                   "(at most 3 distinct ones travel per task)."]
    assert got[0] == (SampleWarning, "w0", __file__, 7, "tests.engine.test_worker_reports")
    assert worker_warnings.take() is None


def test_a_category_that_cannot_travel_becomes_a_user_warning_naming_it():
    class Local(UserWarning):
        pass
    worker_warnings._record(Local("x"), Local, __file__, 3)
    assert worker_warnings.take() == [(UserWarning, "Local: x", __file__, 3, "tests.engine.test_worker_reports")]


# ---- a worker that cannot answer: the sample comes from what the main process sent (item 14) --

def stop_at_3(x):
    import os
    import signal
    if int(x) == 3:
        os.kill(os.getpid(), signal.SIGSTOP)  # as a debugger or a frozen container would
    return x


def _named_samples(text):
    import re
    m = re.search(r"the worker was running samples? ([\d a-z]+?) of pass 0", text)
    assert m, text
    return [int(n) for n in re.findall(r"\d+", m.group(1))]


def _stopping_pipeline():
    return ds.NumpySlicesDataset({"x": np.arange(8)}, shuffle=False).map(
        stop_at_3, input_columns="x", num_parallel_workers=2, python_multiprocessing=True)


def test_worker_timeout_of_a_stopped_worker_names_its_sample():
    from headrace._util.errors import WorkerTimeoutError
    ds.config.set_worker_timeout(2)
    it = _stopping_pipeline().create_tuple_iterator(output_numpy=True)
    try:
        with pytest.raises(WorkerTimeoutError) as info:
            list(it)
    finally:
        it.stop()
    text = str(info.value)
    assert "(no stack: the worker process is stopped, by SIGSTOP or a debugger, and cannot answer)" in text
    samples = _named_samples(text)
    assert 3 in samples and len(samples) <= 2  # its task, or the task whose result it holds back with it
    assert info.value.index in (None, 3) and info.value.columns == ["x"]
    assert "did not return within the worker timeout of 2 s" in text


def test_stall_warning_of_a_stopped_worker_names_its_sample():
    from headrace._util.errors import WorkerStallWarning
    ds.config.set_multiprocessing_timeout_interval(1)
    it = _stopping_pipeline().create_tuple_iterator(output_numpy=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", WorkerStallWarning)  # the first report ends the wait
            with pytest.raises(WorkerStallWarning) as info:
                list(it)
    finally:
        it.stop()
    text = str(info.value)
    assert text.startswith("map operation: [PyFunc] has been running for ")
    assert "without returning (pid " in text  # the sample is named in place of the stack
    assert 3 in _named_samples(text)


def test_the_stopped_state_is_read_from_proc():
    import os
    import signal
    import subprocess
    import sys
    from headrace._engine.exec import watchdog
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        assert not watchdog._stopped(proc.pid)
        os.kill(proc.pid, signal.SIGSTOP)
        from tests.helpers import wait_for
        wait_for(lambda: watchdog._stopped(proc.pid), "the child to stop")
    finally:
        proc.kill()
        proc.wait()
    assert not watchdog._stopped(None)
