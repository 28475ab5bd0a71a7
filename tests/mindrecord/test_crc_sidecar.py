"""The opt-in CRC sidecar of MindRecord files (issue 39 item 16)."""
import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headrace.cli.mindrecord import main as mindrecord_cli
from headrace.mindrecord import FileReader, FileWriter, set_enc_key, set_verify_on_open, verify
from headrace.mindrecord._format import integrity
from headrace.mindrecord._format.errors import MindRecordFormatError, ParamValueError
from headrace.mindrecord._format.header import read_header_path

SCHEMA = {"label": {"type": "int32"}, "data": {"type": "bytes"}, "vec": {"type": "float32", "shape": [-1]}}
N = 60


def _rows(n=N, start=0):
    rs = np.random.RandomState(start)
    return [{"label": i, "data": rs.bytes(1000 + i), "vec": rs.rand(8).astype(np.float32)}
            for i in range(start, start + n)]


def _write(path, shard_num=1, checksum=True, rows=None, **kw):
    w = FileWriter(str(path), shard_num, checksum=checksum, **kw)
    w.add_schema(SCHEMA, "crc")
    w.set_page_size(1 << 15)
    w.write_raw_data(rows or _rows())
    w.commit()
    return str(path)


@pytest.fixture(autouse=True)
def _settings():
    yield
    set_verify_on_open(False)
    set_enc_key(None)


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """A checksummed single-file dataset; tests copy it before damaging it."""
    return _write(tmp_path_factory.mktemp("crc") / "good.mindrecord")


def _copy(src, dst_dir):
    dst = str(dst_dir / os.path.basename(src))
    for suffix in ("", ".db", ".crc"):
        with open(src + suffix, "rb") as f, open(dst + suffix, "wb") as g:
            g.write(f.read())
    return dst


def _flip(path, pos, bit=0):
    with open(path, "r+b") as f:
        f.seek(pos)
        b = f.read(1)[0]
        f.seek(pos)
        f.write(bytes([b ^ (1 << bit)]))


def test_each_shard_gets_a_sidecar_recording_its_layout(tmp_path):
    path = _write(tmp_path / "s.mindrecord", shard_num=2)
    assert sorted(os.listdir(tmp_path)) == [f"s.mindrecord{k}{s}" for k in (0, 1) for s in ("", ".crc", ".db")]
    for k in (0, 1):
        f = f"{path}{k}"
        rec = json.load(open(f + ".crc"))
        h = read_header_path(f)
        size = os.path.getsize(f)
        assert (rec["format"], rec["version"], rec["algorithm"]) == ("headrace-mindrecord-crc", 1, "crc32c")
        assert (rec["file"], rec["size"], rec["header_size"], rec["page_size"]) == (
            os.path.basename(f), size, h.header_size, h.page_size)
        assert len(rec["blocks"]) == 1 + -(-(size - h.header_size) // h.page_size)
        from headrace._codecs.crc32c import crc32c
        data = open(f, "rb").read()
        assert rec["blocks"][0] == crc32c(data[:h.header_size])
        assert rec["blocks"][1] == crc32c(data[h.header_size:h.header_size + h.page_size])
        assert rec["db"] == {"file": os.path.basename(f) + ".db", "size": os.path.getsize(f + ".db"),
                             "crc32c": crc32c(open(f + ".db", "rb").read())}
    reports = verify(f"{path}0")
    assert [r.checksum for r in reports] == [True, True]


def test_without_checksum_there_is_no_sidecar_and_an_old_one_is_removed(tmp_path):
    path = _write(tmp_path / "s.mindrecord")
    assert os.path.exists(path + ".crc")
    _write(path, checksum=False, overwrite=True, rows=_rows(5))
    assert sorted(os.listdir(tmp_path)) == ["s.mindrecord", "s.mindrecord.db"]
    assert [r.checksum for r in verify(path)] == [False]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.floats(0, 1, exclude_max=True), bit=st.integers(0, 7))
def test_every_bit_flip_in_the_data_file_is_named_with_its_page(good, tmp_path_factory, where, bit):
    path = _copy(good, tmp_path_factory.mktemp("flip"))
    h = read_header_path(path)
    pos = int(where * os.path.getsize(path))
    _flip(path, pos, bit)
    with pytest.raises(MindRecordFormatError) as info:
        integrity.check_sidecar(path)
    text = str(info.value)
    if pos < h.header_size:
        assert "CRC-32C differs from the sidecar's in 1 of" in text and ": the header." in text
    else:
        page = (pos - h.header_size) // h.page_size
        assert f": page {page} (" in text, text
        assert "The bytes changed after they were written" in text


def test_a_flip_in_a_bytes_field_that_verify_alone_cannot_see_is_caught(good, tmp_path):
    path = _copy(good, tmp_path)
    h = read_header_path(path)
    blob = next(p for p in h.pages if p.page_type == "BLOB_DATA" and p.start_row_id <= 10 < p.end_row_id)
    data = open(path, "rb").read()
    payload = _rows()[10]["data"]
    pos = data.index(payload)  # inside row 10's bytes field
    assert h.header_size + blob.page_id * h.page_size <= pos < h.header_size + (blob.page_id + 1) * h.page_size
    _flip(path, pos + 100)
    os.unlink(path + ".crc")
    verify(path)  # the format alone: the changed byte decodes well
    with open(good + ".crc", "rb") as f, open(path + ".crc", "wb") as g:  # the sidecar back
        g.write(f.read())
    with pytest.raises(MindRecordFormatError, match=rf"page {blob.page_id} \(blob, rows {blob.start_row_id} to "
                                                    rf"{blob.end_row_id - 1}\)") as info:
        verify(path)
    assert info.value.row == blob.start_row_id and info.value.file == path


