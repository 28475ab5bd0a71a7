"""Dataset autotune (issue 16): ds.config.set_enable_autotune / set_autotune_interval, the decisions
a run makes from its measured stages, the budgets, the rows (those of an untuned run), the file.

Slow ops sleep rather than compute, so that a busy 2-core machine moves the measurements little;
no test asserts a time.
"""
import json
import logging
import os
import time
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import headrace.dataset as ds
from headrace._engine import autotune
from headrace._engine import options as _options
from headrace.mindrecord import FileWriter


def sleepy(x):  # module level: worker processes and deserialize find it by name
    time.sleep(0.005)
    return x


def spin(x):  # pure Python: holds the GIL
    s = 0
    for i in range(60_000):
        s += i
    return x


def noisy(x):  # draws from NumPy's global generator: keyed per sample under a seed
    return x + np.random.randint(0, 1000)


@pytest.fixture(autouse=True)
def _short_windows(monkeypatch):
    """Decisions every `interval` rows without waiting for autotune's 2-second windows."""
    monkeypatch.setattr(autotune, "MIN_WINDOW_S", 0.05)
    monkeypatch.setattr(autotune, "MIN_WINDOW_ROWS", 2)


def _run(d, epochs=1):
    it = d.create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    rows = []
    for _ in range(epochs):
        rows += [[c.tolist() for c in r] for r in it]
    tuner = it._run.tuner
    it.stop()
    return rows, tuner


def _tune(interval=5, cores=2, ram=None):
    ds.config.set_enable_autotune(True)
    ds.config.set_autotune_interval(interval)
    _options.update(autotune_cores=cores, autotune_ram=ram)


def _spin_tuner(cores):
    """An iterator over a small GIL-bound pipeline, and its tuner (decisions every 5 rows)."""
    _tune(interval=5, cores=cores)
    d = ds.NumpySlicesDataset(np.arange(8), ["x"], shuffle=False).map(spin, ["x"]).batch(2)
    it = d.create_tuple_iterator(num_epochs=1, output_numpy=True)
    return it, it._run.tuner


# ---- the settings ---------------------------------------------------------------------------------
def test_settings_and_argument_errors(tmp_path):
    assert ds.config.get_enable_autotune() is False and ds.config.get_autotune_interval() == 0
    ds.config.set_enable_autotune(True)
    assert ds.config.get_enable_autotune() is True
    ds.config.set_enable_autotune(True, str(tmp_path / "tuned"))
    ds.config.set_autotune_interval(100)
    assert ds.config.get_autotune_interval() == 100
    ds.config.set_enable_autotune(False)
    assert ds.config.get_enable_autotune() is False
    with pytest.raises(TypeError, match="^enable must be of type bool.$"):
        ds.config.set_enable_autotune(1)
    with pytest.raises(TypeError, match="^json_filepath must be a str value but was: 3.$"):
        ds.config.set_enable_autotune(True, 3)
    with pytest.raises(RuntimeError, match="^The value of json_filepath cannot be the empty string.$"):
        ds.config.set_enable_autotune(True, "")
    with pytest.raises(RuntimeError, match="is a directory"):
        ds.config.set_enable_autotune(True, str(tmp_path))
    with pytest.raises(RuntimeError, match=r"Directory <.*missing> does not exist"):
        ds.config.set_enable_autotune(True, str(tmp_path / "missing" / "x"))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ds.config.set_enable_autotune(False, "/tmp/x")
    assert [str(x.message) for x in w] == ["The value of json_filepath is ignored when enable is False."]
    for bad in (1.5, True, "3"):
        with pytest.raises(TypeError, match="^interval must be of type int.$"):
            ds.config.set_autotune_interval(bad)
    for bad in (-1, 2**31):
        with pytest.raises(ValueError, match=r"^Interval given is not within the required range \[0, INT32_MAX"):
            ds.config.set_autotune_interval(bad)
    ds.config.set_autotune_interval(2**31 - 1)
    assert ds.config.get_autotune_interval() == 2**31 - 1


