"""Hypothesis strategies for MindRecord writer cases: a schema and rows that fit it.

A case is ``{"schema": {...}, "batches": [[row, ...], ...]}`` (one ``write_raw_data`` call per
batch). Field types x shapes cover every scalar type, string, bytes and int32/int64/float32/float64
arrays of shapes ``[1]``, ``[2]``, ``[-1]``, ``[2, 3]`` and mixed ones (``[-1, 2]``, ``[2, -1]``,
``[1, -1]``). Used by the headrace round-trip test and by the MindSpore compat test.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from headrace.mindrecord._format.rows import is_whole

SCALARS = ("int32", "int64", "float32", "float64", "string", "bytes")
ARRAY_TYPES = ("int32", "int64", "float32", "float64")
SHAPES = ([1], [2], [-1], [2, 3], [-1, 2], [2, -1], [1, -1])
NAMES = ("a", "b", "label", "x_1", "Z", "data", "vec9")

_INT_BOUNDS = {"int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1)}
_NP = {"int32": np.int32, "int64": np.int64, "float32": np.float32, "float64": np.float64}


def field_spec():
    scalar = st.sampled_from(SCALARS).map(lambda t: {"type": t})
    array = st.tuples(st.sampled_from(ARRAY_TYPES), st.sampled_from(SHAPES)).map(
        lambda ts: {"type": ts[0], "shape": list(ts[1])})
    return st.one_of(scalar, array)


def schemas():
    return st.dictionaries(st.sampled_from(NAMES), field_spec(), min_size=1, max_size=4)


def _int(t):
    lo, hi = _INT_BOUNDS[t]
    # small values exercise the 1- and 2-byte widths of integer-array compression
    return st.one_of(st.integers(-130, 130), st.integers(-40000, 40000), st.integers(lo, hi))


def _float(t, big=True):
    width = 32 if t == "float32" else 64
    if big:
        return st.floats(allow_nan=False, width=width)
    return st.floats(-(2.0 ** 40), 2.0 ** 40, width=width)


def _scalar(t, big):
    if t in _INT_BOUNDS:
        return st.one_of(_int(t), _int(t).map(_NP[t]))
    if t in ("float32", "float64"):
        return st.one_of(_float(t, big), _float(t, big).map(_NP[t]))
    if t == "string":
        return st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
    return st.binary(max_size=24)


@st.composite
def _array(draw, t, shape, big):
    free = draw(st.integers(0, 3))
    dims = [free if d == -1 else d for d in shape]
    n = int(np.prod(dims))
    elem = _int(t) if t in _INT_BOUNDS else _float(t, big)
    values = draw(st.lists(elem, min_size=n, max_size=n))
    arr = np.array(values, dtype=_NP[t]).reshape(dims)
    # the writer accepts any array of the right size; the reader gives back the schema's shape
    return arr.reshape(-1) if draw(st.booleans()) else arr


def row(schema, big_floats=True):
    return st.fixed_dictionaries({name: (_array(spec["type"], spec["shape"], big_floats) if "shape" in spec
                                         else _scalar(spec["type"], big_floats))
                                  for name, spec in schema.items()})


@st.composite
def cases(draw, max_rows=6, big_floats=True):
    """``big_floats=False`` keeps floats within +-2**40: MindSpore stores a whole float beyond
    int64 (1e300) as INT64_MIN, headrace keeps the float."""
    schema = draw(schemas())
    rows = draw(st.lists(row(schema, big_floats), min_size=1, max_size=max_rows))
    cut = draw(st.integers(0, len(rows) - 1))
    batches = [rows[:cut], rows[cut:]] if cut else [rows]
    return {"schema": schema, "batches": batches}


def expected(schema, value_row):
    """What FileReader gives back for a written row: Python scalars, arrays in the schema's shape."""
    out = {}
    for name, spec in schema.items():
        v = value_row[name]
        if "shape" in spec:
            out[name] = np.asarray(v).reshape(spec["shape"])
        else:
            v = v.item() if isinstance(v, np.generic) else v
            # FileReader gives a whole float back as an int (MindSpore's rule, see rows.is_whole)
            out[name] = int(v) if isinstance(v, float) and is_whole(v) else v
    return out


def assert_rows_equal(got, want, where=""):
    """Exact equality: same fields, Python types of scalars, dtypes and shapes of arrays."""
    assert len(got) == len(want), f"{where}: {len(got)} rows, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert sorted(g) == sorted(w), f"{where} row {i}: fields {sorted(g)} vs {sorted(w)}"
        for k in w:
            a, b = g[k], w[k]
            at = f"{where} row {i} field {k}"
            if isinstance(b, np.ndarray):
                assert isinstance(a, np.ndarray), f"{at}: {a!r}"
                assert (a.dtype, a.shape) == (b.dtype, b.shape), f"{at}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
                assert a.tobytes() == b.tobytes(), f"{at}: {a!r} vs {b!r}"
            else:
                assert type(a) is type(b), f"{at}: {type(a).__name__} vs {type(b).__name__}"
                if isinstance(b, float):
                    assert np.float64(a).tobytes() == np.float64(b).tobytes(), f"{at}: {a!r} vs {b!r}"
                else:
                    assert a == b, f"{at}: {a!r} vs {b!r}"
