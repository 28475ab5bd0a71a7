"""MindDataset orders over several files: Shuffle.FILES, Shuffle.INFILE and num_samples draws.

The expected lists were produced by MindSpore 2.10 (``mindspore.dataset.MindDataset``) on the same
files (five files of 3, 4, 5, 6 and 7 rows whose labels are 100.., 200.., ..., 500..) with
``ds.config.set_seed(1234567)``; ``tests/compat/test_mindrecord_orders.py`` checks them live.
"""
import numpy as np
import pytest

import headrace.dataset as ds
from headrace._util.types import SampleContext
from headrace._engine.samplers.mindrecord import MindFilePlan
from headrace._util.mtshuffle import minstd_shuffle
from headrace.mindrecord import FileWriter

SIZES = [3, 4, 5, 6, 7]
SEED = 1234567


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("orders")
    out = []
    for k, size in enumerate(SIZES):
        path = str(d / f"g{k}")
        w = FileWriter(path)
        w.add_schema({"label": {"type": "int32"}, "data": {"type": "bytes"}})
        w.write_raw_data([{"label": 100 * (k + 1) + j, "data": b"x"} for j in range(size)])
        w.commit()
        out.append(path)
    return out


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    """One dataset written with shard_num=3 (rows 0..19 over the shards in order)."""
    path = str(tmp_path_factory.mktemp("sharded") / "sh")
    w = FileWriter(path, shard_num=3)
    w.add_schema({"label": {"type": "int32"}, "data": {"type": "bytes"}})
    w.write_raw_data([{"label": i, "data": b"x"} for i in range(20)])
    w.commit()
    return path + "0"


def epochs(files, n, seed=SEED, **kw):
    ds.config.set_seed(seed)
    kw.setdefault("columns_list", ["label"])
    d = ds.MindDataset(files, **kw)
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=n)
    return [[int(r[0]) for r in it] for _ in range(n)]


MS_FILES = [
    [300, 301, 302, 303, 304, 500, 501, 502, 503, 504, 505, 506, 100, 101, 102, 200, 201, 202, 203, 400, 401, 402,
     403, 404, 405],
    [502, 503, 504, 505, 506, 100, 101, 102, 200, 201, 202, 300, 301, 302, 303, 304, 500, 501, 203, 400, 401, 402,
     403, 404, 405],
    [102, 200, 201, 202, 300, 505, 506, 100, 101, 203, 400, 401, 402, 403, 404, 405, 502, 503, 504, 301, 302, 303,
     304, 500, 501],
    [100, 101, 203, 400, 401, 202, 300, 505, 506, 402, 403, 404, 405, 502, 503, 102, 200, 201, 504, 301, 302, 303,
     304, 500, 501]]
MS_FILES_SHARD_1_OF_2 = [[301, 303, 500, 502, 504, 506, 101, 200, 202, 400, 402, 404, 300],
                         [301, 303, 400, 402, 404, 100, 102, 201, 203, 501, 503, 505, 300],
                         [301, 303, 200, 202, 500, 502, 504, 506, 101, 400, 402, 404, 300],
                         [301, 303, 200, 202, 400, 402, 404, 100, 102, 501, 503, 505, 300]]
MS_INFILE = [
    [102, 101, 100, 203, 202, 201, 200, 302, 304, 300, 301, 303, 404, 402, 401, 400, 405, 403, 505, 504, 500, 501,
     503, 502, 506],
    [100, 101, 102, 203, 200, 202, 201, 300, 301, 302, 304, 303, 404, 400, 402, 403, 405, 401, 500, 501, 505, 506,
     503, 502, 504],
    [102, 101, 100, 203, 202, 200, 201, 302, 301, 303, 300, 304, 404, 401, 400, 405, 403, 402, 505, 501, 503, 502,
     506, 500, 504],
    [100, 101, 102, 201, 202, 200, 203, 303, 301, 300, 302, 304, 402, 401, 403, 404, 400, 405, 503, 501, 500, 504,
     506, 502, 505]]
MS_INFILE_SHARD_0_OF_3 = [[102, 203, 200, 300, 404, 400, 505, 501, 506], [102, 200, 202, 300, 400, 405, 502, 506, 501],
                          [102, 200, 203, 304, 400, 404, 502, 505, 506]]
MS_FILES_PADDED_SHARD_0_OF_2 = [[300, 302, 304, 501, 503, 505, 100, 102, 201, 203, 401, 403, 405, -1],
                                [300, 302, 304, 401, 403, 405, 101, 200, 202, 500, 502, 504, 506, -1],
                                [300, 302, 304, 201, 203, 501, 503, 505, 100, 102, 401, 403, 405, -1]]
