"""Map and filter: a function per row.

The work on one row lives in two small picklable callables, :class:`MapFn` and :class:`FilterFn`,
that set the row's RNG key (``(seed, op id, pass, index)``) in whichever thread or process runs
them; for a user function in a run with a seed set, they also seed ``np.random`` and ``random``
from that key around the call (``rng.GlobalSeeds``). ``MapStep`` and
``FilterStep`` are the ops as members of a stage (``exec/stage.py``), the one place that runs
these callables, inline, on threads or in processes, so every mode gives the same rows.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from headrace._engine.ops.base import BuildContext, Step
from headrace._util import rng
from headrace._util.arrays import to_array
from headrace._util.errors import PipelineError, not_an_array, user_error
from headrace._util.types import Row

_set_key = rng.set_sample_key
_ndarray = np.ndarray


def calls_user_code(fn: Any) -> bool:
    """Whether ``fn`` may run user code, which may draw from ``np.random`` / ``random``.

    headrace's own transforms draw from keyed generators and need no global seeding; anything else
    (functions, lambdas, user objects, and headrace wrappers or compounds around them) does, unless
    marked deterministic with ``transforms.not_random`` (``fn.random is False``).
    """
    chained = getattr(fn, "chained_ops", None)  # a map's composed operations (dataset.transforms._compose)
    if type(chained) is tuple:
        return any(calls_user_code(op) for op in chained)
    if getattr(fn, "random", True) is False:
        return False
    if not type(fn).__module__.startswith("headrace."):
        return True
    inner = getattr(fn, "transform", None)  # a wrapper of a Python function
    if callable(inner) and inner is not fn:
        return calls_user_code(inner)
    parts = getattr(fn, "transforms", None)  # a compound op
    if isinstance(parts, (list, tuple)):
        return any(calls_user_code(op) for op in parts)
    return False


def global_seeds(ctx: BuildContext, fn: Any, op_id: int) -> rng.GlobalSeeds | None:
    """The per-sample seeding of the global generators for ``fn``, when the run wants it."""
    if fn is None or not getattr(ctx, "seed_globals", False) or not calls_user_code(fn):
        return None
    return rng.GlobalSeeds(op_id)


def make_assembler(layout: tuple[tuple[str, int], ...]) -> Callable[[Row, Any], Row]:
    """A function building an output row from (input row, function outputs) per ``layout``."""
    return _Assembler(layout)


class _Assembler:
    """Picklable ``(row, outputs) -> row`` following ``layout`` (("in", i) | ("out", j) per column)."""

    __slots__ = ("spec", "replace_at")

    def __init__(self, layout: tuple[tuple[str, int], ...]) -> None:
        self.spec = tuple((kind == "in", j) for kind, j in layout)
        # The common case: one output standing in place of one input column.
        outs = [p for p, (from_in, _) in enumerate(self.spec) if not from_in]
        in_place = all(from_in and j == p for p, (from_in, j) in enumerate(self.spec) if p not in outs)
        self.replace_at = outs[0] if len(outs) == 1 and self.spec[outs[0]][1] == 0 and in_place else None

    def __call__(self, row: Row, out: Any) -> Row:
        p = self.replace_at
        if p is not None and len(row) == len(self.spec):
            return self.place(row, out[0])
        return tuple([row[j] if from_in else out[j] for from_in, j in self.spec])

    def place(self, row: Row, value: Any) -> Row:
        """``row`` with ``value`` at ``replace_at`` (the in-place single-output case)."""
        p = self.replace_at
        if len(row) == 2:
            return (value, row[1]) if p == 0 else (row[0], value)
        r = list(row)
        assert p is not None
        r[p] = value
        return tuple(r)


class _RowFn:
    """What a map and a filter share: the op's input columns, and a call on one row under the
    row's RNG key (``__call__``) around the op's own ``apply``."""

    __slots__ = ("idx", "name", "op_id", "in_names", "globals")

    def __init__(self, node: Any, name: str, op_id: int, globals_: rng.GlobalSeeds | None) -> None:
        self.globals = globals_
        self.idx = node.input_idx
        self.name = name
        self.op_id = op_id
        self.in_names = tuple(node.children[0].columns[i] for i in node.input_idx)

    def __call__(self, row: Row, seed: int, pass_index: int, index: int) -> Any:
        g = self.globals
        if g is None:
            _set_key((seed, self.op_id, pass_index, index))
            return self.apply(row, index)
        token = g.enter(seed, pass_index, index)
        try:
            return self.apply(row, index)
        finally:
            g.leave(token)

    def apply(self, row: Row, index: int) -> Any:
        raise NotImplementedError


class MapFn(_RowFn):
    """One map op on one row: ``fn(*input columns)``, converted, checked and placed per the layout."""

    __slots__ = ("fn", "one", "n_out", "assemble")

    def __init__(self, node: Any, op_id: int, globals_: rng.GlobalSeeds | None = None) -> None:
        super().__init__(node, node.name, op_id, globals_)
        self.fn = node.fn
        self.one = node.input_idx[0] if len(node.input_idx) == 1 else None
        self.n_out = len(node.out_names)
        self.assemble = _Assembler(node.layout)

    def apply(self, row: Row, index: int) -> Row:
        """The op on one row whose RNG key the caller has set (a stage's loop sets it through
        this thread's ``rng.sample_cursor``)."""
        try:
            out = self.fn(row[self.one]) if self.one is not None else self.fn(*[row[i] for i in self.idx])
        except Exception as e:  # noqa: BLE001 - any failure of a user's op is reported with its sample
            self.fail(e, index)
        return self.finish(row, out, index)

    def fail(self, e: Exception, index: int) -> None:
        """Raises what a failure ``e`` of the function on row ``index`` is reported as."""
        if isinstance(e, PipelineError):
            raise e.with_location(self.in_names, index) from e.__cause__
        raise user_error(self.name, e, columns=self.in_names, index=index) from e

    def fast_path(self) -> tuple[Callable, int, int] | None:
        """``(function, input column, output column)`` when the op reads one column of a
        two-column row and writes one output in place: a stage's loop then calls the function
        itself and builds the row, and hands anything but an ndarray result to ``finish``."""
        at = self.assemble.replace_at
        if (self.globals is not None or self.one is None or self.n_out != 1 or at is None
                or len(self.assemble.spec) != 2):
            return None
        return self.fn, self.one, at

    def finish(self, row: Row, out: Any, index: int) -> Row:
        """The output row from the function's result ``out``: converted, checked, placed."""
        if type(out) is not tuple:
            if self.n_out == 1 and self.assemble.replace_at is not None and len(row) == len(self.assemble.spec):
                if type(out) is not _ndarray:
                    try:
                        out = to_array(out)
                    except (TypeError, ValueError) as e:  # an unsupported type; a ragged list
                        raise not_an_array(self.name, e, out, columns=self.in_names, index=index) from e
                return self.assemble.place(row, out)
            out = (out,)
        if len(out) != self.n_out:
            raise PipelineError(self.name, "Invalid columns, the number of columns returned in 'map' operations "
                                "should match the number of 'output_columns', but got the number of columns "
                                f"returned in 'map' operations: {len(out)}, the number of 'output_columns': "
                                f"{self.n_out}. Set output_columns to "
                                f"{self.n_out if len(out) == 0 else len(out)} name(s).",
                                columns=self.in_names, index=index)
        try:
            arrays = [to_array(v) for v in out]
        except (TypeError, ValueError) as e:  # an unsupported type; a ragged list
            raise not_an_array(self.name, e, _first_bad(out), columns=self.in_names, index=index) from e
        return self.assemble(row, arrays)


def _first_bad(values: Any) -> Any:
    """The first of ``values`` that ``to_array`` refuses (for the error message)."""
    for v in values:
        try:
            to_array(v)
        except (TypeError, ValueError):
            return v
    return None


class FilterFn(_RowFn):
    """One filter predicate on one row: True keeps it."""

    __slots__ = ("pred",)

    def __init__(self, node: Any, op_id: int, globals_: rng.GlobalSeeds | None = None) -> None:
        super().__init__(node, "filter operation: [PyFunc]", op_id, globals_)
        self.pred = node.predicate

    def apply(self, row: Row, index: int) -> bool:
        """The predicate on one row whose RNG key the caller has set."""
        try:
            return bool(self.pred(*[row[i] for i in self.idx]))
        except Exception as e:
            raise user_error(self.name, e, columns=self.in_names, index=index) from e


class MapStep(Step):
    """A map op in a stage: its id, its plan node and the :class:`MapFn` the stage runs."""

    def __init__(self, ctx: BuildContext, node: Any) -> None:
        super().__init__(ctx, node)
        self.name = node.name
        self.spec = MapFn(node, self.op_id, global_seeds(ctx, node.fn, self.op_id))


class FilterStep(Step):
    """A filter op topping a stage: its id, its plan node and the :class:`FilterFn` the stage runs."""

    def __init__(self, ctx: BuildContext, node: Any) -> None:
        super().__init__(ctx, node)
        self.spec = FilterFn(node, self.op_id, global_seeds(ctx, node.predicate, self.op_id))
        self.name = self.spec.name
