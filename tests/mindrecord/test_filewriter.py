"""FileWriter: argument checks, row validation, shards, layout, overwrite, appends and crash safety."""
import os
import re
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from headrace.mindrecord import FileReader, FileWriter, InvalidRowWarning
from headrace.mindrecord._format import store as store_mod
from headrace.mindrecord._format import writer as writer_mod
from headrace.mindrecord._format.header import read_header_path
from headrace.mindrecord.common.exceptions import (MRMAddSchemaError, MRMBuildSchemaError, MRMGetMetaError)

from .conftest import SCHEMA, make_rows, write

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _err(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value).__name__, str(info.value)


def test_constructor_checks():
    assert _err(lambda: FileWriter(None)) == (
        "ParamValueError", "[ParamValueError]: Invalid parameter value. File path is not allowed None or empty!")
    assert _err(lambda: FileWriter(3))[1] == "[ParamValueError]: Invalid parameter value. File path: 3 is not string."
    assert _err(lambda: FileWriter("x/"))[1].endswith("File path can not end with '/'")
    assert _err(lambda: FileWriter("x*y"))[1].endswith("File name should not contains \\/:*?\\\"<>|`&;\\'")
    assert _err(lambda: FileWriter(" xy"))[1].endswith("File name should not start/end with space.")
    assert _err(lambda: FileWriter("x", 0))[1].endswith("Parameter shard_num's value: 0 should between 1 and 1000.")
    assert _err(lambda: FileWriter("x", 1001))[1].endswith("Parameter shard_num's value: 1001 should between 1 and 1000.")
    assert _err(lambda: FileWriter("x", "2"))[1].endswith("Parameter shard_num's type is not int.")
    assert _err(lambda: FileWriter("x", None))[1].endswith("Parameter shard_num is None.")
    assert _err(lambda: FileWriter("x", 1, 1))[1].endswith("Parameter overwrite's type is not bool.")
    with pytest.raises(ValueError):       # also catchable as the built-in kind
        FileWriter("x", 0)


def test_schema_checks():
    w = FileWriter("unused")
    prefix = "[MRMInvalidSchemaError]: Schema format is error. Detail: "
    cases = [({}, "Schema content is empty."), ([1], "Schema content should be dict."),
             ({"a-b": {"type": "int32"}}, "Field 'a-b' should be composed of '0-9' or 'a-z' or 'A-Z' or '_'."),
             ({"a": {"type": "int16"}}, "Field 'a' contain illegal attribute 'int16'."),
             ({"a": "int32"}, "Field 'a' should be dict."), ({"a": {}}, "Field 'a' should be dict."),
             ({"a": {"type": "string", "shape": [1]}}, "Field 'a' contain illegal attribute 'string'."),
             ({"a": {"type": "int32", "shape": (1,)}}, "Field 'a' contain illegal attribute '(1,)'."),
             ({"a": {"type": "int32", "foo": 1}}, "Field '{'type': 'int32', 'foo': 1}' contains illegal attributes.")]
    for content, detail in cases:
        assert _err(lambda: w.add_schema(content)) == ("MRMInvalidSchemaError", prefix + detail)
    for shape in ([-1, -1], [0], [-2], ["a"], [2.0]):
        with pytest.raises(MRMBuildSchemaError):
            w.add_schema({"a": {"type": "int32", "shape": shape}})
    with pytest.raises(TypeError):
        w.add_schema({"a": {"type": "int32"}}, 5)
    w.add_schema({"a": {"type": "int32"}})
    assert _err(lambda: w.add_schema({"a": {"type": "int32"}})) == ("MRMAddSchemaError", "[MRMAddSchemaError]: Failed to add schema.")


def test_index_checks():
    w = FileWriter("unused")
    with pytest.raises(MRMGetMetaError):
        w.add_index(["a"])
    w.add_schema({"a": {"type": "int32"}, "b": {"type": "bytes"}})
    assert _err(lambda: w.add_index(["b"]))[1] == (
        "[MRMDefineIndexError]: Failed to define index field. Detail: Failed to set field b since it's not primitive type.")
    for bad in ("a", []):
        assert _err(lambda: w.add_index(bad))[1] == "[ParamTypeError]: Invalid parameter type. 'index_fields' expect list type."
    assert _err(lambda: w.add_index([1]))[1] == "[ParamTypeError]: Invalid parameter type. 'index field' expect str type."
    name, text = _err(lambda: w.add_index(["zz"]))
    assert name == "MindRecordRuntimeError" and "[ERROR] Invalid input, 'index_fields': zz can not found in schema: " \
        '{"a":{"type":"int32"},"b":{"type":"bytes"}}.\n Please use \'add_index\' function to add proper \'index_fields\'.' in text
    w.add_index(["a"])
    assert "[ERROR] The 'index_fields': a is added repeatedly. Please remove the redundant 'add_index' function." in \
        _err(lambda: w.add_index(["a"]))[1]


