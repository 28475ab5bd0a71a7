"""The file header: an 8-byte little-endian length and a JSON document (MINDRECORD.md §2).

The JSON text is written byte for byte as MindSpore writes it: top-level keys in a fixed order,
nested objects with sorted keys, compact separators. ``parse_header`` checks everything a reader
relies on and raises ``MindRecordFormatError`` naming the file otherwise.
"""
from __future__ import annotations

import dataclasses
import json
import os
import struct
from typing import Any, Sequence

from .errors import MindRecordFormatError
from .schema import Schema, schema_from_header
from headrace._util.errors import add_note

MIN_HEADER_SIZE = 1 << 14
MAX_HEADER_SIZE = 1 << 27
MIN_PAGE_SIZE = 1 << 15
MAX_PAGE_SIZE = 1 << 28
DEFAULT_HEADER_SIZE = 1 << 24
DEFAULT_PAGE_SIZE = 1 << 25
MIN_SHARD_COUNT = 1
MAX_SHARD_COUNT = 1000
MIN_FILE_SIZE = 8
VERSION = "3.0"
SUPPORTED_VERSIONS = ("2.0", "3.0")
BLOB = "BLOB_DATA"
RAW = "RAW_DATA"
_LEN = struct.Struct("<Q")
_PARSE_FAILED = "Invalid file, failed to parse header content of file: {file}, please check correction of MindRecord File"
# Reading the first bytes of a file is enough to see its header length; headers are read whole.
_MAX_READ_HEADER = 1 << 31


@dataclasses.dataclass
class Page:
    """A page descriptor (one entry of the header's ``page`` list).

    Attributes:
        page_id: slot number; the page starts at ``header_size + page_id * page_size``.
        page_type: ``BLOB_DATA`` or ``RAW_DATA``.
        page_type_id: blob pages: the row-group id; raw pages: see MINDRECORD.md §2.1.
        start_row_id, end_row_id: blob pages: rows ``[start, end)`` of the shard.
        row_group_ids: raw pages: ``(row_group_id, offset)`` where each row group's records start.
        size: bytes used in the slot (``page_size`` in the JSON).
    """

    page_id: int
    shard_id: int
    page_type: str
    page_type_id: int
    start_row_id: int
    end_row_id: int
    row_group_ids: list[tuple[int, int]]
    size: int

    def to_json(self) -> dict[str, Any]:
        groups = self.row_group_ids or [(0, 0)]
        return {"end_row_id": self.end_row_id, "page_id": self.page_id, "page_size": self.size,
                "page_type": self.page_type, "page_type_id": self.page_type_id,
                "row_group_ids": [{"id": g, "offset": o} for g, o in groups],
                "shard_id": self.shard_id, "start_row_id": self.start_row_id}


