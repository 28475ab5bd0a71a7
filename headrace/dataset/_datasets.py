"""The public pipeline: ``Dataset`` and the operation datasets its methods return.

Each method checks its arguments, then returns a new dataset wrapping a frozen plan node
(``headrace._engine.plan``); nothing is read until an iterator is created. A dataset may feed
any number of consumers.
"""
from __future__ import annotations

import os
import warnings
from typing import Any, Sequence


from headrace._engine import options as _options
from headrace._engine import plan as P
from headrace.dataset._dataset_reading import DatasetReading
from headrace.dataset._sync_api import SyncMethods
from headrace.dataset.transforms._compose import compose_operations, op_display_name, run_chain
from headrace.dataset.callback._callbacks import MapCallbacks, check_callbacks
from headrace.dataset.debug import _state as _debug
from headrace.dataset.debug._hooks import DebugHook, insert_hooks
from headrace._util import checks
from headrace._util.checks import INT32_MAX, check_columns, check_int, check_range, check_type
from headrace._util.types import BatchInfo
from headrace.dataset import _cache_plan, _concat_sampling, _provided
from headrace.dataset._split import split_dataset
from headrace.dataset.samplers import DistributedSampler, RandomSampler
from headrace.dataset._columns import _check_pad_info, column_index, replace_layout
from headrace.dataset._op_checks import check_batch_size, check_bucket_args, check_map_operations

__all__ = [
    "BatchDataset", "BatchInfo", "BucketBatchByLengthDataset", "ConcatDataset", "Dataset", "FilterDataset",
    "FlatMapDataset", "MapDataset", "PaddedBatchDataset", "ProjectDataset", "RenameDataset",
    "RepeatDataset", "ShuffleDataset", "SkipDataset", "TakeDataset", "ZipDataset", "zip",
]

_warned_workers = False
_zip = zip  # the module-level ``zip`` (MindSpore's name) shadows the builtin


def warm_up_process_workers(*objects: Any) -> None:
    """Starts the process that forks worker processes now (see NOTE [ worker shutdown ] in the
    engine's exec/process_pool.py), with the modules of ``objects`` (the op's functions or source)
    imported there, so that both overlap building the pipeline and what the script does before it runs."""
    if _debug.enabled:
        return  # debug mode starts no worker process
    if _options.snapshot().multiprocessing_start_method == "fork":
        from headrace._engine.exec import forkserver  # noqa: PLC0415 - its import registers an exit hook

        forkserver.warm_up(objects)


def resolve_workers(value: Any, name: str = "num_parallel_workers") -> int:
    """None -> the configured default; more workers than CPUs is allowed, with one warning."""
    global _warned_workers
    value = checks.check_num_parallel_workers(value, name)
    if value is None:
        return _options.snapshot().num_parallel_workers
    cpus = os.cpu_count() or 1
    if value > cpus and not _warned_workers:
        _warned_workers = True
        warnings.warn(f"{name}={value} exceeds the number of CPUs ({cpus}); the workers will share "
                      "cores, which rarely makes a pipeline faster.", stacklevel=3)
    return value


