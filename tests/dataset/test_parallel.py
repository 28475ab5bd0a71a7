"""num_parallel_workers and python_multiprocessing through the public API: same rows in every mode,
worker errors in MindSpore's layout, spawn, prefetch and checkpoints with workers."""
from __future__ import annotations

import gc
import os

import numpy as np
import pytest

import headrace.dataset as ds
from headrace._util.rng import sample_rng
from tests.helpers import assert_pyfunc_failure, assert_resume_equivalence, rows


class Source:
    """The W1 shape in miniature: a float32 (4,) row and a 0-d int32 label."""

    def __init__(self, n=30):
        self.data = np.arange(n * 4, dtype=np.float32).reshape(n, 4)
        self.labels = np.arange(n, dtype=np.int32) % 5

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return self.data[i], np.asarray(self.labels[i])


def plus_noise(x):
    return x + sample_rng().integers(0, 100)


def fails_on_seven(x):
    if float(x[0]) == 28.0:
        raise ValueError("seven is not allowed")
    return x


def w1_like(workers, procs, fn=plus_noise, batch=4):
    d = ds.GeneratorDataset(Source(), ["data", "label"], shuffle=False, num_parallel_workers=workers,
                            python_multiprocessing=procs)
    d = d.map(fn, input_columns=["data"], num_parallel_workers=workers, python_multiprocessing=procs)
    return d.batch(batch) if batch else d


MODES = [
    pytest.param(2, False, "fork", id="threads2"),
    pytest.param(1, True, "fork", id="procs1"),
    pytest.param(3, True, "fork", id="procs3"),
    pytest.param(2, True, "spawn", id="spawn2"),
]


@pytest.mark.parametrize("workers, procs, method", MODES)
@pytest.mark.parametrize("batch", [4, 0])
def test_same_rows_for_serial_threads_and_processes(workers, procs, method, batch):
    ds.config.set_seed(3)
    serial = rows(w1_like(1, False, batch=batch), num_epochs=2)
    ds.config.set_seed(3)
    ds.config.set_multiprocessing_start_method(method)
    assert rows(w1_like(workers, procs, batch=batch), num_epochs=2) == serial


def test_python_multiprocessing_map_over_a_generator_function():
    def gen():
        for i in range(17):
            yield (np.full(2, i, np.int64),)

    ds.config.set_seed(5)
    serial = rows(ds.GeneratorDataset(gen, ["v"]).map(plus_noise, num_parallel_workers=1))
    ds.config.set_seed(5)
    procs = rows(ds.GeneratorDataset(gen, ["v"]).map(plus_noise, num_parallel_workers=2, python_multiprocessing=True))
    assert procs == serial and len(serial) == 17


def test_spawn_runs_lambdas():
    ds.config.set_multiprocessing_start_method("spawn")
    d = ds.NumpySlicesDataset(list(range(6)), shuffle=False).map(lambda x: x * 7, num_parallel_workers=2,
                                                                 python_multiprocessing=True)
    assert rows(d) == [[0], [7], [14], [21], [28], [35]]


def test_worker_process_error_in_mindspore_layout():
    it = w1_like(2, True, fn=fails_on_seven, batch=0).create_tuple_iterator(output_numpy=True)
    got = [int(next(it)[1]) for _ in range(7)]
    assert got == [0, 1, 2, 3, 4, 0, 1]
    with pytest.raises(RuntimeError) as e:
        next(it)
    it.stop()
    assert_pyfunc_failure(str(e.value), "data", 7, 'raise ValueError("seven is not allowed")', "in fails_on_seven")


def test_checkpoints_count_delivered_rows_whatever_is_prefetched():
    ds.config.set_prefetch_size(64)
    it = w1_like(2, True, batch=2).create_tuple_iterator(output_numpy=True, num_epochs=1)
    next(it)
    next(it)
    state = it.get_state()
    assert (state["epoch"], state["step"]) == (0, 2)
    rest = [r[1].tolist() for r in it]
    fresh = w1_like(2, True, batch=2).create_tuple_iterator(output_numpy=True, num_epochs=1)
    fresh.set_state(state)
    assert [r[1].tolist() for r in fresh] == rest and len(rest) == 13


@pytest.mark.parametrize("procs", [False, True])
def test_resume_equivalence_with_workers(procs):
    ds.config.set_seed(8)
    assert_resume_equivalence(w1_like(2, procs, batch=3), num_epochs=2, stride=4)


@pytest.mark.parametrize("size", [1, 2, 1000])
def test_any_prefetch_size_gives_every_row(size):
    ds.config.set_prefetch_size(size)
    assert len(rows(w1_like(2, True, batch=0))) == 30


def test_workers_persist_across_epochs_and_stop_with_the_iterator():
    it = w1_like(2, True).create_tuple_iterator(output_numpy=True, num_epochs=2)
    list(it)
    pids = list(it._run.tree.pool.pids)
    list(it)
    assert it._run.tree.pool.pids == pids
    it.stop()
    gc.collect()
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # already reaped: the worker is gone


def test_a_temporary_iterator_left_by_break_is_cleaned_up():
    for row in w1_like(2, True).create_tuple_iterator(output_numpy=True):
        break
    gc.collect()
    assert not [c for c in os.listdir("/dev/shm") if c.startswith(f"hr{os.getpid():x}_")]