def test_size_checks():
    w = FileWriter("unused")
    assert "[ERROR] Invalid data, page size: 32767 should be in range [32768 bytes, 268435456 bytes]." in _err(lambda: w.set_page_size(32767))[1]
    assert "[ERROR] Invalid data, page size 32770 should be divided by four." in _err(lambda: w.set_page_size(32770))[1]
    assert "[ERROR] Invalid data, header size: 16383 should be in range [16384 bytes, 134217728 bytes]." in _err(lambda: w.set_header_size(16383))[1]
    assert "[ERROR] Invalid data, header size 16386 should be divided by four." in _err(lambda: w.set_header_size(16386))[1]
    with pytest.raises(TypeError):
        w.set_page_size("a")
    with pytest.raises(RuntimeError):
        w.set_header_size((1 << 27) + 4)


def test_write_checks(tmp_path):
    w = FileWriter(str(tmp_path / "w.mr"))
    assert "[ERROR] Invalid data, schema is not found in header, please use 'add_schema'" in _err(lambda: w.commit())[1]
    w.add_schema({"a": {"type": "int32"}, "b": {"type": "bytes"}})
    assert _err(lambda: w.write_raw_data({"a": 1}))[1] == "[ParamTypeError]: Invalid parameter type. 'raw_data' expect list type."
    assert _err(lambda: w.write_raw_data([1]))[1] == "[ParamTypeError]: Invalid parameter type. 'raw_data item' expect dict type."
    no_valid = ("There is no valid data which can be written by 'write_raw_data' to mindrecord file. Please check the "
                "abnormal input data indicated in the warning log above.")
    assert _err(lambda: w.write_raw_data([])) == ("RuntimeError", no_valid)
    assert _err(lambda: w.write_raw_data([{"a": 1, "b": b"x"}], 1)) == ("TypeError", "The parameter `parallel_writer` must be bool.")
    w.write_raw_data([{"a": 1, "b": b"x"}])
    assert _err(lambda: w.write_raw_data([{"a": 1, "b": b"x"}], True)) == (
        "RuntimeError", "The parameter `parallel_writer` must be consistent during use.")
    w.commit()
    assert _err(lambda: w.write_raw_data([{"a": 1, "b": b"x"}]))[1].startswith(
        "Not allowed to call `write_raw_data` on flushed MindRecord files.When creating new MindRecord files")
    with pytest.raises(RuntimeError, match="already committed"):
        w.commit()


