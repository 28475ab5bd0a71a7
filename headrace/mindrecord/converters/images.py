"""Image datasets to MindRecord: Cifar10ToMR, Cifar100ToMR, MnistToMR, ImageNetToMR.

Schemas, file names, index fields and the JPEG encoding (OpenCV, quality 95) are MindSpore's.
Where MindSpore reads files in directory-listing order (CIFAR batches, ImageNet class folders)
headrace sorts the names, so the output does not depend on the file system.
"""
from __future__ import annotations

import gzip
import os
import re
import struct
from typing import Any, Iterator

import numpy as np

from .._status import SUCCESS
from ._common import PathNotExistsError, check_filename, encode_jpeg, restricted_loads, write_rows

__all__ = ["Cifar100ToMR", "Cifar10ToMR", "ImageNetToMR", "MnistToMR"]


def _check_fields(fields: Any) -> list | None:
    if fields and not isinstance(fields, list):
        raise ValueError("The parameter fields should be None or list")
    return fields or None


def _check_partitions(partition_number: Any) -> int:
    if partition_number is None or isinstance(partition_number, bool) or not isinstance(partition_number, int):
        raise ValueError("The parameter partition_number must be int")
    return partition_number


def _load_pickle(path: str) -> dict:
    with open(path, "rb") as f:
        data = restricted_loads(f.read())
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a CIFAR python batch (a pickled dict).")
    return data


def _hwc(data: Any, path: str) -> np.ndarray:
    arr = np.asarray(data)
    if arr.ndim != 2 or arr.shape[1] != 3072:
        raise ValueError(f"{path}: b'data' should hold rows of 3072 bytes (3x32x32), but has shape {arr.shape}.")
    return arr.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1).astype(np.uint8)


class Cifar10ToMR:
    """Converts CIFAR-10 (python version: ``data_batch_*`` and ``test_batch`` pickles) to MindRecord.

    Writes ``destination`` (train) and ``destination + "_test"`` (test), each with the fields
    ``id`` (int64, the row number), ``label`` (int64) and ``data`` (bytes: the image as JPEG).

    Args:
        source (str): Folder holding ``data_batch_*`` and ``test_batch``.
        destination (str): The MindRecord file to write (its folder must exist; the file must not).

    Raises:
        ValueError: If ``source`` or ``destination`` is not a valid path.
        PathNotExistsError: If the batch files are missing.

    Examples:
        >>> from headrace.mindrecord import Cifar10ToMR
        >>> Cifar10ToMR("/path/to/cifar-10-batches-py", "/path/to/cifar10.mindrecord").transform()  # doctest: +SKIP
    """

    _KIND = "CIFAR-10"
    _TRAIN, _TEST = "data_batch", "test_batch"

    def __init__(self, source, destination):
        check_filename(source)
        if not os.path.isdir(source):
            raise PathNotExistsError(source)
        names = os.listdir(source)
        self._check_files(names)
        check_filename(destination)
        self.source = source
        self.destination = destination
        self.writer = None

    def _check_files(self, names: list[str]) -> None:
        if not any(n.startswith(self._TRAIN + "_") for n in names):
            raise PathNotExistsError(self._TRAIN + "_*")
        if not any(n.startswith(self._TEST) for n in names):
            raise PathNotExistsError(self._TEST)

    def _splits(self) -> tuple[list[dict], list[dict]]:
        names = sorted(os.listdir(self.source))
        train = [_load_pickle(os.path.join(self.source, n)) for n in names if re.match(self._TRAIN, n)]
        test = [_load_pickle(os.path.join(self.source, n)) for n in names
                if re.match(self._TEST, n) and not re.match(self._TRAIN, n)]
        return train, test[-1:]

    def _rows(self, batches: list[dict], path_hint: str) -> tuple[int, Iterator[dict]]:
        images = [_hwc(b[b"data"], path_hint) for b in batches]
        labels = [np.asarray(b[b"labels"], dtype=np.int64).ravel() for b in batches]
        images = np.concatenate(images) if images else np.zeros((0, 32, 32, 3), np.uint8)
        labels = np.concatenate(labels) if labels else np.zeros(0, np.int64)

        def rows() -> Iterator[dict]:
            for i, (img, label) in enumerate(zip(images, labels)):
                yield {"id": i, "data": encode_jpeg(img[..., ::-1]), "label": int(label)}
        return len(labels), rows()

    _SCHEMA = {"id": {"type": "int64"}, "label": {"type": "int64"}, "data": {"type": "bytes"}}

    def run(self, fields=None):
        """Converts and returns SUCCESS; see :meth:`transform`."""
        fields = _check_fields(fields)
        train, test = self._splits()
        for name, batches, desc in ((self.destination, train, "img_train"),
                                    (self.destination + "_test", test, "img_test")):
            total, rows = self._rows(batches, self.source)
            write_rows(name, 1, self._SCHEMA, desc, rows, total, fields, label=f"{self._KIND} {desc[4:]}")
        return SUCCESS

    def transform(self, fields=None):
        """Writes the MindRecord files.

        Args:
            fields (list[str], optional): Fields to index (see ``FileWriter.add_index``). Default: None.

        Raises:
            ValueError: If ``fields`` is not a list.
        """
        self.run(fields)


