"""``ds.config.set_auto_num_workers``: worker counts chosen from the CPUs when an iterator is created
(``headrace/_engine/auto_workers.py``)."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import headrace.dataset as ds
from headrace._engine import auto_workers
from headrace._engine import plan as P


def _counts(plan) -> list:
    """(kind, num_workers) of every parallel node of a plan, from the top down."""
    return [(type(n).__name__, n.num_workers) for n in P.all_nodes(plan) if hasattr(n, "num_workers")]


def _pipeline():
    d = ds.NumpySlicesDataset(np.arange(40), ["x"], shuffle=False, num_parallel_workers=2)
    d = d.map(lambda x: x + 1, ["x"], num_parallel_workers=2)
    d = d.map(lambda x: x * 2, ["x"], num_parallel_workers=2)
    return d.batch(4, per_batch_map=lambda x, info: (x + 1,), input_columns=["x"], num_parallel_workers=1,
                   python_multiprocessing=True)


def test_compute_stages_share_the_cpus_and_a_source_takes_the_count_of_the_op_above_it(monkeypatch):
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    plan = _pipeline()._plan
    got = _counts(auto_workers.assign(plan, cores=8))
    # two stages: the two thread maps (one stage) and the per_batch_map in processes: 8 // 2 each
    assert got == [("BatchNode", 4), ("MapNode", 4), ("MapNode", 4), ("RandomAccessNode", 4)]
    assert _counts(plan) == [("BatchNode", 1), ("MapNode", 2), ("MapNode", 2), ("RandomAccessNode", 2)]  # untouched


def test_the_budget_is_divided_by_the_processes_of_the_job_on_the_host(monkeypatch):
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "4")
    got = _counts(auto_workers.assign(_pipeline()._plan, cores=8))
    assert got == [("BatchNode", 1), ("MapNode", 1), ("MapNode", 1), ("RandomAccessNode", 1)]  # 8 // 4 CPUs, 2 stages
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "nonsense")
    assert auto_workers.ranks_on_host() == 1


def test_a_source_under_no_computing_op_reads_with_one_worker_and_a_plain_batch_keeps_its_count():
    d = ds.NumpySlicesDataset(np.arange(10), ["x"], shuffle=False, num_parallel_workers=2).batch(2, num_parallel_workers=2)
    got = _counts(auto_workers.assign(d._plan, cores=6))
    assert got == [("BatchNode", 2), ("RandomAccessNode", 1)]


def test_an_iterator_uses_the_counts_logs_each_change_and_gives_the_same_rows(caplog, monkeypatch):
    monkeypatch.setattr(auto_workers, "cpu_budget", lambda: 4)
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    ds.config.set_seed(3)
    d = ds.NumpySlicesDataset(np.arange(30), ["x"], shuffle=True, num_parallel_workers=1)
    d = d.map(lambda x: x + np.random.randint(0, 1000), ["x"], num_parallel_workers=1).batch(5)
    plain = [r[0].tolist() for r in d.create_tuple_iterator(output_numpy=True)]
    assert ds.config.get_auto_num_workers() is False
    ds.config.set_auto_num_workers(True)
    assert ds.config.get_auto_num_workers() is True
    with caplog.at_level(logging.INFO, logger="headrace.auto_num_workers"):
        it = d.create_tuple_iterator(output_numpy=True)
    assert [r[0].tolist() for r in it] == plain
    msgs = [r.getMessage() for r in caplog.records if r.name == "headrace.auto_num_workers"]
    assert msgs == ["auto_num_workers: map operation: [PyFunc] num_parallel_workers 1 -> 4 (4 CPUs for 1 stage(s))",
                    "auto_num_workers: NumpySlicesDataset num_parallel_workers 1 -> 4 (4 CPUs for 1 stage(s))"]
    stages = [op for op in _ops(it._run.tree) if getattr(op, "members", None) is not None]
    assert [(s.mode, s.workers) for s in stages] == [("threads", 4)]


def _ops(op):
    todo, out = [op], []
    while todo:
        o = todo.pop()
        o = getattr(o, "op", o)
        out.append(o)
        todo.extend(getattr(o, "parents", ()) or ())
    return out


def test_debug_mode_ignores_it(monkeypatch):
    monkeypatch.setattr(auto_workers, "cpu_budget", lambda: 4)
    ds.config.set_auto_num_workers(True)
    ds.config.set_debug_mode(True, [])
    d = ds.NumpySlicesDataset(np.arange(4), ["x"], shuffle=False).map(lambda x: x, ["x"], num_parallel_workers=2)
    with pytest.warns(UserWarning):
        it = d.create_tuple_iterator(output_numpy=True)
    assert it._run.plan is d._plan
    assert [int(r[0]) for r in it] == [0, 1, 2, 3]


def test_the_setter_checks_its_argument():
    with pytest.raises(TypeError, match="enable must be of type bool."):
        ds.config.set_auto_num_workers(1)
