"""ImageFolderDataset: images in one sub-folder per class."""
from __future__ import annotations

import os
from typing import Callable, Sequence

import numpy as np

from headrace._util.errors import PipelineError
from headrace.dataset._sources._files import (
    FileSourceDataset, NO_DATA, as_uint8, check_class_indexing, check_decode, check_decrypt, check_dir,
    check_extensions, file_extension,
)

__all__ = ["ImageFolderDataset", "ImageListSource", "load_image"]


def load_image(path: str, decode: bool, decrypt: Callable[[str], bytes] | None, op: str) -> np.ndarray:
    """The file at ``path`` as a 1-D uint8 array, or decoded to HWC RGB uint8 when ``decode``.

    Raises PipelineError naming the file when it cannot be read or decoded.
    """
    try:
        data = decrypt(path) if decrypt is not None else _read_all(path)
    except OSError as e:
        raise PipelineError(op, f"Invalid file, failed to open {path}: {e.strerror or e}.", file=path) from e
    if not decode:
        return as_uint8(bytes(data))
    from headrace.dataset.vision._kernels.decode import decode_rgb  # noqa: PLC0415 - decode only when asked
    try:
        return decode_rgb(bytes(data), op)
    except Exception as e:  # noqa: BLE001 - any decoder failure is a broken image
        raise PipelineError(op, f"Invalid image, {path} decode failed, the image is broken or permission "
                                "denied.", file=path) from e


def _read_all(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


class ImageListSource:
    """A ``RandomAccessSource`` of (image, label) rows over a list of image files."""

    def __init__(self, paths: Sequence[str], labels: np.ndarray, decode: bool,
                 decrypt: Callable[[str], bytes] | None, op: str,
                 names: Sequence[str] = ("image", "label")) -> None:
        self.column_names = list(names)
        self.paths = list(paths)
        self.labels = np.asarray(labels, dtype=np.int32)
        self.decode = decode
        self.decrypt = decrypt
        self.op = op

    def __len__(self) -> int:
        return len(self.paths)

    def read(self, index: int) -> tuple:
        path = self.paths[index]
        return load_image(path, self.decode, self.decrypt, self.op), np.array(self.labels[index], dtype=np.int32)

    def file_of(self, index: int) -> str:
        return self.paths[index]


class ImageFolderDataset(FileSourceDataset):
    """Images stored one folder per class: ``dataset_dir/<class name>/<image file>``.

    Rows are ``image`` (the file's bytes as a 1-D uint8 array, or a decoded HWC RGB uint8 image
    when ``decode`` is True) and ``label`` (int32 scalar). Classes are the sub-folders of
    ``dataset_dir`` in sorted order, numbered from 0, unless ``class_indexing`` names them; files in
    a class folder are read in sorted name order (sub-folders inside a class folder are skipped;
    MindSpore fails on them). Files directly in ``dataset_dir`` are ignored.

    Args:
        dataset_dir (str): Root folder.
        num_samples (int, optional): Rows to read. Default: None, all.
        num_parallel_workers (int, optional): Reader threads. Default: None, the configured number.
        shuffle (bool, optional): Shuffle the rows. Default: None (shuffled unless a sampler is given).
        sampler (Sampler, optional): Which rows to read. Default: None.
        extensions (list[str], optional): Keep only files with these extensions (case-sensitive,
            with the dot, e.g. ``[".JPEG", ".png"]``). Default: None, every file.
        class_indexing (dict[str, int], optional): Folder name to label; only these folders are read.
            Default: None.
        decode (bool, optional): Decode the images. Default: False.
        num_shards (int, optional): Split the rows into this many shards. Default: None.
        shard_id (int, optional): The shard to read. Default: None.
        cache (DatasetCache, optional): Not used by headrace. Default: None.
        decrypt (callable, optional): ``decrypt(path) -> bytes`` reads an encrypted file. Default: None.

    Raises:
        ValueError: If ``dataset_dir`` is not a folder.
        RuntimeError: If a folder named in ``class_indexing`` is missing, or (when iterating) no file
            was found or one cannot be read or decoded.

    Examples:
        >>> import os, tempfile, headrace.dataset as ds
        >>> root = tempfile.mkdtemp()
        >>> for c in ("cat", "dog"):
        ...     os.makedirs(os.path.join(root, c))
        ...     _ = open(os.path.join(root, c, "1.jpg"), "wb").write(b"raw")
        >>> d = ds.ImageFolderDataset(root, shuffle=False)
        >>> [(bytes(r["image"]), int(r["label"])) for r in d.create_dict_iterator(output_numpy=True)]
        [(b'raw', 0), (b'raw', 1)]
        >>> d.get_class_indexing()
        {'cat': 0, 'dog': 1}
    """

    def __init__(self, dataset_dir, num_samples=None, num_parallel_workers=None, shuffle=None, sampler=None,
                 extensions=None, class_indexing=None, decode=False, num_shards=None, shard_id=None,
                 cache=None, decrypt=None):
        self.dataset_dir = check_dir(dataset_dir)
        self.extensions = check_extensions(extensions)
        self.class_indexing = check_class_indexing(class_indexing)
        self.decode = check_decode(decode)
        self.decrypt = check_decrypt(decrypt)
        super().__init__(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache)

    def _scan(self) -> tuple[list[str], list[int], dict[str, int]]:
        root = self.dataset_dir
        if self.class_indexing is None:
            classes = sorted(e.name for e in os.scandir(root) if e.is_dir())
            indexing = {c: i for i, c in enumerate(classes)}
        else:
            for name in self.class_indexing:
                if not os.path.isdir(os.path.join(root, name)):
                    raise PipelineError(self._source_name(),
                                        f"Invalid subdirectory, class: {name} doesn't exist in {root} .")
            indexing = dict(self.class_indexing)
            classes = sorted(indexing)
        exts = None if self.extensions is None else set(self.extensions)
        paths, labels = [], []
        for cls in classes:
            folder = os.path.join(root, cls)
            names = sorted(e.name for e in os.scandir(folder) if not e.is_dir())
            for name in names:
                if exts is None or file_extension(name) in exts:
                    paths.append(os.path.join(folder, name))
                    labels.append(indexing[cls])
        return paths, labels, indexing

    def _listing(self) -> tuple[list[str], list[int], dict[str, int]]:
        listing = self.__dict__.get("_listing_cache")
        if listing is None:
            listing = self.__dict__["_listing_cache"] = self._scan()
        return listing

    def _make_source(self) -> ImageListSource:
        paths, labels, _ = self._listing()
        return ImageListSource(paths, np.asarray(labels, dtype=np.int32), self.decode, self.decrypt,
                               self._source_name())

    def _no_data_detail(self) -> str:
        return NO_DATA.format(op=self._source_name(), what="image folder file path", path=self.dataset_dir)

    def _labels(self) -> np.ndarray:
        return np.asarray(self._listing()[1], dtype=np.int64)

    def _class_indexing(self) -> dict[str, int]:
        return dict(self._listing()[2])

    def _num_classes(self) -> int:
        return len(self._listing()[2])
