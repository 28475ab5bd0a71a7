"""The autotune benchmark's comparison in turns (benchmarks/autotune.py), on a tiny pipeline."""
import numpy as np

import headrace.dataset as ds
from benchmarks import autotune


def tiny(setting):
    workers, processes, _ = setting
    data = ds.NumpySlicesDataset({"x": np.arange(64, dtype=np.float32)}, shuffle=False)
    return data.map(lambda x: x + 1, input_columns="x", num_parallel_workers=workers,
                    python_multiprocessing=processes).batch(8)


def test_the_tuned_iterator_and_the_rivals_are_read_in_turns(monkeypatch):
    calls = []
    real = autotune.rate

    def spy(it, warm, seconds):
        calls.append(it)
        return real(it, warm, seconds)

    monkeypatch.setattr(autotune, "rate", spy)
    sleeps = []
    monkeypatch.setattr(autotune, "_sleep", sleeps.append)
    tuned = autotune.open_iterator(ds, lambda: tiny(autotune.BAD), 1, tune=5)
    try:
        assert tuned._run.tuner is not None and ds.config.get_enable_autotune() is False
        rivals = [(lambda: tiny((2, False, 16)), 16), (lambda: tiny((1, False, 4)), 4)]
        ratios = autotune.in_turns(ds, tuned, rivals, 0.01, 0.02, rounds=4, settle=0.5)
    finally:
        tuned.stop()
    assert [len(r) for r in ratios] == [4, 4] and all(x > 0 for r in ratios for x in r)
    a, b = calls[:2]  # the rivals' iterators, each warmed up first
    assert len({id(tuned), id(a), id(b)}) == 3
    # rounds of one window each, the order rotating by one
    assert calls[2:] == [tuned, a, b, a, b, tuned, b, tuned, a, tuned, a, b]
    assert ds.config.get_prefetch_size() == 4  # the last iterator made set it
    assert sleeps == [0.5] * 12  # before each window, for the others to fill their prefetch


def test_the_wait_lets_the_unread_iterator_fill_its_prefetch():
    # W2: 16 batches of 128 images at 800 images/s are 2.56 s; a margin of 4 batches and half again
    assert autotune.settle_seconds(16, 128, 800.0) == 1.5 * 20 * 128 / 800.0
