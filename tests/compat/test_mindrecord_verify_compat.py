"""Files MindSpore 2.10 writes pass headrace's full verification and the stricter row-table checks
(issue 12 items 14, 15): small pages where raw pages overflow and row groups move, appends, shards,
float and string index fields, schemas without scalar or without blob fields, chosen index fields."""
from __future__ import annotations

import os

import numpy as np
import pytest

from headrace.dataset._sources.mindrecord import MindDataset
from headrace.mindrecord import FileReader, verify
from tests.oracles.oracle import run_ms

pytestmark = pytest.mark.compat

ORACLE = """
import numpy as np
from mindspore.mindrecord import FileWriter
d = INPUTS["dir"]
SCHEMA = {"label": {"type": "int32"}, "s": {"type": "string"}, "data": {"type": "bytes"},
          "v": {"type": "int64", "shape": [-1]}}

def rows(n, strlen, blob, start=0):
    return [{"label": i, "s": "x" * (strlen + i % 37), "data": bytes([i % 256]) * (blob + i % 50),
             "v": np.arange(i % 9, dtype=np.int64) * 1000} for i in range(start, start + n)]

def mk(name, data, shards=1, schema=SCHEMA, index=None):
    w = FileWriter(os.path.join(d, name), shards, overwrite=True)
    w.add_schema(schema, "v")
    if index:
        w.add_index(index)
    w.set_page_size(1 << 15)
    w.set_header_size(1 << 14)
    w.write_raw_data(data)
    w.commit()

mk("overflow.mr", rows(300, 400, 900))
mk("bigraw.mr", rows(300, 3000, 50))
w = FileWriter.open_for_append(os.path.join(d, "bigraw.mr"))
w.write_raw_data(rows(100, 2000, 30, 300))
w.commit()
mk("shards.mr", rows(200, 1500, 1500), shards=3)
mk("blobonly.mr", [{"data": bytes(3000 + i)} for i in range(100)], schema={"data": {"type": "bytes"}})
mk("rawonly.mr", [{"a": i, "b": i / 3} for i in range(5000)], schema={"a": {"type": "int32"}, "b": {"type": "float64"}})
vals = [0.1, 3.4e38, 1e30, -0.0, 2.5, 1e-45]
mk("floats.mr", [{"a": vals[i % 6], "b": vals[(i + 1) % 6], "s": "\\u00e9" * (i % 40), "i": -(1 << 62) + i,
                  "m": np.ones((2, i % 3 + 1), np.float32), "v": np.array([1, -300, 70000, -(1 << 31)][: i % 5], np.int32)}
                 for i in range(50)],
   schema={"a": {"type": "float32"}, "b": {"type": "float64"}, "s": {"type": "string"}, "i": {"type": "int64"},
           "m": {"type": "float32", "shape": [2, -1]}, "v": {"type": "int32", "shape": [-1]}})
mk("chosen.mr", rows(80, 10, 10), index=["s"])
RESULT = sorted(os.listdir(d))
"""

NAMES = {"overflow.mr": 300, "bigraw.mr": 400, "shards.mr0": 200, "blobonly.mr": 100, "rawonly.mr": 5000,
         "floats.mr": 50, "chosen.mr": 80}


@pytest.fixture(scope="module")
def ms_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("msverify")
    listed = run_ms(ORACLE, {"dir": str(d)})
    assert [n for n in listed if not n.endswith(".db")] == sorted(
        ["overflow.mr", "bigraw.mr", "shards.mr0", "shards.mr1", "shards.mr2", "blobonly.mr", "rawonly.mr",
         "floats.mr", "chosen.mr"])
    return d


@pytest.mark.parametrize("name", sorted(NAMES))
def test_mindspore_files_pass_verification(ms_files, name):
    path = str(ms_files / name)
    reports = verify(path)
    assert sum(r.rows for r in reports) == NAMES[name]
    assert all(r.bytes > 0 for r in reports)
    plain = list(FileReader(path).get_next())
    checked = list(FileReader(path, verify=True).get_next())
    assert len(plain) == len(checked) == NAMES[name]
    for a, b in zip(plain, checked):
        assert list(a) == list(b)
        for k in a:
            assert (np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k]), (name, k)
    assert MindDataset(path, shuffle=False, verify=True).get_dataset_size() == NAMES[name]
    assert os.path.exists(path + ".db")
