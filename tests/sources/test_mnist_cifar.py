"""MnistDataset, FashionMnistDataset, Cifar10Dataset, Cifar100Dataset."""
import os
import struct

import numpy as np
import pytest

import headrace.dataset as ds
from tests.helpers import assert_resume_equivalence, rows

from .makers import make_cifar, make_mnist, make_mnist_part


@pytest.fixture
def mnist(tmp_path):
    train = make_mnist(tmp_path, "train", 5, 0)
    test = make_mnist(tmp_path, "t10k", 3, 1)
    return str(tmp_path), train, test


@pytest.mark.parametrize("cls", [ds.MnistDataset, ds.FashionMnistDataset])
@pytest.mark.parametrize("usage, parts", [(None, ("test", "train")), ("all", ("test", "train")),
                                          ("train", ("train",)), ("test", ("test",))])
def test_mnist_rows(mnist, cls, usage, parts):
    root, train, test = mnist
    src = {"train": train, "test": test}
    d = cls(root, usage=usage, shuffle=False)
    assert d.get_col_names() == ["image", "label"]
    want_img = np.concatenate([src[p][0] for p in parts])[..., None]
    want_lab = np.concatenate([src[p][1] for p in parts]).astype(np.uint32)
    assert d.get_dataset_size() == len(want_lab)
    got = list(d.create_tuple_iterator(output_numpy=True))
    assert [r[1].dtype for r in got] == [np.dtype(np.uint32)] * len(got)
    assert all(r[1].shape == () and r[0].shape == (28, 28, 1) and r[0].dtype == np.uint8 for r in got)
    np.testing.assert_array_equal(np.stack([r[0] for r in got]), want_img)
    np.testing.assert_array_equal(np.array([r[1] for r in got]), want_lab)


def test_mnist_damaged_files(tmp_path):
    make_mnist(tmp_path, "t10k", 3, 1)
    lab = tmp_path / "t10k-labels-idx1-ubyte"
    lab.write_bytes(struct.pack(">II", 2049, 4) + b"\x01\x02\x03")
    with pytest.raises(RuntimeError, match=f"Invalid mnist file, the data length of labels in {lab} should be 3, "
                                           "but got 4."):
        rows(ds.MnistDataset(str(tmp_path), usage="test"))
    lab.write_bytes(struct.pack(">II", 2041, 3) + b"\x01\x02\x03")
    with pytest.raises(RuntimeError, match=f"the number of labels in {lab} should be 2049, but got 2041"):
        rows(ds.MnistDataset(str(tmp_path), usage="test"))
    lab.write_bytes(struct.pack(">II", 2049, 2) + b"\x01\x02")
    with pytest.raises(RuntimeError, match="num of images should be equal to num of labels, but got num of "
                                           "images: 3, num of labels: 2"):
        rows(ds.MnistDataset(str(tmp_path), usage="test"))
    img = tmp_path / "t10k-images-idx3-ubyte"
    img.write_bytes(struct.pack(">IIII", 2051, 3, 28, 28) + bytes(100))
    with pytest.raises(RuntimeError, match=f"the data length of images in {img}"):
        rows(ds.MnistDataset(str(tmp_path), usage="test"))
    os.remove(lab)
    with pytest.raises(RuntimeError, match=f"num of images: 1, num of labels: 0: the label file {lab} of the image "
                                           f"file {img} does not exist"):
        ds.MnistDataset(str(tmp_path), usage="test").get_dataset_size()


@pytest.mark.parametrize("files, usage, counts", [
    (["t10k-labels"], "all", (0, 1)), (["t10k-labels"], "test", (0, 1)), (["train-images"], "all", (1, 0)),
    (["t10k-images", "t10k-labels", "train-labels"], "all", (1, 2)),
    (["t10k-images", "t10k-labels", "train-labels"], "train", (0, 1))])
def test_mnist_file_without_its_partner_is_an_error(tmp_path, files, usage, counts):
    # a labels file without its images file (or the reverse) is refused when the dataset is
    # sized, naming the missing file, as MindSpore refuses it; never a dataset without those rows
    make_mnist_part(tmp_path, files)
    d = ds.MnistDataset(str(tmp_path), usage=usage)
    absent = "image" if counts[0] < counts[1] else "label"
    with pytest.raises(RuntimeError, match=f"num of images: {counts[0]}, num of labels: {counts[1]}: the {absent} "
                                           f"file {tmp_path}/"):
        d.get_dataset_size()
    with pytest.raises(RuntimeError, match=f"num of images: {counts[0]}, num of labels: {counts[1]}"):
        rows(d)


