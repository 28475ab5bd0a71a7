"""Pieces shared by the converters: checks, JPEG encoding, safe unpickling, batched writing with
a progress bar."""
from __future__ import annotations

import io
import pickle
from typing import Any, Iterable

import numpy as np

from .._checks import check_filename
from .._format.errors import PathNotExistsError
from ..filewriter import FileWriter

__all__ = ["PathNotExistsError", "check_filename", "encode_jpeg", "restricted_loads", "write_rows"]

BATCH = 256


def encode_jpeg(image: np.ndarray) -> bytes:
    """JPEG bytes of an HWC image whose channels are in OpenCV's order (BGR) or a grey image,
    encoded by OpenCV with its default quality (95), as MindSpore's converters do."""
    import cv2  # noqa: PLC0415 - OpenCV is only needed when encoding
    ok, buf = cv2.imencode(".jpeg", np.ascontiguousarray(image, dtype=np.uint8))
    if not ok:
        raise RuntimeError(f"OpenCV could not encode an image of shape {image.shape} as JPEG.")
    return buf.tobytes()


try:  # NumPy 2 moved the pickling helpers to numpy._core
    from numpy._core.multiarray import _reconstruct as _NP_RECONSTRUCT  # type: ignore[attr-defined]
    from numpy._core.multiarray import scalar as _NP_SCALAR  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - NumPy 1
    from numpy.core.multiarray import _reconstruct as _NP_RECONSTRUCT  # type: ignore[no-redef]
    from numpy.core.multiarray import scalar as _NP_SCALAR  # type: ignore[no-redef]

_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"): _NP_RECONSTRUCT,
    ("numpy._core.multiarray", "_reconstruct"): _NP_RECONSTRUCT,
    ("numpy.core.multiarray", "scalar"): _NP_SCALAR,
    ("numpy._core.multiarray", "scalar"): _NP_SCALAR,
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
}


class _RestrictedUnpickler(pickle.Unpickler):
    """Unpickles only plain containers and NumPy arrays: a CIFAR batch file cannot run code."""

    def find_class(self, module: str, name: str) -> Any:
        found = _ALLOWED.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"global '{module}.{name}' is forbidden")
        return found


def restricted_loads(data: bytes) -> Any:
    """``pickle.loads`` limited to builtins and NumPy arrays (the CIFAR python batches)."""
    return _RestrictedUnpickler(io.BytesIO(data), encoding="bytes").load()


def write_rows(file_name: str, shard_num: int, schema: dict, desc: str, rows: Iterable[dict], total: int | None,
               index_fields: list | None = None, *, label: str = "", parallel: bool = False,
               header_size: int | None = None, page_size: int | None = None) -> None:
    """Writes ``rows`` through a FileWriter in batches of 256, with a tqdm progress bar on a terminal."""
    from tqdm import tqdm  # noqa: PLC0415 - only converters need it

    writer = FileWriter(file_name, shard_num)
    if header_size is not None:
        writer.set_header_size(header_size)
    if page_size is not None:
        writer.set_page_size(page_size)
    writer.add_schema(schema, desc)
    if index_fields:
        writer.add_index(list(index_fields))
    with tqdm(total=total, desc=label or file_name, unit="rows", disable=None, leave=False) as bar:
        batch: list[dict] = []
        for row in rows:
            batch.append(row)
            if len(batch) == BATCH:
                writer.write_raw_data(batch, parallel)
                bar.update(len(batch))
                batch = []
        if batch:
            writer.write_raw_data(batch, parallel)
            bar.update(len(batch))
    writer.commit()