class Dataset(DatasetReading, SyncMethods):
    """Base of every dataset: the pipeline-building methods and the ways to read it."""

    # Rows are read by index, so a sampler can pick them (random-access sources say True).
    reads_by_index = False
    # MindSpore reads this source as a stream of rows although headrace indexes it (TFRecord, CSV, text).
    streamed_in_mindspore = False

    def __init__(self, children: Sequence["Dataset"] = (), num_parallel_workers: int | None = None) -> None:
        self.children = list(children)
        self.num_parallel_workers = num_parallel_workers

    # ---- plan -----------------------------------------------------------------------------
    @property
    def _plan(self) -> P.Node:
        plan = self.__dict__.get("_plan_node")
        if plan is None or self.__dict__.get("_plan_gen", 0) != _debug.generation:
            # made again after set_debug_mode (a map in debug mode calls its hooks)
            plan = self.__dict__["_plan_node"] = self._make_plan()
            self.__dict__["_plan_gen"] = _debug.generation
        return plan

    def _make_plan(self) -> P.Node:
        raise NotImplementedError(f"{type(self).__name__} does not define a plan")

    # ---- operations -----------------------------------------------------------------------
    def map(self, operations, input_columns=None, output_columns=None, num_parallel_workers=None, **kwargs):
        """Applies ``operations`` to each row.

        Args:
            operations (Union[Callable, list[Callable]]): transforms or Python functions, run in order.
            input_columns (Union[str, list[str]], optional): columns passed to the first operation.
                Default: None, the first column.
            output_columns (Union[str, list[str]], optional): names of the results; they stand where
                the first input column stood. Default: None, the input names, in place.
            num_parallel_workers (int, optional): workers. Default: None, ``ds.config``'s value.
            **kwargs: python_multiprocessing (bool, default False), max_rowsize, cache, callbacks, offload.

        Returns:
            MapDataset.

        Examples:
            >>> import headrace.dataset as ds
            >>> d = ds.NumpySlicesDataset([1, 2], column_names=["x"], shuffle=False).map(lambda x: x * 10)
            >>> [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)]
            [10, 20]
        """
        return MapDataset(self, operations, input_columns, output_columns, num_parallel_workers, **kwargs)

    def batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, **kwargs):
        """Combines ``batch_size`` consecutive rows into one row of stacked arrays.

        Args:
            batch_size (Union[int, Callable]): rows per batch, or a function of ``BatchInfo``.
            drop_remainder (bool, optional): drop a last, smaller batch. Default: False.
            num_parallel_workers (int, optional): workers for per_batch_map. Default: None.
            **kwargs: per_batch_map, input_columns, output_columns, python_multiprocessing, max_rowsize.

        Returns:
            BatchDataset.

        Examples:
            >>> import headrace.dataset as ds
            >>> d = ds.NumpySlicesDataset(list(range(5)), shuffle=False).batch(2)
            >>> [r[0].tolist() for r in d.create_tuple_iterator(output_numpy=True)]
            [[0, 1], [2, 3], [4]]
        """
        return BatchDataset(self, batch_size, drop_remainder, num_parallel_workers, **kwargs)

    def padded_batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, pad_info=None):
        """Like ``batch``, padding each column (``pad_info``: {column: (shape, value)}) first.

        A ``None`` in the shape pads that dimension to the batch's largest; a dimension of a row
        larger than its pad shape is cut, as MindSpore does. ``pad_info={}`` pads every column
        with 0 to the batch's largest; ``None`` pads nothing.

        Examples:
            >>> import numpy as np, headrace.dataset as ds
            >>> d = ds.GeneratorDataset(lambda: (np.arange(n) for n in (1, 2)), ["v"])
            >>> [r[0].tolist() for r in d.padded_batch(2, pad_info={"v": ([None], -1)}).create_tuple_iterator(output_numpy=True)]
            [[[0, -1], [0, 1]]]
        """
        return PaddedBatchDataset(self, batch_size, drop_remainder, num_parallel_workers, pad_info)

    def bucket_batch_by_length(self, column_names, bucket_boundaries, bucket_batch_sizes,
                               element_length_function=None, pad_info=None, pad_to_bucket_boundary=False,
                               drop_remainder=False):
        """Batches rows of similar length together (buckets split at ``bucket_boundaries``).

        Without ``pad_info`` (or with ``{}``) every column is padded with 0 to the bucket's longest
        row, as MindSpore does; with it, only the columns it names are padded, and
        ``pad_to_bucket_boundary`` pads them to the bucket's boundary - 1 (a row in the last
        bucket, which has none, is then an error).
        """
        return BucketBatchByLengthDataset(self, column_names, bucket_boundaries, bucket_batch_sizes,
                                          element_length_function, pad_info, pad_to_bucket_boundary,
                                          drop_remainder)

    def shuffle(self, buffer_size):
        """Shuffles rows through a buffer of ``buffer_size`` rows (MindSpore's algorithm and order).

        Examples:
            >>> import headrace.dataset as ds
            >>> ds.config.set_seed(1)
            >>> d = ds.NumpySlicesDataset(list(range(10)), shuffle=False).shuffle(4)
            >>> sorted(int(r[0]) for r in d.create_tuple_iterator(output_numpy=True))
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        """
        return ShuffleDataset(self, buffer_size)

    def repeat(self, count=None):
        """Repeats this dataset ``count`` times; None or -1 repeats forever.

        Examples:
            >>> import headrace.dataset as ds
            >>> d = ds.NumpySlicesDataset([1, 2], column_names=["x"], shuffle=False).repeat(2)
            >>> [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)]
            [1, 2, 1, 2]
        """
        return RepeatDataset(self, count)

    def zip(self, datasets):
        """Puts the rows of this dataset and ``datasets`` side by side (as many rows as the shortest)."""
        if isinstance(datasets, Dataset):
            datasets = (datasets,)
        else:
            check_type(datasets, (tuple, Dataset), "datasets")
        return ZipDataset((self,) + datasets)

    def concat(self, datasets):
        """Appends the rows of ``datasets`` after this dataset's rows."""
        if isinstance(datasets, Dataset):
            datasets = [datasets]
        else:
            check_type(datasets, (list, Dataset), "datasets")
        return ConcatDataset([self] + datasets)

    def __add__(self, other):
        return self.concat(other)

    def project(self, columns):
        """Keeps only ``columns``, in the given order."""
        return ProjectDataset(self, columns)

    def rename(self, input_columns, output_columns):
        """Renames ``input_columns`` to ``output_columns``."""
        return RenameDataset(self, input_columns, output_columns)

    def take(self, count=-1):
        """The first ``count`` rows (-1: all)."""
        return TakeDataset(self, count)

    def skip(self, count):
        """All rows but the first ``count``."""
        return SkipDataset(self, count)

    def filter(self, predicate, input_columns=None, num_parallel_workers=None):
        """Keeps the rows for which ``predicate(*input_columns)`` is true."""
        return FilterDataset(self, predicate, input_columns, num_parallel_workers)

    def flat_map(self, func):
        """``func(row) -> Dataset``; the rows of those datasets, one after another."""
        return FlatMapDataset(self, func)

    def apply(self, apply_func):
        """Returns ``apply_func(self)``, which must be a Dataset."""
        if not callable(apply_func):
            raise TypeError("apply_func is not a function.")
        out = apply_func(self)
        if not isinstance(out, Dataset):
            raise TypeError("apply_func must return a dataset.")
        return out

    def split(self, sizes, randomize=True):
        """Splits into datasets of the given sizes (ints summing to the size, or fractions summing to 1).

        Fractions are rounded as MindSpore rounds them (the difference goes to the first part, or to
        the largest when the first would be left empty). With ``randomize`` the rows are dealt in
        MindSpore's random order (its first epoch's rows under ``ds.config.set_seed``); otherwise
        consecutively. The parts of a source never share a row, with or without a seed, and keep
        their rows every epoch; a sampler set on a part samples the part's rows.

        Args:
            sizes (list[int] or list[float]): Rows of each part, or fractions of the rows.
            randomize (bool, optional): Deal the rows in a random order. Default: True.

        Returns:
            list[Dataset], the parts.

        Raises:
            TypeError: ``sizes`` is not a list or ``randomize`` not a bool.
            ValueError: ``sizes`` is empty, mixes ints and floats, or holds a bad value.
            RuntimeError: the sizes do not add up, a fraction leaves its part empty, or the
                dataset is sharded.

        Examples:
            >>> import headrace.dataset as ds
            >>> ds.config.set_seed(5)
            >>> train, test = ds.NumpySlicesDataset(list(range(10)), shuffle=False).split([0.8, 0.2])
            >>> [int(r[0]) for r in test.create_tuple_iterator(output_numpy=True)]
            [9, 0]
        """
        return split_dataset(self, sizes, randomize)

    def device_que(self, send_epoch_end=True, create_data_info_queue=False, queue_name=""):
        """A TransferDataset that sends this dataset's batches to a device queue (dataset sink
        mode; see ``headrace.dataset._transfer``)."""
        return _provided.get("TransferDataset")(self, send_epoch_end, create_data_info_queue, queue_name)


