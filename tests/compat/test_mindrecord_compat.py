"""MindRecord against MindSpore 2.10, both directions.

One oracle run (module fixture) makes MindSpore 2.10 (a) write every dataset spec below, (b) read
its own files and the files headrace wrote (FileReader, MindDataset, MindPage), (c) write the
fixed-size specs again for byte comparison, and (d) append to a headrace file. The tests then
compare, value by value (types, dtypes, shapes, order), and byte by byte where the layout is fixed.
"""
from __future__ import annotations

import os
import sqlite3

import numpy as np
import pytest

from headrace.dataset._sources.mindrecord import MindDataset
from headrace.mindrecord import FileReader, FileWriter, MindPage
from tests.oracles.oracle import run_ms
from tests.oracles.oracle_codec import OracleException

pytestmark = pytest.mark.compat

ALL = {"i32": {"type": "int32"}, "i64": {"type": "int64"}, "f32": {"type": "float32"}, "f64": {"type": "float64"},
       "s": {"type": "string"}, "b": {"type": "bytes"}, "ai": {"type": "int32", "shape": [-1]},
       "al": {"type": "int64", "shape": [2, -1]}, "af": {"type": "float32", "shape": [-1]},
       "ad": {"type": "float64", "shape": [1, 2]}}


def _all_rows(n, start=0):
    return [{"i32": -k if k % 2 else k * 1000, "i64": (1 << 40) + k, "f32": 0.5 * k, "f64": 0.1 * k,
             "s": f"é{k}" * (k + 1), "b": bytes(range(k, 3 * k + 1)) + b"\x00",
             "ai": np.array([1, -2, 300, -70000, k][:k % 5 + 1], np.int32),
             "al": np.arange(2 * (k % 3 + 1), dtype=np.int64).reshape(2, -1) * (1 << (8 * (k % 5))),
             "af": np.linspace(0, 1, k % 4 + 1, dtype=np.float32), "ad": np.array([[k, -0.25]])}
            for k in range(start, start + n)]


def _page_rows(n, seed, multi):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        row = {"label": int(rng.integers(-1000, 1 << 40)), "s": "x" * int(rng.choice([1, 40, 3000, 9000])),
               "ids": rng.integers(-70000, 70000, int(rng.integers(1, 3000))).astype(np.int64)}
        if multi:
            row["data"] = bytes(rng.integers(0, 256, int(rng.choice([5, 900, 9000, 20000])), dtype=np.uint8))
        out.append(row)
    return out


def _specs():
    """Dataset specs: name -> how to write it (both systems follow the same recipe)."""
    small = {"page_size": 1 << 15, "header_size": 1 << 14}
    pages_multi = {"label": {"type": "int64"}, "s": {"type": "string"}, "ids": {"type": "int64", "shape": [-1]},
                   "data": {"type": "bytes"}}
    pages_single = {k: v for k, v in pages_multi.items() if k != "data"}
    return {
        "all": dict(schema=ALL, desc="all types", batches=[_all_rows(4), _all_rows(3, 4)]),
        "shards": dict(schema={"label": {"type": "int64"}, "img": {"type": "bytes"}, "ids": {"type": "int32", "shape": [-1]}},
                       shard_num=3, index=["label"],
                       batches=[[{"label": i, "img": bytes([i]) * i, "ids": np.arange(i % 4 + 1, dtype=np.int32)}
                                 for i in range(j, j + 5)] for j in (0, 5)],
                       append=[[{"label": 100 + i, "img": b"a", "ids": np.array([i], np.int32)} for i in range(4)]]),
        "pages1": dict(schema=pages_single, batches=[_page_rows(20, s, False) for s in (1, 2, 3)], **small),
        "pages2": dict(schema=pages_multi, batches=[_page_rows(15, s, True) for s in (4, 5)],
                       append=[_page_rows(12, 6, True)], **small),
        "rawonly": dict(schema={"a": {"type": "int32"}, "s": {"type": "string"}},
                        batches=[[{"a": i, "s": f"s{i % 3}"} for i in range(6)]], **small),
        "blobonly": dict(schema={"b": {"type": "bytes"}, "v": {"type": "float64", "shape": [2, -1]}},
                         batches=[[{"b": bytes([i]) * 3, "v": np.full((2, i + 1), i / 3)} for i in range(4)]], **small),
        "allfixed": dict(schema=ALL, desc="all types", batches=[_all_rows(5)], append=[_all_rows(2, 5)], **small),
        "empty": dict(schema={"a": {"type": "int32"}}, batches=[]),
        "unicodé 数据": dict(schema={"x": {"type": "int64"}, "t": {"type": "string"}}, shard_num=2,
                           batches=[[{"x": i, "t": "ü" * i} for i in range(5)]]),
    }


