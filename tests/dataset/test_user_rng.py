"""Under ds.config.set_seed, a user function's np.random / random draws are keyed by
(seed, op, pass, sample): the same rows in every worker mode and after a resume at any step."""
import json
import random
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import headrace.dataset as ds
import headrace.dataset.transforms as T
from headrace._engine.ops.map import calls_user_code
from headrace._util import rng
from tests.helpers import held_by_a_thread, plain

MODES = {
    "inline": dict(num_parallel_workers=1),
    "threads": dict(num_parallel_workers=2),
    "processes": dict(num_parallel_workers=2, python_multiprocessing=True),
}


def draw(x):
    """np.random and random, including the cached-gauss paths of both."""
    return np.array([x, np.random.randint(0, 10**6), int(np.random.normal() * 1000),
                     int(random.random() * 10**6), int(random.gauss(0, 1) * 1000)], dtype=np.int64)


def keep(x):
    return random.random() < 0.7


def per_batch(x, info):
    return ([v + np.random.randint(0, 1000) for v in x],)


def pipeline(mode, n=40):
    kw = MODES[mode]
    d = ds.NumpySlicesDataset({"x": np.arange(n, dtype=np.int64)}, shuffle=False)
    d = d.map(draw, input_columns="x", **kw)
    d = d.filter(keep, input_columns="x", num_parallel_workers=kw["num_parallel_workers"])
    return d.batch(4, per_batch_map=per_batch, input_columns="x", **kw)


def read(it, epochs):
    out = []
    for _ in range(epochs):
        out.extend([plain(v) for v in r] for r in it)
        out.append("EPOCH_END")
    return out


def run(mode, epochs=2):
    ds.config.set_seed(1234)
    it = pipeline(mode).create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    try:
        return read(it, epochs)
    finally:
        it.stop()


@pytest.fixture(scope="module")
def reference():
    return run("inline")


def test_rows_are_random_per_sample_and_per_epoch(reference):
    rows = [b for b in reference if b != "EPOCH_END"]
    draws = [tuple(r[1:]) for b in rows for r in b[0]]
    assert len(set(draws)) == len(draws)  # no two samples (in either epoch) share a stream
    ds.config.set_seed(1235)
    it = pipeline("inline").create_tuple_iterator(num_epochs=1, output_numpy=True)
    assert read(it, 1) != reference[:reference.index("EPOCH_END") + 1]


@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_same_rows_in_every_worker_mode(mode, reference):
    assert run(mode) == reference


def _resume(mode, cut, reference, epochs=2):
    """Reads the first ``cut`` items of ``reference`` (rows and epoch ends), saves the state,
    restores it into a fresh iterator (after disturbing the config and the global generators) and
    returns what that iterator reads."""
    ds.config.set_seed(1234)
    it = pipeline(mode).create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    for _ in range(cut):
        try:
            next(it)
        except StopIteration:
            pass
    state = json.loads(json.dumps(it.get_state()))
    it.stop()
    ds.config.set_seed(99)  # the state's seed and seeding decide, not the config's
    np.random.seed(5)
    random.seed(5)
    fresh = pipeline(mode).create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    fresh.set_state(state)
    try:
        return read(fresh, reference[cut:].count("EPOCH_END"))
    finally:
        fresh.stop()


@pytest.mark.parametrize("mode,examples", [("inline", 12), ("threads", 8), ("processes", 4)])
def test_resume_at_any_step_gives_the_uninterrupted_rows(mode, examples, reference):
    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(cut=st.integers(1, len(reference) - 1))
    def check(cut):
        assert _resume(mode, cut, reference) == reference[cut:]
    check()


def test_without_a_seed_the_global_generators_are_left_alone():
    """Unseeded runs do not touch np.random / random: a user function draws from the caller's stream."""
    ds.config.set_seed(5489)  # MindSpore's "unseeded"
    np.random.seed(42)
    d = ds.NumpySlicesDataset({"x": np.arange(5)}, shuffle=False).map(
        lambda x: np.int64(np.random.randint(0, 10**6)), input_columns="x")
    got = [int(r[0]) for r in d.create_tuple_iterator(num_epochs=1, output_numpy=True)]
    assert got == np.random.RandomState(42).randint(0, 10**6, size=5).tolist()


