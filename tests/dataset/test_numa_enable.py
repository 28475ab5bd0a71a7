"""``ds.config.set_numa_enable``: the pipeline's threads and worker processes on one NUMA node's CPUs."""
from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

import headrace.dataset as ds
from headrace._engine import machine

ALLOWED = sorted(os.sched_getaffinity(0))


def _nodes_of_one_cpu(monkeypatch):
    """Pretends every CPU this process may use is a NUMA node of its own."""
    monkeypatch.setattr(machine, "numa_nodes", lambda root=machine.NODE_DIR: [frozenset({c}) for c in ALLOWED])


def where(x):
    time.sleep(0.001)
    return np.array([os.getpid(), min(os.sched_getaffinity(0)), len(os.sched_getaffinity(0)),
                     threading.current_thread().name.startswith(("headrace-stage", "headrace-prefetch"))])


@pytest.mark.parametrize("processes", [False, True], ids=["threads", "processes"])
def test_workers_run_on_the_cpus_of_the_ranks_node(monkeypatch, processes):
    _nodes_of_one_cpu(monkeypatch)
    monkeypatch.setenv("RANK_ID", "1")
    ds.config.set_numa_enable(True)
    assert ds.config.get_numa_enable() is True
    d = ds.NumpySlicesDataset(np.arange(40), ["x"], shuffle=False).map(
        where, ["x"], num_parallel_workers=2, python_multiprocessing=processes)
    rows = np.stack([r[0] for r in d.create_tuple_iterator(output_numpy=True)])
    cpu = ALLOWED[1 % len(ALLOWED)]
    pipeline = rows[(rows[:, 0] != os.getpid()) | (rows[:, 3] == 1)]  # rows made in workers or pipeline threads
    assert len(pipeline) > 0
    assert pipeline[:, 1].tolist() == [cpu] * len(pipeline) and pipeline[:, 2].tolist() == [1] * len(pipeline)
    if processes:
        assert len(pipeline) == 40
    assert sorted(os.sched_getaffinity(0)) == ALLOWED  # the user's thread keeps its CPUs


def test_off_by_default_and_one_node_changes_nothing(monkeypatch):
    assert ds.config.get_numa_enable() is False
    d = ds.NumpySlicesDataset(np.arange(8), ["x"], shuffle=False).map(where, ["x"], num_parallel_workers=2)
    rows = np.stack([r[0] for r in d.create_tuple_iterator(output_numpy=True)])
    assert rows[:, 2].tolist() == [len(ALLOWED)] * 8
    monkeypatch.setattr(machine, "numa_nodes", lambda root=machine.NODE_DIR: [frozenset(ALLOWED)])
    ds.config.set_numa_enable(True)
    rows = np.stack([r[0] for r in d.create_tuple_iterator(output_numpy=True)])
    assert rows[:, 2].tolist() == [len(ALLOWED)] * 8


def test_cpu_lists_and_node_files(tmp_path):
    assert machine.parse_cpulist("0-3,8,10-11\n") == frozenset({0, 1, 2, 3, 8, 10, 11})
    assert machine.format_cpulist(frozenset({0, 1, 2, 3, 8, 10, 11})) == "0-3,8,10-11"
    with pytest.raises(ValueError, match="not a CPU list"):
        machine.parse_cpulist("3-1")
    for i, text in [(0, "0-1\n"), (1, "\n"), (2, "2-3\n"), (10, "4\n")]:
        (tmp_path / f"node{i}").mkdir()
        (tmp_path / f"node{i}" / "cpulist").write_text(text)
    (tmp_path / "possible").write_text("0-10")
    assert machine.numa_nodes(str(tmp_path)) == [frozenset({0, 1}), frozenset({2, 3}), frozenset({4})]
    assert machine.numa_nodes(str(tmp_path / "missing")) == []


@pytest.mark.parametrize("env, rank", [({}, 0), ({"LOCAL_RANK": "3"}, 3), ({"RANK_ID": "2", "LOCAL_RANK": "3"}, 2),
                                       ({"RANK_ID": "x"}, 0)])
def test_the_rank_comes_from_rank_id_then_local_rank(monkeypatch, env, rank):
    monkeypatch.delenv("RANK_ID", raising=False)
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert machine.rank_on_host() == rank


def test_the_setter_checks_its_argument():
    with pytest.raises(TypeError, match="numa_enable must be of type bool."):
        ds.config.set_numa_enable(1)
