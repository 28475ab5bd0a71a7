import os

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def cache_roots(tmp_path, monkeypatch):
    """Every cache test keeps its memory and spill tiers in its own folders (subprocesses inherit
    the variables), so nothing lands in the host's /dev/shm and nothing is left behind."""
    shm, spill = tmp_path / "shm", tmp_path / "spill"
    monkeypatch.setenv("HEADRACE_CACHE_SHM", str(shm))
    monkeypatch.setenv("HEADRACE_CACHE_SPILL", str(spill))
    return shm, spill


def write_images(folder, n, size=16, classes=2):
    """``n`` JPEG images in ``classes`` class folders (pixel value i*7 % 256 for image i)."""
    import cv2

    for i in range(n):
        d = folder / f"c{i % classes}"
        d.mkdir(parents=True, exist_ok=True)
        img = np.full((size, size, 3), (i * 7) % 256, np.uint8)
        img[0, 0] = (i, 255 - i % 256, 3)
        cv2.imwrite(str(d / f"{i:04d}.jpg"), img)
    return folder


def chunk_files(root):
    """Every file under ``root`` (relative names), sorted."""
    out = []
    for r, _d, files in os.walk(root):
        out += [os.path.relpath(os.path.join(r, f), root) for f in files]
    return sorted(out)
