"""MindRecord converters and ``headrace convert``."""
import gzip
import os
import pickle
import struct

import cv2
import numpy as np
import pytest

from headrace.cli.convert import main as convert_main
from headrace.mindrecord import (
    SUCCESS, Cifar100ToMR, Cifar10ToMR, CsvToMR, FileReader, FixedLenFeature, ImageNetToMR, MnistToMR, TFRecordToMR,
)
from headrace.mindrecord.common.exceptions import ParamValueError
from headrace.mindrecord.converters import PathNotExistsError
from headrace.mindrecord.converters.tables import infer_column

from .makers import png_bytes, write_tfrecord


def read_all(path):
    r = FileReader(path)
    try:
        return r.schema(), list(r.get_next())
    finally:
        r.close()


def jpeg(img_bgr):
    return cv2.imencode(".jpeg", np.ascontiguousarray(img_bgr))[1].tobytes()


def make_cifar_py(root, kind="cifar10", n_train=(3, 2), n_test=2, seed=0):
    """CIFAR python batches; returns {split: (images HWC, labels...)}."""
    rng = np.random.default_rng(seed)
    os.makedirs(root, exist_ok=True)
    out = {}

    def batch(n):   # smooth images (gradients), so that JPEG keeps them recognisable
        ramp = np.add.outer(np.arange(32), np.arange(32)) * 3
        chw = (ramp[None, None] + rng.integers(0, 60, (n, 3, 1, 1))).astype(np.uint8)
        return chw.reshape(n, 3072), chw.transpose(0, 2, 3, 1)
    if kind == "cifar10":
        imgs, labs = [], []
        for k, n in enumerate(n_train, 1):
            data, hwc = batch(n)
            labels = rng.integers(0, 10, n).tolist()
            with open(os.path.join(root, f"data_batch_{k}"), "wb") as f:
                pickle.dump({b"data": data, b"labels": labels}, f)
            imgs.append(hwc)
            labs += labels
        out["train"] = (np.concatenate(imgs), labs)
        data, hwc = batch(n_test)
        labels = rng.integers(0, 10, n_test).tolist()
        with open(os.path.join(root, "test_batch"), "wb") as f:
            pickle.dump({b"data": data, b"labels": labels}, f)
        out["test"] = (hwc, labels)
    else:
        for split, n in (("train", sum(n_train)), ("test", n_test)):
            data, hwc = batch(n)
            fine, coarse = rng.integers(0, 100, n).tolist(), rng.integers(0, 20, n).tolist()
            with open(os.path.join(root, split), "wb") as f:
                pickle.dump({b"data": data, b"fine_labels": fine, b"coarse_labels": coarse}, f)
            out[split] = (hwc, fine, coarse)
    return out


def test_cifar10_to_mr(tmp_path):
    want = make_cifar_py(tmp_path / "src")
    dest = str(tmp_path / "c10.mindrecord")
    assert Cifar10ToMR(str(tmp_path / "src"), dest).run(["label"]) is SUCCESS
    for path, (imgs, labels) in ((dest, want["train"]), (dest + "_test", want["test"])):
        schema, rows = read_all(path)
        assert schema == {"id": {"type": "int64"}, "label": {"type": "int64"}, "data": {"type": "bytes"}}
        assert [r["id"] for r in rows] == list(range(len(labels)))
        assert [r["label"] for r in rows] == labels
        assert [r["data"] for r in rows] == [jpeg(img[..., ::-1]) for img in imgs]
        decoded = cv2.imdecode(np.frombuffer(rows[0]["data"], np.uint8), cv2.IMREAD_COLOR)[..., ::-1]
        assert np.abs(decoded.astype(int) - imgs[0]).mean() < 3   # lossy, but the same image
    with pytest.raises(ValueError, match="The parameter fields should be None or list"):
        Cifar10ToMR(str(tmp_path / "src"), str(tmp_path / "other.mindrecord")).transform("label")


