"""A map's last op writing its rows straight into the batch (issue 42 item 1): where the map's
function has ``write_into`` (the fused Flip+Normalize+HWC2CHW op, a chain ending in it) and a batch
tops the stage, row ``k``'s result is written into row ``k`` of the batch's array instead of being
copied there. The batches must be those of the ordinary path, bit for bit, in every worker mode,
and failures must read as they read without it."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import headrace.dataset as ds
import headrace.dataset.vision as v
from headrace._engine.exec import stage_program
from headrace.common import dtype as mstype
from headrace.dataset import transforms

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
MODES = {"serial": dict(num_parallel_workers=1), "threads": dict(num_parallel_workers=2),
         "processes": dict(num_parallel_workers=2, python_multiprocessing=True)}


def tail():
    return [v.RandomHorizontalFlip(), v.Normalize(MEAN, STD), v.HWC2CHW()]


def batches(data):
    return [[np.array(c) for c in b] for b in data.create_tuple_iterator(num_epochs=1, output_numpy=True)]


def assert_same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert [(c.shape, c.dtype) for c in g] == [(c.shape, c.dtype) for c in w]
        assert all(a.tobytes() == b.tobytes() for a, b in zip(g, w))


def add_one(labels, info):
    return ([x + 1 for x in labels],)


def flip_rows(images, info):
    return ([x[:, ::-1] for x in images],)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 11), size=st.integers(1, 5), hw=st.tuples(st.integers(1, 9), st.integers(1, 9)),
       drop=st.booleans(), extra=st.sampled_from(["none", "pbm label", "pbm image", "pad label", "pad image"]),
       chain=st.booleans(), seed=st.integers(0, 2 ** 31))
@pytest.mark.parametrize("mode", list(MODES))
def test_batches_equal_those_without_the_direct_write(mode, n, size, hw, drop, extra, chain, seed):
    imgs = np.random.default_rng(seed).integers(0, 256, (n,) + hw + (3,), dtype=np.uint8)
    labels = np.arange(n, dtype=np.int32).reshape(n, 1)
    ds.config.set_seed(seed)

    def pipeline(ops):
        data = ds.NumpySlicesDataset({"image": imgs, "label": labels}, shuffle=False)
        data = data.map(ops, input_columns="image", **MODES[mode])
        if extra == "none":
            return data.batch(size, drop_remainder=drop)
        if extra.startswith("pad"):
            column = extra.split()[1]
            return data.padded_batch(size, drop_remainder=drop, pad_info={column: (None, 7)})
        return data.batch(size, drop_remainder=drop, per_batch_map=add_one if extra == "pbm label" else flip_rows,
                          input_columns=[extra.split()[1]])

    # a float32 -> float32 TypeCast after the fused op: the same values, but the last op cannot write into the batch
    # (chain: a uint8 TypeCast first, so the map's function is a chain of two ops ending in the fused one)
    head = [transforms.TypeCast(mstype.uint8)] if chain else []
    want = batches(pipeline(head + tail() + [transforms.TypeCast(mstype.float32)]))
    assert_same(batches(pipeline(head + tail())), want)
    assert len(want) == (n // size if drop else -(-n // size))


class Double:
    """x * 2 as float32; ``write_into`` records where it wrote (threads and inline share the list)."""

    random = False
    written: list[int] = []

    def __init__(self, direct=True):
        if not direct:
            self.write_into = None  # the same op without the direct write

    def __call__(self, x):
        if x.shape == (0,):
            raise ValueError("an empty row")
        return (x * 2).astype(np.float32) if x.shape != (5,) else np.zeros(6, np.float32)

    def write_into(self, x, *, out):
        if x.shape != (4,) or out.shape != (4,):
            return self(x)
        np.multiply(x, 2, out=out, dtype=np.float32)
        Double.written.append(out.ctypes.data)
        return out


def rows_of(values):
    return ds.GeneratorDataset(lambda: iter([(np.array(x, np.int16), np.int32(i)) for i, x in enumerate(values)]),
                               ["x", "i"], shuffle=False)


@pytest.mark.parametrize("mode", ["serial", "threads"])
def test_each_row_is_written_into_its_row_of_the_batch(mode):
    Double.written.clear()
    values = [[i, i + 1, i + 2, i + 3] for i in range(10)]
    data = ds.NumpySlicesDataset({"x": np.array(values, np.int16), "i": np.arange(10)}, shuffle=False)
    got = batches(data.map(Double(), input_columns="x", **MODES[mode]).batch(4))
    assert [b[0].tolist() for b in got] == [[[2.0 * x for x in r] for r in values[s:s + 4]] for s in (0, 4, 8)]
    # the first row of each batch is the op's own array, copied; every other row was written in place
    # (each batch's array is compared with a copy in `got`, so its addresses are those the op saw when alive)
    assert len(Double.written) == 10 - 3


def test_the_writes_land_in_the_batch_the_iterator_returns():
    Double.written.clear()
    data = ds.NumpySlicesDataset({"x": np.arange(12, dtype=np.int16).reshape(3, 4), "i": np.arange(3)}, shuffle=False)
    it = data.map(Double(), input_columns="x", num_parallel_workers=1).batch(3).create_tuple_iterator(
        num_epochs=1, output_numpy=True)
    batch = next(it)[0]
    base = batch.ctypes.data
    assert Double.written == [base + 16, base + 32]  # rows 1 and 2 (row 0: the first result, copied)
    assert batch.tolist() == [[0, 2, 4, 6], [8, 10, 12, 14], [16, 18, 20, 22]]


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("values, message", [
    ([[1, 2, 3, 4]] * 3 + [[]] + [[1, 2, 3, 4]], "map operation: [Double] failed at column: ['x'], sample index: 3"),
    ([[1, 2, 3, 4]] * 2 + [[1, 2, 3, 4, 5]], "Cannot batch tensors with different shapes in column 0 ('x')"),
    ([[1, 2, 3, 4]] * 2 + [[1, 2]], "Cannot batch tensors with different shapes in column 0 ('x')"),
])
def test_failures_read_as_without_the_direct_write(mode, values, message):
    errors = []
    for op in (Double(), Double(direct=False)):
        data = rows_of(values).map(op, input_columns="x", **MODES[mode]).batch(5)
        with pytest.raises(RuntimeError) as e:
            batches(data)
        # the user's call stack shows write_into's frame too: all else must read the same
        errors.append((type(e.value), [line for line in str(e.value).splitlines() if not line.startswith(" ")]))
    assert errors[0] == errors[1]
    assert any(message in line for line in errors[0][1])


def error_line(ops, mode):
    """The '[ERROR] map operation' line of the failure of ``ops`` on a batch whose sample 3 has 2 channels."""
    imgs = [np.full((4, 5, 3), 9, np.uint8)] * 3 + [np.full((4, 5, 2), 9, np.uint8)] + [np.full((4, 5, 3), 9, np.uint8)]
    data = ds.GeneratorDataset(lambda: iter([(x, np.int32(i)) for i, x in enumerate(imgs)]), ["image", "label"],
                               shuffle=False)
    with pytest.raises(RuntimeError) as e:
        batches(data.map(ops, input_columns="image", **MODES[mode]).batch(5))
    (line,) = [x for x in str(e.value).splitlines() if x.startswith("[ERROR] map operation")]
    return line


@pytest.mark.parametrize("chain", [False, True])
@pytest.mark.parametrize("mode", list(MODES))
def test_a_fused_op_failing_mid_batch_names_op_column_and_sample(mode, chain, monkeypatch):
    head = [transforms.TypeCast(mstype.uint8)] if chain else []
    got = error_line(head + tail(), mode)
    with monkeypatch.context() as patch:  # without the direct write (in this process: serial)
        patch.setattr(stage_program, "_batch_writer", lambda m, batch: None)
        want = error_line(head + tail(), "serial")
    assert got == want
    # (in a chain the fused op is named by its class, with or without the direct write)
    names = "NormalizeHWC2CHW" if chain else "RandomHorizontalFlip, Normalize, HWC2CHW"
    assert got == (f"[ERROR] map operation: [{names}] failed. Normalize: number of channels does not match the "
                   "size of mean and std vectors, got channels: 2, size of mean: 3 (column: ['image'], sample index: 3)")


def test_the_engine_asks_for_the_direct_write_only_where_the_batch_takes_the_column():
    data = ds.NumpySlicesDataset({"x": np.zeros((4, 4), np.int16), "y": np.zeros(4)}, shuffle=False)
    seen = []
    real = stage_program._batch_writer

    def spy(m, batch):
        got = real(m, batch)
        seen.append(got is not None)
        return got
    stage_program._batch_writer = spy
    try:
        for d in (data.map(Double(), input_columns="x").batch(2),
                  data.map(Double(), input_columns="x").padded_batch(2, pad_info={"x": ([4], 0)}),
                  data.map(Double(), input_columns="x").padded_batch(2, pad_info={"y": None}),
                  data.map(Double(), input_columns="x").batch(2, per_batch_map=lambda x, i: (x,), input_columns=["x"]),
                  data.map(Double(), input_columns="x").batch(2, per_batch_map=lambda y, i: (y,), input_columns=["y"]),
                  data.map(Double(direct=False), input_columns="x").batch(2)):
            seen.append("|")
            batches(d)
    finally:
        stage_program._batch_writer = real
    runs = "".join("|" if s == "|" else "T" if s else "F" for s in seen).split("|")[1:]
    assert [set(r) for r in runs] == [{"T"}, {"F"}, {"T"}, {"F"}, {"T"}, {"F"}]