def test_mnist_no_files_and_bad_args(tmp_path):
    d = ds.MnistDataset(str(tmp_path))
    assert d.get_dataset_size() == 0
    with pytest.raises(RuntimeError, match="MnistDataset API can't read the data file"):
        rows(d)
    with pytest.raises(ValueError, match=r"Input usage is not within the valid set of \['train', 'test', 'all'\]."):
        ds.MnistDataset(str(tmp_path), usage="bad")
    with pytest.raises(TypeError, match="usage"):
        ds.MnistDataset(str(tmp_path), usage=1)
    with pytest.raises(ValueError, match="does not exist or is not a directory"):
        ds.MnistDataset(str(tmp_path / "nope"))


def test_mnist_sharding_pk_and_resume(mnist):
    root, train, test = mnist
    labels = np.concatenate([test[1], train[1]]).tolist()
    d = ds.MnistDataset(root, shuffle=False, num_shards=3, shard_id=2)
    assert [r[1] for r in rows(d)] == [labels[2], labels[5], labels[0]]
    ds.config.set_seed(5)
    d = ds.MnistDataset(root, num_samples=5)
    assert d.get_dataset_size() == 5
    assert_resume_equivalence(d, num_epochs=2)
    pk = ds.MnistDataset(root, sampler=ds.PKSampler(1, shuffle=False))
    assert [r[1] for r in rows(pk)] == sorted(set(labels))


@pytest.fixture
def cifar10(tmp_path):
    files = {}
    for name, n, seed in [("data_batch_2.bin", 3, 2), ("data_batch_1.bin", 2, 1), ("test_batch.bin", 2, 9),
                          ("data_batch_10.bin", 1, 10), ("other.bin", 1, 7)]:
        files[name] = make_cifar(tmp_path / name, n, 1, seed)
    (tmp_path / "readme.html").write_text("x")
    return str(tmp_path), files


@pytest.mark.parametrize("usage, names", [
    (None, ["data_batch_1.bin", "data_batch_10.bin", "data_batch_2.bin", "test_batch.bin"]),
    ("train", ["data_batch_1.bin", "data_batch_10.bin", "data_batch_2.bin"]),
    ("test", ["test_batch.bin"]),
])
def test_cifar10_rows(cifar10, usage, names):
    root, files = cifar10
    d = ds.Cifar10Dataset(root, usage=usage, shuffle=False, num_parallel_workers=2)
    assert d.get_col_names() == ["image", "label"]
    got = list(d.create_tuple_iterator(output_numpy=True))
    want_img = np.concatenate([files[n][0] for n in names])
    want_lab = np.concatenate([files[n][1][:, 0] for n in names])
    assert d.get_dataset_size() == len(got) == len(want_lab)
    assert all(r[0].shape == (32, 32, 3) and r[0].dtype == np.uint8 and r[0].flags.c_contiguous for r in got)
    assert all(r[1].dtype == np.uint32 and r[1].shape == () for r in got)
    np.testing.assert_array_equal(np.stack([r[0] for r in got]), want_img)
    assert [int(r[1]) for r in got] == want_lab.tolist()


def test_cifar100_rows_and_pk(tmp_path):
    train = make_cifar(tmp_path / "train.bin", 4, 2, 1)
    test = make_cifar(tmp_path / "test.bin", 2, 2, 2)
    d = ds.Cifar100Dataset(str(tmp_path), shuffle=False)
    assert d.get_col_names() == ["image", "coarse_label", "fine_label"]
    got = rows(d)
    labels = np.concatenate([test[1], train[1]])
    assert [(r[1], r[2]) for r in got] == [tuple(x) for x in labels.tolist()]
    np.testing.assert_array_equal(np.array([r[0] for r in got], dtype=np.uint8), np.concatenate([test[0], train[0]]))
    pk = ds.Cifar100Dataset(str(tmp_path), sampler=ds.PKSampler(1, shuffle=False))
    assert sorted(r[2] for r in rows(pk)) == sorted(set(labels[:, 1].tolist()))


