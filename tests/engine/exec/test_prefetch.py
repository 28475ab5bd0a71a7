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
from headrace._engine.run import PRESTART_TRIAL as PRESTART, PipelineRun
from headrace._engine.samplers import SequentialPlan
from headrace._util.errors import PipelineError


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


@pytest.mark.parametrize("loaders_own", [False, True])
def test_time_a_loader_spends_transferring_a_row_is_not_time_away(clock, loaders_own):
    # the same 0.5 ms after each row: the loop's work (a prefetch thread would overlap it), or a
    # framework loader's transfer of the row in the loop's thread (a prefetch thread would only
    # move it), after which the loader calls consumer_starts()
    clock.make, clock.away_s = 0.0005, 0.0005
    r = run(clock)
    got = []
    for _ in range(20):
        got.append(int(r.next_row()[0]))
        clock.away()
        if loaders_own:
            r.consumer_starts()
    assert (r._prefetcher is None) == loaders_own
    assert read_rest(r, got) == list(range(200))
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


# ---- a pass started ahead of its first row (``PipelineRun.prestart``, for framework loaders) ----

class ThreadStepClock(StepClock):
    """A StepClock of each thread's own: the rows the prefetch thread makes take its time, not the
    consumer's (whose time is the rows it makes itself and its ``away()``)."""

    def __init__(self):
        import threading
        self._local = threading.local()
        super().__init__()

    @property
    def t(self):
        return getattr(self._local, "t", 0.0)

    @t.setter
    def t(self, value):
        self._local.t = value


@pytest.fixture
def both_clocks(monkeypatch):
    """The run's clock, also timing the rows the prefetch thread makes."""
    from headrace._engine.exec import prefetch
    c = ThreadStepClock()
    monkeypatch.setattr(pipeline_mod, "_clock", c)
    monkeypatch.setattr(prefetch, "_clock", c)
    return c


def prestarted(clock, rows=None, prefetch=8, epochs=1):
    node = P.RandomAccessNode((), ("x",), rows or Rows(), SequentialPlan(), "Rows")
    r = timed(PipelineRun(node, epochs, options.Options(seed=1), prefetch=prefetch), clock)
    r.prestart()
    assert r._prefetcher is not None and r._trial == 1
    return r


def read_to_the_judgement(r, full):
    """Reads the rows of the prestart trial, the last one with ``full`` rows made ahead."""
    got = [int(r.next_row()[0]) for _ in range(PRESTART - 1)]
    wait_until(lambda: r.prefetched() == full)
    got.append(int(r.next_row()[0]))
    return got


def wait_until(cond):
    import time
    deadline = time.monotonic() + 60
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_a_prestarted_pass_is_released_for_a_consumer_that_only_reads(both_clocks):
    both_clocks.make = 0.0005  # cheap rows
    r = prestarted(both_clocks)
    wait_until(lambda: r.prefetched() == 8)  # made before the first row is asked for
    got = read_to_the_judgement(r, 8)
    pf = r._draining
    assert r._prefetcher is None and pf is not None and not pf.alive
    assert pf.pending()  # rows it made are handed out before the tree is read again
    assert read_rest(r, got) == list(range(200))
    assert r._draining is None and r._prefetcher is None
    r.close()


def test_a_prestarted_pass_is_kept_for_a_busy_consumer(both_clocks):
    both_clocks.make, both_clocks.away_s = 0.0005, 0.01
    r = prestarted(both_clocks)
    got = []
    for _ in range(3 * PRESTART):
        got.append(int(r.next_row()[0]))
        both_clocks.away()
    assert r._prefetcher is not None and r._prefetcher.alive and r._draining is None
    assert read_rest(r, got) == list(range(200))
    r.close()


def test_a_prestarted_pass_of_heavy_rows_is_kept(both_clocks):
    both_clocks.make = 0.005  # well above HEAVY_ROW_S
    r = prestarted(both_clocks)
    got = [int(r.next_row()[0]) for _ in range(3 * PRESTART)]
    assert r._prefetcher is not None and r._draining is None
    assert read_rest(r, got) == list(range(200))
    r.close()


