"""Concurrent FileWriters on one path: one writer holds the files from open to commit, others are refused."""
from __future__ import annotations

import fcntl
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import traceback

import pytest

from headrace.mindrecord import FileReader, FileWriter, WriteReport
from headrace.mindrecord._format import writer as writer_mod
from headrace.mindrecord._format.errors import MindRecordRuntimeError
from headrace.mindrecord._format.lock import lock_path

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA = {"w": {"type": "int32"}, "k": {"type": "int32"}}


def _writer(path, who, n=5, **kw):
    w = FileWriter(path, **kw)
    w.add_schema(SCHEMA)
    w.write_raw_data([{"w": who, "k": k} for k in range(n)])
    return w


def _refused(path, pid):
    """The message a refused writer gets: the file, and who holds it."""
    return re.compile(re.escape(f"Invalid file, another FileWriter is writing {path} (pid {pid} on "
                                f"{socket.gethostname()} (") + r"[^)]*\), since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)\. "
                      + re.escape("Wait until it commits, or write to another file name."))


def _rows(path):
    return [(r["w"], r["k"]) for r in FileReader(path).get_next()]


def test_second_writer_refused_until_the_first_commits(tmp_path):
    path = str(tmp_path / "a.mindrecord")
    first = _writer(path, 1)
    second = FileWriter(path)
    second.add_schema(SCHEMA)
    with pytest.raises(MindRecordRuntimeError) as exc:
        second.write_raw_data([{"w": 2, "k": 0}])
    assert _refused(path, os.getpid()).fullmatch(exc.value.args[0].split("[ERROR] ")[-1].strip()), str(exc.value)
    third = FileWriter(path, overwrite=True)
    third.add_schema(SCHEMA)
    with pytest.raises(MindRecordRuntimeError, match="another FileWriter is writing"):
        third.commit()
    first.commit()
    assert sorted(os.listdir(tmp_path)) == ["a.mindrecord", "a.mindrecord.db"]   # lock file gone
    with pytest.raises(MindRecordRuntimeError, match="mindrecord files already exist"):
        second.write_raw_data([{"w": 2, "k": 0}])
    assert _rows(path) == [(1, k) for k in range(5)]


def test_lock_covers_appends(tmp_path):
    path = str(tmp_path / "app.mindrecord")
    _writer(path, 1).commit()
    app = FileWriter.open_for_append(path)
    with pytest.raises(MindRecordRuntimeError, match=re.escape(f"another FileWriter is writing {path} (pid")):
        FileWriter.open_for_append(path)
    with pytest.raises(MindRecordRuntimeError, match="another FileWriter is writing"):
        _writer(path, 3, overwrite=True)
    app.write_raw_data([{"w": 2, "k": 9}])
    app.commit()
    again = FileWriter.open_for_append(path)       # released at commit
    again.write_raw_data([{"w": 4, "k": 0}])
    again.commit()
    assert _rows(path) == [(1, k) for k in range(5)] + [(2, 9), (4, 0)]
    assert sorted(os.listdir(tmp_path)) == ["app.mindrecord", "app.mindrecord.db"]


def test_lock_released_when_open_fails_or_writer_is_dropped(tmp_path):
    path = str(tmp_path / "r.mindrecord")
    _writer(path, 1).commit()
    with pytest.raises(MindRecordRuntimeError, match="already exist"):
        _writer(path, 2)                            # refused after taking the lock: it gives it back
    dropped = _writer(path, 3, overwrite=True)
    del dropped                                     # never committed: its finalizer releases
    _writer(path, 4, overwrite=True).commit()
    assert _rows(path) == [(4, k) for k in range(5)]
    assert sorted(os.listdir(tmp_path)) == ["r.mindrecord", "r.mindrecord.db"]


def test_a_dropped_writer_in_a_reference_cycle_does_not_block_the_next_one(tmp_path):
    # MindSpore's test_file_writer_parallel: a writer whose write_raw_data raised is abandoned while
    # the error's traceback (a cycle) still holds it; the next writer of that file must go ahead.
    import gc
    path = str(tmp_path / "c.mindrecord")
    gc.disable()
    try:
        w = _writer(path, 1)
        w.cycle = w                                 # only a garbage collection can free it now
        del w
        _writer(path, 2, overwrite=True).commit()   # this process holds the lock: collect, then take it
    finally:
        gc.enable()
    assert _rows(path) == [(2, k) for k in range(5)]
    live = _writer(path, 3, overwrite=True)         # a writer still in use keeps its lock
    with pytest.raises(MindRecordRuntimeError, match="another FileWriter is writing"):
        _writer(path, 4, overwrite=True)
    live.commit()