def _check_dataset(value: Any, name: str) -> None:
    check_type(value, Dataset, name)


def _has_no_rows(d: Dataset) -> bool:
    """Whether ``d`` gives no row (MindSpore refuses such a dataset in a concat): its size, counted
    as MindSpore counts it when the plan cannot tell it (a generator without a length is read,
    no map above it runs; an endless one never returns, in MindSpore too)."""
    return d.get_dataset_size() == 0


class _OneInputDataset(Dataset):
    """A dataset made from one other: ``input_dataset``, checked, is its only child."""

    def __init__(self, input_dataset, num_parallel_workers=None):
        _check_dataset(input_dataset, "input_dataset")
        super().__init__([input_dataset], num_parallel_workers)


class MapDataset(_OneInputDataset):
    _KWARGS = {"python_multiprocessing", "max_rowsize", "cache", "callbacks", "offload"}

    def __init__(self, input_dataset, operations, input_columns=None, output_columns=None,
                 num_parallel_workers=None, **kwargs):
        super().__init__(input_dataset, num_parallel_workers)
        unknown = set(kwargs) - self._KWARGS
        if unknown:
            raise TypeError(f"MapDataset.__init__() got an unexpected keyword argument '{sorted(unknown)[0]}'")
        ops = check_map_operations(operations, input_columns, output_columns)
        self.operations = ops
        self.input_columns = check_columns(input_columns, "input_columns")
        self.output_columns = check_columns(output_columns, "output_columns")
        self.callbacks = check_callbacks(kwargs.get("callbacks"))
        self.cache = _cache_plan.check_cache(kwargs.get("cache"))
        if kwargs.get("offload"):
            raise ValueError("map(offload=True) is not supported by headrace: operations run on the host.")
        self.python_multiprocessing = checks.check_bool(kwargs.get("python_multiprocessing", False),
                                                        "python_multiprocessing")
        checks.check_max_rowsize(kwargs.get("max_rowsize"))
        self._workers = resolve_workers(num_parallel_workers)
        if self.python_multiprocessing:
            warm_up_process_workers(*(ops if isinstance(ops, (list, tuple)) else [ops]))

    def _make_plan(self):
        parent = self.children[0]._plan
        cols = parent.columns
        in_idx = column_index(cols, self.input_columns, "input_columns", "map") if self.input_columns else (0,)
        new_cols, layout, out_names = replace_layout(cols, in_idx, self.output_columns)
        fn, name = self._compose()
        hooks = MapCallbacks(self.callbacks) if self.callbacks else None
        node = P.MapNode((parent,), new_cols, fn, in_idx, out_names, layout, name,
                         self._workers, self.python_multiprocessing, hooks)
        if self.__dict__.get("cache") is not None:
            return _cache_plan.cache_map(self, node)
        return node

    def _compose(self):
        """The map's operations as one callable, with the debug hooks between them in debug mode."""
        ops = self.operations
        if not _debug.enabled:
            if any(isinstance(op, DebugHook) for op in ops):
                raise ValueError("It is not allowed to inject DebugHook object in non-debug mode.")
            return compose_operations(ops)
        ops = insert_hooks(ops, _debug.hooks)  # unfused: a hook sees every operation's output
        name = "map operation: [" + ", ".join(op_display_name(op) for op in self.operations) + "]"
        return run_chain(tuple(ops), [op_display_name(op) for op in ops]), name


