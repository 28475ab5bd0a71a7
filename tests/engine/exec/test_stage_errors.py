"""A failure inside a stage that is no op's own error is reported the same way in every mode."""
from __future__ import annotations

from headrace._engine.exec.stage import StageProgram
from headrace._util.errors import PipelineError


class BrokenMap:
    """A map member whose own machinery fails (not the user's function) on the third row."""

    op_id = 7
    name = "map operation: [PyFunc]"
    globals = None  # no per-sample seeding of np.random / random (MapFn's attribute)

    def fast_path(self):
        return None

    def apply(self, row, index):
        if index == 12:
            raise ZeroDivisionError("engine bug")
        return row


def test_an_unexpected_exception_in_a_stage_task_becomes_a_pipeline_error_after_the_rows_before_it():
    program = StageProgram(None, (BrokenMap(),), None, None, "GeneratorDataset -> map operation: [PyFunc]")
    rows, err = program.run((1, 0, 10, [("a",), ("b",), ("c",), ("d",)], 0))
    assert rows == [("a",), ("b",)]
    assert type(err) is PipelineError and type(err.__cause__) is ZeroDivisionError
    assert err.op == "GeneratorDataset -> map operation: [PyFunc]"
    assert err.detail == "ZeroDivisionError: engine bug"
    assert 'raise ZeroDivisionError("engine bug")' in err.python_stack
