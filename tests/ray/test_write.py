"""MindRecordDatasink: files written under their final names, committed as a set, readable by
headrace and by MindSpore; a failed job leaves nothing in the target directory."""
import glob
import os

import numpy as np
import pytest

ray = pytest.importorskip("ray")

import headrace.dataset as ds
from headrace.mindrecord import FileReader
from headrace.ray import MindRecordDatasink, read_mindrecord
from headrace.ray._write import schema_from_arrow
from tests.oracles.oracle import oracle_python, run_ms
from tests.ray.conftest import SCHEMA


def sink(directory, *args, **kwargs):
    """A datasink with small pages (the default 4 MiB pages are written out in full)."""
    return MindRecordDatasink(str(directory), "out", *args, header_size=1 << 14, page_size=1 << 15, **kwargs)


def local_rows(files):
    return list(ds.MindDataset(files, shuffle=False).create_dict_iterator(output_numpy=True))


def parts(directory, prefix="out"):
    return sorted(glob.glob(os.path.join(directory, f"{prefix}-*.mindrecord")))


def test_files_hold_every_row_once_in_order(local_ray, mr_set, tmp_path):
    read_mindrecord(mr_set, shuffle=False, rows_per_task=10).write_datasink(sink(tmp_path))
    files = parts(tmp_path)
    assert [os.path.basename(f) for f in files] == [f"out-{i:05d}.mindrecord" for i in range(len(files))]
    assert sorted(os.listdir(tmp_path)) == sorted([os.path.basename(f) for f in files]
                                                  + [os.path.basename(f) + ".db" for f in files])
    ours, theirs = local_rows(files), local_rows(mr_set)
    assert len(ours) == 50
    for a, b in zip(ours, theirs):
        assert sorted(a) == sorted(b)
        for k in a:
            assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]), k
    reader = FileReader(files[0])   # each file is a 1-shard set with the schema read from the rows
    try:
        assert reader.schema() == {k: (dict(v, shape=list(v["shape"])) if "shape" in v else v) for k, v in SCHEMA.items()}
    finally:
        reader.close()
    rows = [r for f in files for r in FileReader(f).get_next()]
    assert [r["label"] for r in rows] == list(range(50))
    assert rows[7]["data"] == theirs[7]["data"].tobytes()


ORACLE = """
rows = []
d = ds.MindDataset(INPUTS, shuffle=False)
for r in d.create_dict_iterator(output_numpy=True, num_epochs=1):
    rows.append([int(r["label"]), r["data"].tobytes().hex(), str(r["name"]), r["vec"].tolist(),
                 r["ids"].tolist(), float(r["score"])])
RESULT = rows
"""


@pytest.mark.compat
@pytest.mark.skipif(oracle_python() is None, reason="MindSpore oracle not set up (scripts/oracle_env.sh)")
def test_mindspore_reads_the_files(local_ray, mr_set, tmp_path):
    read_mindrecord(mr_set, shuffle=False, rows_per_task=20).write_datasink(sink(tmp_path))
    theirs = run_ms(ORACLE, parts(tmp_path))
    ours = [[int(r["label"]), r["data"].tobytes().hex(), str(r["name"]), r["vec"].tolist(), r["ids"].tolist(),
             float(r["score"])] for r in local_rows(mr_set)]
    assert theirs == ours


def test_set_mode_joins_the_files_into_one_set(local_ray, mr_set, tmp_path):
    read_mindrecord(mr_set, shuffle=False, rows_per_task=10).write_datasink(sink(tmp_path, mode="set"))
    files = parts(tmp_path)
    assert len(files) >= 4
    # any one file reads the whole set, in shard order, as a FileWriter(shard_num=n) set does
    assert [int(r["label"]) for r in local_rows(files[2])] == list(range(50))
    reader = FileReader(files[1])
    try:
        assert [r["label"] for r in reader.get_next()] == list(range(50))
    finally:
        reader.close()
    if oracle_python() is not None:
        theirs = run_ms(ORACLE, files[-1])
        assert [r[0] for r in theirs] == list(range(50))
        assert theirs[9][1] == local_rows(mr_set)[9]["data"].tobytes().hex()


def test_set_mode_refuses_a_header_too_small_for_the_names(local_ray, tmp_path):
    data = ray.data.from_items([{"x": i} for i in range(90)]).repartition(90)
    prefix = "p" * 180   # 90 names of 200 bytes do not fit a 16 KiB header
    with pytest.raises(Exception, match="the header of a set of 90 files needs [0-9]+ bytes, more than "
                                        "header_size=16384; give a larger header_size."):
        data.write_datasink(MindRecordDatasink(str(tmp_path), prefix, mode="set", header_size=1 << 14,
                                               page_size=1 << 15))
    assert os.listdir(tmp_path) == []


def test_min_rows_per_file_bundles_blocks(local_ray, mr_set, tmp_path):
    read_mindrecord(mr_set, ["label"], shuffle=False, rows_per_task=5).write_datasink(
        sink(tmp_path, min_rows_per_file=20))
    sizes = [len(local_rows(f)) for f in parts(tmp_path)]
    assert sum(sizes) == 50 and all(n >= 20 for n in sizes[:-1]) and len(sizes) <= 3   # (6 files without it)