@dataclasses.dataclass
class Header:
    """Everything a data file's header says.

    Attributes:
        header_size: bytes reserved for the header; pages start there.
        page_size: slot size of every page.
        schema: the file's schema.
        index_fields: indexed fields (columns of the ``.db``), possibly empty.
        pages: this shard's pages, in ``page_id`` order.
        shard_addresses: base names of all shards of the dataset.
        shard_id: this file's position in ``shard_addresses``.
        compression_size: bytes saved by integer-array compression (None: key absent, version 2.0).
        version: ``"3.0"`` (written) or ``"2.0"`` (read only).
    """

    header_size: int
    page_size: int
    schema: Schema
    index_fields: list[str]
    pages: list[Page]
    shard_addresses: list[str]
    shard_id: int
    compression_size: int | None = 0
    version: str = VERSION

    @property
    def compressed(self) -> bool:
        """Whether integer arrays in this file are stored compressed."""
        return self.version >= VERSION and self.schema.has_integer_array

    @property
    def num_rows(self) -> int:
        return sum(p.end_row_id - p.start_row_id for p in self.pages if p.page_type == BLOB)

    def page_offset(self, page_id: int) -> int:
        return self.header_size + page_id * self.page_size

    def to_json_text(self) -> str:
        """The header JSON exactly as MindSpore writes it."""
        def dump(v: Any) -> str:
            return json.dumps(v, ensure_ascii=False, separators=(",", ":"), sort_keys=True)

        index = ([{"index_field": f, "schema_id": 0} for f in self.index_fields]
                 if self.index_fields else None)
        pages = [p.to_json() for p in self.pages] if self.pages else None
        parts = [f'"header_size":{self.header_size}', f'"index_fields":{dump(index)}',
                 f'"page":{dump(pages)}', f'"page_size":{self.page_size}']
        if self.compression_size is not None:
            parts.append(f'"compression_size":{self.compression_size}')
        parts += [f'"schema":{dump([self.schema.to_json()])}',
                  f'"shard_addresses":{dump(self.shard_addresses)}', f'"shard_id":{self.shard_id}',
                  '"statistics":null', f'"version":{dump(self.version)}']
        return "{" + ",".join(parts) + "}"

    def to_bytes(self) -> bytes:
        """The 8-byte length followed by the JSON text."""
        text = self.to_json_text().encode("utf-8")
        return _LEN.pack(len(text)) + text

    def meta_key(self) -> tuple:
        """What must be identical across the shards of one dataset (the schema's description aside:
        MindSpore reads files whose schemas differ only in it as one dataset)."""
        return (self.header_size, self.page_size, self.version, tuple(self.index_fields),
                json.dumps(self.schema.content(), sort_keys=True))


_MAX_INT = 1 << 62   # no number in a header comes near this; larger ones would overflow int64 arithmetic


def _int(obj: dict, key: str, file: str, where: str = "header", lo: int = 0) -> int:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v < _MAX_INT:
        raise MindRecordFormatError(f"Invalid file, the {where} has an invalid '{key}': {v!r}.", file)
    return v


def _parse_page(obj: Any, i: int, file: str) -> Page:
    where = f"header's page entry {i}"
    if not isinstance(obj, dict):
        raise MindRecordFormatError(f"Invalid file, the {where} is not an object.", file)
    page_type = obj.get("page_type")
    if page_type not in (BLOB, RAW):
        raise MindRecordFormatError(f"Invalid file, the {where} has an invalid 'page_type': {page_type!r}.", file)
    groups_obj = obj.get("row_group_ids")
    if not isinstance(groups_obj, list):
        raise MindRecordFormatError(f"Invalid file, the {where} has an invalid 'row_group_ids'.", file)
    groups = []
    for g in groups_obj:
        if not isinstance(g, dict):
            raise MindRecordFormatError(f"Invalid file, the {where} has an invalid 'row_group_ids'.", file)
        groups.append((_int(g, "id", file, where), _int(g, "offset", file, where)))
    page = Page(_int(obj, "page_id", file, where), _int(obj, "shard_id", file, where), page_type,
                _int(obj, "page_type_id", file, where), _int(obj, "start_row_id", file, where),
                _int(obj, "end_row_id", file, where), groups, _int(obj, "page_size", file, where))
    if page.page_type == BLOB and page.end_row_id < page.start_row_id:
        raise MindRecordFormatError(f"Invalid file, the {where} ends before it starts "
                                    f"(rows {page.start_row_id}..{page.end_row_id}).", file)
    return page