def test_cifar100_to_mr(tmp_path):
    want = make_cifar_py(tmp_path / "src", kind="cifar100")
    dest = str(tmp_path / "c100.mindrecord")
    Cifar100ToMR(str(tmp_path / "src"), dest).transform()
    schema, rows = read_all(dest + "_test")
    assert schema == {"id": {"type": "int64"}, "fine_label": {"type": "int64"}, "coarse_label": {"type": "int64"},
                      "data": {"type": "bytes"}}
    imgs, fine, coarse = want["test"]
    assert [(r["fine_label"], r["coarse_label"]) for r in rows] == list(zip(fine, coarse))
    assert [r["data"] for r in rows] == [jpeg(img[..., ::-1]) for img in imgs]
    assert len(read_all(dest)[1]) == 5


def test_cifar_missing_files_and_bad_pickles(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(PathNotExistsError, match=r"Invalid path. data_batch_\*"):
        Cifar10ToMR(str(tmp_path / "empty"), str(tmp_path / "x.mindrecord"))
    with pytest.raises(PathNotExistsError, match="Invalid path. train"):
        Cifar100ToMR(str(tmp_path / "empty"), str(tmp_path / "x.mindrecord"))
    with pytest.raises(ParamValueError, match="File path is not allowed None or empty!"):
        Cifar10ToMR("", str(tmp_path / "x.mindrecord"))
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "data_batch_1").write_bytes(pickle.dumps(os.getcwd))   # a global that is not NumPy
    (evil / "test_batch").write_bytes(pickle.dumps({}))
    with pytest.raises(pickle.UnpicklingError, match="is forbidden"):
        Cifar10ToMR(str(evil), str(tmp_path / "e.mindrecord")).transform()


def _mnist_files(root, gz=True):
    rng = np.random.default_rng(1)
    out = {}
    for prefix, n in (("train", 5), ("t10k", 3)):
        imgs = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, n, dtype=np.uint8)
        opener, ext = (gzip.open, ".gz") if gz else (open, "")
        with opener(os.path.join(root, f"{prefix}-images-idx3-ubyte{ext}"), "wb") as f:
            f.write(struct.pack(">IIII", 2051, n, 28, 28) + imgs.tobytes())
        with opener(os.path.join(root, f"{prefix}-labels-idx1-ubyte{ext}"), "wb") as f:
            f.write(struct.pack(">II", 2049, n) + labels.tobytes())
        out[prefix] = (imgs, labels)
    return out


@pytest.mark.parametrize("gz", [True, False])
def test_mnist_to_mr(tmp_path, gz):
    src = tmp_path / "src"
    src.mkdir()
    want = _mnist_files(src, gz)
    MnistToMR(str(src), str(tmp_path / "mnist"), 2).transform()
    assert sorted(os.listdir(tmp_path)) == ["mnist_test.mindrecord0", "mnist_test.mindrecord0.db",
                                             "mnist_test.mindrecord1", "mnist_test.mindrecord1.db",
                                             "mnist_train.mindrecord0", "mnist_train.mindrecord0.db",
                                             "mnist_train.mindrecord1", "mnist_train.mindrecord1.db", "src"]
    schema, rows = read_all(str(tmp_path / "mnist_test.mindrecord0"))
    assert schema == {"label": {"type": "int64"}, "data": {"type": "bytes"}}
    imgs, labels = want["t10k"]
    assert sorted(r["label"] for r in rows) == sorted(labels.tolist())
    assert sorted(r["data"] for r in rows) == sorted(jpeg(img[..., None]) for img in imgs)


def test_mnist_missing_file(tmp_path):
    with pytest.raises(PathNotExistsError, match=r"train-images-idx3-ubyte\.gz"):
        MnistToMR(str(tmp_path), str(tmp_path / "m"))
    with pytest.raises(ValueError, match="The parameter partition_number must be int"):
        _mnist_files(tmp_path)
        MnistToMR(str(tmp_path), str(tmp_path / "m"), "2")


