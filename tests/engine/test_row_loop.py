"""The C row loop of a stage that reads a random-access source and maps one column
(``headrace/_native/_rows.c``, called by ``stage_program._one_map``): rows, random draws and errors
must be exactly those of the Python loop it stands for."""
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace.dataset as ds
from headrace._engine.exec import stage_program
from headrace._util import rng

needs_rows = pytest.mark.skipif(stage_program._rows is None, reason="headrace._native._rows is not built")


def test_the_loop_is_built_where_the_test_command_requires_it():
    # scripts/test.sh sets HEADRACE_REQUIRE_NATIVE=1 where a compiler built the native code
    if os.environ.get("HEADRACE_REQUIRE_NATIVE") != "1":
        pytest.skip("HEADRACE_REQUIRE_NATIVE is not set")
    assert stage_program._rows is not None

# what the source returns for an index, by kind
ROWS = {
    "arrays": lambda i: (np.full(3, i, np.int32), np.array(i * 2, np.int64)),
    "list": lambda i: [np.full(3, i, np.int32), [i * 2]],
    "scalars": lambda i: (int(i), float(i) / 2),
    "object": lambda i: (np.array([i, None], dtype=object), np.array(i)),
    "one": lambda i: (np.full(3, i, np.int32),),
    "wide": lambda i: (np.full(3, i, np.int64), np.array(i * 2, np.int32)),  # arrays of other dtypes
    "raise": lambda i: (_ for _ in ()).throw(ValueError(f"no row {i}")),
}


class Source:
    def __init__(self, kinds):
        self.kinds = kinds

    def __len__(self):
        return len(self.kinds)

    def __getitem__(self, i):
        return ROWS[self.kinds[i]](i)


def _plus_key(x):  # an array, with the row's sample key (the cursor the loop sets; not the seed)
    _seed, op, pass_index, index = rng.get_sample_key()
    return np.asarray(x) + 1000 * index + 100 * pass_index + op


def _as_list(x):  # not an array: the row goes through the map's finish
    return np.asarray(x).tolist()


def _fails_at_7(x):
    if int(np.asarray(x).ravel()[0]) == 7:
        raise KeyError("seven")
    return np.asarray(x) * 3


MAPS = {"key": _plus_key, "list": _as_list, "fails at 7": _fails_at_7}


def _run(kinds, fn, column, batch, native):
    saved = stage_program._rows
    stage_program._rows = saved if native else None
    try:
        # (as many workers for the source as for the map: the source is read in the map's stage)
        data = ds.GeneratorDataset(Source(kinds), ["a", "b"], shuffle=False, num_parallel_workers=1)
        data = data.map(MAPS[fn], input_columns=[column], num_parallel_workers=1).batch(batch)
        it = data.create_tuple_iterator(output_numpy=True, num_epochs=1)
        out = []
        try:
            for row in it:
                out.append([(v.dtype.str, v.shape, v.tobytes()) for v in row])
        except Exception as e:  # noqa: BLE001 - compared between the loops
            out.append((type(e).__name__, str(e)))
        finally:
            it.stop()
        return out
    finally:
        stage_program._rows = saved


@needs_rows
@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["arrays"] * 6 + sorted(ROWS)), min_size=1, max_size=12),
       st.sampled_from(sorted(MAPS)), st.sampled_from(["a", "b"]), st.integers(1, 5))
def test_the_c_loop_gives_what_the_python_loop_gives(kinds, fn, column, batch):
    c = _run(kinds, fn, column, batch, native=True)
    py = _run(kinds, fn, column, batch, native=False)
    assert c == py
    assert c  # a batch or an error at least


@needs_rows
def test_the_c_loop_runs_for_a_read_and_map_stage(monkeypatch):
    called = []
    real = stage_program._rows

    class Spy:
        def read_map(self, *args):
            called.append(args[3])  # n: the source's column count (its rows are checked)
            return real.read_map(*args)

    monkeypatch.setattr(stage_program, "_rows", Spy())
    out = _run(["arrays"] * 4, "fails at 7", "a", 2, native=True)
    assert called == [2, 2] and len(out) == 2


