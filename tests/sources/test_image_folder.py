"""ImageFolderDataset: listing, labels, decoding, errors, sampling."""
import os

import numpy as np
import pytest
from PIL import Image
import io

import headrace.dataset as ds
from tests.helpers import assert_resume_equivalence, rows

from .makers import make_image_folder, png_bytes


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "imgs"
    make_image_folder(root, {"dog": ["b.png", "a.png", "c.PNG"], "cat": ["x.png"], "Bird": ["1.jpg", "2.png"]},
                      encoded=False)
    (root / "empty_class").mkdir()
    (root / "top_level.png").write_bytes(b"ignored")
    return str(root)


def content(d):
    return [(bytes(bytearray(img)).decode(), lab) for img, lab in rows(d)]


def test_rows_classes_and_types(folder):
    d = ds.ImageFolderDataset(folder, shuffle=False)
    assert d.get_col_names() == ["image", "label"]
    assert d.get_dataset_size() == 6
    assert d.get_class_indexing() == {"Bird": 0, "cat": 1, "dog": 2, "empty_class": 3}
    assert d.num_classes() == 4
    it = d.create_tuple_iterator(output_numpy=True)
    img, label = next(it)
    it.stop()
    assert img.dtype == np.uint8 and img.ndim == 1
    assert label.dtype == np.int32 and label.shape == ()
    assert content(d) == [("Bird/1.jpg", 0), ("Bird/2.png", 0), ("cat/x.png", 1), ("dog/a.png", 2),
                          ("dog/b.png", 2), ("dog/c.PNG", 2)]


def test_extensions_are_case_sensitive(folder):
    d = ds.ImageFolderDataset(folder, shuffle=False, extensions=[".png"])
    assert content(d) == [("Bird/2.png", 0), ("cat/x.png", 1), ("dog/a.png", 2), ("dog/b.png", 2)]
    d = ds.ImageFolderDataset(folder, shuffle=False, extensions=[".PNG", ".jpg"])
    assert content(d) == [("Bird/1.jpg", 0), ("dog/c.PNG", 2)]


def test_class_indexing_selects_and_labels(folder):
    d = ds.ImageFolderDataset(folder, shuffle=False, class_indexing={"dog": 7, "Bird": 1})
    assert content(d) == [("Bird/1.jpg", 1), ("Bird/2.png", 1), ("dog/a.png", 7), ("dog/b.png", 7),
                          ("dog/c.PNG", 7)]
    assert d.get_class_indexing() == {"dog": 7, "Bird": 1}
    assert d.num_classes() == 2


def test_missing_class_folder(folder):
    d = ds.ImageFolderDataset(folder, class_indexing={"wolf": 0})
    with pytest.raises(RuntimeError, match="Invalid subdirectory, class: wolf doesn't exist in"):
        d.get_dataset_size()


def test_unknown_extension_and_empty_folder_say_so(folder, tmp_path):
    d = ds.ImageFolderDataset(folder, extensions=[".bmp"])
    assert d.get_dataset_size() == 0
    with pytest.raises(RuntimeError, match=r"ImageFolderDataset API can't read the data file \(interface mismatch "
                                           r"or no data found\)\. Check image folder file path: " + folder):
        rows(d)
    empty = tmp_path / "nothing"
    empty.mkdir()
    with pytest.raises(RuntimeError, match="no data found"):
        rows(ds.ImageFolderDataset(str(empty)))


def test_decode_png(tmp_path):
    make_image_folder(tmp_path, {"a": ["0.png", "1.png"]})
    d = ds.ImageFolderDataset(str(tmp_path), shuffle=False, decode=True)
    got = [img for img, _ in d.create_tuple_iterator(output_numpy=True)]
    want = [np.asarray(Image.open(io.BytesIO(png_bytes(j)))) for j in range(2)]
    assert len(got) == 2
    for g, w in zip(got, want):
        assert g.dtype == np.uint8 and g.shape == (4, 5, 3)
        np.testing.assert_array_equal(g, w)