def parse_header_json(text: bytes, file: str) -> Header:
    """Parses and checks header JSON text (without the 8-byte length)."""
    try:
        obj = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise MindRecordFormatError(f"{_PARSE_FAILED.format(file=file)}: the header is not valid JSON ({exc}); the "
                                    f"file is damaged or is not a MindRecord file.", file) from None
    if not isinstance(obj, dict):
        raise MindRecordFormatError("Invalid file, the header is not a JSON object. The file is damaged or is "
                                    "not a MindRecord file.", file)
    version = obj.get("version")
    if not isinstance(version, str):
        raise MindRecordFormatError(f"Invalid file, the header has no valid 'version' ({version!r}).", file)
    if version not in SUPPORTED_VERSIONS:
        raise MindRecordFormatError(f'Invalid file, the version of mindrecord files"{version}" is not supported. '
                                    f"Supported versions: {', '.join(SUPPORTED_VERSIONS)}.", file)
    header_size = _int(obj, "header_size", file, lo=MIN_FILE_SIZE)
    page_size = _int(obj, "page_size", file, lo=1)
    schema = schema_from_header(obj.get("schema"), file)
    for key in ("index_fields", "page"):
        # (every writer writes both, null when empty: without one a damaged key, e.g. one flipped
        # bit in "index_fields", would make the reader check no index field and pass a damaged row)
        if key not in obj:
            raise MindRecordFormatError(f"Invalid file, the header has no '{key}'. The file is damaged.", file)
    index_obj = obj.get("index_fields")
    index_fields: list[str] = []
    if index_obj is not None:
        if not isinstance(index_obj, list):
            raise MindRecordFormatError("Invalid file, the header has an invalid 'index_fields'.", file)
        for item in index_obj:
            name = item.get("index_field") if isinstance(item, dict) else None
            if not isinstance(name, str) or name not in schema.fields or schema.fields[name].is_blob:
                raise MindRecordFormatError(f"Invalid file, index field {name!r} in the header is not a scalar "
                                            f"field of the schema.", file)
            index_fields.append(name)
    pages_obj = obj.get("page")
    pages = [] if pages_obj is None else pages_obj
    if not isinstance(pages, list):
        raise MindRecordFormatError("Invalid file, the header has an invalid 'page' list.", file)
    pages = [_parse_page(p, i, file) for i, p in enumerate(pages)]
    for i, p in enumerate(pages):
        if p.page_id != i:
            raise MindRecordFormatError(f"Invalid file, the header's page entry {i} has page_id {p.page_id}; page "
                                        f"ids must be 0, 1, 2, ...", file)
        if p.size > page_size:
            raise MindRecordFormatError(f"Invalid file, page {i} claims {p.size} bytes, more than the page size "
                                        f"{page_size}.", file)
    addresses = obj.get("shard_addresses")
    if (not isinstance(addresses, list) or not addresses
            or not all(isinstance(a, str) and a and os.sep not in a for a in addresses)):
        raise MindRecordFormatError("Invalid file, the header has an invalid 'shard_addresses'.", file)
    shard_id = _int(obj, "shard_id", file)
    if shard_id >= len(addresses):
        raise MindRecordFormatError(f"Invalid file, the header's shard_id {shard_id} is not below the number of "
                                    f"shards {len(addresses)}.", file)
    compression = obj.get("compression_size")
    if compression is not None:
        # informational only: older headrace wrote negative totals, which MindSpore reads
        compression = _int(obj, "compression_size", file, lo=-(1 << 63))
    return Header(header_size, page_size, schema, index_fields, pages, addresses, shard_id, compression, version)


def read_header(fd: int, file: str, file_size: int | None = None) -> Header:
    """Reads and checks the header of an open data file."""
    if file_size is None:
        file_size = os.fstat(fd).st_size
    if file_size < MIN_FILE_SIZE:
        raise MindRecordFormatError(f"Invalid file, the size of mindrecord file: {file_size} is smaller than the "
                                    f"lower limit: {MIN_FILE_SIZE}.", file)
    (length,) = _LEN.unpack(os.pread(fd, 8, 0))
    # MindSpore's first sentence for each case, then what headrace saw
    if length == 0:
        raise MindRecordFormatError(f"{_PARSE_FAILED.format(file=file)}: the header length is 0; the file is "
                                    "damaged or not a MindRecord file.", file)
    if length > MAX_HEADER_SIZE:
        raise MindRecordFormatError("Invalid file, the size of mindrecord file header is larger than the upper "
                                    f"limit. \nThe invalid mindrecord file is [{file}]. \nPlease use 'FileWriter' "
                                    f"to generate valid mindrecord files. (the header length {length} is above "
                                    f"{MAX_HEADER_SIZE})", file)
    if length > min(file_size - 8, _MAX_READ_HEADER):
        raise MindRecordFormatError(f"Invalid file, failed to read header content of file: {file}, please check "
                                    f"correction of MindRecord File: the header length {length} does not fit in "
                                    f"the file of {file_size} bytes; the file is truncated, damaged or not a "
                                    "MindRecord file.", file)
    text = os.pread(fd, length, 8)
    if len(text) != length:
        raise MindRecordFormatError("Invalid file, the header is truncated.", file)
    header = parse_header_json(text, file)
    if header.header_size < 8 + length:
        raise MindRecordFormatError(f"Invalid file, the header of {8 + length} bytes is larger than its "
                                    f"header_size {header.header_size}.", file)
    check_layout(header, file_size, file)
    return header


