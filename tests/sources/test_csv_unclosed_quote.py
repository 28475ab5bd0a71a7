"""A CSV quote that is never closed, worded as MindSpore 2.10 words it (its sentences, from the
oracle, then headrace's line and reason): "failed to parse ... reach the end of file in quote field"
after a complete record, its "can't read the data file" sentence when the open record is the first."""
import pytest

import headrace.dataset as ds
from headrace._util.errors import PipelineError


@pytest.mark.parametrize("text, line", [('a,b\n"unterminated,4\n', 2), ('1,2\n3,"x\n', 2), ('1,2\n"3",4\n"5,6\n', 3)])
def test_after_a_record(tmp_path, text, line):
    path = str(tmp_path / "q.csv")
    with open(path, "w") as f:
        f.write(text)
    d = ds.CSVDataset(path, column_defaults=["", ""], column_names=["a", "b"], shuffle=False)
    with pytest.raises(PipelineError) as info:
        list(d.create_tuple_iterator(output_numpy=True))
    assert (f"Invalid file, failed to parse csv file: {path} at line {line}. Error message: Invalid csv file, reach "
            f"the end of file in quote field, check {path}. Invalid csv file, line {line} of {path}: a quoted field "
            "is never closed.") in str(info.value)


def test_in_the_first_record(tmp_path):
    path = str(tmp_path / "q.csv")
    with open(path, "w") as f:
        f.write('\na,"b\n')  # an empty line before it is no record
    d = ds.CSVDataset(path, column_defaults=["", ""], column_names=["a", "b"], shuffle=False)
    with pytest.raises(PipelineError) as info:
        list(d.create_tuple_iterator(output_numpy=True))
    assert ("Invalid data, CSVDataset API can't read the data file (interface mismatch or no data found). Check csv "
            f"file path:  {path}. Invalid csv file, line 2 of {path}: a quoted field is never closed.") in str(info.value)
