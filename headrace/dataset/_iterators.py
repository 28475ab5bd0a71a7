"""Iterators over a dataset: rows as lists (tuple iterator) or dicts, for one or more epochs."""
from __future__ import annotations

import numpy as np

from headrace._engine.pipeline import PipelineRun
from headrace._util.checks import INT32_MAX, check_columns, check_int, check_type
from headrace.dataset._init_step import start_at_init_step
from headrace.dataset._tensor import Tensor

__all__ = ["DictIterator", "Iterator", "TupleIterator"]


def _check_bool(value, name):
    check_type(value, bool, name)


class Iterator:
    """Reads a dataset. Iterating it once is one epoch; ``num_epochs=-1`` allows any number.

    ``get_state()`` returns a small JSON-able dict; ``set_state(state)`` on a fresh iterator over
    the same pipeline continues exactly where the state was taken.
    """

    def __init__(self, dataset, columns=None, num_epochs=-1, output_numpy=False, do_copy=False):
        num_epochs = check_int(num_epochs, "num_epochs")
        if num_epochs != -1 and not 1 <= num_epochs <= INT32_MAX:
            if num_epochs == 0:
                raise ValueError("num_epochs should be either -1 or positive integer, but got 0.")
            raise ValueError(f"Input num_epochs is not within the required interval of [-1, {INT32_MAX}].")
        _check_bool(output_numpy, "output_numpy")
        _check_bool(do_copy, "do_copy")
        self._dataset = dataset
        self._col_names = dataset.get_col_names()
        self._select = None
        columns = check_columns(columns, "columns")
        if columns is None and any(c.startswith("_meta-") for c in self._col_names):
            # MindSpore keeps "_meta-" columns (file names and such) out of iterators unless renamed
            columns = [c for c in self._col_names if not c.startswith("_meta-")]
        if columns is not None:
            missing = [c for c in columns if c not in self._col_names]
            if missing:
                raise ValueError(f"Invalid column: columns names {missing[0]!r}, which does not exist; "
                                 f"the dataset has columns {self._col_names}.")
            self._select = [self._col_names.index(c) for c in columns]
            self._col_names = list(columns)
        self._output_numpy = output_numpy
        self._do_copy = do_copy
        # The run releases its workers and buffers on stop(), or by its own finalizer once it is
        # dropped with this iterator; nothing here (no finalizer, no __del__) holds it longer.
        self._run = PipelineRun(dataset._plan, num_epochs)
        start_at_init_step(self._run, dataset, num_epochs)

    def __iter__(self):
        return self

    def __next__(self):
        row = self._run.next_row()
        if self._select is not None:
            row = [row[i] for i in self._select]
        return self._convert(row)

    def _out_value(self, v):
        if self._output_numpy or not isinstance(v, np.ndarray) or v.dtype.kind in "USO":
            return v
        if self._do_copy:
            v = v.copy()
        return v.view(Tensor)

    def _convert(self, row):
        raise NotImplementedError

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
        self._run.set_state(state)

    def stop(self):
        """Ends the run: workers stop and buffers are freed. Idempotent."""
        self._run.close()

    release = stop
    terminate = stop
    close = stop

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class TupleIterator(Iterator):
    """Yields each row as a list of column values, in column order."""

    def _convert(self, row):
        if self._output_numpy:
            return list(row)
        return [self._out_value(v) for v in row]


class DictIterator(Iterator):
    """Yields each row as a {column name: value} dict."""

    def _convert(self, row):
        if self._output_numpy:
            return dict(zip(self._col_names, row))
        return {name: self._out_value(v) for name, v in zip(self._col_names, row)}
