"""Sources that read no files: RandomDataset, FakeImageDataset (synthetic rows) and PaddedDataset
(rows given as a list of dicts, typically concatenated to a dataset to pad its shards)."""
from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from headrace._engine import options as _options
from headrace._util import checks
from headrace._util.arrays import to_array
from headrace._util.rng import key_rng, new_seed
from headrace.dataset._schema import ColumnSpec, Schema, load_schema_file
from headrace.dataset._sources._docs import with_sampling_args
from headrace.dataset._sources.base import MappableDataset
from headrace.dataset._sampler_args import check_sampler_shuffle_shard_options

__all__ = ["FakeImageDataset", "PaddedDataset", "RandomDataset"]

_RANDOM_TYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32",
                 "float64", "bool")


def _random_values(gen: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    if dtype == np.bool_:
        return gen.integers(0, 2, shape, dtype=np.uint8).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return gen.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    return gen.random(shape).astype(dtype)


class RandomSource:
    """Row ``i`` is drawn from a generator keyed by (seed, i): any order, any worker, same values."""

    def __init__(self, specs: Sequence[tuple[str, np.dtype, tuple[int, ...]]], rows: int, seed: int) -> None:
        self.specs = list(specs)
        self.column_names = [s[0] for s in self.specs]
        self.rows = rows
        self.seed = seed

    def __len__(self) -> int:
        return self.rows

    def read(self, index: int) -> tuple:
        gen = key_rng(self.seed, 0x52414E44, index)  # "RAND"
        return tuple(_random_values(gen, dtype, shape) for _, dtype, shape in self.specs)


class RandomDataset(MappableDataset):
    """Rows of random numbers, for trying out pipelines.

    Columns come from ``schema`` (a ``Schema`` or a schema file); a column without a shape, or a
    -1 dimension, gets a random size, fixed for the dataset. Without a schema there are 1 to 4
    columns ``c0``, ``c1``, ... of random numeric types and shapes. Integers cover their type's
    range, floats lie in [0, 1), booleans are fair coins. Rows are reproducible: the values of row
    ``i`` depend only on the seed (``ds.config.set_seed``, else drawn once per dataset) and ``i``.

    Differences from MindSpore 2.10, whose rows repeat one random value over a whole tensor and
    whose unspecified dimensions change from row to row: here every element is drawn and shapes
    stay fixed; ``num_samples``, ``shuffle`` and sharding are honoured (MindSpore ignores them);
    string columns are refused (MindSpore fails when it reads them).

    Args:
        total_rows (int, optional): Rows; None or 0 means a random number from 1 to 1024.
            Default: None.
        schema (Union[str, Schema], optional): Column names, types and shapes. Default: None.
        columns_list (list[str], optional): Columns of the schema to produce. Default: None, all.
        num_samples (int, optional): Rows to read. Default: None, all.
        num_parallel_workers (int, optional): Worker threads. Default: None, the configured number.
        cache (DatasetCache, optional): cache the rows (``headrace.dataset.cache``). Default: None.
        shuffle (bool, optional): Shuffle the rows. Default: None, no.
        num_shards (int, optional): Split the rows into this many shards. Default: None.
        shard_id (int, optional): The shard to read. Default: None.

    Examples:
        >>> import headrace.dataset as ds
        >>> schema = ds.Schema()
        >>> schema.add_column("image", "uint8", [2, 2, 3])
        >>> schema.add_column("label", "int32", [])
        >>> d = ds.RandomDataset(total_rows=3, schema=schema)
        >>> [(r[0].shape, r[1].dtype) for r in d.create_tuple_iterator(output_numpy=True)]
        [((2, 2, 3), dtype('int32')), ((2, 2, 3), dtype('int32')), ((2, 2, 3), dtype('int32'))]
    """

    def __init__(self, total_rows=None, schema=None, columns_list=None, num_samples=None, num_parallel_workers=None,
                 cache=None, shuffle=None, num_shards=None, shard_id=None):
        if total_rows is not None:
            total_rows = checks.check_int(total_rows, "total_rows")
            checks.check_range(total_rows, (0, checks.INT32_MAX), "total_rows")
        if schema is not None:
            checks.check_type(schema, (str, os.PathLike, Schema), "schema")
        if columns_list is not None:
            checks.check_type(columns_list, list, "columns_list")
            columns_list = checks.check_columns(columns_list, "columns_list") if columns_list else None
        seed = _options.snapshot().seed
        self.seed = int(seed) if seed is not None else new_seed()
        self.total_rows = total_rows
        self.schema = schema
        self.columns_list = columns_list
        self._specs = self._resolve(schema, columns_list)
        super().__init__(num_samples, num_parallel_workers, False if shuffle is None else shuffle, None,
                         num_shards, shard_id, cache)

    def _resolve(self, schema: Any, columns_list: list[str] | None) -> list[tuple[str, np.dtype, tuple[int, ...]]]:
        gen = key_rng(self.seed, 0x53434845)  # "SCHE": the dataset's random layout
        if schema is None:
            specs = [ColumnSpec(f"c{i}", str(gen.choice(_RANDOM_TYPES)), None) for i in range(int(gen.integers(1, 5)))]
        elif isinstance(schema, Schema):
            specs = list(schema.columns)
        else:
            specs = load_schema_file(os.fspath(schema))[0]
        if not specs:
            raise ValueError("RandomDataset: the schema has no columns.")
        if columns_list is not None:
            by_name = {s.name: s for s in specs}
            missing = [c for c in columns_list if c not in by_name]
            if missing:
                raise ValueError(f"columns_list names columns the schema does not have: {missing}.")
            specs = [by_name[c] for c in columns_list]
        out = []
        for spec in specs:
            if spec.type == "string":
                raise ValueError(f"RandomDataset cannot make string columns, but column {spec.name!r} is a string.")
            if spec.shape is None:
                shape = tuple(int(d) for d in gen.integers(1, 33, int(gen.integers(1, 5))))
            else:
                shape = tuple(int(gen.integers(1, 33)) if d == -1 else d for d in spec.shape)
            out.append((spec.name, spec.dtype, shape))
        return out

    def _rows(self) -> int:
        if self.total_rows:
            return self.total_rows
        return int(key_rng(self.seed, 0x524F5753).integers(1, 1025))  # "ROWS"

    def _make_source(self) -> RandomSource:
        return RandomSource(self._specs, self._rows(), self.seed)


class _ClassCount(int):
    """``num_classes`` of FakeImageDataset: an int (MindSpore makes it an attribute) that may also
    be called like ``Dataset.num_classes()``."""

    def __call__(self) -> int:
        return int(self)


class FakeImageSource:
    column_names = ("image", "label")

    def __init__(self, count: int, size: tuple[int, int, int], classes: int, seed: int) -> None:
        self.count, self.size, self.classes, self.seed = count, size, classes, seed

    def __len__(self) -> int:
        return self.count

    def read(self, index: int) -> tuple:
        gen = key_rng(self.seed & 0xFFFFFFFFFFFFFFFF, 0x46414B45, index)  # "FAKE"
        image = gen.integers(0, 256, self.size, dtype=np.uint8)
        label = np.array(gen.integers(0, self.classes), dtype=np.uint32)
        return image, label

    def labels(self) -> np.ndarray:
        return np.array([int(self.read(i)[1]) for i in range(self.count)], dtype=np.int64)


@with_sampling_args
class FakeImageDataset(MappableDataset):
    """Random images with random labels: ``image`` (uint8, ``image_size``, HWC) and ``label``
    (uint32 scalar below ``num_classes``). Image ``i`` depends only on ``base_seed`` and ``i``.

    (MindSpore 2.10 fills its fake images with unrelated bytes; the pixel values here are uniform
    random instead, so they cannot equal MindSpore's.)

    Args:
        num_images (int, optional): Number of images. Default: 1000.
        image_size (tuple, optional): (height, width, channels). Default: (224, 224, 3).
        num_classes (int, optional): Number of classes. Default: 10.
        base_seed (int, optional): Seed of the images. Default: 0.
        {sampling_args}

    Examples:
        >>> import headrace.dataset as ds
        >>> d = ds.FakeImageDataset(num_images=2, image_size=(4, 4, 3), num_classes=3, shuffle=False)
        >>> [(r[0].shape, r[0].dtype, int(r[1]) < 3) for r in d.create_tuple_iterator(output_numpy=True)]
        [((4, 4, 3), dtype('uint8'), True), ((4, 4, 3), dtype('uint8'), True)]
        >>> d.num_classes
        3
    """

    def __init__(self, num_images=1000, image_size=(224, 224, 3), num_classes=10, base_seed=0, num_samples=None,
                 num_parallel_workers=None, shuffle=None, sampler=None, num_shards=None, shard_id=None, cache=None):
        num_images = checks.check_int(num_images, "num_images")
        checks.check_range(num_images, (1, checks.INT32_MAX), "num_images")
        if not isinstance(image_size, (list, tuple)) or len(image_size) != 3:
            raise ValueError(f"image_size should be a list or tuple of length 3, but got "
                             f"{len(image_size) if isinstance(image_size, (list, tuple)) else image_size!r}")
        for i, v in enumerate(image_size):
            checks.check_int(v, f"image_size[{i}]")
            checks.check_range(v, (1, checks.INT32_MAX), f"image_size[{i}]")
        num_classes = checks.check_int(num_classes, "num_classes")
        checks.check_range(num_classes, (1, checks.INT32_MAX), "num_classes")
        base_seed = checks.check_int(base_seed, "base_seed")
        check_sampler_shuffle_shard_options(sampler, shuffle, num_shards, shard_id, num_samples)
        self.num_images = num_images
        self.image_size = tuple(int(v) for v in image_size)
        self.num_classes = _ClassCount(num_classes)
        self.base_seed = base_seed
        super().__init__(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache)

    def _make_source(self) -> FakeImageSource:
        return FakeImageSource(self.num_images, self.image_size, int(self.num_classes), self.base_seed)

    def _labels(self) -> np.ndarray:
        return self._source().labels()

    def _num_classes(self):
        return int(self.num_classes)


class PaddedSource:
    def __init__(self, names: list[str], rows: list[tuple]) -> None:
        self.column_names = names
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def read(self, index: int) -> tuple:
        return self._rows[index]


class PaddedDataset(MappableDataset):
    """Rows given as a list of dicts (column name -> value), read in order.

    Columns are the keys of the first dict; every dict must have them (extra keys are ignored).
    Values become NumPy arrays as in ``GeneratorDataset`` (int -> int64, float -> float64, str ->
    string, bytes -> ``|S``, lists -> arrays). Typically concatenated to another dataset so that
    every shard of a ``DistributedSampler`` gets whole batches.

    Args:
        padded_samples (list[dict]): The rows.

    Raises:
        TypeError: If ``padded_samples`` is not a list of dicts.
        ValueError: If it is empty, a dict is empty, or a dict lacks a column.

    Examples:
        >>> import numpy as np, headrace.dataset as ds
        >>> d = ds.PaddedDataset([{"image": np.zeros(2, np.uint8), "label": 0}, {"image": np.ones(2, np.uint8), "label": 1}])
        >>> d.get_col_names(), [int(r[1]) for r in d.create_tuple_iterator(output_numpy=True)]
        (['image', 'label'], [0, 1])
    """

    def __init__(self, padded_samples):
        checks.check_type(padded_samples, list, "padded_samples")
        if not padded_samples:
            raise ValueError("padded_samples cannot be empty.")
        for i, row in enumerate(padded_samples):
            checks.check_type(row, dict, "padded_element")
        names = list(padded_samples[0].keys())
        if not names:
            raise ValueError("column_names should not be empty.")
        for i, row in enumerate(padded_samples):
            missing = [n for n in names if n not in row]
            if missing:
                raise ValueError(f"padded_samples[{i}] lacks the column(s) {missing} that padded_samples[0] has.")
        self.padded_samples = padded_samples
        self.column_names = [str(n) for n in names]
        try:
            self._rows = [tuple(to_array(row[n]) for n in names) for row in padded_samples]
        except TypeError as e:
            raise TypeError(f"padded_samples holds a value that is not a number, string, bytes or array: {e}") from e
        super().__init__(None, 1, False, None, None, None)

    def _make_source(self) -> PaddedSource:
        return PaddedSource(self.column_names, self._rows)