class Ten(Rows):
    def __len__(self):
        return 10


def test_the_end_of_the_pass_made_before_the_release_ends_it_and_the_next_pass_reads_anew(both_clocks):
    both_clocks.make = 0.0005
    r = prestarted(both_clocks, Ten(), prefetch=16, epochs=2)
    wait_until(lambda: r.prefetched() == 10 and not r._prefetcher.alive)  # 10 rows, then the end of the pass
    got = [int(r.next_row()[0]) for _ in range(PRESTART)]
    assert r._draining is not None
    assert read_rest(r, got) == list(range(10))
    assert read_rest(r, []) == list(range(10))  # the second epoch, read by the tree itself
    with pytest.raises(Exception, match="beyond the specified number of epochs"):
        r.next_row()
    r.close()


class FailsAt9(Ten):
    def read(self, i):
        if i == 9:
            raise ZeroDivisionError("row 9 is bad")
        return (np.array(i),)


def test_an_error_made_before_the_release_is_raised_in_its_place(both_clocks):
    both_clocks.make = 0.0005
    r = prestarted(both_clocks, FailsAt9(), prefetch=16)
    wait_until(lambda: r.prefetched() == 9 and not r._prefetcher.alive)  # rows 0-8, then the error
    got = [int(r.next_row()[0]) for _ in range(PRESTART)]
    assert r._draining is not None
    assert int(r.next_row()[0]) == 8
    with pytest.raises(PipelineError, match="Rows failed at sample index: 9") as e:
        r.next_row()
    assert "ZeroDivisionError: row 9 is bad" in str(e.value)
    assert got == list(range(8)) and r.failed
    r.close()


def test_a_prefetch_thread_started_while_released_rows_wait_hands_them_out_first(both_clocks):
    both_clocks.make = 0.0005
    r = prestarted(both_clocks)
    got = read_to_the_judgement(r, 8)
    assert r._draining is not None and r._draining.pending()
    both_clocks.away_s = 0.01  # the consumer turns busy: next_row starts a prefetch thread again
    for _ in range(3):
        got.append(int(r.next_row()[0]))
        both_clocks.away()
    assert r._prefetcher is not None and r._draining is None
    assert read_rest(r, got) == list(range(200))
    r.close()


def test_prestart_does_nothing_once_the_pass_has_started_or_without_prefetch(clock):
    r = run(clock)
    r.next_row()
    r.prestart()
    assert r._prefetcher is None and r._trial == 0
    r.close()
    node = P.RandomAccessNode((), ("x",), Rows(), SequentialPlan(), "Rows")
    r = PipelineRun(node, 1, options.Options(seed=1), prefetch=0)
    r.prestart()
    assert r._prefetcher is None and [int(r.next_row()[0]) for _ in range(3)] == [0, 1, 2]
    r.close()


def test_a_release_cut_short_by_ctrl_c_loses_no_row(both_clocks, monkeypatch):
    from headrace._engine.exec import prefetch
    both_clocks.make = 0.0005
    r = prestarted(both_clocks)
    real = prefetch.Prefetcher.release
    calls = []

    def interrupted(self):
        calls.append(1)
        if len(calls) == 1:  # the flag is set, then Ctrl-C lands in the wait for the thread
            self._release = True
            raise KeyboardInterrupt
        real(self)

    monkeypatch.setattr(prefetch.Prefetcher, "release", interrupted)
    got = [int(r.next_row()[0]) for _ in range(PRESTART - 1)]
    with pytest.raises(KeyboardInterrupt):
        r.next_row()  # the judgement comes before a row is taken
    assert r._draining is not None and not r.failed and r.get_state()["step"] == PRESTART - 1
    assert read_rest(r, got) == list(range(200))
    assert len(calls) > 1
    r.close()


