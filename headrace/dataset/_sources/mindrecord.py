"""MindDataset: rows of MindRecord files, read by index.

``MindRecordSource`` is the random-access source the engine reads (one ``os.pread`` per row, from
any thread or process). ``MindDataset`` is MindSpore's class on top of it. Its sampling follows
MindSpore's MindRecord samplers, which differ from the samplers of other sources: shuffles use
``std::default_random_engine`` (``minstd_rand0``) seeded with ``seed + 1`` (+ the epoch), not the
Mersenne Twister.

* ``shuffle`` on (the default) without shards: epoch k shuffles epoch k-1's order again with seed
  ``seed + 1 + k``; with ``num_samples`` rows are drawn with replacement instead.
  Epoch k > 0 draws again, with replacement, from epoch k-1's draws (not from all rows), each
  draw j from ``mt19937(seed + 1 + k + j)``.
* with ``num_shards``: every epoch shuffles ``range(rows)`` afresh with seed ``seed + 1 + k``,
  then shard ``i`` takes positions ``i, i + num_shards, ...`` (wrapping to equal sizes).
* ``Shuffle.FILES``: epoch k shuffles the list of files with seed ``seed + 1 + k`` and lays the
  blocks of the previous epoch's order out in that file order, where block f is the positions
  that file f's rows had in file order (so from the second epoch on a block no longer holds
  one file's rows: epoch 2 of three files of 7, 7 and 6 rows can start in the middle of a file).
  Rows inside a block keep their order.
* ``Shuffle.INFILE``: epoch k shuffles each file's block of positions of the previous epoch's
  order in place, every file with seed ``seed + 1 + k``; the files stay in order.
* FILES and INFILE with ``num_shards``: every epoch starts afresh from file order, does the one
  shuffle of epoch k, then shard ``i`` takes positions ``i, i + num_shards, ...`` (wrapping).
  Padded rows stay after the data rows and are not shuffled by FILES or INFILE.
* ``Shuffle.PARTIAL``: every epoch afresh, with ``s = seed + 1 + k``: the files in the order
  ``minstd_shuffle(files, s)`` (padded rows after them), the shard's positions of that order, its
  first ``num_samples``, then every run of 1000000 rows shuffled with ``minstd_shuffle(run, s)``.
  ``Shuffle.ADAPTIVE`` (the default, and ``True``) is the global shuffle up to 100 million rows and
  PARTIAL above.
* ``MS_DEV_MINDRECORD_SHARD_BY_BLOCK=true`` (read when a pass starts): a shard takes a contiguous
  block of ``ceil(rows / num_shards)`` positions (wrapping to the start) instead of every
  ``num_shards``-th position, for every mode, shuffled or not.
* ``RandomSampler(shuffle=mode)`` and ``DistributedSampler(..., shuffle=mode)`` read as
  ``shuffle=mode`` (with the sampler's shards); ``RandomSampler(num_samples=n)`` without replacement
  takes the first n rows of the first epoch's shuffle and shuffles those n again every epoch.
* ``SubsetRandomSampler``: the given ids shuffled with seed ``seed + 1``, the same every epoch.
* Padded samples (``padded_sample``/``num_padded``) are rows ``rows .. rows + num_padded - 1``
  and take part in shuffling and sharding like any row (except for FILES and INFILE, above).
* ``PKSampler``: MindSpore 2.10 picks as many rows per class as headrace (classes in the order of
  their values as strings), but the values it then yields are those of the first row of the file
  that holds each picked row (a MindSpore bug); headrace yields the picked rows themselves.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Sequence

import numpy as np

from headrace._engine.samplers import MindFilePlan, MindShufflePlan, MindSubsetRandomPlan, SamplerPlan
from headrace._util import checks
from headrace._util.errors import EarlyTypeError, EarlyValueError
from headrace.dataset import samplers as S
from headrace.dataset._sources._mind_chain import chain_plan, plan_over_split
from headrace.dataset._sources.base import MappableDataset
from headrace.dataset.core import config
from headrace.dataset._sampler_args import check_sampler_shuffle_shard_options, select_sampler
from headrace.dataset.samplers import is_shuffle
from headrace.mindrecord._format.crypto import check_on_open, get_enc_key
from headrace.mindrecord._format.errors import MindRecordRuntimeError
from headrace.mindrecord._format.fast_read import fast_row_reader
from headrace.mindrecord._format.reader import ColumnDecoder, ShardSetReader
from headrace.mindrecord._format.verify import resolve_verify
from headrace._util.pickling import set_attributes

__all__ = ["MindDataset", "MindRecordSource"]

_LE = {"int32": "<i4", "int64": "<i8", "float32": "<f4", "float64": "<f8"}


# ---------------------------------------------------------------------------------------------
# The source
# ---------------------------------------------------------------------------------------------

def _read_row(reader: ShardSetReader, decoder: ColumnDecoder, padded, num_padded: int, index: int) -> tuple:
    """Row ``index`` of a MindRecord source (padded rows after the data), without the fast path."""
    n = len(reader)
    if index >= n:
        if index < n + num_padded:
            return tuple(a.copy() for a in padded)
        raise IndexError(f"row {index} is out of range for MindDataset of {n + num_padded} rows")
    if index < 0:
        raise IndexError(f"row {index} is out of range for MindDataset of {n + num_padded} rows")
    rec, blob = reader.read_records(index)
    return tuple(decoder.decode(rec, blob, lambda: reader.where(index)))


class MindRecordSource:
    """Random access to the rows of MindRecord files, as tuples of NumPy arrays.

    Column values are what MindSpore's MindDataset yields: int32/int64/float32/float64 scalars as
    0-d arrays of that dtype, strings as 0-d ``U`` arrays, bytes as ``S`` arrays of shape (1,)
    (the full bytes, trailing NULs included, via ``.tobytes()``), arrays in their schema dtype and
    shape. Rows past the data are the padded sample.

    Args:
        dataset_files: a data file (all shards of its dataset) or a list of data files (only those).
        columns_list: columns to produce, in order; None means every field, sorted by name.
        padded_sample: values of the padded row, by column (needs ``columns_list``).
        num_padded: how many padded rows follow the data.
        rebuild_missing_index: rebuild a missing or damaged ``.db`` in memory instead of raising.
        verify: verify the files in full now (``headrace.mindrecord.verify``) instead of only
            checking the row tables; reading rows afterwards costs the same.

    Raises:
        RuntimeError: a file is missing or damaged, or a column is not in the schema.
        TypeError, ValueError: a padded value does not fit its column.
    """

    def __init__(self, dataset_files: str | Sequence[str], columns_list: Sequence[str] | None = None,
                 padded_sample: dict | None = None, num_padded: int = 0, *,
                 rebuild_missing_index: bool = False, verify: bool = False) -> None:
        files = [dataset_files] if isinstance(dataset_files, str) else list(dataset_files)
        self._reader = ShardSetReader(files, load_dataset=isinstance(dataset_files, str),
                                      rebuild_missing_index=rebuild_missing_index, verify=verify)
        if verify:
            self._reader.ensure_loaded()
        schema = self._reader.schema
        if columns_list:
            for c in columns_list:
                if c not in schema.fields:
                    raise MindRecordRuntimeError(f"Invalid data, column name: {c} can not found in schema. Please "
                                                 f"check the 'column_list'.")
            self.column_names = list(columns_list)
        else:
            self.column_names = list(schema.names)
        self._decoder = ColumnDecoder(schema, self.column_names, self._reader.compressed, flavor="numpy")
        self._num_padded = int(num_padded or 0)
        self._padded = (padded_row(schema, self.column_names, padded_sample) if self._num_padded else None)
        self._rows = -1
        self._install_fast_read()

    def _install_fast_read(self) -> None:
        # ``read`` becomes an instance attribute: the reader's fast path for the common layout, which
        # hands every other row to ``_read`` (same values, same errors). Not pickled; rebuilt.
        # The fallback closes over the reader and padding, not over ``self``: a bound method here
        # would make a cycle (self -> read -> self) that keeps the source, its reader and any
        # decrypted copies of encrypted files alive until the garbage collector runs.
        reader, decoder, padded, num_padded = self._reader, self._decoder, self._padded, self._num_padded

        def general(index: int) -> tuple:
            return _read_row(reader, decoder, padded, num_padded, index)

        self.read = fast_row_reader(reader, decoder, general)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("read", None)
        return state

    def __setstate__(self, state: dict) -> None:
        set_attributes(self, state)
        self._install_fast_read()

    @property
    def num_data_rows(self) -> int:
        """Rows stored in the files (without padded rows)."""
        if self._rows < 0:
            self._rows = len(self._reader)
        return self._rows

    @property
    def schema(self):
        return self._reader.schema

    @property
    def files(self) -> list[str]:
        return list(self._reader.paths)

    @property
    def file_rows(self) -> list[int]:
        """Data rows of each file, in file order (from the headers)."""
        return [h.num_rows for h in self._reader.headers]

    def __len__(self) -> int:
        return self.num_data_rows + self._num_padded

    def file_of(self, index: int) -> str | None:
        """The data file of row ``index`` (None for a padded row): error messages name it."""
        if not 0 <= index < self.num_data_rows:
            return None
        return self._reader.where(index)[0]

    def read(self, index: int) -> tuple:
        """Row ``index`` as a tuple of arrays in ``column_names`` order (thread-safe)."""
        return self._read(index)   # instances read through the attribute set by _install_fast_read

    def _read(self, index: int) -> tuple:
        """``read`` without the fast path."""
        return _read_row(self._reader, self._decoder, self._padded, self._num_padded, index)

    def column_values(self, column: str) -> list:
        """Every data row's value of a scalar column (for PKSampler), read from the raw records."""
        decoder = ColumnDecoder(self._reader.schema, [column], self._reader.compressed, flavor="python")
        reader = self._reader
        out = []
        for i in range(self.num_data_rows):
            rec, blob = reader.read_records(i)
            out.append(decoder.decode(rec, blob, lambda i=i: reader.where(i))[0])
        return out

    def close(self) -> None:
        self._reader.close()


