"""Dataset.sync_wait / sync_update: rows held until the loop releases them (headrace/dataset/_sync.py).

Scenarios that could hang run in a subprocess with a hard timeout.
"""
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import headrace.dataset as ds

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def gen():
    for i in range(100):
        yield (np.array(i),)


class Augment:
    def __init__(self):
        self.loss = 0
        self.seen = []

    def preprocess(self, x):
        self.seen.append((int(x), self.loss))
        return x

    def update(self, data):
        self.loss = data["loss"]


def run_script(body, timeout=60):
    code = "import numpy as np\nimport headrace.dataset as ds\n" + textwrap.dedent(body)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_rows_after_an_update_see_what_the_callback_set():
    aug = Augment()
    d = ds.GeneratorDataset(gen, ["input"]).sync_wait(condition_name="policy", callback=aug.update)
    d = d.map(operations=[aug.preprocess], input_columns=["input"]).batch(4)
    firsts, count = [], 0
    for data in d.create_dict_iterator(num_epochs=1, output_numpy=True):
        firsts.append(int(data["input"][0]))
        count += 4
        d.sync_update(condition_name="policy", data={"loss": count})
    assert firsts == list(range(0, 100, 4))
    assert aug.seen == [(i, i - i % 4) for i in range(100)]


def test_the_gate_holds_the_source_until_the_update():
    made = []

    def counting():
        for i in range(40):
            made.append(i)
            yield (np.array(i),)

    d = ds.GeneratorDataset(counting, ["x"]).sync_wait("c").batch(5)
    it = d.create_tuple_iterator(num_epochs=1, output_numpy=True)
    assert next(it)[0].tolist() == [0, 1, 2, 3, 4]
    assert made == [0, 1, 2, 3, 4]  # nothing read past what was released
    d.sync_update("c")
    assert next(it)[0].tolist() == [5, 6, 7, 8, 9]
    d.sync_update("c", num_batch=3)
    assert [next(it)[0].tolist()[0] for _ in range(3)] == [10, 15, 20]
    assert len(made) == 25
    d.disable_sync()
    assert len(list(it)) == 3


def test_two_gates_with_different_paces():
    aug = Augment()
    d = ds.GeneratorDataset(gen, ["input"]).sync_wait(condition_name="every batch", callback=aug.update)
    d = d.map(operations=[aug.preprocess], input_columns=["input"])
    d = d.sync_wait(num_batch=2, condition_name="every 2 batches").batch(6)
    assert sorted(d.get_sync_notifiers()) == ["every 2 batches", "every batch"] and d.is_sync()
    count = 0
    for _ in d.create_dict_iterator(num_epochs=1, output_numpy=True):
        count += 1
        d.sync_update(condition_name="every batch", data={"loss": count})
        if count % 2 == 0:
            d.sync_update(condition_name="every 2 batches")
    assert count == 17
    assert aug.seen[::6][:5] == [(0, 0), (6, 1), (12, 2), (18, 3), (24, 4)]


def test_each_iterator_starts_the_gate_afresh():
    aug = Augment()
    d = ds.GeneratorDataset(gen, ["input"]).sync_wait("p", callback=aug.update)
    d = d.map([aug.preprocess], input_columns=["input"]).batch(30, drop_remainder=True)
    for _ in range(3):
        aug.update({"loss": 0})
        count = 0
        for data in d.create_dict_iterator(num_epochs=1, output_numpy=True):
            assert int(data["input"][0]) == count
            count += 30
            d.sync_update("p", data={"loss": count})
        assert count == 90


def test_a_loop_that_never_updates_gets_every_row_after_the_timeout():
    out = run_script("""
        import warnings
        ds.config.set_callback_timeout(1)
        d = ds.GeneratorDataset(lambda: ((np.array(i),) for i in range(12)), ["x"]).sync_wait("late").batch(4)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            rows = [r[0].tolist() for r in d.create_tuple_iterator(num_epochs=1, output_numpy=True)]
        print(rows)
        print([str(x.message) for x in w if x.category is RuntimeWarning])
    """)
    rows, warned = out.strip().splitlines()
    assert rows == "[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]"
    assert warned == ("[\"sync_wait 'late' waited 1 s for sync_update(condition_name='late'); it now lets every "
                      "row through.\"]")


def test_leaving_a_loop_while_a_row_is_held_does_not_hang():
    out = run_script("""
        ds.config.set_callback_timeout(600)
        d = ds.GeneratorDataset(lambda: ((np.array(i),) for i in range(100)), ["x"]).sync_wait("c")
        d = d.map(lambda x: x + 1, num_parallel_workers=2).batch(4)
        it = d.create_tuple_iterator(num_epochs=1, output_numpy=True)
        print(next(it)[0].tolist())
        del it
        print("left")
    """, timeout=120)
    assert out.split() == ["[1,", "2,", "3,", "4]", "left"]


def test_argument_and_state_errors():
    base = ds.GeneratorDataset(gen, ["input"])
    with pytest.raises(ValueError) as e:
        base.sync_wait("c", num_batch=-1)
    assert str(e.value) == "num_batch need to be greater than 0."
    with pytest.raises(TypeError) as e:
        base.sync_wait("c", num_batch="123")
    assert "Argument num_batch with value 123 is not of type [<class 'int'>]" in str(e.value)
    with pytest.raises(TypeError, match="Argument condition_name with value 1 is not of type"):
        base.sync_wait(1)
    synced = base.sync_wait("c").map(lambda x: x)
    with pytest.raises(RuntimeError) as e:
        synced.shuffle(4)
    assert str(e.value) == "No shuffle after sync operators."
    with pytest.raises(RuntimeError) as e:
        synced.sync_wait("c", num_batch=2)
    assert str(e.value) == "Condition name is already in use."
    assert not base.is_sync() and base.get_sync_notifiers() == {}


def test_independent_mode_refuses_sync_wait(monkeypatch):
    monkeypatch.setenv("MS_INDEPENDENT_DATASET", "True")
    with pytest.raises(RuntimeError) as e:
        ds.GeneratorDataset(gen, ["input"]).sync_wait("p")
    assert str(e.value) == "Dataset sync wait is not supported in Dataset Independent mode."


@pytest.mark.parametrize("kwargs, text", [({"num_batch": -1}, "Sync_update batch size can only be positive integer, "
                                                              "got: -1."),
                                          ({"condition_name": "other"}, "Condition name not found.")])
def test_a_bad_update_raises_and_opens_every_gate(kwargs, text):
    d = ds.GeneratorDataset(gen, ["input"]).sync_wait("c").map(lambda x: x)
    count = 0
    with pytest.raises(RuntimeError) as e:
        for _ in d.create_dict_iterator(num_epochs=1, output_numpy=True):
            count += 1
            d.sync_update(**{"condition_name": "c", **kwargs})
    assert str(e.value) == text and count == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the gate is open: no wait, no timeout warning
        assert sum(1 for _ in d.create_dict_iterator(num_epochs=1, output_numpy=True)) == 100
