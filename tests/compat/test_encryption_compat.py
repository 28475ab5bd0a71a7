"""Encrypted MindRecord files move between MindSpore 2.10 and headrace in both directions: AES-GCM
with 16/24/32-character keys and user functions, read by FileReader, MindPage and MindDataset and
appended to; a wrong key fails the same way in both."""
from __future__ import annotations

import struct

import pytest

import headrace.dataset as hds
from headrace.mindrecord import FileReader, FileWriter, MindPage, set_dec_mode, set_enc_key, set_enc_mode
from tests.mindrecord.crypto_common import COMMON, reset_encryption  # noqa: F401 - an autouse fixture
from tests.oracles.oracle import run_ms

pytestmark = pytest.mark.compat

KEYS = ["abcdefghijklmnop", "abcdefghijklmnop01234567", "abcdefghijklmnop0123456789ABCDEF"]
SCHEMA = {"label": {"type": "int32"}, "name": {"type": "string"}, "data": {"type": "bytes"}}

exec(COMMON)  # noqa: S102 - the same helpers on the headrace side

MS_WRITE = COMMON + '''
from mindspore.mindrecord import FileWriter, set_enc_key, set_enc_mode
set_enc_key(INPUTS["key"])
set_enc_mode(udf_enc if INPUTS["udf"] else "AES-GCM")
write(FileWriter, INPUTS["path"], 6)
if INPUTS["append"]:
    w = FileWriter.open_for_append(INPUTS["path"])
    w.write_raw_data(rows(2, 6))
    w.commit()
RESULT = open(INPUTS["path"], "rb").read()[-14:]
'''

MS_READ = COMMON + '''
from mindspore.mindrecord import FileReader, MindPage, set_enc_key, set_enc_mode, set_dec_mode
set_enc_key(INPUTS["key"])
if INPUTS["udf"]:
    set_enc_mode(udf_enc)
    set_dec_mode(udf_dec)
RESULT = catch(lambda: read(FileReader, MindPage, ds, INPUTS["path"]))
'''


def _expected(n):
    return ([(r["label"], r["name"], r["data"]) for r in rows(n)], "n2", list(range(n)))  # noqa: F821


def _as_tuples(result):
    got, page, labels = result
    return [tuple(x) for x in got], page, labels


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("append", [False, True])
def test_mindspore_writes_headrace_reads(tmp_path, key, append):
    path = str(tmp_path / "ms.mr")
    tail = run_ms(MS_WRITE, {"path": path, "key": key, "udf": False, "append": append})
    assert tail == b"AES-GCMENCRYPT"
    set_enc_key(key)
    n = 8 if append else 6
    assert read(FileReader, MindPage, hds, path) == _expected(n)  # noqa: F821
    set_enc_key(key[:-1] + "?")
    with pytest.raises(RuntimeError, match="^Failed to decrypt data, please check if enc_key and enc_mode / dec_mode "
                                           "is valid. The block at offset 0 of .*ms.mr fails its integrity check"):
        FileReader(path)


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("append", [False, True])
def test_headrace_writes_mindspore_reads(tmp_path, key, append):
    path = str(tmp_path / "hr.mr")
    set_enc_key(key)
    write(FileWriter, path, 6)  # noqa: F821
    n = 6
    if append:
        w = FileWriter.open_for_append(path)
        w.write_raw_data(rows(2, 6))  # noqa: F821
        w.commit()
        n = 8
    got = run_ms(MS_READ, {"path": path, "key": key, "udf": False})
    assert _as_tuples(got) == _expected(n)
    wrong = run_ms(MS_READ, {"path": path, "key": key[:-1] + "?", "udf": False})
    assert wrong.type_name == "RuntimeError"
    assert "Failed to decrypt data, please check if enc_key and enc_mode / dec_mode is valid." in wrong.msg
    none = run_ms(MS_READ, {"path": path, "key": None, "udf": False})
    assert none.type_name == "RuntimeError" and "The mindrecord file is encrypted." in none.msg


def test_user_functions_both_ways(tmp_path):
    key = KEYS[0]
    ms_path = str(tmp_path / "ms.mr")
    assert run_ms(MS_WRITE, {"path": ms_path, "key": key, "udf": True, "append": False}) == b"UDF-ENCENCRYPT"
    set_enc_key(key)
    set_enc_mode(udf_enc)  # noqa: F821
    set_dec_mode(udf_dec)  # noqa: F821
    assert read(FileReader, MindPage, hds, ms_path) == _expected(6)  # noqa: F821
    hr_path = str(tmp_path / "hr.mr")
    write(FileWriter, hr_path, 6)  # noqa: F821
    with open(hr_path, "rb") as f:
        blob = f.read()
    assert blob[-18:] == b"\0\0\0\0UDF-ENCENCRYPT" and struct.unpack(">i", blob[:4])[0] == len(blob) - 22
    assert _as_tuples(run_ms(MS_READ, {"path": hr_path, "key": key, "udf": True})) == _expected(6)
