"""MNIST, Fashion-MNIST (IDX files) and CIFAR-10 / CIFAR-100 (binary version) datasets."""
from __future__ import annotations

import os
import stat
import struct
import threading
import numpy as np

from headrace._util.errors import PipelineError
from headrace._util.files import file_kind, open_regular
from headrace._util.forksafe import fork_safe
from headrace.dataset._sources._docs import with_args
from headrace.dataset._sources._files import (
    FileSourceDataset, NO_DATA, check_dir, check_usage, open_data, read_exact,
)
from headrace._util.pickling import FreshLock

__all__ = ["Cifar100Dataset", "Cifar10Dataset", "FashionMnistDataset", "MnistDataset"]

_USAGES = ("train", "test", "all")
_IMAGES_MAGIC, _LABELS_MAGIC = 2051, 2049

# The Args lines of the arguments MnistDataset and Cifar10Dataset take after ``dataset_dir``, in
# place of the line ``{read_args}`` of their docstrings.
_with_read_args = with_args("read_args", (
    'usage (str, optional): "train", "test" or "all". Default: None, "all".',
    "num_samples (int, optional): Rows to read. Default: None, all.",
    "num_parallel_workers (int, optional): Reader threads. Default: None, the configured number.",
    "shuffle (bool, optional): Shuffle the rows. Default: None (shuffled unless a sampler is given).",
    "sampler (Sampler, optional): Which rows to read. Default: None.",
    "num_shards (int, optional): Split the rows into this many shards. Default: None.",
    "shard_id (int, optional): The shard to read. Default: None.",
    "cache (DatasetCache, optional): cache the rows (``headrace.dataset.cache``). Default: None.",
))


# --------------------------------------------------------------------------------------------
# MNIST
# --------------------------------------------------------------------------------------------

def _file_array(path: str, offset: int, op: str) -> np.ndarray:
    """The bytes of the regular file ``path`` from ``offset``, as a uint8 array."""
    with open_data(path, op) as f:
        return np.fromfile(f, dtype=np.uint8, offset=offset)


