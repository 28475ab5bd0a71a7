"""A user function that hangs explains itself (issue 12, item 3).

After ``ds.config.set_multiprocessing_timeout_interval`` seconds a ``WorkerStallWarning`` names the
op, the column, the exact sample index, the worker's pid and the stuck call's Python stack, again
at 2x, 4x, ...; ``ds.config.set_worker_timeout`` turns the call into a ``WorkerTimeoutError``. The
same in thread and process workers. Every scenario runs in a subprocess with a hard timeout; the
stuck function waits for a flag file the script creates once it has seen the reports it wants,
so nothing depends on how fast the machine is.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import headrace.dataset as ds
from headrace._util.errors import WorkerStallWarning, WorkerTimeoutError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODES = [pytest.param(False, id="threads"), pytest.param(True, id="processes")]

PRELUDE = textwrap.dedent('''
    import json, os, sys, time, warnings
    import numpy as np
    import headrace.dataset as ds
    from headrace._util.errors import WorkerStallWarning
    flag, pidfile, procs = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
    reports = []
    def show(message, category, *rest):
        if category is WorkerStallWarning:
            reports.append(str(message))
            # WANT reports that contain WANT_TEXT (a slow start-up may be reported first)
            if sum(os.environ.get("WANT_TEXT", "") in r for r in reports) == int(os.environ.get("WANT", "2")):
                open(flag, "w").close()
    warnings.showwarning = show
    warnings.simplefilter("always")
    def gen():
        for i in range(8):
            yield (np.array(i), np.array(-i))
    def out(rows, err=None):
        print("RESULT " + json.dumps({"reports": reports, "rows": rows, "error": err,
                                       "main_pid": os.getpid()}))
''')


def _stuck_at_5(name, how):
    """The text of a map function ``name`` that returns its input, but at sample 5 first writes its
    pid to ``pidfile`` and then runs the lines ``how``."""
    return f'''
def {name}(x):
    if int(x) == 5:
        with open(pidfile, "w") as f:
            f.write(str(os.getpid()))
{textwrap.indent(textwrap.dedent(how).strip(), " " * 8)}
    return x
'''


SLEEPS = _stuck_at_5("stuck", '''
    while not os.path.exists(flag):
        time.sleep(0.02)  # stuck here, in C
''')

SPINS = _stuck_at_5("stuck", '''
    n = 0
    while not os.path.exists(flag):  # a check every ~0.1 s: the rest is pure Python
        for _ in range(100000):
            n = sum(range(20)) + n % 7  # stuck here, in Python
''')

# Reported after 1 s (the tests find the comment in the stack).
FOREVER = _stuck_at_5("forever", "time.sleep(600)  # never returns in time") + \
    "ds.config.set_multiprocessing_timeout_interval(1)\n"

RUN_MAP = '''
ds.config.set_multiprocessing_timeout_interval(1)
d = ds.GeneratorDataset(gen, ["data", "label"], shuffle=False).map(
    stuck, ["data"], num_parallel_workers=2, python_multiprocessing=procs)
out([int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)])
'''


def run_script(body: str, tmp_path, processes: bool, env: dict | None = None) -> tuple[dict, int]:
    flag, pidfile, script = tmp_path / "flag", tmp_path / "pid", tmp_path / "scenario.py"
    script.write_text(PRELUDE + body)  # a file: the reports quote its lines
    res = subprocess.run([sys.executable, str(script), str(flag), str(pidfile), "1" if processes else "0"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT,
                         env=dict(os.environ, **(env or {})))
    assert res.returncode == 0, res.stderr
    line = [ln for ln in res.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    return json.loads(line[7:]), int(pidfile.read_text())


@pytest.mark.parametrize("processes", MODES)
@pytest.mark.parametrize("body,line", [(SLEEPS, "time.sleep(0.02)  # stuck here, in C"),
                                       (SPINS, "n = sum(range(20)) + n % 7  # stuck here, in Python")],
                         ids=["blocked", "spinning"])
def test_a_stuck_map_is_reported_with_op_column_sample_pid_and_stack(tmp_path, processes, body, line):
    got, pid = run_script(body + RUN_MAP, tmp_path, processes)
    assert got["rows"] == list(range(8))  # the call returned once the flag was there: nothing lost
    assert (pid != got["main_pid"]) is processes
    first, second = got["reports"][:2]
    for text in (first, second):
        assert text.startswith("map operation: [PyFunc] has been running for ")
        assert "without returning at column: ['data'], sample index: 5 (pid %d" % pid in text
        assert "Python stack of the stuck call (most recent call last):\n" in text
        # the innermost frame of the user's function, quoted: mostly `line`, now and then another
        # line of its loop (the stack is taken wherever the call is at that moment)
        quoted = text.split(", in stuck\n    ", 1)[1].split("\n", 1)[0]
        assert quoted == line or quoted in ("for _ in range(100000):",) or \
            quoted.startswith("while not os.path.exists(flag):"), text
        assert "ds.config.set_multiprocessing_timeout_interval(seconds)" in text
        assert "ds.config.set_worker_timeout(seconds)" in text
    # growing intervals: first after 1 s, then at 2 s, 4 s
    assert "Next report at 2 s." in first and "Next report at 4 s." in second
    if not processes:
        assert f"(pid {pid}, thread '" in first


def test_a_stuck_map_in_a_spawned_worker_is_reported(tmp_path):
    got, pid = run_script(SLEEPS + "ds.config.set_multiprocessing_start_method('spawn')\n" + RUN_MAP,
                          tmp_path, True, env={"WANT": "1", "WANT_TEXT": "sample index: 5"})
    assert got["rows"] == list(range(8)) and pid != got["main_pid"]
    # the stuck call's report (on a busy machine a spawned worker's start-up can be reported first)
    text = [r for r in got["reports"] if "sample index: 5" in r][0]
    assert "without returning at column: ['data'], sample index: 5 (pid %d)" % pid in text
    assert ", in stuck\n" in text


@pytest.mark.parametrize("processes", MODES)
def test_worker_timeout_turns_a_stuck_call_into_an_error(tmp_path, processes):
    body = FOREVER + '''
ds.config.set_worker_timeout(3)
d = ds.GeneratorDataset(gen, ["data", "label"], shuffle=False).map(
    forever, ["data"], num_parallel_workers=2, python_multiprocessing=procs)
rows = []
try:
    for r in d.create_tuple_iterator(output_numpy=True):
        rows.append(int(r[0]))
except RuntimeError as e:
    err = {"type": type(e).__name__, "op": e.op, "columns": e.columns, "index": e.index, "pid": e.pid,
           "seconds": e.seconds, "thread": e.thread, "text": str(e)}
    if procs:  # the stuck worker process was stopped
        deadline = time.monotonic() + 30
        pid = int(open(pidfile).read())
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        break
            except (ProcessLookupError, FileNotFoundError):
                break
            time.sleep(0.05)
        else:
            err["worker_alive"] = True
    out(rows, err)
    sys.exit(0)
out(rows)
'''
    got, pid = run_script(body, tmp_path, processes, env={"WANT": "99"})
    err = got["error"]
    assert err is not None, got
    # rows in order, then the error (rows computed in the stuck sample's task, before it, are lost
    # with the task)
    assert got["rows"] == list(range(len(got["rows"]))) and len(got["rows"]) <= 5
    assert err["type"] == "WorkerTimeoutError"
    assert (err["op"], err["columns"], err["index"], err["pid"], err["seconds"]) == (
        "map operation: [PyFunc]", ["data"], 5, pid, 3)
    assert (err["thread"] is None) is processes
    assert "worker_alive" not in err
    text = err["text"]
    assert "map operation: [PyFunc] failed at column: ['data'], sample index: 5. Error description:\n" in text
    assert "time.sleep(600)  # never returns in time" in text
    assert (f"[ERROR] map operation: [PyFunc]: the call did not return within the worker timeout of 3 s "
            f"(pid {pid}") in text
    assert "Set the timeout with ds.config.set_worker_timeout(seconds) (0 turns it off)." in text


def stuck_source(row: str) -> str:
    """The text of a random-access source ``Src`` of 8 rows, ``row`` each (an expression of ``i``),
    whose read of index 6 writes its pid to ``pidfile`` and then waits for the flag."""
    return f'''
class Src:
    def __len__(self):
        return 8
    def __getitem__(self, i):
        if i == 6:
            with open(pidfile, "w") as f:
                f.write(str(os.getpid()))
            while not os.path.exists(flag):
                time.sleep(0.02)  # the read is stuck
        return {row}
'''


def test_a_stuck_source_read_in_a_worker_process_names_the_source_index(tmp_path):
    body = stuck_source("np.array(i)") + '''
ds.config.set_multiprocessing_timeout_interval(1)
d = ds.GeneratorDataset(Src(), ["data"], shuffle=False, num_parallel_workers=2)
out([int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)])
'''
    got, pid = run_script(body, tmp_path, True, env={"WANT": "1"})
    assert got["rows"] == list(range(8))
    text = got["reports"][0]
    assert text.startswith("GeneratorDataset has been running for ")
    assert f"without returning at sample index: 6 (pid {pid})" in text
    # the stack is taken wherever the loop is: in the sleep or in the check of the flag
    assert "time.sleep(0.02)  # the read is stuck" in text or "while not os.path.exists(flag)" in text, text


WAIT_FOR_FLAG = """
    with open(pidfile, "w") as f:
        f.write(str(os.getpid()))
    while not os.path.exists(flag):
        time.sleep(0.02)  # waiting for the flag
