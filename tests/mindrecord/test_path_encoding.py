"""FileWriter paths that are not UTF-8 (issue 39 item 10): refused when the writer is made."""
import os

import pytest

from headrace.mindrecord import FileReader, FileWriter
from headrace.mindrecord._format.errors import ParamValueError

NOT_UTF8 = "\udcff"  # the byte 0xff of a file name, as Python decodes it (surrogateescape)


def _write(path):
    w = FileWriter(path, 1)
    w.add_schema({"x": {"type": "int64"}}, "s")
    w.write_raw_data([{"x": 7}])
    w.commit()


@pytest.mark.parametrize("where", ["file", "directory"])
def test_a_path_with_a_non_utf8_byte_is_refused_at_construction(tmp_path, where):
    folder = tmp_path / (f"d{NOT_UTF8}" if where == "directory" else "d")
    folder.mkdir()
    path = str(folder / (f"bad{NOT_UTF8}.mindrecord" if where == "file" else "ok.mindrecord"))
    with pytest.raises(ParamValueError, match=r"file_name '.*' holds bytes that are not UTF-8 \(b'.*\\xff.*'; "
                                              r"'\\udcff' in its absolute path\): a MindRecord file records the paths "
                                              r"of its files as UTF-8 text"):
        FileWriter(path, 1)
    assert os.listdir(folder) == []  # nothing was created


def test_a_relative_name_under_a_non_utf8_working_directory_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / f"cwd{NOT_UTF8}"
    folder.mkdir()
    monkeypatch.chdir(folder)
    with pytest.raises(ParamValueError, match="holds bytes that are not UTF-8"):
        FileWriter("plain.mindrecord", 1)


def test_open_for_append_refuses_it_too(tmp_path):
    with pytest.raises(ParamValueError, match="holds bytes that are not UTF-8"):
        FileWriter.open_for_append(str(tmp_path / f"x{NOT_UTF8}.mindrecord"))


def test_utf8_names_beyond_ascii_still_write_and_read(tmp_path):
    path = str(tmp_path / "données-日本.mindrecord")
    _write(path)
    assert [int(r["x"]) for r in FileReader(path).get_next()] == [7]


def test_mindspore_cannot_write_such_a_name_either(tmp_path):
    from tests.oracles.oracle import oracle_python, run_ms
    if oracle_python() is None:
        pytest.skip("the MindSpore oracle is not set up")
    got = run_ms('''
import tempfile
from mindspore.mindrecord import FileWriter
path = os.path.join(tempfile.mkdtemp(), "bad\\udcff.mindrecord")
def write():
    w = FileWriter(path, 1)
    w.add_schema({"x": {"type": "int64"}}, "s")
    w.write_raw_data([{"x": 7}])
    w.commit()
RESULT = type(catch(write)).__name__
''')
    assert got == "TypeError"  # from its C++ layer, at the first write
