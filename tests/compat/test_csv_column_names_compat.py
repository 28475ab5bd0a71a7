"""CSVDataset's column_names with empty or repeated names, against MindSpore 2.10: taken by the
constructor, refused when the pipeline is built, with the same error type and text."""
from __future__ import annotations

import pytest

from tests.oracles.oracle import run_headrace, run_ms
from tests.oracles.oracle_codec import OracleException

pytestmark = pytest.mark.compat

NAMES = [["col1", "col2", "col3", "col4"] * 2, ["b", "a", "a", "b"], ["", "x", "x"], ["x", "y", "", "y", ""]]

# each case: whether the constructor took the names, then the error of get_col_names and of an iterator
PROGRAM = """
import os
path = os.path.join(INPUTS["dir"], "c.csv")
def case(names):
    made = catch(lambda: ds.CSVDataset(path, column_names=names, shuffle=False))
    if isinstance(made, Exception):
        return ["refused", type(made).__name__, str(made)]
    return ["taken"] + [catch(build) for build in (made.get_col_names,
                                                 lambda: made.create_dict_iterator(num_epochs=1, output_numpy=True))]
RESULT = [case(n) for n in INPUTS["names"]]
"""


def _message(exc) -> tuple[str, str]:
    """Type name and text up to MindSpore's C++ call stack section (headrace has none)."""
    name, msg = (exc.type_name, exc.msg) if isinstance(exc, OracleException) else (type(exc).__name__, str(exc))
    return name, msg.split("-" * 66 + "\n- C++ Call Stack")[0]


def test_csv_empty_and_repeated_column_names_fail_as_in_mindspore(tmp_path):
    (tmp_path / "c.csv").write_text("1,2,3,4\n")
    inputs = {"dir": str(tmp_path), "names": NAMES}
    theirs, ours = run_ms(PROGRAM, inputs), run_headrace(PROGRAM, inputs)
    assert [t[0] for t in theirs] == [o[0] for o in ours] == ["taken"] * len(NAMES)
    for t, o in zip(theirs, ours):
        assert [_message(e) for e in t[1:]] == [_message(e) for e in o[1:]]
    assert _message(ours[0][1]) == ("RuntimeError", "Syntax error. \n\n" + "-" * 66 + "\n- Dataset Pipeline Error "
                                    "Message: \n" + "-" * 66 + "\n[ERROR] CSVDataset: 'column_names' : Invalid "
                                    "parameter, duplicate column names are not allowed: col1\n\n")
