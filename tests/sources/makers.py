"""Small data files in every format the sources read, written by the tests themselves."""
from __future__ import annotations

import io
import os
import struct

import numpy as np
from PIL import Image

from headrace.dataset._sources.tfrecord import write_tfrecord

__all__ = ["make_cifar", "make_image_folder", "make_mnist", "png_bytes", "write_tfrecord"]


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


def make_cifar(path, n: int, label_bytes: int, seed: int, sparse: bool = False):
    """Writes ``n`` CIFAR records; returns (images HWC, labels (n, label_bytes)).

    ``sparse`` leaves most pixels 0 (only row 0 is random) so that big files are cheap to make.
    """
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 100 if label_bytes == 2 else 10, (n, label_bytes), dtype=np.uint8)
    chw = np.zeros((n, 3, 32, 32), dtype=np.uint8)
    if sparse:
        chw[:, :, 0, :] = rng.integers(0, 256, (n, 3, 32), dtype=np.uint8)
    else:
        chw[:] = rng.integers(0, 256, chw.shape, dtype=np.uint8)
    rec = np.concatenate([labels, chw.reshape(n, -1)], axis=1)
    with open(path, "wb") as f:
        f.write(rec.tobytes())
    return chw.transpose(0, 2, 3, 1), labels