@pytest.mark.compat
def test_argument_errors_match_mindspore():
    from tests.oracles.oracle import oracle_python, run_ms
    if oracle_python() is None:
        pytest.skip("the MindSpore oracle is not set up")
    ms = run_ms("""
RESULT = [repr(catch(lambda: ds.config.set_enable_autotune(1))),
          repr(catch(lambda: ds.config.set_enable_autotune(True, 3))),
          repr(catch(lambda: ds.config.set_enable_autotune(True, ""))),
          repr(catch(lambda: ds.config.set_autotune_interval(1.5))),
          repr(catch(lambda: ds.config.set_autotune_interval(-1)))]
""")
    mine = []
    for f, args in ((ds.config.set_enable_autotune, (1,)), (ds.config.set_enable_autotune, (True, 3)),
                    (ds.config.set_enable_autotune, (True, "")), (ds.config.set_autotune_interval, (1.5,)),
                    (ds.config.set_autotune_interval, (-1,))):
        try:
            f(*args)
        except Exception as e:  # noqa: BLE001 - compared as values
            mine.append(repr(e))
    assert mine == ms


# ---- decisions --------------------------------------------------------------------------------
def test_a_sleeping_map_gets_more_workers(caplog):
    _tune(interval=5)
    d = ds.NumpySlicesDataset(np.arange(600), ["x"], shuffle=False).map(sleepy, ["x"], num_parallel_workers=1).batch(4)
    with caplog.at_level(logging.INFO, logger="headrace.autotune"):
        rows, tuner = _run(d)
    assert rows == [[list(range(i, i + 4))] for i in range(0, 600, 4)]
    first = tuner.decisions[0]
    assert (first.setting, first.old, first.new) == ("workers", 1, 2)
    assert "map operation" in first.op and "it waits (CPU" in first.why
    assert caplog.records[0].getMessage() == first.line()
    assert first.line().startswith("autotune: ") and " workers 1 -> 2 (" in first.line()
    # a stage that waits may have up to 4 workers per budgeted core, never more
    assert all(d.new <= 8 for d in tuner.decisions if d.setting == "workers")
    assert max(w for _, w, _ in tuner.settings()[0]) >= 2
    assert ds.serialize(d)["children"][0]["num_parallel_workers"] == 1  # the user's pipeline is a value


def test_a_stopped_tuner_changes_and_measures_nothing_more():
    _tune(interval=5)
    d = ds.NumpySlicesDataset(np.arange(600), ["x"], shuffle=False).map(sleepy, ["x"], num_parallel_workers=1).batch(4)
    it = d.create_tuple_iterator(num_epochs=1, output_numpy=True)
    tuner = it._run.tuner
    rows = [next(it)[0].tolist() for _ in range(3)]
    tuner.stop()
    seen = len(tuner._times)
    rows += [r[0].tolist() for r in it]
    assert rows == [list(range(i, i + 4)) for i in range(0, 600, 4)]
    assert tuner.decisions == [] and len(tuner._times) == seen  # the sleeping map would get workers
    it.stop()


def test_a_seeded_python_function_on_threads_moves_to_processes():
    ds.config.set_seed(7)
    _tune(interval=5)
    d = ds.NumpySlicesDataset(np.arange(400), ["x"], shuffle=False).map(sleepy, ["x"], num_parallel_workers=2).batch(4)
    rows, tuner = _run(d)
    first = tuner.decisions[0]
    assert (first.setting, first.old, first.new) == ("mode", "threads x2", "processes x2")
    assert "lock that keys the global random generators" in first.why
    assert rows == [[list(range(i, i + 4))] for i in range(0, 400, 4)]


