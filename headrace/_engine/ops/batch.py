"""Batch (with per_batch_map and padding) and bucket-by-length batching."""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from headrace._engine.ops.base import BuildContext, OpIter, Step
from headrace._engine.ops.map import global_seeds, make_assembler
from headrace._util import rng
from headrace._util.arrays import ALIGN_FROM, empty_aligned, to_array
from headrace._util.errors import PipelineError, not_an_array, user_error
from headrace._util.types import BatchInfo, Row


NUMERIC_KINDS = frozenset("biufc")  # dtype kinds: bool, signed, unsigned, float, complex
_dtype_of = operator.attrgetter("dtype")
_shape_of = operator.attrgetter("shape")
_ndarray = np.ndarray


def _stack_numbers(values: Sequence[np.ndarray], same: bool = False) -> np.ndarray | None:
    """``np.stack(values)`` for plain arrays of numbers of one dtype and shape, else None.

    ``np.array`` stacks them several times faster than ``np.stack`` (which makes a view of
    every row first); anything else (ragged shapes, mixed dtypes, other types) is left to
    ``np.stack`` and the checks of :func:`collate`. ``same``: every value is known to be an
    ndarray with the first one's dtype object (the C row loop checked it as it made the rows),
    so only the shapes are checked here.
    """
    try:
        first = values[0]
        dtype = first.dtype
        n = len(values)
        if dtype.kind not in NUMERIC_KINDS or (not same and (
                list(map(type, values)).count(_ndarray) != n or list(map(_dtype_of, values)).count(dtype) != n)):
            return None
        if n * first.nbytes >= ALIGN_FROM:
            # a large batch starts 64-byte aligned (see empty_aligned: JAX then needs no copy)
            shape = first.shape
            if list(map(_shape_of, values)).count(shape) != n:
                return None
            out = empty_aligned((n,) + shape, dtype)
            out[...] = values  # as fast as np.array(values), also for many small rows (a row loop is not)
            return out
        out = np.array(values)
    except (ValueError, TypeError, AttributeError, IndexError):
        return None
    return out if out.dtype == dtype and out.shape == (n,) + first.shape else None


def collate(values: Sequence[np.ndarray], col: int, name: str, op: str = "batch operation",
            pad: tuple[Sequence[int | None] | None, Any] | None = None, same: bool = False) -> np.ndarray | dict:
    """Stacks one column of a batch into one array, padding first when ``pad`` is given.
    ``same``: see :func:`_stack_numbers`."""
    if pad is None:
        out = _stack_numbers(values, same)
        if out is not None:
            return out
        if isinstance(values[0], dict):
            return collate_dicts(values, col, name, op)
        try:  # same shapes and exactly the same dtype (checked by casting="no")
            return np.stack(values, casting="no")
        except (ValueError, TypeError, AttributeError):
            pass  # the checks below name the problem (or accept str/bytes of different lengths)
    else:
        values = pad_values(values, pad)
    first = values[0]
    dtype, shape = first.dtype, first.shape
    for v in values:
        if not isinstance(v, _ndarray):
            raise PipelineError(op, f"Cannot batch a {type(v).__name__} with arrays in column {col} ({name!r}): "
                                "every row of a column must hold an array, or every row a dict.", columns=[name])
        if v.shape != shape:
            raise PipelineError(op, f"Cannot batch tensors with different shapes in column {col} ({name!r}). "
                                f"First element had shape {_fmt(shape)} and this element had shape {_fmt(v.shape)}. "
                                "Use padded_batch (pad_info) or a per_batch_map to batch rows of different shapes.",
                                columns=[name])
        if v.dtype != dtype and not (v.dtype.kind in "US" and v.dtype.kind == dtype.kind):
            raise PipelineError(op, f"Cannot batch tensors with different types in column {col} ({name!r}): "
                                f"{dtype} and {v.dtype}. Cast them to one type first (TypeCast).",
                                columns=[name])
    return np.stack(values)


_PRIMITIVE_KINDS = frozenset("biufUS")  # what a batched dict value may hold (not object, not complex)


