"""Ray for the tests of headrace.ray: a local Ray of 2 CPUs per test module, and small MindRecord
sets. Ray's own files (sockets, logs, spilled objects) go to a short folder of the module's,
removed after ``ray.shutdown`` (a Unix socket path must stay under 108 bytes)."""
import os
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
def cluster():
    """A Ray cluster of small nodes on this machine (``ray.cluster_utils.Cluster``) for the module: a
    head without CPUs and two 1-CPU worker nodes (``cluster.worker_nodes``), so every read, map and
    write task runs on a worker node; the driver is connected to it."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster
    folder = tempfile.mkdtemp(prefix="hrrayc-", dir="/tmp")
    os.makedirs(os.path.join(folder, "ray"))
    patch = pytest.MonkeyPatch()
    patch.setenv("RAY_TMPDIR", folder)   # where Cluster notes the head's address (not TMPDIR: the suite's)
    c = None
    try:   # (a setup that fails removes what it started too)
        c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "temp_dir": folder,
                                                          "include_dashboard": False})
        for _ in range(2):
            c.add_node(num_cpus=1, temp_dir=folder)
        c.wait_for_nodes()
        ray.init(address=c.address, log_to_driver=False, configure_logging=False)
        ray.data.DataContext.get_current().enable_progress_bars = False
        c.temp_dir = folder   # where a test adds a node (one that replaces a removed one)
        yield c
    finally:
        ray.shutdown()
        if c is not None:
            c.shutdown()
        patch.undo()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def mr_set(tmp_path_factory):
    """Two shards of 25 rows (about 10 rows per 32 KiB page); the path of the first shard."""
    d = tmp_path_factory.mktemp("mr")
    return write_set(str(d / "set.mindrecord"), make_rows(50), shard_num=2)