class _Prog:
    """Stands for a StageProgram: ``stopped`` turns true once ``after`` rows were read."""

    def __init__(self, out, after):
        self.out, self.after = out, after

    @property
    def stopped(self):
        return len(self.out) >= self.after


class _Cursor:
    index = -1


def _call(items, get, out, prog, read_fail=None, map_fail=None, fn=lambda x: x + 1, n=2, phase=None):
    def fail(e, at):
        raise RuntimeError(f"failed at {at}: {type(e).__name__}: {e}") from e

    return stage_program._rows.read_map(items, get, None, n, np.ndarray, np.dtype(object), fn, 0, 0, _Cursor(),
                                        prog, out, read_fail or fail, map_fail or fail, None, 10,
                                        [False] if phase is None else phase)


@needs_rows
def test_the_c_loop_stops_between_rows_and_reports_failures_through_the_handlers():
    row = lambda i: (np.array([i]), np.array(i))  # noqa: E731
    out: list = []
    assert _call(range(5), row, out, _Prog(out, 3)) is True
    assert [int(a[0]) for a, _ in out] == [1, 2, 3]
    out = []
    assert _call([4, 5], row, out, _Prog(out, 9)) is False and len(out) == 2
    with pytest.raises(RuntimeError, match=r"^failed at 3: ZeroDivisionError: integer division or modulo by zero$"):
        _call(range(5), lambda i: (np.array([1 // (i - 3)]), np.array(i)), [], _Prog([], 9))
    with pytest.raises(RuntimeError, match=r"^failed at 12: TypeError: bad$"):  # pos 10 + row 2
        _call(range(5), row, [], _Prog([], 9), fn=lambda x: (_ for _ in ()).throw(TypeError("bad")) if x[0] == 2 else x)
    # an exception that is no Exception passes the handlers by, as "except Exception" lets it
    with pytest.raises(KeyboardInterrupt):
        _call(range(5), lambda i: (_ for _ in ()).throw(KeyboardInterrupt()), [], _Prog([], 9))
    with pytest.raises(RuntimeError, match="^a failure handler of the row loop returned instead of raising$"):
        _call(range(5), lambda i: 1 // 0, [], _Prog([], 9), read_fail=lambda e, at: None)


@needs_rows
def test_the_c_loop_checks_its_arguments():
    row = lambda i: (np.array([i]), np.array(i))  # noqa: E731
    with pytest.raises(ValueError, match=r"^one and at must be 0 or 1, phase \(and same\) a list of one item at least$"):
        _call(range(2), row, [], _Prog([], 9), phase=[])
    with pytest.raises(TypeError):
        _call(range(2), row, (), _Prog([], 9))  # out must be a list
    with pytest.raises(TypeError, match="not iterable"):
        _call(3, row, [], _Prog([], 9))


class _SlottedProg:
    """A StageProgram's shape: ``stopped`` is a __slots__ member, which the loop reads directly."""

    __slots__ = ("stopped",)


class _SlottedCursor:
    __slots__ = ("index",)


@needs_rows
def test_the_c_loop_reads_and_writes_slots_as_attribute_access_would():
    prog, cursor, out, seen = _SlottedProg(), _SlottedCursor(), [], []
    prog.stopped = False

    def get(i):
        if i == 3:
            prog.stopped = 1  # any true value, set between rows (as closing a stage does)
        return np.array([i]), np.array(i)

    def fn(x):
        seen.append(cursor.index)  # the row's pass position, written by the loop before the map
        return x + 1

    def call(items, p=prog, c=cursor):
        return stage_program._rows.read_map(items, get, None, 2, np.ndarray, np.dtype(object), fn, 0, 0, c, p, out,
                                            None, None, None, 10, [False])

    assert call(range(6)) is True  # stopped before row 4: rows 0..3 done
    assert [int(a[0]) for a, _ in out] == [1, 2, 3, 4] and seen == [10, 11, 12, 13] and cursor.index == 13
    prog.stopped, out[:], seen[:] = 0, [], []
    assert call([7, 8]) is False and seen == [10, 11]
    del prog.stopped  # an unset slot: the AttributeError that reading it raises
    with pytest.raises(AttributeError, match="stopped"):
        call([1])
    prog.stopped = np.bool_(True)  # truthiness, not identity with True
    assert call([1]) is True

    class Odd:  # __setattr__ of its own: written through it, not the slot
        __slots__ = ("index", "writes")

        def __setattr__(self, name, value):
            object.__setattr__(self, "writes", getattr(self, "writes", 0) + 1)
            object.__setattr__(self, name, value)

    odd, prog.stopped, seen[:] = Odd(), False, []
    assert call([5, 6], c=odd) is False and odd.index == 11 and odd.writes == 2  # one call per row


@needs_rows
def test_the_c_loop_checks_dtypes_of_a_type_without_numpys_getter():
    # ``nd`` whose ``dtype`` is a Python property: asked through attribute access, per value
    class Arr:
        asked = 0

        def __init__(self, dtype):
            self._dtype = dtype

        @property
        def dtype(self):
            Arr.asked += 1
            return self._dtype

    obj, out = object(), []
    got = stage_program._rows.read_map(range(3), lambda i: (Arr("f4"), Arr(obj if i == 2 else "i8")), lambda r: ("c",) + r,
                                       2, Arr, obj, lambda x: x, 0, 0, _Cursor(), _Prog([], 9), out, None, None,
                                       lambda row, v, p: (row, v, p), 0, [False])
    assert got is False and Arr.asked == 6  # two values a row
    # rows 0 and 1 passed as they were (a pair); row 2, of dtype obj, was converted (three values)
    assert [len(rec) for rec in out] == [2, 2, 3] and out[2][0][0] == "c" and out[2][2] == 2


@needs_rows
def test_the_c_loop_says_whether_every_row_has_the_first_rows_dtypes():
    def run(rows, fn=lambda x: x + 1, n=2, stop_after=9):
        out, same = [], [None]
        stopped = stage_program._rows.read_map(range(len(rows)), rows.__getitem__, lambda r: tuple(map(np.asarray, r)), n,
                                               np.ndarray, np.dtype(object), fn, 0, 0, _Cursor(), _Prog(out, stop_after),
                                               out, None, None, lambda row, v, p: (v, row[1]), 0, [False], same)
        return stopped, same[0]

    pair = lambda a, b: (np.array([a], np.float32), np.array(b, np.int32))  # noqa: E731
    assert run([pair(1, 2), pair(3, 4), pair(5, 6)]) == (False, True)
    # a label of another dtype (each row passes the row check on its own)
    assert run([pair(1, 2), (np.array([3], np.float32), np.array(4, np.int64))]) == (False, False)
    assert run([pair(1, 2), (np.array([3], np.float64), np.array(4, np.int32))]) == (False, False)
    assert run([pair(1, 2), [np.array([3], np.float32), np.array(4, np.int32)]]) == (False, False)  # converted
    assert run([pair(1, 2), pair(3, 4)], fn=lambda x: x.tolist()) == (False, False)  # through finish
    assert run([pair(1, 2), pair(3, 4)], n=-1) == (False, False)  # rows not checked as read
    assert run([]) == (False, False)
    assert run([pair(1, 2), pair(3, 4), pair(5, 6)], stop_after=1) == (True, None)  # stopped: not said
    with pytest.raises(TypeError):
        stage_program._rows.read_map(range(1), lambda i: pair(1, 2), None, 2, np.ndarray, np.dtype(object),
                                     lambda x: x, 0, 0, _Cursor(), _Prog([], 9), [], None, None, None, 0, [False], ())
