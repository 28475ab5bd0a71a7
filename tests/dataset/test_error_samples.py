"""Error samples mode (issue 16): ``ds.config.set_error_samples_mode`` REPLACE / SKIP on maps and
on sources, deterministic under any worker count and after a checkpoint restore, every failed
row named (``error_samples()`` and an ``ErrorSamplesWarning`` per epoch)."""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import headrace.dataset as ds
import headrace.dataset.vision as vision
from headrace._engine.exec.stage import StageIter
from headrace._util.errors import ErrorSamplesWarning
from tests.vision.imagegen import encode, photo

Mode = ds.config.ErrorSamplesMode
pytestmark = pytest.mark.filterwarnings("ignore::headrace._util.errors.ErrorSamplesWarning")
EXECUTION = [pytest.param(1, False, id="serial"), pytest.param(2, False, id="threads"),
             pytest.param(2, True, id="processes")]


def fail_odd(x):
    if x % 2:
        raise ZeroDivisionError(f"odd {int(x)}")
    return x


def fail_listed(x):
    if int(x) in (0, 3, 4, 9):
        raise ValueError("listed")
    return x


def rows_and_errors(d, epochs=1):
    it = d.create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    rows = [[np.asarray(c).tolist() for c in r] for _ in range(epochs) for r in it]
    return rows, [(e["epoch"], e["index"], e["action"], e["replaced_by"]) for e in it.error_samples()], it


def test_setting():
    assert ds.config.get_error_samples_mode() is Mode.RETURN
    for mode in (Mode.REPLACE, Mode.SKIP, Mode.RETURN):
        ds.config.set_error_samples_mode(mode)
        assert ds.config.get_error_samples_mode() is mode
    with pytest.raises(TypeError, match="^error_samples_mode isn't of type ErrorSamplesMode.$"):
        ds.config.set_error_samples_mode(1)


@pytest.mark.parametrize("workers, procs", EXECUTION)
def test_replace_puts_in_the_next_healthy_row(workers, procs):
    ds.config.set_error_samples_mode(Mode.REPLACE)
    d = ds.GeneratorDataset(lambda: iter(range(10)), ["x"]).map(fail_listed, num_parallel_workers=workers,
                                                                 python_multiprocessing=procs)
    rows, errors, it = rows_and_errors(d, epochs=2)
    one = [[1], [1], [2], [5], [5], [5], [6], [7], [8], [8]]  # 9 fails last: the previous healthy row
    assert rows == one * 2
    assert errors == [(0, 0, "replaced", 1), (0, 3, "replaced", 5), (0, 4, "replaced", 5), (0, 9, "replaced", 8),
                      (1, 0, "replaced", 1), (1, 3, "replaced", 5), (1, 4, "replaced", 5), (1, 9, "replaced", 8)]
    first = it.error_samples()[0]
    assert first["op"] == "map operation: [PyFunc]" and first["error"] == "ValueError: listed"
    assert first["source_index"] is None and first["file"] is None


@pytest.mark.parametrize("workers, procs", EXECUTION)
def test_skip_leaves_rows_out(workers, procs):
    ds.config.set_error_samples_mode(Mode.SKIP)
    d = ds.GeneratorDataset(lambda: iter(range(10)), ["x"]).map(fail_odd, num_parallel_workers=workers,
                                                                 python_multiprocessing=procs)
    rows, errors, _ = rows_and_errors(d)
    assert rows == [[0], [2], [4], [6], [8]]
    assert errors == [(0, i, "skipped", None) for i in (1, 3, 5, 7, 9)]


