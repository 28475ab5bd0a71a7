"""Sources: random-access reads by sampled index (a stage's bottom step), and front-to-back streams."""
from __future__ import annotations

from typing import Any

import numpy as np

from headrace._engine.ops.base import BuildContext, OpIter, Step
from headrace._engine.samplers import SequentialPlan
from headrace._util import rng
from headrace._util.errors import PipelineError, user_error
from headrace._util.types import Row, SampleContext


def _read_error(name: str, exc: BaseException, index: int, source: Any) -> PipelineError:
    file = getattr(source, "file_of", lambda i: None)(index)
    if isinstance(exc, PipelineError):
        return exc.with_location(None, index)
    return user_error(name, exc, index=index, file=file)


class ReadFn:
    """Reads one row by source index, wrapping a failure as a PipelineError naming index and file.

    Picklable when the source is; runs in whichever thread or process reads.
    """

    __slots__ = ("source", "read", "name", "globals")

    def __init__(self, source: Any, name: str, globals_: Any = None) -> None:
        self.source = source
        self.read = source.read
        self.name = name
        # rng.GlobalSeeds when reads run user code (a user object's __getitem__) in a seeded run
        self.globals = globals_

    def __call__(self, index: int) -> Row:
        try:
            return self.read(index)
        except Exception as e:
            raise _read_error(self.name, e, index, self.source) from e

    def keyed(self, index: int, seed: int, pass_index: int, pos: int) -> Row:
        """Reads ``index`` with np.random / random seeded for pass position ``pos`` (``globals`` set)."""
        token = self.globals.enter(seed, pass_index, pos)
        try:
            return self(index)
        finally:
            self.globals.leave(token)

    def fail(self, e: Exception, index: int) -> None:
        """Raises what a failure ``e`` of ``self.read(index)`` is reported as (for loops that call
        ``self.read`` themselves)."""
        raise _read_error(self.name, e, index, self.source) from e

    def __getstate__(self) -> tuple:
        return self.source, self.name, self.globals

    def __setstate__(self, state: tuple) -> None:
        self.__init__(*state)  # type: ignore[misc]  # rebuilt from its own arguments


class _Reserved:
    """Stands for an op folded into a source (a cached map) when ids are handed out."""


class ReadStep(Step):
    """A source read by index, at the bottom of a stage: the sampler's plan of each pass (the
    source indices, in order) and the :class:`ReadFn` the stage's workers call on them (the
    stage reads in its workers, ``num_workers`` of them when the source is read alone)."""

    def __init__(self, ctx: BuildContext, node: Any) -> None:
        super().__init__(ctx, node)
        for _ in range(getattr(node.source, "folded_ops", 0)):
            ctx.register(_Reserved())  # ops folded into the source keep their ids (their RNG keys)
        self.name = node.name
        self._source = node.source
        user = getattr(node.source, "runs_user_code", False) and getattr(ctx, "seed_globals", False)
        self.spec = ReadFn(node.source, node.name, rng.GlobalSeeds(self.op_id) if user else None)
        self.indices: np.ndarray | range = np.empty(0, dtype=np.int64)
        self._first: int | None = None

    def plan(self, pass_index: int) -> np.ndarray:
        """The source indices pass ``pass_index`` reads, in order (the sampler's pure plan)."""
        ctx = SampleContext(len(self._source), pass_index, self.ctx.seed, self.node.labels,
                            self.ctx.options.seed is not None)
        return np.asarray(self.node.sampler.indices(ctx), dtype=np.int64)

    def reset(self, pass_index: int) -> None:
        self.pass_index = pass_index
        sampler = self.node.sampler
        if type(sampler) is SequentialPlan:
            # Consecutive by construction: a range, so a pass starts without building (and, after a
            # worker fork, copying pages for) an index array of every row.
            ctx = SampleContext(len(self._source), pass_index, self.ctx.seed, self.node.labels,
                                self.ctx.options.seed is not None)
            start, count = sampler.span(ctx)
            self.indices = range(start, start + count)
            self._first = start
            return
        self.indices = idx = self.plan(pass_index)
        n = len(idx)
        # Consecutive indices (an unshuffled plan): tasks carry them as a range, which costs
        # nothing to slice, send to a worker process or iterate.
        self._first = int(idx[0]) if n and int(idx[-1]) - int(idx[0]) == n - 1 and (
            n < 3 or bool((np.diff(idx) == 1).all())) else None

    def span(self, start: int, stop: int) -> Any:
        """The source indices at pass positions ``start:stop``: a ``range`` when they are
        consecutive, else an int64 array."""
        first = self._first
        if first is not None:
            return range(first + start, first + min(stop, len(self.indices)))
        return self.indices[start:stop]

    def __str__(self) -> str:
        return f"{self.name}(rows={len(self._source)})"


class StreamIter(OpIter):
    """Reads ``source.iterate()`` from the start each pass (a pass re-runs the generator).

    A source may offer ``for_run()`` (a copy holding this run's own state) and
    ``iterate_pass(pass_index)`` (used instead of ``iterate()``, for sources whose rows depend on
    how many passes came before, e.g. a stateful batch sampler when a run starts at a later epoch).
    """

    def __init__(self, ctx: BuildContext, node: Any) -> None:
        super().__init__(ctx)
        self.node = node
        src = node.source
        self._source = src.for_run() if hasattr(src, "for_run") else src
        self.name = node.name
        self._it = None
        self._count = 0
        self._seen = 0

    def _reset(self, pass_index: int) -> None:
        self._close_it()
        src = self._source
        self._it = iter(src.iterate_pass(pass_index) if hasattr(src, "iterate_pass") else src.iterate())
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
            except PipelineError:
                raise  # a source's own error carries its own location (or none, e.g. "no data")
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