FIXED = ["pages1", "pages2", "rawonly", "blobonly", "allfixed"]


# Writes a dataset from its spec; the same text runs under MindSpore (in ORACLE) and here, with
# FileWriter bound to each library's.
WRITE = r"""
def first_file(path, spec):
    return path if spec.get("shard_num", 1) == 1 else path + "0"

def write(path, spec):
    w = FileWriter(path, spec.get("shard_num", 1), overwrite=True)
    w.add_schema(spec["schema"], spec.get("desc"))
    if spec.get("index"):
        w.add_index(spec["index"])
    if spec.get("page_size"):
        w.set_page_size(spec["page_size"]); w.set_header_size(spec["header_size"])
    for b in spec["batches"]:
        w.write_raw_data(list(b))
    w.commit()
    for b in spec.get("append", []):
        w = FileWriter.open_for_append(first_file(path, spec)); w.write_raw_data(list(b)); w.commit()
"""
_LOCAL = {"FileWriter": FileWriter}
exec(WRITE, _LOCAL)
_write_headrace, _first = _LOCAL["write"], _LOCAL["first_file"]


ORACLE = r"""
import os, json, shutil, sqlite3
from mindspore.mindrecord import FileWriter, FileReader, MindPage
""" + WRITE + r"""

def read(path, columns=None):
    out = {}
    def fr():
        r = FileReader(path, columns=columns); rows = list(r.get_next()); n = r.len(); sch = r.schema(); r.close()
        return {"rows": [list(x.items()) for x in rows], "len": n, "schema": sch}
    out["fr"] = catch(fr)
    def md():
        d = ds.MindDataset(path, columns_list=columns, shuffle=False)
        return {"cols": d.get_col_names(), "size": d.get_dataset_size(),
                "rows": [list(t) for t in d.create_tuple_iterator(output_numpy=True, num_epochs=1)]}
    out["md"] = catch(md)
    return out

def page(path, field, name):
    mp = MindPage(path); mp.category_field = field
    return {"cand": mp.candidate_fields, "info": mp.read_category_info(),
            "by_id": [list(x.items()) for x in mp.read_at_page_by_id(1, 0, 3)],
            "by_name": [list(x.items()) for x in mp.read_at_page_by_name(name, 0, 5)]}

R = {"ms": {}, "hr": {}, "pages": {}}
specs = INPUTS["specs"]
for name, spec in specs.items():
    path = os.path.join(INPUTS["ms_dir"], name)
    e = catch(lambda: write(path, spec))
    R["ms"][name] = {"write_error": e if isinstance(e, Exception) else None}
for name, spec in specs.items():
    first = lambda d: os.path.join(d, name) + ("" if spec.get("shard_num", 1) == 1 else "0")
    R["ms"][name]["read"] = read(first(INPUTS["ms_dir"]))
    R["hr"][name] = read(first(INPUTS["hr_dir"]))
    if spec.get("columns"):
        R["hr"][name + "/cols"] = read(first(INPUTS["hr_dir"]), spec["columns"])
for d in ("ms_dir", "hr_dir"):
    R["pages"][d] = {"shards": catch(lambda: page(os.path.join(INPUTS[d], "shards0"), "label", "3")),
                     "rawonly": catch(lambda: page(os.path.join(INPUTS[d], "rawonly"), "s", "s1"))}
# MindSpore appends to a copy of a headrace dataset (auto layout) and reads the result
app = INPUTS["append_path"]
def ms_append():
    w = FileWriter.open_for_append(app); w.write_raw_data(list(INPUTS["append_rows"])); w.commit()
    return read(app)
R["ms_append"] = catch(ms_append)
R["mixed_list"] = read([os.path.join(INPUTS["hr_dir"], "pages2"), os.path.join(INPUTS["ms_dir"], "pages2")])
R["mixed_auto"] = read([os.path.join(INPUTS["hr_dir"], "shards2"), os.path.join(INPUTS["ms_dir"], "shards0")])
RESULT = R
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("mrcompat")
    ms_dir, hr_dir, app_dir = root / "ms", root / "hr", root / "app"
    for d in (ms_dir, hr_dir, app_dir):
        d.mkdir()
    specs = _specs()
    specs["all"]["columns"] = ["s", "ad", "i32", "b"]
    for name, spec in specs.items():
        _write_headrace(str(hr_dir / name), spec)
    # a headrace dataset that MindSpore appends to (auto layout: tight header and pages)
    _write_headrace(str(app_dir / "app.mr"), dict(schema=ALL, batches=[_all_rows(3)]))
    inputs = {"specs": specs, "ms_dir": str(ms_dir), "hr_dir": str(hr_dir), "append_path": str(app_dir / "app.mr"),
              "append_rows": _all_rows(40, 3)}
    result = run_ms(ORACLE, inputs)
    return {"specs": specs, "ms": ms_dir, "hr": hr_dir, "app": app_dir / "app.mr", "r": result}


# ------------------------------------------------------------------------------------------ helpers

def _same(a, b, where=""):
    """Exact equality with NumPy dtypes and shapes; Python int/float/str/bytes must match in type."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), where
        assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        if a.dtype.kind == "S":
            assert a.tobytes() == b.tobytes(), where
        else:
            assert np.array_equal(a, b), f"{where}: {a!r} vs {b!r}"
        return
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), f"{where}: {a!r} vs {b!r}"
        for k, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{k}]")
        return
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), f"{where}: keys {list(a)} vs {list(b)}"
        for k in a:
            _same(a[k], b[k], f"{where}.{k}")
        return
    assert type(a) is type(b) and a == b, f"{where}: {a!r} ({type(a).__name__}) vs {b!r} ({type(b).__name__})"


