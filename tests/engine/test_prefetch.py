"""The prefetch thread runs only for consumers that spend time between rows."""
import threading
import time

import numpy as np

from headrace._engine import options
from headrace._engine import plan as P
from headrace._engine.pipeline import PipelineRun
from headrace._engine.samplers import SequentialPlan


class Rows:
    column_names = ("x",)

    def __len__(self):
        return 200

    def read(self, i):
        return (np.array(i),)


def prefetch_threads():
    return [t for t in threading.enumerate() if t.name.startswith("headrace-prefetch")]


def run():
    node = P.RandomAccessNode((), ("x",), Rows(), SequentialPlan(), "Rows")
    return PipelineRun(node, 1, options.Options(seed=1), prefetch=8)


def test_a_consumer_that_only_reads_gets_no_prefetch_thread():
    r = run()
    got = [int(r.next_row()[0]) for _ in range(150)]
    assert got == list(range(150))
    assert r._prefetcher is None
    r.close()


def test_a_busy_consumer_gets_rows_prefetched_in_order():
    before = len(prefetch_threads())
    r = run()
    got = []
    for _ in range(5):
        got.append(int(r.next_row()[0]))
        time.sleep(0.01)  # "training"
    assert r._prefetcher is not None and len(prefetch_threads()) == before + 1
    assert r.get_state()["step"] == 5  # rows delivered, whatever was prefetched
    while True:
        try:
            got.append(int(r.next_row()[0]))
        except StopIteration:
            break
    assert got == list(range(200))
    r.close()
    time.sleep(0.3)
    assert len(prefetch_threads()) == before


class Slow:
    """Rows that take a few milliseconds to make (in the worker process)."""

    def __getitem__(self, i):
        time.sleep(0.003)
        return (np.array(i),)

    def __len__(self):
        return 12


def _process_rows(consumer_sleep):
    import headrace.dataset as ds

    d = ds.GeneratorDataset(Slow(), ["x"], shuffle=False, num_parallel_workers=1, python_multiprocessing=True)
    d = d.map(lambda x: x + 1, input_columns=["x"], num_parallel_workers=1, python_multiprocessing=True)
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=1)
    got, threads = [], 0
    before = len(prefetch_threads())
    for row in it:
        got.append(int(row[0]))
        threads = max(threads, len(prefetch_threads()) - before)
        time.sleep(consumer_sleep)
    it.stop()
    return got, threads


def test_rows_from_worker_processes_are_not_prefetched_for_a_consumer_that_only_reads():
    # The workers make rows ahead on their own: a slow row here is waiting, not work to overlap.
    assert _process_rows(0.0) == (list(range(1, 13)), 0)


def test_rows_from_worker_processes_are_prefetched_for_a_busy_consumer():
    assert _process_rows(0.01) == (list(range(1, 13)), 1)
