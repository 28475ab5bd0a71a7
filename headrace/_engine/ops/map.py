"""Map and filter: a function per row, serially or in an ordered thread pool."""
from __future__ import annotations

import collections
from typing import Any, Callable

from headrace._engine.ops.base import BuildContext, OpIter
from headrace._engine.parallel.ordered import OrderedThreadPool
from headrace._util import rng
from headrace._util.arrays import to_array
from headrace._util.errors import PipelineError, user_error
from headrace._util.types import Row

CHUNK = 4


def make_assembler(layout: tuple[tuple[str, int], ...]) -> Callable[[Row, tuple], Row]:
    """A function building an output row from (input row, function outputs) per ``layout``."""
    spec = tuple((kind == "in", j) for kind, j in layout)
    return lambda row, out: tuple([row[j] if from_in else out[j] for from_in, j in spec])


class RowStage(OpIter):
    """Shared by map and filter: runs ``self._work(row, index)`` per row, in order, on
    ``num_workers`` threads when more than one. ``_work`` returns a row, or None to drop it."""

    def __init__(self, ctx: BuildContext, parent: OpIter, num_workers: int) -> None:
        super().__init__(ctx, (parent,))
        self._index = 0
        self._pool = OrderedThreadPool(self._work_chunk, num_workers, "hr-map") if num_workers > 1 else None
        self._window = num_workers * 4
        self._out: collections.deque[Row] = collections.deque()
        self._error: BaseException | None = None
        self._parent_done = False
        self._in_flight = 0  # input rows submitted but not yet returned

    def _work(self, row: Row, index: int) -> Row | None:
        raise NotImplementedError

    def _reset(self, pass_index: int) -> None:
        self._drop()
        super()._reset(pass_index)
        self._index = 0
        self._parent_done = False

    def _drop(self) -> None:
        if self._pool is not None:
            self._pool.cancel_all()
        self._out.clear()
        self._error = None
        self._in_flight = 0

    def _work_chunk(self, chunk: tuple[int, list[Row]]) -> tuple[list[Row | None], BaseException | None]:
        start, rows = chunk
        out: list[Row | None] = []
        for k, row in enumerate(rows):
            try:
                out.append(self._work(row, start + k))
            except BaseException as e:  # noqa: BLE001 - delivered in order by __next__
                return out, e
        return out, None

    def __next__(self) -> Row:
        if self._pool is None:
            while True:
                row = self._work(next(self.parent), self._index)
                self._index += 1
                if row is not None:
                    return row
        while True:
            while self._out:
                row = self._out.popleft()
                if row is not None:
                    return row
            if self._error is not None:
                err, self._error = self._error, None
                raise err
            self._fill()
            if not self._pool.pending:
                raise StopIteration
            rows, self._error = self._pool.get()
            self._in_flight -= len(rows) + (self._error is not None)
            self._out.extend(rows)
            if self._error is not None:
                self._pool.cancel_all()

    def _fill(self) -> None:
        parent = self.parent
        while not self._parent_done and self._pool.pending < self._window:
            rows = []
            try:
                for _ in range(CHUNK):
                    rows.append(next(parent))
            except StopIteration:
                self._parent_done = True
            if rows:
                self._pool.submit((self._index, rows))
                self._index += len(rows)
                self._in_flight += len(rows)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
        super().close()


class MapIter(RowStage):
    def __init__(self, ctx: BuildContext, node: Any, parent: OpIter) -> None:
        super().__init__(ctx, parent, node.num_workers)
        self.node = node
        self.name = node.name
        self._fn = node.fn
        self._idx = node.input_idx
        self._n_out = len(node.out_names)
        self._assemble = make_assembler(node.layout)
        self._in_names = tuple(node.children[0].columns[i] for i in node.input_idx)

    def _work(self, row: Row, index: int) -> Row:
        rng.set_sample_key((self.ctx.seed, self.op_id, self.pass_index, index))
        try:
            out = self._fn(*[row[i] for i in self._idx])
        except PipelineError as e:
            raise e.with_location(self._in_names, index) from e.__cause__
        except Exception as e:
            raise user_error(self.name, e, columns=self._in_names, index=index) from e
        if type(out) is not tuple:
            out = (out,)
        if len(out) != self._n_out:
            raise PipelineError(self.name, f"the function returned {len(out)} column(s) but "
                                f"{self._n_out} output column(s) are expected: set output_columns to "
                                f"{self._n_out if len(out) == 0 else len(out)} name(s).",
                                columns=self._in_names, index=index)
        try:
            out = [to_array(v) for v in out]
        except TypeError as e:
            raise PipelineError(self.name, f"an output is not convertible to an array: {e}",
                                columns=self._in_names, index=index) from e
        return self._assemble(row, out)

    def skip(self, n: int) -> int:
        # 1:1: skipping outputs is skipping inputs, without running the function.
        done = 0
        while done < n and self._out:
            self._out.popleft()
            done += 1
        if done < n and self._pool is not None and self._pool.pending:
            while done < n and (self._pool.pending or self._out):
                try:
                    self.__next__()
                except StopIteration:
                    return done
                done += 1
        if done < n and not self._parent_done:
            k = self.parent.skip(n - done)
            self._index += k
            done += k
        return done


class FilterIter(RowStage):
    def __init__(self, ctx: BuildContext, node: Any, parent: OpIter) -> None:
        super().__init__(ctx, parent, node.num_workers)
        self._pred = node.predicate
        self._idx = node.input_idx
        self._in_names = tuple(node.children[0].columns[i] for i in node.input_idx)
        self.name = "filter operation: [PyFunc]"

    def _work(self, row: Row, index: int) -> Row | None:
        rng.set_sample_key((self.ctx.seed, self.op_id, self.pass_index, index))
        try:
            keep = self._pred(*[row[i] for i in self._idx])
        except Exception as e:
            raise user_error(self.name, e, columns=self._in_names, index=index) from e
        return row if bool(keep) else None


def run_chain(ops: tuple[Callable, ...], names: list[str]) -> Callable:
    """One callable applying ``ops`` in order; a tuple result feeds the next op as arguments.

    A failure names the op of the chain that raised (the map op adds columns and index).
    """
    if len(ops) == 1:
        return ops[0]

    def chain(*args: Any) -> Any:
        for op, name in zip(ops, names):
            try:
                out = op(*args)
            except PipelineError:
                raise
            except Exception as e:
                raise user_error(f"map operation: [{name}]", e) from e
            args = out if type(out) is tuple else (out,)
        return args if len(args) != 1 else args[0]

    return chain