def test_rows_dropped_with_mindspore_warnings(tmp_path, mr_logs):
    schema = {"f": {"type": "float32"}, "g": {"type": "float64"}, "s": {"type": "string"}, "i": {"type": "int64"},
              "j": {"type": "int32"}, "arr": {"type": "float32", "shape": [2, 2]}}
    ok = {"f": 1.0, "g": 1.0, "s": "a", "i": 1, "j": 1, "arr": np.zeros((2, 2), np.float32)}
    bad = [dict(ok, f=1), dict(ok, g=np.float32(1.0)), dict(ok, s=b"a"), dict(ok, i=1.0),
           dict(ok, arr=np.zeros((2, 2), np.float64)), dict(ok, arr=np.zeros(3, np.float32)), dict(ok, arr=[1.0] * 4),
           dict(ok, f=np.float64(2.5)), dict(ok, i=None), dict(ok, s=np.str_("a")), {k: v for k, v in ok.items() if k != "g"},
           dict(ok, j=True), dict(ok, j=2**31), dict(ok, i=-(2**63) - 1), dict(ok, j=np.int64(1))]
    good = [ok, dict(ok, arr=np.zeros((1, 4), np.float32)), dict(ok, i=np.int64(7), j=np.int32(3), f=np.float32(0.5))]
    w = FileWriter(str(tmp_path / "v.mr"))
    w.add_schema(schema)
    rows = bad + good
    with pytest.warns(InvalidRowWarning, match="FileWriter dropped 15 of 18 rows"):
        w.write_raw_data(rows)
    w.commit()
    assert len(rows) == len(bad) + len(good)      # the caller's list is left alone
    msgs = [r.getMessage() for r in mr_logs.records]
    assert msgs == list(reversed([
        "for schema, 0 th data is wrong, data type: 'float32' for field: 'f' is not matched.",
        "for schema, 1 th data is wrong, data type: 'float64' for field: 'g' is not matched.",
        "for schema, 2 th data is wrong, data type: 'string' for field: 's' is not matched.",
        "for schema, 3 th data is wrong, data type: 'int64' for field: 'i' is not matched.",
        "for schema, 4 th data is wrong, data type: 'float64' for field: 'arr' is not matched.",
        "for schema, 5 th data is wrong, data shape: '(3,)' for field: 'arr' is not matched.",
        "for schema, 6 th data is wrong, data type: 'list' for field: 'arr' is not matched.",
        "for schema, 7 th data is wrong, data type: 'float32' for field: 'f' is not matched.",
        "for schema, 8 th data is wrong, data type: 'NoneType' for field: 'i' is not matched.",
        "for schema, 9 th data is wrong, data type: 'str_' for field: 's' is not matched.",
        "for schema, 10 th data is wrong, there is not field: 'g' in the raw data.",
        "for schema, 11 th data is wrong, data type: 'bool' for field: 'j' is not matched.",
        "for schema, 12 th data is wrong, data value: 2147483648 for field: 'j' is out of the range of int32.",
        "for schema, 13 th data is wrong, data value: -9223372036854775809 for field: 'i' is out of the range of int64.",
        "for schema, 14 th data is wrong, data type: 'int32' for field: 'j' is not matched.",
    ]))
    out = list(FileReader(str(tmp_path / "v.mr")).get_next())
    assert [(r["f"], r["i"], r["j"], r["arr"].shape) for r in out] == [(1, 1, 1, (2, 2)), (1, 1, 1, (2, 2)), (0.5, 7, 3, (2, 2))]


def test_existing_files_refused_then_overwritten(tmp_path):
    path = tmp_path / "x.mr"
    write(path, make_rows(3))
    for leftover in (str(path), str(path) + ".db"):
        w = FileWriter(str(path))
        w.add_schema(SCHEMA)
        text = _err(lambda: w.write_raw_data(make_rows(1)))[1]
        assert (f"[ERROR] Invalid file, mindrecord files already exist. Please check file path: {path}.\nIf you do not "
                f"want to keep the files, set the 'overwrite' parameter to True and try again.") in text
        os.remove(leftover)
    write(path, make_rows(3))
    w = FileWriter(str(path), overwrite=True)
    w.add_schema(SCHEMA)
    w.write_raw_data(make_rows(5, start=10))
    # until commit the old dataset is intact and readable
    assert [r["label"] for r in FileReader(str(path)).get_next()] == [0, 1, 2]
    w.commit()
    assert [r["label"] for r in FileReader(str(path)).get_next()] == [10, 11, 12, 13, 14]
    assert sorted(os.listdir(tmp_path)) == ["x.mr", "x.mr.db"]


def test_overwrite_removes_stale_shards_only_of_the_same_name(tmp_path, caplog):
    base = tmp_path / "set.mr"
    write(base, make_rows(10), shard_num=3)
    write(tmp_path / "set.mr7", make_rows(2))          # an unrelated single-file dataset with a similar name
    assert sorted(os.listdir(tmp_path)) == ["set.mr0", "set.mr0.db", "set.mr1", "set.mr1.db", "set.mr2", "set.mr2.db",
                                            "set.mr7", "set.mr7.db"]
    os.unlink(tmp_path / "set.mr2.db")                 # a stale shard whose index is gone already
    with caplog.at_level("WARNING", logger="headrace.mindrecord"):
        write(base, make_rows(4), shard_num=2, overwrite=True)
    assert sorted(os.listdir(tmp_path)) == ["set.mr0", "set.mr0.db", "set.mr1", "set.mr1.db", "set.mr7", "set.mr7.db"]
    # each file removed is named once; the missing .db is not
    assert [r.getMessage() for r in caplog.records if "stale" in r.getMessage()] == [
        f"Removed stale mindrecord file of the overwritten dataset: {tmp_path / 'set.mr2'}"]
    assert [r["label"] for r in FileReader(str(tmp_path / "set.mr0")).get_next()] == [0, 1, 2, 3]
    write(base, make_rows(2), overwrite=True)
    assert sorted(os.listdir(tmp_path)) == ["set.mr", "set.mr.db", "set.mr7", "set.mr7.db"]