class BatchDataset(_OneInputDataset):
    _KWARGS = {"per_batch_map", "input_columns", "output_columns", "python_multiprocessing", "max_rowsize"}

    def __init__(self, input_dataset, batch_size, drop_remainder=False, num_parallel_workers=None, **kwargs):
        super().__init__(input_dataset, num_parallel_workers)
        unknown = set(kwargs) - self._KWARGS
        if unknown:
            raise TypeError(f"BatchDataset.__init__() got an unexpected keyword argument '{sorted(unknown)[0]}'")
        batch_size = check_batch_size(batch_size, type(self) is BatchDataset)
        check_type(drop_remainder, bool, "drop_remainder")
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder
        self.per_batch_map = kwargs.get("per_batch_map")
        if self.per_batch_map is not None and not callable(self.per_batch_map):
            raise TypeError("per_batch_map should be a callable.")
        self.input_columns = check_columns(kwargs.get("input_columns"), "input_columns")
        self.output_columns = check_columns(kwargs.get("output_columns"), "output_columns")
        if self.per_batch_map is None and self.input_columns:
            raise ValueError("input_columns can be specified only when per_batch_map is set.")
        self._workers = resolve_workers(num_parallel_workers)
        checks.check_max_rowsize(kwargs.get("max_rowsize"))
        self.python_multiprocessing = checks.check_bool(kwargs.get("python_multiprocessing", False),
                                                        "python_multiprocessing")
        if self.python_multiprocessing and self.per_batch_map is not None:
            warm_up_process_workers(self.per_batch_map)
        self._pad_info: dict | None = None
        if input_dataset.is_sync():  # a sync_wait before counts in batches of this size
            _provided.get("notify_batch")(input_dataset, self.batch_size)

    def get_batch_size(self):
        return self.batch_size if isinstance(self.batch_size, int) else -1

    def _make_plan(self):
        if self.batch_size == -1:
            raise RuntimeError("Batch size cannot be -1 without using batch sampler.")
        parent = self.children[0]._plan
        cols = parent.columns
        kw: dict[str, Any] = {}
        new_cols = cols
        if self.per_batch_map is not None:
            in_idx = (column_index(cols, self.input_columns, "input_columns", "per_batch_map") if self.input_columns
                      else tuple(range(len(cols))))
            new_cols, layout, out_names = replace_layout(cols, in_idx, self.output_columns)
            kw = dict(per_batch_map=self.per_batch_map, input_idx=in_idx, layout=layout, out_count=len(out_names))
        pad = None
        if self._pad_info is not None:
            if self._pad_info:
                idx = column_index(cols, list(self._pad_info), "pad_info", "pad_info")
                pad = {i: self._pad_info[c] for i, c in _zip(idx, self._pad_info)}
            else:
                pad = {i: (None, 0) for i in range(len(cols))}
        return P.BatchNode((parent,), tuple(new_cols), self.batch_size, self.drop_remainder,
                           pad_info=pad, num_workers=self._workers,
                           processes=self.python_multiprocessing and self.per_batch_map is not None, **kw)