def test_a_changed_index_is_named(good, tmp_path):
    path = _copy(good, tmp_path)
    _flip(path + ".db", os.path.getsize(path + ".db") - 10)
    with pytest.raises(MindRecordFormatError, match=r"the \.db \(\d+ bytes, CRC-32C 0x[0-9a-f]{8}\) differs from its "
                                                    r"CRC sidecar's record") as info:
        integrity.check_sidecar(path)
    assert info.value.file == path + ".db"


def test_a_file_changed_in_size_is_called_stale(good, tmp_path):
    path = _copy(good, tmp_path)
    with open(path, "ab") as f:
        f.write(b"\0" * 16)
    with pytest.raises(MindRecordFormatError, match=r"the data file has \d+ bytes, its CRC sidecar recorded \d+: it "
                                                    r"changed after the sidecar was written"):
        integrity.check_sidecar(path)


@pytest.mark.parametrize("content", ["", "{", json.dumps({"format": "other"}), json.dumps([1, 2])])
def test_a_damaged_sidecar_is_an_error(good, tmp_path, content):
    path = _copy(good, tmp_path)
    with open(path + ".crc", "w") as f:
        f.write(content)
    with pytest.raises(MindRecordFormatError, match="Integrity check failed: the CRC sidecar "):
        integrity.check_sidecar(path)


def test_readers_check_it_when_asked(good, tmp_path):
    import headrace.dataset as ds
    path = _copy(good, tmp_path)
    assert len(list(FileReader(path, verify="checksum").get_next())) == N
    _flip(path, open(path, "rb").read().index(_rows()[3]["data"]) + 7)  # inside row 3's bytes field
    with pytest.raises(MindRecordFormatError, match=r"Integrity check failed: CRC-32C differs .* rows 0 to "):
        FileReader(path, verify="checksum")
    set_verify_on_open("checksum")
    with pytest.raises(RuntimeError, match=r"Integrity check failed: CRC-32C differs"):
        list(ds.MindDataset(path, shuffle=False).create_tuple_iterator(output_numpy=True))
    set_verify_on_open(False)
    got = [r["data"] for r in FileReader(path).get_next()]  # not asked: read as before, the damage unseen
    assert len(got) == N and got[3] != _rows()[3]["data"] and got[4] == _rows()[4]["data"]


def test_asking_for_a_checksum_the_file_lacks_is_an_error(tmp_path):
    path = _write(tmp_path / "plain.mindrecord", checksum=False)
    with pytest.raises(MindRecordFormatError, match=r"the data file has no CRC sidecar \(plain\.mindrecord\.crc; "
                                                    r"FileWriter\(\.\.\., checksum=True\)"):
        FileReader(path, verify="checksum")


def test_appending_keeps_the_sidecar_current(tmp_path):
    path = _write(tmp_path / "a.mindrecord")
    w = FileWriter.open_for_append(path)
    w.write_raw_data(_rows(20, start=N))
    w.commit()
    assert json.load(open(path + ".crc"))["size"] == os.path.getsize(path)
    assert [r.rows for r in verify(path)] == [N + 20]
    plain = _write(tmp_path / "b.mindrecord", checksum=False)
    w = FileWriter.open_for_append(plain)
    w.write_raw_data(_rows(3, start=N))
    w.commit()
    assert not os.path.exists(plain + ".crc")
    w = FileWriter.open_for_append(plain, checksum=True)
    w.write_raw_data(_rows(3, start=N + 3))
    w.commit()
    assert verify(plain)[0].checksum


def test_arguments_are_checked():
    with pytest.raises(ParamValueError, match=r"Parameter checksum must be True or False, but got 1\."):
        FileWriter("/tmp/x.mindrecord", checksum=1)
    set_enc_key("0123456789012345")
    with pytest.raises(ParamValueError, match=r"checksum=True cannot be used with encryption"):
        FileWriter("/tmp/x.mindrecord", checksum=True)
    with pytest.raises(TypeError, match=r"must be a bool \(True or False\), got str 'crc'; or 'checksum' to check "):
        set_verify_on_open("crc")
    with pytest.raises(TypeError, match=r"'verify' must be True, False or None \(.*\), or 'checksum' to check only "
                                        r"the CRC sidecars, got 'yes'\."):
        FileReader("/tmp/x.mindrecord", verify="yes")


def test_cli_checksum_then_verify(tmp_path, capsys):
    path = _write(tmp_path / "c.mindrecord", shard_num=2, checksum=False)
    assert mindrecord_cli(["checksum", f"{path}0"]) == 0
    assert capsys.readouterr().out == f"{path}0.crc: written\n{path}1.crc: written\n"
    assert mindrecord_cli(["verify", f"{path}1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and all(line.endswith("bytes checked; CRC sidecar matches)") for line in out)
    _flip(f"{path}1", os.path.getsize(f"{path}1") - 3)
    assert mindrecord_cli(["verify", f"{path}0"]) == 1
    assert "Integrity check failed: CRC-32C differs" in capsys.readouterr().err
    assert mindrecord_cli(["checksum", "--only", f"{path}1"]) == 1  # a file that no longer matches keeps its sidecar
    assert json.load(open(f"{path}1.crc"))["size"] == os.path.getsize(f"{path}1")


def test_mindspore_reads_files_written_with_a_sidecar(good):
    from tests.oracles.oracle import oracle_python, run_ms
    if oracle_python() is None:
        pytest.skip("the MindSpore oracle is not set up")
    got = run_ms("""
from mindspore.mindrecord import FileReader
r = FileReader(INPUTS)
RESULT = [(int(row["label"]), bytes(row["data"])) for row in r.get_next()]
r.close()
""", good)
    assert got == [(r["label"], r["data"]) for r in _rows()]