def padded_row(schema, columns: Sequence[str], sample: dict) -> tuple:
    """The padded sample converted to what a row of those columns holds."""
    out = []
    for c in columns:
        f = schema.fields[c]
        v = sample[c]
        try:
            if f.type == "bytes":
                if isinstance(v, np.ndarray):
                    v = v.tobytes()
                elif isinstance(v, str):
                    v = v.encode("utf-8")
                if not isinstance(v, (bytes, bytearray)):
                    raise TypeError(f"expected bytes, got {type(v).__name__}")
                out.append(np.frombuffer(bytes(v), dtype=f"S{len(v)}") if v else np.zeros(1, dtype="S1"))
            elif f.type == "string":
                if not isinstance(v, (str, np.str_)):
                    raise TypeError(f"expected str, got {type(v).__name__}")
                out.append(np.array(str(v)))
            else:
                arr = np.asarray(v)
                if arr.dtype.kind not in "biuf":
                    raise TypeError(f"expected a number or a numeric array, got {arr.dtype}")
                if f.type.startswith("int") and arr.dtype.kind == "f" and not np.all(np.mod(arr, 1) == 0):
                    raise ValueError(f"{v!r} is not a whole number for a {f.type} column")
                cast = arr.astype(_LE[f.type])
                if f.type.startswith("int") and not np.array_equal(cast, arr):
                    raise ValueError(f"{v!r} does not fit in {f.type}")
                if f.shape is not None:
                    cast = cast.reshape(f.shape)
                elif cast.ndim:
                    raise ValueError(f"expected a scalar, got shape {cast.shape}")
                out.append(cast)
        except (TypeError, ValueError) as exc:
            text = (f"padded_sample['{c}'] does not fit column '{c}' ({f.type}"
                    f"{'' if f.shape is None else ' ' + str(list(f.shape))}): {exc}")
            if f.type != "bytes" and f.shape is None and np.ndim(v) > 0:  # MindSpore's sentence first
                text = (f"Invalid padded_sample, the value of column: {c} should be string or number but got: {{}}, "
                        f"check 'padded_sample'. {text}")
            # a RuntimeError too: MindSpore raises one when the pipeline runs
            raise (EarlyTypeError if isinstance(exc, TypeError) else EarlyValueError)(text) from None
    return tuple(out)


