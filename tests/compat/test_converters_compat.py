"""MindRecord converters against MindSpore 2.10.

ImageNetToMR runs on both sides over the same folder and the files must hold the same schema and
rows. MindSpore's other converters need OpenCV, pandas or TensorFlow, which its oracle environment
lacks, so for those MindSpore reads the files headrace's converters wrote and must see the same
schema and rows as headrace's own reader.
"""
import os

import numpy as np

from headrace.mindrecord import (
    Cifar100ToMR, Cifar10ToMR, CsvToMR, FileReader, FixedLenFeature, ImageNetToMR, MnistToMR, TFRecordToMR,
)
from tests.sources.makers import png_bytes, write_tfrecord
from tests.sources.test_converters import _mnist_files, make_cifar_py

from tests.oracles.oracle import run_ms

_READ = """
from mindspore.mindrecord import FileReader, ImageNetToMR
def read(path):
    r = FileReader(path)
    rows = [{k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in row.items()} for row in r.get_next()]
    schema = r.schema()
    r.close()
    return schema, rows
map_file, image_dir, ms_dest, ours = INPUTS
ImageNetToMR(map_file, image_dir, ms_dest).transform()
RESULT = [read(ms_dest)] + [read(p) for p in ours]
"""


def ours(path):
    r = FileReader(path)
    try:
        rows = [{k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in row.items()} for row in r.get_next()]
        return r.schema(), rows
    finally:
        r.close()


def test_converters_match_mindspore(tmp_path):
    # ImageNet-style folders, converted by both
    root = tmp_path / "train"
    for folder, names in (("n02", ["b.JPEG", "a.JPEG", "skip.png"]), ("n01", ["z.jpg", "y.jpg"])):
        (root / folder).mkdir(parents=True)
        for k, name in enumerate(names):
            (root / folder / name).write_bytes(png_bytes(k))
    (tmp_path / "map.txt").write_text("n02 1\nn01 0\n")
    inet = str(tmp_path / "inet.mindrecord")
    ImageNetToMR(str(tmp_path / "map.txt"), str(root), inet).transform()
    # the others, converted by headrace only
    make_cifar_py(tmp_path / "c10")
    Cifar10ToMR(str(tmp_path / "c10"), str(tmp_path / "c10.mindrecord")).transform(["label"])
    make_cifar_py(tmp_path / "c100", kind="cifar100")
    Cifar100ToMR(str(tmp_path / "c100"), str(tmp_path / "c100.mindrecord")).transform()
    (tmp_path / "mn").mkdir()
    _mnist_files(tmp_path / "mn")
    MnistToMR(str(tmp_path / "mn"), str(tmp_path / "mnist"), 2).transform()
    (tmp_path / "d.csv").write_text('id,score,name,flag\n1,0.5,"Smith, J",True\n2,1.25,Lee,False\n')
    CsvToMR(str(tmp_path / "d.csv"), str(tmp_path / "csv.mindrecord")).transform()
    tf = str(tmp_path / "t.tfrecord")
    write_tfrecord(tf, [{"img": ("bytes", [b"\x89PNG%d" % i]), "label": ("int64", [i]),
                         "box": ("float", [i, 1.5, 2, 3])} for i in range(3)])
    TFRecordToMR(tf, str(tmp_path / "tf.mindrecord"), {"img": FixedLenFeature([], "string"),
                                                      "label": FixedLenFeature([], "int32"),
                                                      "box": FixedLenFeature([4], "float32")}, ["img"]).transform()
    mine = [inet, str(tmp_path / "c10.mindrecord"), str(tmp_path / "c10.mindrecord_test"),
            str(tmp_path / "c100.mindrecord"), str(tmp_path / "mnist_train.mindrecord0"),
            str(tmp_path / "csv.mindrecord"), str(tmp_path / "tf.mindrecord")]
    ms_dest = str(tmp_path / "ms_inet.mindrecord")
    theirs = run_ms(_READ, [str(tmp_path / "map.txt"), str(root), ms_dest, mine])
    ms_inet, read_back = theirs[0], theirs[1:]
    # MindSpore lists class folders in directory order; headrace sorts them: compare as sets of rows
    key = lambda row: row["file_name"]  # noqa: E731
    assert ms_inet[0] == ours(inet)[0]
    assert sorted(ms_inet[1], key=key) == sorted(ours(inet)[1], key=key)
    for path, (schema, rows) in zip(mine, read_back):
        assert (schema, rows) == ours(path), os.path.basename(path)
