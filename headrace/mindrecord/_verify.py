"""Verifying MindRecord files in full (``headrace mindrecord verify``)."""
from __future__ import annotations

from ._checks import check_filename
from ._format.verify import ShardReport, verify_dataset

__all__ = ["verify"]


def verify(file_name, all_shards=True):
    """Verifies MindRecord data files and their ``.db`` indexes in full.

    Every check the format allows, on every byte of every page: header sizes against the file,
    SQLite's integrity check of each ``.db``, the ``.db`` row table against the one rebuilt by
    walking the pages, each record's length prefix, each raw record decoded, holding exactly the
    schema's scalar fields and encoded byte for byte as a writer encodes it, indexed values equal
    in the raw record and the ``.db``, each blob record split into its fields, compressed integer
    arrays and array shapes checked.

    The format has no checksum (MindSpore 2.10 writes no hash), so some damage cannot be seen: a
    changed byte inside a ``bytes`` field or a float array (or an int array value that keeps its
    width), a changed value of a scalar field that is not an index field when it still decodes,
    two blob pages with identical record lengths swapped.

    Args:
        file_name (str): A data file.
        all_shards (bool, optional): Verify every shard of its dataset (found through the header),
            not only ``file_name``. Default: ``True``.

    Returns:
        list[ShardReport], per data file: ``file``, ``rows``, ``pages`` and ``bytes`` checked.

    Raises:
        ParamValueError: ``file_name`` is invalid.
        RuntimeError (MindRecordFormatError): the first problem found; the message and the ``file``
            and ``row`` attributes name the file (data file or ``.db``), the page and the row.

    Examples:
        >>> import os, tempfile
        >>> from headrace.mindrecord import FileWriter, verify
        >>> path = os.path.join(tempfile.mkdtemp(), "checked.mindrecord")
        >>> w = FileWriter(path); w.add_schema({"x": {"type": "int32"}}); w.write_raw_data([{"x": 7}]); w.commit()
        >>> [(os.path.basename(r.file), r.rows) for r in verify(path)]
        [('checked.mindrecord', 1)]
    """
    file_name = check_filename(file_name)
    if not isinstance(all_shards, bool):
        raise TypeError(f"verify: 'all_shards' must be a bool, got {type(all_shards).__name__}.")
    reports: list[ShardReport] = verify_dataset([file_name], load_dataset=all_shards)
    return reports
