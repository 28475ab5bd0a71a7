"""MindRecord encryption (``set_enc_key`` / ``set_enc_mode`` / ``set_dec_mode``): MindSpore 2.10's
layout, decryption by every reader, wrong keys, tampering, appends and user functions."""
from __future__ import annotations

import os
import stat
import struct

import numpy as np
import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

import headrace.dataset as ds
from headrace.mindrecord import (FileReader, FileWriter, MindPage, set_dec_mode, set_enc_key, set_enc_mode)
from headrace.mindrecord._format import crypto
from tests.mindrecord import crypto_common
from tests.mindrecord.crypto_common import reset_encryption  # noqa: F401 - an autouse fixture

KEY = "0123456789abcdef"
SCHEMA = {"label": {"type": "int32"}, "name": {"type": "string"}, "data": {"type": "bytes"}}


_rows = crypto_common.rows


def _write(path, n=6, shards=1):
    w = FileWriter(str(path), shards)
    w.add_schema(SCHEMA, "enc")
    w.add_index(["label"])
    w.write_raw_data(_rows(n))
    w.commit()


def _read(path):
    r = FileReader(str(path))
    try:
        return [(x["label"], x["name"], x["data"]) for x in r.get_next()]
    finally:
        r.close()


def _expected(n, start=0):
    return [(r["label"], r["name"], r["data"]) for r in _rows(n, start)]


def _decrypt_by_hand(blob: bytes, key: str) -> bytes:
    """Independent reading of the layout: BE32 length + sealed block ..., BE32 0, mode, ENCRYPT."""
    assert blob[-14:] == b"AES-GCMENCRYPT"
    out, pos = b"", 0
    while True:
        (n,) = struct.unpack_from(">i", blob, pos)
        pos += 4
        if n == 0:
            assert pos == len(blob) - 14
            return out
        blk = blob[pos:pos + n]
        pos += n
        magic, = struct.unpack_from("<I", blk, 0)
        assert magic == 0x7F3A5ED8
        tag = blk[4:20]
        rest, iv_len = struct.unpack_from("<II", blk, 20)
        assert (rest, iv_len) == (n - 24, 16)
        iv = blk[28:44]
        clen, = struct.unpack_from("<I", blk, 44)
        assert clen == n - 48
        out += AESGCM(key.encode()).decrypt(iv[:12], blk[48:] + tag, None)


@pytest.mark.parametrize("key", ["0123456789abcdef", "0123456789abcdefghijklmn", "0123456789abcdefghijklmnopqrstuv"])
def test_round_trip_every_key_length_and_layout(tmp_path, key):
    (tmp_path / "p").mkdir()
    _write(tmp_path / "p" / "enc.mr")   # same name: the header holds it
    set_enc_key(key)
    _write(tmp_path / "enc.mr")
    plain = (tmp_path / "p" / "enc.mr").read_bytes()
    enc = (tmp_path / "enc.mr").read_bytes()
    assert enc[-7:] == b"ENCRYPT" and enc[-14:-7] == b"AES-GCM"
    assert _decrypt_by_hand(enc, key) == plain        # the data file is the plain one, sealed
    db = _decrypt_by_hand((tmp_path / "enc.mr.db").read_bytes(), key)
    assert db[:16] == b"SQLite format 3\x00"
    assert stat.S_IMODE(os.stat(tmp_path / "enc.mr").st_mode) == 0o600
    assert _read(tmp_path / "enc.mr") == _expected(6)


def test_mindpage_and_minddataset_decrypt(tmp_path):
    set_enc_key(KEY)
    _write(tmp_path / "e.mr")
    page = MindPage(str(tmp_path / "e.mr"))
    page.category_field = "label"
    assert page.read_at_page_by_name("3", 0, 1) == [{"label": 3, "name": "n3", "data": b"\x03" * 4}]
    data = ds.MindDataset(str(tmp_path / "e.mr"), shuffle=False)
    set_enc_key(None)     # decrypted when the dataset was made, as in MindSpore
    got = [(int(r["label"]), str(r["name"])) for r in data.create_dict_iterator(output_numpy=True)]
    assert got == [(i, f"n{i}") for i in range(6)]