_MIXED_UP = "The parameter `parallel_writer` must be consistent during use."


def test_a_writer_that_only_an_exception_refers_to_does_not_block_the_next_one(tmp_path, monkeypatch):
    import gc
    monkeypatch.setattr(writer_mod, "MEMORY_LIMIT", 1)      # the dropped writer has temporary files
    path = str(tmp_path / "p.mindrecord")
    gc.disable()                                             # freed by its last reference, not by a collection
    try:
        # MindSpore's test_file_writer_parallel: rows in parallel_writer mode, then a call without it
        # (refused); the exception is kept (``pytest.raises(...) as e``) while the writer is replaced
        w = FileWriter(path, 2)
        w.add_schema(SCHEMA)
        w.write_raw_data([{"w": 1, "k": k} for k in range(2)], True)
        with pytest.raises(RuntimeError, match=_MIXED_UP) as e:
            w.write_raw_data([{"w": 1, "k": 7}])
        assert sum(name.endswith(".hrtmp") for name in os.listdir(tmp_path)) == 2
        w = FileWriter(path, 2)                              # replaces the first: e still holds the exception
        w.add_schema(SCHEMA)
        w.write_raw_data([{"w": 2, "k": k} for k in range(3)])
        w.commit()
    finally:
        gc.enable()
    assert sorted(os.listdir(tmp_path)) == [f"p.mindrecord{i}{x}" for i in range(2) for x in ("", ".db")]
    assert sorted(_rows(path + "0")) == [(2, k) for k in range(3)]
    text = "".join(traceback.format_exception(e.value))     # the traceback still reads as before
    assert 'raise RuntimeError("The parameter `parallel_writer` must be consistent during use.")' in text
    assert "in write_raw_data" in text


def _mixed_up_in_a_function(path):
    """The error of a writer that the function's own frame holds: once it returns, only the
    traceback of the error it returns refers to that frame."""
    w = FileWriter(path, 2)
    w.add_schema(SCHEMA)
    w.write_raw_data([{"w": 1, "k": 0}], True)
    try:
        w.write_raw_data([{"w": 1, "k": 7}])
    except RuntimeError as e:
        return e
    raise AssertionError("write_raw_data took rows with another parallel_writer")  # pragma: no cover


def test_a_writer_that_only_a_finished_frame_of_a_kept_error_refers_to_is_given_up(tmp_path, monkeypatch):
    import gc
    monkeypatch.setattr(writer_mod, "MEMORY_LIMIT", 1)
    path = str(tmp_path / "f.mindrecord")
    gc.disable()
    try:
        e = _mixed_up_in_a_function(path)
        new = FileWriter(path, 2)
        new.add_schema(SCHEMA)
        new.write_raw_data([{"w": 2, "k": k} for k in range(2)])   # the old writer is given up, not waited for
        new.commit()
    finally:
        gc.enable()
    assert sorted(os.listdir(tmp_path)) == [f"f.mindrecord{i}{x}" for i in range(2) for x in ("", ".db")]
    assert _rows(path + "0") == [(2, 0), (2, 1)]
    old = e.__traceback__.tb_frame.f_locals["w"]                    # nobody would, but it says what happened
    with pytest.raises(MindRecordRuntimeError, match=re.escape(
            "this FileWriter was closed after a failure (another FileWriter took its files while only an "
            "exception's traceback referred to it); start a new FileWriter.")):
        old.commit()


def test_a_writer_a_running_function_holds_is_not_given_up_though_an_error_frame_holds_it_too(tmp_path):
    path = str(tmp_path / "g.mindrecord")
    live = FileWriter(path, 2)
    live.add_schema(SCHEMA)
    live.write_raw_data([{"w": 1, "k": 0}], True)

    def step(writer):                   # finished: its frame, which holds the writer, stays in e's traceback
        writer.write_raw_data([{"w": 1, "k": 7}])

    with pytest.raises(RuntimeError, match=_MIXED_UP) as e:
        step(live)
    with pytest.raises(MindRecordRuntimeError, match=re.escape(f"another FileWriter is writing {path}0 (pid")):
        _writer(path, 2, shard_num=2)
    assert e.value.__traceback__.tb_next.tb_frame.f_locals["writer"] is live   # (after: f_locals refers to it)
    live.write_raw_data([{"w": 1, "k": 1}], True)
    live.commit()
    assert _rows(path + "0") == [(1, 0), (1, 1)]


