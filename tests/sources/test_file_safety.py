"""Sources refuse files that are not regular files (FIFOs, devices) and class names that are paths.

Issue 12, items 6 and 20. The FIFO scenarios run in a subprocess with a hard timeout: before the
fix, opening the FIFO blocked the reader forever.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import headrace.dataset as ds
from headrace._util.files import NotRegularFileError, open_regular, read_regular
from tests.sources.makers import make_image_folder, png_bytes

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")


def _run(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ))


def test_open_regular_refuses_fifo_device_and_directory(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "zero"
    link.symlink_to("/dev/zero")
    for path, kind in ((fifo, "a FIFO (named pipe)"), (link, "a character device"), (tmp_path, "a directory")):
        with pytest.raises(NotRegularFileError) as info:
            open_regular(str(path))
        assert info.value.filename == str(path)
        assert info.value.strerror.startswith(f"it is {kind}, not a regular file")
        assert isinstance(info.value, OSError)
    regular = tmp_path / "f.bin"
    regular.write_bytes(b"0123456789")
    assert read_regular(str(regular)) == b"0123456789"
    assert read_regular(str(regular), 3, 4) == b"3456"
    assert read_regular(str(regular), 8, 100) == b"89"
    with open_regular(str(regular)) as f:  # blocking mode restored: an ordinary file object
        assert f.read() == b"0123456789"
        assert os.get_blocking(f.fileno())


@pytest.mark.parametrize("decode", [False, True])
def test_fifo_among_image_folder_images_is_an_error_naming_it(tmp_path, decode):
    root = tmp_path / "data"
    make_image_folder(str(root), {"cat": ["1.png"], "dog": ["2.png"]})
    fifo = root / "cat" / "0.png"   # read first
    os.mkfifo(fifo)
    proc = _run(f"""
        import headrace.dataset as ds
        d = ds.ImageFolderDataset({str(root)!r}, shuffle=False, decode={decode})
        try:
            for _ in d.create_tuple_iterator(output_numpy=True):
                pass
        except RuntimeError as e:
            print("ERROR", e)
        else:
            print("NO ERROR")
    """)
    assert proc.returncode == 0, proc.stderr
    assert "ERROR" in proc.stdout and "NO ERROR" not in proc.stdout
    assert f"failed to open {fifo}: it is a FIFO (named pipe), not a regular file" in proc.stdout
    assert f"file: {fifo}" in proc.stdout


def test_dev_zero_behind_a_symlink_is_refused(tmp_path):
    root = tmp_path / "data"
    make_image_folder(str(root), {"cat": ["1.png"]})
    link = root / "cat" / "0.png"
    link.symlink_to("/dev/zero")
    d = ds.ImageFolderDataset(str(root), shuffle=False)
    with pytest.raises(RuntimeError, match=r"failed to open .*0\.png: it is a character device, not a regular file"):
        list(d.create_tuple_iterator(output_numpy=True))


def test_regular_files_behind_symlinks_still_read(tmp_path):
    root = tmp_path / "data"
    make_image_folder(str(root), {"cat": ["1.png"]})
    (tmp_path / "elsewhere.png").write_bytes(png_bytes(7))
    (root / "cat" / "0.png").symlink_to(tmp_path / "elsewhere.png")
    got = [bytes(r[0]) for r in ds.ImageFolderDataset(str(root), shuffle=False).create_tuple_iterator(
        output_numpy=True)]
    assert got == [png_bytes(7), png_bytes(0)]


def test_fifo_as_celeba_list_file_is_refused(tmp_path):
    os.mkfifo(tmp_path / "list_attr_celeba.txt")
    proc = _run(f"""
        import headrace.dataset as ds
        try:
            ds.CelebADataset({str(tmp_path)!r}).get_dataset_size()
        except RuntimeError as e:
            print("ERROR", e)
    """)
    assert proc.returncode == 0, proc.stderr
    assert "list_attr_celeba.txt: it is a FIFO (named pipe), not a regular file" in proc.stdout


def test_fifo_as_cifar_file_is_refused_when_read(tmp_path):
    proc = _run(f"""
        import os
        from headrace.dataset._sources.mnist_cifar import CifarSource
        path = os.path.join({str(tmp_path)!r}, "data_batch_1.bin")
        os.mkfifo(path)
        src = CifarSource.__new__(CifarSource)
        src.files, src.record, src.label_bytes, src.op = [path], 3073, 1, "Cifar10Dataset"
        try:
            src.labels()
        except RuntimeError as e:
            print("ERROR", e)
    """)
    assert proc.returncode == 0, proc.stderr
    assert "data_batch_1.bin: it is a FIFO (named pipe), not a regular file" in proc.stdout


# ---- item 20: class names are names -------------------------------------------------------------

@pytest.fixture
def outside(tmp_path):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "s.png").write_bytes(png_bytes(1))
    root = tmp_path / "data"
    make_image_folder(str(root), {"cat": ["1.png"]})
    return root, secret


@pytest.mark.parametrize("key", ["../secret", "cat/../../secret", "ABS", "..", ".", "", "cat/", "a\0b"])
def test_class_indexing_keys_that_are_paths_are_refused(outside, key):
    root, secret = outside
    key = str(secret) if key == "ABS" else key
    with pytest.raises(ValueError) as info:
        ds.ImageFolderDataset(str(root), class_indexing={"cat": 0, key: 1})
    assert str(info.value) == (
        f"class_indexing key {key!r} is not a folder name: the keys of class_indexing name sub-folders of "
        "dataset_dir (class names are names, not paths), so they may not be empty, '.', '..', or hold a path "
        "separator.")


def test_class_indexing_with_plain_names_still_works(outside):
    root, _ = outside
    os.makedirs(root / "dog.v2")
    (root / "dog.v2" / "a.png").write_bytes(png_bytes(3))
    d = ds.ImageFolderDataset(str(root), class_indexing={"cat": 4, "dog.v2": 9}, shuffle=False)
    got = [(bytes(r[0]), int(r[1])) for r in d.create_tuple_iterator(output_numpy=True)]
    assert got == [(png_bytes(0), 4), (png_bytes(3), 9)]
    assert d.get_class_indexing() == {"cat": 4, "dog.v2": 9}


def test_other_sources_keep_class_names_with_slashes(tmp_path):
    # annotation names of VOC / COCO / Manifest are labels, not folders: a '/' stays allowed there
    from headrace.dataset._sources._files import check_class_indexing
    assert check_class_indexing({"a/b": 1}) == {"a/b": 1}


def test_fifo_named_as_a_dataset_file_is_refused_at_construction(tmp_path):
    fifo = tmp_path / "ann.json"
    os.mkfifo(fifo)
    (tmp_path / "img").mkdir()
    with pytest.raises(ValueError, match=f"^The file {fifo} is a FIFO \\(named pipe\\), not a regular file\\.$"):
        ds.CocoDataset(str(tmp_path / "img"), str(fifo))


def test_fifo_among_cifar_and_mnist_files_is_named_not_skipped(tmp_path):
    from tests.sources.makers import make_cifar, make_mnist
    make_cifar(tmp_path / "data_batch_1.bin", 2, 1, 0)
    os.mkfifo(tmp_path / "data_batch_2.bin")
    with pytest.raises(RuntimeError, match=r"Invalid cifar10 file, .*data_batch_2\.bin is a FIFO \(named pipe\), "
                                           r"not a regular file"):
        ds.Cifar10Dataset(str(tmp_path), usage="train").get_dataset_size()
    mnist = tmp_path / "mnist"
    mnist.mkdir()
    make_mnist(str(mnist), "t10k", 2, 0)
    os.remove(mnist / "t10k-labels-idx1-ubyte")
    os.mkfifo(mnist / "t10k-labels-idx1-ubyte")
    proc = _run(f"""
        import headrace.dataset as ds
        try:
            ds.MnistDataset({str(mnist)!r}, usage="test").get_dataset_size()
        except RuntimeError as e:
            print("ERROR", e)
    """)
    assert proc.returncode == 0, proc.stderr
    assert "t10k-labels-idx1-ubyte: it is a FIFO (named pipe), not a regular file" in proc.stdout
