"""Small data files in every format the sources read, written by the tests themselves."""
from __future__ import annotations

import io
import os
import struct

import numpy as np
from PIL import Image

from headrace.dataset._sources.tfrecord import write_tfrecord

__all__ = ["make_cifar", "make_image_folder", "make_mnist", "make_mnist_part", "png_bytes", "write_tfrecord"]


def png_bytes(seed: int, size=(5, 4)) -> bytes:
    """A small RGB PNG with pixels drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG")
    return buf.getvalue()


def make_image_folder(root, layout: dict[str, list[str]], encoded: bool = True) -> dict[str, bytes]:
    """Creates ``root/<class>/<file>`` for each class -> file names; returns path -> content."""
    out = {}
    for k, (cls, names) in enumerate(layout.items()):
        os.makedirs(os.path.join(root, cls), exist_ok=True)
        for j, name in enumerate(names):
            data = png_bytes(100 * k + j) if encoded else f"{cls}/{name}".encode()
            path = os.path.join(root, cls, name)
            with open(path, "wb") as f:
                f.write(data)
            out[path] = data
    return out


def make_mnist(root, prefix: str, n: int, seed: int, rows: int = 28, cols: int = 28):
    """Writes ``<prefix>-images-idx3-ubyte`` and ``<prefix>-labels-idx1-ubyte``; returns (images, labels)."""
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, rows, cols), dtype=np.uint8)
    labels = rng.integers(0, 10, n, dtype=np.uint8)
    with open(os.path.join(root, f"{prefix}-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, rows, cols) + images.tobytes())
    with open(os.path.join(root, f"{prefix}-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 2049, n) + labels.tobytes())
    return images, labels


MNIST_FILES = {"t10k-images": "t10k-images-idx3-ubyte", "t10k-labels": "t10k-labels-idx1-ubyte",
               "train-images": "train-images-idx3-ubyte", "train-labels": "train-labels-idx1-ubyte"}


def make_mnist_part(root, kept) -> None:
    """An MNIST folder holding only the files named in ``kept`` (keys of ``MNIST_FILES``): t10k of
    2 rows and train of 3, the others removed."""
    make_mnist(root, "t10k", 2, 1)
    make_mnist(root, "train", 3, 2)
    for kind, name in MNIST_FILES.items():
        if kind not in kept:
            os.remove(os.path.join(root, name))


def make_cifar(path, n: int, label_bytes: int, seed: int, sparse: bool = False):
    """Writes ``n`` CIFAR records; returns (images HWC, labels (n, label_bytes)).

    ``sparse`` leaves most pixels 0 (only row 0 is random) so that big files are cheap to make.
    """
    rng = np.random.default_rng(seed)
    high = (20, 100) if label_bytes == 2 else (10,)  # CIFAR-100: coarse, fine classes
    labels = rng.integers(0, high, (n, label_bytes), dtype=np.uint8)
    chw = np.zeros((n, 3, 32, 32), dtype=np.uint8)
    if sparse:
        chw[:, :, 0, :] = rng.integers(0, 256, (n, 3, 32), dtype=np.uint8)
    else:
        chw[:] = rng.integers(0, 256, chw.shape, dtype=np.uint8)
    rec = np.concatenate([labels, chw.reshape(n, -1)], axis=1)
    with open(path, "wb") as f:
        f.write(rec.tobytes())
    return chw.transpose(0, 2, 3, 1), labels


# ---- annotated image sets ---------------------------------------------------------------------

def _voc_object(name, box, difficult=0, truncated=0):
    return (f"<object><name>{name}</name><pose>Left</pose><truncated>{truncated}</truncated>"
            f"<difficult>{difficult}</difficult><bndbox><xmin>{box[0]}</xmin><ymin>{box[1]}</ymin>"
            f"<xmax>{box[2]}</xmax><ymax>{box[3]}</ymax></bndbox></object>")


def palette_png(seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    img = Image.fromarray(rng.integers(0, 3, (4, 5), dtype=np.uint8), mode="P")
    img.putpalette([0, 0, 0, 128, 0, 0, 0, 128, 0] + [0] * 759)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def make_voc(root) -> None:
    """A VOC tree with 3 images: segmentation lists train (2) / val (1), detection list train (3)."""
    for d in ["ImageSets/Segmentation", "ImageSets/Main", "JPEGImages", "SegmentationClass", "Annotations"]:
        os.makedirs(os.path.join(root, d), exist_ok=True)
    ids = ["2007_000002", "2007_000001", "2008_000003"]
    for k, i in enumerate(ids):
        with open(os.path.join(root, "JPEGImages", f"{i}.jpg"), "wb") as f:
            f.write(png_bytes(k))
        with open(os.path.join(root, "SegmentationClass", f"{i}.png"), "wb") as f:
            f.write(palette_png(k + 10))
    with open(os.path.join(root, "ImageSets/Segmentation/train.txt"), "w") as f:
        f.write("2007_000002\n2007_000001\n")
    with open(os.path.join(root, "ImageSets/Segmentation/val.txt"), "w") as f:
        f.write("2008_000003\n")
    with open(os.path.join(root, "ImageSets/Main/train.txt"), "w") as f:
        f.write("2007_000002\n2008_000003\n2007_000001\n")
    anns = {"2007_000002": [_voc_object("dog", (1, 2, 4, 3)), _voc_object("person", (1, 1, 2.5, 3), 1, 1)],
            "2008_000003": [_voc_object("cat", (2, 1, 5, 4))],
            "2007_000001": [_voc_object("dog", (3, 3, 4, 4), 0, 1)]}
    for i, objs in anns.items():
        with open(os.path.join(root, "Annotations", f"{i}.xml"), "w") as f:
            f.write(f"<annotation><folder>VOC</folder><filename>{i}.jpg</filename><size><width>5</width>"
                    f"<height>4</height><depth>3</depth></size>{''.join(objs)}</annotation>")


def make_coco(root) -> None:
    """images/ (b, a, c) and ann.json (detection-style), pan.json (panoptic), cap.json (captions)."""
    import json  # noqa: PLC0415
    os.makedirs(os.path.join(root, "images"), exist_ok=True)
    imgs = [{"id": 10, "file_name": "b.jpg", "width": 5, "height": 4}, {"id": 3, "file_name": "a.jpg"},
            {"id": 7, "file_name": "c.jpg"}, {"id": 8, "file_name": "unannotated.jpg"}]
    for k, im in enumerate(imgs):
        with open(os.path.join(root, "images", im["file_name"]), "wb") as f:
            f.write(png_bytes(k))
    cats = [{"id": 1, "name": "person", "isthing": 1}, {"id": 5, "name": "dog", "isthing": 0},
            {"id": 3, "name": "cat", "isthing": 1}]
    kp = lambda v: [v] * 51  # noqa: E731
    anns = [
        {"id": 0, "image_id": 7, "category_id": 3, "bbox": [1, 1, 1, 1], "iscrowd": 0, "area": 1,
         "segmentation": [[1, 1, 2, 1, 2, 2]], "keypoints": kp(1), "num_keypoints": 1},
        {"id": 1, "image_id": 10, "category_id": 5, "bbox": [1, 2, 3, 1.5], "iscrowd": 0, "area": 4.5,
         "segmentation": [[1, 1, 2, 2, 3, 1]], "keypoints": [1, 2, 2, 3, 4, 1] + [0] * 45, "num_keypoints": 2},
        {"id": 2, "image_id": 10, "category_id": 1, "bbox": [0, 0, 2, 2], "iscrowd": 1, "area": 4,
         "segmentation": {"counts": [2, 3, 4, 1], "size": [4, 5]}, "keypoints": kp(0), "num_keypoints": 0},
        {"id": 3, "image_id": 3, "category_id": 3, "bbox": [2, 1, 1, 1], "iscrowd": 0, "area": 1,
         "segmentation": [[2, 1, 3, 1, 3, 2], [0, 0, 1, 0, 1, 1]], "keypoints": kp(2), "num_keypoints": 17},
    ]
    with open(os.path.join(root, "ann.json"), "w") as f:
        json.dump({"images": imgs, "annotations": anns, "categories": cats}, f)
    panns = [{"image_id": 10, "file_name": "b.png", "segments_info": [
        {"id": 11, "category_id": 5, "bbox": [1, 2, 3, 1], "iscrowd": 0, "area": 3},
        {"id": 12, "category_id": 3, "bbox": [0, 0, 1, 1], "iscrowd": 1, "area": 1}]},
        {"image_id": 3, "file_name": "a.png", "segments_info": [
            {"id": 13, "category_id": 1, "bbox": [1, 1, 1, 1], "iscrowd": 0, "area": 1}]}]
    with open(os.path.join(root, "pan.json"), "w") as f:
        json.dump({"images": imgs, "annotations": panns, "categories": cats}, f)
    caps = [{"id": 1, "image_id": 10, "caption": "a dog"}, {"id": 2, "image_id": 10, "caption": "two"},
            {"id": 3, "image_id": 3, "caption": "cat here"}]
    with open(os.path.join(root, "cap.json"), "w") as f:
        json.dump({"images": imgs, "annotations": caps}, f)


def make_manifest(root) -> str:
    """Images of several kinds and a manifest file listing them; returns the manifest path."""
    import json  # noqa: PLC0415
    os.makedirs(root, exist_ok=True)
    for k, n in enumerate(["a", "b", "c", "d"]):
        with open(os.path.join(root, f"{n}.png"), "wb") as f:
            f.write(png_bytes(k))
    with open(os.path.join(root, "e.gif"), "wb") as f:
        f.write(b"GIF89a" + b"x" * 20)
    with open(os.path.join(root, "f.txt"), "wb") as f:
        f.write(b"plain text, not an image")
    cls = "modelarts/image_classification"
    lines = [
        {"source": os.path.join(root, "b.png"), "usage": "TRAIN",
         "annotation": [{"type": cls, "name": "dog"}, {"type": cls, "name": "cat"}]},
        {"source": os.path.join(root, "a.png"), "usage": "train", "annotation": [{"type": cls, "name": "cat"}]},
        {"source": os.path.join(root, "c.png"), "usage": "EVAL", "annotation": [{"type": cls, "name": "bird"}]},
        {"source": os.path.join(root, "e.gif"), "usage": "train", "annotation": [{"name": "gif"}]},
        {"source": os.path.join(root, "f.txt"), "usage": "train", "annotation": [{"name": "text"}]},
        {"source": os.path.join(root, "d.png"), "usage": "inference", "annotation": [{"name": "ant"}]},
    ]
    path = os.path.join(root, "m.manifest")
    with open(path, "w") as f:
        f.write("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def make_celeba(root) -> None:
    os.makedirs(root, exist_ok=True)
    names = ["000002.jpg", "000001.jpg", "000003.png", "000004.jpg"]
    for k, n in enumerate(names):
        with open(os.path.join(root, n), "wb") as f:
            f.write(png_bytes(k))
    vals = [[1, -1, 1], [-1, -1, 1], [1, 1, -1], [-1, 1, 1]]
    lines = [str(len(names)), "Smiling Male Young"] + \
        [f"{n}  " + " ".join(f"{v:2d}" for v in vs) for n, vs in zip(names, vals)]
    with open(os.path.join(root, "list_attr_celeba.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(root, "list_eval_partition.txt"), "w") as f:
        f.write("000002.jpg 0\n000001.jpg 1\n000003.png 2\n000004.jpg 0\n")
