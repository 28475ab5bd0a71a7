"""``FileReader``: iterate over the rows of MindRecord files as dicts."""
from __future__ import annotations

import logging

from ._checks import check_exists, check_file_names, check_num_consumer
from ._format.errors import MindRecordRuntimeError, ParamTypeError
from ._format.reader import ColumnDecoder, ShardSetReader
from ._format.verify import resolve_verify

__all__ = ["FileReader"]

logger = logging.getLogger("headrace.mindrecord")


def output_columns(reader: ShardSetReader, columns: list[str] | None) -> list[str]:
    """MindSpore's key order: raw fields sorted by name, then blob fields (in ``columns`` order if given)."""
    schema = reader.schema
    if columns:
        for c in columns:
            if c not in schema.fields:
                raise MindRecordRuntimeError(f"Invalid data, column name: {c} can not found in schema. Please check "
                                             f"the 'column_list'.")
        raw = [c for c in schema.raw_fields if c in columns]
        blob = [c for c in dict.fromkeys(columns) if c in schema.fields and schema.fields[c].is_blob]
        return raw + blob
    return schema.raw_fields + schema.blob_fields


class FileReader:
    """Reads the rows of MindRecord files, in shard order then row order.

    Args:
        file_name (Union[str, list[str]]): A data file (every shard of its dataset is read) or a
            list of data files (only those are read).
        num_consumer (int, optional): Accepted for compatibility, in [1, number of CPUs]; reading is
            done in the calling thread. Default: ``4``.
        columns (list[str], optional): Fields to read. Default: ``None`` (all).
        operator (int, optional): Unused (MindSpore deprecates it too). Default: ``None``.
        verify (bool, optional): headrace only. Verify the files in full when opening them: every
            record decoded and checked, the ``.db`` checked against the data file (see
            ``headrace.mindrecord.verify``; the format has no checksum, so a changed byte inside a
            ``bytes`` field or a float array can still go unseen). Default: ``None`` (the value of
            ``headrace.mindrecord.set_verify_on_open``, False unless set).

    Raises:
        ParamValueError: ``file_name`` or ``num_consumer`` is invalid.
        ParamTypeError: ``columns`` is not a list.
        RuntimeError: a file or its ``.db`` is missing, damaged, or ``columns`` names an unknown field.
        TypeError: ``verify`` is not a bool or None.

    Examples:
        >>> import os, tempfile
        >>> from headrace.mindrecord import FileWriter, FileReader
        >>> path = os.path.join(tempfile.mkdtemp(), "reader.mindrecord")
        >>> w = FileWriter(path); w.add_schema({"x": {"type": "int32"}, "y": {"type": "string"}})
        >>> w.write_raw_data([{"x": 1, "y": "a"}, {"x": 2, "y": "b"}]); w.commit()
        WriteReport(written=2, dropped=0)
        WriteReport(written=2, dropped=0)
        >>> reader = FileReader(path, columns=["y"])
        >>> list(reader.get_next()), reader.len()
        ([{'y': 'a'}, {'y': 'b'}], 2)
        >>> reader.close()
    """

    def __init__(self, file_name, num_consumer=4, columns=None, operator=None, *, verify=None):
        verify = resolve_verify(verify)
        file_name = check_file_names(file_name)
        check_num_consumer(num_consumer)
        if operator is not None:
            logger.warning("The parameter 'operator' will be deprecated in a future version.")
        if columns:
            if not isinstance(columns, list):
                raise ParamTypeError("columns", "list")
            self._columns = columns
        else:
            self._columns = None
        files = [file_name] if isinstance(file_name, str) else file_name
        for f in files:
            check_exists(f)
        self._reader = ShardSetReader(files, load_dataset=isinstance(file_name, str), verify=verify)
        self._out = output_columns(self._reader, self._columns)
        self._decoder = ColumnDecoder(self._reader.schema, self._out, self._reader.compressed, flavor="python")
        self._reader.ensure_loaded()
        self._closed = False

    def get_next(self):
        """Yields every row as a dict (raw fields sorted by name, then blob fields); after
        ``close()``, no row (as in MindSpore; a warning is logged).

        Yields:
            dict, one row.
        """
        reader, decoder, names = self._reader, self._decoder, self._out
        if self._closed:
            logger.warning("FileReader.get_next() was called after close(): it yields no rows; open a new "
                           "FileReader to read the files again.")
            return
        for i in range(len(reader)):
            if self._closed:       # close() inside the loop ends it, as in MindSpore
                return
            rec, blob = reader.read_records(i)
            yield dict(zip(names, decoder.decode(rec, blob, lambda i=i: reader.where(i))))

    def len(self):
        """Number of rows.

        Returns:
            int, the number of rows.
        """
        return len(self._reader)

    def schema(self):
        """The schema, ``{field: {"type": ..., ["shape": ...]}}``.

        Returns:
            dict, the schema.
        """
        return self._reader.schema.content()

    def close(self):
        """Closes the files (and removes the decrypted copies of encrypted files); a ``get_next``
        loop in progress yields no more rows. Idempotent."""
        self._closed = True
        self._reader.release_copies()