"""


@pytest.mark.parametrize("processes", MODES)
@pytest.mark.parametrize("op,build,header", [
    ("filter", "ds.GeneratorDataset(gen, ['data', 'label'], shuffle=False).filter(pred, ['label'], "
               "num_parallel_workers=2)",
     "filter operation: [PyFunc] has been running for {s} without returning at column: ['label'], sample index: 4"),
    ("per_batch_map", "ds.GeneratorDataset(gen, ['data', 'label'], shuffle=False).batch(2, per_batch_map=pbm, "
                      "input_columns=['data'], num_parallel_workers=2, python_multiprocessing=procs)",
     "batch operation: [per_batch_map] has been running for {s} without returning at column: ['data'], "
     "sample index: 2"),
])
def test_stuck_filters_and_per_batch_maps_name_their_op_and_index(tmp_path, processes, op, build, header):
    if op == "filter" and processes:
        pytest.skip("filter has no python_multiprocessing: it runs in threads")
    body = f"""
def pred(label):
    if int(label) == -4:
{textwrap.indent(WAIT_FOR_FLAG, "    ")}
    return True
def pbm(data, info):
    if info.get_batch_num() == 2:
{textwrap.indent(WAIT_FOR_FLAG, "    ")}
    return (data,)
ds.config.set_multiprocessing_timeout_interval(1)
d = {build}
out([len(r) for r in d.create_tuple_iterator(output_numpy=True)])
"""
    got, pid = run_script(body, tmp_path, processes, env={"WANT": "1"})
    text = got["reports"][0]
    head, rest = header.split("{s}")
    assert text.startswith(head) and rest + f" (pid {pid}" in text, text
    assert "time.sleep(0.02)  # waiting for the flag" in text or "while not os.path.exists(flag)" in text


def test_a_worker_holding_the_gil_is_reported_without_its_stack(tmp_path):
    # ctypes.PyDLL keeps the GIL during the call: the worker cannot answer, the main process
    # still reports what it knows.
    body = '''
import ctypes
libc = ctypes.PyDLL(None)
def hog(x):
    if int(x) == 5:
        with open(pidfile, "w") as f:
            f.write(str(os.getpid()))
        libc.sleep(6)
    return x
ds.config.set_multiprocessing_timeout_interval(1)
d = ds.GeneratorDataset(gen, ["data", "label"], shuffle=False).map(
    hog, ["data"], num_parallel_workers=2, python_multiprocessing=True)
out([int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)])
'''
    got, pid = run_script(body, tmp_path, True, env={"WANT": "1"})
    assert got["rows"] == list(range(8))
    text = got["reports"][0]
    assert f"without returning (pid {pid}). Python stack of the stuck call" in text
    assert "(the stack could not be read: the call holds the GIL in native code and does not answer)" in text


@pytest.mark.parametrize("value,exc", [(0, ValueError), (-1, ValueError), (2**31, ValueError),
                                       (1.5, TypeError), (True, TypeError), ("3", TypeError)])
def test_the_report_interval_is_checked_as_in_mindspore(value, exc):
    with pytest.raises(exc) as info:
        ds.config.set_multiprocessing_timeout_interval(value)
    assert str(info.value) == ("interval isn't of type int." if exc is TypeError else
                               "Interval given is not within the required range (0, INT32_MAX(2147483647)).")
    assert ds.config.get_multiprocessing_timeout_interval() == 300


@pytest.mark.parametrize("value", [1, 2147483647])
def test_the_report_interval_accepts_1_to_int32_max(value):
    ds.config.set_multiprocessing_timeout_interval(value)
    assert ds.config.get_multiprocessing_timeout_interval() == value


@pytest.mark.parametrize("value", [0, 1, 2.5, 2147483647])
def test_set_worker_timeout_accepts_zero_and_positive_seconds(value):
    assert ds.config.get_worker_timeout() == 0
    ds.config.set_worker_timeout(value)
    assert ds.config.get_worker_timeout() == value


@pytest.mark.parametrize("value,exc,message", [
    (-1, ValueError, "timeout must be 0 (no timeout) or a number of seconds in (0, INT32_MAX(2147483647)], "
                     "but got -1."),
    (2147483648, ValueError, "but got 2147483648."),
    (float("nan"), ValueError, "but got nan."),
    (True, TypeError, "timeout isn't of type int or float, but got bool."),
    ("3", TypeError, "timeout isn't of type int or float, but got str."),
])
def test_set_worker_timeout_refuses_bad_values(value, exc, message):
    with pytest.raises(exc) as info:
        ds.config.set_worker_timeout(value)
    assert message in str(info.value)
    assert ds.config.get_worker_timeout() == 0


def test_the_public_error_and_warning_types():
    assert issubclass(WorkerTimeoutError, RuntimeError)
    assert issubclass(WorkerStallWarning, RuntimeWarning)
    err = WorkerTimeoutError("map operation: [PyFunc]", 2.5, columns=["a"], index=3, pid=12, thread="t")
    import pickle
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is WorkerTimeoutError and str(back) == str(err)
    assert (back.seconds, back.pid, back.thread, back.index) == (2.5, 12, "t", 3)


WATCHDOG_OFF = '''
import threading
def slow(x):
    if int(x) == 5:
        with open(pidfile, "w") as f:
            f.write(str(os.getpid()))
        time.sleep(2.5)  # past 1 s and 2 s, when reports would come with the watchdog on
    return x
ds.config.set_enable_watchdog(False)
ds.config.set_multiprocessing_timeout_interval(1)
d = ds.GeneratorDataset(gen, ["data", "label"], shuffle=False).map(
    slow, ["data"], num_parallel_workers=2, python_multiprocessing=procs)
rows = [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)]
reports.append("threads: " + ",".join(sorted({t.name for t in threading.enumerate()})))
out(rows)
'''


@pytest.mark.parametrize("processes", MODES)
def test_with_the_watchdog_off_nothing_is_reported_and_no_watchdog_thread_starts(tmp_path, processes):
    got, pid = run_script(WATCHDOG_OFF, tmp_path, processes)
    assert got["rows"] == list(range(8))
    assert (pid != got["main_pid"]) is processes
    assert len(got["reports"]) == 1, got["reports"]  # no WorkerStallWarning: only the thread list
    assert "headrace-watchdog" not in got["reports"][0]


def test_the_watchdog_setting_is_read_when_an_iterator_is_created():
    assert ds.config.get_enable_watchdog() is True
    try:
        ds.config.set_enable_watchdog(False)
        assert ds.config.get_enable_watchdog() is False
        with pytest.raises(TypeError, match="enable must be of type bool"):
            ds.config.set_enable_watchdog(0)
        ds.config.set_worker_timeout(5)
        d = ds.NumpySlicesDataset([1, 2], shuffle=False)
        with pytest.raises(ValueError) as e:
            d.create_tuple_iterator()
        assert str(e.value) == ("ds.config.set_worker_timeout(5) needs the watchdog, which "
                                "ds.config.set_enable_watchdog(False) turned off; turn the watchdog on, or the "
                                "timeout off with ds.config.set_worker_timeout(0).")
        ds.config.set_worker_timeout(0)
        assert [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)] == [1, 2]
    finally:
        ds.config.set_worker_timeout(0)
        ds.config.set_enable_watchdog(True)