@pytest.mark.parametrize("workers, procs", EXECUTION)
def test_in_a_batch_stage_the_batch_keeps_its_place(workers, procs):
    src = ds.NumpySlicesDataset(list(range(10)), column_names=["x"], shuffle=False, num_parallel_workers=workers)
    d = src.map(fail_listed, num_parallel_workers=workers, python_multiprocessing=procs).batch(4)
    ds.config.set_error_samples_mode(Mode.REPLACE)
    rows, errors, _ = rows_and_errors(d)
    assert rows == [[[1, 1, 2, 2]], [[5, 5, 6, 7]], [[8, 8]]]  # replaced from the same batch
    assert errors == [(0, 0, "replaced", 1), (0, 3, "replaced", 2), (0, 4, "replaced", 5), (0, 9, "replaced", 8)]
    ds.config.set_error_samples_mode(Mode.SKIP)
    rows, errors, _ = rows_and_errors(d)
    assert rows == [[[1, 2]], [[5, 6, 7]], [[8]]]  # a row short, never a batch less
    assert [e[2] for e in errors] == ["skipped"] * 4


def test_a_batch_that_failed_entirely():
    d = ds.NumpySlicesDataset(list(range(6)), column_names=["x"], shuffle=False).map(fail_odd).batch(1)
    ds.config.set_error_samples_mode(Mode.REPLACE)
    rows, errors, _ = rows_and_errors(d)
    assert rows == [[[0]], [[2]], [[2]], [[4]], [[4]], [[4]]]  # another whole batch stands in
    assert errors == [(0, 1, "replaced", None), (0, 3, "replaced", None), (0, 5, "replaced", None)]
    ds.config.set_error_samples_mode(Mode.SKIP)  # the same: a batch is never left out
    assert rows_and_errors(d)[:2] == (rows, errors)


def test_skip_keeps_batch_counts_equal_across_shards():
    ds.config.set_error_samples_mode(Mode.SKIP)

    def fail_low(x):  # shard 0 holds rows 0, 2, 4 ...: four of its rows fail, none of shard 1's
        if int(x) in (0, 6, 8, 10):
            raise ValueError("bad")
        return x

    out = []
    for shard in (0, 1):
        d = ds.NumpySlicesDataset(list(range(16)), column_names=["x"], shuffle=False, num_shards=2, shard_id=shard)
        d = d.map(fail_low).batch(3)
        rows, errors, _ = rows_and_errors(d)
        out.append((rows, [e[1:3] for e in errors]))
    # shard 0's second batch failed entirely: another batch stands in, so the count holds
    assert out[0] == ([[[2, 4]], [[12, 14]], [[12, 14]]],
                      [(0, "skipped"), (3, "replaced"), (4, "replaced"), (5, "replaced")])
    assert out[1] == ([[[1, 3, 5]], [[7, 9, 11]], [[13, 15]]], [])


@pytest.mark.parametrize("mode", [Mode.REPLACE, Mode.SKIP])
@pytest.mark.parametrize("batch", [None, 3])
def test_same_choices_after_a_restore(mode, batch):
    ds.config.set_error_samples_mode(mode)
    ds.config.set_seed(4)

    def make():
        d = ds.NumpySlicesDataset(list(range(20)), column_names=["x"], shuffle=True).map(fail_listed)
        return d.batch(batch) if batch else d

    whole = [[np.asarray(c).tolist() for c in r] for r in make().create_tuple_iterator(num_epochs=2, output_numpy=True)]
    for cut in (1, 4, 5):
        it = make().create_tuple_iterator(num_epochs=2, output_numpy=True)
        head = [[np.asarray(c).tolist() for c in next(it)] for _ in range(cut)]
        state = it.get_state()
        it2 = make().create_tuple_iterator(num_epochs=2, output_numpy=True)
        it2.set_state(state)
        assert head + [[np.asarray(c).tolist() for c in r] for r in it2] == whole


def test_every_row_failing():
    ds.config.set_error_samples_mode(Mode.REPLACE)
    d = ds.NumpySlicesDataset([1, 3], shuffle=False).map(fail_odd, num_parallel_workers=1)
    with pytest.raises(RuntimeError, match="All data is garbage and cannot be replaced. No row of the pass was read "
                                           r"without an error \(the first failed at position 0: ZeroDivisionError"):
        list(d.create_tuple_iterator())
    ds.config.set_error_samples_mode(Mode.SKIP)
    assert list(d.create_tuple_iterator()) == []


