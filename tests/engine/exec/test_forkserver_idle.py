"""The fork server and its spares leave once idle, and come back on demand (issue 38 item 8).

``ds.config.set_helper_idle_timeout(s)``: a server with no worker running and no request for
``s`` seconds retires its spares and exits; the next pipeline starts a new one. Deadlines here are
generous waits for something that must happen, never a measure of how fast it happens.
"""
from __future__ import annotations

import math
import os
import pickle
import select
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import headrace.dataset as ds
from headrace._engine.exec import forkserver
from tests.engine.exec.test_forkserver_spares import spares_within
from tests.engine.exec.test_shutdown import alive, children, still_alive

DEADLINE = 60.0


def double(x):
    return x * 2


def doubled(n: int = 12) -> ds.Dataset:
    data = ds.NumpySlicesDataset(np.arange(n, dtype=np.int64), column_names=["x"], shuffle=False)
    return data.map(double, input_columns="x", num_parallel_workers=2, python_multiprocessing=True)


def values(it) -> list[int]:
    return [int(row[0]) for row in it]


def reaped(pid: int) -> bool:
    """Whether ``pid`` is no child of ours any more, not even a zombie."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_after_the_pipelines_end_the_spares_and_the_server_exit_and_the_next_pipeline_starts_one():
    ds.config.set_helper_idle_timeout(0.5)
    first = forkserver.get()  # the one the pipeline will use
    it = doubled().create_tuple_iterator(num_epochs=1, output_numpy=True)
    got = [int(next(it)[0])]
    workers = children(first.pid)
    assert len(workers) >= 2  # the map's two workers (and maybe spares already), forked by this server
    got += values(it)
    del it  # the pipeline ends: its workers go (an exhausted iterator still referenced keeps them)
    assert got == [2 * i for i in range(12)]
    helpers = sorted({first.pid} | workers | first.spares)
    assert not still_alive(helpers, DEADLINE)  # the spares, the workers and the server are gone
    assert not children(first.pid)  # the server reaped every child before it left
    assert values(doubled(5).create_tuple_iterator(num_epochs=1, output_numpy=True)) == [0, 2, 4, 6, 8]
    second = forkserver.current()
    assert second is not None and second is not first and second.pid != first.pid
    assert not second.dead and alive(second.pid)
    assert first.dead and reaped(first.pid)  # the next pipeline reaped the old one: no zombie stays


def test_spares_forked_after_a_pipeline_leave_with_the_server():
    ds.config.set_helper_idle_timeout(3)
    server = forkserver.get()
    assert values(doubled().create_tuple_iterator(num_epochs=1, output_numpy=True)) == [2 * i for i in range(12)]
    spares = spares_within(server, 2)
    assert len(spares) >= 2 and spares <= children(server.pid)
    assert not still_alive(sorted(spares | {server.pid}), DEADLINE)


def test_an_open_iterator_keeps_the_server_and_its_workers():
    ds.config.set_helper_idle_timeout(0.2)
    server = forkserver.get()
    it = doubled(40).create_tuple_iterator(num_epochs=1, output_numpy=True)
    got = [int(next(it)[0])]
    kids = children(server.pid)
    assert len(kids) >= 2  # its workers (and maybe spares)
    time.sleep(2.0)  # ten times the idle timeout, with the iterator open and unread
    assert alive(server.pid) and not server.dead and not server.leaving
    assert all(alive(p) for p in kids)
    got += values(it)
    assert got == [2 * i for i in range(40)]
    assert forkserver.current() is server


def test_a_running_server_takes_a_new_timeout_at_once():
    ds.config.set_helper_idle_timeout(3600)
    server = forkserver.get()
    assert values(doubled(4).create_tuple_iterator(num_epochs=1, output_numpy=True)) == [0, 2, 4, 6]
    assert forkserver.current() is server
    time.sleep(0.5)
    assert alive(server.pid)  # an hour to go
    ds.config.set_helper_idle_timeout(0)
    assert not still_alive([server.pid], DEADLINE)
    assert values(doubled(3).create_tuple_iterator(num_epochs=1, output_numpy=True)) == [0, 2, 4]
    assert forkserver.current() is not server


def test_a_server_that_never_forked_waits_for_its_first_pipeline():
    # A server warmed up before its pipeline starts must not leave between the parent's first
    # requests, even with a timeout of 0 (it waits at least FIRST_GRACE seconds).
    ds.config.set_helper_idle_timeout(0)
    forkserver.get().close()
    server = forkserver.get()
    server.preload(["json"])
    time.sleep(0.5)
    assert alive(server.pid) and forkserver.get() is server
    assert values(doubled(4).create_tuple_iterator(num_epochs=1, output_numpy=True)) == [0, 2, 4, 6]
    assert forkserver.current() is server  # the warmed-up server served the pipeline
    assert not still_alive([server.pid], DEADLINE)  # and left once its workers had exited


def _leaving_server() -> tuple[forkserver.ForkServer, threading.Thread]:
    """A handle on a 'server' (played by a thread) that announces its departure and closes its
    socket right after the parent's start requests arrive, without reading them."""
    server = object.__new__(forkserver.ForkServer)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server._lock = threading.Lock()
    server._tokens = iter(range(1 << 62))
    server._started, server._exits, server._live, server._spares = {}, {}, set(), set()
    server._preloaded, server._culprits = set(forkserver.preload_list()), []
    server._context = ([str(p) for p in sys.path], os.getcwd(), dict(os.environ))
    server.dead = server.leaving = False
    server.sock = ours
    server._readable = select.poll()
    server._readable.register(ours.fileno(), select.POLLIN)
    server.proc = subprocess.Popen([sys.executable, "-c", "pass"])
    server.pid, server.pid_owner = server.proc.pid, os.getpid()

    def play() -> None:
        select.select([theirs], [], [], DEADLINE)  # a request came: leave without reading it
        theirs.send(pickle.dumps(("leaving",)))
        theirs.close()

    player = threading.Thread(target=play, daemon=True)
    player.start()
    return server, player