@pytest.mark.parametrize("idle", [1.0, 0.0], ids=["idle cores", "busy machine"])
def test_a_gil_bound_function_on_threads_moves_to_processes_only_while_cores_are_idle(monkeypatch, idle):
    # The machine's idle share is this test's to set: on a machine busy with other work the tuner
    # rightly keeps threads (processes would get no more CPU), so reading the real one made the test
    # fail under load.
    monkeypatch.setattr(autotune.Tuner, "_idle", lambda self: idle)
    _tune(interval=4)
    d = ds.NumpySlicesDataset(np.arange(240), ["x"], shuffle=False).map(spin, ["x"], num_parallel_workers=2).batch(2)
    rows, tuner = _run(d)
    modes = [d for d in tuner.decisions if d.setting == "mode"]
    if idle:
        assert modes and (modes[0].old, modes[0].new) == ("threads x2", "processes x2")
    else:
        assert modes == []
    assert rows == [[[i, i + 1]] for i in range(0, 240, 2)]


def test_cpu_and_ram_budgets_are_kept(caplog):
    _tune(interval=4, cores=1)
    d = ds.NumpySlicesDataset(np.arange(600), ["x"], shuffle=False).map(sleepy, ["x"], num_parallel_workers=1).batch(4)
    _, tuner = _run(d)
    assert tuner.decisions and all(d.new <= 4 for d in tuner.decisions if d.setting == "workers")  # 4 x 1 core
    _tune(interval=4, ram=1)  # a budget nothing fits in
    with caplog.at_level(logging.INFO, logger="headrace.autotune"):
        _, tuner = _run(d)
    assert tuner.decisions == []
    assert any("RAM budget" in r.getMessage() and "kept" in r.getMessage() for r in caplog.records)


def test_interval_zero_decides_at_the_end_of_each_epoch():
    _tune(interval=0)
    d = ds.NumpySlicesDataset(np.arange(120), ["x"], shuffle=False).map(sleepy, ["x"], num_parallel_workers=1).batch(4)
    rows, tuner = _run(d, epochs=3)
    assert rows == [[list(range(i, i + 4))] for i in range(0, 120, 4)] * 3
    assert tuner.decisions and all(d.step == 0 and d.epoch >= 1 for d in tuner.decisions)


def test_a_dropped_tuned_iterator_is_freed_at_once():
    """The tuner holds its run weakly: no cycle keeps a dropped iterator's workers alive."""
    import weakref
    _tune(interval=1)
    it = ds.NumpySlicesDataset(np.arange(8), ["x"], shuffle=False).map(sleepy, ["x"]).create_tuple_iterator()
    next(it)
    run = weakref.ref(it._run)
    del it
    assert run() is None


def _numbers():  # a stream source: a rebuilt tree could only get back mid-epoch by reading again
    yield from ((np.array(i),) for i in range(160))


def test_a_stream_pipeline_changes_at_the_end_of_the_epoch(caplog):
    _tune(interval=3)
    d = ds.GeneratorDataset(_numbers, ["x"]).map(sleepy, ["x"], num_parallel_workers=1).batch(4)
    with caplog.at_level(logging.INFO, logger="headrace.autotune"):
        rows, tuner = _run(d, epochs=2)
    assert rows == [[list(range(i, i + 4))] for i in range(0, 160, 4)] * 2
    messages = [r.getMessage() for r in caplog.records]
    assert any("wait for the end of the epoch" in m for m in messages)
    first = tuner.decisions[0]
    assert (first.setting, first.old, first.new, first.epoch) == ("workers", 1, 2, 0)
    # applied between the epochs: the decision's line is logged after the notice that it waits
    assert messages.index(first.line()) > next(i for i, m in enumerate(messages) if "wait for the end" in m)