_MODES = {"ADAPTIVE": "adaptive", "GLOBAL": "global", "PARTIAL": "partial", "FALSE": "false"}


def _mode(shuffle: Any) -> str:
    """'adaptive', 'global', 'partial', 'files', 'infile' or 'false' for a shuffle argument or mode."""
    if shuffle is None or shuffle is True:
        return "adaptive"
    if shuffle is False:
        return "false"
    return _MODES.get(shuffle.name, shuffle.value)


def _no_num_samples(mode: str, num_samples: int) -> None:
    if num_samples and mode in ("files", "infile"):
        raise RuntimeError("MindDataset: Shuffle.kFiles or Shuffle.kInfile and num_samples cannot be specified at "
                           "the same time.")


def _mind_plan(shuffle: Any, sampler: Any, num_samples: int | None, num_shards: int | None,
               shard_id: int | None) -> SamplerPlan | None:
    """MindRecord's own plan for these arguments, or None where the engine's standard plan matches."""
    limit = num_samples or 0
    if sampler is None:
        mode = _mode(shuffle)
        if num_shards is None:
            return _unsharded(mode, limit)
        return _sharded(mode, num_shards, shard_id, limit, config.get_seed())
    if sampler.child_sampler is not None:  # MindRecord's own way of running a chain
        return chain_plan(sampler)
    if isinstance(sampler, S.SubsetRandomSampler) or (isinstance(sampler, S.SubsetSampler)
                                                       and sampler.child_sampler is None):
        return MindSubsetRandomPlan(tuple(int(i) for i in sampler.indices), sampler.num_samples or 0,
                                    isinstance(sampler, S.SubsetRandomSampler))
    if sampler.child_sampler is not None:
        return None
    if isinstance(sampler, S.RandomSampler):
        mode = _mode(sampler.shuffle)
        _no_num_samples(mode, sampler.num_samples)
        plan = _unsharded(mode, sampler.num_samples or 0)
        if isinstance(plan, MindShufflePlan) and not sampler.replacement:
            plan = dataclasses.replace(plan, replacement=False)
        return plan
    if isinstance(sampler, S.DistributedSampler):
        sampler.check_num_shards()  # MindSpore crashes on it (a shard_id out of range it reads)
        mode = _mode(sampler.shuffle)
        _no_num_samples(mode, sampler.num_samples)
        if sampler.offset == -1 or mode == "partial":
            return _sharded(mode, sampler.num_shards, sampler.shard_id, sampler.num_samples or 0, sampler.seed)
    return None


