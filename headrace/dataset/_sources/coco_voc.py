"""CocoDataset and VOCDataset: images with annotations (boxes, masks, keypoints, captions).

Annotations are parsed when the pipeline is first built (one JSON file, or one XML file per
image) and held in memory as small arrays; images are read by index.
"""
from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from typing import Any, Callable, Sequence

import numpy as np

from headrace._util import checks
from headrace._util.errors import PipelineError
from headrace.dataset._sources._docs import with_args
from headrace.dataset._sources._files import (
    FileSourceDataset, NO_DATA, check_class_indexing, check_decode, check_decrypt, check_dir, check_file, open_data,
    open_text,
)
from headrace.dataset._sources.vision_folders import load_image

__all__ = ["CocoDataset", "VOCDataset"]

META = "_meta-filename"

# The Args lines of the arguments both datasets take after their own, in place of the line
# ``{read_args}`` of their docstrings.
_with_read_args = with_args("read_args", (
    "num_samples (int, optional): Rows to read. Default: None, all.",
    "num_parallel_workers (int, optional): Reader threads. Default: None, the configured number.",
    "shuffle (bool, optional): Shuffle the rows. Default: None (shuffled unless a sampler is given).",
    "decode (bool, optional): Decode the images. Default: False.",
    "sampler (Sampler, optional): Which rows to read. Default: None.",
    "num_shards (int, optional): Split the rows into this many shards. Default: None.",
    "shard_id (int, optional): The shard to read. Default: None.",
    "cache (DatasetCache, optional): cache the rows (``headrace.dataset.cache``). Default: None.",
    "extra_metadata (bool, optional): Add the ``_meta-filename`` column. Default: False.",
    "decrypt (callable, optional): ``decrypt(path) -> bytes`` reads an encrypted image. Default: None.",
))


class AnnotatedImages:
    """Rows (image, *annotation arrays[, meta]) over image files with pre-parsed annotations.

    ``extra_files`` adds file columns read like the image (VOC segmentation masks).
    """

    def __init__(self, names: Sequence[str], images: Sequence[str], annotations: Sequence[tuple],
                 decode: bool, decrypt: Callable[[str], bytes] | None, op: str,
                 meta: Sequence[str] | None = None, extra_files: Sequence[Sequence[str]] = ()) -> None:
        self.column_names = list(names)
        self.images = list(images)
        self.annotations = list(annotations)
        self.decode = decode
        self.decrypt = decrypt
        self.op = op
        self.meta = list(meta) if meta is not None else None
        self.extra_files = [list(f) for f in extra_files]

    def __len__(self) -> int:
        return len(self.images)

    def read(self, index: int) -> tuple:
        row = [load_image(self.images[index], self.decode, self.decrypt, self.op)]
        for files in self.extra_files:
            row.append(load_image(files[index], self.decode, self.decrypt, self.op))
        row.extend(a.copy() for a in self.annotations[index])
        if self.meta is not None:
            row.append(np.array(self.meta[index]))
        return tuple(row)

    def file_of(self, index: int) -> str | None:
        return self.images[index] if 0 <= index < len(self.images) else None


def _check_task(task: Any, tasks: Sequence[str], message: str) -> str:
    checks.check_type(task, str, "task")
    if task not in tasks:
        raise ValueError(message.format(task=task))
    return task


# --------------------------------------------------------------------------------------------
# VOC
# --------------------------------------------------------------------------------------------

def _num(value: float) -> str:
    return f"{value:g}"


class _VocObject:
    __slots__ = ("name", "box", "difficult", "truncated")

    def __init__(self, name: str, box: tuple[float, float, float, float], difficult: int, truncated: int) -> None:
        self.name, self.box, self.difficult, self.truncated = name, box, difficult, truncated


