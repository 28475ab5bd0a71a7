"""The prefetch thread runs only for consumers that spend time between rows.

The choice rests on two timings: how long the pipeline takes to make a row and how long the
consumer stays away between rows. The tests set both on a clock of their own (``StepClock``), so
that a busy machine cannot change what they see.
"""
import numpy as np
import pytest

from headrace._engine import options
from headrace._engine import run as pipeline_mod
from headrace._engine import plan as P
from headrace._engine.run import PipelineRun
from headrace._engine.samplers import SequentialPlan


class Rows:
    column_names = ("x",)

    def __len__(self):
        return 200

    def read(self, i):
        return (np.array(i),)


class StepClock:
    """The run's clock: each row the pipeline makes takes ``make`` seconds, and ``away()``
    (the consumer's work between rows) takes ``away`` seconds, whatever real time passes."""

    def __init__(self, make=0.0, away=0.0):
        self.t, self.make, self.away_s = 0.0, make, away

    def __call__(self):
        return self.t

    def away(self):
        self.t += self.away_s


class Timed:
    """A run's tree whose rows take ``clock.make`` seconds each on ``clock``."""

    def __init__(self, tree, clock):
        self._tree, self._clock = tree, clock

    def __next__(self):
        self._clock.t += self._clock.make
        return next(self._tree)

    def __getattr__(self, name):
        return getattr(self._tree, name)


@pytest.fixture
def clock(monkeypatch):
    c = StepClock()
    monkeypatch.setattr(pipeline_mod, "_clock", c)
    return c


def timed(run, clock):
    run.tree = Timed(run.tree, clock)
    return run


def run(clock):
    node = P.RandomAccessNode((), ("x",), Rows(), SequentialPlan(), "Rows")
    return timed(PipelineRun(node, 1, options.Options(seed=1), prefetch=8), clock)


def read_rest(r, got):
    while True:
        try:
            got.append(int(r.next_row()[0]))
        except StopIteration:
            return got


def test_a_consumer_that_only_reads_gets_no_prefetch_thread(clock):
    clock.make = 0.0005  # cheap rows: below HEAVY_ROW_S
    r = run(clock)
    got = [int(r.next_row()[0]) for _ in range(150)]
    assert got == list(range(150))
    assert r._prefetcher is None
    r.close()


def test_a_busy_consumer_gets_rows_prefetched_in_order(clock):
    clock.make, clock.away_s = 0.0005, 0.01  # cheap rows, and "training" between them
    r = run(clock)
    got = []
    for _ in range(5):
        got.append(int(r.next_row()[0]))
        clock.away()
    pf = r._prefetcher
    assert pf is not None and pf.alive
    assert r.get_state()["step"] == 5  # rows delivered, whatever was prefetched
    assert read_rest(r, got) == list(range(200))
    r.close()
    assert not pf.alive  # close() waits for the thread to end


def test_heavy_rows_are_prefetched_for_a_consumer_that_only_reads(clock):
    clock.make = 0.005  # decoded images, say: well above HEAVY_ROW_S
    r = run(clock)
    got = [int(r.next_row()[0]) for _ in range(10)]
    assert r._prefetcher is not None
    assert read_rest(r, got) == list(range(200))
    r.close()


class Quick:
    def __getitem__(self, i):
        return (np.array(i),)

    def __len__(self):
        return 12


def _process_rows(clock):
    import headrace.dataset as ds

    d = ds.GeneratorDataset(Quick(), ["x"], shuffle=False, num_parallel_workers=1, python_multiprocessing=True)
    d = d.map(lambda x: x + 1, input_columns=["x"], num_parallel_workers=1, python_multiprocessing=True)
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=1)
    timed(it._run, clock)
    got, prefetched = [], False
    for row in it:
        got.append(int(row[0]))
        prefetched = prefetched or it._run._prefetcher is not None
        clock.away()
    it.stop()
    return got, prefetched


def test_rows_from_worker_processes_are_not_prefetched_for_a_consumer_that_only_reads(clock):
    # The workers make rows ahead on their own: a slow row here is waiting, not work to overlap.
    clock.make = 0.005
    assert _process_rows(clock) == (list(range(1, 13)), False)


def test_rows_from_worker_processes_are_prefetched_for_a_busy_consumer(clock):
    clock.make, clock.away_s = 0.0005, 0.01
    assert _process_rows(clock) == (list(range(1, 13)), True)