def collate_dicts(values: Sequence[Any], col: int, name: str, op: str = "batch operation") -> dict:
    """Batches a column of Python dicts as MindSpore does: one dict with the first row's keys, each
    value the array of that key's values over the rows (``np.array`` of them)."""
    keys = list(values[0])
    for v in values:
        if not isinstance(v, dict):
            raise PipelineError(op, f"Cannot batch a Python dict with a {type(v).__name__} in column {col} "
                                f"({name!r}): every row of the column must be a dict.", columns=[name])
        if len(v) != len(keys):
            raise PipelineError(op, "Failed to create a batch since number of key/value pairs in dictionaries "
                                f"do not match. First row: {len(keys)}, current row: {len(v)}", columns=[name])
    out = {}
    for k in keys:
        try:
            items = [v[k] for v in values]
        except KeyError:
            raise PipelineError(op, f"Failed to create a batch since the dictionaries in column {col} ({name!r}) "
                                f"have different keys: a row lacks the first row's key {k!r}.",
                                columns=[name]) from None
        try:
            arr = np.array(items)
        except (ValueError, TypeError) as e:
            raise PipelineError(op, f"Failed to batch Python dictionary: {type(e).__name__}: {e} (column {col} "
                                f"({name!r}), key {k!r})", columns=[name]) from e
        if arr.dtype.kind not in _PRIMITIVE_KINDS:
            raise PipelineError(op, "Batch: failed to create a NumPy array with primitive types for the dictionary "
                                f"objects in column {col}, key: {k!r}.\nIf you want a customized array, define a "
                                "custom 'per_batch_map' function.", columns=[name])
        out[k] = arr
    return out


def _fmt(shape: tuple[int, ...]) -> str:
    return "<" + ",".join(str(s) for s in shape) + ">"


def pad_values(values: Sequence[np.ndarray], pad: tuple[Sequence[int | None] | None, Any],
               boundary: int | None = None) -> list[np.ndarray]:
    """Every array brought to the target shape (given dims, or the batch's largest where None):
    padded with ``value`` where it is smaller, cut where it is larger (as MindSpore does)."""
    shape, value = pad
    rank = values[0].ndim
    biggest = [max(v.shape[d] for v in values) for d in range(rank)]
    if shape is None:
        target = biggest
    else:
        if len(shape) != rank:
            raise PipelineError("padded_batch operation", f"pad_shape {list(shape)} has rank {len(shape)} "
                                f"but the column has rank {rank}.")
        target = [biggest[d] if s is None else s for d, s in enumerate(shape)]
    if boundary is not None and rank:
        target[0] = max(target[0], boundary)
    out = []
    for v in values:
        if list(v.shape) == target:
            out.append(v)
            continue
        if any(s > t for s, t in zip(v.shape, target)):
            v = v[tuple(slice(0, t) for t in target)]
        fill: Any
        if v.dtype.kind in "US":  # a string column takes a str/bytes pad value, else the empty string
            fill = value if isinstance(value, (str, bytes)) else (b"" if v.dtype.kind == "S" else "")
            dtype = np.result_type(v.dtype, np.asarray(fill).dtype)  # room for a longer pad value
        else:
            fill, dtype = (0 if value is None else value), v.dtype
        padded = np.full(target, fill, dtype=dtype)
        padded[tuple(slice(0, s) for s in v.shape)] = v
        out.append(padded)
    return out


