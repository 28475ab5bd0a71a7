"""Image sources listed by folder or list file: ImageFolderDataset, ManifestDataset, CelebADataset."""
from __future__ import annotations

import json
import os
from typing import Callable, Sequence

import numpy as np

from headrace._util import checks
from headrace._util.errors import PipelineError
from headrace.dataset._sources._files import (
    FileSourceDataset, NO_DATA, as_uint8, check_class_indexing, check_decode, check_decrypt, check_dir,
    check_extensions, file_extension, open_data, open_text, read_bytes,
)
from headrace._image.decode import decode_rgb
from headrace.dataset._sources._files import check_file

__all__ = ["CelebADataset", "ImageFolderDataset", "ImageListSource", "ManifestDataset", "load_image"]


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
    try:
        return decode_rgb(bytes(data), op, where=f"file: {path}")
    except Exception as e:  # noqa: BLE001 - any decoder failure is a broken image
        raise PipelineError(op, f"Invalid image, {path} decode failed, the image is broken or permission "
                                f"denied ({e}).", file=path) from e


def _read_all(path: str) -> bytes:
    return read_bytes(path)


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


def _check_class_name(name: str) -> None:
    """A class of ImageFolderDataset is the name of a sub-folder of ``dataset_dir``, not a path:
    ``'..'``, ``'a/b'`` or an absolute path would read files outside the class folders (MindSpore
    lists the sub-folders and never matches such names, so it reads nothing for them)."""
    bad = (not name or name in (".", "..") or "/" in name or "\0" in name
           or (os.sep != "/" and os.sep in name) or (os.altsep is not None and os.altsep in name))
    if bad:
        raise ValueError(f"class_indexing key {name!r} is not a folder name: the keys of class_indexing name "
                         "sub-folders of dataset_dir (class names are names, not paths), so they may not be "
                         "empty, '.', '..', or hold a path separator.")


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
            Keys are names of sub-folders of ``dataset_dir``, never paths. Default: None.
        decode (bool, optional): Decode the images. Default: False.
        num_shards (int, optional): Split the rows into this many shards. Default: None.
        shard_id (int, optional): The shard to read. Default: None.
        cache (DatasetCache, optional): cache the rows (``headrace.dataset.cache``). Default: None.
        decrypt (callable, optional): ``decrypt(path) -> bytes`` reads an encrypted file. Default: None.

    Raises:
        ValueError: If ``dataset_dir`` is not a folder, or a key of ``class_indexing`` is not a
            folder name (empty, ``'.'``, ``'..'``, or holding a path separator).
        RuntimeError: If a folder named in ``class_indexing`` is missing, or (when iterating) no file
            was found or one cannot be read (it is a FIFO or device, not a regular file) or decoded.

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
        if self.class_indexing is not None:
            for name in self.class_indexing:
                _check_class_name(name)
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


# --------------------------------------------------------------------------------------------
# ManifestDataset
# --------------------------------------------------------------------------------------------

_IMAGE_MAGIC = (b"\xff\xd8\xff", b"\x89PNG", b"GIF8", b"BM")
_MANIFEST_USAGES = ("train", "eval", "inference")


def _is_image_file(path: str, op: str) -> bool:
    with open_data(path, op) as f:
        head = f.read(4)
    return any(head.startswith(m) for m in _IMAGE_MAGIC)


class ManifestSource(ImageListSource):
    """(image, label) rows where a label is an int32 scalar, or a 1-D array for several labels."""

    def __init__(self, paths: Sequence[str], labels: Sequence[np.ndarray], decode: bool, op: str) -> None:
        super().__init__(paths, np.zeros(len(paths), np.int32), decode, None, op)
        self.label_arrays = list(labels)

    def read(self, index: int) -> tuple:
        path = self.paths[index]
        return load_image(path, self.decode, None, self.op), self.label_arrays[index].copy()


