"""A short smoke of headrace on the running interpreter (scripts/version_smoke.sh runs it on every
supported Python it finds): the error paths, a pipeline over worker processes, a MindRecord round
trip, and the torch adapter where torch is installed. Exits non-zero on the first failure."""
from __future__ import annotations

import os
import sys
import tempfile

import numpy as np

import headrace.dataset as ds
from headrace.mindrecord import FileReader, FileWriter


def fail_on_3(x):
    if int(x) == 3:
        raise KeyError("smoke: row 3")
    return x


def double(x):
    return x * 2


def check_error_paths() -> None:
    for processes in (False, True):
        d = ds.GeneratorDataset([(np.array(i),) for i in range(8)], ["a"], shuffle=False)
        d = d.map(fail_on_3, ["a"], num_parallel_workers=2, python_multiprocessing=processes)
        try:
            list(d.create_tuple_iterator(output_numpy=True))
        except RuntimeError as e:
            text = str(e)
            assert "KeyError: 'smoke: row 3'" in text, text
            assert "sample index: 3" in text, text
            assert f'File "{os.path.abspath(__file__)}", line' in text, text
        else:
            raise AssertionError("the failing map did not raise")
    try:
        ds.GeneratorDataset([(np.array(1),)], ["a"]).batch(0)
    except ValueError as e:
        assert "batch_size" in str(e), str(e)
    else:
        raise AssertionError("batch(0) was accepted")


def check_process_pipeline() -> None:
    ds.config.set_seed(7)
    d = ds.NumpySlicesDataset({"x": np.arange(64)}, shuffle=True)
    d = d.map(double, ["x"], num_parallel_workers=2, python_multiprocessing=True).batch(8)
    got = np.concatenate([b[0] for b in d.create_tuple_iterator(output_numpy=True)])
    assert sorted(got.tolist()) == list(range(0, 128, 2)), got


def check_mindrecord(tmp: str) -> None:
    path = os.path.join(tmp, "smoke.mindrecord")
    w = FileWriter(path, 1)
    w.add_schema({"id": {"type": "int64"}, "data": {"type": "bytes"}, "v": {"type": "float32", "shape": [2]}})
    rows = [{"id": i, "data": bytes([i]) * (i + 1), "v": np.array([i, -i], np.float32)} for i in range(20)]
    w.write_raw_data(rows)
    w.commit()
    back = list(FileReader(path).get_next())
    assert [r["id"] for r in back] == list(range(20))
    assert all(r["data"] == bytes([r["id"]]) * (r["id"] + 1) for r in back)
    got = [int(r[0]) for r in ds.MindDataset(path, ["id"], shuffle=False).create_tuple_iterator(output_numpy=True)]
    assert got == list(range(20)), got


def check_writer_in_a_suspended_generator(tmp: str) -> None:
    """A writer in use by a suspended generator keeps its files: a second writer is refused and the
    generator's writer commits (on 3.10 its frame alone refers to it, as a finished frame would)."""
    path = os.path.join(tmp, "gen.mindrecord")
    schema = {"k": {"type": "int32"}}

    def job():
        w = FileWriter(path)
        w.add_schema(schema)
        w.write_raw_data([{"k": 0}])
        yield
        w.write_raw_data([{"k": 1}])
        w.commit()
        yield

    g = job()
    next(g)
    other = FileWriter(path)
    other.add_schema(schema)
    try:
        other.write_raw_data([{"k": 9}])
    except RuntimeError as e:
        assert "another FileWriter is writing" in str(e), str(e)
    else:
        raise AssertionError("a second writer took the files of a writer in use by a suspended generator")
    next(g)
    assert [r["k"] for r in FileReader(path).get_next()] == [0, 1]


def check_torch() -> bool:
    try:
        import torch  # noqa: PLC0415 - optional: the adapter is checked where torch installs
    except ImportError:
        return False
    from headrace.torch import Loader  # noqa: PLC0415 - needs torch
    d = ds.NumpySlicesDataset({"x": np.arange(12, dtype=np.int32)}, shuffle=False).batch(4)
    batches = [b[0] for b in Loader(d)]
    assert all(isinstance(b, torch.Tensor) for b in batches)
    assert torch.cat(batches).tolist() == list(range(12))
    return True


def main() -> int:
    check_error_paths()
    check_process_pipeline()
    with tempfile.TemporaryDirectory() as tmp:
        check_mindrecord(tmp)
        check_writer_in_a_suspended_generator(tmp)
    torch = check_torch()
    print(f"version smoke: Python {sys.version.split()[0]}: error paths, process pipeline, MindRecord"
          f"{', torch adapter' if torch else ' (torch not installed: adapter not checked)'}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