def test_debug_mode_ignores_autotune():
    _tune(interval=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.config.set_debug_mode(True)
    _, tuner = _run(ds.NumpySlicesDataset(np.arange(8), ["x"], shuffle=False).map(sleepy, ["x"]))
    assert tuner is None


# ---- rows ------------------------------------------------------------------------------------
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(interval=st.sampled_from([1, 3, 7, 0]), workers=st.sampled_from([1, 2]), seed=st.integers(0, 2**32 - 1))
def test_rows_are_those_of_an_untuned_run(interval, workers, seed):
    """Every random draw is keyed by (seed, op, epoch, row): rebuilding stages mid-epoch with other
    worker counts and modes changes no row (a shuffle and a function drawing from np.random)."""
    ds.config.set_seed(seed)
    d = ds.NumpySlicesDataset(np.arange(96), ["x"], shuffle=True).map(noisy, ["x"], num_parallel_workers=workers)
    d = d.map(sleepy, ["x"], num_parallel_workers=workers).batch(3)
    ds.config.set_enable_autotune(False)
    plain, _ = _run(d, epochs=2)
    _tune(interval=interval)
    tuned, tuner = _run(d, epochs=2)
    assert tuned == plain
    ds.config.set_enable_autotune(False)


# ---- the file ----------------------------------------------------------------------------------
@pytest.fixture
def mindrecord_file(tmp_path):
    path = tmp_path / "rows.mindrecord"
    w = FileWriter(str(path), 1)
    w.add_schema({"x": {"type": "int64"}}, "rows")
    w.write_raw_data([{"x": i} for i in range(400)])
    w.commit()
    return str(path)


def test_the_tuned_pipeline_is_written_and_reloaded(tmp_path, mindrecord_file, monkeypatch):
    monkeypatch.setenv("RANK_ID", "3")
    prefix = str(tmp_path / "tuned")
    _tune(interval=5)
    ds.config.set_enable_autotune(True, prefix)
    d = ds.MindDataset(mindrecord_file, shuffle=False).map(sleepy, ["x"], num_parallel_workers=1).batch(4)
    rows, tuner = _run(d)
    assert rows == [[list(range(i, i + 4))] for i in range(0, 400, 4)]
    assert sorted(os.listdir(tmp_path)) == ["rows.mindrecord", "rows.mindrecord.db", "tuned_3.json"]
    with open(tmp_path / "tuned_3.json", encoding="utf-8") as f:
        saved = json.load(f)
    assert sorted(saved) == ["remark", "summary", "tree"]
    tuned_map = saved["tree"]["children"][0]
    assert tuned_map["op_type"] == "Map"
    from headrace._engine import plan as P
    [map_workers] = [w for node, w, _ in tuner.settings()[0] if type(node) is P.MapNode]
    assert tuned_map["num_parallel_workers"] == map_workers > 1
    again = ds.deserialize(json_filepath=str(tmp_path / "tuned_3.json"))
    assert ds.serialize(again)["children"][0]["num_parallel_workers"] == tuned_map["num_parallel_workers"]
    ds.config.set_enable_autotune(False)
    assert _run(again)[0] == rows


class _Stage:
    def __init__(self, mode, workers):
        self.op_id, self.mode, self.workers, self.name, self.members = 7, mode, workers, "map[spin]", []


@pytest.mark.parametrize("mode, workers", [("inline", 1), ("threads", 2)])
def test_a_computing_stage_whose_extra_thread_was_undone_tries_processes(mode, workers, monkeypatch):
    # W1's case: 1 inline worker -> 2 threads was no faster (the GIL) and undone; the stage is
    # inline again, and the next decision tries 2 worker processes rather than giving up.
    it, tuner = _spin_tuner(cores=4)  # room for the extra thread, so that only its undo stands in the way
    st = _Stage(mode, workers)
    tuner._bad.add((7, workers + 1, False))  # the extra thread, undone
    monkeypatch.setattr(tuner, "_memory_for", lambda *a: 0)
    busy = {"tasks": 50, "busy": 0.95 * workers, "cpu": 0.95 * workers, "switches": 0, "switch_cpu": 0.0, "wall": 1.0}
    got = tuner._stage_decision({7: st}, {7: autotune._Window(**busy)}, 0.9)
    assert [(x.setting, x.old, x.new) for x in got] == [("mode", f"{mode} x{workers}", f"processes x{max(2, workers)}")]
    assert got[0].why.endswith("more threads made it no faster")
    tuner._bad.add((7, max(2, workers), True))  # processes tried and undone too: nothing left to try
    tuner._pending.clear()
    assert tuner._stage_decision({7: st}, {7: autotune._Window(**busy)}, 0.9) == []
    it.stop()


def test_another_mode_stays_only_if_it_is_faster(monkeypatch):
    # W2's decode chain was moved to processes (its threads block often: OpenCV lets go of the GIL),
    # which ran 20-27% slower; 15% allowed for noise kept the move in one run of three.
    it, tuner = _spin_tuner(cores=4)
    st = _Stage("processes", 2)
    applied = []
    monkeypatch.setattr(tuner, "_stages", lambda: {7: st})
    monkeypatch.setattr(tuner, "_apply", lambda undo, rate: applied.append(undo))
    monkeypatch.setattr(tuner, "_rate", lambda stage: 95.0)  # 5% slower than before the change
    mode = autotune.Decision(0, 5, "map[spin]", "mode", "threads x2", "processes x2", "its threads block")
    tuner._trial = ({7: (2, False)}, tuner.run.prefetch_size, 100.0, autotune._must_gain([mode]))
    assert tuner._judge_trial() is True
    assert [(u.setting, u.old, u.new) for u in applied[0]] == [("workers/mode", "2 processes", "2 threads")]
    assert applied[0][0].why == "undone: no faster after the change, 95.0 rows/s against 100.0 before"
    assert (7, 2, True) in tuner._bad  # not tried again
    # 3% faster is not enough either: noise gives as much (W1 kept a 2nd thread over the GIL for
    # +0.7%, and then stayed on threads)
    monkeypatch.setattr(tuner, "_rate", lambda stage: 103.0)
    tuner._trial = ({7: (2, False)}, tuner.run.prefetch_size, 100.0, autotune._must_gain([mode]))
    assert tuner._judge_trial() is True and len(applied) == 2
    monkeypatch.setattr(tuner, "_rate", lambda stage: 106.0)
    tuner._trial = ({7: (2, False)}, tuner.run.prefetch_size, 100.0, autotune._must_gain([mode]))
    assert tuner._judge_trial() is False and len(applied) == 2
    monkeypatch.setattr(tuner, "_rate", lambda stage: 95.0)
    deeper = autotune.Decision(0, 5, "prefetch", "prefetch", 1, 4, "the consumer waited")
    tuner._trial = ({}, tuner.run.prefetch_size, 100.0, autotune._must_gain([deeper]))
    assert tuner._judge_trial() is False and len(applied) == 2  # 5% slower is within REGRESSION: kept
    it.stop()


@pytest.mark.parametrize("busy, cpu, idle, moves", [
    (2.0, 1.34, 0.3, True),    # W1's 2 threads taking turns within their tasks: 67% of their busy time
    (0.86, 0.86, 0.3, True),   # ...and task by task (tasks shorter than the switch interval): 43% busy each
    (2.0, 1.70, 0.3, False),   # W2's OpenCV chain, which lets go of the GIL: it uses its cores
    (2.0, 1.34, 0.0, False),   # threads crowded out by other work: processes would gain nothing
])
def test_threads_that_use_about_one_core_between_them_move_to_processes(busy, cpu, idle, moves, monkeypatch):
    it, tuner = _spin_tuner(cores=2)
    monkeypatch.setattr(tuner, "_memory_for", lambda *a: 0)
    monkeypatch.setattr(tuner, "_idle", lambda: idle)
    window = autotune._Window(tasks=50, busy=busy, cpu=cpu, switches=int(500 * cpu), switch_cpu=cpu, wall=1.0)
    got = tuner._stage_decision({7: _Stage("threads", 2)}, {7: window}, 0.9)
    if moves:
        assert [(x.setting, x.old, x.new) for x in got] == [("mode", "threads x2", "processes x2")]
        assert got[0].why.endswith(f"its threads used {cpu:.2f} cores between them (CPU {cpu / busy:.0%} of their "
                                   "busy time, 500 blocks per CPU second) while cores were idle: they take turns on "
                                   "the GIL")
    else:
        assert got == []  # and no third thread on 2 cores
    it.stop()


@pytest.mark.parametrize("cpu, blocks, decision", [
    # the speech chain on 2 threads (with idle cores): NumPy calls that hand the GIL back and forth,
    # slower than 1 thread, 1.5x faster in 2 processes; over GIL_TURNS_CORES, but blocking that often
    (1.533, 11_600, ("mode", "threads x2", "processes x2")),
    (0.994, 17_900, ("mode", "threads x2", "processes x2")),
    (0.54, 51_000, ("mode", "threads x2", "processes x2")),  # at half a core, doubled threads would share one
    (0.27, 52_500, ("workers", 2, 4)),   # uncached disk reads (O_DIRECT): they wait
    (0.018, 55_000, ("workers", 2, 4)),  # time.sleep(2 ms)
])
def test_threads_that_block_as_often_as_sleepers_wait_only_on_under_half_a_core(cpu, blocks, decision, monkeypatch):
    it, tuner = _spin_tuner(cores=2)
    monkeypatch.setattr(tuner, "_memory_for", lambda *a: 0)
    monkeypatch.setattr(tuner, "_idle", lambda: 0.2)
    window = autotune._Window(tasks=50, busy=2.0, cpu=cpu, switches=int(blocks * cpu), switch_cpu=cpu, wall=1.0)
    assert window.waits() == (decision[0] == "workers")
    got = tuner._stage_decision({7: _Stage("threads", 2)}, {7: window}, 0.9)
    assert [(x.setting, x.old, x.new) for x in got] == [decision]
    assert got[0].why.endswith("they take turns on the GIL" if decision[0] == "mode" else
                               f"it waits (CPU {cpu / 2:.0%} of its busy time)")
    it.stop()


@pytest.mark.parametrize("blocks, cpu, procs_next", [(1000, 1.4, True), (5000, 0.4, False), (5000, 1.4, True)])
def test_an_undone_thread_of_a_computing_stage_gives_way_to_processes_at_once(blocks, cpu, procs_next, monkeypatch):
    # W1: 1 inline worker -> 2 threads was no faster. Going back to 1 for a window only measured it
    # again (2 s of the 10 the issue allows): the stage goes to 2 processes in the same step, judged
    # against the rate before the threads. A stage that waits (blocks very often on under half a
    # core) only goes back; threads that block as often on 1.4 cores hand the GIL back and forth.
    it, tuner = _spin_tuner(cores=2)
    st = _Stage("threads", 2)
    applied = []
    monkeypatch.setattr(tuner, "_stages", lambda: {7: st})
    monkeypatch.setattr(tuner, "_memory_for", lambda *a: 0)
    monkeypatch.setattr(tuner, "_apply", lambda decisions, rate, before=None: applied.append((decisions, rate, before)))
    monkeypatch.setattr(tuner, "_rate", lambda stage: 90.0)
    window = autotune._Window(tasks=50, busy=2.0, cpu=cpu, switches=int(blocks * cpu), switch_cpu=cpu, wall=1.0)
    monkeypatch.setattr(tuner, "_windows", lambda: {7: window})
    more = autotune.Decision(0, 5, "map[spin]", "workers", 1, 2, "it computes")
    tuner._trial = ({7: (1, False)}, tuner.run.prefetch_size, 100.0, autotune._must_gain([more]))
    assert tuner._judge_trial() is True
    (decisions, rate, before), = applied
    assert (7, 2, False) in tuner._bad
    assert decisions[0].line() == ("autotune: map[spin]: workers/mode 2 threads -> 1 threads (undone: no faster "
                                   "after the change, 90.0 rows/s against 100.0 before)")
    if procs_next:
        assert [(x.setting, x.old, x.new) for x in decisions[1:]] == [("mode", "inline x1", "processes x2")]
        assert decisions[1].why == ("2 threads were no faster than 1 (90.0 rows/s against 100.0) while computing "
                                    "(CPU 70% of their busy time): they hold the GIL")
        assert (rate, before, tuner._pending) == (100.0, {7: (1, False)}, {7: (2, True)})
    else:
        assert len(decisions) == 1 and (rate, before, tuner._pending) == (-1.0, None, {7: (1, False)})
    it.stop()
