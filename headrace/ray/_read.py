"""MindRecord files as a Ray Data ``Datasource``.

A read task reads a fixed range of positions of the pass's order, never derived from the cluster
size (Ray's ``parallelism``), so the blocks and their rows do not change with the cluster. Without
a shuffle the order is file order and the ranges start at page starts (a task reads whole pages of
one file, about ``rows_per_task`` rows); under a shuffle the order is MindSpore's MindRecord
shuffle for the pass (``MindDataset``'s, from the same sampler plans) and a task reads
``rows_per_task`` consecutive positions of it. Metadata (rows, bytes, file) comes from the ``.db``
row tables, read on the driver.

Every node that runs a read task opens the files under the same paths (a shared file system for
a job on several nodes). Encrypted files are decrypted into copies on the driver's machine when
the dataset is made, so they read on that machine's node only (not tested on Ray).

The pass is the number of executions of the dataset Ray has completed (Ray's execution index,
which its own file shuffle reads too), or a fixed ``epoch``. Every completed execution counts:
iterating, ``take_all``, a write, and a ``schema()`` or ``count()`` that Ray answers by executing;
a loop that needs exact epochs whatever else runs passes ``epoch=`` (a dataset per epoch). Each row carries its pass position
(``__sample__``) and the pass (``__epoch__``): ``map_ops`` keys its random draws with them.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np
import pyarrow as pa
import ray
import ray.data
from ray.data.block import BlockMetadata
from ray.data.datasource import Datasource, ReadTask

from headrace._engine import options as _options
from headrace._util import rng
from headrace._util.types import SampleContext
from headrace.dataset._sources.mindrecord import MindDataset, MindRecordSource
from headrace.ray._blocks import KEY_COLUMNS, column_array, field_kind, rows_to_table, shared_source

__all__ = ["MindRecordDatasource", "read_mindrecord"]

DEFAULT_ROWS_PER_TASK = 1024
#: (seed, whether the user chose it) of a dataset made by read_mindrecord, for map_ops over it
SEED_ATTR = "_headrace_seed"


def _check_int(value: Any, name: str, low: int, allow_none: bool = True) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int{' or None' if allow_none else ''}, but got {value!r} of type "
                        f"{type(value).__name__}.")
    if value < low:
        raise ValueError(f"{name} must be at least {low}, but got {value}.")


def page_starts(source: MindRecordSource) -> np.ndarray:
    """Global row ids where a page begins (the blob page where the schema has blob fields, else the
    raw page), each file's first row included, in increasing order."""
    reader = source._reader
    reader.ensure_loaded()
    locs = reader._locs
    starts: list[np.ndarray] = []
    for shard, header in enumerate(reader.headers):
        lo, hi = reader._starts[shard], reader._starts[shard + 1]
        if hi <= lo:
            continue
        col = 2 if reader.blob_fields else 0
        page = (locs[lo:hi, col] - header.header_size) // header.page_size
        new = np.flatnonzero(np.diff(page) != 0) + 1
        starts.append(np.concatenate([[lo], lo + new]).astype(np.int64))
    return np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64)


def file_ranges(source: MindRecordSource, rows_per_task: int) -> list[tuple[int, int]]:
    """[start, stop) row ranges of about ``rows_per_task`` rows: whole pages of one file each (a
    page larger than ``rows_per_task`` is one range)."""
    pages = page_starts(source)
    bounds = source._reader._starts
    out = []
    for shard in range(len(bounds) - 1):
        lo, hi = bounds[shard], bounds[shard + 1]
        here = pages[(pages >= lo) & (pages < hi)]
        a = lo
        for p in here[1:]:
            if p - a >= rows_per_task:
                out.append((a, int(p)))
                a = int(p)
        if hi > a:
            out.append((a, hi))
    return out


