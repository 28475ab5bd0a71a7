"""The autotune benchmark's paired comparison (benchmarks/autotune.py), on a tiny pipeline."""
import numpy as np

import headrace.dataset as ds
from benchmarks import autotune


def tiny(setting):
    workers, processes, _ = setting
    data = ds.NumpySlicesDataset({"x": np.arange(64, dtype=np.float32)}, shuffle=False)
    return data.map(lambda x: x + 1, input_columns="x", num_parallel_workers=workers,
                    python_multiprocessing=processes).batch(8)


def test_paired_reads_the_tuned_and_the_best_iterator_in_turns(monkeypatch):
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
        ratios = autotune.paired(ds, tuned, lambda: tiny((2, False, 16)), 16, 0.01, 0.02, pairs=3, settle=0.5)
    finally:
        tuned.stop()
    assert len(ratios) == 3 and all(r > 0 for r in ratios)
    best = calls[0]  # the best setting's iterator, warmed up first
    assert best is not tuned
    assert calls[1:] == [tuned, best, best, tuned, tuned, best]
    assert ds.config.get_prefetch_size() == 16
    assert sleeps == [0.5] * 6  # before each window, for the other iterator to fill its prefetch


def test_the_wait_lets_the_unread_iterator_fill_its_prefetch():
    # W2: 16 batches of 128 images at 800 images/s are 2.56 s; a margin of 4 batches and half again
    assert autotune.settle_seconds(16, 128, 800.0) == 1.5 * 20 * 128 / 800.0
