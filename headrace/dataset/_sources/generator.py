"""GeneratorDataset and NumpySlicesDataset: rows from Python objects."""
from __future__ import annotations

import copy
import functools
import itertools
import numbers
import operator
import threading
import types
from typing import Any, Iterator, Sequence

import numpy as np

from headrace._engine import plan as P
from headrace._engine.samplers import UserPlan
from headrace._util import checks
from headrace._util.arrays import to_array
from headrace._util.errors import PipelineError
from headrace._util.forksafe import fork_safe
from headrace.dataset import _provided
from headrace.dataset._datasets import warm_up_process_workers
from headrace.dataset._sources.base import MappableDataset
from headrace.common.dtype import to_numpy_dtype

__all__ = ["GeneratorDataset", "NumpySlicesDataset"]

_COUNT_MISMATCH = ("Invalid Python function, the 'source' of 'GeneratorDataset' should return same number "
                   "of NumPy arrays as specified in column_names, the size of column_names is:{n} and "
                   "number of returned NumPy array is:{got}")


_NEEDS_LEN = "Attempt to construct a random access dataset, '__len__' method is required!"


def _dtype_list(column_types: Any, n: int) -> list[np.dtype | None] | None:
    if column_types is None:
        return None
    checks.check_type(column_types, (list, tuple), "column_types")
    if len(column_types) != n:
        raise ValueError(f"column_types has {len(column_types)} entries but there are {n} columns.")
    return [None if t is None else to_numpy_dtype(t, f"column_types[{i}]") for i, t in enumerate(column_types)]


_OBJECT = np.dtype(object)


def _column_array(value: Any, i: int, single: bool) -> Any:
    """``to_array(value)``, refusing what has no NumPy type of numbers, strings or bytes (an
    ``object`` array, a set, ...) with MindSpore's message; ``single``: the row is one bare value."""
    try:
        arr = to_array(value)
    except TypeError:
        arr = None
    if arr is None or (type(arr) is np.ndarray and arr.dtype is _OBJECT):
        what = "the input" if single else f"{i + 1}th item of the input"
        raise TypeError(f"Data type of {what} or its converted Numpy array is expected to be int or float or str, "
                        f"but got {'object' if arr is None else arr.dtype}.")
    return arr


class RowConverter:
    """Turns what a user source returns into a row: checks the column count, converts, casts
    (a ``None`` entry of ``dtypes`` leaves its column as it is)."""

    def __init__(self, names: Sequence[str], dtypes: list[np.dtype | None] | None, op: str) -> None:
        self.n = len(names)
        self.dtypes = dtypes
        self.op = op

    def __call__(self, value: Any) -> tuple:
        if type(value) is tuple and len(value) == self.n and self.dtypes is None:
            for v in value:  # the common case: a tuple of arrays passes through untouched
                if type(v) is not np.ndarray or v.dtype is _OBJECT:
                    break
            else:
                return value
        single = type(value) not in (tuple, list)
        vals = (value,) if single else value
        if len(vals) != self.n:
            msg = _COUNT_MISMATCH.format(n=self.n, got=len(vals))
            raise PipelineError(self.op, msg, python_stack=msg)  # MindSpore reports it as a user-code error
        row = tuple([_column_array(v, i, single) for i, v in enumerate(vals)])
        if self.dtypes is not None:
            row = tuple(v.astype(t, copy=False) if t is not None and isinstance(v, np.ndarray) else v
                        for v, t in zip(row, self.dtypes))
        return row

    def reading(self, get: Any) -> Any:
        """``get(index)`` converted, as one function: the per-row call of a random-access source
        (a W1 row is 1.4 us in a bare loop; a method calling ``get`` and then ``self`` cost 0.18 us
        more than this)."""
        n, convert, nd, obj = self.n, self, np.ndarray, _OBJECT
        if self.dtypes is not None:
            return lambda index: convert(get(index))
        # Two columns: the check spelled out on local names. Where the engine's C row loop is not
        # built (a pure-Python wheel) this is W1's per-row read: its chain took 1.36-1.37 against
        # 1.42 us a row with the loop below (one thread, 2026-11-29).
        if n == 2:
            def read2(index: int) -> tuple:
                value = get(index)
                if type(value) is tuple and len(value) == 2:
                    a, b = value
                    if type(a) is nd and type(b) is nd and a.dtype is not obj and b.dtype is not obj:
                        return value
                return convert(value)
            return read2

        def read(index: int) -> tuple:
            value = get(index)
            if type(value) is tuple and len(value) == n:
                for v in value:
                    if type(v) is not nd or v.dtype is obj:
                        break
                else:
                    return value
            return convert(value)
        return read