def test_summary_at_the_end_of_each_epoch():
    ds.config.set_error_samples_mode(Mode.SKIP)
    d = ds.NumpySlicesDataset(list(range(4)), column_names=["x"], shuffle=False).map(fail_odd, num_parallel_workers=1)
    it = d.create_tuple_iterator(num_epochs=2, output_numpy=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert [int(r[0]) for r in it] == [0, 2]
        assert [str(x.message) for x in w if x.category is ErrorSamplesWarning] == [
            "Epoch 1: 2 row(s) failed and were kept out of the output (0 replaced, 2 skipped):\n"
            "  map operation: [PyFunc] at position 1, source row 1: ZeroDivisionError: odd 1 -> skipped\n"
            "  map operation: [PyFunc] at position 3, source row 3: ZeroDivisionError: odd 3 -> skipped"]
        list(it)
        assert sum(x.category is ErrorSamplesWarning for x in w) == 2


def _image_folder(root, bad):
    for k in range(8):
        path = os.path.join(root, "c0", f"{k:03d}.jpg")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(b"this is not a JPEG" if k in bad else encode(photo(12, 16, k)))
    return str(root)


@pytest.mark.parametrize("workers, procs", EXECUTION)
def test_corrupt_jpeg_in_an_image_folder(tmp_path, workers, procs):
    root = _image_folder(tmp_path, bad={2, 5})
    d = ds.ImageFolderDataset(root, shuffle=False, num_parallel_workers=workers)
    d = d.map(vision.Decode(), input_columns="image", num_parallel_workers=workers, python_multiprocessing=procs)
    with pytest.raises(RuntimeError, match="Decode"):
        list(d.create_tuple_iterator())
    ds.config.set_error_samples_mode(Mode.REPLACE)
    it = d.create_tuple_iterator(output_numpy=True)
    shapes = [r[0].shape for r in it]
    assert shapes == [(12, 16, 3)] * 8
    errors = it.error_samples()
    assert [(e["index"], e["source_index"], e["replaced_by"]) for e in errors] == [(2, 2, 3), (5, 5, 6)]
    assert [os.path.basename(e["file"]) for e in errors] == ["002.jpg", "005.jpg"]
    assert all(e["op"].startswith("map operation: [Decode]") for e in errors)
    ds.config.set_error_samples_mode(Mode.SKIP)
    assert len(list(d.create_tuple_iterator())) == 6


def test_a_bad_row_in_a_file_source(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("1,2\n3\n5,6\n7,8\n")
    d = ds.CSVDataset(str(path), column_names=["a", "b"], shuffle=False)
    ds.config.set_error_samples_mode(Mode.REPLACE)
    rows, errors, it = rows_and_errors(d)
    assert rows == [["1", "2"], ["5", "6"], ["5", "6"], ["7", "8"]]
    e = it.error_samples()[0]
    assert (e["op"], e["index"], e["source_index"], e["file"], e["action"], e["replaced_by"]) == (
        "CSVDataset", 1, 1, str(path), "replaced", 2)
    assert "the record has 1 field(s), but there are 2 columns" in e["error"]


def test_return_mode_adds_nothing_to_the_row_path():
    d = ds.NumpySlicesDataset(list(range(4)), shuffle=False).map(fail_odd, num_parallel_workers=2)
    it = d.create_tuple_iterator()
    stages = [op for op in it._run.ctx.ops if isinstance(op, StageIter)] or [it._run.tree]
    assert all(s._sorter is None and s.program.errors is None for s in stages)
    with pytest.raises(RuntimeError, match="odd 1"):
        list(it)
    assert it.error_samples() == []


def test_debug_mode_ignores_the_mode():
    ds.config.set_error_samples_mode(Mode.SKIP)
    with pytest.warns(UserWarning):
        ds.config.set_debug_mode(True, [])
    ds.config.set_seed(1)
    with pytest.raises(RuntimeError, match="odd 1"):
        list(ds.NumpySlicesDataset(list(range(4)), shuffle=False).map(fail_odd).create_tuple_iterator())