def test_a_failed_job_leaves_no_file(local_ray, mr_set, tmp_path):
    (tmp_path / "keep.txt").write_text("x")

    def fail_late(batch):
        if 40 in batch["label"].tolist():
            raise ValueError("row 40 is bad")
        return batch

    data = read_mindrecord(mr_set, shuffle=False, rows_per_task=10).map_batches(fail_late, batch_size=10)
    with pytest.raises(Exception, match="row 40 is bad"):
        data.write_datasink(sink(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["keep.txt"]


def test_parts_of_different_layouts_are_not_committed(local_ray, tmp_path):
    rows = [{"b": bytes(100)}, {"b": bytes(100)}, {"b": bytes(50000)}]   # the last outgrows a 32 KiB page
    data = ray.data.from_items(rows).repartition(3)
    with pytest.raises(Exception, match="out-0000[0-2].mindrecord was written with header_size=16384 and "
                                        "page_size=[0-9]+ .*give a larger page_size or header_size"):
        data.write_datasink(sink(tmp_path))
    assert os.listdir(tmp_path) == []


def test_existing_files_are_refused_or_replaced(local_ray, mr_set, tmp_path):
    small = read_mindrecord(mr_set, ["label"], shuffle=False, rows_per_task=30)
    small.write_datasink(sink(tmp_path))
    before = parts(tmp_path)
    assert len(before) == 2
    with pytest.raises(Exception, match="2 MindRecord file\\(s\\) with prefix 'out' exist in") as info:
        small.write_datasink(sink(tmp_path))
    assert "pass overwrite=True or another prefix" in str(info.value)
    assert parts(tmp_path) == before
    read_mindrecord([mr_set], ["label", "name"], shuffle=False, rows_per_task=100).write_datasink(  # one file
        sink(tmp_path, overwrite=True))
    after = parts(tmp_path)
    assert len(after) == 1 and len(os.listdir(tmp_path)) == 2
    assert [str(r["name"]) for r in local_rows(after)] == [f"row-{i}" for i in range(25)]


def test_a_given_schema_is_written(local_ray, tmp_path):
    data = ray.data.from_items([{"x": np.arange(3, dtype=np.int64) + i, "y": i} for i in range(5)])
    data.write_datasink(sink(tmp_path, {"x": {"type": "int64", "shape": [-1]},
                                                                  "y": {"type": "int64"}}))
    rows = local_rows(parts(tmp_path))
    assert [int(r["y"]) for r in rows] == list(range(5))
    assert rows[4]["x"].tolist() == [4, 5, 6] and rows[4]["x"].dtype == np.int64


def test_a_column_mindrecord_cannot_hold_is_refused(local_ray, tmp_path):
    data = ray.data.from_items([{"img": np.zeros((2, 2), dtype=np.uint8)}])
    with pytest.raises(Exception, match="column 'img' holds uint8 arrays; MindRecord arrays are int32, int64, "
                                        "float32 or float64"):
        data.write_datasink(sink(tmp_path))
    assert os.listdir(tmp_path) == []


def test_schema_from_arrow_names_the_column():
    pa = pytest.importorskip("pyarrow")
    assert schema_from_arrow(pa.schema([("a", pa.binary()), ("b", pa.string()), ("c", pa.int32()),
                                        ("__sample__", pa.int64())])) == {
        "a": {"type": "bytes"}, "b": {"type": "string"}, "c": {"type": "int32"}}
    with pytest.raises(ValueError, match="column 'flag' has Arrow type bool; MindRecord holds bytes, string"):
        schema_from_arrow(pa.schema([("flag", pa.bool_())]))


@pytest.mark.parametrize("args, error, message", [
    (("/no/such/dir", "p"), ValueError, "directory '/no/such/dir' does not exist or is not a directory."),
    ((".", "a/b"), ValueError, "prefix must be a non-empty name of letters, digits"),
    ((".", ""), ValueError, "prefix must be a non-empty name"),
    ((".", "p", [1]), TypeError, "schema must be a dict (FileWriter.add_schema's) or None, but got list."),
    ((1, "p"), TypeError, "directory must be a str path, but got 1."),
    ((".", "p"), ValueError, None),
])
def test_bad_arguments(args, error, message):
    if message is None:   # the same arguments with a bad keyword
        with pytest.raises(error, match="mode must be 'parts' or 'set', but got 'all'."):
            MindRecordDatasink(*args, mode="all")
        with pytest.raises(error, match=r"page_size must be a multiple of 4 in \[32768, 268435456\], but got 1000."):
            MindRecordDatasink(*args, page_size=1000)
        with pytest.raises(error, match="min_rows_per_file must be a positive int or None, but got 0."):
            MindRecordDatasink(*args, min_rows_per_file=0)
        return
    with pytest.raises(error) as info:
        MindRecordDatasink(*args)
    assert message in str(info.value)


def test_a_row_that_does_not_fit_the_schema_fails_the_job(local_ray, tmp_path):
    rows = [{"x": np.array([1.0, 2.0, 3.0])}, {"x": np.array([1.5, 2.0, 3.0])}]   # float64, not int64
    data = ray.data.from_items(rows).repartition(1)
    with pytest.raises(Exception, match="row 0, field 'x': an array of dtype float64 does not fit a field of type "
                                        "int64; row 1, field 'x'"):
        data.write_datasink(sink(tmp_path, {"x": {"type": "int64", "shape": [3]}}))
    assert os.listdir(tmp_path) == []   # not written with the rows dropped, nor cast