class UserRandomAccess:
    """A ``RandomAccessSource`` over an object with ``__getitem__`` and ``__len__``; pickles as
    its arguments (``read`` is rebuilt)."""

    def __init__(self, obj: Any, names: Sequence[str], convert: RowConverter) -> None:
        self.obj = obj
        self.column_names = list(names)
        self._convert = convert
        # obj[index]: the type's __getitem__ bound to obj (the subscript looks it up on the type),
        # else the subscript itself (no __getitem__ on the type: its TypeError is the read's error)
        try:
            get = type(obj).__getitem__.__get__(obj, type(obj))
        except AttributeError:
            get = functools.partial(operator.getitem, obj)
        self.read = convert.reading(get)
        # (get, convert, columns) for the engine's C row loop, which checks rows as ``read`` does
        self.row_parts = (get, convert, convert.n) if convert.dtypes is None else None

    def __getstate__(self) -> tuple:
        return self.obj, self.column_names, self._convert

    def __setstate__(self, state: tuple) -> None:
        self.__init__(*state)  # type: ignore[misc]  # rebuilt from its own arguments

    @property
    def runs_user_code(self) -> bool:
        """Reads may draw from np.random / random (seeded per sample under set_seed), unless the
        object is marked ``transforms.not_random``."""
        return getattr(self.obj, "random", True) is not False

    def __len__(self) -> int:
        return len(self.obj)


class UserStream:
    """A ``StreamSource`` over a generator function or an iterable; checks ``__len__`` if it has one."""

    def __init__(self, obj: Any, names: Sequence[str], convert: RowConverter, expected: int | None) -> None:
        self.obj = obj
        self.column_names = list(names)
        self._convert = convert
        self.expected = expected

    def iterate(self) -> Iterator[tuple]:
        obj = self.obj
        it = iter(obj) if _is_iterable(obj) else iter(obj())
        n = 0
        for value in it:
            try:
                row = self._convert(value)
            except PipelineError as e:
                raise e.with_location(None, n) from e.__cause__
            yield row
            n += 1
        if self.expected is not None and n != self.expected:
            msg = (f"The actual amount of data read from generator {n} is different from generator.len "
                   f"{self.expected}, you should adjust generator.len to make them match.")
            raise PipelineError(self._convert.op, msg, python_stack=msg)


class BatchSamplerStream:
    """Rows from index lists (a PyTorch-style batch_sampler) over a random-access object, collated."""

    def __init__(self, obj: Any, names: Sequence[str], convert: RowConverter, batch_sampler: Any,
                 collate_fn: Any) -> None:
        self.obj = obj
        self.column_names = list(names)
        self._convert = convert
        self.batch_sampler = batch_sampler
        self.collate_fn = collate_fn
        self._passes = 0

    def for_run(self) -> "BatchSamplerStream":
        """This stream with a deep copy of the batch sampler: as in MindSpore, every iterator
        starts from the sampler's state when the dataset was made (a sampler that cannot be
        copied is shared)."""
        twin = copy.copy(self)
        try:
            twin.batch_sampler = copy.deepcopy(self.batch_sampler)
        except Exception:  # noqa: BLE001 - e.g. a sampler holding a lock or a file
            twin.batch_sampler = self.batch_sampler
        twin._passes = 0
        return twin

    def iterate_pass(self, pass_index: int) -> Iterator[tuple]:
        """The rows of pass ``pass_index``: passes this run skipped (``set_init_step``) still run
        the sampler, so that a sampler that changes from pass to pass reaches the same state."""
        while self._passes < pass_index:
            for _ in self.batch_sampler:
                pass
            self._passes += 1
        self._passes += 1
        return self.iterate()

    def iterate(self) -> Iterator[tuple]:
        for indices in self.batch_sampler:
            rows = [self._convert(self.obj[_batch_index(i)]) for i in _batch_indices(indices)]
            cols = [[r[c] for r in rows] for c in range(len(self.column_names))]
            if self.collate_fn is not None:
                yield self._convert(self.collate_fn(*cols))
            else:
                yield tuple(np.stack(c) for c in cols)


def _batch_indices(indices: Any) -> Any:
    if isinstance(indices, (int, np.integer)):
        raise RuntimeError("Batch sampler should return a list, but got an integer.")
    return indices


