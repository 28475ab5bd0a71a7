"""The per-row fast paths of a stage: lazily assembled RNG keys, the source -> map loop and the
collate shortcut give exactly what the general paths give."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import headrace.dataset as ds
from headrace._engine.ops.batch import collate
from headrace._util import rng
from headrace._util.errors import PipelineError
from tests.helpers import rows


# ---- rng cursor -------------------------------------------------------------------------------

def test_cursor_keys_like_set_sample_key_and_continues_a_sample_stream():
    cursor, prev = rng.enter_cursor(7, 3, 1)
    try:
        got = []
        for i in range(4):
            cursor.index = i
            got.append((rng.get_sample_key(), rng.sample_rng().integers(0, 1 << 30, 3).tolist(),
                        rng.sample_rng().integers(0, 1 << 30)))
    finally:
        rng.leave_cursor(prev)
    want = []
    for i in range(4):
        rng.set_sample_key((7, 3, 1, i))
        want.append(((7, 3, 1, i), rng.sample_rng().integers(0, 1 << 30, 3).tolist(),
                     rng.sample_rng().integers(0, 1 << 30)))
    rng.set_sample_key(None)
    assert got == want


def test_a_new_cursor_starts_fresh_streams_and_leaving_restores_the_previous_key():
    with rng.sample_key((1, 2, 3, 4)):
        first = rng.sample_rng().integers(0, 1 << 30)
        for _ in range(2):  # the same key under a new cursor: the stream starts again
            cursor, prev = rng.enter_cursor(9, 9, 9)
            cursor.index = 5
            a = rng.sample_rng().integers(0, 1 << 30)
            rng.leave_cursor(prev)
            assert a == rng.key_rng(9, 9, 9, 5).integers(0, 1 << 30)
        assert rng.get_sample_key() == (1, 2, 3, 4)
        assert rng.sample_rng().integers(0, 1 << 30) == rng.key_rng(1, 2, 3, 4).integers(0, 1 << 30, 2)[1] != first
    assert rng.get_sample_key() is None


def test_cursors_are_per_thread():
    cursor, prev = rng.enter_cursor(1, 1, 1)
    seen = []
    t = threading.Thread(target=lambda: seen.append(rng.get_sample_key()))
    t.start()
    t.join()
    rng.leave_cursor(prev)
    assert seen == [None]


# ---- the fused source -> map loop ---------------------------------------------------------------

class Rows:
    def __init__(self, n=12, width=2, bad=None):
        self.n, self.width, self.bad = n, width, bad

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            raise KeyError(f"no row {i}")
        return tuple(np.full((3,), i * 10 + c, np.float32) for c in range(self.width))


def gen(n=12, width=2):
    for i in range(n):
        yield tuple(np.full((3,), i * 10 + c, np.float32) for c in range(width))


def key_of(x):
    return np.array(rng.get_sample_key())


def noisy(x):
    return x + rng.sample_rng().integers(0, 1000)


@pytest.mark.parametrize("width", [2, 3])
@pytest.mark.parametrize("workers, procs", [(1, False), (2, False), (2, True)])
def test_keys_are_seed_op_pass_index_as_in_the_per_row_path(width, workers, procs):
    ds.config.set_seed(5)
    per_row = ds.GeneratorDataset(lambda: gen(12, width), [f"c{j}" for j in range(width)])
    per_row = rows(per_row.map(key_of, input_columns=["c0"]), num_epochs=2)
    fused = ds.GeneratorDataset(Rows(12, width), [f"c{j}" for j in range(width)], shuffle=False,
                                num_parallel_workers=workers, python_multiprocessing=procs)
    fused = fused.map(key_of, input_columns=["c0"], num_parallel_workers=workers, python_multiprocessing=procs)
    fused = rows(fused.batch(5), num_epochs=2)
    keys = [k for r in fused for k in r[0]]
    assert keys == [r[0] for r in per_row]
    assert keys == [[5, keys[0][1], e, i] for e in range(2) for i in range(12)]


def test_random_map_same_rows_in_the_fused_and_per_row_paths():
    ds.config.set_seed(11)
    per_row = rows(ds.GeneratorDataset(lambda: gen(), ["a", "b"]).map(noisy, input_columns=["b"]))
    fused = ds.GeneratorDataset(Rows(), ["a", "b"], shuffle=False).map(noisy, input_columns=["b"])
    assert rows(fused.batch(4)) == [[[r[c] for r in per_row[k:k + 4]] for c in range(2)]
                                    for k in range(0, 12, 4)]


@pytest.mark.parametrize("out, want", [(lambda x: int(x[0]), lambda i: i * 10),
                                       (lambda x: np.float32(x[0]), lambda i: float(i * 10)),
                                       (lambda x: [1, 2], lambda i: [1, 2])])
def test_outputs_that_are_not_arrays_are_converted_in_the_fast_loop(out, want):
    d = ds.GeneratorDataset(Rows(6), ["a", "b"], shuffle=False).map(out, input_columns=["a"])
    assert [r[0] for r in rows(d)] == [want(i) for i in range(6)]


def test_map_and_read_failures_in_the_fast_loop_name_op_column_and_index():
    def fails_at_7(x):
        if x[0] == 71:
            raise ValueError("not 7")
        return x

    d = ds.GeneratorDataset(Rows(12), ["a", "b"], shuffle=False).map(fails_at_7, input_columns=["b"])
    with pytest.raises(RuntimeError, match=r"(?s)failed at column: \[.b.\], sample index: 7.*in fails_at_7.*not 7"):
        rows(d.batch(3))
    d = ds.GeneratorDataset(Rows(12), ["a", "b"], shuffle=False).map(lambda x: (x, x), input_columns=["a"])
    with pytest.raises(RuntimeError, match="returned in 'map' operations: 2, the number of 'output_columns': 1"):
        rows(d)
    d = ds.GeneratorDataset(Rows(12, bad=4), ["a", "b"], shuffle=False).map(lambda x: x, input_columns=["a"])
    it = d.create_tuple_iterator(output_numpy=True)
    assert [int(next(it)[0][0]) for _ in range(4)] == [0, 10, 20, 30]
    with pytest.raises(RuntimeError, match="no row 4"):
        next(it)
    it.stop()


def test_a_pipeline_run_inside_a_map_leaves_the_outer_keys_alone():
    def inner_then_draw(x):
        list(ds.GeneratorDataset(Rows(3), ["a", "b"], shuffle=False).map(noisy, input_columns=["a"])
             .create_tuple_iterator(output_numpy=True))
        return noisy(x)

    ds.config.set_seed(2)
    want = rows(ds.GeneratorDataset(Rows(6), ["a", "b"], shuffle=False).map(noisy, input_columns=["a"]))
    ds.config.set_seed(2)
    got = rows(ds.GeneratorDataset(Rows(6), ["a", "b"], shuffle=False).map(inner_then_draw, input_columns=["a"]))
    assert got == want


# ---- collate ------------------------------------------------------------------------------------

@pytest.mark.parametrize("values", [
    [np.arange(4, dtype=np.float32) + i for i in range(3)],
    [np.asarray(np.int32(i)) for i in range(5)],
    [np.array([True, False])] * 2,
    [np.zeros((2, 3), np.complex64)] * 4,
    [np.arange(6, dtype=np.int16).reshape(2, 3)[:, ::2]] * 3,   # strided views
    [np.array(["ab", "c"]), np.array(["d", "efg"])],             # strings: np.stack's path
])
def test_collate_equals_np_stack(values):
    got = collate(values, 0, "v")
    want = np.stack(values)
    assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
    assert got.flags.c_contiguous


@pytest.mark.parametrize("values, message", [
    ([np.zeros(3, np.int32), np.zeros(3, np.int64)], "different types"),
    ([np.zeros(3, np.float32), np.zeros(3, np.float16)], "different types"),
    ([np.zeros(3, np.float32), np.zeros(4, np.float32)], "different shapes"),
    ([np.zeros((2, 2), np.uint8), np.zeros(2, np.uint8)], "different shapes"),
    ([np.zeros((1, 2), np.uint8), np.zeros((2, 1), np.uint8)], "different shapes"),
])
def test_collate_still_refuses_mixed_rows(values, message):
    with pytest.raises(PipelineError, match=message):
        collate(values, 0, "v")


def test_collate_of_array_subclasses_is_np_stack_and_of_dicts_a_dict_of_arrays():
    class Sub(np.ndarray):
        pass

    subs = [np.zeros(3, np.float32).view(Sub) for _ in range(2)]
    assert type(collate(subs, 0, "v")) is type(np.stack(subs))
    got = collate([{"a": 1, "b": "x"}, {"a": 2, "b": "yy"}], 0, "v")  # MindSpore batches dicts key by key
    assert list(got) == ["a", "b"]
    assert got["a"].dtype == np.int64 and got["a"].tolist() == [1, 2]
    assert got["b"].dtype == np.dtype("<U2") and got["b"].tolist() == ["x", "yy"]
    with pytest.raises(PipelineError, match="have different keys: a row lacks the first row's key 'a'"):
        collate([{"a": 1}, {"b": 2}], 0, "v")


# ---- tasks carry consecutive source indices as a range ------------------------------------------

@pytest.mark.parametrize("kwargs", [dict(shuffle=False), dict(shuffle=True),
                                    dict(sampler=ds.SequentialSampler(start_index=3, num_samples=7)),
                                    dict(sampler=ds.SubsetSampler([4, 5, 6, 8, 9]))])
@pytest.mark.parametrize("workers, procs", [(1, False), (2, False), (2, True)])
def test_tasks_read_the_planned_indices_whether_consecutive_or_not(kwargs, workers, procs):
    def make():
        d = ds.GeneratorDataset(Rows(12), ["a", "b"], num_parallel_workers=workers, python_multiprocessing=procs,
                                **kwargs)
        return d.map(noisy, input_columns=["a"], num_parallel_workers=workers, python_multiprocessing=procs)

    ds.config.set_seed(4)
    want = rows(make(), num_epochs=2)
    ds.config.set_seed(4)
    got = rows(make().batch(3), num_epochs=2)
    n = len(want) // 2  # rows per epoch; batches do not cross epochs
    assert [[r[c] for r in want[e * n:][k:min(k + 3, n)]] for e in range(2) for k in range(0, n, 3)
            for c in range(2)] == [col for b in got for col in b]


def test_span_is_a_range_only_for_consecutive_indices():
    from headrace._engine.ops.base import BuildContext
    from headrace._engine.ops.source import ReadStep

    class Source:
        def __len__(self):
            return 12

        def read(self, i):
            return (np.array(i),)

    class Node:
        name, source, labels = "src", Source(), None

        def __init__(self, sampler):
            self.sampler = sampler

    class Opts:
        seed = 1

    for plan, want in [(ds.SequentialSampler(start_index=2).parse(), range(4, 7)),
                       (ds.SubsetSampler([3, 1, 2]).parse(), None), (ds.SubsetSampler([5]).parse(), range(5, 5))]:
        it = ReadStep(BuildContext(1, Opts()), Node(plan))
        it.reset(0)
        span = it.span(2, 5)
        if want is None:
            assert type(span) is np.ndarray and span.tolist() == it.indices[2:5].tolist()
        else:
            assert span == want and list(span) == [int(i) for i in it.indices[2:5]]