def _parse_voc_xml(path: str, op: str) -> list[_VocObject]:
    if not os.path.isfile(path):
        raise PipelineError(op, f"Invalid file path, {path} does not exist.", file=path)
    try:
        with open_data(path, op) as f:
            root = ET.parse(f).getroot()
    except (ET.ParseError, OSError) as e:
        raise PipelineError(op, f"Invalid xml, failed to load {path}: the xml file is damaged or incorrect format "
                                f"({e}).", file=path) from e
    objects = root.findall("object")
    if not objects:
        raise PipelineError(op, f"Invalid xml, the node of object is missing in {path}.", file=path)
    out = []
    for obj in objects:
        name = (obj.findtext("name") or "").strip()
        box = obj.find("bndbox")
        if box is None:
            raise PipelineError(op, f"Invalid xml, the node of bndbox is missing in {path}", file=path)
        try:
            xmin, ymin, xmax, ymax = (float(box.findtext(k)) for k in ("xmin", "ymin", "xmax", "ymax"))
        except (TypeError, ValueError) as e:
            raise PipelineError(op, f"Invalid xml, the bndbox of object {name!r} in {path} needs numeric xmin, ymin, "
                                    "xmax and ymax.", file=path) from e
        if not (xmin > 0 and ymin > 0 and xmax > xmin and ymax > ymin):
            raise PipelineError(op, f"Invalid bndbox, the coordinate of bndbox in {path} should be greater than 0, but "
                                    f"got {{{_num(xmin)}, {_num(ymin)}, {_num(xmax)}, {_num(ymax)}}}", file=path)

        def flag(tag: str) -> int:
            text = obj.findtext(tag)
            try:
                return int(float(text)) if text is not None and text.strip() else 0
            except ValueError:
                raise PipelineError(op, f"Invalid xml, <{tag}> of object {name!r} in {path} is not a number: "
                                        f"{text!r}.", file=path) from None
        out.append(_VocObject(name, (xmin, ymin, xmax, ymax), flag("difficult"), flag("truncated")))
    return out


@_with_read_args
class VOCDataset(FileSourceDataset):
    """PASCAL VOC: images with segmentation masks or detection boxes.

    Image ids come from ``ImageSets/Segmentation/<usage>.txt`` (Segmentation) or
    ``ImageSets/Main/<usage>.txt`` (Detection), in file order; images are
    ``JPEGImages/<id>.jpg``, masks ``SegmentationClass/<id>.png`` and boxes
    ``Annotations/<id>.xml``.

    Columns: Segmentation ``image``, ``target`` (the files' bytes, or decoded HWC RGB with
    ``decode``); Detection ``image``, ``bbox`` (float32 (n, 4): xmin, ymin, width, height),
    ``label``, ``difficult``, ``truncate`` (uint32 (n, 1) each). Detection labels number the
    object names of the listed images in sorted order, unless ``class_indexing`` names them (then
    other objects are dropped, and images left with none too). ``extra_metadata`` adds the column
    ``_meta-filename`` (the image id).

    Args:
        dataset_dir (str): The VOC folder (``VOC2012`` or similar).
        task (str, optional): "Segmentation" or "Detection". Default: "Segmentation".
        usage (str, optional): The ImageSets list to read ("train", "val", "trainval", ...). Default: "train".
        class_indexing (dict, optional): Object name to label (Detection only). Default: None.
        {read_args}

    Raises:
        ValueError: If the folder or the ImageSets list does not exist, or an argument is invalid.
        RuntimeError: If an annotation is missing or damaged (the message names the file).

    Examples:
        >>> import os, tempfile, headrace.dataset as ds
        >>> root = tempfile.mkdtemp()
        >>> for sub in ("ImageSets/Main", "JPEGImages", "Annotations"):
        ...     os.makedirs(os.path.join(root, sub))
        >>> _ = open(os.path.join(root, "ImageSets/Main/train.txt"), "w").write("img1\\n")
        >>> _ = open(os.path.join(root, "JPEGImages/img1.jpg"), "wb").write(b"jpeg bytes")
        >>> _ = open(os.path.join(root, "Annotations/img1.xml"), "w").write(
        ...     "<annotation><object><name>dog</name><bndbox><xmin>1</xmin><ymin>2</ymin>"
        ...     "<xmax>4</xmax><ymax>3</ymax></bndbox></object></annotation>")
        >>> d = ds.VOCDataset(root, task="Detection", shuffle=False)
        >>> [(r["bbox"].tolist(), r["label"].tolist()) for r in d.create_dict_iterator(output_numpy=True)]
        [([[1.0, 2.0, 3.0, 1.0]], [[0]])]
        >>> d.get_class_indexing()
        {'dog': 0}
    """

    def __init__(self, dataset_dir, task="Segmentation", usage="train", class_indexing=None, num_samples=None,
                 num_parallel_workers=None, shuffle=None, decode=False, sampler=None, num_shards=None, shard_id=None,
                 cache=None, extra_metadata=False, decrypt=None):
        self.dataset_dir = check_dir(dataset_dir)
        self.task = _check_task(task, ("Segmentation", "Detection"), "Invalid task : {task}.")
        checks.check_type(usage, str, "usage")
        self.usage = usage
        self.class_indexing = check_class_indexing(class_indexing)
        if self.task == "Segmentation" and self.class_indexing is not None:
            raise ValueError("class_indexing is not supported in Segmentation task.")
        self.decode = check_decode(decode)
        self.extra_metadata = checks.check_bool(extra_metadata, "extra_metadata")
        self.decrypt = check_decrypt(decrypt)
        sets = "Segmentation" if self.task == "Segmentation" else "Main"
        self.image_set = check_file(os.path.join(self.dataset_dir, "ImageSets", sets, f"{usage}.txt"), "usage")
        super().__init__(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache)

    def _ids(self) -> list[str]:
        with open_text(self.image_set, self._source_name()) as f:
            return [line.strip() for line in f if line.strip()]

    def _parsed(self) -> tuple[list[str], list[tuple], dict[str, int]]:
        cached = self.__dict__.get("_parsed_cache")
        if cached is not None:
            return cached
        ids = self._ids()
        op = self._source_name()
        if self.task == "Segmentation":
            cached = (ids, [() for _ in ids], {})
        else:
            objects = [_parse_voc_xml(os.path.join(self.dataset_dir, "Annotations", f"{i}.xml"), op) for i in ids]
            if self.class_indexing is None:
                names = sorted({o.name for objs in objects for o in objs})
                indexing = {n: k for k, n in enumerate(names)}
            else:
                indexing = dict(self.class_indexing)
            kept_ids, annots = [], []
            for i, objs in zip(ids, objects):
                objs = [o for o in objs if o.name in indexing]
                if not objs:
                    continue
                kept_ids.append(i)
                bbox = np.array([[o.box[0], o.box[1], o.box[2] - o.box[0], o.box[3] - o.box[1]] for o in objs],
                                dtype=np.float32)
                col = lambda values: np.array(values, dtype=np.uint32).reshape(-1, 1)  # noqa: E731
                annots.append((bbox, col([indexing[o.name] for o in objs]), col([o.difficult for o in objs]),
                               col([o.truncated for o in objs])))
            cached = (kept_ids, annots, indexing)
        self.__dict__["_parsed_cache"] = cached
        return cached

    def _make_source(self) -> AnnotatedImages:
        ids, annots, _ = self._parsed()
        root = self.dataset_dir
        images = [os.path.join(root, "JPEGImages", f"{i}.jpg") for i in ids]
        if self.task == "Segmentation":
            names = ["image", "target"]
            extra = [[os.path.join(root, "SegmentationClass", f"{i}.png") for i in ids]]
        else:
            names = ["image", "bbox", "label", "difficult", "truncate"]
            extra = []
        meta = ids if self.extra_metadata else None
        if meta is not None:
            names.append(META)
        return AnnotatedImages(names, images, annots, self.decode, self.decrypt, self._source_name(), meta, extra)

    def _no_data_detail(self) -> str:
        return NO_DATA.format(op=self._source_name(), what="file", path=self.image_set)

    def _class_indexing(self):
        if self.task != "Detection":
            raise NotImplementedError("Only 'Detection' support get_class_indexing.")
        return dict(self._parsed()[2])

    def _num_classes(self):
        return None


