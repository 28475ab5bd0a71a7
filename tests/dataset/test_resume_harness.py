"""The shared resume harness (``assert_resume_equivalence``) on the pipelines it did not cover:
MindDataset (its own MindRecord shuffles), map and batch in worker processes, and the shape check
itself."""
import numpy as np
import pytest

import headrace.dataset as ds
from headrace.mindrecord import FileWriter
from tests.helpers import assert_resume_equivalence, state_shape


def plus_one(x):  # module level: worker processes receive it by reference
    return x + 1


def twice(x, batch_info):  # per_batch_map: a list of the batch's values of column x
    return ([v * 2 for v in x],)


@pytest.fixture
def mindrecord_file(tmp_path):
    path = tmp_path / "rows.mindrecord"
    w = FileWriter(str(path), 2)  # two files: FILES and INFILE shuffles have files to reorder
    w.add_schema({"x": {"type": "int64"}, "name": {"type": "string"}}, "rows")
    w.write_raw_data([{"x": i, "name": f"r{i}"} for i in range(23)])
    w.commit()
    return str(path) + "0"


@pytest.mark.parametrize("shuffle", [True, False, ds.Shuffle.FILES, ds.Shuffle.INFILE])
def test_mindrecord_resumes_at_every_step(mindrecord_file, shuffle):
    ds.config.set_seed(7)
    d = ds.MindDataset(mindrecord_file, columns_list=["x"], shuffle=shuffle).batch(4)
    full = assert_resume_equivalence(d, num_epochs=2)
    assert full.count("EPOCH_END") == 2 and len(full) == 2 * 6 + 2


def test_mindrecord_with_shards_and_a_buffer_shuffle_resumes(mindrecord_file):
    ds.config.set_seed(7)
    d = ds.MindDataset(mindrecord_file, columns_list=["x"], num_shards=2, shard_id=1).shuffle(5)
    assert_resume_equivalence(d, num_epochs=2, stride=2)


def test_map_and_batch_in_worker_processes_resume_at_every_step():
    ds.config.set_seed(7)
    d = ds.NumpySlicesDataset({"x": np.arange(20)}, shuffle=True)
    d = d.map(plus_one, input_columns="x", num_parallel_workers=2, python_multiprocessing=True)
    d = d.shuffle(4).batch(3, per_batch_map=twice, input_columns=["x"], num_parallel_workers=2,
                           python_multiprocessing=True)
    full = assert_resume_equivalence(d, num_epochs=2, stride=3)
    assert sorted(v for row in full[:full.index("EPOCH_END")] for v in row[0]) == [2 * (i + 1) for i in range(20)]


def test_state_shape_ignores_values_but_not_keys():
    a = {"version": 2, "ops": {"S": {"pass": 0, "rng": {"seed": 1, "draws": 0}, "next": None}}}
    b = {"version": 2, "ops": {"S": {"pass": 3, "rng": {"seed": 1, "draws": 9}, "next": {"seed": 1, "draws": 12}}}}
    c = {"version": 2, "ops": {}}
    assert state_shape(a) == state_shape(b) != state_shape(c)