class BatchFn:
    """Makes one batch from its rows: ``per_batch_map`` (keyed by the batch number) and/or collate.

    Picklable; runs wherever the batch's stage runs (caller, thread or worker process).
    """

    __slots__ = ("cols", "out_cols", "pbm", "input_idx", "assemble", "out_count", "pad", "op_id", "globals", "rounds")

    def __init__(self, node: Any, op_id: int, globals_: Any = None) -> None:
        self.globals = globals_  # rng.GlobalSeeds for a per_batch_map in a seeded run
        self.cols = node.children[0].columns
        self.out_cols = node.columns
        self.pbm = node.per_batch_map
        self.input_idx = node.input_idx
        self.assemble = make_assembler(node.layout) if node.per_batch_map is not None else None
        self.out_count = node.out_count
        self.pad = node.pad_info or {}
        self.op_id = op_id
        self.rounds = 1  # passes per epoch (the repeats above): BatchInfo's epoch is pass // rounds

    def __call__(self, rows: list[Row], seed: int, pass_index: int, num: int,
                 built: tuple[int, np.ndarray] | None = None, same: bool = False) -> Row:
        """Batch ``num`` of the pass from ``rows``; ``built``: ``(column, array)`` when the rows of
        that column were written into one array already (see :meth:`takes_built`), which the batch
        then holds as it is; ``same``: every row is a pair of ndarrays whose dtype objects are the
        first row's, column by column (checked by the C row loop, ``stage_program._one_map``)."""
        try:
            return self._make(rows, seed, pass_index, num, built, same)
        except PipelineError as e:  # the batch number is the index (the original's cause is kept)
            raise e.with_location(None, num) from e.__cause__

    def takes_built(self, col: int) -> bool:
        """Whether column ``col`` may come as one array made beforehand, whose rows are the
        column's values (a map writing its results there): where it would be stacked as it is,
        not padded nor handed row by row to a per_batch_map."""
        return col not in self.pad and (self.pbm is None or col not in self.input_idx)

    def _make(self, rows: list[Row], seed: int, pass_index: int, num: int,
              built: tuple[int, np.ndarray] | None, same: bool = False) -> Row:
        cols = self.cols
        b, array = built if built is not None else (-1, None)
        if self.pbm is None:
            pad = self.pad
            if not pad and all(len(r) == len(cols) for r in rows[:1]):  # (rows the C loop checked are pairs)
                return tuple([array if c == b else collate(v, c, cols[c], same=same)
                              for c, v in enumerate(zip(*rows))])
            return tuple([array if c == b else collate([r[c] for r in rows], c, cols[c], pad=pad.get(c))
                          for c in range(len(cols))])
        ins = [[r[c] for r in rows] for c in self.input_idx]
        names = [cols[c] for c in self.input_idx]
        g = self.globals
        if g is None:
            rng.set_sample_key((seed, self.op_id, pass_index, num))
        else:
            token = g.enter(seed, pass_index, num)
        try:
            out = self.pbm(*ins, BatchInfo(num, pass_index // self.rounds))
        except Exception as e:
            raise user_error("batch operation: [per_batch_map]", e, columns=names, index=num) from e
        finally:
            if g is not None:
                g.leave(token)
        if type(out) is not tuple:
            out = (out,)
        if len(out) != self.out_count:
            raise PipelineError("batch operation: [per_batch_map]", f"per_batch_map returned {len(out)} "
                                f"column(s) but {self.out_count} are expected (set output_columns).",
                                columns=names, index=num)
        if any(isinstance(v, dict) or (type(v) in (list, tuple) and v and isinstance(v[0], dict)) for v in out):
            out_arrays = self._python_outputs(out, len(rows), names, num)
        else:
            out_arrays = [self._to_batch(v, j) for j, v in enumerate(out)]
        rest: list[Any] = [None] * len(cols)
        for c in range(len(cols)):
            if c not in self.input_idx:
                rest[c] = array if c == b else collate([r[c] for r in rows], c, cols[c])
        assert self.assemble is not None  # a per_batch_map batch
        return self.assemble(tuple(rest), out_arrays)

    def _out_name(self, j: int) -> str:
        return self.out_cols[j] if j < len(self.out_cols) else str(j)

    def _python_outputs(self, out: tuple, nrows: int, names: list[str], num: int) -> list[Any]:
        """per_batch_map results holding Python dicts, with MindSpore's rules: a dict is one batched
        value, kept as it is (the other results must then be dicts or arrays); a list of dicts (one
        per row) becomes a dict of lists, and every other result must then hold one value per row."""
        op = "batch operation: [per_batch_map]"
        single = any(isinstance(v, dict) for v in out)
        res: list[Any] = []
        for j, v in enumerate(out):
            if isinstance(v, dict):
                res.append(v)
            elif single:
                if not isinstance(v, np.ndarray):
                    raise PipelineError(op, "Failed to convert rows: mismatched types returned from per_batch_map "
                                        "function. If different types are returned, all of them should be "
                                        f"convertible to Python lists. Got: Python dict and {type(v).__name__} "
                                        f"(column {self._out_name(j)!r}).", columns=names, index=num)
                res.append(to_array(v))
            else:
                got = len(v) if isinstance(v, (list, tuple)) or (isinstance(v, np.ndarray) and v.ndim) else None
                if got != nrows:
                    raise PipelineError(op, f"Invalid data, column: {self._out_name(j)} expects: {nrows} rows "
                                        f"returned from 'per_batch_map', got: "
                                        f"{got if got is not None else type(v).__name__}", columns=names, index=num)
                res.append(self._rows_of_dicts(v, j, names, num) if type(v) in (list, tuple) and v
                           and isinstance(v[0], dict) else self._to_batch(v, j))
        return res

    def _rows_of_dicts(self, rows: Sequence[Any], j: int, names: list[str], num: int) -> dict:
        keys = list(rows[0])
        if any(not isinstance(r, dict) or len(r) != len(keys) for r in rows):
            raise PipelineError("batch operation: [per_batch_map]", f"per_batch_map returned a list for column "
                                f"{self._out_name(j)!r} mixing dicts with other values or dicts with different "
                                "keys; a list of dicts must hold dicts with the same keys.", columns=names, index=num)
        try:
            return {k: [r[k] for r in rows] for k in keys}
        except KeyError as e:
            raise PipelineError("batch operation: [per_batch_map]", f"per_batch_map returned dicts with different "
                                f"keys for column {self._out_name(j)!r}: a row lacks the key {e.args[0]!r}.",
                                columns=names, index=num) from None

    def _to_batch(self, value: Any, j: int) -> np.ndarray | dict:
        try:
            if isinstance(value, (list, tuple)) and value and isinstance(value[0], np.ndarray):
                return collate([to_array(v) for v in value], j,  # type: ignore[misc]
                               self.out_cols[j] if j < len(self.out_cols) else str(j))
            return to_array(value)
        except (TypeError, ValueError) as e:  # an unsupported type; a ragged list (index: __call__)
            raise not_an_array("batch operation: [per_batch_map]", e, value,
                               columns=[self.cols[c] for c in self.input_idx]) from e


class BatchStep(Step):
    """A batch op topping a stage: the :class:`BatchFn` the stage's tasks call, and the pass's
    batch numbering, which the stage plans with.

    ``size_for(num)`` is the size of batch ``num`` of the current pass (a callable batch_size is
    asked with ``BatchInfo`` only when a row is there to put in the batch).
    """

    name = "batch operation"

    def __init__(self, ctx: BuildContext, node: Any) -> None:
        super().__init__(ctx, node)
        self.spec = BatchFn(node, self.op_id, global_seeds(ctx, node.per_batch_map, self.op_id))
        self.spec.rounds = getattr(ctx, "rounds", 1)
        self._batch_num = 0
        self._done = False

    def reset(self, pass_index: int) -> None:
        self.pass_index = pass_index
        self._batch_num = 0
        self._done = False

    def size_for(self, num: int) -> int:
        bs = self.node.batch_size
        if isinstance(bs, int):
            return bs
        try:
            size = bs(BatchInfo(num, self.pass_index // self.spec.rounds))
        except Exception as e:
            raise user_error("batch operation: [batch_size]", e, index=num) from e
        if isinstance(size, (bool, np.bool_)) or not isinstance(size, (int, np.integer)) or size < 1:
            raise PipelineError("batch operation", f"the batch_size function returned {size!r}; it must "
                                "return a positive int.", index=num)
        return int(size)

    def gather(self, parent: OpIter) -> tuple[list[Row], int] | None:
        """The rows of the next batch from ``parent`` and its number, or None at the end."""
        if self._done:
            return None
        try:
            rows: list[Row] = [next(parent)]  # the batch size is asked only when a row is there
        except StopIteration:
            self._done = True
            return None
        size = self.size_for(self._batch_num)
        try:
            for _ in range(size - 1):
                rows.append(next(parent))
        except StopIteration:
            self._done = True
        if len(rows) < size and self.node.drop_remainder:
            return None
        num = self._batch_num
        self._batch_num += 1
        return rows, num

    def skip_batches(self, parent: OpIter, n: int) -> tuple[int, int]:
        """Skips up to ``n`` batches of ``parent``'s rows: (batches skipped, rows skipped)."""
        done = rows = 0
        while done < n and not self._done:
            size = self.size_for(self._batch_num)
            k = parent.skip(size)
            rows += k
            if k < size:
                self._done = True
                if k == 0 or self.node.drop_remainder:
                    break
            self._batch_num += 1
            done += 1
        return done, rows


class BucketBatchIter(OpIter):
    """Groups rows into buckets by length; a full bucket becomes a (padded) batch."""

    name = "bucket_batch_by_length operation"

    def __init__(self, ctx: BuildContext, node: Any, parent: OpIter) -> None:
        super().__init__(ctx, (parent,))
        self.node = node
        self._cols = node.children[0].columns
        self._buckets: list[list[Row]] = [[] for _ in node.batch_sizes]
        self._flush: list[int] = []
        self._parent_done = False
        self._seen = 0

    def _reset(self, pass_index: int) -> None:
        super()._reset(pass_index)
        self._buckets = [[] for _ in self.node.batch_sizes]
        self._flush = []
        self._parent_done = False
        self._seen = 0

    def _length(self, row: Row, index: int) -> int:
        node = self.node
        ins = [row[i] for i in node.length_idx]
        if node.length_fn is None:
            return int(ins[0].shape[0]) if ins[0].ndim else 1
        try:
            return int(node.length_fn(*ins))
        except Exception as e:
            raise user_error("bucket_batch_by_length operation: [element_length_function]", e,
                             columns=[self._cols[i] for i in node.length_idx], index=index) from e

    def _bucket_of(self, length: int) -> int:
        for b, bound in enumerate(self.node.boundaries):
            if length < bound:
                return b
        return len(self.node.boundaries)

    def _emit(self, b: int) -> Row:
        # As MindSpore: without pad_info (None or {}) every column is padded with 0 to the bucket's
        # longest row; pad_to_bucket_boundary pads the columns pad_info names, to the bucket's
        # boundary - 1, and a row in the last bucket (no boundary) is an error.
        rows, self._buckets[b] = self._buckets[b], []
        node = self.node
        named = node.pad_info or {}
        boundary = None
        if node.pad_to_bucket_boundary and named:
            if b >= len(node.boundaries):
                raise PipelineError(self.name, "Invalid data, requested to pad to bucket boundary failed: a row "
                                    f"of length {self._length(rows[0], -1)} fell in the last bucket (index {b}), "
                                    f"which has no boundary to pad to; add a boundary above it (boundaries "
                                    f"{list(node.boundaries)}).")
            boundary = node.boundaries[b] - 1
        out = []
        for c, name in enumerate(self._cols):
            values = [r[c] for r in rows]
            pad = named.get(c) if named else (None, 0)
            if pad is not None:
                values = pad_values(values, pad, boundary)
            out.append(collate(values, c, name, op=self.name))
        return tuple(out)

    def __next__(self) -> Row:
        while not self._parent_done:
            try:
                row = next(self.parent)
            except StopIteration:
                self._parent_done = True
                self._flush = [b for b, rows in enumerate(self._buckets) if rows]
                break
            b = self._bucket_of(self._length(row, self._seen))
            self._seen += 1
            self._buckets[b].append(row)
            if len(self._buckets[b]) == self.node.batch_sizes[b]:
                return self._emit(b)
        while self._flush:
            b = self._flush.pop(0)
            if self.node.drop_remainder:
                self._buckets[b] = []
                continue
            return self._emit(b)
        raise StopIteration
