"""JSON pipelines written by MindSpore 2.10 (ds.serialize) rebuilt by headrace's ds.deserialize:
same columns, sizes and rows as MindSpore's own pipeline."""
import json

import numpy as np
import pytest

import headrace.dataset as ds
from tests.sources.makers import make_image_folder, write_tfrecord

from tests.oracles.oracle import run_ms

PIPELINE = """
import mindspore.dataset.transforms as T
import mindspore.dataset.vision as vision
img, tf, out = INPUTS
sampler = ds.SubsetSampler([2, 0, 1])
d = ds.ImageFolderDataset(img, sampler=sampler, decode=True).map(
    [vision.Rescale(0.5, 1.0), T.TypeCast(np.float32)], input_columns=["image"])
d = d.map(T.OneHot(3), input_columns="label").project(["label", "image"])
d = d.zip(ds.TFRecordDataset(tf, num_samples=4, shuffle=False).batch(1)).repeat(2).take(5)
ds.serialize(d, out)
RESULT = [d.get_col_names(), d.get_dataset_size(),
          [[np.asarray(v) for v in r] for r in d.create_tuple_iterator(output_numpy=True, num_epochs=1)]]
"""


@pytest.mark.compat
def test_pipeline_written_by_mindspore_is_rebuilt(tmp_path):
    make_image_folder(tmp_path / "img", {"a": ["1.png", "2.png"], "b": ["3.png"]})
    tf = str(tmp_path / "v.tfrecord")
    write_tfrecord(tf, [{"v": ("int64", [i])} for i in range(6)])
    out = str(tmp_path / "ms.json")
    cols, size, theirs = run_ms(PIPELINE, inputs=[str(tmp_path / "img"), tf, out])
    tree = json.loads(open(out).read())
    assert tree["op_type"] == "Take"  # MindSpore's layout, read as is
    d = ds.deserialize(json_filepath=out)
    assert d.get_col_names() == cols == ["label", "image", "v"]
    assert d.get_dataset_size() == size == 5
    ours = [[np.asarray(v) for v in r] for r in d.create_tuple_iterator(output_numpy=True, num_epochs=1)]
    assert len(ours) == len(theirs) == 5
    for r, s in zip(ours, theirs):
        for x, y in zip(r, s):
            assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y)