class IdxSource(FreshLock):
    """(image, label) rows from pairs of IDX files, loaded into memory on first use."""

    column_names = ("image", "label")

    def __init__(self, pairs: list[tuple[str, str]], op: str) -> None:
        self.pairs = pairs
        self.op = op
        self._lock = fork_safe(threading.Lock())
        self._data: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def __getstate__(self) -> dict:
        return self._state(_data=None)  # workers reload; no large arrays pickled

    def _load(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        data = self._data
        if data is None:
            with self._lock:
                if self._data is None:
                    self._data = self._read_all()
                data = self._data
        return data

    def _read_all(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        images, labels, owner = [], [], []
        for k, (img_path, lab_path) in enumerate(self.pairs):
            imgs = self._read_images(img_path)
            labs = self._read_labels(lab_path)
            if len(imgs) != len(labs):
                raise PipelineError(self.op, "Invalid mnist file, num of images should be equal to num of labels, "
                                    f"but got num of images: {len(imgs)}, num of labels: {len(labs)} "
                                    f"({img_path}, {lab_path}).", file=img_path)
            images.append(imgs)
            labels.append(labs)
            owner.append(np.full(len(labs), k, dtype=np.int32))
        if not images:
            return np.zeros((0, 28, 28, 1), np.uint8), np.zeros(0, np.uint32), np.zeros(0, np.int32)
        shapes = {a.shape[1:] for a in images}
        if len(shapes) > 1:
            raise PipelineError(self.op, f"Invalid mnist file, the image files have different image sizes: "
                                f"{sorted(shapes)}.", file=self.pairs[0][0])
        return np.concatenate(images), np.concatenate(labels), np.concatenate(owner)

    def _header(self, path: str, size: int) -> bytes:
        try:
            with open_regular(path) as f:
                head = f.read(size)
        except OSError as e:
            raise PipelineError(self.op, f"Invalid mnist file, failed to open {path}: {e.strerror or e}.",
                                file=path) from e
        if len(head) < size:
            raise PipelineError(self.op, f"Invalid mnist file, {path} is too short to hold an IDX header.", file=path)
        return head

    def _read_images(self, path: str) -> np.ndarray:
        magic, n, rows, cols = struct.unpack(">IIII", self._header(path, 16))
        if magic != _IMAGES_MAGIC:
            raise PipelineError(self.op, f"Invalid mnist file, the number of images in {path} should be "
                                f"{_IMAGES_MAGIC}, but got {magic}.", file=path)
        need = n * rows * cols
        raw = _file_array(path, 16, self.op)
        if raw.size != need:
            raise PipelineError(self.op, f"Invalid mnist file, the data length of images in {path} should be "
                                f"{need} ({n} images of {rows}x{cols}), but got {raw.size}.", file=path)
        return raw.reshape(n, rows, cols, 1)

    def _read_labels(self, path: str) -> np.ndarray:
        magic, n = struct.unpack(">II", self._header(path, 8))
        if magic != _LABELS_MAGIC:
            raise PipelineError(self.op, f"Invalid mnist file, the number of labels in {path} should be "
                                f"{_LABELS_MAGIC}, but got {magic}.", file=path)
        raw = _file_array(path, 8, self.op)
        if raw.size != n:
            raise PipelineError(self.op, f"Invalid mnist file, the data length of labels in {path} should be "
                                f"{raw.size}, but got {n}.", file=path)
        return raw.astype(np.uint32)

    def __len__(self) -> int:
        return len(self._load()[1])

    def read(self, index: int) -> tuple:
        images, labels, _ = self._load()
        return images[index].copy(), np.array(labels[index], dtype=np.uint32)

    def labels(self) -> np.ndarray:
        return self._load()[1].astype(np.int64)

    def file_of(self, index: int) -> str | None:
        data = self._data
        if data is None or index >= len(data[2]):
            return None
        return self.pairs[int(data[2][index])][0]


def _mnist_pairs(root: str, usage: str, op: str) -> list[tuple[str, str]]:
    """(images file, labels file) pairs for ``usage``, test before train as MindSpore reads them.

    Every images file of ``usage`` needs its labels file and the reverse: a folder holding one
    without the other is an error (MindSpore's: it counts both kinds of file), not a part with
    no rows."""
    prefixes = {"train": ["train"], "test": ["t10k"], "all": ["t10k", "train"]}[usage]
    pairs, missing, images, labels = [], [], 0, 0
    for prefix in prefixes:
        img = os.path.join(root, f"{prefix}-images-idx3-ubyte")
        lab = os.path.join(root, f"{prefix}-labels-idx1-ubyte")
        # (exists, not isfile: a FIFO or a device is refused when opened)
        has_img, has_lab = os.path.exists(img), os.path.exists(lab)
        images, labels = images + has_img, labels + has_lab
        if has_img and has_lab:
            pairs.append((img, lab))
        elif has_img:
            missing.append((lab, f"the label file {lab} of the image file {img} does not exist"))
        elif has_lab:
            missing.append((img, f"the image file {img} of the label file {lab} does not exist"))
    if missing:
        raise PipelineError(op, f"Invalid mnist file, num of images should be equal to num of labels, but got num "
                            f"of images: {images}, num of labels: {labels}: "
                            + "; ".join(why for _, why in missing) + ".", file=missing[0][0])
    return pairs


@_with_read_args
class MnistDataset(FileSourceDataset):
    """The MNIST handwritten digits, read from the four IDX files in ``dataset_dir``.

    Rows are ``image`` (uint8, 28x28x1) and ``label`` (uint32 scalar). ``usage`` "train" reads
    ``train-images-idx3-ubyte`` / ``train-labels-idx1-ubyte``, "test" the ``t10k-*`` pair and "all"
    both (test rows first, as MindSpore orders them).

    Args:
        dataset_dir (str): Folder holding the IDX files (not gzipped).
        {read_args}

    Raises:
        ValueError: If ``dataset_dir`` is not a folder or ``usage`` is not valid.
        RuntimeError: When iterating, if a file is damaged (wrong magic number or length) or missing.

    Examples:
        >>> import os, struct, tempfile, numpy as np, headrace.dataset as ds
        >>> root = tempfile.mkdtemp()
        >>> _ = open(os.path.join(root, "t10k-images-idx3-ubyte"), "wb").write(
        ...     struct.pack(">IIII", 2051, 2, 28, 28) + bytes(2 * 784))
        >>> _ = open(os.path.join(root, "t10k-labels-idx1-ubyte"), "wb").write(struct.pack(">II", 2049, 2) + b"\\x07\\x03")
        >>> d = ds.MnistDataset(root, usage="test", shuffle=False)
        >>> [(r["image"].shape, int(r["label"])) for r in d.create_dict_iterator(output_numpy=True)]
        [((28, 28, 1), 7), ((28, 28, 1), 3)]
    """

    _KIND = "mnist"

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):
        self.dataset_dir = check_dir(dataset_dir)
        self.usage = check_usage(usage, _USAGES, "all")
        super().__init__(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache)

    def _make_source(self) -> IdxSource:
        return IdxSource(_mnist_pairs(self.dataset_dir, self.usage, self._source_name()), self._source_name())

    def _no_data_detail(self) -> str:
        return NO_DATA.format(op=self._source_name(), what="file in directory", path=self.dataset_dir)

    def _labels(self) -> np.ndarray:
        return self._source().labels()


class FashionMnistDataset(MnistDataset):
    """Fashion-MNIST (Zalando's clothing images), in the same IDX layout and file names as MNIST.

    Takes the same arguments as :class:`MnistDataset`; rows are ``image`` (uint8, 28x28x1) and
    ``label`` (uint32).

    Examples:
        >>> import os, struct, tempfile, headrace.dataset as ds
        >>> root = tempfile.mkdtemp()
        >>> _ = open(os.path.join(root, "train-images-idx3-ubyte"), "wb").write(
        ...     struct.pack(">IIII", 2051, 1, 28, 28) + bytes(784))
        >>> _ = open(os.path.join(root, "train-labels-idx1-ubyte"), "wb").write(struct.pack(">II", 2049, 1) + b"\\x09")
        >>> [int(r[1]) for r in ds.FashionMnistDataset(root, usage="train").create_tuple_iterator(output_numpy=True)]
        [9]
    """


# --------------------------------------------------------------------------------------------
# CIFAR
# --------------------------------------------------------------------------------------------

_IMAGE_BYTES = 3 * 32 * 32
_CLASSES = {"cifar10": (10,), "cifar100": (20, 100)}  # per label byte: how many classes it numbers


class CifarSource:
    """Rows from CIFAR binary files: ``label_bytes`` label bytes then a CHW 32x32x3 image per record."""

    def __init__(self, files: list[str], names: tuple[str, ...], label_bytes: int, op: str, kind: str) -> None:
        self.column_names = names
        self.files = files
        self.label_bytes = label_bytes
        self.record = label_bytes + _IMAGE_BYTES
        self.op = op
        self.kind = kind
        self.classes = _CLASSES[kind]
        counts = []
        for f in files:
            st = os.stat(f)
            if not stat.S_ISREG(st.st_mode):
                raise PipelineError(op, f"Invalid {kind} file, {f} is {file_kind(st.st_mode)}, not a regular file "
                                    "(headrace reads data only from regular files).", file=f)
            size = st.st_size
            if size == 0:
                raise PipelineError(op, f"Invalid {kind} file, {f} is empty (0 bytes): it holds no record. Remove it "
                                    "or re-download the dataset.", file=f)
            if size % self.record:
                raise PipelineError(op, f"Invalid {kind} file, failed to read data from: {f}, re-download "
                                    f"dataset(make sure it is {kind.upper().replace('CIFAR', 'CIFAR-')} binary "
                                    f"version). Its size {size} is not a multiple of the record size "
                                    f"{self.record}.", file=f)
            counts.append(size // self.record)
        self._starts = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])

    def __len__(self) -> int:
        return int(self._starts[-1])

    def _locate(self, index: int) -> tuple[str, int]:
        k = int(np.searchsorted(self._starts, index, side="right")) - 1
        return self.files[k], (index - int(self._starts[k])) * self.record

    def read(self, index: int) -> tuple:
        path, offset = self._locate(index)
        rec = read_exact(path, offset, self.record, self.op)
        for k, b in enumerate(rec[:self.label_bytes]):
            if b >= self.classes[k]:
                raise self._bad_label(path, offset // self.record, k, b)
        image = np.frombuffer(rec, dtype=np.uint8, offset=self.label_bytes).reshape(3, 32, 32)
        image = np.ascontiguousarray(image.transpose(1, 2, 0))
        labels = tuple(np.array(b, dtype=np.uint32) for b in rec[:self.label_bytes])
        return (image,) + labels

    def _bad_label(self, path: str, record: int, k: int, value: int) -> PipelineError:
        name = self.column_names[1 + k]
        n = self.classes[k]
        return PipelineError(self.op, f"Invalid {self.kind} file, record {record} of {path} has {name} {value}, "
                             f"outside [0, {n - 1}]: {self.kind.upper().replace('CIFAR', 'CIFAR-')} has {n} "
                             f"{'classes' if k == self.label_bytes - 1 else 'coarse classes'}. headrace refuses it "
                             "(MindSpore passes it on) because such a label means the file is damaged or belongs "
                             "to another dataset.", file=path)

    def labels(self) -> np.ndarray:
        """The last label byte of every record (the fine label for CIFAR-100)."""
        out = []
        for f in self.files:
            raw = _file_array(f, 0, self.op).reshape(-1, self.record)
            for k in range(self.label_bytes):
                bad = np.flatnonzero(raw[:, k] >= self.classes[k])
                if bad.size:
                    raise self._bad_label(f, int(bad[0]), k, int(raw[bad[0], k]))
            out.append(raw[:, self.label_bytes - 1].astype(np.int64))
        return np.concatenate(out) if out else np.zeros(0, np.int64)

    def file_of(self, index: int) -> str | None:
        if 0 <= index < len(self):
            return self._locate(index)[0]
        return None


@_with_read_args
class Cifar10Dataset(FileSourceDataset):
    """CIFAR-10, binary version: ``data_batch_*.bin`` (train) and ``test_batch.bin`` (test).

    Rows are ``image`` (uint8, 32x32x3, HWC) and ``label`` (uint32 scalar). Files are read in sorted
    name order; "all" reads the train and test files in that order. A file may hold any number of
    whole records (MindSpore requires exactly 10000 per file), but not none: an empty file is an
    error. A label outside [0, 9] (CIFAR-100: coarse [0, 19], fine [0, 99]) is an error naming the
    file and the record, where MindSpore passes it on.

    Args:
        dataset_dir (str): Folder holding the ``.bin`` files.
        {read_args}

    Raises:
        ValueError: If ``dataset_dir`` is not a folder or ``usage`` is not valid.
        RuntimeError: If a file is empty or its size is not a whole number of records, no file was
            found, or (when read) a record's label is out of range.

    Examples:
        >>> import os, tempfile, headrace.dataset as ds
        >>> root = tempfile.mkdtemp()
        >>> _ = open(os.path.join(root, "test_batch.bin"), "wb").write(b"\\x04" + bytes(3072))
        >>> [(r[0].shape, int(r[1])) for r in ds.Cifar10Dataset(root, usage="test").create_tuple_iterator(output_numpy=True)]
        [((32, 32, 3), 4)]
    """

    _KIND = "cifar10"
    _COLUMNS: tuple[str, ...] = ("image", "label")
    _KEYS = {"train": ("data_batch",), "test": ("test_batch",), "all": ("data_batch", "test_batch")}

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):
        self.dataset_dir = check_dir(dataset_dir)
        self.usage = check_usage(usage, _USAGES, "all")
        super().__init__(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache)

    def _files(self) -> list[str]:
        keys = self._KEYS[self.usage]
        names = sorted(e.name for e in os.scandir(self.dataset_dir)  # a FIFO too: refused, not skipped
                       if not e.is_dir() and e.name.endswith(".bin") and any(k in e.name for k in keys))
        return [os.path.join(self.dataset_dir, n) for n in names]

    def _make_source(self) -> CifarSource:
        return CifarSource(self._files(), self._COLUMNS, len(self._COLUMNS) - 1, self._source_name(), self._KIND)

    def _no_data_detail(self) -> str:
        return NO_DATA.format(op=self._source_name(), what="file in directory", path=self.dataset_dir)

    def _labels(self) -> np.ndarray:
        return self._source().labels()


class Cifar100Dataset(Cifar10Dataset):
    """CIFAR-100, binary version: ``train.bin`` and ``test.bin``.

    Rows are ``image`` (uint8, 32x32x3, HWC), ``coarse_label`` and ``fine_label`` (uint32 scalars).
    Takes the same arguments as :class:`Cifar10Dataset`; files whose name contains "train" / "test"
    and ends with ``.bin`` are read, in sorted name order.

    Examples:
        >>> import os, tempfile, headrace.dataset as ds
        >>> root = tempfile.mkdtemp()
        >>> _ = open(os.path.join(root, "test.bin"), "wb").write(b"\\x02\\x11" + bytes(3072))
        >>> d = ds.Cifar100Dataset(root, usage="test")
        >>> d.get_col_names(), [(int(r[1]), int(r[2])) for r in d.create_tuple_iterator(output_numpy=True)]
        (['image', 'coarse_label', 'fine_label'], [(2, 17)])
    """

    _KIND = "cifar100"
    _COLUMNS = ("image", "coarse_label", "fine_label")
    _KEYS = {"train": ("train",), "test": ("test",), "all": ("train", "test")}