def test_cifar_damaged_and_empty(tmp_path):
    make_cifar(tmp_path / "test_batch.bin", 2, 1, 0)
    with open(tmp_path / "test_batch.bin", "ab") as f:
        f.write(b"xx")
    d = ds.Cifar10Dataset(str(tmp_path), usage="test")
    with pytest.raises(RuntimeError, match=r"Invalid cifar10 file, failed to read data from: .*test_batch\.bin, "
                                           r"re-download dataset\(make sure it is CIFAR-10 binary version\)"):
        d.get_dataset_size()
    d = ds.Cifar10Dataset(str(tmp_path), usage="train")
    assert d.get_dataset_size() == 0
    with pytest.raises(RuntimeError, match=f"Cifar10Dataset API can't read the data file .* {tmp_path}"):
        rows(d)


@pytest.mark.parametrize("label", [10, 99, 255])
def test_cifar10_label_out_of_range_names_file_and_record(tmp_path, label):
    _, labels = make_cifar(tmp_path / "data_batch_1.bin", 4, 1, 0)
    with open(tmp_path / "data_batch_1.bin", "r+b") as f:
        f.seek(2 * 3073)
        f.write(bytes([label]))
    path = tmp_path / "data_batch_1.bin"
    d = ds.Cifar10Dataset(str(tmp_path), shuffle=False)
    with pytest.raises(RuntimeError) as e:
        rows(d)
    assert e.value.index == 2 and e.value.file == str(path)
    assert (f"Invalid cifar10 file, record 2 of {path} has label {label}, outside [0, 9]: CIFAR-10 has 10 classes. "
            "headrace refuses it (MindSpore passes it on)") in str(e.value)
    assert [int(r[1]) for r in rows(ds.Cifar10Dataset(str(tmp_path), shuffle=False, num_samples=2))] == \
        labels[:2, 0].tolist()
    with pytest.raises(RuntimeError, match=r"record 2 of .* has label"):  # samplers reading all labels say it too
        rows(ds.Cifar10Dataset(str(tmp_path), sampler=ds.PKSampler(1)))


@pytest.mark.parametrize("k, value, name, bound", [(0, 20, "coarse_label", 19), (1, 100, "fine_label", 99)])
def test_cifar100_label_out_of_range(tmp_path, k, value, name, bound):
    make_cifar(tmp_path / "train.bin", 2, 2, 0)
    with open(tmp_path / "train.bin", "r+b") as f:
        f.seek(3074 + k)
        f.write(bytes([value]))
    with pytest.raises(RuntimeError, match=f"record 1 of .*train.bin has {name} {value}, outside \\[0, {bound}\\]"):
        rows(ds.Cifar100Dataset(str(tmp_path), shuffle=False))


def test_cifar_empty_batch_file_is_an_error(tmp_path):
    make_cifar(tmp_path / "data_batch_1.bin", 2, 1, 0)
    (tmp_path / "data_batch_2.bin").write_bytes(b"")
    d = ds.Cifar10Dataset(str(tmp_path), usage="train")
    with pytest.raises(RuntimeError) as e:
        d.get_dataset_size()
    assert (f"Invalid cifar10 file, {tmp_path / 'data_batch_2.bin'} is empty (0 bytes): it holds no record. "
            "Remove it or re-download the dataset.") in str(e.value)


def test_cifar_file_shrinks_after_indexing(tmp_path):
    make_cifar(tmp_path / "test_batch.bin", 3, 1, 0)
    d = ds.Cifar10Dataset(str(tmp_path), shuffle=False)
    assert d.get_dataset_size() == 3
    with open(tmp_path / "test_batch.bin", "r+b") as f:
        f.truncate(3073 * 2)
    with pytest.raises(RuntimeError, match="ended inside a record") as e:
        rows(d)
    assert e.value.index == 2 and e.value.file.endswith("test_batch.bin")


def test_cifar_resume_threads(cifar10):
    root, _ = cifar10
    ds.config.set_seed(2)
    assert_resume_equivalence(ds.Cifar10Dataset(root, num_parallel_workers=2), num_epochs=2, stride=2)