# --------------------------------------------------------------------------------------------
# COCO
# --------------------------------------------------------------------------------------------

_COCO_TASKS = ("Detection", "Stuff", "Keypoint", "Panoptic", "Captioning")
_COCO_COLUMNS = {
    "Detection": ["image", "bbox", "category_id", "iscrowd"],
    "Stuff": ["image", "segmentation", "iscrowd"],
    "Keypoint": ["image", "keypoints", "num_keypoints"],
    "Panoptic": ["image", "bbox", "category_id", "iscrowd", "area"],
    "Captioning": ["image", "captions"],
}


class _CocoParser:
    """Turns a COCO annotation file into per-image annotation arrays for one task."""

    def __init__(self, path: str, task: str, op: str) -> None:
        self.path, self.task, self.op = path, task, op

    def fail(self, detail: str, where: str = "") -> PipelineError:
        return PipelineError(self.op, f"Invalid annotation, {detail} in annotation file: {self.path}.{where}",
                             file=self.path)

    def load(self) -> dict:
        try:
            with open_text(self.path, self.op) as f:
                doc = json.load(f)
        except (ValueError, UnicodeDecodeError) as e:
            raise PipelineError(self.op, f"Invalid annotation file, Coco Dataset annotation file:{self.path} load "
                                         f"failed, error description: {e}", file=self.path) from e
        if not isinstance(doc, dict):
            raise self.fail("the top level is not a JSON object")
        return doc

    def get(self, node: dict, key: str, where: str = "annotation") -> Any:
        if not isinstance(node, dict) or key not in node:
            ident = node.get("id") if isinstance(node, dict) else None
            raise self.fail(f"the attribute of '{key}' is missing",
                            f" (in the {where}{'' if ident is None else f' with id {ident}'})")
        return node[key]

    def parse(self) -> tuple[list[dict], list[tuple], dict]:
        doc = self.load()
        images = doc.get("images")
        if not images or not isinstance(images, list):
            raise self.fail("the 'image' node is missing")
        anns = doc.get("annotations")
        if not isinstance(anns, list):
            raise self.fail("the 'annotations' node is missing")
        by_id: dict[Any, int] = {}
        for k, img in enumerate(images):
            by_id[self.get(img, "id", "image")] = k
            self.get(img, "file_name", "image")
        per_image: list[list[dict]] = [[] for _ in images]
        for ann in anns:
            image_id = self.get(ann, "image_id")
            if image_id not in by_id:
                raise PipelineError(self.op, f"Invalid annotation, the attribute of 'image_id': {image_id} is missing in "
                                             f"the node of 'image' from annotation file: {self.path}", file=self.path)
            per_image[by_id[image_id]].append(ann)
        indexing = self.categories(doc)
        rows, annots = [], []
        for img, group in zip(images, per_image):
            if self.task == "Panoptic":
                group = [seg for ann in group for seg in self.get(ann, "segments_info")]
            if not group:
                continue
            rows.append(img)
            annots.append(getattr(self, "_" + self.task.lower())(group))
        return rows, annots, indexing

    def categories(self, doc: dict) -> dict:
        cats = doc.get("categories")
        if self.task not in ("Detection", "Panoptic"):
            return {}
        if not isinstance(cats, list):
            raise self.fail("the 'categories' node is missing")
        out = {}
        for cat in cats:
            name, cid = self.get(cat, "name", "category"), self.get(cat, "id", "category")
            if self.task == "Panoptic":
                if "isthing" not in cat:
                    raise PipelineError(self.op, "Invalid annotation, the attribute of 'isthing' is missing in the node "
                                                 f"of 'categories' from annotation file: {self.path}", file=self.path)
                out[name] = [cid, cat["isthing"]]
            else:
                out[name] = [cid]
        return out

    @staticmethod
    def _col(values: Sequence[Any]) -> np.ndarray:
        return np.array(values, dtype=np.uint32).reshape(-1, 1)

    def _boxes(self, group: list[dict]) -> np.ndarray:
        boxes = [self.get(a, "bbox") for a in group]
        if any(not isinstance(b, list) or len(b) != 4 for b in boxes):
            raise self.fail("a 'bbox' is not a list of 4 numbers")
        return np.array(boxes, dtype=np.float32).reshape(-1, 4)

    def _detection(self, group: list[dict]) -> tuple:
        return (self._boxes(group), self._col([self.get(a, "category_id") for a in group]),
                self._col([a.get("iscrowd", 0) for a in group]))

    def _panoptic(self, group: list[dict]) -> tuple:
        return (self._boxes(group), self._col([self.get(a, "category_id", "segments_info") for a in group]),
                self._col([self.get(a, "iscrowd", "segments_info") for a in group]),
                self._col([self.get(a, "area", "segments_info") for a in group]))

    def _stuff(self, group: list[dict]) -> tuple:
        polys: list[list[float]] = []
        for a in group:
            seg = self.get(a, "segmentation")
            if self.get(a, "iscrowd"):
                if not isinstance(seg, dict) or "counts" not in seg:
                    raise self.fail("the attribute of 'counts' is missing")
                if not isinstance(seg["counts"], list):
                    raise self.fail("'counts' is a compressed RLE string; only uncompressed RLE lists are read")
                polys.append(seg["counts"])
            else:
                if not isinstance(seg, list):
                    raise self.fail("a 'segmentation' of a non-crowd annotation is not a list of polygons")
                polys.extend(seg)
        width = max((len(p) for p in polys), default=0)
        out = np.full((len(polys), width), -1.0, dtype=np.float32)
        for k, p in enumerate(polys):
            out[k, :len(p)] = p
        return out, self._col([self.get(a, "iscrowd") for a in group])

    def _keypoint(self, group: list[dict]) -> tuple:
        points = [self.get(a, "keypoints") for a in group]
        if len({len(p) for p in points}) > 1:
            raise self.fail("the 'keypoints' of one image have different lengths")
        return (np.array(points, dtype=np.float32).reshape(len(points), -1),
                self._col([self.get(a, "num_keypoints") for a in group]))

    def _captioning(self, group: list[dict]) -> tuple:
        return (np.array([str(self.get(a, "caption")) for a in group]).reshape(-1, 1),)