class ManifestDataset(FileSourceDataset):
    """Images and labels listed in a manifest file (Huawei ModelArts format): one JSON object per
    line with ``source`` (the image path), ``usage`` and ``annotation`` (a list of ``{"name": ...}``).

    Lines of the given usage (compared case-insensitively) whose source is a JPEG, PNG, GIF or BMP
    file (judged by its first bytes) become rows, in file order: ``image`` (bytes, or decoded) and
    ``label`` (int32: a scalar for one annotation, a 1-D array for several). Labels number the
    annotation names of those lines in sorted order, unless ``class_indexing`` names them (then
    other names are dropped, and lines left without a label too).

    Args:
        dataset_file (str): The manifest file.
        usage (str, optional): "train", "eval" or "inference". Default: "train".
        num_samples (int, optional): Rows to read. Default: None, all.
        num_parallel_workers (int, optional): Reader threads. Default: None, the configured number.
        shuffle (bool, optional): Shuffle the rows. Default: None (shuffled unless a sampler is given).
        sampler (Sampler, optional): Which rows to read. Default: None.
        class_indexing (dict, optional): Annotation name to label. Default: None.
        decode (bool, optional): Decode the images. Default: False.
        num_shards (int, optional): Split the rows into this many shards. Default: None.
        shard_id (int, optional): The shard to read. Default: None.
        cache (DatasetCache, optional): cache the rows (``headrace.dataset.cache``). Default: None.

    Raises:
        ValueError: If the file does not exist or ``usage`` is not valid.
        RuntimeError: If a line is not JSON, lacks a label name, or names a missing image.

    Examples:
        >>> import json, os, tempfile, headrace.dataset as ds
        >>> root = tempfile.mkdtemp()
        >>> _ = open(os.path.join(root, "a.png"), "wb").write(b"\\x89PNG fake")
        >>> line = {"source": os.path.join(root, "a.png"), "usage": "train", "annotation": [{"name": "cat"}]}
        >>> _ = open(os.path.join(root, "data.manifest"), "w").write(json.dumps(line) + "\\n")
        >>> d = ds.ManifestDataset(os.path.join(root, "data.manifest"), shuffle=False)
        >>> [int(r["label"]) for r in d.create_dict_iterator(output_numpy=True)], d.get_class_indexing()
        ([0], {'cat': 0})
    """

    def __init__(self, dataset_file, usage="train", num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, class_indexing=None, decode=False, num_shards=None, shard_id=None, cache=None):
        self.dataset_file = check_file(dataset_file)
        checks.check_type(usage, str, "usage")
        if usage not in _MANIFEST_USAGES:
            raise ValueError(f"Input usage is not within the valid set of {list(_MANIFEST_USAGES)}.")
        self.usage = usage
        self.class_indexing = check_class_indexing(class_indexing)
        self.decode = check_decode(decode)
        super().__init__(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache)

    def _parsed(self) -> tuple[list[str], list[np.ndarray], dict[str, int]]:
        cached = self.__dict__.get("_parsed_cache")
        if cached is not None:
            return cached
        op, path = self._source_name(), self.dataset_file
        entries: list[tuple[str, list[str]]] = []
        with open_text(path, op) as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                except ValueError as e:
                    raise PipelineError(op, f"Invalid manifest file, parse ManiFest file: {path} failed at line "
                                            f"{lineno}: {e}", file=path) from e
                source = item.get("source", "") if isinstance(item, dict) else ""
                if not source:
                    continue
                if not os.path.isfile(source):
                    raise PipelineError(op, f"Invalid file path, {source} does not exist (line {lineno} of {path}).",
                                        file=path)
                if not _is_image_file(source, op) or str(item.get("usage", "")).lower() != self.usage:
                    continue
                names = []
                for ann in item.get("annotation") or []:
                    name = ann.get("name", "") if isinstance(ann, dict) else ""
                    if not name:
                        raise PipelineError(op, f"Invalid manifest file, parse label name failed at line {lineno} of "
                                                f"{path}.", file=path)
                    names.append(name)
                entries.append((source, names))
        if self.class_indexing is None:
            indexing = {n: k for k, n in enumerate(sorted({n for _, names in entries for n in names}))}
        else:
            indexing = dict(self.class_indexing)
        paths, labels = [], []
        for source, names in entries:
            ids = [indexing[n] for n in names if n in indexing]
            if not ids:
                continue
            paths.append(source)
            labels.append(np.array(ids[0] if len(ids) == 1 else ids, dtype=np.int32))
        cached = self.__dict__["_parsed_cache"] = (paths, labels, indexing)
        return cached

    def _make_source(self) -> ManifestSource:
        paths, labels, _ = self._parsed()
        return ManifestSource(paths, labels, self.decode, self._source_name())

    def _no_data_detail(self) -> str:
        return NO_DATA.format(op=self._source_name(), what="file path", path=self.dataset_file)

    def _labels(self) -> np.ndarray:
        return np.array([int(np.ravel(lab)[0]) for lab in self._parsed()[1]], dtype=np.int64)

    def _class_indexing(self) -> dict[str, int]:
        return dict(self._parsed()[2])

    def _num_classes(self) -> int:
        return len(self._parsed()[2])


# --------------------------------------------------------------------------------------------
# CelebADataset
# --------------------------------------------------------------------------------------------

_CELEBA_USAGES = {"train": "0", "valid": "1", "test": "2"}


class CelebASource(ImageListSource):
    def __init__(self, paths: Sequence[str], attrs: np.ndarray, decode: bool, decrypt, op: str) -> None:
        super().__init__(paths, np.zeros(len(paths), np.int32), decode, decrypt, op, ("image", "attr"))
        self.attrs = attrs

    def read(self, index: int) -> tuple:
        return load_image(self.paths[index], self.decode, self.decrypt, self.op), self.attrs[index].copy()


