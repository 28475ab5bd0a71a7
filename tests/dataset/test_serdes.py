"""ds.serialize / deserialize / show / compare and Dataset.to_json: MindSpore's JSON layout, round
trips that give the same rows, named Python functions, and clear errors."""
import json

import numpy as np
import pytest

import headrace.dataset as ds
import headrace.dataset.transforms as T
import headrace.dataset.vision as vision
from headrace.dataset.vision import Inter
from tests.sources.makers import make_image_folder, write_tfrecord


def double(x):
    return x * 2


def rows(d):
    return [[np.asarray(v) for v in r] for r in d.create_tuple_iterator(output_numpy=True, num_epochs=1)]


def same_rows(a, b):
    ra, rb = rows(a), rows(b)
    return len(ra) == len(rb) and all(np.array_equal(x, y) for r, s in zip(ra, rb) for x, y in zip(r, s))


@pytest.fixture
def files(tmp_path):
    make_image_folder(tmp_path / "img", {"a": ["1.png", "2.png"], "b": ["3.png"]})
    tf = str(tmp_path / "v.tfrecord")
    write_tfrecord(tf, [{"v": ("int64", [i])} for i in range(6)])
    return str(tmp_path / "img"), tf


def test_layout_and_round_trip(files, tmp_path):
    img, tf = files
    sampler = ds.WeightedRandomSampler([1.0, 0.5, 0.2], 2)
    sampler.add_child(ds.SequentialSampler())
    d = ds.ImageFolderDataset(img, sampler=sampler, decode=True).map(
        [vision.Resize((4, 4), Inter.LINEAR), vision.Rescale(1 / 255, 0)], input_columns=["image"])
    d = d.map(T.OneHot(3), input_columns="label").map(double, input_columns="label", output_columns="l2")
    d = d.zip(ds.TFRecordDataset(tf, num_samples=4, shuffle=False).batch(2)).repeat(2).take(3)
    path = tmp_path / "p.json"
    tree = d.to_json(str(path))
    assert json.loads(path.read_text()) == tree
    assert tree["op_type"] == "Take" and tree["count"] == 3
    assert tree["children"][0]["op_type"] == "Repeat" and tree["children"][0]["count"] == 2
    zip_node = tree["children"][0]["children"][0]
    assert zip_node["op_type"] == "Zip" and [c["op_type"] for c in zip_node["children"]] == ["Map", "Batch"]
    named = zip_node["children"][0]
    assert named["operations"] == [{"python_module": __name__, "tensor_op_name": "double"}]
    assert named["input_columns"] == ["label"] and named["output_columns"] == ["l2"]
    resize_map = named["children"][0]["children"][0]
    assert resize_map["operations"][0] == {"tensor_op_name": "Resize",
                                           "tensor_op_params": {"size": [4, 4], "interpolation": 0}}
    source = resize_map["children"][0]
    assert source["op_type"] == "ImageFolderDataset" and source["dataset_dir"] == img and source["decode"] is True
    assert source["sampler"] == {"sampler_name": "WeightedRandomSampler", "weights": [1.0, 0.5, 0.2],
                                 "num_samples": 2, "replacement": True,
                                 "child_sampler": [{"sampler_name": "SequentialSampler", "start_index": None,
                                                    "num_samples": 0}]}
    tf_node = zip_node["children"][1]["children"][0]
    assert tf_node["op_type"] == "TFRecordDataset" and tf_node["num_samples"] == 4 and tf_node["shuffle"] is False
    for again in (ds.deserialize(json_filepath=str(path)), ds.deserialize(input_dict=tree),
                  ds.deserialize(input_dict=str(path))):
        assert ds.compare(d, again)
        ds.config.set_seed(4)
        first = rows(d)
        ds.config.set_seed(4)
        assert len(first) == 3 and all(np.array_equal(x, y) for r, s in zip(first, rows(again)) for x, y in zip(r, s))


def test_show_prints_the_json(capsys):
    d = ds.NumpySlicesDataset([1, 2], shuffle=False).shuffle(4)
    ds.show(d, indentation=None)
    printed = json.loads(capsys.readouterr().out)
    assert printed == ds.serialize(d) and printed["op_type"] == "Shuffle" and printed["buffer_size"] == 4
    assert printed["children"][0]["op_type"] == "NumpySlicesDataset"


def test_python_data_sources_are_written_but_not_rebuilt():
    tree = ds.serialize(ds.GeneratorDataset(lambda: iter([(1,)]), ["x"]).batch(1))
    assert tree["children"][0] == {"op_type": "GeneratorDataset", "children": [], "num_parallel_workers": 1,
                                   "connector_queue_size": 16}
    with pytest.raises(ValueError, match="GeneratorDataset, whose Python data is not in the JSON"):
        ds.deserialize(input_dict=tree)


def test_lambdas_are_written_but_not_rebuilt(files):
    d = ds.ImageFolderDataset(files[0], shuffle=False).map(lambda x: x, input_columns="label")
    tree = ds.serialize(d)
    assert tree["operations"][0]["tensor_op_name"] == "test_lambdas_are_written_but_not_rebuilt.<locals>.<lambda>"
    with pytest.raises(ValueError, match="cannot be imported \\(a lambda or a local function\\)"):
        ds.deserialize(input_dict=tree)


def test_errors():
    d = ds.NumpySlicesDataset([1, 2], shuffle=False)
    with pytest.raises(TypeError, match="dataset"):
        ds.serialize([1])
    with pytest.raises(ValueError, match="FilterDataset cannot be written as JSON"):
        ds.serialize(d.filter(lambda x: True))
    with pytest.raises(ValueError, match="exactly one of input_dict and json_filepath"):
        ds.deserialize()
    with pytest.raises(ValueError, match="exactly one of input_dict and json_filepath"):
        ds.deserialize(input_dict={}, json_filepath="x.json")
    with pytest.raises(ValueError, match="does not exist"):
        ds.deserialize(json_filepath="/nonexistent/p.json")
    with pytest.raises(ValueError, match="op_type 'NoSuchDataset', which headrace does not know"):
        ds.deserialize(input_dict={"op_type": "NoSuchDataset", "children": []})
    with pytest.raises(ValueError, match="not a pipeline node"):
        ds.deserialize(input_dict={"children": []})
    with pytest.raises(ValueError, match="indentation must be None or >= 0"):
        ds.show(d, indentation=-1)
    assert ds.compare(d.repeat(2), d.repeat(2)) and not ds.compare(d.repeat(2), d.repeat(3))
