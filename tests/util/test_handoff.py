"""The device queue's ``Handoff``: a bounded FIFO between one producer and one consumer thread."""
from __future__ import annotations

import queue
import threading
import time

import pytest
from hypothesis import given, settings, strategies as st

from headrace._util.device_queue import Handoff


def test_fifo_bounded_and_timeouts():
    h = Handoff(2)
    assert h.put("a", 0.01) and h.put("b", 0.01)
    assert h.qsize() == 2
    t = time.monotonic()
    assert h.put("c", 0.05) is False  # full: gives up after about the timeout, item not added
    assert time.monotonic() - t >= 0.04 and h.qsize() == 2
    assert [h.get(0.01), h.get(0.01)] == ["a", "b"]
    with pytest.raises(queue.Empty):
        h.get(0.02)
    assert Handoff(0).depth == 1


def test_a_waiting_producer_is_woken_by_a_get_and_a_waiting_consumer_by_a_put():
    h = Handoff(1)
    h.put(0, 0.01)
    done = threading.Event()

    def produce():
        assert h.put(1, 30.0)  # waits for room: woken by the get below, long before 30 s
        done.set()

    t = threading.Thread(target=produce)
    t.start()
    while not h._producer_waits:
        time.sleep(0.001)
    assert h.get(0.01) == 0
    assert done.wait(10) and h.get(0.01) == 1
    t.join()
    got = []
    t = threading.Thread(target=lambda: got.append(h.get(30.0)))  # waits for an item
    t.start()
    while not h._consumer_waits:
        time.sleep(0.001)
    h.put(2, 0.01)
    t.join(10)
    assert got == [2]


def test_clear_drops_items_and_frees_a_waiting_producer():
    h = Handoff(1)
    h.put(0, 0.01)
    ok = []
    t = threading.Thread(target=lambda: ok.append(h.put(1, 30.0)))
    t.start()
    while not h._producer_waits:
        time.sleep(0.001)
    h.clear()
    t.join(10)
    assert ok == [True] and h.get(0.01) == 1


@settings(max_examples=25, deadline=None)
@given(depth=st.integers(1, 4), n=st.integers(0, 300), producer_sleeps=st.booleans())
def test_every_item_arrives_once_in_order(depth, n, producer_sleeps):
    h = Handoff(depth)
    seen_max = []

    def produce():
        for i in range(n):
            while not h.put(i, 0.05):
                pass
            seen_max.append(h.qsize())
            if producer_sleeps and i % 50 == 0:
                time.sleep(0.001)

    t = threading.Thread(target=produce)
    t.start()
    got = []
    while len(got) < n:
        try:
            got.append(h.get(0.05))
        except queue.Empty:
            continue
    t.join(10)
    assert got == list(range(n))
    assert max(seen_max, default=0) <= depth


def test_a_feeder_left_running_is_stopped_before_the_interpreter_finalizes():
    # A feeder whose consumer went away (its queue full, the thread waiting for room) must have
    # ended by the time later exit handlers run, not be torn down by the finalizing interpreter.
    import os
    import subprocess
    import sys
    import textwrap
    code = textwrap.dedent("""
        import atexit, itertools, threading
        threads = []
        # registered first, so it runs after the device queue's own exit handler
        atexit.register(lambda: print("alive at exit:", [t.is_alive() for t in threads]))
        from headrace._util.device_queue import Feeder
        count = itertools.count()
        f = Feeder(lambda: (next(count), None), lambda b: b, 2, "test feeder")
        threads.append(f.thread)
        assert f.get()[1] == 0
        print("running:", f.thread.is_alive())
    """)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["running: True", "alive at exit: [False]"]