def _hr_read(path, columns=None):
    r = FileReader(path, columns=columns)
    out = {"rows": [list(x.items()) for x in r.get_next()], "len": r.len(), "schema": r.schema()}
    r.close()
    d = MindDataset(path, columns_list=columns, shuffle=False)
    md = {"cols": d.get_col_names(), "size": d.get_dataset_size(),
          "rows": [list(t) for t in d.create_tuple_iterator(output_numpy=True, num_epochs=1)]}
    return {"fr": out, "md": md}


def _assert_reads_equal(ours, theirs, where):
    assert not isinstance(theirs["fr"], OracleException), f"{where}: MindSpore FileReader failed: {theirs['fr']}"
    assert not isinstance(theirs["md"], OracleException), f"{where}: MindSpore MindDataset failed: {theirs['md']}"
    _same(ours["fr"]["rows"], theirs["fr"]["rows"], f"{where} FileReader rows")
    assert ours["fr"]["len"] == theirs["fr"]["len"] and ours["fr"]["schema"] == theirs["fr"]["schema"], where
    assert ours["md"]["cols"] == theirs["md"]["cols"] and ours["md"]["size"] == theirs["md"]["size"], where
    _same(ours["md"]["rows"], theirs["md"]["rows"], f"{where} MindDataset rows")


NAMES = list(_specs())


# ------------------------------------------------------------------------------------------ tests

def test_mindspore_wrote_every_spec(world):
    for name in NAMES:
        assert world["r"]["ms"][name]["write_error"] is None, (name, world["r"]["ms"][name]["write_error"])


@pytest.mark.parametrize("name", NAMES)
def test_headrace_reads_mindspore_files_like_mindspore(world, name):
    spec = world["specs"][name]
    ours = _hr_read(_first(str(world["ms"] / name), spec))
    _assert_reads_equal(ours, world["r"]["ms"][name]["read"], f"ms/{name}")


