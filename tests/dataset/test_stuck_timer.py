"""When a worker timeout's clock runs, and what the report says when no user frame is there.

The main process starts a task's clock when it starts waiting for the result; on a busy machine the
worker may not have begun the task by then (still starting, or between tasks). The timeout must
not blame "the call" with a stack of the worker's own loop: the clock restarts when the worker
becomes ready and when its answer says it is outside every op (NOTE [ the timeout counts the
worker's time on the task ] in watchdog.py). A fake clock and a fake signal make these exact.
"""
from __future__ import annotations

import sys
import threading

import pytest

from headrace._engine.exec import watchdog
from headrace._engine.ops import map as _map
from headrace._util.errors import WorkerTimeoutError
from tests.helpers import wait_for


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def monotonic(self):
        return self.now


PID = 2**31 - 1  # no such process: /proc has nothing to say about it


class _Worker:
    def __init__(self, ready=True):
        self.pid = PID
        self.ready = ready


class _Module:
    """A module as the watchdog sees it, with some names replaced (the real module stays as it is
    for every other thread)."""

    def __init__(self, real, **names):
        self._real, self._names = real, names

    def __getattr__(self, name):
        return self._names[name] if name in self._names else getattr(self._real, name)


@pytest.fixture
def clock(monkeypatch):
    c = _Clock()
    c.asked = []
    monkeypatch.setattr(watchdog, "time", _Module(watchdog.time, monotonic=c.monotonic))
    monkeypatch.setattr(watchdog, "os", _Module(watchdog.os, kill=lambda pid, sig: c.asked.append((pid, sig))))
    return c


def _wait(worker, timeout=3.0, interval=100.0):
    return watchdog.ProcessWait("map operation: [PyFunc]", worker, interval, timeout,
                                task=lambda: (5, ", running sample 5 of pass 0"), columns=("data",))


IN_OP = {"op": "map operation: [PyFunc]", "columns": ["data"], "index": 5, "file": None, "in_op": True,
         "stack": '  File "s.py", line 3, in forever\n    time.sleep(600)'}
IDLE = {"op": "map operation: [PyFunc]", "columns": None, "index": None, "file": None, "in_op": False,
        "stack": '  File "connection.py", line 9, in recv_bytes'}


def test_a_timeout_answered_from_outside_every_op_restarts_the_clock(clock):
    wait = _wait(_Worker())
    clock.now += 2.9
    assert wait.poll() is None and clock.asked == []
    clock.now += 0.1  # 3 s: the timeout asks the worker for its stack
    assert wait.poll() is None and clock.asked == [(PID, watchdog.ASK)]
    assert wait.answer(IDLE) is None  # it had not begun the task: 3 s from now
    clock.now += 2.9
    assert wait.poll() is None and len(clock.asked) == 1
    clock.now += 0.1
    assert wait.poll() is None and len(clock.asked) == 2
    err = wait.answer(IN_OP)  # now in the user's call: the error shows the user's line
    assert isinstance(err, WorkerTimeoutError)
    assert (err.op, err.columns, err.index, err.pid, err.seconds) == ("map operation: [PyFunc]", ["data"], 5, PID, 3.0)
    assert "time.sleep(600)" in str(err) and "recv_bytes" not in str(err)


def test_a_worker_outside_every_op_for_two_timeouts_fails_saying_it_never_began(clock):
    wait = _wait(_Worker())
    for _ in range(2):
        clock.now += 3.0
        assert wait.poll() is None
        err = wait.answer(IDLE)
    assert len(clock.asked) == 2
    assert isinstance(err, WorkerTimeoutError)
    assert (err.columns, err.index, err.pid) == (["data"], 5, PID)
    assert err.python_stack == (watchdog._NOT_BEGUN + "; the worker was running sample 5 of pass 0")
    assert "recv_bytes" not in str(err)


def test_the_clock_restarts_when_the_worker_becomes_ready(clock):
    worker = _Worker(ready=False)
    wait = _wait(worker)
    clock.now += 2.5
    assert wait.poll() is None
    worker.ready = True  # its "ready" came: it could not run the task before
    assert wait.poll() is None
    clock.now += 2.9  # 5.4 s since the wait began, 2.9 s since the worker started
    assert wait.poll() is None and clock.asked == []
    clock.now += 0.1
    assert wait.poll() is None and clock.asked == [(PID, watchdog.ASK)]


