"""A Ray Dataset (or one consumer's ``streaming_split`` iterator) as a headrace source.

``from_ray`` returns a ``GeneratorDataset`` over the rows Ray delivers, so that everything a
headrace pipeline does after its source works on the consuming side: ``map``, ``batch``, the
torch and JAX loaders, the profiler. Each epoch of the headrace dataset is one iteration of the
Ray object (for a ``ray.data.Dataset``, one execution: ``read_mindrecord``'s next pass; for a
``DataIterator``, the split's next epoch, which every consumer of the split must start too).

Columns come from the Ray schema, in its order. Values are what a local headrace source gives
for the same Arrow type (``_blocks.row_value``): binary -> an ``S`` array of shape (1,) (as
MindDataset's bytes), string -> a 0-d ``U`` array, numbers -> 0-d arrays of their type,
tensor columns (fixed or variable shape) -> arrays of their dtype and shape.
"""
from __future__ import annotations

from typing import Any, Iterator, Sequence

import numpy as np
import ray.data
from ray.data.block import BlockAccessor

from headrace._util.checks import check_columns
from headrace.dataset import GeneratorDataset
from headrace.ray._blocks import row_value
from headrace.ray._read import _check_int

__all__ = ["from_ray"]

_NAME = "headrace.ray.from_ray"


class RayRows:
    """The rows of ``data`` (a Ray Dataset or DataIterator), one pass per ``iter``, as tuples of
    NumPy arrays in ``names`` order."""

    def __init__(self, data: Any, names: Sequence[str], rows_per_fetch: int) -> None:
        self.data, self.names, self.rows_per_fetch = data, tuple(names), rows_per_fetch

    def __iter__(self) -> Iterator[tuple]:
        row = 0
        for table in self.data.iter_batches(batch_size=self.rows_per_fetch, batch_format="pyarrow",
                                            prefetch_batches=1):
            missing = [n for n in self.names if n not in table.column_names]
            if missing:
                raise RuntimeError(f"{_NAME}: the rows from {row} on have no column {missing} (their columns: "
                                   f"{table.column_names}); the Ray dataset's rows do not all have the columns of "
                                   "its schema.")
            for name in self.names:   # (NumPy would make a null a NaN of an int column, or None)
                column = table.column(name)
                if column.null_count:
                    at = int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
                    raise ValueError(f"{_NAME}: column {name!r} of row {row + at} is null; a headrace column holds "
                                     "a value in every row: fill or drop the nulls in Ray first.")
            batch = BlockAccessor.for_block(table.select(list(self.names))).to_batch_format("numpy")
            cols = [batch[n] for n in self.names]
            for i in range(table.num_rows):
                yield tuple(_value(c[i], n, row + i) for c, n in zip(cols, self.names))
            row += table.num_rows


def _value(value: Any, column: str, row: int) -> np.ndarray:
    if isinstance(value, str) and value.endswith("\x00"):
        # NumPy's str arrays (headrace's string values, as MindSpore's) drop trailing NULs
        raise ValueError(f"{_NAME}: column {column!r} of row {row} holds a string that ends with a NUL "
                         f"character ({value[-8:]!r}), which a headrace string value cannot keep (it would "
                         f"lose it silently); store the column as bytes.")
    out = row_value(value)
    if out.dtype == object:
        raise TypeError(f"{_NAME}: column {column!r} of row {row} holds {type(value).__name__} values of no "
                        f"array type ({str(value)[:60]}); a headrace column holds numbers, str, bytes or arrays.")
    return out


def _schema(data: Any) -> Any:
    """The Ray schema of ``data``, fetched (when Ray does not know it from the read tasks) without
    counting as one of the dataset's executions: Ray counts the fetch (a run of the first block),
    and the pass that ``read_mindrecord``, ``read_dataset`` and Ray's own file shuffle read follows
    that count, so the first epoch would read pass 1."""
    if not isinstance(data, ray.data.Dataset):
        return data.schema()
    schema = data.schema(fetch_if_missing=False)
    if schema is None:
        ctx = data.context
        passes = getattr(ctx, "_execution_idx", None)
        schema = data.schema()
        if isinstance(passes, int):
            ctx._execution_idx = passes
    return schema


def from_ray(data: Any, columns: Sequence[str] | None = None, *, rows_per_fetch: int = 256) -> GeneratorDataset:
    """A ``ray.data.Dataset`` or a ``streaming_split`` iterator as a headrace source dataset.

    Args:
        data (Union[ray.data.Dataset, ray.data.DataIterator]): what to read; each epoch of the
            returned dataset iterates it once.
        columns (list[str], optional): the columns to read, in this order. Default: None (every
            column of the Ray schema, in its order; ``read_mindrecord``'s ``__sample__`` and
            ``__epoch__`` included).
        rows_per_fetch (int, optional): rows taken from Ray at a time (Ray's ``batch_size`` of
            ``iter_batches``). Default: 256.

    Returns:
        GeneratorDataset, the rows as NumPy arrays (see the module notes for the types); not
        shuffled (the order is Ray's).

    Raises:
        TypeError: ``data`` is neither a Ray Dataset nor a DataIterator; ``columns`` is not a str
            or a list of str; ``rows_per_fetch`` not an int.
        ValueError: ``columns`` is empty, names a column twice or one the schema lacks;
            ``rows_per_fetch`` < 1; the Ray data has no schema (no rows).
        RuntimeError: while reading, a null value or a value of no array type (the message names
            the column and the row; the pipeline's error carries it).
    """
    if not isinstance(data, (ray.data.Dataset, ray.data.DataIterator)):
        raise TypeError(f"data must be a ray.data.Dataset or a ray.data.DataIterator (from streaming_split), but "
                        f"got {type(data).__name__}.")
    _check_int(rows_per_fetch, "rows_per_fetch", 1, allow_none=False)
    columns = check_columns(columns, "columns")
    schema = _schema(data)
    if schema is None:
        raise ValueError(f"{_NAME}: the Ray data has no schema (it holds no rows); a headrace source needs its "
                         "columns.")
    names = list(schema.names)
    if columns is not None:
        unknown = [c for c in columns if c not in names]
        if unknown:
            raise ValueError(f"columns names {unknown}, which the Ray schema lacks; its columns are {names}.")
        names = columns
    return GeneratorDataset(RayRows(data, names, int(rows_per_fetch)), column_names=names, shuffle=False)
