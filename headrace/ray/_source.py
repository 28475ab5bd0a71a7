"""Any random-access source of headrace (``ImageFolderDataset``, ``TFRecordDataset`` read with
headrace's own TFRecord and tf.train.Example codecs, without TensorFlow, ``MnistDataset``, ...) as
a Ray Data ``Datasource``.

A read task reads ``rows_per_task`` consecutive positions of the pass's order, the order the
source's sampler plans for that pass under the seed (the order the headrace dataset gives), so
the tasks do not depend on the cluster. Rows carry ``__sample__`` and ``__epoch__`` as
``read_mindrecord``'s do (``map_ops`` keys its draws with them). Column values: ``S`` arrays of
one element (bytes) -> Arrow binary, 0-d ``U`` arrays -> string, 0-d numbers -> that number type,
arrays -> Ray's variable-shaped tensor column (every block the same type, whatever shapes it holds).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import ray
import ray.data
from ray.data.block import BlockMetadata
from ray.data.datasource import ReadTask
from ray.data.extensions import ArrowVariableShapedTensorArray

from headrace._engine import options as _options
from headrace._engine import plan as P
from headrace._util import rng
from headrace.dataset import Dataset
from headrace.ray._blocks import KEY_COLUMNS, binary_array, shared_source
from headrace.ray._read import DEFAULT_ROWS_PER_TASK, SEED_ATTR, PassDatasource, _check_int

__all__ = ["SourceDatasource", "read_dataset"]


def _column(name: str, values: list) -> pa.Array:
    first = values[0]
    if first.dtype.kind == "S" and first.size == 1:
        return binary_array(values)
    if first.dtype.kind == "U" and first.ndim == 0:
        return pa.array([str(v) for v in values], type=pa.string())
    if first.ndim == 0:
        arr = np.array([v[()] for v in values], dtype=first.dtype)
        return pa.array(arr, type=pa.from_numpy_dtype(arr.dtype))
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return ArrowVariableShapedTensorArray.from_numpy(out)


class _Task:
    """One read task: the source (an ObjectRef, see ``shared_source``), the rows in order, the pass
    position of the first, the pass."""

    def __init__(self, source: Any, names: tuple, rows: np.ndarray, start: int, epoch: int) -> None:
        self.source, self.names, self.rows, self.start, self.epoch = source, names, rows, start, epoch

    def __call__(self) -> list[pa.Table]:
        source = shared_source(self.source)
        read = source.read
        rows = [read(i) for i in self.rows.tolist()]
        if not rows:
            return []
        for pos, row in enumerate(rows):
            if len(row) != len(self.names):
                raise ValueError(f"read_dataset: row {int(self.rows[pos])} of {type(source).__name__} has "
                                 f"{len(row)} columns, expected {len(self.names)} ({list(self.names)}).")
        cols = [_column(n, [np.asarray(r[j]) for r in rows]) for j, n in enumerate(self.names)]
        cols.append(pa.array(np.arange(self.start, self.start + len(rows), dtype=np.int64)))
        cols.append(pa.array(np.full(len(rows), self.epoch, dtype=np.int64)))
        return [pa.Table.from_arrays(cols, names=[*self.names, *KEY_COLUMNS])]


class SourceDatasource(PassDatasource):
    """A random-access headrace source as a Ray Data source (see the module notes).

    Args:
        node: the source's plan node (``RandomAccessNode``: source, sampler plan, columns).
        seed (int): the seed of the order.
        rows_per_task (int): rows per read task.
        epoch (int, optional): the pass to read every time; None: Ray's execution count.
        name (str): the source's name, for Ray's operator names.
    """

    def __init__(self, node: Any, seed: int, rows_per_task: int, epoch: int | None, name: str) -> None:
        super().__init__(node.source, node.sampler, int(seed), epoch, node.labels)
        self._names = tuple(node.columns)
        self._rows_per_task = int(rows_per_task)
        self._name = name

    def get_name(self) -> str:
        return f"Read{self._name}"

    def estimate_inmemory_data_size(self) -> int | None:
        return None

    def num_tasks(self) -> int:
        n = self._plan.num_samples(len(self._source), self._labels)
        return max(1, -(-max(n, 0) // self._rows_per_task))

    def get_read_tasks(self, parallelism: int, per_task_row_limit: int | None = None,
                       data_context: Any = None) -> list[ReadTask]:
        epoch, order, ref = self.this_pass(data_context)
        step = self._rows_per_task
        tasks = []
        for start in range(0, len(order), step):
            rows = np.ascontiguousarray(order[start:start + step])
            meta = BlockMetadata(num_rows=len(rows), size_bytes=None, input_files=None, exec_stats=None)
            tasks.append(ReadTask(_Task(ref, self._names, rows, start, epoch), meta,
                                  per_task_row_limit=per_task_row_limit))
        return tasks


def read_dataset(dataset: Any, *, seed: int | None = None, rows_per_task: int = DEFAULT_ROWS_PER_TASK,
                 epoch: int | None = None, preserve_order: bool = True) -> ray.data.Dataset:
    """A headrace source dataset as a ``ray.data.Dataset``, rows in the dataset's order.

    Args:
        dataset (Dataset): a headrace source read by index (``ImageFolderDataset``,
            ``TFRecordDataset``, ``MnistDataset``, ``MindDataset``, ...), with its shuffle, sampler
            or shards; no operation on top (run those with ``map_ops``).
        seed (int, optional): the seed of the order. Default: None (the seed set by
            ``ds.config.set_seed``, else one drawn now).
        rows_per_task (int, optional): rows per read task. Default: 1024.
        epoch (int, optional): read this pass every time. Default: None (pass k on the dataset's
            (k+1)-th execution).
        preserve_order (bool, optional): set Ray's ``preserve_order`` on the returned dataset.
            Default: True.

    Returns:
        ray.data.Dataset, the source's columns plus ``__sample__`` and ``__epoch__``.

    Raises:
        TypeError: ``dataset`` is not a headrace dataset; an argument of the wrong type.
        ValueError: ``dataset`` is not a source read by index (a pipeline with operations, a
            generator, a dataset with a cache); an argument out of range.
    """
    if not isinstance(dataset, Dataset):
        raise TypeError(f"dataset must be a headrace source dataset, but got {type(dataset).__name__}.")
    _check_int(rows_per_task, "rows_per_task", 1, allow_none=False)
    _check_int(seed, "seed", 0)
    _check_int(epoch, "epoch", 0)
    if not isinstance(preserve_order, bool):
        raise TypeError(f"preserve_order must be a bool, but got {preserve_order!r}.")
    node = dataset._plan
    if type(node) is not P.RandomAccessNode or not getattr(node.sampler, "pure", True):
        raise ValueError(f"read_dataset: {type(dataset).__name__} is not a source read by index with a built-in "
                         f"sampler (read_dataset takes a source such as ImageFolderDataset or TFRecordDataset, "
                         f"without operations, cache or a Python sampler; run its operations with map_ops).")
    seeded = True
    if seed is None:
        seed = _options.snapshot().seed
        seeded = seed is not None
        seed = rng.new_seed() if seed is None else seed
    source = SourceDatasource(node, int(seed), int(rows_per_task), epoch, type(dataset).__name__)
    out = ray.data.read_datasource(source, override_num_blocks=source.num_tasks())
    if preserve_order:
        out.context.execution_options.preserve_order = True
    setattr(out, SEED_ATTR, (int(seed), seeded))
    return out