class CelebADataset(FileSourceDataset):
    """CelebA faces with their 40 binary attributes.

    ``dataset_dir`` holds the images, ``list_attr_celeba.txt`` (a count line, a line of attribute
    names, then ``<image> <+1/-1 ...>`` per image) and, for a usage other than "all",
    ``list_eval_partition.txt`` (``<image> <0 train / 1 valid / 2 test>``). Rows follow the attribute
    file: ``image`` (bytes, or decoded) and ``attr`` (uint32, 1 where the file says 1, else 0).

    Args:
        dataset_dir (str): The CelebA folder.
        num_parallel_workers (int, optional): Reader threads. Default: None, the configured number.
        shuffle (bool, optional): Shuffle the rows. Default: None (shuffled unless a sampler is given).
        usage (str, optional): "train", "valid", "test" or "all". Default: "all".
        sampler (Sampler, optional): Which rows to read. Default: None.
        decode (bool, optional): Decode the images. Default: False.
        extensions (list[str], optional): Keep only images with these extensions. Default: None, all.
        num_samples (int, optional): Rows to read. Default: None, all.
        num_shards (int, optional): Split the rows into this many shards. Default: None.
        shard_id (int, optional): The shard to read. Default: None.
        cache (DatasetCache, optional): cache the rows (``headrace.dataset.cache``). Default: None.
        decrypt (callable, optional): ``decrypt(path) -> bytes`` reads an encrypted image. Default: None.

    Raises:
        ValueError: If the folder does not exist or ``usage`` is not valid.
        RuntimeError: If a list file is missing or malformed (the message names it and the line).

    Examples:
        >>> import os, tempfile, headrace.dataset as ds
        >>> root = tempfile.mkdtemp()
        >>> _ = open(os.path.join(root, "1.jpg"), "wb").write(b"jpeg bytes")
        >>> _ = open(os.path.join(root, "list_attr_celeba.txt"), "w").write("1\\nSmiling Young\\n1.jpg 1 -1\\n")
        >>> [r["attr"].tolist() for r in ds.CelebADataset(root).create_dict_iterator(output_numpy=True)]
        [[1, 0]]
    """

    def __init__(self, dataset_dir, num_parallel_workers=None, shuffle=None, usage="all", sampler=None, decode=False,
                 extensions=None, num_samples=None, num_shards=None, shard_id=None, cache=None, decrypt=None):
        self.dataset_dir = check_dir(dataset_dir)
        checks.check_type(usage, str, "usage")
        if usage not in ("all", "train", "valid", "test"):
            raise ValueError("usage should be 'all', 'train', 'valid' or 'test'.")
        self.usage = usage
        self.decode = check_decode(decode)
        self.extensions = check_extensions(extensions)
        self.decrypt = check_decrypt(decrypt)
        super().__init__(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache)

    def _list_file(self, name: str) -> str:
        path = os.path.join(self.dataset_dir, name)
        if not os.path.exists(path):  # anything else that is not a regular file: refused when opened
            raise PipelineError(self._source_name(), f"Invalid file path, {path} does not exist.", file=path)
        return path

    def _make_source(self) -> CelebASource:
        op = self._source_name()
        attr_path = self._list_file("list_attr_celeba.txt")
        with open_text(attr_path, op) as f:
            lines = f.read().splitlines()
        if len(lines) < 2:
            raise PipelineError(op, f"Invalid file, {attr_path} needs a count line and an attribute-name line.",
                                file=attr_path)
        nattr = len(lines[1].split())
        keep = None
        if self.usage != "all":
            part_path = self._list_file("list_eval_partition.txt")
            want = _CELEBA_USAGES[self.usage]
            keep = set()
            with open_text(part_path, op) as f:
                for lineno, line in enumerate(f, 1):
                    parts = line.split()
                    if not parts:
                        continue
                    if len(parts) != 2:
                        raise PipelineError(op, f"Invalid file, line {lineno} of {part_path} should be "
                                                f"'<image> <partition>', but got {line.strip()!r}.", file=part_path)
                    if parts[1] == want:
                        keep.add(parts[0])
        exts = None if self.extensions is None else set(self.extensions)
        paths, attrs = [], []
        for lineno, line in enumerate(lines[2:], 3):
            parts = line.split()
            if not parts:
                continue
            name, values = parts[0], parts[1:]
            if len(values) != nattr:
                raise PipelineError(op, f"Invalid file, line {lineno} of {attr_path} has {len(values)} attribute "
                                        f"values, but the file names {nattr} attributes.", file=attr_path)
            if keep is not None and name not in keep:
                continue
            if exts is not None and file_extension(name) not in exts:
                continue
            try:
                attrs.append([1 if int(v) == 1 else 0 for v in values])
            except ValueError:
                raise PipelineError(op, f"Invalid file, line {lineno} of {attr_path} holds a value that is not an "
                                        "integer.", file=attr_path) from None
            paths.append(os.path.join(self.dataset_dir, name))
        return CelebASource(paths, np.array(attrs, dtype=np.uint32).reshape(len(paths), nattr), self.decode,
                            self.decrypt, op)

    def _no_data_detail(self) -> str:
        return NO_DATA.format(op=self._source_name(), what="file path", path=self.dataset_dir)