def test_a_writer_a_suspended_generator_holds_is_not_given_up(tmp_path):
    # on 3.10 the generator's frame alone refers to the writer, as a finished frame would (the
    # version smoke runs the same check there)
    path = str(tmp_path / "s.mindrecord")

    def job():
        w = _writer(path, 1, n=1)
        yield
        w.write_raw_data([{"w": 1, "k": 1}])
        w.commit()
        yield

    g = job()
    next(g)
    with pytest.raises(MindRecordRuntimeError, match=re.escape(f"another FileWriter is writing {path} (pid")):
        _writer(path, 2)
    next(g)
    assert _rows(path) == [(1, 0), (1, 1)]


def test_a_writer_still_referenced_after_an_error_keeps_its_lock_and_goes_on(tmp_path):
    # as MindSpore's writer, it stays usable after an argument error; and it keeps its files
    path = str(tmp_path / "q.mindrecord")
    w = _writer(path, 1, n=2, shard_num=2)
    with pytest.raises(RuntimeError, match=_MIXED_UP):
        w.write_raw_data([{"w": 1, "k": 7}], True)
    with pytest.raises(MindRecordRuntimeError, match=re.escape(f"another FileWriter is writing {path}0 (pid")):
        _writer(path, 2, shard_num=2)
    assert w.write_raw_data([{"w": 1, "k": 9}]) == WriteReport(1, 0)
    w.commit()
    assert _rows(path + "0") == [(1, 0), (1, 9), (1, 1)]   # shard 0's rows, then shard 1's


@pytest.mark.parametrize("stage", ["write", "commit"])
def test_a_failure_that_leaves_the_writer_unusable_releases_its_lock_and_files(tmp_path, monkeypatch, stage):
    """Any failure once rows are being placed or the files committed (here MemoryError, after the
    first shard) closes the writer: its temporary files go, its lock is free, it refuses more use."""
    monkeypatch.setattr(writer_mod, "MEMORY_LIMIT", 1)
    path = str(tmp_path / "u.mindrecord")
    w = _writer(path, 1, n=4, shard_num=2)
    real = writer_mod.ShardSetWriter._write_shard if stage == "write" else writer_mod.ShardSetWriter._finish_data_file

    def second_shard_fails(self, shard, *args):
        if shard.shard_id == 1:
            raise MemoryError("no room for the pages")
        return real(self, shard, *args)

    monkeypatch.setattr(writer_mod.ShardSetWriter, real.__name__, second_shard_fails)
    with pytest.raises(MemoryError, match="no room for the pages"):
        w.write_raw_data([{"w": 1, "k": k} for k in range(4, 8)]) if stage == "write" else w.commit()
    assert os.listdir(tmp_path) == []                        # no temporary file, no lock file
    for again in (lambda: w.write_raw_data([{"w": 1, "k": 9}]), w.commit):
        with pytest.raises(MindRecordRuntimeError, match=re.escape(
                "Invalid operation, this FileWriter was closed after a failure (MemoryError: no room for the "
                "pages); start a new FileWriter.")):
            again()
    monkeypatch.undo()
    _writer(path, 2, n=2, shard_num=2).commit()             # the files are free for the next writer
    assert _rows(path + "0") == [(2, 0), (2, 1)]


def test_each_shard_is_locked(tmp_path):
    path = str(tmp_path / "s.mindrecord")
    w = _writer(path, 1, shard_num=3)
    for name in ("s.mindrecord1", "s.mindrecord2"):   # other datasets whose files overlap
        with pytest.raises(MindRecordRuntimeError, match=re.escape(f"writing {tmp_path / name} (pid")):
            _writer(str(tmp_path / name), 2)
    w.commit()
    assert sorted(os.listdir(tmp_path)) == [f"s.mindrecord{i}{e}" for i in range(3) for e in ("", ".db")]


