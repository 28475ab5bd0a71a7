"""Ray for the tests of headrace.ray: a local Ray of 2 CPUs per test module, and small MindRecord
sets. Ray's own files (sockets, logs, spilled objects) go to a short folder of the module's,
removed after ``ray.shutdown`` (a Unix socket path must stay under 108 bytes)."""
import shutil
import tempfile

import numpy as np
import pytest

from headrace.mindrecord import FileWriter

SCHEMA = {"label": {"type": "int32"}, "data": {"type": "bytes"}, "name": {"type": "string"},
          "vec": {"type": "float32", "shape": [2, 3]}, "ids": {"type": "int64", "shape": [-1]},
          "score": {"type": "float64"}}


def make_rows(n, start=0, payload=3000):
    """Rows of every MindRecord type; ``data`` is ``payload`` bytes or so (pages of a few rows)."""
    out = []
    for i in range(start, start + n):
        r = np.random.default_rng(i)
        out.append({"label": i, "data": r.integers(0, 256, payload + i % 7, dtype=np.uint8).tobytes(),
                    "name": f"row-{i}", "vec": r.random((2, 3)).astype(np.float32),
                    "ids": np.arange(i % 4 + 1, dtype=np.int64) * i, "score": i / 3})
    return out


def write_set(path, rows, shard_num=1, page_size=32768):
    w = FileWriter(path, shard_num=shard_num)
    w.add_schema(SCHEMA, "ray test")
    w.set_page_size(page_size)
    w.write_raw_data(rows)
    w.commit()
    return path if shard_num == 1 else path + "0"


@pytest.fixture(scope="module")
def local_ray():
    """``ray.init(num_cpus=2)`` for the module (6-9 s here), shut down after it. (The test modules
    skip themselves without Ray; this file must load without it.)"""
    ray = pytest.importorskip("ray")
    folder = tempfile.mkdtemp(prefix="hrray-", dir="/tmp")
    try:   # (a setup that fails removes its folder too)
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=folder,
                 configure_logging=False)
        ray.data.DataContext.get_current().enable_progress_bars = False
        yield ray
    finally:
        ray.shutdown()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def mr_set(tmp_path_factory):
    """Two shards of 25 rows (about 10 rows per 32 KiB page); the path of the first shard."""
    d = tmp_path_factory.mktemp("mr")
    return write_set(str(d / "set.mindrecord"), make_rows(50), shard_num=2)

