import logging
import shutil

import numpy as np
import pytest

from headrace.mindrecord import FileWriter

SCHEMA = {"label": {"type": "int32"}, "name": {"type": "string"}, "data": {"type": "bytes"},
          "vec": {"type": "int64", "shape": [-1]}, "mat": {"type": "float32", "shape": [2, -1]}}


def make_rows(n, start=0):
    return [{"label": i, "name": f"n{i}", "data": bytes([i % 256]) * (i % 7), "vec": np.arange(i % 5, dtype=np.int64) - 2,
             "mat": np.full((2, 2), i, np.float32)} for i in range(start, start + n)]


def copy_dataset(src_dir, dst_dir, name):
    """Copies the dataset ``name`` (data file and .db) from ``src_dir`` to ``dst_dir``; its new path."""
    for f in (name, name + ".db"):
        shutil.copy(src_dir / f, dst_dir / f)
    return str(dst_dir / name)


def write(path, rows, shard_num=1, schema=None, index=None, page_size=None, header_size=None, **kw):
    w = FileWriter(str(path), shard_num, **kw)
    w.add_schema(schema or SCHEMA, "test")
    if index:
        w.add_index(index)
    if page_size:
        w.set_page_size(page_size)
    if header_size:
        w.set_header_size(header_size)
    w.write_raw_data(rows)
    w.commit()
    return w


def damageable(rows, name="c.mr"):
    """Two fixtures for tests that damage a file, to bind by name: ``pristine, copy = damageable(ROWS)``.
    ``pristine`` (module scope) writes ``rows`` once, as ``name`` in a folder of its own (32 KiB pages
    after a 16 KiB header), the folder; the second gives each test its own copy, its path."""
    @pytest.fixture(scope="module")
    def pristine(tmp_path_factory):
        d = tmp_path_factory.mktemp("pristine")
        write(d / name, rows, page_size=1 << 15, header_size=1 << 14)
        return d

    @pytest.fixture
    def copy(pristine, tmp_path):
        return copy_dataset(pristine, tmp_path, name)

    return pristine, copy


@pytest.fixture
def mr_logs(caplog):
    caplog.set_level(logging.WARNING, logger="headrace.mindrecord")
    return caplog
