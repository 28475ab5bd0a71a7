"""Rows that do not fit the schema: dropped as in MindSpore, but with a warning, a count and an opt-in error."""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

from headrace.mindrecord import (DroppedRow, FileReader, FileWriter, InvalidRowWarning, WriteReport)
from headrace.mindrecord._format.errors import MRMValidateDataError, ParamValueError

SCHEMA = {"a": {"type": "int32"}, "v": {"type": "float32", "shape": [2]}}


def _ok(k):
    return {"a": k, "v": np.array([k, -k], np.float32)}


def _rows():
    # 0 ok, 1 float for int32, 2 missing 'a', 3 ok, 4 array of the wrong size
    return [_ok(0), {"a": 1.5, "v": np.zeros(2, np.float32)}, {"v": np.zeros(2, np.float32)}, _ok(3),
            {"a": 4, "v": np.zeros(3, np.float32)}]


def test_dropped_rows_warn_and_are_counted(tmp_path, mr_logs):
    path = str(tmp_path / "d.mindrecord")
    w = FileWriter(path)
    w.add_schema(SCHEMA)
    with pytest.warns(InvalidRowWarning) as rec:
        report = w.write_raw_data(_rows())
    assert len(rec) == 1
    msg = str(rec[0].message)
    assert msg == (
        f"FileWriter dropped 3 of 5 rows given to write_raw_data (call 0) do not fit the schema of {path}: "
        "row 1, field 'a': a value of type 'float' does not fit a field of type int32; "
        "row 2, field 'a': the field is missing; "
        "row 4, field 'v': an array of shape (3,) does not fit the shape [2]. "
        "Pass invalid_rows='error' to FileWriter to raise instead; the WriteReport returned lists every dropped row.")
    assert rec[0].filename == __file__     # points at the caller's line
    assert report == WriteReport(2, 3, (
        DroppedRow(0, 1, "a", "a value of type 'float' does not fit a field of type int32"),
        DroppedRow(0, 2, "a", "the field is missing"),
        DroppedRow(0, 4, "v", "an array of shape (3,) does not fit the shape [2]")))
    # MindSpore's log lines stay as they were
    assert [r.getMessage() for r in mr_logs.records] == [
        "for schema, 4 th data is wrong, data shape: '(3,)' for field: 'v' is not matched.",
        "for schema, 2 th data is wrong, there is not field: 'a' in the raw data.",
        "for schema, 1 th data is wrong, data type: 'int32' for field: 'a' is not matched."]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert w.write_raw_data([_ok(5)]) == WriteReport(1, 0, ())
    with pytest.warns(InvalidRowWarning, match=r"1 of 2 rows given to write_raw_data \(call 2\)"):
        w.write_raw_data([_ok(6), {"a": 2 ** 31, "v": np.zeros(2, np.float32)}])
    total = w.commit()
    assert total.written == 4 and total.dropped == 4
    assert [(d.batch, d.index, d.field) for d in total.dropped_rows] == [(0, 1, "a"), (0, 2, "a"), (0, 4, "v"),
                                                                         (2, 1, "a")]
    assert total.dropped_rows[-1].reason == "the value 2147483648 is out of the range of int32"
    assert [r["a"] for r in FileReader(path).get_next()] == [0, 3, 5, 6]


def test_warning_lists_ten_rows_then_a_count(tmp_path):
    w = FileWriter(str(tmp_path / "many.mindrecord"))
    w.add_schema(SCHEMA)
    with pytest.warns(InvalidRowWarning) as rec:
        report = w.write_raw_data([{"a": "x", "v": np.zeros(2, np.float32)}] * 25 + [_ok(1)])
    msg = str(rec[0].message)
    assert msg.count("field 'a': a value of type 'str' does not fit a field of type int32") == 10
    assert "row 9, field 'a'" in msg and "row 10," not in msg and "; and 15 more." in msg
    assert report.written == 1 and report.dropped == 25 and len(report.dropped_rows) == 25
    w.commit()


def test_error_mode_raises_and_writes_nothing_of_the_call(tmp_path, mr_logs):
    path = str(tmp_path / "strict.mindrecord")
    w = FileWriter(path, invalid_rows="error")
    w.add_schema(SCHEMA)
    w.write_raw_data([_ok(0)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(MRMValidateDataError) as exc:
            w.write_raw_data([_ok(1), {"a": 1, "v": np.zeros(2, np.float64)}])
    assert str(exc.value) == (
        "[MRMValidateDataError]: Raw data do not match the schema. Detail: 1 of 2 rows given to write_raw_data "
        f"(call 1) do not fit the schema of {path}: row 1, field 'v': an array of dtype float64 does not fit a "
        "field of type float32. No row of this call was written.")
    assert isinstance(exc.value, ValueError)
    assert mr_logs.records == []
    assert w.commit() == WriteReport(1, 0, ())
    assert [r["a"] for r in FileReader(path).get_next()] == [0]


def test_error_mode_for_appends(tmp_path):
    path = str(tmp_path / "app.mindrecord")
    w = FileWriter(path)
    w.add_schema(SCHEMA)
    w.write_raw_data([_ok(0)])
    w.commit()
    w = FileWriter.open_for_append(path, invalid_rows="error")
    with pytest.raises(MRMValidateDataError, match=r"row 0, field 'a': the field is missing"):
        w.write_raw_data([{"v": np.zeros(2, np.float32)}])
    assert w.write_raw_data([_ok(1)]) == WriteReport(1, 0, ())
    assert w.commit() == WriteReport(1, 0, ())
    assert [r["a"] for r in FileReader(path).get_next()] == [0, 1]


def test_all_rows_invalid_still_raises_mindspore_error(tmp_path):
    w = FileWriter(str(tmp_path / "none.mindrecord"))
    w.add_schema(SCHEMA)
    with pytest.warns(InvalidRowWarning, match=r"1 of 1 rows"):
        with pytest.raises(RuntimeError, match="There is no valid data which can be written by 'write_raw_data'"):
            w.write_raw_data([{"a": None, "v": np.zeros(2, np.float32)}])
    # the rows of a call that raised were dropped all the same
    assert w.commit() == WriteReport(0, 1, (DroppedRow(0, 0, "a", "a value of type 'NoneType' cannot be stored"),))
    assert sorted(os.listdir(tmp_path)) == ["none.mindrecord", "none.mindrecord.db"]


@pytest.mark.parametrize("bad", ["raise", "", None, 1, True, "WARN"])
def test_invalid_rows_parameter_checked(tmp_path, bad):
    expect = f"Parameter invalid_rows must be one of ['warn', 'error'], but got {bad!r}."
    with pytest.raises(ParamValueError) as exc:
        FileWriter(str(tmp_path / "p.mindrecord"), invalid_rows=bad)
    assert exc.value.error_msg == "Invalid parameter value. " + expect
    with pytest.raises(ParamValueError, match="invalid_rows must be one of"):
        FileWriter.open_for_append(str(tmp_path / "p.mindrecord"), invalid_rows=bad)