class PaddedBatchDataset(BatchDataset):
    def __init__(self, input_dataset, batch_size, drop_remainder=False, num_parallel_workers=None, pad_info=None):
        super().__init__(input_dataset, batch_size, drop_remainder, num_parallel_workers)
        # None pads nothing (rows must agree in shape); {} pads every column to the batch's largest.
        self._pad_info = _check_pad_info(pad_info)


class BucketBatchByLengthDataset(_OneInputDataset):
    def __init__(self, input_dataset, column_names, bucket_boundaries, bucket_batch_sizes,
                 element_length_function=None, pad_info=None, pad_to_bucket_boundary=False, drop_remainder=False):
        super().__init__(input_dataset)
        self.column_names = check_bucket_args(column_names, bucket_boundaries, bucket_batch_sizes,
                                              element_length_function, pad_to_bucket_boundary, drop_remainder)
        self.args = (tuple(bucket_boundaries), tuple(bucket_batch_sizes), element_length_function,
                     _check_pad_info(pad_info), pad_to_bucket_boundary, drop_remainder)

    def _make_plan(self):
        parent = self.children[0]._plan
        cols = parent.columns
        bounds, sizes, fn, pad_info, to_boundary, drop = self.args
        idx = column_index(cols, self.column_names, "column_names")
        pad = None
        if pad_info is not None:
            pidx = column_index(cols, list(pad_info), "pad_info", "pad_info")
            pad = {i: pad_info[c] for i, c in _zip(pidx, pad_info)}
        return P.BucketBatchNode((parent,), cols, idx, bounds, sizes, fn, pad, to_boundary, drop)