def _batch_index(i: Any) -> int:
    if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
        kind = "string" if isinstance(i, (str, bytes)) else type(i).__name__
        raise RuntimeError(f"Python sampler should return index of type integer, but got: {kind}")
    return int(i)


class _NeedsLen:
    """The stream of a source with ``__getitem__`` but no ``__len__``: reading it raises."""

    def __init__(self, names: Sequence[str]) -> None:
        self.column_names = list(names)

    def iterate(self) -> Iterator[tuple]:
        raise RuntimeError(_NEEDS_LEN)


class ReplayedGenerator:
    """A generator object read again from its start on every pass: what it yielded is kept (as
    MindSpore does; a generator object can be read only once). Safe to read from several threads."""

    def __init__(self, gen: Any) -> None:
        self._master = gen
        self._lock = fork_safe(threading.Lock())

    def __iter__(self) -> Iterator[Any]:
        with self._lock:
            self._master, mine = itertools.tee(self._master)
        return self._read(mine)

    def _read(self, it: Iterator[Any]) -> Iterator[Any]:
        while True:
            with self._lock:
                try:
                    value = next(it)
                except StopIteration:
                    return
            yield value


def _is_iterable(obj: Any) -> bool:
    return hasattr(obj, "__iter__") or hasattr(obj, "__next__")


def _is_random_access(obj: Any) -> bool:
    return (hasattr(obj, "__getitem__") and not isinstance(obj, (str, bytes, dict))
            and not getattr(obj, "_is_pipeline", False))  # a headrace pipeline is iterated


class _CountedUserSampling:
    """MindSpore's generator sources check that a user sampler yields the ``num_samples`` (or
    ``len``) it declares; a shorter pass is an error there, as here."""

    def _select_plan(self, num_samples, shuffle, sampler, num_shards, shard_id):
        plan = super()._select_plan(num_samples, shuffle, sampler, num_shards, shard_id)  # type: ignore[misc]
        return plan.with_count_check() if isinstance(plan, UserPlan) else plan


def _check_shard_pair(num_shards: Any, shard_id: Any) -> None:
    """MindSpore's words for the generator sources' shard arguments (the other sources' checks,
    ``checks.check_shard``, word them otherwise, as MindSpore does)."""
    if (num_shards is None) != (shard_id is None):
        raise ValueError("num_shards and shard_id need to be passed in together.")
    if (isinstance(num_shards, numbers.Integral) and isinstance(shard_id, numbers.Integral)
            and not isinstance(shard_id, bool) and 0 < num_shards <= shard_id):
        raise ValueError("shard_id should be less than num_shards.")