def test_shard_names_and_distribution(tmp_path):
    w = write(tmp_path / "big.mr", make_rows(12), shard_num=11)
    names = sorted(n for n in os.listdir(tmp_path) if not n.endswith(".db"))
    assert names == [f"big.mr{i:02d}" for i in range(11)]
    h = read_header_path(str(tmp_path / "big.mr03"))
    assert h.shard_addresses == names and h.shard_id == 3
    assert [read_header_path(str(tmp_path / n)).num_rows for n in names] == [2] + [1] * 10
    # rows of each call are split in contiguous runs; the extra rows rotate over the shards
    path = tmp_path / "d.mr"
    w = FileWriter(str(path), 3)
    w.add_schema({"a": {"type": "int32"}})
    for k in range(3):
        w.write_raw_data([{"a": 10 * k + j} for j in range(4)])
    w.commit()
    per_shard = [[r["a"] for r in FileReader([str(path) + str(s)]).get_next()] for s in range(3)]
    assert per_shard == [[0, 1, 10, 20], [2, 11, 12, 21], [3, 13, 22, 23]]
    assert [r["a"] for r in FileReader(str(path) + "2").get_next()] == sum(per_shard, [])
    # parallel_writer: every call goes to one shard, shard after shard
    w = FileWriter(str(tmp_path / "p.mr"), 3)
    w.add_schema({"a": {"type": "int32"}})
    for k in range(5):
        w.write_raw_data([{"a": 10 * k + j} for j in range(2)], True)
    w.commit()
    assert [[r["a"] for r in FileReader([str(tmp_path / f"p.mr{s}")]).get_next()] for s in range(3)] == \
        [[0, 1, 30, 31], [10, 11, 40, 41], [20, 21]]


def test_row_larger_than_page_grows_the_page(tmp_path, mr_logs):
    path = tmp_path / "big_row.mr"
    rows = [{"b": b"a" * 10}, {"b": os.urandom(100_000)}, {"b": b"z"}]
    write(path, rows, schema={"b": {"type": "bytes"}}, page_size=1 << 15, header_size=1 << 14)
    h = read_header_path(str(path))
    assert h.page_size == 131072
    assert [r["b"] for r in FileReader(str(path)).get_next()] == [r["b"] for r in rows]
    assert "A row of 100008 bytes does not fit in pages of 32768 bytes; using pages of 131072 bytes." in mr_logs.text


def test_growth_with_pages_already_on_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(writer_mod, "MEMORY_LIMIT", 1)      # every write goes to a file
    path = tmp_path / "disk.mr"
    w = FileWriter(str(path))
    w.add_schema({"b": {"type": "bytes"}, "i": {"type": "int32"}})
    w.set_page_size(1 << 15)
    first = [{"b": os.urandom(9000), "i": i} for i in range(20)]
    w.write_raw_data(first)
    late = [{"b": os.urandom(70000), "i": 99}]
    w.write_raw_data(late)
    w.commit()
    assert [(r["b"], r["i"]) for r in FileReader(str(path)).get_next()] == [(r["b"], r["i"]) for r in first + late]


def test_header_outgrowing_its_size_moves_the_pages(tmp_path, monkeypatch, mr_logs):
    monkeypatch.setattr(writer_mod, "MEMORY_LIMIT", 1)
    path = tmp_path / "h.mr"
    rows = [{"b": bytes([i]) * 20000} for i in range(120)]     # one row per 32 KiB page: 120 pages
    write(path, rows, schema={"b": {"type": "bytes"}}, page_size=1 << 15, header_size=1 << 14)
    h = read_header_path(str(path))
    assert h.header_size == 1 << 20 and len(h.pages) == 121
    assert [r["b"] for r in FileReader(str(path)).get_next()] == [r["b"] for r in rows]
    assert "more than the header size 16384; using a larger header size" in mr_logs.text