class PassDatasource(Datasource):
    """What the Datasources of ``read_mindrecord`` and ``read_dataset`` share: a headrace source
    read in the order its sampler plan gives each pass under ``seed``, put once into Ray's object
    store (read tasks carry its ObjectRef, see ``shared_source``).

    Args:
        source: the source (``read(i)``, ``len``).
        plan: its sampler plan.
        seed (int): the seed of the order.
        epoch (int, optional): the pass to read every time; None: Ray's execution count.
        labels: the source's class labels for the plan (PKSampler), or None.
    """

    def __init__(self, source: Any, plan: Any, seed: int, epoch: int | None, labels: Any = None) -> None:
        self._source = source
        self._plan = plan
        self._seed = int(seed)
        self._epoch = epoch
        self._labels = labels
        self._ref: Any = None   # the source in Ray's object store, put when tasks are first made

    def order(self, epoch: int) -> np.ndarray:
        """The source rows pass ``epoch`` reads, in order."""
        ctx = SampleContext(len(self._source), int(epoch), self._seed, self._labels)
        return np.asarray(self._plan.indices(ctx), dtype=np.int64)

    def this_pass(self, data_context: Any) -> tuple[int, np.ndarray, Any]:
        """``(pass, its order, the source's ObjectRef)`` for the read tasks Ray asks for now: the
        fixed ``epoch``, else the number of executions of the dataset Ray has completed."""
        epoch = self._epoch
        if epoch is None:
            epoch = int(getattr(data_context, "_execution_idx", 0) or 0) if data_context is not None else 0
        if self._ref is None:
            self._ref = ray.put(self._source)
        return epoch, self.order(epoch), self._ref


@dataclasses.dataclass(frozen=True)
class _Task:
    """What one read task needs: the source (an ObjectRef: put once per dataset, see
    ``shared_source``), the rows to read in order, the pass position of the first, the pass, and
    the columns' kinds."""
    source: Any
    rows: np.ndarray
    start: int
    epoch: int
    kinds: tuple

    def __call__(self) -> list[pa.Table]:
        src = shared_source(self.source)
        read = src.read
        rows = []
        for i in self.rows.tolist():
            rows.append(read(i))
        positions = np.arange(self.start, self.start + len(rows), dtype=np.int64)
        return [rows_to_table(src.column_names, self.kinds, rows, positions, self.epoch)]


