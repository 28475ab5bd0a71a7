"""One behaviour and one error layout whatever the worker mode (issue 12, item 8).

The same failing pipeline gives the same exception type, cause type and message in the caller's
thread, in thread workers and in worker processes (fork and spawn); only the note saying where
the call ran ("in thread '...' (pid N) of ..." / "in worker K (pid N) of ...") names the mode.
Rows of every dtype (datetime64 and timedelta64 included) travel to and from worker processes.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import headrace.dataset as ds
from headrace._util.errors import PipelineError

MODES = {
    "inline": dict(num_parallel_workers=1),
    "threads": dict(num_parallel_workers=2, python_multiprocessing=False),
    "fork": dict(num_parallel_workers=2, python_multiprocessing=True),
    "spawn": dict(num_parallel_workers=2, python_multiprocessing=True, start="spawn"),
    "fork-pipes": dict(num_parallel_workers=2, python_multiprocessing=True, shm=False),
}


def gen():
    for i in range(6):
        yield (np.array(i), np.array(-i))


def raises(x):
    if int(x) == 3:
        raise KeyError("boom")
    return x


def two_columns(x):
    return (x, x) if int(x) == 3 else x


def ragged(x):
    return [[1, 2], [3]] if int(x) == 3 else np.array([1, 2])


def ragged_second(x):
    return (x, [[1, 2], [3]] if int(x) == 3 else np.array([1, 2]))


def unsupported(x):
    return {1, 2} if int(x) == 3 else x


def ragged_batch(a, info):
    return ([[1, 2], [3]],) if info.get_batch_num() == 1 else (a,)


def _map(fn, out=None):
    return lambda kw: ds.GeneratorDataset(gen, ["a", "b"], shuffle=False).map(fn, ["a"], out, **kw)


FAILURES = {
    "raises": (_map(raises), KeyError, "[ERROR] map operation: [PyFunc]: KeyError: 'boom'", 3),
    "column-count": (_map(two_columns), type(None), "the number of columns returned in 'map' operations should "
                     "match the number of 'output_columns', but got the number of columns returned in 'map' "
                     "operations: 2, the number of 'output_columns': 1. Set output_columns to 2 name(s).", 3),
    "ragged": (_map(ragged), ValueError, "an output is not convertible to an array: ValueError: setting an array "
               "element with a sequence.", 3),
    "ragged-second-output": (_map(ragged_second, ["a", "c"]), ValueError, "A list whose items have different "
                             "lengths (ragged) is not a tensor: return lists of equal lengths or a NumPy array.", 3),
    "unsupported": (_map(unsupported), TypeError, "an output is not convertible to an array: cannot convert a "
                    "value of type set to a NumPy array of numbers, strings or bytes", 3),
    "ragged-per-batch-map": (lambda kw: ds.GeneratorDataset(gen, ["a", "b"], shuffle=False).batch(
        2, per_batch_map=ragged_batch, input_columns=["a"], **kw), ValueError,
        "[ERROR] batch operation: [per_batch_map] failed at column: ['a'], sample index: 1. an output is not "
        "convertible to an array: ValueError: setting an array element with a sequence.", 1),
}


def run(build, mode: str) -> tuple[list, BaseException | None]:
    kw = dict(MODES[mode])
    ds.config.set_multiprocessing_start_method(kw.pop("start", "fork"))
    ds.config.set_enable_shared_mem(kw.pop("shm", True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # more workers than CPUs on a small machine
        d = build(kw)
    rows = []
    it = d.create_tuple_iterator(output_numpy=True)
    try:
        for r in it:
            rows.append(r)
    except Exception as e:  # noqa: BLE001 - compared below
        return rows, e
    finally:
        it.stop()  # a failed iterator's workers stop now, not at exit
    return rows, None


def layout(err: BaseException) -> tuple:
    notes = [re.sub(r"^in (thread '[^']+'|worker \d+) \(pid \d+\) of ", "in WORKER (pid N) of ", n)
             for n in getattr(err, "__notes__", [])]
    return type(err), type(err.__cause__), str(err), err.op, err.columns, err.index, notes


@pytest.mark.parametrize("failure", FAILURES.keys())
def test_a_failure_has_one_type_and_one_message_in_every_worker_mode(failure):
    build, cause, text, index = FAILURES[failure]
    got = {}
    for mode in MODES:
        rows, err = run(build, mode)
        assert err is not None, mode
        assert type(err) is PipelineError and isinstance(err, RuntimeError), (mode, repr(err))
        assert type(err.__cause__) is cause, (mode, repr(err.__cause__))
        assert text in str(err), (mode, str(err))
        assert err.index == index, mode
        assert f"sample index: {index}" in str(err)
        got[mode] = layout(err)
    base = got["threads"]
    for mode, lay in got.items():
        if mode == "inline":  # no worker: no note saying where it ran
            assert lay[:6] == base[:6] and lay[6] == [], mode
        else:
            assert lay == base, (mode, lay, base)
    stage = "batch operation" if failure == "ragged-per-batch-map" else "map operation: [PyFunc]"
    assert base[6] == [f"in WORKER (pid N) of {stage}"]


def datetime_rows():
    for i in range(5):
        yield (np.array(np.datetime64("2024-01-01") + i), np.arange(i, i + 600).astype("datetime64[s]"),
               np.array(np.timedelta64(i, "h")), np.zeros((2, 0), "M8[D]"))


COLS = ["day", "seconds", "delta", "empty"]


@pytest.mark.parametrize("mode", [m for m in MODES if m != "inline"])
@pytest.mark.parametrize("shape", ["source", "map", "map-batch"])
def test_datetime64_rows_travel_in_every_worker_mode(mode, shape):
    def build(kw):
        if shape == "source":
            return ds.GeneratorDataset(DatetimeSource(), COLS, shuffle=False, **kw)
        d = ds.GeneratorDataset(datetime_rows, COLS, shuffle=False).map(lambda *c: c, COLS, **kw)
        return d.batch(5) if shape == "map-batch" else d

    rows, err = run(build, mode)
    assert err is None, str(err)
    want = [tuple(r) for r in datetime_rows()]
    if shape == "map-batch":
        want = [tuple(np.stack([w[c] for w in want]) for c in range(4))]
    assert len(rows) == len(want)
    for got, exp in zip(rows, want):
        for g, e in zip(got, exp):
            assert g.dtype == e.dtype and g.shape == e.shape and np.array_equal(g, e)


class DatetimeSource:
    def __init__(self):
        self.rows = [tuple(r) for r in datetime_rows()]

    def __getitem__(self, i):
        return self.rows[i]

    def __len__(self):
        return len(self.rows)
