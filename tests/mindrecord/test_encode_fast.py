"""RowEncoder.encode_many (the write path's batch encoder) gives exactly what encode gives."""
import numpy as np
import pytest

from headrace.mindrecord._format.encode import RowEncoder
from headrace.mindrecord._format.rows import encode_raw
from headrace.mindrecord._format.schema import build_schema

EDGE_INTS = [0, 1, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1, -1, -32, -33, -128, -129,
             -32768, -32769, -2**31, -2**31 - 1, -2**63]


@pytest.mark.parametrize("schema", [
    {"label": {"type": "int64"}, "data": {"type": "bytes"}},
    {"label": {"type": "int64"}, "name": {"type": "string"}, "data": {"type": "bytes"}},
    {"x": {"type": "float64"}, "label": {"type": "int64"}, "data": {"type": "bytes"}},
    {"label": {"type": "int64"}, "data": {"type": "bytes"}, "vec": {"type": "int32", "shape": [-1]}},
    {"data": {"type": "bytes"}},
])
def test_encode_many_equals_encode(schema):
    sch = build_schema(schema, "t")
    enc = RowEncoder(sch, sch.default_index_fields())
    rows = []
    for k, v in enumerate(EDGE_INTS):
        row = {"label": v if k % 3 else np.int64(v), "data": bytes([k]) * k, "x": 0.1 * k,
               "name": "é" * k + "x" * (k * 13), "vec": np.arange(k, dtype=np.int32)}
        rows.append({f: row[f] for f in schema})
    many = enc.encode_many(rows)
    one = [enc.encode(r) for r in rows]
    assert [(m.raw, [bytes(p) for p in m.blob], m.blob_len, m.index_values, m.saved) for m in many] == \
           [(o.raw, [bytes(p) for p in o.blob], o.blob_len, o.index_values, o.saved) for o in one]
    raw_keys = sch.raw_fields
    if raw_keys:
        for m, r in zip(many, rows):
            vals = {k: (r[k].item() if isinstance(r[k], np.generic) else r[k]) for k in raw_keys}
            assert m.raw == encode_raw(vals, raw_keys)
