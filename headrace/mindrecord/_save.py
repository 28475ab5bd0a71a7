"""Writing pipeline rows to MindRecord the way ``Dataset.save`` does (for ``headrace.dataset``)."""
from __future__ import annotations

import string
from typing import Iterable, Sequence

import numpy as np

from ._format.encode import save_row, save_schema
from .filewriter import FileWriter

__all__ = ["save_name", "write_dataset"]

_CHUNK = 1000


_SPECIAL = frozenset(string.punctuation + " ") - {"_"}


def save_name(column: str) -> str:
    """The MindRecord field name ``Dataset.save`` gives a column, as MindSpore does: every
    punctuation character but ``_``, and every space, becomes ``_`` (``image/class/label`` ->
    ``image_class_label``)."""
    return "".join("_" if ch in _SPECIAL else ch for ch in column)


def write_dataset(file_name: str, num_files: int, column_names: Sequence[str],
                  rows: Iterable[Sequence[np.ndarray]]) -> int:
    """Writes rows (tuples of NumPy arrays, in ``column_names`` order) as a MindRecord dataset.

    The schema comes from the first row with MindSpore's ``Dataset.save`` mapping (see
    ``headrace.mindrecord._format.encode.save_schema``): the description is ``"mindrecord"`` and
    the scalar non-bytes columns are indexed, in column order. Every later row is converted to the
    first row's types.

    Args:
        file_name: path of the data file (shard suffixes are appended when ``num_files > 1``).
        num_files: number of shards, in [1, 1000].
        column_names: the columns, in row order (stored under ``save_name(column)``).
        rows: the rows.

    Returns:
        The number of rows written.

    Raises:
        ValueError: a column cannot be stored (multi-dimensional strings or bytes, complex numbers).
        RuntimeError: the files exist, or a row does not fit the schema of the first row.

    Examples:
        >>> import os, tempfile
        >>> import numpy as np
        >>> from headrace.mindrecord import FileReader
        >>> from headrace.mindrecord._save import write_dataset
        >>> path = os.path.join(tempfile.mkdtemp(), "saved.mindrecord")
        >>> write_dataset(path, 1, ["x", "name"], [(np.array(i, np.uint8), np.array(f"r{i}")) for i in range(3)])
        3
        >>> [(r["x"], r["name"]) for r in FileReader(path).get_next()]
        [(0, 'r0'), (1, 'r1'), (2, 'r2')]
    """
    columns = [save_name(c) for c in column_names]
    if len(set(columns)) != len(columns):
        raise ValueError(f"Dataset.save: the columns {list(column_names)} give the MindRecord field names {columns} "
                         f"(punctuation and spaces become '_'), which are not unique; rename the columns first.")
    writer = FileWriter(file_name, num_files)
    schema = None
    batch: list[dict] = []
    count = 0
    for row in rows:
        if schema is None:
            schema, index = save_schema(columns, row)
            writer.add_schema(schema, "mindrecord")
            if index:
                writer.add_index(index)
        try:
            batch.append(save_row(schema, columns, row))
        except RuntimeError as exc:
            raise RuntimeError(f"{exc} Row {count + len(batch)} of the dataset saved to {file_name}.") from None
        if len(batch) >= _CHUNK:
            writer.write_raw_data(batch)
            count += len(batch)
            batch = []
    if schema is None:
        raise RuntimeError("Dataset.save needs at least one row to know the schema of the MindRecord files.")
    if batch:
        writer.write_raw_data(batch)
        count += len(batch)
    writer.commit()
    return count
