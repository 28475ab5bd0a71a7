"""Compressed TFRecord files with a row count, laid out as MindSpore 2.10 lays them out (pinned
against the oracle in tests/compat/test_issue39_orders_compat.py): each shard reads
``files // num_shards`` files, at positions ``shard_id, shard_id + num_shards, ...`` of the pass's
file order, and ``num_samples // files_per_shard`` rows of each."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import headrace.dataset as ds
from headrace._engine.samplers.files import FileRowsPlan
from headrace._util.errors import PipelineError
from headrace._util.types import SampleContext
from tests.sources.makers import write_tfrecord


@settings(max_examples=80, deadline=None)
@given(counts=st.lists(st.integers(0, 9), min_size=1, max_size=7), shards=st.one_of(st.none(), st.integers(1, 4)),
       limit=st.integers(1, 20), mode=st.sampled_from(["false", "files", "global"]), seed=st.integers(0, 2**32 - 1),
       pass_index=st.integers(0, 3))
def test_each_shard_reads_its_files_first_rows(counts, shards, limit, mode, seed, pass_index):
    arr = np.array(counts)
    starts = np.concatenate([[0], np.cumsum(arr)])
    files = len(counts) // (shards or 1)
    need = limit // files if files else 0
    plain = FileRowsPlan(lambda: arr, mode, shards, None if shards is None else 0, None)
    order = plain._file_order(len(counts), pass_index, seed).tolist()  # the pass's file order, as without a count
    seen = []
    for sid in range(shards or 1):
        checked = []
        plan = FileRowsPlan(lambda: arr, mode, shards, None if shards is None else sid, limit, per_file=True,
                            check_files=lambda keys, n: checked.append((keys.tolist(), n)))
        rows = plan.indices(SampleContext(int(arr.sum()), pass_index, seed)).tolist()
        mine = [order[sid + (shards or 1) * k] for k in range(files)]
        assert checked == [(mine, need)]
        want = [r for k in mine for r in range(starts[k], starts[k] + min(need, counts[k]))]
        assert sorted(rows) == sorted(want)
        if mode != "global":
            assert rows == want
        assert plan.num_samples(int(arr.sum())) == files * need
        seen += rows
    assert len(seen) == len(set(seen))  # shards never share a row


def _files(tmp_path, sizes):
    paths = []
    for k, n in enumerate(sizes):
        paths.append(str(tmp_path / f"f{k}.gz"))
        write_tfrecord(paths[-1], [{"v": ("int64", [100 * k + i])} for i in range(n)], "GZIP")
    return paths


def _values(d, epochs=1):
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=epochs)
    return [[int(r[0][0]) for r in it] for _ in range(epochs)]


def test_rows_and_size(tmp_path):
    paths = _files(tmp_path, [3, 5, 2, 4, 6, 7, 5])
    d = ds.TFRecordDataset(paths, num_samples=7, num_shards=2, shard_id=1, shuffle=False, compression_type="GZIP")
    assert d.get_dataset_size() == 6  # the rows it gives (MindSpore 2.10 says 7)
    assert _values(d, 2) == [[100, 101, 300, 301, 500, 501]] * 2
    d = ds.TFRecordDataset(paths[:4], num_samples=9, shuffle=False, compression_type="GZIP")  # no shards: 4 files
    assert _values(d) == [[0, 1, 100, 101, 200, 201, 300, 301]]


def test_a_short_file_is_an_error_in_the_pass_that_reads_it(tmp_path):
    paths = _files(tmp_path, [3, 5, 2, 4])
    ds.config.set_seed(0)
    # 3 shards of 4 files, FILES: shard 0 reads file 1 in the first pass (5 rows), file 2 (2 rows) in the second
    d = ds.TFRecordDataset(paths, num_samples=3, num_shards=3, shard_id=0, shuffle=ds.Shuffle.FILES,
                           compression_type="GZIP")
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=2)
    assert [int(r[0][0]) for r in it] == [100, 101, 102]
    with pytest.raises(PipelineError, match=r"This tfrecord file: .*f2\.gz, does not meet minimum rows per shard "
                                            r"requirement: 3 and 1 number of rows per file, but got 2 number of rows"):
        list(it)


def test_a_row_count_below_the_files_per_shard_is_refused(tmp_path):
    paths = _files(tmp_path, [3, 5, 2, 4])
    with pytest.raises(ValueError, match=r"each shard reads 2 files and num_samples // 2 rows of each, but "
                                         r"num_samples is 1, so no row would be read: num_samples must be at least 2"):
        ds.TFRecordDataset(paths, num_samples=1, num_shards=2, shard_id=0, compression_type="GZIP")
    ds.TFRecordDataset(paths, num_samples=1, num_shards=2, shard_id=0)  # uncompressed: the first row of the shard