def test_imagenet_to_mr(tmp_path):
    root = tmp_path / "train"
    for folder, names in (("n02", ["b.JPEG", "a.JPEG", "skip.png", "empty.jpg"]), ("n01", ["z.jpg"])):
        (root / folder).mkdir(parents=True)
        for k, name in enumerate(names):
            (root / folder / name).write_bytes(b"" if name == "empty.jpg" else png_bytes(k))
    (tmp_path / "map.txt").write_text("n02 1\nn01 0\nn99 5\n")
    dest = str(tmp_path / "inet.mindrecord")
    ImageNetToMR(str(tmp_path / "map.txt"), str(root), dest).transform()
    schema, rows = read_all(dest)
    assert schema == {"label": {"type": "int32"}, "image": {"type": "bytes"}, "file_name": {"type": "string"}}
    assert [(os.path.relpath(r["file_name"], root), r["label"]) for r in rows] == \
        [("n02/a.JPEG", 1), ("n02/b.JPEG", 1), ("n01/z.jpg", 0)]
    assert rows[0]["image"] == png_bytes(1)
    (tmp_path / "bad_map.txt").write_text("n77 1\n")
    with pytest.raises(PathNotExistsError, match="not valid image dir in"):
        ImageNetToMR(str(tmp_path / "bad_map.txt"), str(root), str(tmp_path / "o.mindrecord")).transform()


@pytest.mark.parametrize("values, mr_type, converted", [
    (["1", "-2", " 3"], "int64", [1, -2, 3]),
    (["1", "", "3"], "float64", [1.0, None, 3.0]),
    (["1.5", "2", "NA"], "float64", [1.5, 2.0, None]),
    (["True", "False", "true"], "int32", [1, 0, 1]),
    (["a", "", "1"], "string", ["a", "", "1"]),
    (["True", "1"], "string", ["True", "1"]),
])
def test_csv_type_inference(values, mr_type, converted):
    got_type, got = infer_column(values)
    assert got_type == mr_type
    assert [None if isinstance(v, float) and np.isnan(v) else v for v in got] == converted


def test_csv_to_mr(tmp_path):
    src = tmp_path / "d.csv"
    src.write_text('id,score,name,flag\n1,0.5,"Smith, J",True\n2,,Lee,False\n')
    dest = str(tmp_path / "d.mindrecord")
    CsvToMR(str(src), dest).transform()
    schema, rows = read_all(dest)
    assert schema == {"id": {"type": "int64"}, "score": {"type": "float64"}, "name": {"type": "string"},
                      "flag": {"type": "int32"}}
    assert rows[0] == {"id": 1, "score": 0.5, "name": "Smith, J", "flag": 1}
    assert rows[1]["id"] == 2 and np.isnan(rows[1]["score"]) and rows[1]["flag"] == 0
    CsvToMR(str(src), str(tmp_path / "e.mindrecord"), ["name", "id"]).transform()
    assert read_all(str(tmp_path / "e.mindrecord"))[1] == [{"name": "Smith, J", "id": 1}, {"name": "Lee", "id": 2}]
    with pytest.raises(RuntimeError, match="The parameter columns_list is illegal, column nope does not exist."):
        CsvToMR(str(src), str(tmp_path / "f.mindrecord"), ["nope"]).transform()
    with pytest.raises(ValueError, match="The parameter columns_list must be list of str."):
        CsvToMR(str(src), str(tmp_path / "g.mindrecord"), "name")
    with pytest.raises(ValueError, match="The parameter source must be str."):
        CsvToMR(5, str(tmp_path / "g.mindrecord"))
    digits = tmp_path / "n.csv"
    digits.write_text("1,b\n2,3\n")
    with pytest.raises(ValueError, match="The first line content: 1 of the CSV file is used as a column name"):
        CsvToMR(str(digits), str(tmp_path / "h.mindrecord")).transform()
    with pytest.raises(IOError, match="do not exist"):
        CsvToMR(str(tmp_path / "none.csv"), str(tmp_path / "i.mindrecord")).transform()


@pytest.fixture
def tfrecord(tmp_path):
    path = str(tmp_path / "t.tfrecord")
    write_tfrecord(path, [{"image/encoded": ("bytes", [b"\x89PNG%d" % i]), "name": ("bytes", [b"n%d" % i]),
                           "label": ("int64", [i]), "score": ("float", [i / 2]), "box": ("float", [i, 1, 2, 3]),
                           "ids": ("int64", [i, -i])} for i in range(3)])
    return path


