"""Iterators over a dataset: rows as lists (tuple iterator) or dicts, for one or more epochs."""
from __future__ import annotations

import copy as _copy
import weakref

import numpy as np

from headrace._engine.run import PipelineRun
from headrace._util.checks import INT32_MAX, check_columns, check_int, check_type
from headrace.dataset._autotune_file import attach as attach_autotune_file
from headrace.dataset._init_step import start_at_init_step
from headrace.dataset._tensor import Tensor
from headrace.dataset.core import config as _config

__all__ = ["DictIterator", "ITERATORS_LIST", "Iterator", "IteratorReleasedError", "TupleIterator"]

# Set by ``engine.iterators``: called when an iterator is made (it clears the cleanup flag).
_on_new_iterator = lambda: None  # noqa: E731


# Weak references to the live iterators, oldest first (MindSpore's ``engine.iterators.ITERATORS_LIST``).
# An iterator leaves it when it is stopped or collected; the list never keeps one alive.
ITERATORS_LIST: list = []


def _forget(ref) -> None:
    try:
        ITERATORS_LIST.remove(ref)
    except ValueError:
        pass


class IteratorReleasedError(RuntimeError, AttributeError):
    """``next()`` on an iterator that was stopped or released (also an ``AttributeError``, which is
    what MindSpore raises there)."""


def _check_bool(value, name):
    check_type(value, bool, name)


_ndarray = np.ndarray
_ARRAY_KINDS = frozenset("biufUS")  # the dtypes a Python-object value may hold (no object, complex)
_SCALARS = (int, float, str, np.str_, np.bytes_)  # bool is an int


def python_value_out(obj, to_numpy, do_copy=False):
    """A value of a Python-object column (a dict from a source, a map or a batch) as an iterator
    gives it, with MindSpore's rules: dicts, tuples and lists keep their type and convert their
    items; numbers, str and arrays become arrays (Tensors unless ``to_numpy``; text stays a NumPy
    array); anything else (None, bytes, sets, ...) is returned as it is (a deep copy with
    ``do_copy``).

    Raises:
        TypeError: an array of an unsupported dtype (object, complex, ...) inside the value.
    """
    if isinstance(obj, dict):
        return {k: python_value_out(v, to_numpy, do_copy) for k, v in obj.items()}
    if isinstance(obj, tuple):
        return tuple([python_value_out(v, to_numpy, do_copy) for v in obj])
    if isinstance(obj, list):
        return [python_value_out(v, to_numpy, do_copy) for v in obj]
    if isinstance(obj, _ndarray) or isinstance(obj, _SCALARS) or (
            isinstance(obj, np.generic) and obj.dtype.kind in _ARRAY_KINDS):
        if isinstance(obj, _ndarray) and obj.dtype.kind not in _ARRAY_KINDS:
            raise TypeError(f"A NumPy array of unsupported type detected: {obj.dtype}. A value inside a "
                            "Python dict column must be a bool, int, float, str or bytes array.")
        arr = np.array(obj) if do_copy else np.asarray(obj)
        if to_numpy or arr.dtype.kind in "US":
            return arr.view(_ndarray)
        return arr.view(Tensor)
    return _copy.deepcopy(obj) if do_copy else obj