def test_state_keeps_the_seeding_of_the_run_it_was_taken_from():
    ds.config.set_seed(1234)
    it = pipeline("inline").create_tuple_iterator(num_epochs=1, output_numpy=True)
    assert it.get_state()["seed_globals"] is True
    it.stop()
    ds.config.set_seed(5489)
    it = pipeline("inline").create_tuple_iterator(num_epochs=1, output_numpy=True)
    assert it.get_state()["seed_globals"] is False
    it.stop()


def test_only_functions_that_may_run_user_code_are_seeded():
    assert calls_user_code(lambda x: x)
    assert calls_user_code(draw)
    assert calls_user_code(np.flip)
    assert not calls_user_code(T.TypeCast(np.int32))
    assert calls_user_code(T.Compose([T.TypeCast(np.int32), draw]))
    assert not calls_user_code(T.Compose([T.TypeCast(np.int32), T.Duplicate()]))
    assert calls_user_code(T.RandomApply([draw]))

    def plus1(x):
        return x + 1
    assert calls_user_code(plus1)
    assert not calls_user_code(T.not_random(plus1))
    assert not calls_user_code(T.Compose([T.TypeCast(np.int32), plus1]))


def test_a_lock_held_elsewhere_is_waited_for_then_warned_not_hung(monkeypatch):
    monkeypatch.setattr(rng, "LOCK_WAIT_S", 0.2)
    monkeypatch.setattr(rng, "_unlocked_warned", set())
    with held_by_a_thread(rng._globals_lock):
        ds.config.set_seed(1234)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = [plain(r[0]) for r in ds.NumpySlicesDataset({"x": np.arange(3)}, shuffle=False)
                   .map(draw, input_columns="x").create_tuple_iterator(num_epochs=1, output_numpy=True)]
    assert [r[0] for r in got] == [0, 1, 2]
    msgs = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(msgs) == 1 and msgs[0].startswith("headrace: a user function of op 2 waited 0.2 s for the lock")


class DrawingSource:
    """A random-access user source whose __getitem__ draws from np.random and random."""

    def __len__(self):
        return 30

    def __getitem__(self, i):
        return (np.array([i, np.random.randint(0, 10**6), int(random.random() * 10**6)], dtype=np.int64),)


def source_pipeline(mode):
    kw = MODES[mode]
    return ds.GeneratorDataset(DrawingSource(), ["a"], shuffle=False, **kw).batch(4)


def source_rows(mode, epochs=2, state=None):
    ds.config.set_seed(77)
    it = source_pipeline(mode).create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    try:
        if state is not None:
            it.set_state(state)
            epochs -= state["epoch"]
        return read(it, epochs)
    finally:
        it.stop()


@pytest.mark.parametrize("mode", ["inline", "threads", "processes"])
def test_a_user_source_drawing_from_the_globals_gives_the_same_rows_everywhere_and_after_a_resume(mode):
    want = source_rows("inline")
    draws = [tuple(r[1:]) for b in want if b != "EPOCH_END" for r in b[0]]
    assert len(set(draws)) == len(draws)
    assert source_rows(mode) == want
    for cut in (1, 5, 8, 9, 13):  # inside epoch 0, its end, inside epoch 1
        ds.config.set_seed(77)
        it = source_pipeline(mode).create_tuple_iterator(num_epochs=2, output_numpy=True)
        for _ in range(cut):
            try:
                next(it)
            except StopIteration:
                pass
        state = it.get_state()
        it.stop()
        assert source_rows(mode, state=state) == want[cut:]


def test_a_source_marked_not_random_is_not_seeded():
    from headrace.dataset._sources.generator import RowConverter, UserRandomAccess
    convert = RowConverter(["a"], None, "GeneratorDataset")
    assert UserRandomAccess(DrawingSource(), ["a"], convert).runs_user_code is True
    assert UserRandomAccess(T.not_random(DrawingSource()), ["a"], convert).runs_user_code is False
    ds.config.set_seed(77)
    np.random.seed(3)
    random.seed(3)
    d = ds.GeneratorDataset(T.not_random(DrawingSource()), ["a"], shuffle=False).take(3)
    got = [plain(r[0])[1] for r in d.create_tuple_iterator(num_epochs=1, output_numpy=True)]
    assert got == np.random.RandomState(3).randint(0, 10**6, size=3).tolist()  # the caller's stream