class MindRecordDatasource(PassDatasource):
    """MindRecord files as a Ray Data source (see the module notes for the tasks and the order).

    Args:
        dataset (MindDataset): what to read: its files, columns and shuffle (a MindDataset without
            shards, sampler, padding or ``num_samples``).
        seed (int): the seed of the order (MindDataset's run seed).
        rows_per_task (int): rows per read task, about (page-aligned without a shuffle).
        epoch (int, optional): the pass to read every time; None: Ray's execution count of the
            dataset (0 for the first execution, +1 after each one that completes).
    """

    def __init__(self, dataset: MindDataset, seed: int, rows_per_task: int = DEFAULT_ROWS_PER_TASK,
                 epoch: int | None = None) -> None:
        if type(dataset) is not MindDataset:
            raise TypeError(f"dataset must be a MindDataset (a source, without operations on top), but got "
                            f"{type(dataset).__name__}.")
        _check_int(seed, "seed", 0, allow_none=False)
        _check_int(rows_per_task, "rows_per_task", 1, allow_none=False)
        _check_int(epoch, "epoch", 0)
        super().__init__(dataset._source(), dataset._sampler_plan, int(seed), epoch)
        self._rows_per_task = int(rows_per_task)
        schema = self._source.schema
        self._kinds = tuple((field_kind(schema.fields[c]), schema.fields[c].type) for c in self._source.column_names)
        self._ranges: list[tuple[int, int]] | None = None

    # ------------------------------------------------------------------ Ray's interface

    def get_name(self) -> str:
        return "ReadMindRecord"

    def estimate_inmemory_data_size(self) -> int | None:
        locs = self._locs()
        return int(locs[:, 1].sum() + locs[:, 3].sum())

    def get_read_tasks(self, parallelism: int, per_task_row_limit: int | None = None,
                       data_context: Any = None) -> list[ReadTask]:
        epoch, order, ref = self.this_pass(data_context)
        locs = self._locs()
        sizes = locs[:, 1] + locs[:, 3]
        files = self._source.files
        bounds = np.asarray(self._source._reader._starts[1:])  # loaded by _locs
        schema = self.schema()
        tasks = []
        for start, stop in self._position_ranges(order):
            rows = np.ascontiguousarray(order[start:stop], dtype=np.int64)
            shards = sorted(set(np.searchsorted(bounds, rows, side="right").tolist()))
            meta = BlockMetadata(num_rows=len(rows), size_bytes=int(sizes[rows].sum()),
                                 input_files=[files[s] for s in shards], exec_stats=None)
            tasks.append(ReadTask(_Task(ref, rows, start, epoch, self._kinds), meta,
                                  schema=schema, per_task_row_limit=per_task_row_limit))
        return tasks

    # ------------------------------------------------------------------ headrace's side

    def schema(self) -> pa.Schema:
        """The Arrow schema of the blocks (the source's columns, then ``__sample__``, ``__epoch__``)."""
        fields = []
        for name, (kind, ftype) in zip(self._source.column_names, self._kinds):
            if kind in ("fixed", "ragged"):
                f = self._source.schema.fields[name]
                shape = tuple(int(d) for d in f.shape)
                sample = (np.zeros((1, *shape), dtype=ftype) if kind == "fixed"
                          else [np.zeros(tuple(max(d, 0) for d in shape), dtype=ftype)])
                typ = column_array(kind, ftype, list(sample) if kind == "fixed" else sample).type
            else:
                typ = column_array(kind, ftype, []).type
            fields.append(pa.field(name, typ))
        fields += [pa.field(c, pa.int64()) for c in KEY_COLUMNS]
        return pa.schema(fields)

    def num_tasks(self) -> int:
        """Read tasks per pass (the same every pass)."""
        n = len(self._source)
        if not self._plan.is_shuffled():
            return len(self._position_ranges(np.arange(n)))
        return -(-n // self._rows_per_task)

    def _locs(self) -> np.ndarray:
        reader = self._source._reader
        reader.ensure_loaded()
        return reader._locs

    def _position_ranges(self, order: np.ndarray) -> list[tuple[int, int]]:
        n = len(order)
        if not self._plan.is_shuffled():
            if self._ranges is None:
                self._ranges = file_ranges(self._source, self._rows_per_task)
            return self._ranges
        step = self._rows_per_task
        return [(a, min(a + step, n)) for a in range(0, n, step)]


def read_mindrecord(paths: str | Sequence[str], columns: Sequence[str] | None = None, *, shuffle: Any = None,
                    seed: int | None = None, rows_per_task: int = DEFAULT_ROWS_PER_TASK, epoch: int | None = None,
                    preserve_order: bool = True) -> ray.data.Dataset:
    """MindRecord files as a ``ray.data.Dataset``, rows in ``MindDataset``'s order.

    Args:
        paths (Union[str, list[str]]): a data file (every shard of its dataset is read) or a list of
            data files (only those, in that order), as ``MindDataset``'s ``dataset_files``.
        columns (list[str], optional): columns to read, in order. Default: None (every field,
            sorted by name).
        shuffle (Union[bool, Shuffle], optional): as ``MindDataset``'s ``shuffle``. Default: None
            (shuffle, as MindDataset does).
        seed (int, optional): the seed of the order. Default: None (the seed set by
            ``ds.config.set_seed``, else one drawn now).
        rows_per_task (int, optional): rows per read task, about. Default: 1024.
        epoch (int, optional): read this pass every time. Default: None (pass k on the dataset's
            (k+1)-th execution).
        preserve_order (bool, optional): set Ray's ``preserve_order`` on the returned dataset, so
            its rows come in the order of the tasks. Default: True.

    Returns:
        ray.data.Dataset, the rows plus ``__sample__`` (the row's position in its pass) and
        ``__epoch__`` (the pass). ``map_ops`` over it keys its draws with the same seed.

    Raises:
        TypeError, ValueError: an argument is of the wrong type or value (as MindDataset's).
        RuntimeError: a file or its ``.db`` is missing or damaged.
    """
    _check_int(rows_per_task, "rows_per_task", 1, allow_none=False)
    _check_int(seed, "seed", 0)
    _check_int(epoch, "epoch", 0)
    if not isinstance(preserve_order, bool):
        raise TypeError(f"preserve_order must be a bool, but got {preserve_order!r}.")
    if columns is not None and not isinstance(columns, (list, tuple)):
        raise TypeError(f"columns must be a list of column names or None, but got {columns!r}.")
    files = list(paths) if isinstance(paths, (list, tuple)) else paths
    dataset = MindDataset(files, columns_list=list(columns) if columns is not None else None, shuffle=shuffle)
    seeded = True
    if seed is None:
        seed = _options.snapshot().seed
        seeded = seed is not None
        seed = rng.new_seed() if seed is None else seed
    source = MindRecordDatasource(dataset, int(seed), int(rows_per_task), epoch)
    # as many blocks as tasks: Ray would otherwise split each task's block to reach its own block
    # count (which depends on the cluster's CPUs)
    out = ray.data.read_datasource(source, override_num_blocks=max(1, source.num_tasks()))
    if preserve_order:
        out.context.execution_options.preserve_order = True
    setattr(out, SEED_ATTR, (int(seed), seeded))
    return out