def test_decrypted_copies_are_private_and_removed_on_close(tmp_path):
    set_enc_key(KEY)
    _write(tmp_path / "e.mr")
    r = FileReader(str(tmp_path / "e.mr"))
    root = tmp_path / crypto.DECRYPT_DIR
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    (copy,) = os.listdir(root)
    assert sorted(os.listdir(root / copy)) == ["e.mr", "e.mr.db"]
    assert stat.S_IMODE(os.stat(root / copy / "e.mr").st_mode) == 0o600
    assert r.len() == 6
    r.close()
    assert os.listdir(root) == []


def test_wrong_key_names_the_file(tmp_path):
    set_enc_key(KEY)
    _write(tmp_path / "e.mr")
    set_enc_key("0123456789abcdeX")
    path = str(tmp_path / "e.mr")
    for make in (lambda: FileReader(path), lambda: MindPage(path), lambda: ds.MindDataset(path),
                 lambda: FileWriter.open_for_append(path)):
        with pytest.raises(RuntimeError) as err:
            make()
        msg = str(err.value)
        assert msg.startswith("Failed to decrypt data, please check if enc_key and enc_mode / dec_mode is valid. "
                              f"The block at offset 0 of {path} fails its integrity check")
    assert os.listdir(tmp_path / crypto.DECRYPT_DIR) == []     # nothing half-decrypted left


def test_a_changed_byte_fails_the_integrity_check(tmp_path):
    set_enc_key(KEY)
    _write(tmp_path / "e.mr")
    blob = bytearray((tmp_path / "e.mr").read_bytes())
    blob[100] ^= 1
    (tmp_path / "e.mr").write_bytes(bytes(blob))
    with pytest.raises(RuntimeError, match="fails its integrity check: the key is not the one the file was "
                                           "encrypted with, or the file was changed"):
        FileReader(str(tmp_path / "e.mr"))


def test_key_setting_and_file_disagree(tmp_path):
    _write(tmp_path / "p.mr")
    set_enc_key(KEY)
    _write(tmp_path / "e.mr")
    with pytest.raises(RuntimeError) as err:
        FileReader(str(tmp_path / "p.mr"))
    assert str(err.value) == (f"{crypto.NOT_ENCRYPTED} File: {tmp_path / 'p.mr'}")
    set_enc_key(None)
    for make in (FileReader, MindPage, FileWriter.open_for_append):
        with pytest.raises(RuntimeError) as err:
            make(str(tmp_path / "e.mr"))
        assert str(err.value) == f"{crypto.IS_ENCRYPTED} File: {tmp_path / 'e.mr'}"


def test_no_auto_sharding_with_a_key(tmp_path):
    set_enc_key(KEY)
    with pytest.raises(RuntimeError, match="^When encode mode is enabled, the automatic sharding function is "
                                           r"unavailable. Write shard_num=1 \(got 2\)"):
        FileWriter(str(tmp_path / "s.mr"), 2)


def test_append_keeps_the_files_encrypted(tmp_path):
    set_enc_key(KEY)
    _write(tmp_path / "e.mr", 4)
    w = FileWriter.open_for_append(str(tmp_path / "e.mr"))
    w.write_raw_data(_rows(3, 4))
    w.commit()
    assert (tmp_path / "e.mr").read_bytes()[-14:] == b"AES-GCMENCRYPT"
    assert (tmp_path / "e.mr.db").read_bytes()[-14:] == b"AES-GCMENCRYPT"
    assert _read(tmp_path / "e.mr") == _expected(7)


def test_dataset_save_encrypts(tmp_path):
    set_enc_key(KEY)
    path = str(tmp_path / "s.mr")
    ds.NumpySlicesDataset({"a": np.arange(5, dtype=np.int64)}, shuffle=False).save(path)
    assert (tmp_path / "s.mr").read_bytes()[-14:] == b"AES-GCMENCRYPT"
    got = [int(r["a"]) for r in ds.MindDataset(path, shuffle=False).create_dict_iterator(output_numpy=True)]
    assert got == [0, 1, 2, 3, 4]