def _unsharded(mode: str, limit: int) -> SamplerPlan | None:
    if mode == "false":
        return None
    if mode in ("files", "infile"):
        return MindFilePlan(mode)
    return MindShufflePlan(num_samples_limit=limit, mode=mode)


def _sharded(mode: str, num_shards: int, shard_id: int, limit: int, seed: int) -> SamplerPlan:
    if mode in ("files", "infile"):
        return MindFilePlan(mode, num_shards=num_shards, shard_id=shard_id, seed=seed)
    return MindShufflePlan(num_shards, shard_id, limit, seed=seed, mode=mode)


def _with_sizes(plan: Any, file_rows: Sequence[int]) -> Any:
    """``plan`` with the rows of each file filled in where it shuffles files."""
    if isinstance(plan, (MindFilePlan, MindShufflePlan)) and not plan.sizes:
        return dataclasses.replace(plan, sizes=tuple(file_rows))
    return plan


# ---------------------------------------------------------------------------------------------
# MindDataset
# ---------------------------------------------------------------------------------------------

def _check_file(path: Any) -> str:
    if not isinstance(path, str):
        raise TypeError(f"path: {path} is not string")
    name = os.path.basename(os.path.realpath(path))
    if set(name) & set("\\/:*?\"<>|`&';"):
        raise ValueError("filename should not contain \\/:*?\\\"<>|`&;\\'")
    if name.startswith(" ") or name.endswith(" "):
        raise ValueError("filename should not start/end with space.")
    real = os.path.realpath(path)
    if not os.path.isfile(real) or not os.access(real, os.R_OK):
        raise ValueError(f"The file {real} does not exist or permission denied!")
    return path


def _type_check(value: Any, types: tuple, name: str) -> None:
    if value is None:
        return
    if isinstance(value, bool) and int in types:
        raise TypeError(f"Argument {name} with value {value} is not of type {list(types)}, but got {type(value)}.")
    if not isinstance(value, types):
        raise TypeError(f"Argument {name} with value {value} is not of type {list(types)}, but got {type(value)}.")


