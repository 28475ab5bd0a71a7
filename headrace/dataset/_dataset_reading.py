"""What every dataset can be asked once built: its iterators, size, columns, first row, shuffle and
shard flags, class indexing; saving it as MindRecord or JSON; its initial step. ``Dataset``
(``_datasets.py``) adds the methods that build pipelines."""
from __future__ import annotations
import dataclasses
from typing import Any
import numpy as np
from headrace._util.checks import check_int, check_type
from headrace._util.errors import add_note
from headrace._engine.plan import counted_size
from headrace._engine.run import PipelineRun
from headrace._engine import options as _options
from headrace.dataset import _provided
from headrace.dataset._init_step import check_init_step
from headrace.dataset._iterators import DictIterator, TupleIterator
from headrace.mindrecord._save import write_dataset


class DatasetReading:
    """The reading half of ``Dataset``: everything here works from ``self._plan`` and ``self.children``."""

    children: list

    def save(self, file_name, num_files=1, file_type="mindrecord"):
        """Writes one epoch of this pipeline as MindRecord files (MindSpore's type mapping).

        Scalars of bool/int8..int32/uint8/uint16 are stored as int32, uint32/int64/uint64 as int64,
        float16/float32 as float32, str as string and bytes as bytes; arrays keep their dtype class
        with shape [-1, ...]. Scalar non-bytes columns are indexed.

        Args:
            file_name (str): the data file (with ``num_files > 1``, shards get suffixes 0..n-1).
            num_files (int, optional): number of shard files, in [1, 1000]. Default: 1.
            file_type (str, optional): only 'mindrecord'. Default: 'mindrecord'.

        Examples:
            >>> import os, tempfile, headrace.dataset as ds
            >>> path = os.path.join(tempfile.mkdtemp(), "x.mindrecord")
            >>> ds.NumpySlicesDataset({"x": [1, 2]}, shuffle=False).save(path)
            >>> [int(r[0]) for r in ds.MindDataset(path, shuffle=False).create_tuple_iterator(output_numpy=True)]
            [1, 2]
        """
        check_type(file_name, str, "file_name")
        num_files = check_int(num_files, "num_files")
        if not 1 <= num_files <= 1000:
            raise ValueError("num_files should between 0 and 1000.")
        if file_type != "mindrecord":
            raise ValueError(f"{file_type} dataset format is not supported.")
        run = PipelineRun(self._plan, num_epochs=1)

        def rows():
            while True:
                try:
                    yield run.next_row()
                except StopIteration:
                    return
        try:
            write_dataset(file_name, num_files, self.get_col_names(), rows())
        finally:
            run.close()

    def to_json(self, filename=""):
        """This pipeline as a dict in MindSpore's JSON layout, also written to ``filename`` if
        given (``ds.serialize``; ``ds.deserialize`` rebuilds it)."""
        return _provided.get("serialize")(self, filename)  # _serdes sits above every dataset class

    def set_init_step(self, init_step):
        """Iterators created later start at global step ``init_step`` (rows over epochs) with the
        rows of an uninterrupted run, for ``num_epochs`` minus the epochs skipped.

        Raises:
            TypeError: If init_step is not an int.
            ValueError: If init_step is negative.
        """
        self.__dict__["_init_step"] = check_init_step(init_step)

    def get_init_step(self):
        """The step set by ``set_init_step`` here, else that of the only input dataset, else 0."""
        step = self.__dict__.get("_init_step")
        if step is not None:
            return step
        return self.children[0].get_init_step() if len(self.children) == 1 else 0

    # ---- iterators ------------------------------------------------------------------------
    def create_tuple_iterator(self, columns=None, num_epochs=-1, output_numpy=False, do_copy=None):
        """An iterator yielding each row as a list of column values.

        ``do_copy``: whether Tensors (``output_numpy=False``) get memory of their own rather than
        sharing the pipeline's arrays; None (default): ``ds.config.get_iterator_mode()["do_copy"]``,
        False unless ``ds.config.set_iterator_mode`` changed it.

        Examples:
            >>> import headrace.dataset as ds
            >>> it = ds.NumpySlicesDataset([1, 2], shuffle=False).create_tuple_iterator(output_numpy=True)
            >>> [r[0].item() for r in it]
            [1, 2]
        """
        return TupleIterator(self, columns, num_epochs, output_numpy, do_copy)

    def create_dict_iterator(self, num_epochs=-1, output_numpy=False, do_copy=None):
        """An iterator yielding each row as a {column name: value} dict (``do_copy``: as for
        ``create_tuple_iterator``)."""
        return DictIterator(self, None, num_epochs, output_numpy, do_copy)

    def __iter__(self):
        return iter(self.create_tuple_iterator(num_epochs=1))

    def __len__(self):
        return self.get_dataset_size()

    # Marks a pipeline for code that sniffs ``__getitem__`` (a GeneratorDataset over a pipeline
    # iterates it: it is not read by index).
    _is_pipeline = True

    def __getitem__(self, index):
        # MindSpore's datasets are not subscriptable either (GeneratorDataset over a random-access
        # source is, and defines its own). torch's DataLoader indexes what it is given: say what
        # feeds it instead of only "not subscriptable".
        err = TypeError(f"'{type(self).__name__}' object is not subscriptable")  # MindSpore's words
        add_note(err, "A headrace pipeline is read by iterating it, not by index. For PyTorch, iterate "
                      "headrace.torch.Loader(dataset) (torch tensors, sharded under torch.distributed), or give "
                      "torch.utils.data.DataLoader headrace.torch.as_iterable_dataset(dataset) (with "
                      "batch_size=None if the pipeline batches).")
        raise err

    # ---- info -----------------------------------------------------------------------------
    def get_dataset_size(self):
        """Rows (or batches) per epoch; computed from the plan where possible, else by reading."""
        size = self._plan.size()
        if size is not None:
            return size
        cached = self.__dict__.get("_counted_size")
        if cached is None:
            cached = self.__dict__["_counted_size"] = counted_size(self._plan, _read_rows)
        return cached

    def get_col_names(self):
        return list(self._plan.columns)

    def _first_row(self):
        row = self.__dict__.get("_first")
        if row is None:
            run = PipelineRun(self._plan, num_epochs=1, options=_peeking())
            try:
                row = run.next_row()
            except StopIteration:
                row = ()
            finally:
                run.close()
            self.__dict__["_first"] = row
        return row

    def output_shapes(self, estimate=False):
        """Shapes of the first row's columns, as lists (``[0]`` for a Python dict column, as in MindSpore)."""
        return [[0] if isinstance(v, dict) else list(np.shape(v)) for v in self._first_row()]

    def output_types(self):
        """NumPy dtypes of the first row's columns (strings as ``<U``, bytes as ``S``)."""
        out = []
        for v in self._first_row():
            dt = np.asarray(v).dtype if not isinstance(v, dict) else np.dtype(object)
            out.append(np.dtype(dt.kind) if dt.kind in "US" else dt)
        return out

    def get_batch_size(self):
        """The batch size of the nearest batch along the first inputs (1 without one; -1 when it
        is a function of ``BatchInfo``)."""
        return self.children[0].get_batch_size() if self.children else 1

    def reset(self):
        """Readies the dataset for its next epoch (returns None).

        In headrace every ``create_*_iterator`` call starts a fresh run from the first epoch and
        the dataset itself holds no position, so there is nothing left to reset; the method exists
        because MindSpore's tutorials call it between single-epoch iterators.

        Examples:
            >>> import headrace.dataset as ds
            >>> d = ds.NumpySlicesDataset([1, 2], shuffle=False)
            >>> for _ in range(2):
            ...     print([int(r[0]) for r in d.create_tuple_iterator(num_epochs=1, output_numpy=True)])
            ...     d.reset()
            [1, 2]
            [1, 2]
        """
        return None

    def get_repeat_count(self):
        """The count of the nearest repeat along the first inputs (1 without one)."""
        return self.children[0].get_repeat_count() if self.children else 1

    def get_class_indexing(self):
        src = self._walk_source()
        return src._class_indexing() if src is not None else {}

    def num_classes(self):
        src = self._walk_source()
        return src._num_classes() if src is not None else None

    def _walk_source(self):
        node: Any = self
        while node is not None and node.children:
            node = node.children[0]
        return node if hasattr(node, "_class_indexing") else None

    def _class_indexing(self):
        return {}

    def _num_classes(self):
        return None

    def is_shuffled(self):
        return any(c.is_shuffled() for c in self.children)

    def is_sharded(self):
        return any(c.is_sharded() for c in self.children)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(columns={self.get_col_names()})"


def _read_rows(plan: Any) -> int:
    """The rows one pass of ``plan`` gives, by reading them."""
    run = PipelineRun(plan, num_epochs=1, options=_peeking())
    try:
        rows = 0
        while True:
            try:
                run.next_row()
            except StopIteration:
                return rows
            rows += 1
    finally:
        run.close()


def _peeking() -> _options.Options:
    """The settings of a run that only looks at rows (sizes, shapes, types): no map callbacks, no
    autotune."""
    return dataclasses.replace(_options.snapshot(), hooks=False, autotune=False)