class Iterator:
    """Reads a dataset. Iterating it once is one epoch; ``num_epochs=-1`` allows any number.

    ``get_state()`` returns a small JSON-able dict; ``set_state(state)`` on a fresh iterator over
    the same pipeline continues exactly where the state was taken.
    """

    def __init__(self, dataset, columns=None, num_epochs=-1, output_numpy=False, do_copy=None):
        num_epochs = check_int(num_epochs, "num_epochs")
        if num_epochs != -1 and not 1 <= num_epochs <= INT32_MAX:
            if num_epochs == 0:
                raise ValueError("num_epochs should be either -1 or positive integer, but got 0.")
            raise ValueError(f"Input num_epochs is not within the required interval of [-1, {INT32_MAX}].")
        _check_bool(output_numpy, "output_numpy")
        if do_copy is None:
            do_copy = _config.get_iterator_mode()["do_copy"]
        _check_bool(do_copy, "do_copy")
        self._dataset = dataset
        self._col_names = dataset.get_col_names()
        select = None
        columns = check_columns(columns, "columns")
        if columns is None and any(c.startswith("_meta-") for c in self._col_names):
            # MindSpore keeps "_meta-" columns (file names and such) out of iterators unless renamed
            columns = [c for c in self._col_names if not c.startswith("_meta-")]
        if columns is not None:
            missing = [c for c in columns if c not in self._col_names]
            if missing:
                raise ValueError(f"Invalid column: columns names {missing[0]!r}, which does not exist; "
                                 f"the dataset has columns {self._col_names}.")
            select = [self._col_names.index(c) for c in columns]
            self._col_names = list(columns)
        self._rows = _Rows(self._col_names, select, output_numpy, do_copy, isinstance(self, DictIterator))
        # ds.config.set_iterator_mode(parallel_convert=True): the run's prefetch thread converts rows
        self._converted = _config.get_iterator_mode()["parallel_convert"]
        # The run releases its workers and buffers on stop(), or by its own finalizer once it is
        # dropped with this iterator; nothing here (no finalizer, no __del__) holds it longer.
        _config._debug_before_run()
        self._run = PipelineRun(dataset._plan, num_epochs, finish=self._rows if self._converted else None)
        attach_autotune_file(self._run, dataset)
        start_at_init_step(self._run, dataset, num_epochs)
        self._ref = weakref.ref(self, _forget)
        ITERATORS_LIST.append(self._ref)
        _on_new_iterator()

    def __iter__(self):
        return self

    def __next__(self):
        try:
            row = self._run.next_row()
        except RuntimeError:
            if self.__dict__.get("_released"):
                raise IteratorReleasedError(f"'{type(self).__name__}' object has no attribute '_runtime_context': "
                                            f"the iterator was stopped or released; create a new iterator to read "
                                            f"again.") from None
            raise
        return row if self._converted else self._rows(row)

    def get_col_names(self):
        return list(self._col_names)

    def get_state(self):
        """A small, JSON-able checkpoint of this iterator's position."""
        return self._run.get_state()

    def set_state(self, state):
        """Continues from ``state`` (from ``get_state()`` of an iterator over the same pipeline).

        Raises:
            ValueError: if the state comes from a pipeline of another structure or an older
                headrace, or a field is out of range (the message names the field).
            TypeError: if a field has the wrong type.
        """
        self._run.set_state(state, seed_setting="ds.config.set_seed")

    def error_samples(self):
        """The rows this iterator replaced or skipped (``ds.config.set_error_samples_mode``), oldest
        first, as dicts: ``op`` (the operation that failed), ``index`` (position in the epoch),
        ``source_index`` (the source's row, or None), ``file`` (or None), ``error`` (the message's
        last line), ``action`` ("replaced" or "skipped"), ``replaced_by`` (the position of the row put
        in its place, or None), ``epoch`` (from 0; None until the epoch ends). Empty in RETURN mode.
        The same rows are named in an ``ErrorSamplesWarning`` at the end of each epoch.

        Examples:
            >>> import headrace.dataset as ds
            >>> ds.config.set_error_samples_mode(ds.config.ErrorSamplesMode.SKIP)
            >>> d = ds.NumpySlicesDataset([1, 0, 2], shuffle=False).map(lambda x: 10 // int(x))
            >>> it = d.create_tuple_iterator(output_numpy=True)
            >>> [int(r[0]) for r in it], [(e["index"], e["action"]) for e in it.error_samples()]
            ([10, 5], [(1, 'skipped')])
            >>> ds.config.set_error_samples_mode(ds.config.ErrorSamplesMode.RETURN)
        """
        return [r.as_dict() for r in self._run.error_rows()]

    def stop(self):
        """Ends the run: workers stop and buffers are freed. Idempotent."""
        self._released = True
        _forget(self._ref)
        self._run.close()

    release = stop
    terminate = stop
    close = stop

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()



def _has_objects(row) -> bool:
    """Whether a row holds anything but arrays. The first row decides for the whole iterator: a
    column holding a dict holds one in every row (a function returning a dict only for some rows
    gets its later dicts through unconverted with NumPy output)."""
    return list(map(type, row)).count(_ndarray) != len(row)


class _Rows:
    """What an iterator hands out for an engine row: its columns selected, and values converted
    (Tensors unless NumPy output, dict values by ``python_value_out``, copies with ``do_copy``), as
    a list or a dict. It holds nothing of the iterator, so the run's prefetch thread may call it
    (``parallel_convert``) without the run referring back to its iterator."""

    __slots__ = ("names", "select", "to_numpy", "do_copy", "as_dict", "objects")

    def __init__(self, names, select, to_numpy, do_copy, as_dict):
        self.names, self.select, self.to_numpy, self.do_copy, self.as_dict = names, select, to_numpy, do_copy, as_dict
        # NumPy output: whether rows hold Python objects (dicts) to convert, decided by the first
        # row so that rows of arrays only cost one attribute test (see _has_objects).
        self.objects = None

    def __call__(self, row):
        if self.select is not None:
            row = [row[i] for i in self.select]
        if self.to_numpy:
            if self.objects is None:
                self.objects = _has_objects(row)
            values = [python_value_out(v, True, self.do_copy) if isinstance(v, dict) else v for v in row] \
                if self.objects else list(row)
        else:
            values = [self._value(v) for v in row]
        return dict(zip(self.names, values)) if self.as_dict else values

    def _value(self, v):
        if not isinstance(v, np.ndarray) or v.dtype.kind in "USO":
            if isinstance(v, dict):
                return python_value_out(v, False, self.do_copy)
            return v
        if self.do_copy:
            v = v.copy()
        return v.view(Tensor)


class TupleIterator(Iterator):
    """Yields each row as a list of column values, in column order."""


class DictIterator(Iterator):
    """Yields each row as a {column name: value} dict."""