class ShuffleDataset(_OneInputDataset):
    def __init__(self, input_dataset, buffer_size):
        super().__init__(input_dataset)
        buffer_size = check_int(buffer_size, "buffer_size")
        check_range(buffer_size, (2, INT32_MAX), "buffer_size")
        if input_dataset.is_sync():
            raise RuntimeError("No shuffle after sync operators.")
        self.buffer_size = buffer_size
        self._seed = _options.snapshot().seed
        self._reshuffle = True

    @property
    def reshuffle_each_epoch(self) -> bool:
        """MindSpore's attribute: False draws the same order every epoch (set it before building on
        this dataset: datasets already built on top keep the value they were built with)."""
        return self._reshuffle

    @reshuffle_each_epoch.setter
    def reshuffle_each_epoch(self, value: bool) -> None:
        check_type(value, bool, "reshuffle_each_epoch")
        self._reshuffle = value
        self.__dict__.pop("_plan_node", None)

    def _make_plan(self):
        parent = self.children[0]._plan
        return P.ShuffleNode((parent,), parent.columns, self.buffer_size, self._seed, reshuffle=self._reshuffle)

    def is_shuffled(self):
        return True


class RepeatDataset(_OneInputDataset):
    def __init__(self, input_dataset, count=None):
        super().__init__(input_dataset)
        if count is not None:
            count = check_int(count, "count")
            if count != -1 and not 1 <= count <= INT32_MAX:
                raise ValueError("count should be either -1 or positive integer, range[1, INT32_MAX].")
        self.count = -1 if count is None else count

    def get_repeat_count(self):
        return self.count

    def _make_plan(self):
        parent = self.children[0]._plan
        return P.RepeatNode((parent,), parent.columns, None if self.count == -1 else self.count)


class TakeDataset(_OneInputDataset):
    def __init__(self, input_dataset, count=-1):
        super().__init__(input_dataset)
        count = check_int(count, "count")
        if count != -1 and not 0 < count <= INT32_MAX:
            raise ValueError(f"count should be either -1 or within the required interval of (0, {INT32_MAX}], got {count}.")
        self.count = count

    def _make_plan(self):
        parent = self.children[0]._plan
        if self.count == -1:
            return parent
        return P.TakeNode((parent,), parent.columns, self.count)


class SkipDataset(_OneInputDataset):
    def __init__(self, input_dataset, count):
        super().__init__(input_dataset)
        count = check_int(count, "count")
        check_range(count, (0, INT32_MAX), "count")
        self.count = count

    def _make_plan(self):
        parent = self.children[0]._plan
        return P.SkipNode((parent,), parent.columns, self.count)


class FilterDataset(_OneInputDataset):
    def __init__(self, input_dataset, predicate, input_columns=None, num_parallel_workers=None):
        super().__init__(input_dataset, num_parallel_workers)
        if not callable(predicate):
            raise TypeError("Predicate should be a Python function or a callable Python object.")
        self.predicate = predicate
        self.input_columns = check_columns(input_columns, "input_columns")
        self._workers = resolve_workers(num_parallel_workers)

    def _make_plan(self):
        parent = self.children[0]._plan
        cols = parent.columns
        idx = column_index(cols, self.input_columns, "input_columns", "filter") if self.input_columns else tuple(range(len(cols)))
        return P.FilterNode((parent,), cols, self.predicate, idx, self._workers)


class ProjectDataset(_OneInputDataset):
    def __init__(self, input_dataset, columns):
        super().__init__(input_dataset)
        if isinstance(columns, list) and not columns:
            raise ValueError("columns should not be empty.")
        self.columns = check_columns(columns, "columns", allow_none=False)

    def _make_plan(self):
        parent = self.children[0]._plan
        idx = column_index(parent.columns, self.columns, "columns", "project")
        return P.SelectNode((parent,), tuple(self.columns), idx)


class RenameDataset(_OneInputDataset):
    def __init__(self, input_dataset, input_columns, output_columns):
        super().__init__(input_dataset)
        self.input_columns = check_columns(input_columns, "input_columns", allow_none=False)
        self.output_columns = check_columns(output_columns, "output_columns", allow_none=False)
        if len(self.input_columns) != len(self.output_columns):
            raise ValueError("Number of column in input_columns and output_columns is not equal.")

    def _make_plan(self):
        parent = self.children[0]._plan
        cols = list(parent.columns)
        for i, src in _zip(column_index(cols, self.input_columns, "input_columns", "rename"), self.input_columns):
            cols[i] = self.output_columns[self.input_columns.index(src)]
        if len(set(cols)) != len(cols):
            raise ValueError(f"Invalid output_columns: renaming gives duplicate column names {cols}.")
        return P.SelectNode((parent,), tuple(cols), tuple(range(len(cols))))


