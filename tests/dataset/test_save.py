import numpy as np
import pytest

import headrace.dataset as ds
from headrace.mindrecord import FileReader


def data():
    return ds.NumpySlicesDataset({"a": np.arange(5, dtype=np.int32), "f": np.arange(5, dtype=np.float32),
                                  "v": np.ones((5, 2, 3), np.uint8), "s": ["x", "y", "z", "u", "w"]}, shuffle=False)


def test_save_round_trip_with_mindspore_type_mapping(tmp_path):
    path = str(tmp_path / "out.mindrecord")
    data().map(lambda a: a * 10, input_columns="a").save(path)
    r = FileReader(path)
    assert r.schema() == {"a": {"type": "int32"}, "f": {"type": "float32"}, "s": {"type": "string"},
                          "v": {"type": "int32", "shape": [-1, 3]}}
    rows = list(r.get_next())
    r.close()
    assert [row["a"] for row in rows] == [0, 10, 20, 30, 40]
    assert rows[1]["v"].dtype == np.int32 and rows[1]["v"].shape == (2, 3)
    back = list(ds.MindDataset(path, shuffle=False).create_dict_iterator(output_numpy=True))
    assert [str(b["s"]) for b in back] == ["x", "y", "z", "u", "w"]


def test_save_shards(tmp_path):
    path = str(tmp_path / "o.mindrecord")
    data().save(path, num_files=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.mindrecord0", "o.mindrecord0.db", "o.mindrecord1",
                                                          "o.mindrecord1.db"]
    assert ds.MindDataset([str(tmp_path / "o.mindrecord0"), str(tmp_path / "o.mindrecord1")]).get_dataset_size() == 5


@pytest.mark.parametrize("kwargs, exc, text", [
    (dict(file_name=5), TypeError, "Argument file_name with value 5 is not of type"),
    (dict(file_name="x", num_files=0), ValueError, "num_files should between 0 and 1000."),
    (dict(file_name="x", num_files=1001), ValueError, "num_files should between 0 and 1000."),
    (dict(file_name="x", file_type="tfrecord"), ValueError, "tfrecord dataset format is not supported."),
])
def test_save_argument_errors(kwargs, exc, text):
    with pytest.raises(exc, match=text):
        data().save(**kwargs)


def test_save_refuses_existing_files(tmp_path):
    path = str(tmp_path / "out.mindrecord")
    data().save(path)
    with pytest.raises(RuntimeError, match="exist"):
        data().save(path)