class MindDataset(MappableDataset):
    """A source dataset reading MindRecord files.

    Args:
        dataset_files (Union[str, list[str]]): A data file (every shard of its dataset is read) or
            a list of data files (only those, in that order).
        columns_list (list[str], optional): Columns to read, in output order. Default: ``None``
            (every field, sorted by name).
        num_parallel_workers (int, optional): Reader threads. Default: ``None`` (the configured number).
        shuffle (Union[bool, Shuffle], optional): Shuffle rows every epoch. Default: ``None`` (shuffle).
        num_shards (int, optional): Split the dataset into this many shards. Default: ``None``.
        shard_id (int, optional): The shard to read. Default: ``None``.
        sampler (Sampler, optional): SubsetRandomSampler, SubsetSampler, PKSampler,
            DistributedSampler, RandomSampler or SequentialSampler. Default: ``None``.
        padded_sample (dict, optional): A row appended ``num_padded`` times (needs ``columns_list``).
            Default: ``None``.
        num_padded (int, optional): Number of padded rows. Default: ``None``.
        num_samples (int, optional): Rows to read. Default: ``None`` (all).
        cache (DatasetCache, optional): cache the rows (``headrace.dataset.cache``). Default: ``None``.
        verify (bool, optional): headrace only (keyword). Verify the files in full when the
            dataset first reads them: every record decoded and checked, each ``.db`` checked against
            its data file (``headrace.mindrecord.verify``). The format has no checksum, so a changed
            byte inside a ``bytes`` field or a float array can still go unseen. Reading rows
            afterwards costs the same. Default: ``None`` (the value of
            ``headrace.mindrecord.set_verify_on_open`` when the dataset is made, False unless set).

    Raises:
        ValueError: a file does not exist, or the arguments conflict.
        RuntimeError: a ``.db`` index is missing, or padding arguments are incomplete.
        TypeError: an argument has the wrong type.

    Examples:
        >>> import os, tempfile
        >>> import headrace.dataset as ds
        >>> from headrace.mindrecord import FileWriter
        >>> path = os.path.join(tempfile.mkdtemp(), "md.mindrecord")
        >>> w = FileWriter(path); w.add_schema({"label": {"type": "int32"}, "data": {"type": "bytes"}})
        >>> w.write_raw_data([{"label": i, "data": bytes([i])} for i in range(3)]); w.commit()
        WriteReport(written=3, dropped=0)
        WriteReport(written=3, dropped=0)
        >>> d = ds.MindDataset(path, shuffle=False)
        >>> [int(r["label"]) for r in d.create_dict_iterator(output_numpy=True)]
        [0, 1, 2]
    """

    #: MindSpore reads it with its MindRecord reader, whose orders differ from other sources': a
    #: sharded ConcatDataset gives each shard a block of its rows (dataset/_concat_sampling.py), a
    #: split deals its rows as the reader runs a sampler chain (dataset/_sources/_mind_chain.py)
    reads_as_mindrecord = True

    def __init__(self, dataset_files, columns_list=None, num_parallel_workers=None, shuffle=None, num_shards=None,
                 shard_id=None, sampler=None, padded_sample=None, num_padded=None, num_samples=None, cache=None, *,
                 verify=None):
        verify = resolve_verify(verify)
        if isinstance(dataset_files, list):
            if not dataset_files:
                raise ValueError("dataset_files should not be empty.")
            for f in dataset_files:
                _check_file(f)
        else:
            _check_file(dataset_files)
        for name, value in (("num_samples", num_samples), ("num_shards", num_shards), ("shard_id", shard_id),
                            ("num_padded", num_padded)):
            _type_check(value, (int,), name)
        checks.check_num_samples(num_samples)
        if num_parallel_workers is not None:
            checks.check_num_parallel_workers(num_parallel_workers)
        _type_check(columns_list, (list,), "columns_list")
        _type_check(padded_sample, (dict,), "padded_sample")
        check_sampler_shuffle_shard_options(sampler, shuffle, num_shards, shard_id, num_samples)
        if padded_sample is not None:
            if num_padded is None:
                raise RuntimeError("padded_sample is specified and requires num_padded as well.")
            if num_padded < 0:
                raise ValueError(f"num_padded is invalid, num_padded={num_padded}.")
            if columns_list is None:
                raise RuntimeError("padded_sample is specified and requires columns_list as well.")
            for column in columns_list:
                if column not in padded_sample:
                    raise ValueError("padded_sample cannot match columns_list.")
        if padded_sample is None and num_padded is not None:
            raise RuntimeError("num_padded is specified but padded_sample is not.")
        if num_samples and is_shuffle(shuffle, "FILES", "INFILE"):
            raise ValueError("'Shuffle.FILES' or 'Shuffle.INFILE' and 'num_samples' cannot be specified at the "
                             "same time.")
        valid = (S.SubsetRandomSampler, S.SubsetSampler, S.PKSampler, S.DistributedSampler, S.RandomSampler,
                 S.SequentialSampler)
        if sampler is not None and not isinstance(sampler, valid):
            raise ValueError("The sampler is not supported yet.")
        files = list(dataset_files) if isinstance(dataset_files, list) else [dataset_files]
        if not isinstance(dataset_files, list):
            db = dataset_files + ".db"
            if not os.path.exists(db):
                raise RuntimeError(f"The input: {db} is not exists.")
        else:
            for f in files:
                if not os.path.exists(f + ".db"):
                    raise RuntimeError(f"The input: {f}.db is not exists.")
        for f in files:     # as MindSpore: sizes and encryption markers are checked now
            if os.path.isfile(f):
                check_on_open(f)
                check_on_open(f + ".db")
        super().__init__(num_samples=num_samples, num_parallel_workers=num_parallel_workers, shuffle=shuffle,
                         sampler=sampler, num_shards=num_shards, shard_id=shard_id, cache=cache)
        self.shuffle_flag = shuffle
        self.dataset_files = dataset_files
        self.columns_list = columns_list
        self.padded_sample = padded_sample
        self.num_padded = num_padded or 0
        self.verify = verify
        if get_enc_key() is not None:
            # Encrypted files are decrypted now, with the key set now (as MindSpore does), not when
            # the pipeline first runs; the plain copies live as long as the source.
            self._source()

    def __getitem__(self, index):
        """The row at position ``index`` of the order a first pass reads (the sampler's, shuffle
        and shards included, as MindSpore 2.10), as a list of arrays. The order is drawn once (with
        the configured seed, or a fresh one) and kept until the sampler changes.

        Raises:
            TypeError: ``index`` is not an int.
            ValueError: ``index`` is negative.
            RuntimeError: ``index`` is past the rows of a pass.
        """
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError(f"Argument index with value {index} is not of type [<class 'int'>], but got "
                            f"{type(index)}.")
        if index < 0:
            raise ValueError(f"index cannot be negative, but got {index}.")
        src = self._source()
        order = self.__dict__.get("_access_order")
        if order is None:
            order = self.__dict__["_access_order"] = self._first_pass_order()
        if index >= len(order):
            raise RuntimeError(f"Input index is not within the required interval of [0, {len(order) - 1}], "
                               f"but got {index}.")
        return list(src.read(int(order[index])))

    def _plan_over_split(self, sampler, split):
        plan = plan_over_split(self, sampler)
        return super()._plan_over_split(sampler, split) if plan is None else plan

    def _make_source(self) -> MindRecordSource:
        shards = self.num_shards
        if self.num_padded and self.sampler is not None and self.sampler.child_sampler is not None:
            # as MindSpore, before the padded sample is read: padded rows with a chain need a
            # distributed sampler innermost, whose shards then divide the rows
            inner = self.sampler
            while inner.child_sampler is not None:
                inner = inner.child_sampler
            if not isinstance(inner, S.DistributedSampler):
                raise RuntimeError("When the padded sample logic is enabled and use sampler chain,the first sampler "
                                   "which is specified by parameter sampler or (num_shards, shard_id) is not "
                                   "distributed sampling.")
            shards = inner.num_shards
        src = MindRecordSource(self.dataset_files, self.columns_list, self.padded_sample, self.num_padded,
                               verify=getattr(self, "verify", False))
        self._sampler_plan = _with_sizes(self._sampler_plan, src.file_rows)
        if shards is not None and self.num_padded and len(src) % shards:
            raise RuntimeError(f"Invalid data, the size of dataset and padded samples: {len(src)} can not be "
                               f"divisible by the value of 'num_shards': {shards}.\n Please adjust the "
                               f"value of 'num_padded'.")
        return src

    def _labels(self) -> np.ndarray:
        column = getattr(self.sampler, "class_column", None) or "label"
        src = self._source()
        if column not in src.schema.fields or src.schema.fields[column].is_blob:
            raise ValueError(f"PKSampler needs a scalar column '{column}' in the MindRecord schema.")
        values = src.column_values(column)
        values += [None] * (len(src) - len(values))
        _, codes = np.unique(np.array([str(v) for v in values]), return_inverse=True)
        return codes.astype(np.int64)

    def _select_plan(self, num_samples, shuffle, sampler, num_shards, shard_id):
        plan = _mind_plan(shuffle, sampler, num_samples, num_shards, shard_id)
        if plan is None:
            return select_sampler(num_samples, shuffle, sampler, num_shards, shard_id)
        src = self.__dict__.get("_src")
        return plan if src is None else _with_sizes(plan, src.file_rows)