class ZipDataset(Dataset):
    def __init__(self, datasets):
        check_type(datasets, tuple, "datasets")
        if len(datasets) < 1:
            raise ValueError("datasets should not be empty.")
        for i, d in enumerate(datasets):
            _check_dataset(d, f"datasets[{i}]")
        super().__init__(list(datasets))

    def _make_plan(self):
        plans = tuple(d._plan for d in self.children)
        cols: list[str] = []
        for p in plans:
            for c in p.columns:
                if c in cols:
                    raise ValueError(f"Invalid data, duplicate column {c} already exists when zipping datasets; "
                                     "rename one of them first.")
                cols.append(c)
        return P.ZipNode(plans, tuple(cols))


class ConcatDataset(Dataset):
    def __init__(self, datasets):
        check_type(datasets, list, "datasets")
        for i, d in enumerate(datasets):
            _check_dataset(d, f"datasets[{i}]")
        for i, d in enumerate(datasets):
            if _has_no_rows(d):
                raise ValueError(f"There are no samples in the dataset number {i}. Please make sure there are valid "
                                 "samples in the dataset.")
        super().__init__(datasets)

    def _make_plan(self):
        return _concat_sampling.concat_plan(self)

    def get_col_names(self):
        return list(_concat_sampling.check_columns(self))

    def get_dataset_size(self):
        size = _concat_sampling.concat_size(self)
        return super().get_dataset_size() if size is None else size

    def use_sampler(self, sampler):
        """Reads the concatenation through ``sampler`` (in place; returns None).

        ``DistributedSampler(shuffle=False)`` (no num_samples) shards the positions of the whole
        concatenation: position p goes to shard p % num_shards, which gives every shard the same
        number of rows when a ``PaddedDataset`` fills the total up. ``RandomSampler()`` interleaves
        the children's rows at random. See ``headrace/dataset/_concat_sampling.py``.

        Raises:
            TypeError: If sampler is neither, or a child is a BatchDataset (DistributedSampler).
            ValueError: If a DistributedSampler shuffles, either sampler has num_samples, a
                RandomSampler draws with replacement, or a child read by index has num_samples.
        """
        _concat_sampling.use_concat_sampler(self, sampler, BatchDataset)

    def is_shuffled(self):
        return isinstance(self.__dict__.get("_sampler"), RandomSampler) or super().is_shuffled()

    def is_sharded(self):
        return isinstance(self.__dict__.get("_sampler"), DistributedSampler) or super().is_sharded()


class FlatMapDataset(_OneInputDataset):
    def __init__(self, input_dataset, func):
        super().__init__(input_dataset)
        if not callable(func):
            raise TypeError(f"func is not callable, but got {type(func)}.")
        self.func = func

    def _make_plan(self):
        parent = self.children[0]._plan
        func = self.func

        def to_plan(*row):
            out = func(*row)
            if not isinstance(out, Dataset):
                raise TypeError(f"flat_map's func must return a Dataset, but returned {type(out).__name__}.")
            return out._plan

        # The output columns are those of the datasets func returns; find them from the first row.
        return P.FlatMapNode((parent,), tuple(self._probe_columns()), to_plan)

    def _probe_columns(self) -> list[str]:
        row = self.children[0]._first_row()
        if not row:
            return list(self.children[0]._plan.columns)
        return self.func(*row).get_col_names()


def zip(datasets):  # noqa: A001 - MindSpore's name
    """Zips a tuple of datasets (``ds.zip((a, b))``)."""
    check_type(datasets, tuple, "datasets")
    if len(datasets) <= 1:
        raise ValueError("Can't zip empty or just one dataset!")
    return ZipDataset(datasets)


# For the helpers below Dataset (_cache_plan), which may not import this module.
_provided.provide(Dataset=Dataset, MapDataset=MapDataset, BatchDataset=BatchDataset, RepeatDataset=RepeatDataset)