@pytest.mark.parametrize("name", NAMES)
def test_mindspore_reads_headrace_files_like_headrace(world, name):
    spec = world["specs"][name]
    path = _first(str(world["hr"] / name), spec)
    ours = _hr_read(path)
    _assert_reads_equal(ours, world["r"]["hr"][name], f"hr/{name}")
    # and the values are the rows that were written (row order within shards aside)
    n = sum(len(b) for b in spec["batches"] + spec.get("append", []))
    assert ours["fr"]["len"] == n


def test_columns_list_both_ways(world):
    spec = world["specs"]["all"]
    ours = _hr_read(str(world["hr"] / "all"), spec["columns"])
    _assert_reads_equal(ours, world["r"]["hr"]["all/cols"], "hr/all columns")
    assert ours["md"]["cols"] == ["s", "ad", "i32", "b"]


def test_values_are_the_written_rows(world):
    rows = [dict(kv) for kv in world["r"]["hr"]["all"]["fr"]["rows"]]
    want = _all_rows(4) + _all_rows(3, 4)
    for got, exp in zip(rows, want):
        assert got["i32"] == exp["i32"] and got["i64"] == exp["i64"] and got["s"] == exp["s"]
        assert got["b"] == exp["b"] and got["f32"] == exp["f32"]
        for k in ("ai", "al", "af", "ad"):
            assert got[k].dtype == exp[k].dtype and np.array_equal(got[k], exp[k]), k


@pytest.mark.parametrize("name", FIXED)
def test_fixed_layout_files_are_byte_identical(world, name):
    a = (world["ms"] / name).read_bytes()
    b = (world["hr"] / name).read_bytes()
    assert a == b
    q = "SELECT * FROM INDEXES ORDER BY ROW_ID"
    ca, cb = sqlite3.connect(str(world["ms"] / name) + ".db"), sqlite3.connect(str(world["hr"] / name) + ".db")
    assert ca.execute(q).fetchall() == cb.execute(q).fetchall()
    q = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
    assert ca.execute(q).fetchall() == cb.execute(q).fetchall()
    assert ca.execute("SELECT * FROM SHARD_NAME").fetchall() == cb.execute("SELECT * FROM SHARD_NAME").fetchall()


def test_headrace_small_files_are_small(world):
    # MindSpore's default layout for the same rows: a 16 MiB header slot and 32 MiB pages
    assert os.path.getsize(world["ms"] / "all") > 48 << 20
    assert os.path.getsize(world["hr"] / "all") < 64 << 10


def test_mindpage_both_ways(world):
    for d in ("ms_dir", "hr_dir"):
        base = world["ms"] if d == "ms_dir" else world["hr"]
        theirs = world["r"]["pages"][d]
        for key, path, field, name in (("shards", base / "shards0", "label", "3"), ("rawonly", base / "rawonly", "s", "s1")):
            assert not isinstance(theirs[key], OracleException), (d, key, theirs[key])
            mp = MindPage(str(path))
            mp.category_field = field
            ours = {"cand": mp.candidate_fields, "info": mp.read_category_info(),
                    "by_id": [list(x.items()) for x in mp.read_at_page_by_id(1, 0, 3)],
                    "by_name": [list(x.items()) for x in mp.read_at_page_by_name(name, 0, 5)]}
            _same(ours, theirs[key], f"{d}/{key}")


def test_mindspore_appends_to_a_headrace_file(world):
    res = world["r"]["ms_append"]
    assert not isinstance(res, OracleException), res
    ours = _hr_read(str(world["app"]))
    _assert_reads_equal(ours, res, "ms append")
    assert ours["fr"]["len"] == 43


def test_file_lists_mixing_both_writers(world):
    ours = _hr_read([str(world["hr"] / "pages2"), str(world["ms"] / "pages2")])     # same layout: fine
    _assert_reads_equal(ours, world["r"]["mixed_list"], "mixed list")
    # different header/page sizes: MindSpore refuses to read the files as one dataset; headrace, whose
    # writer sizes pages to the data (two files of one script can differ), reads each file with its own
    # header: the rows of the two files, one after the other
    theirs = world["r"]["mixed_auto"]
    assert isinstance(theirs["fr"], OracleException), theirs["fr"]
    text = (f"[ERROR] Invalid file, the metadata of mindrecord file: {world['ms'] / 'shards0'} is different from "
            f"others, please make sure all the mindrecord files generated by the same script.")
    assert text in theirs["fr"].msg
    pair = [str(world["hr"] / "shards2"), str(world["ms"] / "shards0")]
    both = FileReader(pair)
    rows = [sorted(r.items()) for r in both.get_next()]
    both.close()
    alone = []
    for path in pair:
        r = FileReader([path])
        alone += [sorted(x.items()) for x in r.get_next()]
        r.close()
    assert len(rows) == len(alone) > 0
    _same(rows, alone, "mixed layouts read as one")


