"""sync_wait / sync_update against MindSpore 2.10: which rows each batch holds, the batch size, and
the errors. What each row saw of the callback's data is compared with the schedule, not with
MindSpore: its map reads ahead of the gate's count on its own threads, so the value a row sees
there depends on timing (rows 4-7 of a batch of 4 saw the first update in some runs, not in others);
headrace's rows see exactly the updates made before they were released."""
import pytest

from tests.oracles.oracle import run_headrace, run_ms

pytestmark = pytest.mark.compat

_PROGRAM = """
import numpy as np
def gen():
    for i in range(60):
        yield (np.array(i),)
class Augment:
    def __init__(self):
        self.loss, self.seen = 0, []
    def preprocess(self, x):
        self.seen.append([int(x), self.loss])
        return x
    def update(self, data):
        self.loss = data["loss"]
def one(batch, num_batch, every):
    aug = Augment()
    d = ds.GeneratorDataset(gen, ["input"]).sync_wait("p", num_batch=num_batch, callback=aug.update)
    d = d.map([aug.preprocess], input_columns=["input"], num_parallel_workers=1).batch(batch)
    firsts, count = [], 0
    for data in d.create_dict_iterator(num_epochs=1, output_numpy=True):
        firsts.append(int(data["input"][0]))
        count += 1
        if count % every == 0:
            d.sync_update("p", num_batch=num_batch if count % 3 else None, data={"loss": count})
    return [firsts, aug.seen, d.get_batch_size()]
def err(fn):
    try:
        fn()
        return "ok"
    except Exception as e:
        return [type(e).__name__, str(e)]
def errors():
    base = ds.GeneratorDataset(gen, ["input"])
    synced = base.sync_wait("c").map(lambda x: x)
    return [err(lambda: base.sync_wait("c", num_batch=-1)), err(lambda: base.sync_wait("c", num_batch=0)),
            err(lambda: synced.shuffle(4)), err(lambda: synced.sync_wait("c")),
            sorted(synced.get_sync_notifiers()), synced.is_sync(), base.is_sync()]
RESULT = [one(4, 1, 1), one(5, 2, 2), one(6, 1, 1), errors()]
"""


def test_sync_wait_matches_mindspore():
    theirs = run_ms(_PROGRAM)
    ours = run_headrace(_PROGRAM)
    for k, (batch, num_batch, every) in enumerate([(4, 1, 1), (5, 2, 2), (6, 1, 1)]):
        assert ours[k][0] == theirs[k][0] == list(range(0, 60, batch))
        assert ours[k][2] == theirs[k][2] == batch
        # row i is released by the update after batch (i // (batch * num_batch)) * num_batch - 1 ...
        released_by = [(i // (batch * num_batch)) * num_batch for i in range(60)]
        # ... which, when made after `every`-th batches, carried the count of batches seen then
        assert ours[k][1] == [[i, (n // every) * every] for i, n in enumerate(released_by)]
        assert [r[0] for r in theirs[k][1]] == list(range(60))
    assert ours[3] == theirs[3]
    assert theirs[3][:4] == [["ValueError", "num_batch need to be greater than 0."]] * 2 + [
        ["RuntimeError", "No shuffle after sync operators."], ["RuntimeError", "Condition name is already in use."]]