class Cifar100ToMR(Cifar10ToMR):
    """Converts CIFAR-100 (python version: ``train`` and ``test`` pickles) to MindRecord.

    Writes ``destination`` and ``destination + "_test"`` with the fields ``id``, ``fine_label``,
    ``coarse_label`` (int64) and ``data`` (bytes: the image as JPEG).

    Examples:
        >>> from headrace.mindrecord import Cifar100ToMR
        >>> Cifar100ToMR("/path/to/cifar-100-python", "/path/to/cifar100.mindrecord").transform()  # doctest: +SKIP
    """

    _KIND = "CIFAR-100"
    _SCHEMA = {"id": {"type": "int64"}, "fine_label": {"type": "int64"}, "coarse_label": {"type": "int64"},
               "data": {"type": "bytes"}}

    def _check_files(self, names: list[str]) -> None:
        for want in ("train", "test"):
            if want not in names:
                raise PathNotExistsError(want)

    def _splits(self) -> tuple[list[dict], list[dict]]:
        return ([_load_pickle(os.path.join(self.source, "train"))],
                [_load_pickle(os.path.join(self.source, "test"))])

    def _rows(self, batches: list[dict], path_hint: str) -> tuple[int, Iterator[dict]]:
        batch = batches[0]
        images = _hwc(batch[b"data"], path_hint)
        fine = np.asarray(batch[b"fine_labels"], dtype=np.int64).ravel()
        coarse = np.asarray(batch[b"coarse_labels"], dtype=np.int64).ravel()

        def rows() -> Iterator[dict]:
            for i, img in enumerate(images):
                yield {"id": i, "data": encode_jpeg(img[..., ::-1]), "fine_label": int(fine[i]),
                       "coarse_label": int(coarse[i])}
        return len(images), rows()


class MnistToMR:
    """Converts MNIST (the four ``*-ubyte.gz`` files) to MindRecord.

    Writes ``<destination>_train.mindrecord`` and ``<destination>_test.mindrecord`` (each split into
    ``partition_number`` files) with the fields ``label`` (int64, indexed) and ``data`` (bytes: the
    image as JPEG). Uncompressed IDX files are read when the ``.gz`` ones are absent.

    Args:
        source (str): Folder holding the MNIST files.
        destination (str): Path prefix of the MindRecord files.
        partition_number (int, optional): Files per split. Default: 1.

    Examples:
        >>> from headrace.mindrecord import MnistToMR
        >>> MnistToMR("/path/to/mnist", "/path/to/mnist").transform()  # doctest: +SKIP
    """

    _SCHEMA = {"label": {"type": "int64"}, "data": {"type": "bytes"}}

    def __init__(self, source, destination, partition_number=1):
        check_filename(source)
        self.source = source
        self.files = {}
        for split, prefix in (("train", "train"), ("test", "t10k")):
            for kind in ("images-idx3", "labels-idx1"):
                self.files[(split, kind)] = self._find(f"{prefix}-{kind}-ubyte")
        check_filename(destination)
        self.destination = destination
        self.partition_number = _check_partitions(partition_number)

    def _find(self, name: str) -> str:
        gz = os.path.join(self.source, name + ".gz")
        check_filename(gz)
        if os.path.isfile(gz):
            return gz
        plain = os.path.join(self.source, name)
        if os.path.isfile(plain):
            return plain
        raise PathNotExistsError(gz)

    @staticmethod
    def _read(path: str) -> bytes:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as f:
            return f.read()

    def _split(self, split: str) -> tuple[np.ndarray, np.ndarray]:
        img_path, lab_path = self.files[(split, "images-idx3")], self.files[(split, "labels-idx1")]
        raw = self._read(img_path)
        magic, n, rows, cols = struct.unpack(">IIII", raw[:16])
        if magic != 2051 or len(raw) - 16 != n * rows * cols:
            raise ValueError(f"{img_path} is not an MNIST image file (magic {magic}, {n} images of {rows}x{cols}, "
                             f"{len(raw) - 16} data bytes).")
        images = np.frombuffer(raw, np.uint8, offset=16).reshape(n, rows, cols, 1)
        raw = self._read(lab_path)
        magic, m = struct.unpack(">II", raw[:8])
        if magic != 2049 or len(raw) - 8 != m or m != n:
            raise ValueError(f"{lab_path} is not an MNIST label file for {img_path} (magic {magic}, {m} labels, "
                             f"{len(raw) - 8} data bytes, {n} images).")
        return images, np.frombuffer(raw, np.uint8, offset=8).astype(np.int64)

    def _write(self, split: str) -> None:
        images, labels = self._split(split)
        rows = ({"label": int(label), "data": encode_jpeg(img)} for img, label in zip(images, labels))
        write_rows(f"{self.destination}_{split}.mindrecord", self.partition_number, self._SCHEMA, "mnist_schema",
                   rows, len(labels), ["label"], label=f"MNIST {split}", header_size=1 << 24, page_size=1 << 26)

    def run(self):
        """Converts both splits and returns SUCCESS."""
        self._write("train")
        self._write("test")
        return SUCCESS

    def transform(self):
        """Writes the MindRecord files."""
        self.run()