MS_30_WITH_REPLACEMENT = [
    [200, 401, 203, 301, 200, 404, 200, 402, 400, 202, 101, 303, 201, 301, 203, 100, 100, 300, 401, 303, 201, 100,
     303, 401, 402, 500, 502, 201, 200, 503],
    [100, 400, 101, 200, 201, 200, 300, 203, 200, 401, 201, 404, 101, 402, 200, 200, 202, 100, 201, 200, 200, 201,
     100, 300, 303, 402, 404, 200, 500, 200],
    [200, 201, 201, 200, 201, 100, 200, 300, 400, 101, 200, 201, 203, 100, 100, 401, 202, 101, 201, 100, 101, 202,
     100, 100, 303, 200, 201, 402, 201, 200]]


def test_files_order_matches_mindspore(files):
    assert epochs(files, 4, shuffle=ds.Shuffle.FILES) == MS_FILES


def test_files_order_with_shards_matches_mindspore(files):
    assert epochs(files, 4, shuffle=ds.Shuffle.FILES, num_shards=2, shard_id=1) == MS_FILES_SHARD_1_OF_2


def test_infile_order_matches_mindspore(files):
    assert epochs(files, 4, shuffle=ds.Shuffle.INFILE) == MS_INFILE


def test_infile_order_with_shards_matches_mindspore(files):
    assert epochs(files, 3, shuffle=ds.Shuffle.INFILE, num_shards=3, shard_id=0) == MS_INFILE_SHARD_0_OF_3


def test_files_padded_rows_stay_last(files):
    got = epochs(files, 3, shuffle=ds.Shuffle.FILES, columns_list=["label"], padded_sample={"label": -1},
                 num_padded=3, num_shards=2, shard_id=0)
    assert got == MS_FILES_PADDED_SHARD_0_OF_2
    plain = epochs(files, 2, shuffle=ds.Shuffle.FILES, columns_list=["label"], padded_sample={"label": -1},
                   num_padded=2)
    assert plain == [e + [-1, -1] for e in MS_FILES[:2]]


def test_num_samples_draws_from_previous_epoch(files):
    got = epochs(files, 3, shuffle=True, num_samples=30)
    assert got == MS_30_WITH_REPLACEMENT
    assert set(got[1]) <= set(got[0]) and set(got[2]) <= set(got[1])


def test_first_epoch_keeps_files_whole(files):
    first = epochs(files, 1, shuffle=ds.Shuffle.FILES)[0]
    runs = [first[i] // 100 for i in range(len(first))]
    assert [k for i, k in enumerate(runs) if i == 0 or runs[i - 1] != k] == [3, 5, 1, 2, 4]
    assert all(first[i] + 1 == first[i + 1] for i in range(len(first) - 1) if runs[i] == runs[i + 1])


def test_infile_keeps_files_in_place(files):
    for e in epochs(files, 3, shuffle=ds.Shuffle.INFILE, seed=9):
        assert [x // 100 for x in e] == sorted(x // 100 for x in e)


def test_sharded_dataset_is_shuffled_by_shard(sharded):
    """A dataset written with shard_num=3 and read through one of its files: its shards are the files."""
    first, second = epochs(sharded, 2, seed=5, shuffle=ds.Shuffle.FILES)
    # MindSpore 2.10: file order (2, 0, 1), then epoch 2 moves the blocks of epoch 1's order
    assert first == list(range(14, 20)) + list(range(14))
    assert second == list(range(8, 20)) + list(range(8))


def test_plan_without_sizes_is_one_file():
    plan = MindFilePlan("files")
    assert list(plan.indices(SampleContext(5, 0, 1))) == [0, 1, 2, 3, 4]
    infile = MindFilePlan("infile", sizes=(5,))
    assert list(infile.indices(SampleContext(5, 0, 1))) == list(minstd_shuffle(5, 2))


def test_dataset_size_and_argument_checks(files):
    assert ds.MindDataset(files, shuffle=ds.Shuffle.FILES).get_dataset_size() == 25
    assert ds.MindDataset(files, shuffle=ds.Shuffle.FILES, num_shards=2, shard_id=0).get_dataset_size() == 13
    with pytest.raises(ValueError, match="cannot be specified at the same time"):
        ds.MindDataset(files, shuffle=ds.Shuffle.FILES, num_samples=3)
    with pytest.raises(ValueError, match="cannot be specified at the same time"):
        ds.MindDataset(files, shuffle=ds.Shuffle.INFILE, num_samples=3)
    rows = np.concatenate([np.arange(100 * (k + 1), 100 * (k + 1) + s) for k, s in enumerate(SIZES)])
    assert sorted(epochs(files, 1, shuffle=ds.Shuffle.INFILE)[0]) == sorted(rows.tolist())