_udf_enc = crypto_common.udf_enc


def _udf_dec(f_in, size, f_out, key):
    (n,) = struct.unpack(">i", f_in.read(4))
    f_out.write(crypto_common.xor(f_in.read(n), key))
    assert f_in.read(4) == b"\0\0\0\0" and size == 4 + n + 4 + 7


def test_user_functions(tmp_path):
    set_enc_key(KEY)
    set_enc_mode(_udf_enc)
    _write(tmp_path / "u.mr")
    assert (tmp_path / "u.mr").read_bytes()[-18:] == b"\0\0\0\0UDF-ENCENCRYPT"
    with pytest.raises(RuntimeError, match="You use custom encryption, so you must also define custom decryption"):
        FileReader(str(tmp_path / "u.mr"))
    set_dec_mode(_udf_dec)
    assert _read(tmp_path / "u.mr") == _expected(6)
    set_enc_mode("AES-GCM")
    set_dec_mode("AES-GCM")
    with pytest.raises(RuntimeError, match="was encrypted with mode 'UDF-ENC', the decryption mode is 'AES-GCM'"):
        FileReader(str(tmp_path / "u.mr"))


@pytest.mark.parametrize("call, value, message", [
    (set_enc_key, 123, "The input enc_key is not str: got int. enc_key must be a str of length 16, 24 or 32"),
    (set_enc_key, "short", "The length of input enc_key is not 16, 24, 32: got 5 characters."),
    (set_enc_key, "é" * 16, "The length of input enc_key is not 16, 24, 32: got 16 characters. enc_key must be 16, "
                            "24 or 32 ASCII characters"),
    (set_enc_mode, "AES-CBC", "The input enc_mode is invalid: 'AES-CBC'. enc_mode must be one of ['AES-GCM'] or a "
                              "callable."),
    (set_enc_mode, 1, "The input enc_mode is not str: got int."),
    (set_dec_mode, "SM4-CBC", "The input dec_mode is invalid: 'SM4-CBC'."),
])
def test_settings_are_checked(call, value, message):
    with pytest.raises(ValueError) as err:
        call(value)
    assert str(err.value).startswith(message)
    assert crypto.get_enc_key() is None and crypto.get_enc_mode() == "AES-GCM"


def test_minddataset_copies_go_with_the_dataset_without_the_garbage_collector(tmp_path):
    import gc

    set_enc_key(KEY)
    _write(tmp_path / "e.mr")
    root = tmp_path / crypto.DECRYPT_DIR
    gc.disable()
    try:
        data = ds.MindDataset(str(tmp_path / "e.mr"), shuffle=False)
        assert len(os.listdir(root)) == 1
        assert [int(r[0]) for r in data.create_tuple_iterator(columns=["label"], output_numpy=True)] == list(range(6))
        read = data._source().read
        del data
        assert len(os.listdir(root)) == 1       # a kept row reader keeps its files
        assert int(read(5)[1]) == 5
        del read
        assert os.listdir(root) == []
    finally:
        gc.enable()


def test_minddataset_checks_sizes_and_markers_when_made(tmp_path):
    set_enc_key(KEY)
    _write(tmp_path / "e.mr")
    set_enc_key(None)
    with pytest.raises(RuntimeError) as err:
        ds.MindDataset(str(tmp_path / "e.mr"))
    assert str(err.value) == f"{crypto.IS_ENCRYPTED} File: {tmp_path / 'e.mr'}"
    (tmp_path / "z.mr").write_bytes(b"")
    (tmp_path / "z.mr.db").write_bytes(b"")
    for files in (str(tmp_path / "z.mr"), [str(tmp_path / "e.mr"), str(tmp_path / "z.mr")][1:]):
        with pytest.raises(RuntimeError) as err:
            ds.MindDataset(files)
        assert str(err.value) == (f"Invalid file, the size of mindrecord file: 0 is smaller than the lower limit: "
                                  f"8.\n Please check file path: {tmp_path / 'z.mr'} and use 'FileWriter' to generate "
                                  f"valid mindrecord files.")
