"""A user function that hangs in a map with one worker (run in the reading thread, not on a worker
thread or process) is reported too (issue 16, item 4): op, column, sample index, pid, thread and
stack after ``set_multiprocessing_timeout_interval`` seconds, again at 2x, 4x; with
``set_worker_timeout`` the task runs on a thread of its own so that the reader can raise.
Scenarios run in a subprocess with a hard timeout (helpers of test_stuck_workers.py)."""
from __future__ import annotations

import pytest

from tests.dataset.test_stuck_workers import FOREVER, SLEEPS, run_script, stuck_source

RUN_INLINE = '''
ds.config.set_multiprocessing_timeout_interval(1)
d = {source}.map(stuck, ["data"], num_parallel_workers=1){batch}
out([int(r[0].flat[0]) for r in d.create_tuple_iterator(output_numpy=True)])
'''
SLICES = 'ds.NumpySlicesDataset({"data": np.arange(8), "label": -np.arange(8)}, shuffle=False)'
GENERATOR = 'ds.GeneratorDataset(gen, ["data", "label"], shuffle=False, num_parallel_workers=1)'


# (A map over a streamed source without a batch runs row by row as rows are asked for, with no
# task to watch: not covered.)
@pytest.mark.parametrize("source, batch", [(SLICES, ""), (GENERATOR, ".batch(1)")], ids=["rows", "batches"])
def test_a_stuck_map_in_the_reading_thread_is_reported(tmp_path, source, batch):
    got, pid = run_script(SLEEPS + RUN_INLINE.format(source=source, batch=batch), tmp_path, False)
    assert got["rows"] == list(range(8))
    assert pid == got["main_pid"]
    first, second = got["reports"][:2]
    for text in (first, second):
        assert text.startswith("map operation: [PyFunc] has been running for ")
        assert f"without returning at column: ['data'], sample index: 5 (pid {pid}, thread 'MainThread')" in text
        assert ", in stuck\n" in text
    assert "Next report at 2 s." in first and "Next report at 4 s." in second


def test_a_timeout_fails_a_map_with_one_worker(tmp_path):
    body = FOREVER + '''
ds.config.set_worker_timeout(2)
d = ds.GeneratorDataset(gen, ["data", "label"], shuffle=False, num_parallel_workers=1).map(
    forever, ["data"], num_parallel_workers=1)
rows = []
try:
    for r in d.create_tuple_iterator(output_numpy=True):
        rows.append(int(r[0]))
except RuntimeError as e:
    out(rows, {"type": type(e).__name__, "op": e.op, "index": e.index, "seconds": e.seconds, "text": str(e)})
    sys.exit(0)
out(rows)
'''
    got, pid = run_script(body, tmp_path, False, env={"WANT": "99"})
    err = got["error"]
    assert err is not None, got
    assert (err["type"], err["op"], err["index"], err["seconds"]) == ("WorkerTimeoutError", "map operation: [PyFunc]",
                                                                       5, 2)
    assert "time.sleep(600)  # never returns in time" in err["text"]
    assert got["rows"] == list(range(len(got["rows"]))) and len(got["rows"]) <= 5


def test_a_stuck_read_in_a_read_and_map_stage_names_the_source_index(tmp_path):
    # a random-access source read in its map's stage (the engine's C row loop when built): a read
    # stuck at source index 6 is the source's (a seeded run would read in Python: not set here)
    body = stuck_source("(np.array(i), np.array(-i))") + '''
ds.config.set_multiprocessing_timeout_interval(1)
d = ds.GeneratorDataset(Src(), ["data", "label"], shuffle=False, num_parallel_workers=1).map(
    lambda x: x + 100, ["data"], num_parallel_workers=1).batch(2)
out([r[0].tolist() for r in d.create_tuple_iterator(output_numpy=True)])
'''
    got, pid = run_script(body, tmp_path, False, env={"WANT": "1"})
    assert got["rows"] == [[100, 101], [102, 103], [104, 105], [106, 107]]
    text = got["reports"][0]
    assert text.startswith("GeneratorDataset has been running for "), text
    assert f"without returning at sample index: 6 (pid {pid}, thread 'MainThread')" in text, text
    assert "time.sleep(0.02)  # the read is stuck" in text or "while not os.path.exists(flag)" in text, text
