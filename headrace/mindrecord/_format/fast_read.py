"""The fast path of a MindDataset read: one row decoded straight from its bytes for the common
layouts (one int and one bytes column, either alone), without the general column decoder."""
from __future__ import annotations
import os
import struct
from typing import Callable
import numpy as np
from .rows import _packed_key
from . import reader as _reader  # _reader._fork_generation changes in a forked child: read it there
from .reader import _INT_BOUNDS, _LE, _LEN, ColumnDecoder, ShardSetReader


__all__ = ["fast_row_reader"]

_S_DTYPES: dict[int, np.dtype] = {}            # S<n> dtypes of payload sizes seen (bounded)

_LOC = struct.Struct("=4q")                     # one row of ShardSetReader._locs (native int64)


_INT_WIDTHS = {0xCC: (1, False), 0xCD: (2, False), 0xCE: (4, False), 0xCF: (8, False),
               0xD0: (1, True), 0xD1: (2, True), 0xD2: (4, True), 0xD3: (8, True)}


def fast_row_reader(reader: ShardSetReader, decoder: ColumnDecoder, general: Callable[[int], tuple]) -> Callable:
    """``general`` (a function of a row index returning the row's tuple of column values) sped up
    for the common layout: one data file whose raw pages are cached, a schema whose only raw field
    is an int32/int64 scalar and whose only blob field is ``bytes``, NumPy flavor.

    Each row still reads (copies) its blob record from the file with one ``preadv`` and checks its
    length prefix, and checks and decodes its raw record. The fast path only takes rows whose
    records are well formed in the one way the writer writes them (an exact one-key map whose
    value is a MessagePack integer in range); anything else (another layout, a bad prefix, a short
    read, an unusual encoding, an index out of range) is handed to ``general``, which returns the
    same values or raises the same errors as without the fast path. Loads the reader on first use.
    """
    mode = -1          # -1: not set up yet; 0: layout not supported (all rows go to general);
    # 1: (bytes, int); 2: (int, bytes); 3: (bytes,); 4: (int,)
    locs = head = dtype = None
    nrows = hsize = psize = hlen = 0
    lo = hi = 0
    unpack_loc = _LOC.unpack_from
    unpack_len = _LEN.unpack_from
    preadv = os.preadv
    empty = np.empty
    array = np.array
    widths = _INT_WIDTHS
    bytes_dtype = _bytes_dtype
    s_dtypes = _S_DTYPES

    def setup() -> None:
        nonlocal mode, locs, head, dtype, nrows, hsize, psize, hlen, lo, hi
        reader.ensure_loaded()
        schema = reader.schema
        m = 0
        if (len(reader.paths) == 1 and reader._cache_raw and decoder.flavor == "numpy"
                and len(reader.raw_fields) == 1 and len(reader.blob_fields) == 1):
            raw_name, blob_name = reader.raw_fields[0], reader.blob_fields[0]
            rf, bf = schema.fields[raw_name], schema.fields[blob_name]
            if rf.type in _INT_BOUNDS and rf.shape is None and bf.type == "bytes" and bf.shape is None:
                kinds = tuple("int" if c == raw_name else "bytes" if c == blob_name else "?"
                              for c in decoder.columns)
                m = {("bytes", "int"): 1, ("int", "bytes"): 2, ("bytes",): 3, ("int",): 4}.get(kinds, 0)
                if m:
                    header = reader.headers[0]
                    locs = np.ascontiguousarray(reader._locs, dtype=np.int64)
                    nrows = len(locs)
                    head = b"\x81" + _packed_key(raw_name)
                    hlen = len(head) + 8
                    lo, hi = _INT_BOUNDS[rf.type]
                    dtype = _LE[rf.type]
                    hsize, psize = header.header_size, header.page_size
        mode = m

    def read(index: int) -> tuple:
        if mode <= 0:
            if mode < 0:
                setup()
            if mode == 0:
                return general(index)
        if not 0 <= index < nrows:
            return general(index)
        raw_off, raw_len, blob_off, blob_len = unpack_loc(locs, index << 5)  # type: ignore[arg-type]
        # raw record, from its cached page (a page not cached yet: the general path caches it)
        raw_off -= hsize
        page = reader._raw_pages.get((0, raw_off // psize))
        if page is None:
            return general(index)
        rel = raw_off % psize
        end = rel + raw_len
        q = rel + hlen
        if end > len(page) or q >= end or unpack_len(page, rel)[0] != raw_len - 8 or not page.startswith(head, rel + 8):  # type: ignore[arg-type]
            return general(index)
        v = page[q]
        if q + 1 == end and (v < 0x80 or v >= 0xE0):
            if v >= 0xE0:
                v -= 256
        else:
            w = widths.get(v)
            if w is None or q + 1 + w[0] != end:
                return general(index)
            v = int.from_bytes(page[q + 1:end], "big", signed=w[1])
        if not lo <= v <= hi:
            return general(index)
        # blob record: its 8-byte prefix, and the payload straight into the output array
        n = blob_len - 8
        if n <= 0:
            return general(index)
        if reader._gen != _reader._fork_generation:
            reader._reopen()
        prefix = bytearray(8)
        data = empty(1, s_dtypes.get(n) or bytes_dtype(n))
        if preadv(reader._fds[0], [prefix, data], blob_off) != blob_len or unpack_len(prefix)[0] != n:
            return general(index)
        if mode == 1:
            return data, array(v, dtype)  # type: ignore[call-overload]
        if mode == 2:
            return array(v, dtype), data  # type: ignore[call-overload]
        if mode == 3:
            return (data,)
        return (array(v, dtype),)  # type: ignore[call-overload]

    return read


def _bytes_dtype(n: int) -> np.dtype:
    dt = _S_DTYPES.get(n)
    if dt is None:
        dt = np.dtype(f"S{n}")
        if len(_S_DTYPES) < 4096:
            _S_DTYPES[n] = dt
    return dt