@pytest.mark.parametrize("limit", [1, 64 << 20])
def test_memory_and_file_paths_write_the_same_bytes(tmp_path, monkeypatch, limit):
    monkeypatch.setattr(writer_mod, "MEMORY_LIMIT", limit)
    rng = np.random.default_rng(5)
    batches = [[{"label": int(rng.integers(100)), "name": "x" * int(rng.integers(0, 3000)),
                 "data": bytes(int(rng.integers(0, 20000))), "vec": rng.integers(-500, 500, 7),
                 "mat": np.ones((2, 3), np.float32)} for _ in range(int(rng.integers(1, 30)))] for _ in range(4)]
    w = FileWriter(str(tmp_path / f"m{limit}.mr"))
    w.add_schema(SCHEMA)
    w.set_page_size(1 << 15)
    w.set_header_size(1 << 14)
    for b in batches:
        w.write_raw_data(b)
    w.commit()
    digest = open(tmp_path / f"m{limit}.mr", "rb").read()
    ref = tmp_path / "ref.bin"
    if ref.exists():
        assert digest == ref.read_bytes()
    ref.write_bytes(digest)
    n = sum(len(b) for b in batches)
    assert FileReader(str(tmp_path / f"m{limit}.mr")).len() == n


def test_append(tmp_path):
    path = tmp_path / "a.mr"
    write(path, make_rows(3), shard_num=2)
    w = FileWriter.open_for_append(str(path) + "1")
    w.write_raw_data(make_rows(3, start=3))
    w.commit()
    labels = [r["label"] for r in FileReader(str(path) + "0").get_next()]
    assert sorted(labels) == [0, 1, 2, 3, 4, 5]
    # an append writer may write again after commit; a new writer may not
    w.write_raw_data(make_rows(1, start=6))
    w.commit()
    assert FileReader(str(path) + "0").len() == 7
    with pytest.raises(RuntimeError, match="The input: .*nope is not exists."):
        FileWriter.open_for_append(str(tmp_path / "nope"))
    with pytest.raises(MRMAddSchemaError):
        FileWriter.open_for_append(str(path) + "0").add_schema({"a": {"type": "int32"}})


def test_append_rebuilds_a_missing_index(tmp_path):
    path = tmp_path / "noidx.mr"
    write(path, make_rows(4))
    os.remove(str(path) + ".db")
    w = FileWriter.open_for_append(str(path))
    w.write_raw_data(make_rows(2, start=4))
    w.commit()
    assert [r["name"] for r in FileReader(str(path)).get_next()] == [f"n{i}" for i in range(6)]


def test_unicode_paths(tmp_path):
    d = tmp_path / "données 数据"
    d.mkdir()
    path = d / "集合é.mindrecord"
    write(path, make_rows(4), shard_num=2)
    assert read_header_path(str(path) + "1").shard_addresses == ["集合é.mindrecord0", "集合é.mindrecord1"]
    assert sorted(r["label"] for r in FileReader(str(path) + "0").get_next()) == [0, 1, 2, 3]


_CRASH = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {root!r})
    import numpy as np
    from headrace.mindrecord import FileWriter
    from headrace.mindrecord._format import writer
    writer.MEMORY_LIMIT = {limit}
    w = FileWriter({path!r}, 2, overwrite=True)
    w.add_schema({{"b": {{"type": "bytes"}}}})
    w.write_raw_data([{{"b": os.urandom(5000)}} for _ in range(50)])
    os.kill(os.getpid(), 9)