class GeneratorDataset(_CountedUserSampling, MappableDataset):
    """Rows from a Python source: an object with ``__getitem__``/``__len__`` (read by index,
    shuffled by default), an iterable, or a generator function (read in order).

    Args:
        source (Union[Callable, Iterable, Random Accessible]): the data.
        column_names (Union[str, list[str]], optional): column names. Default: None.
        column_types (list, optional): dtype per column (NumPy dtypes, names or mstype). Default: None.
        schema (Schema, optional): column names and types as a Schema; rows are cast to the types
            (MindSpore raises on a type mismatch instead). Default: None.
        num_samples (int, optional): rows to read. Default: None, all.
        num_parallel_workers (int, optional): readers for random-access sources. Default: 1.
        shuffle (bool, optional): shuffle a random-access source. Default: None (shuffle).
        sampler (Sampler, optional): index sampler for a random-access source. Default: None.
        num_shards (int, optional), shard_id (int, optional): read one shard. Default: None.
        python_multiprocessing (bool, optional): process workers for Python sources. Default: True.
        max_rowsize (int, optional): kept for compatibility. Default: None.
        batch_sampler (Iterable[list[int]], optional): index lists, each giving one batch. Default: None.
        collate_fn (Callable, optional): ``collate_fn(*column_lists)`` makes a batch. Default: None.
        deterministic_source (bool, optional, headrace only): the source returns the same row for an
            index every time, so a ``map(..., cache=...)`` over this dataset may cache its rows
            (keyed by the source's type and attributes). Default: False (MindSpore refuses a
            GeneratorDataset under a cache).

    Examples:
        >>> import numpy as np, headrace.dataset as ds
        >>> d = ds.GeneratorDataset(lambda: ((np.array(i),) for i in range(3)), ["x"])
        >>> [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)]
        [0, 1, 2]
    """

    def __init__(self, source, column_names=None, column_types=None, schema=None, num_samples=None,
                 num_parallel_workers=1, shuffle=None, sampler=None, num_shards=None, shard_id=None,
                 python_multiprocessing=True, max_rowsize=None, batch_sampler=None, collate_fn=None, *,
                 deterministic_source=False):
        if isinstance(source, zip):  # as MindSpore: read once into a list, then read by index
            source = list(source)
        elif isinstance(source, types.GeneratorType):  # as MindSpore: kept, so every pass reads it all
            source = ReplayedGenerator(source)
        if not (_is_random_access(source) or _is_iterable(source) or callable(source)):
            raise TypeError("Input `source` function of GeneratorDataset should be callable, iterable or random "
                            "accessible, commonly it should implement one of the method like yield, __getitem__ "
                            "or __next__(__iter__).")
        if column_names is None and schema is None:
            raise ValueError("Neither columns_names nor schema are provided.")
        if column_names is None:
            column_names = _schema_columns(schema)
        if schema is not None and column_types is None:
            column_types = _schema_types(schema)  # headrace casts to the schema's types
        names = checks.check_columns(column_names, "column_names", allow_none=False)
        self.source = source
        self.column_names = names
        self.python_multiprocessing = checks.check_bool(python_multiprocessing, "python_multiprocessing")
        self.deterministic_source = checks.check_bool(deterministic_source, "deterministic_source")
        self.max_rowsize = max_rowsize
        self.random_access = _is_random_access(source) and hasattr(source, "__len__")
        checks.check_max_rowsize(max_rowsize, pair=False)
        if batch_sampler is not None:
            if not (hasattr(batch_sampler, "__getitem__") or hasattr(batch_sampler, "__iter__")):
                raise TypeError("batch_sampler should have __getitem__ or __iter__ method.")
            if not self.random_access:
                raise ValueError("batch_sampler is not supported if source does not have attribute '__getitem__'.")
            if any(a is not None for a in (sampler, shuffle, num_shards, shard_id, num_samples)):
                raise ValueError("batch_sampler is mutually exclusive with num_samples, shuffle, num_shards, shard_id "
                                 "and sampler.")
        if collate_fn is not None and batch_sampler is None:
            raise ValueError("collate_fn can be specified only when batch_sampler is set.")
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError("collate_fn should be callable.")
        _check_shard_pair(num_shards, shard_id)
        if not self.random_access:
            if sampler is not None:
                raise ValueError("sampler is not supported if source does not have attribute '__getitem__'.")
            if num_shards is not None:
                raise ValueError("num_shards is not supported if source does not have attribute '__getitem__'.")
            shuffle = None  # MindSpore ignores shuffle for generator functions and iterables
        self.batch_sampler = batch_sampler
        self.collate_fn = collate_fn
        self._dtypes = _dtype_list(column_types, len(names))
        super().__init__(num_samples, num_parallel_workers, shuffle if self.random_access else False,
                         sampler if self.random_access else None, num_shards, shard_id)
        self.reads_by_index = self.random_access and batch_sampler is None
        if self.python_multiprocessing and self.random_access and self._workers > 1:
            warm_up_process_workers(self.source)

    def __getitem__(self, index):
        """What the source returns for the ``index``-th row of a first pass, untouched (MindSpore's
        random access: the sampler, shuffle, shards and num_samples pick the source index).

        Raises:
            TypeError: ``index`` is not an int or a NumPy integer.
            RuntimeError: the source is not random-access, a batch_sampler is set, or ``index`` is
                out of range.
        """
        checks.check_type(index, (int, np.number), "index")
        if not _is_random_access(self.source):
            raise RuntimeError("Dataset don't support randomized access.")
        if self.batch_sampler is not None:
            raise RuntimeError("GeneratorDataset with batch_sampler does not support random access.")
        if not self.random_access:
            raise RuntimeError(_NEEDS_LEN)
        return self.source[self._access_index(index)]

    def _default_workers(self) -> int:
        return 1

    def get_batch_size(self):
        """1, or -1 with a ``batch_sampler`` (its batches may differ in size)."""
        return -1 if self.batch_sampler is not None else 1

    def _processes(self) -> bool:
        return self.python_multiprocessing  # Python sources hold the GIL: processes, as in MindSpore

    def _converter(self) -> RowConverter:
        return RowConverter(self.column_names, self._dtypes, "GeneratorDataset")

    def _make_source(self):
        return UserRandomAccess(self.source, self.column_names, self._converter())

    def _make_plan(self):
        cols = tuple(self.column_names)
        if _is_random_access(self.source) and not self.random_access:
            # MindSpore reads any source with __getitem__ by index, which needs __len__
            return P.StreamNode((), cols, _NeedsLen(cols), "GeneratorDataset", None, None)
        if self.batch_sampler is not None:
            src = BatchSamplerStream(self.source, cols, self._converter(), self.batch_sampler, self.collate_fn)
            known = len(self.batch_sampler) if hasattr(self.batch_sampler, "__len__") else None
            return P.StreamNode((), cols, src, "GeneratorDataset", None, known)
        if self.random_access:
            return super()._make_plan()
        expected = len(self.source) if hasattr(self.source, "__len__") else None
        src = UserStream(self.source, cols, self._converter(), expected)
        return P.StreamNode((), cols, src, "GeneratorDataset", self.num_samples, expected)

    def _labels(self) -> np.ndarray:
        """Class of each row for PKSampler: the source's ``labels`` attribute or ``get_label(i)``."""
        src = self.source
        if hasattr(src, "labels"):
            return np.asarray(src.labels, dtype=np.int64)
        if hasattr(src, "get_label"):
            return np.asarray([src.get_label(i) for i in range(len(src))], dtype=np.int64)
        raise ValueError("PKSampler needs the class of each row: give the GeneratorDataset source a `labels` "
                         "sequence or a `get_label(index)` method.")


