"""``MindPage``: rows grouped by the value of an index field, read page by page."""
from __future__ import annotations

import json
import re
import sqlite3

from ._checks import check_exists, check_file_names, check_num_consumer
from ._format.errors import (MRMDefineCategoryError, MindRecordFormatError, MindRecordRuntimeError, ParamTypeError,
                             ParamValueError)
from ._format.index import BASE_COLUMNS, QueryTooLong, _open_db, bounded_query
from ._format.reader import ColumnDecoder, ShardSetReader
from ._format.verify import resolve_verify

__all__ = ["MindPage"]

_COLUMN_RE = re.compile(r"[0-9A-Za-z_]+_0")


class MindPage:
    """Groups rows by the value of one index field ("category") and reads them a page at a time.

    Args:
        file_name (Union[str, list[str]]): A data file (all shards of its dataset are read) or a
            list of data files.
        num_consumer (int, optional): Accepted for compatibility, in [1, number of CPUs]. Default: ``4``.
        verify (bool, optional): headrace only. Verify the files in full when opening them, as
            ``FileReader(verify=True)`` does. Default: ``None`` (``headrace.mindrecord.set_verify_on_open``).

    Raises:
        ParamValueError: ``file_name`` or ``num_consumer`` is invalid.
        RuntimeError: a file or its ``.db`` is missing or damaged (also: a ``.db`` column name that is
            not a plain field name, or a query on a ``.db`` that does far more work than its rows need).
        TypeError: ``verify`` is not a bool or None.

    Examples:
        >>> import os, tempfile
        >>> from headrace.mindrecord import FileWriter, MindPage
        >>> path = os.path.join(tempfile.mkdtemp(), "page.mindrecord")
        >>> w = FileWriter(path); w.add_schema({"label": {"type": "int32"}, "name": {"type": "string"}})
        >>> w.write_raw_data([{"label": i % 2, "name": f"n{i}"} for i in range(4)]); w.commit()
        WriteReport(written=4, dropped=0)
        WriteReport(written=4, dropped=0)
        >>> page = MindPage(path)
        >>> page.candidate_fields
        ['label', 'name']
        >>> page.category_field = "label"
        >>> page.read_category_info()
        '{"categories":[{"count":2,"id":0,"name":"0"},{"count":2,"id":1,"name":"1"}],"key":"label_0"}'
        >>> [row["name"] for row in page.read_at_page_by_name("1", 0, 2)]
        ['n1', 'n3']
    """

    def __init__(self, file_name, num_consumer=4, *, verify=None):
        verify = resolve_verify(verify)
        file_name = check_file_names(file_name)
        check_num_consumer(num_consumer)
        files = [file_name] if isinstance(file_name, str) else file_name
        for f in files:
            check_exists(f)
        self._reader = ShardSetReader(files, load_dataset=isinstance(file_name, str), verify=verify)
        self._reader.ensure_loaded()
        schema = self._reader.schema
        self._decoder = ColumnDecoder(schema, schema.raw_fields + schema.blob_fields, self._reader.compressed,
                                      flavor="python")
        self._columns = schema.raw_fields + schema.blob_fields
        self._db_columns = self._query_columns()
        self._candidate_fields = [c[:c.rfind("_")] for c in self._db_columns]
        self._category_field = None
        self._category_column = ""

    def _connect(self, shard: int) -> sqlite3.Connection:
        path = self._reader.paths[shard] + ".db"
        try:
            return _open_db(path)
        except sqlite3.Error as exc:
            raise MindRecordFormatError(f"Invalid file, the mindrecord meta file {path} is damaged: {exc}.",
                                        path) from None

    def _execute(self, shard: int, sql: str, args: tuple = ()) -> list:
        """Runs one query on a shard's ``.db``, bounded in work by the shard's row count."""
        con = self._connect(shard)
        path = self._reader.paths[shard] + ".db"
        rows = self._reader.headers[shard].num_rows
        try:
            return bounded_query(con, sql, args, rows)
        except QueryTooLong as exc:
            raise MindRecordFormatError(f"Invalid file, the query [ {sql} ] on the mindrecord meta file {path} was "
                                        f"stopped: {exc}, far more than the file's rows need; the file is damaged or "
                                        f"was not written by a MindRecord writer.", path) from None
        except (sqlite3.Error, ValueError) as exc:   # ValueError: undecodable text in a damaged file
            raise MindRecordFormatError(f"Invalid file, failed to execute sql [ {sql} ] on the mindrecord meta file "
                                        f"{path}: {exc}.", path) from None
        finally:
            con.close()

    def _query_columns(self) -> list[str]:
        """The ``.db``'s index-field columns. Names come from the file, so each one must be a plain
        identifier (what a writer makes of a schema field name) before it is ever put into SQL."""
        info = self._execute(0, "PRAGMA table_info(INDEXES)")
        names = [row[1] for row in info]
        extra = names[len(BASE_COLUMNS):]
        columns = extra[1::2]   # INC_k, <field>_0, INC_k+1, ...
        for c in columns:
            if not isinstance(c, str) or not _COLUMN_RE.fullmatch(c):
                path = self._reader.paths[0] + ".db"
                raise MindRecordFormatError(f"Invalid file, the mindrecord meta file {path} has an index column named "
                                            f"{c!r}, which is not a field name followed by '_0' (letters, digits and "
                                            f"'_' only); the file is damaged or crafted.", path)
        return columns

    @property
    def candidate_fields(self):
        """Fields the rows can be grouped by (the index fields).

        Returns:
            list[str], the candidate fields.
        """
        return self._candidate_fields

    @property
    def category_field(self):
        """The field rows are grouped by (set it before reading).

        Returns:
            str, the current category field (None until set).
        """
        return self._category_field

    @category_field.setter
    def category_field(self, category_field):
        if not category_field or not isinstance(category_field, str):
            raise ParamTypeError("category_fields", "str")
        if category_field not in self._candidate_fields:
            raise MRMDefineCategoryError(f"Field '{category_field}' is not a candidate category field.")
        self._category_field = category_field
        self._category_column = self._db_columns[self._candidate_fields.index(category_field)]

    def _categories(self) -> list[tuple[str, int]]:
        """(name, count) of every category, sorted by name as MindSpore sorts them (text order)."""
        col = self._category_column
        if not col:
            raise MindRecordRuntimeError("Invalid data, field: is invalid.")
        counts: dict[str, int] = {}
        for shard in range(len(self._reader.paths)):
            rows = self._execute(shard, f'SELECT CAST("{col}" AS TEXT), COUNT("{col}") FROM INDEXES GROUP BY "{col}"')
            for name, count in rows:
                key = "" if name is None else name
                counts[key] = counts.get(key, 0) + count
        return sorted(counts.items(), key=lambda kv: kv[0].encode("utf-8"))

    def read_category_info(self):
        """Category names, ids and row counts, as MindSpore's JSON text.

        Returns:
            str, ``{"categories":[{"count":n,"id":i,"name":v},...],"key":"<field>_0"}``.

        Raises:
            RuntimeError: no category field was set.
        """
        cats = self._categories()
        body = [{"count": count, "id": i, "name": name} for i, (name, count) in enumerate(cats)]
        return json.dumps({"categories": body, "key": self._category_column}, ensure_ascii=False,
                          separators=(",", ":"))

    def _read_category(self, cats: list[tuple[str, int]], category_id: int, page: int, num_row: int) -> list[dict]:
        if category_id >= len(cats):
            raise MindRecordRuntimeError(f"Invalid data, category_id: {category_id} must be in the range "
                                         f"[0, {len(cats)}].")
        name, total = cats[category_id]
        if total <= 0 or page * num_row >= total:
            raise MindRecordRuntimeError(f"Invalid data, page no: {page}or page size: {num_row} is invalid.")
        start, stop = page * num_row, min(total, (page + 1) * num_row)
        reader = self._reader
        col = self._category_column
        out: list[dict] = []
        seen = 0
        for shard in range(len(reader.paths)):
            if seen >= stop:
                break
            rows = self._execute(shard, f'SELECT ROW_ID FROM INDEXES WHERE CAST("{col}" AS TEXT) = ? '
                                        f'ORDER BY PAGE_ID_BLOB, rowid', (name,))
            base = reader._starts[shard]
            count = reader._starts[shard + 1] - base
            for (row_id,) in rows:
                if start <= seen < stop:
                    if not isinstance(row_id, int) or not 0 <= row_id < count:
                        path = reader.paths[shard] + ".db"
                        raise MindRecordFormatError(f"Invalid file, the mindrecord meta file {path} gives ROW_ID "
                                                    f"{row_id!r} for category {name!r}, outside the file's {count} "
                                                    f"rows.", path)
                    i = base + row_id
                    rec, blob = reader.read_records(i)
                    values = self._decoder.decode(rec, blob, lambda i=i: reader.where(i))
                    out.append(dict(zip(self._columns, values)))
                seen += 1
                if seen >= stop:
                    break
        return out

    def read_at_page_by_id(self, category_id, page, num_row):
        """Rows of one category (by id from ``read_category_info``), page ``page`` of ``num_row`` rows.

        Args:
            category_id (int): Category id.
            page (int): Page index, from 0.
            num_row (int): Rows per page.

        Returns:
            list[dict], the rows.

        Raises:
            ParamValueError: an argument is not a valid int.
            RuntimeError: no category field is set, or the id or page is out of range.
        """
        if not isinstance(category_id, int) or category_id < 0:
            raise ParamValueError("Category id should be int and greater than or equal to 0.")
        if not isinstance(page, int) or page < 0:
            raise ParamValueError("Page should be int and greater than or equal to 0.")
        if not isinstance(num_row, int) or num_row <= 0:
            raise ParamValueError("num_row should be int and greater than 0.")
        return self._read_category(self._categories(), category_id, page, num_row)

    def read_at_page_by_name(self, category_name, page, num_row):
        """Rows of one category (by its value as text), page ``page`` of ``num_row`` rows.

        Args:
            category_name (str): The category's name, as ``read_category_info`` shows it.
            page (int): Page index, from 0.
            num_row (int): Rows per page.

        Returns:
            list[dict], the rows.

        Raises:
            ParamValueError: an argument is invalid.
            RuntimeError: no category field is set, the name is unknown, or the page is out of range.
        """
        if not isinstance(category_name, str):
            raise ParamValueError("Category name should be str.")
        if not isinstance(page, int) or page < 0:
            raise ParamValueError("Page should be int and greater than or equal to 0.")
        if not isinstance(num_row, int) or num_row <= 0:
            raise ParamValueError("num_row should be int and greater than 0.")
        cats = self._categories()
        for i, (name, _) in enumerate(cats):
            if name == category_name:
                return self._read_category(cats, i, page, num_row)
        raise MindRecordRuntimeError(f"category_name: {category_name} could not found.")