# ------------------------------------------------------------------------------------------ error texts

ERROR_CASES = [
    "FileWriter(None)", "FileWriter(3)", "FileWriter(D + '/x/')", "FileWriter(D + '/x*y')", "FileWriter(D + '/ x')",
    "FileWriter(D + '/x', 0)", "FileWriter(D + '/x', 1001)", "FileWriter(D + '/x', '2')", "FileWriter(D + '/x', None)",
    "FileWriter(D + '/x', 1, 1)",
    "FileWriter(D + '/x').add_schema({})", "FileWriter(D + '/x').add_schema([1])",
    "FileWriter(D + '/x').add_schema({'a-b': {'type': 'int32'}})", "FileWriter(D + '/x').add_schema({'a': {'type': 'int16'}})",
    "FileWriter(D + '/x').add_schema({'a': 'int32'})", "FileWriter(D + '/x').add_schema({'a': {'type': 'bytes', 'shape': [1]}})",
    "FileWriter(D + '/x').add_schema({'a': {'type': 'int32', 'shape': (1,)}})",
    "FileWriter(D + '/x').add_schema({'a': {'type': 'int32', 'foo': 1}})",
    "w = FileWriter(D + '/x'); w.add_schema({'a': {'type': 'int32'}}); w.add_schema({'a': {'type': 'int32'}})",
    "FileWriter(D + '/x').add_index(['a'])",
    "w = FileWriter(D + '/x'); w.add_schema(S); w.add_index(['b'])",
    "w = FileWriter(D + '/x'); w.add_schema(S); w.add_index('a')",
    "w = FileWriter(D + '/x'); w.add_schema(S); w.add_index([1])",
    "w = FileWriter(D + '/x'); w.add_schema(S); w.add_index(['zz'])",
    "w = FileWriter(D + '/x'); w.add_schema(S); w.add_index(['a']); w.add_index(['a'])",
    "FileWriter(D + '/x').set_page_size(32767)", "FileWriter(D + '/x').set_page_size(32770)",
    "FileWriter(D + '/x').set_page_size(1 << 29)", "FileWriter(D + '/x').set_header_size(16383)",
    "FileWriter(D + '/x').set_header_size(16386)",
    "w = FileWriter(D + '/x1'); w.commit()",
    "w = FileWriter(D + '/x2'); w.add_schema(S); w.write_raw_data({'a': 1})",
    "w = FileWriter(D + '/x3'); w.add_schema(S); w.write_raw_data([1])",
    "w = FileWriter(D + '/x4'); w.add_schema(S); w.write_raw_data([])",
    "w = FileWriter(D + '/x5'); w.add_schema(S); w.write_raw_data([{'a': 1.5, 'b': b'x'}])",
    "w = FileWriter(D + '/x6'); w.add_schema(S); w.write_raw_data([{'a': 1, 'b': b'x'}], 1)",
    "w = FileWriter(D + '/x7'); w.add_schema(S); w.write_raw_data([{'a': 1, 'b': b'x'}]); w.write_raw_data([{'a': 1, 'b': b'x'}], True)",
    "w = FileWriter(D + '/x8'); w.add_schema(S); w.write_raw_data([{'a': 1, 'b': b'x'}]); w.commit(); w.write_raw_data([{'a': 1, 'b': b'x'}])",
    "w = FileWriter(D + '/base'); w.add_schema(S); w.write_raw_data([{'a': 1, 'b': b'x'}])",
    "FileReader(D + '/nope')", "FileReader(D + '/base', columns='a')", "FileReader(D + '/base', columns=['zz'])",
    "FileReader(D + '/base', 0)", "FileReader(D + '/base', '2')", "FileReader(D + '/base', None)",
    "MindPage(D + '/base').read_category_info()",
    "m = MindPage(D + '/base'); m.category_field = 'b'", "m = MindPage(D + '/base'); m.category_field = 5",
    "m = MindPage(D + '/base'); m.category_field = 'a'; m.read_at_page_by_id(9, 0, 1)",
    "m = MindPage(D + '/base'); m.category_field = 'a'; m.read_at_page_by_id(0, 5, 1)",
    "m = MindPage(D + '/base'); m.category_field = 'a'; m.read_at_page_by_name('nope', 0, 1)",
    "m = MindPage(D + '/base'); m.category_field = 'a'; m.read_at_page_by_id(-1, 0, 1)",
    "m = MindPage(D + '/base'); m.category_field = 'a'; m.read_at_page_by_id(0, 0, 0)",
    "m = MindPage(D + '/base'); m.category_field = 'a'; m.read_at_page_by_name(1, 0, 1)",
    "MindDataset(D + '/nope')", "MindDataset(D + '/base', columns_list='a')",
    "MindDataset(D + '/base', padded_sample={'a': 1}, num_padded=1)",
    "MindDataset(D + '/base', columns_list=['a', 'b'], padded_sample={'a': 1}, num_padded=1)",
    "MindDataset(D + '/base', columns_list=['a'], padded_sample={'a': 1})", "MindDataset(D + '/base', num_padded=1)",
    "MindDataset(D + '/nodb')",
]