def _schema_types(schema: Any) -> list[np.dtype] | None:
    columns = getattr(schema, "columns", None)
    if not columns or not all(hasattr(c, "dtype") for c in columns):
        return None
    types = [c.dtype for c in columns]
    return None if any(t.kind == "U" for t in types) else types


def _schema_columns(schema: Any) -> list[str]:
    if hasattr(schema, "get_column_names"):
        return list(schema.get_column_names())
    if hasattr(schema, "columns"):
        return [c["name"] if isinstance(c, dict) else c for c in schema.columns]
    raise TypeError(f"schema must be a Schema, but got {type(schema)}.")


class SlicesSource:
    """Rows by index from columns held in memory (each a list or an array)."""

    def __init__(self, names: Sequence[str], columns: list[Any]) -> None:
        self.column_names = list(names)
        self._columns = columns

    def __len__(self) -> int:
        return len(self._columns[0])

    def read(self, index: int) -> tuple:
        return tuple([to_array(c[index]) if type(c) is list else np.asarray(c[index]) for c in self._columns])


class NumpySlicesDataset(_CountedUserSampling, MappableDataset):
    """Rows sliced from in-memory data: a list (one column), a tuple of columns, a dict of columns,
    or an array (sliced along its first axis).

    Examples:
        >>> import headrace.dataset as ds
        >>> d = ds.NumpySlicesDataset({"a": [1, 2], "b": [3, 4]}, shuffle=False)
        >>> [[int(v) for v in r] for r in d.create_tuple_iterator(output_numpy=True)]
        [[1, 3], [2, 4]]
    """

    def __init__(self, data, column_names=None, num_samples=None, num_parallel_workers=1, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None):
        checks.check_type(data, (list, tuple, dict, np.ndarray), "data")
        if len(data) == 0:
            raise ValueError("Argument data cannot be empty")
        if isinstance(data, dict):
            names, cols = list(data.keys()), list(data.values())
        elif isinstance(data, tuple):
            names, cols = [f"column_{i}" for i in range(len(data))], list(data)
        else:
            names, cols = ["column_0"], [data]
        cols = [c if isinstance(c, (list, np.ndarray)) else list(c) for c in cols]
        if len({len(c) for c in cols}) > 1:
            raise ValueError("Data length in each column is not equal.")
        if column_names is not None:
            given = checks.check_columns(column_names, "column_names", allow_none=False)
            if len(given) != len(names):
                raise ValueError(f"Num of input column names is {len(given)}, but required is {len(names)}.")
            names = given
        self.column_names = names
        self._columns = cols
        _check_shard_pair(num_shards, shard_id)
        super().__init__(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id)

    def __getitem__(self, index):
        """The ``index``-th row of a first pass as a tuple of the columns' own elements (sampler,
        shuffle and shards applied), as MindSpore's random access returns it.

        Raises:
            TypeError: ``index`` is not an int or a NumPy integer.
            RuntimeError: ``index`` is out of range.
        """
        i = self._access_index(index)
        return tuple([c[i] for c in self._columns])

    def _default_workers(self) -> int:
        return 1

    def _make_source(self):
        return SlicesSource(self.column_names, self._columns)


# For _cache_plan, which sits below Dataset and its sources.
_provided.provide(GeneratorDataset=GeneratorDataset)
