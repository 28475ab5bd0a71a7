"""Absurd worker counts are refused before anything starts (issue 12, item 4).

``map(num_parallel_workers=100000)`` used to warn, then die with "can't start new thread" and
leave ~22,000 threads alive. Now every op refuses more than ``max(64, 4 x CPUs)`` workers when it
is built, naming ``num_parallel_workers``, the limit and the fix; and a pool whose threads or
processes cannot all start stops the ones it started.
"""
from __future__ import annotations

import os
import threading
import time
import warnings

import numpy as np
import pytest

import headrace.dataset as ds
from headrace._engine.exec import launch, process_pool
from headrace._util.checks import max_workers
from headrace._util.errors import PipelineError


def gen():
    for i in range(6):
        yield (np.array(i),)


def limit_message(value: int) -> str:
    limit, cpus = max_workers(), os.cpu_count()
    return (f"num_parallel_workers exceeds the boundary between 1 and {limit}: got {value}. headrace starts "
            f"at most {limit} workers per op on this machine (4 per CPU, {cpus} CPUs, at least 64); use a "
            f"value between 1 and {limit} - the number of CPUs ({cpus}) is usually the fastest.")


def stage_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("headrace")}


BUILDERS = {
    "map": lambda n: ds.GeneratorDataset(gen, ["a"], shuffle=False).map(lambda x: x, ["a"], num_parallel_workers=n),
    "map-processes": lambda n: ds.GeneratorDataset(gen, ["a"], shuffle=False).map(
        lambda x: x, ["a"], num_parallel_workers=n, python_multiprocessing=True),
    "batch": lambda n: ds.GeneratorDataset(gen, ["a"], shuffle=False).batch(2, num_parallel_workers=n),
    "filter": lambda n: ds.GeneratorDataset(gen, ["a"], shuffle=False).filter(lambda x: True, num_parallel_workers=n),
    "source": lambda n: ds.GeneratorDataset(gen, ["a"], shuffle=False, num_parallel_workers=n),
    "numpy-slices": lambda n: ds.NumpySlicesDataset([1, 2, 3], num_parallel_workers=n),
}


@pytest.mark.parametrize("build", BUILDERS.values(), ids=BUILDERS.keys())
@pytest.mark.parametrize("value", [100000, 2**31 - 1, 2**40])
def test_an_absurd_worker_count_is_refused_when_the_op_is_built(build, value):
    before = stage_threads()
    with pytest.raises(ValueError) as info:
        build(value)
    assert str(info.value) == limit_message(value)
    assert stage_threads() == before  # nothing started


def test_the_limit_itself_is_accepted_and_one_more_is_not():
    limit = max_workers()
    assert limit == max(64, 4 * os.cpu_count())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # more workers than CPUs: warned once per process
        d = BUILDERS["map"](limit)
    assert [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)] == list(range(6))
    with pytest.raises(ValueError, match="exceeds the boundary between 1 and"):
        BUILDERS["map"](limit + 1)


def test_config_refuses_an_absurd_default_worker_count():
    with pytest.raises(ValueError) as info:
        ds.config.set_num_parallel_workers(100000)
    assert str(info.value) == limit_message(100000)
    assert ds.config.get_num_parallel_workers() == min(8, os.cpu_count())


def _wait_until(cond, seconds=10.0) -> bool:
    deadline = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_threads_that_cannot_all_start_are_stopped_and_the_error_names_the_setting(monkeypatch):
    real_start = threading.Thread.start
    started = []

    def start(self):
        if self.name.startswith("headrace-stage") and len(started) >= 3:
            raise RuntimeError("can't start new thread")
        if self.name.startswith("headrace-stage"):
            started.append(self)
        real_start(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    before = stage_threads()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = ds.GeneratorDataset(gen, ["a"], shuffle=False).map(lambda x: x, ["a"], num_parallel_workers=6)
    with pytest.raises(PipelineError) as info:
        list(d.create_tuple_iterator(output_numpy=True))
    assert len(started) == 3
    assert str(info.value).count("[ERROR] map operation: [PyFunc] failed. could not start 6 worker threads "
                                 "(RuntimeError: can't start new thread); the machine ran out of threads or "
                                 "memory. Lower num_parallel_workers (the number of CPUs is usually the "
                                 "fastest).") == 1, str(info.value)
    assert _wait_until(lambda: not any(t.is_alive() for t in started))
    assert _wait_until(lambda: stage_threads() <= before)


def test_worker_processes_that_cannot_all_start_are_stopped(monkeypatch):
    # The path that forks each worker from this process (the fork server starts them all in one
    # request and stops those it started when one fails: forkserver.ForkServer.start_workers).
    monkeypatch.setattr(launch, "single_threaded", lambda: True)
    real = process_pool.ProcessPool._start_forked
    made = []

    def start_one(self, w, program, cfg):
        if w == 2:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        wk = real(self, w, program, cfg)
        made.append(wk.pid)
        return wk

    monkeypatch.setattr(process_pool.ProcessPool, "_start_forked", start_one)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = ds.GeneratorDataset(gen, ["a"], shuffle=False).map(lambda x: x, ["a"], num_parallel_workers=4,
                                                                python_multiprocessing=True)
    with pytest.raises(PipelineError) as info:
        list(d.create_tuple_iterator(output_numpy=True))
    assert ("could not start 4 worker processes (BlockingIOError: [Errno 11] Resource temporarily "
            "unavailable); the machine ran out of processes or memory. Lower num_parallel_workers") in str(info.value)
    assert len(made) == 2

    def gone(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            return True

    assert _wait_until(lambda: all(gone(p) for p in made))
