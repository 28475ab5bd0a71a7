"""Dataset.set_init_step / get_init_step: iterators resume at a global step with the rows of an
uninterrupted run (expected rows are MindSpore 2.10's, seed 3)."""
import numpy as np
import pytest

import headrace.dataset as ds

FULL = [[30, 10, 0, 50, 20, 40], [30, 10, 20, 0, 40, 50], [0, 30, 50, 20, 40, 10]]


def read(step, epochs, n_read):
    ds.config.set_seed(3)
    d = ds.NumpySlicesDataset(list(range(6)), ["c"], shuffle=True).map(lambda x: x * 10)
    if step is not None:
        assert d.set_init_step(step) is None
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=epochs)
    return d, [[int(r[0]) for r in it] for _ in range(n_read)], it


@pytest.mark.parametrize("step, expected", [
    (None, FULL), (0, FULL), (2, [FULL[0][2:], FULL[1], FULL[2]]), (6, FULL[1:]), (8, [FULL[1][2:], FULL[2]]),
    (13, [FULL[2][1:]]),
])
def test_resumes_with_the_rows_of_the_uninterrupted_run(step, expected):
    d, rows, it = read(step, 3, len(expected))
    assert rows == expected
    assert d.get_init_step() == (step or 0)
    with pytest.raises(RuntimeError, match="beyond the specified number of epochs"):
        next(it)


def test_unlimited_epochs_accept_any_step():
    # MindSpore 2.10 refuses any step above 0 with num_epochs=-1 (a difference on purpose)
    _, rows, _ = read(7, -1, 2)
    assert rows == [FULL[1][1:], FULL[2]]


@pytest.mark.parametrize("step", [18, 25])
def test_step_past_the_last_epoch_fails_when_the_iterator_is_made(step):
    with pytest.raises(RuntimeError, match=f"reset step must be less than dataset_size \\* num_epochs. step: {step}, "
                                           "dataset_size: 6, num_epochs: 3"):
        read(step, 3, 0)


def test_get_init_step_follows_the_only_input():
    d = ds.NumpySlicesDataset([1, 2, 3], ["c"], shuffle=False)
    assert d.get_init_step() == 0
    d.set_init_step(2)
    assert d.batch(1).get_init_step() == 2 and (d + d).get_init_step() == 0
    d.set_init_step(1)  # steps of the pipeline iterated: here batches
    assert [r[0].tolist() for r in d.batch(2).create_tuple_iterator(output_numpy=True, num_epochs=1)] == [[3]]


@pytest.mark.parametrize("bad, exc, msg", [
    (-1, ValueError, r"init_step must be in \[0, 9223372036854775807\], but got -1"),
    (1.5, TypeError, "init_step must be an int, but got float: 1.5"),
    ("a", TypeError, "init_step must be an int, but got str: 'a'"),
    (True, TypeError, "init_step must be an int, but got bool: True"),
    (np.int64(2), TypeError, "init_step must be an int, but got int64"),
])
def test_set_init_step_checks_its_argument(bad, exc, msg):
    with pytest.raises(exc, match=msg):
        ds.NumpySlicesDataset([1]).set_init_step(bad)


class _ShufflingBatchSampler:
    def __init__(self):
        self.idx = [[0, 1], [2], [3, 4, 5]]
        self.gen = np.random.default_rng(0)

    def __iter__(self):
        self.gen.shuffle(self.idx)
        return iter([list(b) for b in self.idx])


class _Src:
    def __getitem__(self, i):
        return np.array(i)

    def __len__(self):
        return 6


def test_stateful_batch_sampler_restarts_per_iterator_and_replays_skipped_epochs():
    # MindSpore 2.10's rows: every iterator copies the batch sampler; skipped epochs still run it
    d = ds.GeneratorDataset(_Src(), ["c"], batch_sampler=_ShufflingBatchSampler())
    expected = [[[3, 4, 5], [0, 1], [2]], [[2], [0, 1], [3, 4, 5]]]
    for _ in range(2):
        it = d.create_tuple_iterator(output_numpy=True, num_epochs=2)
        assert [[r[0].tolist() for r in it] for _ in range(2)] == expected
    d.set_init_step(4)
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=2)
    assert [r[0].tolist() for r in it] == [[0, 1], [3, 4, 5]]