_ERR_SNIPPET = r"""
import os
from mindspore.mindrecord import FileWriter, FileReader, MindPage
MindDataset = ds.MindDataset
D = INPUTS["dir"]
S = {"a": {"type": "int32"}, "b": {"type": "bytes"}}
w = FileWriter(D + "/base"); w.add_schema(S); w.write_raw_data([{"a": i, "b": b"x"} for i in range(3)]); w.commit()
open(D + "/nodb", "wb").write(open(D + "/base", "rb").read())
out = []
for case in INPUTS["cases"]:
    try:
        exec(case, {"FileWriter": FileWriter, "FileReader": FileReader, "MindPage": MindPage, "MindDataset": MindDataset,
                    "D": D, "S": S})
        out.append(None)
    except Exception as e:
        out.append((type(e).__name__, str(e)))
RESULT = out
"""


def _essence(err, d):
    if err is None:
        return None
    name, text = err
    text = text.replace(d, "<D>")
    if "[ERROR] " in text:
        text = text.split("[ERROR] ", 1)[1].split("\n\n----", 1)[0].rstrip("\n")
    if name in ("MindRecordRuntimeError", "MindRecordFormatError"):
        name = "RuntimeError"
    return name, text


def test_error_texts_match_mindspore(tmp_path):
    ms_dir, hr_dir = tmp_path / "ms", tmp_path / "hr"
    ms_dir.mkdir()
    hr_dir.mkdir()
    theirs = run_ms(_ERR_SNIPPET, {"dir": str(ms_dir), "cases": ERROR_CASES})
    D, S = str(hr_dir), {"a": {"type": "int32"}, "b": {"type": "bytes"}}
    w = FileWriter(D + "/base")
    w.add_schema(S)
    w.write_raw_data([{"a": i, "b": b"x"} for i in range(3)])
    w.commit()
    open(D + "/nodb", "wb").write(open(D + "/base", "rb").read())
    ours = []
    for case in ERROR_CASES:
        try:
            exec(case, {"FileWriter": FileWriter, "FileReader": FileReader, "MindPage": MindPage,
                        "MindDataset": MindDataset, "D": D, "S": S})
            ours.append(None)
        except Exception as e:       # noqa: BLE001 - compared below
            ours.append((type(e).__name__, str(e)))
    assert all(t is not None for t in theirs) and all(o is not None for o in ours)   # every case is an error
    mismatches = []
    for case, a, b in zip(ERROR_CASES, ours, theirs):
        ea, eb = _essence(a, D), _essence(b, str(ms_dir))
        if ea != eb:
            mismatches.append((case, ea, eb))
    assert mismatches == []