@_with_read_args
class CocoDataset(FileSourceDataset):
    """COCO: images listed in an annotation file, with one task's annotations.

    Rows follow the order of ``images`` in the annotation file; images without annotations are
    skipped. Columns by task (arrays hold one row per annotation):

    * Detection: ``image``, ``bbox`` (float32 (n, 4)), ``category_id``, ``iscrowd`` (uint32 (n, 1);
      0 where an annotation has none);
    * Stuff: ``image``, ``segmentation`` (float32, one row per polygon or uncompressed RLE
      ``counts`` list, padded with -1), ``iscrowd``;
    * Keypoint: ``image``, ``keypoints`` (float32 (n, 51)), ``num_keypoints``;
    * Panoptic: ``image``, ``bbox``, ``category_id``, ``iscrowd``, ``area`` (from ``segments_info``);
    * Captioning: ``image``, ``captions`` (strings (n, 1)).

    ``extra_metadata`` adds ``_meta-filename`` (the image file name without its extension).

    Args:
        dataset_dir (str): Folder of the images (``file_name`` is relative to it).
        annotation_file (str): The annotation JSON file.
        task (str, optional): "Detection", "Stuff", "Keypoint", "Panoptic" or "Captioning".
            Default: "Detection".
        {read_args}

    Raises:
        ValueError: If a path does not exist or an argument is invalid.
        RuntimeError: If the annotation file is damaged or lacks a field (the message names it).

    Examples:
        >>> import json, os, tempfile, headrace.dataset as ds
        >>> root = tempfile.mkdtemp()
        >>> _ = open(os.path.join(root, "a.jpg"), "wb").write(b"jpeg bytes")
        >>> ann = {"images": [{"id": 1, "file_name": "a.jpg"}], "categories": [{"id": 7, "name": "cat"}],
        ...        "annotations": [{"id": 1, "image_id": 1, "category_id": 7, "bbox": [1, 2, 3, 4], "iscrowd": 0}]}
        >>> json.dump(ann, open(os.path.join(root, "ann.json"), "w"))
        >>> d = ds.CocoDataset(root, os.path.join(root, "ann.json"), shuffle=False)
        >>> [(r["bbox"].tolist(), r["category_id"].tolist()) for r in d.create_dict_iterator(output_numpy=True)]
        [([[1.0, 2.0, 3.0, 4.0]], [[7]])]
        >>> d.get_class_indexing()
        {'cat': [7]}
    """

    def __init__(self, dataset_dir, annotation_file, task="Detection", num_samples=None, num_parallel_workers=None,
                 shuffle=None, decode=False, sampler=None, num_shards=None, shard_id=None, cache=None,
                 extra_metadata=False, decrypt=None):
        self.dataset_dir = check_dir(dataset_dir)
        self.annotation_file = check_file(annotation_file, "annotation_file")
        self.task = _check_task(task, _COCO_TASKS, "Invalid task type: {task}.")
        self.decode = check_decode(decode)
        self.extra_metadata = checks.check_bool(extra_metadata, "extra_metadata")
        self.decrypt = check_decrypt(decrypt)
        super().__init__(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache)

    def _parsed(self) -> tuple[list[dict], list[tuple], dict]:
        cached = self.__dict__.get("_parsed_cache")
        if cached is None:
            cached = _CocoParser(self.annotation_file, self.task, self._source_name()).parse()
            self.__dict__["_parsed_cache"] = cached
        return cached

    def _make_source(self) -> AnnotatedImages:
        images, annots, _ = self._parsed()
        paths = [os.path.join(self.dataset_dir, str(img["file_name"])) for img in images]
        names = list(_COCO_COLUMNS[self.task])
        meta = None
        if self.extra_metadata:
            meta = [os.path.splitext(os.path.basename(str(img["file_name"])))[0] for img in images]
            names.append(META)
        return AnnotatedImages(names, paths, annots, self.decode, self.decrypt, self._source_name(), meta)

    def _no_data_detail(self) -> str:
        return NO_DATA.format(op=self._source_name(), what="annotation file", path=self.annotation_file)

    def _class_indexing(self):
        if self.task not in ("Detection", "Panoptic"):
            raise NotImplementedError("Only 'Detection' and 'Panoptic' support get_class_indexing.")
        return {k: list(v) for k, v in self._parsed()[2].items()}

    def _num_classes(self):
        return None
