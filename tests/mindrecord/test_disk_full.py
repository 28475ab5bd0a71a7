"""Disk full (or any OS/SQLite write failure) while writing MindRecord files: the error names the
file, and nothing is left behind (no temporary data file, no temporary .db or journal, no lock)."""
from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from headrace.mindrecord import FileReader, FileWriter
from headrace.mindrecord._format import writer as writer_mod
from headrace.mindrecord._format.errors import MindRecordRuntimeError, MindRecordWriteError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA = {"label": {"type": "int64"}, "name": {"type": "string"}, "data": {"type": "bytes"}}


def _rows(n, start=0, size=100):
    return [{"label": k, "name": f"n{k}", "data": bytes([k % 256]) * size} for k in range(start, start + n)]


def _enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _check(exc, target):
    """The error names the file, keeps errno (also an OSError), and says what was cleaned up."""
    assert isinstance(exc, OSError) and isinstance(exc, RuntimeError)
    assert exc.errno == errno.ENOSPC and exc.filename == target and exc.file == target
    assert exc.temp is None or os.path.dirname(exc.temp) == os.path.dirname(target)
    via = f" (temporary file {exc.temp})" if exc.temp else ""
    assert exc.detail == (f"Failed to write mindrecord file {target}{via}: No space left on device [ENOSPC]. The "
                          f"FileWriter was closed and its temporary files removed.")
    assert exc.detail in str(exc)


def _writer(path, **kw):
    w = FileWriter(path, **kw)
    w.add_schema(SCHEMA)
    return w


def test_data_page_write_fails_during_write_raw_data(tmp_path, monkeypatch):
    monkeypatch.setattr(writer_mod, "MEMORY_LIMIT", 1)          # pages go to a temporary file at once
    path = str(tmp_path / "a.mindrecord")
    w = _writer(path)
    monkeypatch.setattr(os, "pwritev", _enospc)
    with pytest.raises(MindRecordWriteError) as info:
        w.write_raw_data(_rows(10))
    _check(info.value, path)
    assert info.value.temp.endswith(".hrtmp")
    assert os.listdir(tmp_path) == []
    monkeypatch.undo()
    with pytest.raises(MindRecordRuntimeError, match="this FileWriter was closed after a failure"):
        w.write_raw_data(_rows(1))
    with pytest.raises(MindRecordRuntimeError, match="this FileWriter was closed after a failure"):
        w.commit()
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("call", ["pwritev", "pwrite", "ftruncate", "fchmod"])
def test_data_file_write_fails_during_commit(tmp_path, monkeypatch, call):
    path = str(tmp_path / "c.mindrecord")
    w = _writer(path, shard_num=1)
    w.write_raw_data(_rows(20))                                   # in memory until commit
    monkeypatch.setattr(os, call, _enospc)
    with pytest.raises(MindRecordWriteError) as info:
        w.commit()
    monkeypatch.undo()
    _check(info.value, path)
    assert os.listdir(tmp_path) == []


def test_creating_the_temporary_file_fails(tmp_path, monkeypatch):
    real_open = os.open

    def no_temps(p, *args, **kwargs):
        if str(p).endswith(".hrtmp"):
            _enospc()
        return real_open(p, *args, **kwargs)

    path = str(tmp_path / "t.mindrecord")
    w = _writer(path)
    w.write_raw_data(_rows(3))
    monkeypatch.setattr(os, "open", no_temps)
    with pytest.raises(MindRecordWriteError) as info:
        w.commit()
    monkeypatch.undo()
    _check(info.value, path)
    assert info.value.temp is None
    assert os.listdir(tmp_path) == []


def _small_sqlite(monkeypatch, pages=3):
    """SQLite databases that cannot grow past ``pages`` pages: a real 'database or disk is full'."""
    real = sqlite3.connect

    def connect(*args, **kwargs):
        con = real(*args, **kwargs)
        con.execute(f"PRAGMA max_page_count={pages}")
        return con

    monkeypatch.setattr(sqlite3, "connect", connect)