class ImageNetToMR:
    """Converts ImageNet-style folders (``image_dir/<class folder>/<image>.JPEG``) to MindRecord.

    ``map_file`` lines are ``<class folder> <label>``; files ending with "JPEG" or "jpg" in each
    listed folder become rows with the fields ``label`` (int32), ``image`` (bytes, the file as is)
    and ``file_name`` (string, the path); ``label`` and ``file_name`` are indexed. Folders are read in
    map-file order, their files in sorted order; empty files are skipped.

    Args:
        map_file (str): The class-folder-to-label map.
        image_dir (str): Folder holding the class folders.
        destination (str): The MindRecord file to write.
        partition_number (int, optional): Number of files to split the output into. Default: 1.

    Raises:
        ValueError: If a path is not valid, ``partition_number`` is not an int, or a label is not an int.
        PathNotExistsError: If no folder named in ``map_file`` exists.

    Examples:
        >>> from headrace.mindrecord import ImageNetToMR
        >>> conv = ImageNetToMR("/path/to/labels_map.txt", "/path/to/train", "/path/to/imagenet.mindrecord")  # doctest: +SKIP
        >>> conv.transform()  # doctest: +SKIP
    """

    _SCHEMA = {"label": {"type": "int32"}, "image": {"type": "bytes"}, "file_name": {"type": "string"}}

    def __init__(self, map_file, image_dir, destination, partition_number=1):
        check_filename(map_file)
        check_filename(image_dir)
        check_filename(destination)
        self.map_file = map_file
        self.image_dir = image_dir
        self.destination = destination
        self.partition_number = _check_partitions(partition_number)

    def _folders(self) -> list[tuple[int, str]]:
        if not os.path.exists(self.map_file):
            raise IOError(f"map file {self.map_file} not exists")
        by_label: dict[str, str] = {}
        with open(self.map_file, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                parts = line.split()
                if not parts:
                    continue
                if len(parts) != 2:
                    raise ValueError(f"Line {lineno} of {self.map_file} should be '<folder> <label>', but got "
                                     f"{line.strip()!r}.")
                by_label[parts[1]] = parts[0]
        out = []
        for label, folder in by_label.items():
            path = os.path.join(self.image_dir, folder)
            if not os.path.isdir(path):
                continue
            try:
                out.append((int(label), path))
            except ValueError:
                raise ValueError(f"The label {label!r} of folder {folder} in {self.map_file} is not an int.") from None
        if not out:
            raise PathNotExistsError(f"not valid image dir in {self.image_dir}")
        return out

    def _rows(self, folders: list[tuple[int, str]]) -> Iterator[dict]:
        for label, path in folders:
            for item in sorted(os.listdir(path)):
                if not item.endswith("JPEG") and not item.endswith("jpg"):
                    continue
                file_name = os.path.join(path, item)
                with open(file_name, "rb") as f:
                    data = f.read()
                if not data:
                    continue
                yield {"file_name": file_name, "label": label, "image": data}

    def run(self):
        """Converts and returns SUCCESS."""
        folders = self._folders()
        total = sum(1 for _, p in folders for n in os.listdir(p) if n.endswith("JPEG") or n.endswith("jpg"))
        write_rows(self.destination, self.partition_number, self._SCHEMA, "imagenet_schema", self._rows(folders),
                   total, ["label", "file_name"], label="ImageNet", parallel=True, header_size=1 << 24,
                   page_size=1 << 26)
        return SUCCESS

    def transform(self):
        """Writes the MindRecord files."""
        self.run()

