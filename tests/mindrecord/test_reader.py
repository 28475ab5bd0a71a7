"""Reading: FileReader, random access by row id, threads, fork, pickle, moved files, reindex and the CLI."""
import concurrent.futures
import multiprocessing
import os
import pickle
import shutil
import sqlite3

import numpy as np
import pytest

from headrace.cli.mindrecord import main as cli_main
from headrace.mindrecord import FileReader, reindex
from headrace.mindrecord._format.errors import MindRecordFormatError
from headrace.mindrecord._format.reader import ColumnDecoder, ShardSetReader

from .conftest import SCHEMA, make_rows, write


@pytest.fixture
def dataset(tmp_path):
    (tmp_path / "set").mkdir()
    path = tmp_path / "set" / "r.mr"
    write(path, make_rows(20), shard_num=3)
    return str(path)


def _labels(reader):
    return [r["label"] for r in reader.get_next()]


def test_filereader_rows_keys_and_values(dataset):
    r = FileReader(dataset + "1")
    rows = list(r.get_next())
    assert r.len() == 20 and len(rows) == 20
    assert sorted(_labels(r)) == list(range(20))
    first = rows[0]
    assert list(first) == ["label", "name", "data", "mat", "vec"]       # raw sorted, then blob fields
    i = first["label"]
    assert first["name"] == f"n{i}" and first["data"] == bytes([i]) * (i % 7)
    assert first["vec"].dtype == np.int64 and first["vec"].tolist() == list(range(-2, i % 5 - 2))
    assert first["mat"].dtype == np.float32 and first["mat"].shape == (2, 2)
    assert r.schema() == SCHEMA | {} and list(r.schema()) == ["data", "label", "mat", "name", "vec"]
    r.close()
    r.close()


def test_close_inside_get_next_ends_the_loop(dataset):
    r = FileReader(dataset + "0")
    seen = []
    for row in r.get_next():
        seen.append(row["label"])
        if len(seen) == 5:
            r.close()
    assert len(seen) == 5
    assert _labels(r) == []               # after close, a new get_next reads nothing (as in MindSpore)


def test_filereader_columns_and_file_lists(dataset):
    rows = list(FileReader(dataset + "0", columns=["vec", "name", "data"]).get_next())
    assert list(rows[0]) == ["name", "vec", "data"]                   # blob fields keep the asked order
    only = FileReader([dataset + "2", dataset + "0"])
    shard2 = [r["label"] for r in FileReader([dataset + "2"]).get_next()]
    shard0 = [r["label"] for r in FileReader([dataset + "0"]).get_next()]
    assert _labels(only) == shard2 + shard0
    assert list(FileReader(dataset + "0", columns=[]).get_next())[0].keys() == rows[0].keys() | {"label", "mat"}


def test_filereader_errors(dataset, tmp_path):
    with pytest.raises(Exception, match=r"\[ParamTypeError\]: Invalid parameter type. 'columns' expect list type."):
        FileReader(dataset + "0", columns="label")
    with pytest.raises(RuntimeError, match=r"\[ERROR\] Invalid data, column name: zz can not found in schema. "
                                           r"Please check the 'column_list'."):
        FileReader(dataset + "0", columns=["zz"])
    with pytest.raises(RuntimeError, match="The input: nonexist is not exists."):
        FileReader("nonexist")
    for bad, text in ((0, "Parameter num_consumer: 0 should between 1 and"), ("2", "Parameter num_consumer is not int."),
                      (None, "Parameter num_consumer is None.")):
        with pytest.raises(ValueError, match=text):
            FileReader(dataset + "0", bad)
    os.rename(dataset + "0.db", dataset + "0.bak")
    with pytest.raises(RuntimeError, match=f"The input: {dataset}0.db is not exists."):
        FileReader(dataset + "0")
    os.rename(dataset + "0.bak", dataset + "0.db")
    os.remove(dataset + "2.db")                     # a sibling's index is missing
    with pytest.raises(MindRecordFormatError) as info:
        FileReader(dataset + "0")
    assert (f"[ERROR] Invalid file, failed to open mindrecord meta file. Please check whether the meta file: "
            f"{dataset}2.db exists and do not rename the mindrecord file and meta file.") in str(info.value)
    assert info.value.__notes__ == [f"If the data file is intact, rebuild its index with `headrace mindrecord "
                                    f"reindex {dataset}2` or headrace.mindrecord.reindex('{dataset}2')."]