_RACER = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, {root!r})
    from headrace.mindrecord import FileWriter
    path, me, d = {path!r}, int(sys.argv[1]), {d!r}
    w = FileWriter(path, overwrite=True)
    w.add_schema({{"w": {{"type": "int32"}}, "k": {{"type": "int32"}}}})
    try:
        w.write_raw_data([{{"w": me, "k": k}} for k in range(40)])
        status = "opened"
    except RuntimeError as e:
        status = "refused " + str(e)
    with open(os.path.join(d, "r%d.part" % me), "w") as f:
        f.write(status)
    os.rename(os.path.join(d, "r%d.part" % me), os.path.join(d, "r%d" % me))
    if status == "opened":
        deadline = time.monotonic() + 60
        while not os.path.exists(os.path.join(d, "go")) and time.monotonic() < deadline:
            time.sleep(0.01)
        w.commit()
""")


def _wait_for(paths, procs, timeout=60):
    deadline = time.monotonic() + timeout
    while not all(os.path.exists(p) for p in paths):
        assert time.monotonic() < deadline, f"writers did not report: {[p for p in paths if not os.path.exists(p)]}"
        assert all(p.poll() in (None, 0) for p in procs), [p.poll() for p in procs]
        time.sleep(0.02)


def test_four_processes_overwrite_one_wins_and_the_dataset_is_whole(tmp_path):
    """Before: all four reported success and the dataset could mix one writer's data file with
    another's .db. Now the first to open holds the files; the others are refused, naming it."""
    data, ctl = tmp_path / "data", tmp_path / "ctl"
    data.mkdir()
    ctl.mkdir()
    path = str(data / "race.mindrecord")
    script = _RACER.format(root=ROOT, path=path, d=str(ctl))
    for round_ in range(3):
        for f in os.listdir(ctl):
            os.unlink(ctl / f)
        procs = [subprocess.Popen([sys.executable, "-c", script, str(i)]) for i in range(4)]
        try:
            _wait_for([str(ctl / f"r{i}") for i in range(4)], procs)
            status = [(ctl / f"r{i}").read_text() for i in range(4)]
            (ctl / "go").write_text("")
            assert [p.wait(timeout=60) for p in procs] == [0] * 4
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        winners = [i for i, s in enumerate(status) if s == "opened"]
        assert len(winners) == 1, status
        win = winners[0]
        for i, s in enumerate(status):
            if i != win:
                assert s.startswith("refused "), s
                assert _refused(path, procs[win].pid).search(s), s
        assert _rows(path) == [(win, k) for k in range(40)], round_
        assert sorted(os.listdir(data)) == ["race.mindrecord", "race.mindrecord.db"]


_HOLDER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    from headrace.mindrecord import FileWriter
    w = FileWriter({path!r})
    w.add_schema({{"w": {{"type": "int32"}}, "k": {{"type": "int32"}}}})
    w.write_raw_data([{{"w": 9, "k": 0}}])
    print("holding", flush=True)
    time.sleep(120)
""")


def test_killed_writer_does_not_hold_the_lock(tmp_path):
    path = str(tmp_path / "k.mindrecord")
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER.format(root=ROOT, path=path)], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline() == "holding\n"
        with pytest.raises(MindRecordRuntimeError, match=re.escape(f"writing {path} (pid {proc.pid} on ")):
            _writer(path, 1)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        proc.stdout.close()
    assert ".k.mindrecord.hrlock" in os.listdir(tmp_path)      # left behind, but no longer locked
    _writer(path, 1).commit()
    assert _rows(path) == [(1, k) for k in range(5)]
    assert sorted(os.listdir(tmp_path)) == ["k.mindrecord", "k.mindrecord.db"]


def test_a_writer_refused_before_the_holder_wrote_its_name_waits_for_the_name(tmp_path):
    path = str(tmp_path / "n.mindrecord")
    fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # held, nameless, as a holder is between its flock and its write
    named = threading.Timer(0.2, lambda: os.pwrite(fd, b"pid 4242 on elsewhere (train.py), since now\n", 0))
    named.start()
    try:
        writer = FileWriter(path)
        writer.add_schema(SCHEMA)
        with pytest.raises(MindRecordRuntimeError, match=re.escape(
                f"another FileWriter is writing {path} (pid 4242 on elsewhere (train.py), since now)")):
            writer.write_raw_data([{"w": 1, "k": 0}])
    finally:
        named.join()
        os.close(fd)