def test_a_worker_that_never_starts_times_out_saying_so(clock):
    wait = _wait(_Worker(ready=False))
    clock.now += 3.0
    err = wait.poll()
    assert isinstance(err, WorkerTimeoutError) and clock.asked == []
    assert err.python_stack == ("(no stack: the worker process has not finished starting); "
                                "the worker was running sample 5 of pass 0")


def test_a_report_answered_from_outside_every_op_is_skipped(clock):
    wait = _wait(_Worker(), timeout=0, interval=1.0)
    clock.now += 1.0
    assert wait.poll() is None and len(clock.asked) == 1
    with _no_warning():
        assert wait.answer(IDLE) is None
    clock.now += 0.9  # the next request at 2 s
    assert wait.poll() is None and len(clock.asked) == 1
    clock.now += 0.1
    assert wait.poll() is None and len(clock.asked) == 2


class _no_warning:
    def __enter__(self):
        import warnings
        self._w = warnings.catch_warnings(record=True)
        self.got = self._w.__enter__()
        warnings.simplefilter("always")

    def __exit__(self, *exc):
        self._w.__exit__(*exc)
        assert self.got == []


class _Op:
    """What ``MapFn.apply`` reads of its ``self``."""

    name, in_names, one = "map operation: [PyFunc]", ("data",), 0

    def __init__(self, fn):
        self.fn = fn

    def finish(self, row, out, index):
        return out

    def fail(self, e, index):
        raise e


def _located_while_blocked(fn, release, inner):
    """``locate`` for a thread that runs ``MapFn.apply`` on sample 7 with the function ``fn``,
    taken once a frame named ``inner`` is on its stack; ``release()`` lets it go."""
    done = []
    t = threading.Thread(target=lambda: done.append(_map.MapFn.apply(_Op(fn), (True,), 7)), daemon=True)
    t.start()

    def blocked():
        f = sys._current_frames().get(t.ident)
        while f is not None and f.f_code.co_name != inner:
            f = f.f_back
        return f is not None
    wait_for(blocked, "the thread to block in the op")
    info = watchdog.describe_thread(t.ident, "fallback")
    release()
    t.join(30)
    assert done and not t.is_alive()
    return info


def test_a_function_without_a_python_frame_is_reported_as_such():
    lock = threading.Lock()
    lock.acquire()
    info = _located_while_blocked(lock.acquire, lock.release, "apply")  # C code: no frame of its own
    assert (info["op"], info["columns"], info["index"], info["in_op"]) == ("map operation: [PyFunc]", ["data"], 7, True)
    lines = info["stack"].split("\n")
    assert lines[0].endswith(", in apply") and lines[-1] == watchdog.NOT_ENTERED, info["stack"]


def test_a_python_function_is_reported_with_its_own_line_and_no_note():
    go = threading.Event()

    def python_wait(x):
        return go.wait(60)  # the user's line

    info = _located_while_blocked(python_wait, go.set, "python_wait")
    assert info["index"] == 7 and info["in_op"] is True
    assert ", in python_wait\n    return go.wait(60)  # the user's line" in info["stack"]
    assert watchdog.NOT_ENTERED not in info["stack"]


def test_a_timeout_waits_longer_for_the_stack_than_a_report(clock):
    wait = _wait(_Worker(), timeout=3.0, interval=1.0)
    clock.now += 1.0
    assert wait.poll() is None and len(clock.asked) == 1  # the report's request
    clock.now += watchdog.ANSWER_WAIT
    with pytest.warns(watchdog.WorkerStallWarning) as got:
        assert wait.poll() is None  # reported without the stack
    assert watchdog.NO_STACK in str(got[0].message)
    assert wait.poll() is None and len(clock.asked) == 2  # 3 s: the timeout's request
    clock.now += watchdog.TIMEOUT_ANSWER_WAIT - 0.1
    assert wait.poll() is None  # still waiting for the stack
    clock.now += 0.1
    err = wait.poll()
    assert isinstance(err, WorkerTimeoutError) and err.index == 5
    assert err.python_stack == watchdog.NO_STACK + "; the worker was running sample 5 of pass 0"