def check_layout(header: Header, file_size: int, file: str) -> None:
    """Raises unless every size the header claims is possible for a file of ``file_size`` bytes.

    Each size is checked before anything is allocated from it: header and page sizes within the
    limits a writer accepts, every used page inside the file, and no blob page claiming more rows
    than its bytes can hold (a record takes at least its 8-byte length).
    """
    if header.header_size > MAX_HEADER_SIZE:
        raise MindRecordFormatError(f"Invalid file, the header_size {header.header_size} is above the limit "
                                    f"{MAX_HEADER_SIZE}; the header is damaged.", file)
    if header.page_size > MAX_PAGE_SIZE:
        raise MindRecordFormatError(f"Invalid file, the page_size {header.page_size} is above the limit "
                                    f"{MAX_PAGE_SIZE}; the header is damaged.", file)
    for p in header.pages:
        start = header.page_offset(p.page_id)
        if p.size and start + p.size > file_size:
            raise MindRecordFormatError(f"Invalid file, page {p.page_id} ({p.size} bytes at offset {start}) runs "
                                        f"past the end of the file of {file_size} bytes; the file is truncated or "
                                        f"its header is damaged.", file)
        if p.page_type == RAW and any(off > p.size for _, off in p.row_group_ids):
            raise MindRecordFormatError(f"Invalid file, raw page {p.page_id} has a row group starting past its "
                                        f"{p.size} used bytes; the header is damaged.", file)
        if p.page_type == BLOB and (p.end_row_id - p.start_row_id) * 8 > p.size:
            raise MindRecordFormatError(f"Invalid file, blob page {p.page_id} claims rows {p.start_row_id}.."
                                        f"{p.end_row_id} but holds only {p.size} bytes; the header is damaged.", file)


def read_header_path(path: str) -> Header:
    """Reads and checks the header of the data file at ``path``."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        return read_header(fd, path)
    finally:
        os.close(fd)


def shard_paths(path: str, header: Header) -> list[str]:
    """Paths of all shards of the dataset ``path`` belongs to (resolved next to ``path``)."""
    directory = os.path.dirname(path)
    return [os.path.join(directory, name) for name in header.shard_addresses]


def check_same_dataset(headers: Sequence[Header], files: Sequence[str], layout: bool = True) -> None:
    """Raises unless all shards share header size, page size, version, schema and index fields.

    ``layout=False`` (reading) leaves header and page sizes out: each file is read with its own, and
    headrace's writer sizes pages to the data, so two files of one script can differ in them.
    """
    names = ("header_size", "page_size", "version", "index_fields", "schema")
    skip = 0 if layout else 2
    first = headers[0].meta_key()[skip:]
    for h, f in zip(headers[1:], files[1:]):
        key = h.meta_key()[skip:]
        if key != first:
            exc = MindRecordFormatError(f"Invalid file, the metadata of mindrecord file: {f} is different from others, "
                                        f"please make sure all the mindrecord files generated by the same script.", f)
            differ = [n for n, a, b in zip(names[skip:], key, first) if a != b]
            add_note(exc, f"{f} and {files[0]} differ in: {', '.join(differ)}.")
            raise exc