def test_tfrecord_to_mr(tmp_path, tfrecord):
    features = {"image/encoded": FixedLenFeature([], "string"), "name": FixedLenFeature([], "string"),
                "label": FixedLenFeature([], "int64"), "score": FixedLenFeature([], np.float32),
                "box": FixedLenFeature([4], "float32"), "ids": FixedLenFeature([2], "int8")}
    conv = TFRecordToMR(tfrecord, str(tmp_path / "t.mindrecord"), features, ["image/encoded"])
    assert conv.mindrecord_schema == {"image_encoded": {"type": "bytes"}, "name": {"type": "string"},
                                      "label": {"type": "int64"}, "score": {"type": "float32"},
                                      "box": {"type": "float32", "shape": [4]}, "ids": {"type": "int32", "shape": [2]}}
    conv.transform()
    schema, rows = read_all(str(tmp_path / "t.mindrecord"))
    assert schema == conv.mindrecord_schema
    assert rows[1]["image_encoded"] == b"\x89PNG1" and rows[1]["name"] == "n1" and rows[1]["label"] == 1
    assert rows[1]["score"] == 0.5 and rows[1]["box"].tolist() == [1.0, 1.0, 2.0, 3.0]
    assert rows[2]["ids"].dtype == np.int32 and rows[2]["ids"].tolist() == [2, -2]


@pytest.mark.parametrize("features, bytes_fields, msg", [
    ({"label": FixedLenFeature([3], "int64")}, None, "has 1 value\\(s\\), but feature_dict says shape \\[3\\]"),
    ({"nope": FixedLenFeature([], "int64")}, None, "has no feature 'nope'"),
    ({"label": FixedLenFeature([], "string")}, None, "holds numbers, but feature_dict says string"),
])
def test_tfrecord_to_mr_record_errors(tmp_path, tfrecord, features, bytes_fields, msg):
    with pytest.raises(ValueError, match=msg):
        TFRecordToMR(tfrecord, str(tmp_path / "x.mindrecord"), features, bytes_fields).transform()


@pytest.mark.parametrize("features, bytes_fields, msg", [
    ({"name": FixedLenFeature([2], "string")}, None, "is tf.string which shape\\[0\\] is not None"),
    ({"label": FixedLenFeature([], "int64")}, ["label"], "should be tf.string in feature_dict"),
    ({"label": FixedLenFeature([], "int64")}, ["other"], "is not in feature_dict"),
    ({"label": FixedLenFeature([], "complex64")}, None, "not supported in MindRecord"),
    ({"label": FixedLenFeature([0], "int64")}, None, "shape\\[0\\] should > 0"),
    ({"label": 5}, None, "only support FixedLenFeature"),
    (None, None, "Parameter feature_dict is None or not dict."),
])
def test_tfrecord_to_mr_argument_checks(tmp_path, tfrecord, features, bytes_fields, msg):
    with pytest.raises(ValueError, match=msg):
        TFRecordToMR(tfrecord, str(tmp_path / "x.mindrecord"), features, bytes_fields)


def test_tfrecord_to_mr_damaged_file(tmp_path, tfrecord):
    data = bytearray(open(tfrecord, "rb").read())
    data[20] ^= 0xFF
    open(tfrecord, "wb").write(bytes(data))
    with pytest.raises(RuntimeError, match=r"record 0: the CRC of the record's data"):
        TFRecordToMR(tfrecord, str(tmp_path / "x.mindrecord"), {"label": FixedLenFeature([], "int64")}).transform()


def test_cli(tmp_path, tfrecord, capsys):
    make_cifar_py(tmp_path / "c10")
    assert convert_main(["cifar10", str(tmp_path / "c10"), str(tmp_path / "out.mindrecord"), "--fields", "label"]) == 0
    assert len(read_all(str(tmp_path / "out.mindrecord_test"))[1]) == 2
    assert convert_main(["tfrecord", tfrecord, str(tmp_path / "t.mindrecord"), "--feature", "label:int64",
                         "--feature", "box:float32:4", "--feature", "image/encoded:string",
                         "--bytes-field", "image/encoded"]) == 0
    assert read_all(str(tmp_path / "t.mindrecord"))[0] == {"label": {"type": "int64"},
                                                          "box": {"type": "float32", "shape": [4]},
                                                          "image_encoded": {"type": "bytes"}}
    assert convert_main(["csv", str(tmp_path / "missing.csv"), str(tmp_path / "c.mindrecord")]) == 1
    assert "Csv file" in capsys.readouterr().err
    assert convert_main(["tfrecord", tfrecord, str(tmp_path / "u.mindrecord"), "--feature", "label"]) == 1
    assert convert_main(["nope"]) == 2
    assert convert_main([]) == 2