""")


@pytest.mark.parametrize("limit", [1, 1 << 30])
def test_writer_killed_before_commit_leaves_nothing_that_looks_valid(tmp_path, limit):
    path = str(tmp_path / "crash.mr")
    write(path, make_rows(3))                                   # an old dataset of the same name
    proc = subprocess.run([sys.executable, "-c", _CRASH.format(root=ROOT, path=path, limit=limit)])
    assert proc.returncode == -signal.SIGKILL
    names = sorted(os.listdir(tmp_path))
    assert [n for n in names if not n.startswith(".")] == ["crash.mr", "crash.mr.db"]
    # temporary files, and the lock files of the writer (unlocked: the kernel dropped its locks)
    hidden = [n for n in names if n.startswith(".")]
    assert all(re.fullmatch(r"\.crash\.mr[01]\.\d+\.[0-9a-f]{8}\.hrtmp", n) for n in hidden if "hrtmp" in n)
    assert [n for n in hidden if "hrtmp" not in n] == [".crash.mr0.hrlock", ".crash.mr1.hrlock"]
    assert [r["label"] for r in FileReader(path).get_next()] == [0, 1, 2]     # the old dataset is untouched
    write(path, make_rows(2), shard_num=2, overwrite=True)                   # the next writer cleans up
    assert sorted(os.listdir(tmp_path)) == ["crash.mr0", "crash.mr0.db", "crash.mr1", "crash.mr1.db"]


def test_abandoned_writer_removes_its_temporary_files(tmp_path, monkeypatch):
    monkeypatch.setattr(writer_mod, "MEMORY_LIMIT", 1)
    w = FileWriter(str(tmp_path / "gone.mr"))
    w.add_schema({"a": {"type": "int32"}})
    w.write_raw_data([{"a": 1}])
    names = sorted(os.listdir(tmp_path))
    assert len(names) == 2 and names[0].endswith(".hrtmp") and names[1] == ".gone.mr.hrlock"
    del w
    assert os.listdir(tmp_path) == []


def test_save_schema_mapping():
    from headrace.mindrecord._format.encode import save_row, save_schema
    cols = ["i8", "u32", "f16", "u8a", "f64m", "s", "b", "bo", "one"]
    row = [np.array(1, np.int8), np.array(7, np.uint32), np.array(1.5, np.float16), np.array([1, 2], np.uint8),
           np.ones((2, 3)), np.array("s0"), np.array(b"b\x00"), np.array(True), np.ones((1,), np.int64)]
    schema, index = save_schema(cols, row)
    assert schema == {"i8": {"type": "int32"}, "u32": {"type": "int64"}, "f16": {"type": "float32"},
                      "u8a": {"type": "int32", "shape": [-1]}, "f64m": {"type": "float64", "shape": [-1, 3]},
                      "s": {"type": "string"}, "b": {"type": "bytes"}, "bo": {"type": "int32"},
                      "one": {"type": "int64", "shape": [-1]}}
    assert index == ["i8", "u32", "f16", "s", "bo"]
    out = save_row(schema, cols, row)
    # NumPy 'S' scalars drop trailing NULs; MindSpore's save stores b"b" for this value too
    assert out["b"] == b"b" and out["bo"] == 1 and out["u8a"].dtype == np.int32 and out["f16"] == 1.5
    with pytest.raises(ValueError, match="multi-dimensional bytes cannot be converted to MindRecord"):
        save_schema(["x"], [np.array([b"a", b"b"])])
    # a bytes field as MindDataset yields it (shape (1,), NULs kept) is saved as bytes, as MindSpore does
    one = [np.array([b"ab\x00"])]
    assert save_schema(["b"], one) == ({"b": {"type": "bytes"}}, [])
    assert save_row({"b": {"type": "bytes"}}, ["b"], one) == {"b": b"ab\x00"}
    with pytest.raises(ValueError, match=r"multi-dimensional string cannot be converted .* shape \(1,\)"):
        save_schema(["s"], [np.array(["a"])])


def test_file_store_writes_in_chunks_and_finishes_short_writes(tmp_path, monkeypatch):
    """Big batches are written in calls of at most _WRITE_CHUNK bytes / _IOV_MAX buffers; a short
    pwritev is finished with pwrite."""
    monkeypatch.setattr(store_mod, "_WRITE_CHUNK", 1000)
    monkeypatch.setattr(store_mod, "_IOV_MAX", 3)
    calls = []
    real = os.pwritev

    def half(fd, bufs, pos):
        calls.append(sum(len(b) for b in bufs))
        data = b"".join(bytes(b) for b in bufs)
        return real(fd, [data[:max(1, len(data) // 2)]], pos)

    monkeypatch.setattr(store_mod.os, "pwritev", half)
    fd = os.open(tmp_path / "s.bin", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        store = store_mod._FileStore(fd, str(tmp_path / "s.bin"), 16, 1 << 20)
        bufs = [bytes([k]) * (k * 37 % 900 + 1) for k in range(60)] + [memoryview(b"tail" * 300)]
        store.write(0, 5, bufs)
    finally:
        os.close(fd)
    want = b"".join(bytes(b) for b in bufs)
    assert (tmp_path / "s.bin").read_bytes() == b"\0" * 21 + want
    assert max(calls) < 1000 + 900 + 1200 and len(calls) > 20


def test_batch_past_the_memory_limit_goes_straight_to_files(tmp_path, monkeypatch):
    """A batch that takes the buffer past MEMORY_LIMIT is written to files at once: same bytes as
    a writer that goes to files from the start."""
    rows = [{"label": i, "name": f"n{i}", "data": bytes([i % 251]) * (3000 + 7 * i), "vec": np.arange(i % 5),
             "mat": np.ones((2, 3), np.float32)} for i in range(40)]
    out = {}
    buffered = []
    real = writer_mod._MemoryStore.write

    def spy(self, page_id, offset, bufs):
        bufs = list(bufs)
        buffered.append(sum(len(b) if not isinstance(b, memoryview) else b.nbytes for b in bufs))
        return real(self, page_id, offset, bufs)

    monkeypatch.setattr(writer_mod._MemoryStore, "write", spy)
    for limit in (1, 50_000, 64 << 20):
        monkeypatch.setattr(writer_mod, "MEMORY_LIMIT", limit)
        buffered.clear()
        (tmp_path / str(limit)).mkdir()
        path = tmp_path / str(limit) / "l.mr"          # same name: the header lists it
        w = FileWriter(str(path))
        w.add_schema(SCHEMA)
        w.set_page_size(1 << 15)
        w.set_header_size(1 << 14)
        w.write_raw_data(rows[:3])          # stays in memory unless the limit is 1
        w.write_raw_data(rows[3:])          # crosses 50,000 bytes
        w.commit()
        out[limit] = path.read_bytes()
        if limit == 50_000:         # only the first three rows were ever buffered in memory
            assert 0 < sum(buffered) < 3 * 4000
    assert out[1] == out[50_000] == out[64 << 20]
    assert [r["label"] for r in FileReader(str(tmp_path / "50000" / "l.mr")).get_next()] == list(range(40))


def test_save_refuses_a_shape_change_beyond_dimension_0(tmp_path, monkeypatch):
    import gc

    import headrace.dataset as ds
    from headrace.mindrecord import _save

    monkeypatch.setattr(_save, "_CHUNK", 2)     # some rows are already written when the bad one comes

    def gen():
        for i in range(10):
            yield (np.arange(5).reshape([5, 1]),) if i < 5 else (np.arange(10).reshape([5, 2]),)

    path = str(tmp_path / "x.mr")
    with pytest.raises(RuntimeError) as err:
        ds.GeneratorDataset(gen, ["data"], shuffle=False).save(path)
    assert str(err.value) == (
        "Tensor with dynamic shape do not currently support saving. Except for the shape of dimension 0, the other "
        "dimension shapes must be fixed. You can reshape the Tensor to a fixed shape before saving. Column 'data' "
        f"has shape (5, 2) here, but (-1, 1) (-1: any) in the first row. Row 5 of the dataset saved to {path}.")
    del err
    gc.collect()
    assert os.listdir(tmp_path) == []


def test_save_casts_column_names_as_mindspore(tmp_path):
    import headrace.dataset as ds
    from headrace.mindrecord import FileReader
    from headrace.mindrecord._save import save_name

    assert save_name("image/class.label-x y_z") == "image_class_label_x_y_z"
    data = ds.NumpySlicesDataset({"image/class/label": [1, 2], "a b": ["x", "y"]}, shuffle=False)
    data.save(str(tmp_path / "n.mr"))
    assert [sorted(r.items()) for r in FileReader(str(tmp_path / "n.mr")).get_next()] == [
        [("a_b", "x"), ("image_class_label", 1)], [("a_b", "y"), ("image_class_label", 2)]]
    clash = ds.NumpySlicesDataset({"a.b": [1], "a/b": [2]}, shuffle=False)
    with pytest.raises(ValueError, match=r"give the MindRecord field names \['a_b', 'a_b'\] \(punctuation and "
                                         r"spaces become '_'\), which are not unique"):
        clash.save(str(tmp_path / "c.mr"))