def test_broken_image_names_the_file(tmp_path):
    make_image_folder(tmp_path, {"a": ["0.png"]})
    bad = tmp_path / "a" / "1.png"
    bad.write_bytes(b"not an image")
    d = ds.ImageFolderDataset(str(tmp_path), shuffle=False, decode=True)
    it = d.create_tuple_iterator(output_numpy=True)
    next(it)
    with pytest.raises(RuntimeError, match=f"Invalid image, {bad} decode failed") as e:
        next(it)
    assert e.value.file == str(bad) and e.value.index == 1
    it.stop()


def test_file_removed_after_listing(tmp_path):
    make_image_folder(tmp_path, {"a": ["0.png", "1.png"]})
    d = ds.ImageFolderDataset(str(tmp_path), shuffle=False)
    assert d.get_dataset_size() == 2
    os.remove(tmp_path / "a" / "1.png")
    with pytest.raises(RuntimeError, match=r"failed to open .*1\.png"):
        rows(d)


def test_decrypt_reads_through_the_callable(tmp_path):
    make_image_folder(tmp_path, {"a": ["0.png"]}, encoded=False)
    d = ds.ImageFolderDataset(str(tmp_path), decrypt=lambda p: open(p, "rb").read()[::-1])
    assert rows(d) == [[list(b"gnp.0/a"), 0]]


@pytest.mark.parametrize("kw, exc, msg", [
    (dict(extensions=".jpg"), TypeError, "extensions"),
    (dict(decode=1), TypeError, "decode"),
    (dict(decrypt=5), TypeError, "Argument decrypt is not a callable object"),
    (dict(class_indexing={"a": "x"}), TypeError, "class_indexing"),
    (dict(class_indexing=["a"]), TypeError, "class_indexing"),
    (dict(num_samples=-1), ValueError, "num_samples"),
    (dict(shuffle=True, sampler=ds.SequentialSampler()), RuntimeError,
     "sampler and shuffle cannot be specified at the same time."),
    (dict(num_shards=2), RuntimeError, "num_shards is specified and currently requires shard_id as well."),
    (dict(num_shards=2, shard_id=2), ValueError, "shard_id"),
])
def test_argument_checks(folder, kw, exc, msg):
    with pytest.raises(exc, match=msg):
        ds.ImageFolderDataset(folder, **kw)


def test_missing_dir():
    with pytest.raises(ValueError, match="The folder /no/such/dir does not exist or is not a directory or "
                                         "permission denied!"):
        ds.ImageFolderDataset("/no/such/dir")
    with pytest.raises(TypeError, match="dataset_dir"):
        ds.ImageFolderDataset(5)


def test_sampling_sharding_and_resume(folder):
    d = ds.ImageFolderDataset(folder, shuffle=False, num_shards=4, shard_id=1)
    assert [lab for _, lab in content(d)] == [0, 2]   # rows 1 and 5
    d = ds.ImageFolderDataset(folder, num_samples=3, shuffle=False)
    assert d.get_dataset_size() == 3
    ds.config.set_seed(3)
    a = content(ds.ImageFolderDataset(folder))
    ds.config.set_seed(3)
    b = content(ds.ImageFolderDataset(folder, num_parallel_workers=2))
    assert a == b and sorted(a) == sorted(content(ds.ImageFolderDataset(folder, shuffle=False)))
    assert a != content(ds.ImageFolderDataset(folder, shuffle=False))
    ds.config.set_seed(3)
    assert_resume_equivalence(ds.ImageFolderDataset(folder), num_epochs=2)


def test_pk_sampler_uses_labels(folder):
    d = ds.ImageFolderDataset(folder, sampler=ds.PKSampler(1))
    assert sorted(lab for _, lab in content(d)) == [0, 1, 2]
