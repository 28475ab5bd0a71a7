"""Sources: random-access reads by sampled index, and front-to-back streams."""
from __future__ import annotations

from typing import Any

import numpy as np

from headrace._engine.ops.base import BuildContext, OpIter
from headrace._engine.parallel.ordered import OrderedThreadPool
from headrace._util.errors import PipelineError, user_error
from headrace._util.types import Row, SampleContext


def _read_error(name: str, exc: BaseException, index: int, source: Any) -> PipelineError:
    file = getattr(source, "file_of", lambda i: None)(index)
    if isinstance(exc, PipelineError):
        return exc.with_location(None, index)
    return user_error(name, exc, index=index, file=file)


class RandomAccessIter(OpIter):
    """Reads the source at the sampler's indices for the pass; ``num_workers`` threads read ahead."""

    CHUNK = 8

    def __init__(self, ctx: BuildContext, node: Any) -> None:
        super().__init__(ctx)
        self.node = node
        self.name = node.name
        self._source = node.source
        self._read = node.source.read
        self._indices = np.empty(0, dtype=np.int64)
        self._pos = 0
        self._pool = OrderedThreadPool(self._read_chunk, node.num_workers, "hr-read") if node.num_workers > 1 else None
        self._buf: list[Row] = []
        self._buf_pos = 0
        self._submitted = 0  # next position to hand to the pool
        self._error: tuple[BaseException, int] | None = None

    def _reset(self, pass_index: int) -> None:
        ctx = SampleContext(len(self._source), pass_index, self.ctx.seed, self.node.labels)
        self._indices = np.asarray(self.node.sampler.indices(ctx), dtype=np.int64)
        self._index_list = self._indices.tolist()
        self._pos = 0
        self._drop_buffer()

    def _drop_buffer(self) -> None:
        if self._pool is not None:
            self._pool.cancel_all()
        self._buf, self._buf_pos = [], 0
        self._error = None
        self._submitted = self._pos

    def _read_chunk(self, idx: list[int]) -> tuple[list[Row], tuple[BaseException, int] | None]:
        out = []
        read = self._read
        for i in idx:
            try:
                out.append(read(i))
            except Exception as e:  # noqa: BLE001 - reported in order by __next__
                return out, (e, i)
        return out, None

    def __next__(self) -> Row:
        if self._pool is None:
            pos = self._pos
            if pos >= len(self._index_list):
                raise StopIteration
            i = self._index_list[pos]
            self._pos = pos + 1
            try:
                return self._read(i)
            except Exception as e:
                raise _read_error(self.name, e, i, self._source) from e
        while True:
            if self._buf_pos < len(self._buf):
                row = self._buf[self._buf_pos]
                self._buf_pos += 1
                self._pos += 1
                return row
            if self._error is not None:
                (e, i), self._error = self._error, None
                self._pos += 1
                raise _read_error(self.name, e, i, self._source) from e
            self._fill()
            if not self._pool.pending:
                raise StopIteration
            self._buf, self._error = self._pool.get()
            self._buf_pos = 0
            if self._error is not None:  # rows before the failing one are still delivered
                self._pool.cancel_all()

    def _fill(self) -> None:
        window = self.node.num_workers * 4
        n = len(self._index_list)
        while self._pool.pending < window and self._submitted < n:
            end = min(n, self._submitted + self.CHUNK)
            self._pool.submit(self._index_list[self._submitted:end])
            self._submitted = end

    def skip(self, n: int) -> int:
        avail = len(self._index_list) - self._pos
        k = min(n, avail)
        self._pos += k
        self._drop_buffer()
        return k

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
        super().close()

    def __str__(self) -> str:
        return f"{self.name}(rows={len(self._source)})"


class StreamIter(OpIter):
    """Reads ``source.iterate()`` from the start each pass (a pass re-runs the generator)."""

    def __init__(self, ctx: BuildContext, node: Any) -> None:
        super().__init__(ctx)
        self.node = node
        self.name = node.name
        self._it = None
        self._count = 0
        self._seen = 0

    def _reset(self, pass_index: int) -> None:
        self._close_it()
        self._it = iter(self.node.source.iterate())
        self._count = 0
        self._seen = 0

    def _close_it(self) -> None:
        close = getattr(self._it, "close", None)
        self._it = None
        if close is not None:
            try:
                close()
            except Exception:  # noqa: BLE001 - a generator that fails to close must not mask the real error
                pass

    def __next__(self) -> Row:
        limit = self.node.num_samples
        if self._it is None or (limit is not None and self._count >= limit):
            raise StopIteration
        shard = self.node.shard
        while True:
            try:
                row = next(self._it)
            except StopIteration:
                self._it = None
                raise
            except PipelineError as e:
                raise e.with_location(None, self._seen) from e.__cause__
            except Exception as e:
                raise user_error(self.name, e, index=self._seen) from e
            self._seen += 1
            if shard is None or (self._seen - 1) % shard[0] == shard[1]:
                break
        self._count += 1
        return row

    def close(self) -> None:
        self._close_it()
        super().close()