def test_index_does_not_fit(tmp_path, monkeypatch):
    """Before: a raw sqlite3.OperationalError naming no file, and the .db temp file stayed."""
    path = str(tmp_path / "i.mindrecord")
    w = _writer(path, shard_num=2)
    w.write_raw_data(_rows(2000, size=1))
    _small_sqlite(monkeypatch)
    with pytest.raises(MindRecordWriteError) as info:
        w.commit()
    monkeypatch.undo()
    target = path + "0.db"
    assert info.value.filename == target and info.value.errno == errno.ENOSPC
    assert info.value.detail == (f"Failed to write mindrecord file {target} (temporary file {info.value.temp}): "
                                 f"database or disk is full [ENOSPC]. The FileWriter was closed and its temporary "
                                 f"files removed.")
    assert isinstance(info.value.__cause__, sqlite3.OperationalError)
    assert os.listdir(tmp_path) == []


def test_overwrite_that_fails_keeps_the_old_dataset(tmp_path, monkeypatch):
    path = str(tmp_path / "o.mindrecord")
    w = _writer(path)
    w.write_raw_data(_rows(5))
    w.commit()
    before = {n: (tmp_path / n).read_bytes() for n in os.listdir(tmp_path)}
    w = _writer(path, overwrite=True)
    w.write_raw_data(_rows(3000, 100, size=1))
    _small_sqlite(monkeypatch)
    with pytest.raises(MindRecordWriteError, match=r"database or disk is full"):
        w.commit()
    monkeypatch.undo()
    assert {n: (tmp_path / n).read_bytes() for n in os.listdir(tmp_path)} == before
    assert [r["label"] for r in FileReader(path).get_next()] == list(range(5))


@pytest.mark.parametrize("where", ["write", "index"])
def test_append_that_fails_leaves_the_files_as_they_were(tmp_path, monkeypatch, where):
    path = str(tmp_path / "ap.mindrecord")
    w = _writer(path)
    w.write_raw_data(_rows(5))
    w.commit()
    before = {n: (tmp_path / n).read_bytes() for n in os.listdir(tmp_path)}
    w = FileWriter.open_for_append(path)
    w.write_raw_data(_rows(3, 5))                       # extends the data file in place
    assert os.path.getsize(path) > len(before["ap.mindrecord"])
    if where == "write":
        monkeypatch.setattr(os, "pwritev", _enospc)
        with pytest.raises(MindRecordWriteError) as info:
            w.write_raw_data(_rows(3, 8))
        assert info.value.filename == path and info.value.temp is None
    else:
        w.write_raw_data(_rows(3000, 8, size=1))
        _small_sqlite(monkeypatch)
        with pytest.raises(MindRecordWriteError) as info:
            w.commit()
        assert info.value.filename == path + ".db"
    monkeypatch.undo()
    assert {n: (tmp_path / n).read_bytes() for n in os.listdir(tmp_path)} == before
    assert [r["label"] for r in FileReader(path).get_next()] == list(range(5))


_FSIZE = textwrap.dedent("""
    import os, resource, signal, sys
    sys.path.insert(0, {root!r})
    from headrace.mindrecord import FileWriter
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)         # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    w = FileWriter({path!r})
    w.add_schema({{"label": {{"type": "int64"}}, "data": {{"type": "bytes"}}}})
    w.write_raw_data([{{"label": k, "data": os.urandom(1000)}} for k in range(1000)])
    try:
        w.commit()
    except OSError as e:
        print(type(e).__name__, e.errno, e.filename)
        print(e.detail)
""")


def test_real_write_failure_file_size_limit(tmp_path):
    """A real failed write (RLIMIT_FSIZE: EFBIG) in a subprocess, no simulation."""
    path = str(tmp_path / "real.mindrecord")
    proc = subprocess.run([sys.executable, "-c", _FSIZE.format(root=ROOT, path=path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    first, detail = proc.stdout.splitlines()
    assert first == f"MindRecordWriteError {errno.EFBIG} {path}"
    assert detail.startswith(f"Failed to write mindrecord file {path} (temporary file {tmp_path}{os.sep}.real.")
    assert "File too large [EFBIG]" in detail
    assert os.listdir(tmp_path) == []
