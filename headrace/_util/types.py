"""Extension points the engine sees: sources, samplers, stateful iterators (Protocols only)."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterator, Protocol, Sequence, runtime_checkable

import numpy as np

Row = tuple  # one row: a tuple of column values (NumPy arrays once they leave a source)


@runtime_checkable
class RandomAccessSource(Protocol):
    """A source that can read any row by index (MindSpore's "mappable" sources).

    ``read`` must be safe to call from several threads at once, and the object must pickle (or be
    re-creatable in a worker process). Files are opened lazily, never held across fork/spawn.
    """

    column_names: Sequence[str]

    def __len__(self) -> int: ...

    def read(self, index: int) -> Row: ...


@runtime_checkable
class StreamSource(Protocol):
    """A source read front to back (generator functions, iterables, text streams)."""

    column_names: Sequence[str]

    def iterate(self) -> Iterator[Row]: ...


@dataclasses.dataclass(frozen=True)
class SampleContext:
    """What a sampler may know when it plans one pass over a source.

    Attributes:
        num_rows: rows in the source (or in the child sampler's output, for chained samplers).
        pass_index: 0 for the first pass, +1 each time the source is read again (epochs, repeats).
        seed: the pipeline's seed (already drawn from the OS when the user set none).
        labels: returns each row's class id as an int64 array (PKSampler needs it); raises
            ``ValueError`` when the source cannot name classes.
        seeded: False when the user set no seed (``seed`` was drawn from the OS): samplers that
            MindSpore reseeds per pass only when seeded then draw fresh each pass.
    """

    num_rows: int
    pass_index: int
    seed: int
    labels: Callable[[], np.ndarray] | None = None
    seeded: bool = True


class IndexSampler(Protocol):
    """A pure plan of the source indices one pass reads, in order."""

    def num_samples(self, num_rows: int, labels: Any = None) -> int:
        """Rows one pass yields for a source of ``num_rows`` rows (without reading anything)."""

    def indices(self, ctx: SampleContext) -> np.ndarray:
        """The indices of pass ``ctx.pass_index`` as an int64 array; a pure function of ctx."""


class BatchInfo:
    """What a callable batch size or a per_batch_map learns about the batch being built (the engine
    makes it; ``headrace.dataset.BatchInfo`` is this class)."""

    __slots__ = ("_batch_num", "_epoch_num")

    def __init__(self, batch_num: int, epoch_num: int) -> None:
        self._batch_num = batch_num
        self._epoch_num = epoch_num

    def get_batch_num(self) -> int:
        return self._batch_num

    def get_epoch_num(self) -> int:
        return self._epoch_num