def test_a_row_taken_is_not_kept_by_the_thread_while_it_makes_the_next():
    # The thread's frame kept the last row it made while it made the next one: a batch the loop
    # had dropped stayed alive until then (seen as a flaky headrace.jax test).
    import threading
    import weakref

    from headrace._engine.exec.prefetch import Prefetcher

    class Row:
        pass

    made, gate, making = [], threading.Event(), threading.Event()

    def produce():
        if made:
            making.set()
            gate.wait(30)  # the next row takes as long as the test needs
            raise StopIteration
        made.append(Row())
        return made[-1]

    pf = Prefetcher(produce, 4)
    row = pf.get()
    ref = weakref.ref(row)
    del row
    made.clear()
    assert making.wait(30)  # the thread is making the next row
    assert ref() is None
    gate.set()
    with pytest.raises(StopIteration):
        pf.get()
    assert pf.stop()


class Gated(Rows):
    """Rows 0..9; row ``i`` is read only once ``gates[i]`` is set."""

    def __init__(self):
        import threading
        self.gates = [threading.Event() for _ in range(10)]

    def __len__(self):
        return 10

    def read(self, i):
        assert self.gates[i].wait(60)
        return (np.array(i),)


def test_the_prefetch_threads_ahead_is_told_whether_the_consumer_waits_for_the_row(clock, monkeypatch):
    import threading

    from headrace._engine.exec import stage
    # One row per task: a task grows to several rows when its row took under TASK_SECONDS, and
    # then row 1 waits in a task with row 2, whose gate opens only once row 1 is out (a 60 s
    # stall that ended in row 2's gate failing, when the opener saw the consumer wait at once).
    monkeypatch.setattr(stage, "TASK_SECONDS", 0.0)
    rows = Gated()
    node = P.RandomAccessNode((), ("x",), rows, SequentialPlan(), "Rows")
    r = PipelineRun(node, 1, options.Options(seed=1), prefetch=8)
    seen = []
    r.ahead = lambda row, waiting: seen.append((int(row[0]), waiting)) or row
    r.prestart()
    pf = r._prefetcher

    def open_when_waited():
        wait_until(lambda: pf.consumer_waiting)
        rows.gates[0].set()

    opener = threading.Thread(target=open_when_waited)
    opener.start()
    assert int(r.next_row()[0]) == 0  # waited for: the row is done while the consumer waits
    opener.join()
    rows.gates[1].set()
    wait_until(lambda: r.prefetched() == 1)  # done while the consumer is away
    assert int(r.next_row()[0]) == 1
    assert seen == [(0, True), (1, False)]
    for g in rows.gates[2:]:
        g.set()
    assert read_rest(r, []) == list(range(2, 10))
    r.close()


def test_the_prefetch_thread_makes_no_row_before_its_start_has_returned(monkeypatch):
    # a thread that made rows at once kept the starting thread from the GIL (see Prefetcher)
    import threading
    import time

    from headrace._engine.exec import prefetch
    events = []

    class SlowToReturn(threading.Thread):
        def start(self):
            super().start()
            time.sleep(0.2)  # the new thread runs meanwhile
            events.append("start returned")

    def produce():
        events.append("row made")
        raise StopIteration

    monkeypatch.setattr(prefetch.threading, "Thread", SlowToReturn)
    pf = prefetch.Prefetcher(produce, 2)
    with pytest.raises(StopIteration):
        pf.get()
    assert events == ["start returned", "row made"]
    assert pf.stop()


@pytest.mark.parametrize("last", ["end", "error"])
def test_size_counts_the_rows_made_not_the_passs_end_or_its_error(last):
    from headrace._engine.exec import prefetch
    from tests.helpers import wait_for
    items = iter(range(3))

    def produce():
        try:
            return next(items)
        except StopIteration:
            if last == "error":
                raise ValueError("bad row") from None
            raise

    pf = prefetch.Prefetcher(produce, 8)
    wait_for(lambda: not pf.alive, "the thread to make the pass and end")
    assert pf.size() == 3 and pf.pending()  # 3 rows, then the end (or the error) behind them
    assert [pf.get(), pf.get()] == [0, 1] and pf.size() == 1
    assert pf.get() == 2 and pf.size() == 0 and pf.pending()
    with pytest.raises(StopIteration if last == "end" else ValueError):
        pf.get()
    assert pf.size() == 0 and not pf.pending()
    assert pf.stop()
