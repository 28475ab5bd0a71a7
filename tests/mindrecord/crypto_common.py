"""Encrypted-MindRecord helpers that run the same in MindSpore 2.10 (the oracle) and here: COMMON is
their text, for oracle programs; the module binds them too."""
from __future__ import annotations

import pytest

from headrace.mindrecord import set_dec_mode, set_enc_key, set_enc_mode

# Shared by both sides: the rows, a writer, a reader through the three read APIs, and an XOR
# user cipher with MindSpore's calling convention.
COMMON = '''
import struct
def rows(n, start=0):
    return [{"label": i, "name": "n%d" % i, "data": bytes([i % 256]) * (i + 1)} for i in range(start, start + n)]

def write(FileWriter, path, n):
    w = FileWriter(path, 1)
    w.add_schema({"label": {"type": "int32"}, "name": {"type": "string"}, "data": {"type": "bytes"}}, "enc")
    w.add_index(["label"])
    w.write_raw_data(rows(n))
    w.commit()

def read(FileReader, MindPage, ds, path):
    r = FileReader(path)
    got = [(x["label"], x["name"], x["data"]) for x in r.get_next()]
    r.close()
    p = MindPage(path)
    p.category_field = "label"
    page = p.read_at_page_by_name("2", 0, 1)[0]["name"]
    d = ds.MindDataset(path, shuffle=False)
    labels = [int(x["label"]) for x in d.create_dict_iterator(output_numpy=True, num_epochs=1)]
    return got, page, labels

def xor(data, key):
    pad = (key.encode() * (len(data) // len(key) + 1))[:len(data)]
    return bytes(a ^ b for a, b in zip(data, pad))

def udf_enc(f_in, size, f_out, key):
    data = f_in.read(size)
    f_out.write(struct.pack(">i", len(data)) + xor(data, key))

def udf_dec(f_in, size, f_out, key):
    n = struct.unpack(">i", f_in.read(4))[0]
    f_out.write(xor(f_in.read(n), key))
'''


@pytest.fixture(autouse=True)
def reset_encryption():
    """Leaves the process's encryption settings unset after each test of a module that imports it."""
    yield
    set_enc_key(None)
    set_enc_mode()
    set_dec_mode(None)


_HERE: dict = {}
exec(COMMON, _HERE)  # noqa: S102 - the same helpers on the headrace side
rows, write, read, xor, udf_enc, udf_dec = (_HERE[k] for k in ("rows", "write", "read", "xor", "udf_enc", "udf_dec"))