def test_random_access_by_row_id(dataset):
    reader = ShardSetReader([dataset + "0"])
    assert len(reader) == 20 and len(reader.paths) == 3
    dec = ColumnDecoder(reader.schema, ["label", "data"], reader.compressed, flavor="python")
    seq = [dec.decode(*reader.read_records(i), reader.where)[0] for i in range(20)]
    assert sorted(seq) == list(range(20))
    rng = np.random.default_rng(0)
    for i in rng.integers(0, 20, 50).tolist():
        label, data = dec.decode(*reader.read_records(i), reader.where)
        assert label == seq[i] and data == bytes([label]) * (label % 7)
    with pytest.raises(IndexError):
        reader.read_records(20)
    assert reader.where(19)[1] == reader.locate(19)[1]


def test_threads_fork_and_pickle(dataset):
    reader = ShardSetReader([dataset + "0"])
    dec = ColumnDecoder(reader.schema, ["label"], reader.compressed, flavor="python")

    def read(i):
        return dec.decode(*reader.read_records(i), reader.where)[0]
    expected = [read(i) for i in range(20)]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        got = list(pool.map(read, list(range(20)) * 50))
    assert got == expected * 50
    clone = pickle.loads(pickle.dumps(reader))
    assert clone._fds == [] and [dec.decode(*clone.read_records(i), clone.where)[0] for i in range(20)] == expected
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()

    def child():
        queue.put(([read(i) for i in range(20)], reader._pid == os.getpid()))
    proc = ctx.Process(target=child)
    proc.start()
    assert queue.get(timeout=60) == (expected, True)   # the child opened its own descriptors
    proc.join(60)
    assert proc.exitcode == 0
    assert [read(i) for i in range(20)] == expected      # the parent's descriptors still work


def test_moved_directory_still_reads(dataset, tmp_path):
    moved = tmp_path / "elsewhere"
    shutil.copytree(os.path.dirname(dataset), moved)
    shutil.rmtree(os.path.dirname(dataset))
    assert sorted(_labels(FileReader(str(moved / "r.mr2")))) == list(range(20))


def test_reindex_api_and_cli(dataset, capsys):
    expected = _labels(FileReader(dataset + "0"))
    for s in range(3):
        os.remove(dataset + f"{s}.db")
    out = reindex(dataset + "1")
    assert [(os.path.basename(p), n) for p, n in out] == [("r.mr0.db", 7), ("r.mr1.db", 7), ("r.mr2.db", 6)]
    assert _labels(FileReader(dataset + "0")) == expected
    open(dataset + "2.db", "wb").write(b"garbage" * 100)        # damaged index
    with pytest.raises(MindRecordFormatError, match="is damaged or does not belong to this data file"):
        FileReader(dataset + "0")
    assert cli_main(["reindex", "--only", dataset + "2"]) == 0
    assert capsys.readouterr().out == f"{dataset}2.db: 6 rows\n"
    assert _labels(FileReader(dataset + "0")) == expected
    assert cli_main(["reindex", dataset + "0", str(os.path.dirname(dataset)) + "/missing"]) == 1
    captured = capsys.readouterr()
    assert captured.out.count("rows\n") == 3 and "missing" in captured.err
    assert cli_main(["info", dataset + "0"]) == 0
    assert '"rows": 7' in capsys.readouterr().out
    assert cli_main(["bogus"]) == 2


def test_index_of_another_file_is_caught(tmp_path):
    a, b = tmp_path / "a" / "same.mr", tmp_path / "b" / "same.mr"
    a.parent.mkdir()
    b.parent.mkdir()
    write(a, make_rows(5))
    write(b, [dict(r, name="longer name " * 3) for r in make_rows(5)])
    shutil.copy(str(a) + ".db", str(b) + ".db")               # right name, wrong offsets
    with pytest.raises(MindRecordFormatError, match=r"length prefix says \d+ bytes but the index says \d+") as info:
        list(FileReader(str(b)).get_next())
    assert info.value.file == str(b) and info.value.row is not None
    con = sqlite3.connect(str(a) + ".db")
    con.execute("UPDATE SHARD_NAME SET NAME = 'other.mr'")
    con.commit()
    con.close()
    with pytest.raises(MindRecordFormatError, match=r"shard name \[same.mr\] can not match \[other.mr\]"):
        FileReader(str(a))