def test_a_start_request_that_crosses_the_servers_departure_raises_left():
    server, player = _leaving_server()
    blob_r, blob_w = os.pipe()
    task_r, task_w = os.pipe()
    res_r, res_w = os.pipe()
    try:
        with pytest.raises(forkserver.Left, match=rf"fork server \(pid {server.pid}\) exited, idle, before"):
            server.start_workers(blob_r, [({}, task_r, res_w)], timeout=DEADLINE)
        assert isinstance(forkserver.Left("x"), OSError)  # what the pool retries on a fresh server
        assert server.dead and server.leaving
    finally:
        player.join(DEADLINE)
        for fd in (blob_r, blob_w, task_r, task_w, res_r, res_w):
            os.close(fd)
        server.proc.wait()


def test_a_pool_whose_server_left_under_its_request_gets_its_workers_from_a_new_one(monkeypatch):
    real_get = forkserver.get
    leaving, player = _leaving_server()
    handed = []

    def get() -> forkserver.ForkServer:
        if not handed:
            handed.append(leaving)
            return leaving
        return real_get()

    data = doubled(6)  # (building it warms the real server up)
    monkeypatch.setattr(forkserver, "get", get)
    assert values(data.create_tuple_iterator(num_epochs=1, output_numpy=True)) == [0, 2, 4, 6, 8, 10]
    player.join(DEADLINE)
    assert handed == [leaving] and leaving.dead
    assert forkserver.current() is not leaving and not forkserver.current().dead


@pytest.mark.parametrize("bad, error, text", [
    ("1", TypeError, "timeout isn't of type int or float, but got str."),
    (None, TypeError, "timeout isn't of type int or float, but got NoneType."),
    (True, TypeError, "timeout isn't of type int or float, but got bool."),
    (-1, ValueError, r"timeout must be a number of seconds in \[0, INT32_MAX\(2147483647\)\], but got -1."),
    (-0.5, ValueError, r"but got -0.5."),
    (math.nan, ValueError, r"but got nan."),
    (math.inf, ValueError, r"but got inf."),
    (2**31, ValueError, r"but got 2147483648."),
])
def test_the_setting_checks_its_argument(bad, error, text):
    with pytest.raises(error, match=text):
        ds.config.set_helper_idle_timeout(bad)
    assert ds.config.get_helper_idle_timeout() == 60.0  # unchanged: the default


def test_the_setting_keeps_what_it_is_given_as_seconds():
    assert ds.config.get_helper_idle_timeout() == forkserver.DEFAULT_IDLE_TIMEOUT == 60.0
    for value, kept in ((0, 0.0), (0.25, 0.25), (7, 7.0), (2**31 - 1, 2147483647.0)):
        ds.config.set_helper_idle_timeout(value)
        got = ds.config.get_helper_idle_timeout()
        assert got == kept and type(got) is float
    with pytest.raises(TypeError, match="seconds must be an int or a float, but got str."):
        forkserver.set_idle_timeout("1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seconds must be a finite number >= 0, but got -1."):
        forkserver.set_idle_timeout(-1)
