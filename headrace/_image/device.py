"""Device backends: the seam between a map's GPU stage and the library that decodes and transforms
a batch of images on an accelerator.

A map whose image ops are marked ``.device("GPU")`` is split (``headrace/_engine/device_stage.py``):
its worker tasks read the encoded bytes and draw each sample's random parameters exactly as the CPU
ops would, and hand on a :class:`DeviceWork` per sample: the bytes (or an already decoded array)
and the :data:`Step` list the backend applies. One stage per batch, in the process that iterates,
then runs :func:`run_batch`: it decodes the batch's JPEGs with the backend, applies each sample's
steps on the device and stacks the batch.

Steps are plain tuples, kernel-level and free of MindSpore names:

* ``("decode", op)``: the source is an encoded baseline JPEG (``op`` names the op in errors);
* ``("crop", top, left, height, width)``;
* ``("resize", height, width, mode)``: ``mode`` an OpenCV interpolation flag, or ``"pilcubic"``;
* ``("flip", horizontal)``;
* ``("normalize", mean, std)``: per channel, float32 out, channels last;
* ``("chw",)``: channels-last to channels-first.

Files the backends do not decode (PNG and other formats, progressive, lossless, arithmetic-coded,
12-bit or CMYK JPEGs, JPEGs with no end marker) are found from the header by :func:`jpeg_kind` in
the worker, which then runs the ops on the CPU there (a *fallback*, counted with its reason). A JPEG
the backend still fails to decode is decoded on the CPU by the stage (reason ``"decode failed"``).

Backends, chosen by :func:`select_backend` from ``HEADRACE_GPU_BACKEND`` (``auto`` by default):

* ``fake``: :class:`FakeBackend`, NumPy on the host over the CPU kernels, for machines without a
  GPU (tests, ``benchmarks/gpu_decode.py --fake``): the split, the random parameters, the fallbacks
  and the counters run as with a GPU; its pixels equal the CPU path's;
* ``auto``: the first GPU backend installed and usable; this module knows none yet that it can run
  (nvImageCodec, TorchCodec and torchvision's CUDA decoder are named in the error that says so), so
  ``auto`` fails with an error naming the op, and a pipeline never runs GPU-marked ops silently on
  the CPU.
"""
from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from headrace._image import convert as cv
from headrace._image import decode as dec
from headrace._image import geometry as geo

__all__ = ["BACKEND_ENV", "BACKENDS", "DeviceWork", "FakeBackend", "NoBackendError", "apply_steps",
           "jpeg_kind", "run_batch", "select_backend"]

BACKEND_ENV = "HEADRACE_GPU_BACKEND"
BACKENDS = ("auto", "fake")
GPU_LIBRARIES = "nvImageCodec, TorchCodec or torchvision's CUDA decode_jpeg"

Step = tuple

# ---------------------------------------------------------------------------------------- headers

_SOF_KINDS = {0xC0: "baseline", 0xC1: "baseline", 0xC2: "progressive", 0xC3: "lossless",
              0xC5: "hierarchical", 0xC6: "hierarchical", 0xC7: "hierarchical",
              0xC9: "arithmetic", 0xCA: "arithmetic", 0xCB: "arithmetic", 0xCD: "arithmetic",
              0xCE: "arithmetic", 0xCF: "arithmetic"}
_PNG = b"\x89PNG\r\n\x1a\n"


def jpeg_kind(buf: bytes | memoryview) -> tuple[str, tuple[int, int] | None]:
    """What a device decoder makes of ``buf``: ``("baseline", (height, width))`` for a baseline
    8-bit grey or 3-component JPEG with its end marker, else ``(reason, None)`` with reason one of
    ``"png"``, ``"not jpeg"``, ``"progressive"``, ``"lossless"``, ``"hierarchical"``,
    ``"arithmetic"``, ``"12-bit"``, ``"cmyk"`` or ``"damaged"`` (no frame header, a header cut
    short, no end marker).

    Examples:
        >>> import cv2, numpy as np
        >>> jpeg_kind(cv2.imencode(".jpg", np.zeros((4, 6, 3), np.uint8))[1].tobytes())
        ('baseline', (4, 6))
        >>> jpeg_kind(cv2.imencode(".png", np.zeros((4, 6, 3), np.uint8))[1].tobytes())
        ('png', None)
    """
    b = bytes(buf[:8])
    if b == _PNG:
        return "png", None
    if b[:2] != b"\xff\xd8":
        return "not jpeg", None
    n = len(buf)
    if bytes(buf[n - 2:]) != b"\xff\xd9":
        return "damaged", None
    i = 2
    while i + 4 <= n:
        if buf[i] != 0xFF:
            return "damaged", None
        marker = buf[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = (buf[i + 2] << 8) | buf[i + 3]
        if marker in _SOF_KINDS:
            if i + 10 > n or length < 8:
                return "damaged", None
            kind = _SOF_KINDS[marker]
            if kind != "baseline":
                return kind, None
            precision = buf[i + 4]
            h = (buf[i + 5] << 8) | buf[i + 6]
            w = (buf[i + 7] << 8) | buf[i + 8]
            comps = buf[i + 9]
            if precision != 8:
                return "12-bit", None
            if comps not in (1, 3):
                return "cmyk", None
            if h == 0 or w == 0:
                return "damaged", None
            return "baseline", (h, w)
        if marker in (0xDA, 0xD9):  # scan or end before any frame header
            return "damaged", None
        i += 2 + length
    return "damaged", None


# ------------------------------------------------------------------------------------ the work


class DeviceWork:
    """One sample as the worker hands it to the GPU stage.

    Attributes:
        source: the encoded bytes (when ``steps`` start with ``decode``) or an image array.
        steps: the :data:`Step` list to apply, the random ones already drawn.
        result: the finished image when the worker ran the ops on the CPU (a fallback), else None.
        fallback: the reason of that fallback (see :func:`jpeg_kind`), else None.
        index: the sample index (for errors), or None.
    """

    __slots__ = ("source", "steps", "result", "fallback", "index")

    def __init__(self, source: Any, steps: tuple[Step, ...], result: np.ndarray | None = None,
                 fallback: str | None = None, index: int | None = None) -> None:
        self.source, self.steps, self.result, self.fallback, self.index = source, steps, result, fallback, index

    def __getstate__(self) -> tuple:
        return self.source, self.steps, self.result, self.fallback, self.index

    def __setstate__(self, state: tuple) -> None:
        self.source, self.steps, self.result, self.fallback, self.index = state

    def __repr__(self) -> str:
        what = f"fallback={self.fallback!r}" if self.result is not None else f"steps={list(self.steps)!r}"
        return f"DeviceWork(index={self.index}, {what})"


def _resize(img: np.ndarray, h: int, w: int, mode: Any) -> np.ndarray:
    if mode == "pilcubic":
        return geo.resize_pil_cubic(img, h, w)
    return geo.resize(img, h, w, int(mode))


def apply_steps(img: np.ndarray, steps: Sequence[Step]) -> np.ndarray:
    """The steps (other than ``decode``) on a host image, with the CPU kernels the CPU ops use, so
    the result equals the CPU path's for the same parameters."""
    for step in steps:
        kind = step[0]
        if kind == "crop":
            _, top, left, h, w = step
            img = geo.crop(img, top, left, h, w)
        elif kind == "resize":
            img = _resize(img, step[1], step[2], step[3])
        elif kind == "flip":
            img = geo.flip(img, bool(step[1]))
        elif kind == "normalize":
            mean, std = np.asarray(step[1], np.float32), np.asarray(step[2], np.float32)
            if img.ndim == 2:
                img = (img.astype(np.float32) - mean[0]) / std[0]
            else:
                if mean.size == 1 and img.shape[2] != 1:
                    mean, std = np.repeat(mean, img.shape[2]), np.repeat(std, img.shape[2])
                img = cv.normalize(img, mean, std, 2)
        elif kind == "chw":
            img = cv.hwc_to_chw(img)
        elif kind != "decode":
            raise ValueError(f"unknown device step {step!r}")
    return np.ascontiguousarray(img)


# ------------------------------------------------------------------------------------ backends


class FakeBackend:
    """The device backend on the host (NumPy over the CPU kernels): for tests and machines without
    a GPU. It decodes what a GPU decoder would (baseline JPEGs, see :func:`jpeg_kind`) and refuses
    the rest, so the stage's fallbacks run as on a GPU."""

    name = "fake"
    roi_decode = False

    def decode(self, buffers: Sequence[bytes | memoryview], op: str) -> list[np.ndarray | None]:
        """Each buffer decoded to HWC uint8 RGB, or None where this decoder cannot decode it."""
        out: list[np.ndarray | None] = []
        for buf in buffers:
            if jpeg_kind(buf)[0] != "baseline":
                out.append(None)
                continue
            try:
                out.append(dec.decode_rgb(buf, op))
            except RuntimeError:
                out.append(None)
        return out

    def upload(self, img: np.ndarray) -> np.ndarray:
        return img

    def transform(self, img: np.ndarray, steps: Sequence[Step]) -> np.ndarray:
        return apply_steps(img, steps)

    def stack(self, images: list[np.ndarray]) -> np.ndarray:
        return np.stack(images)

    def to_host(self, batch: Any) -> np.ndarray:
        return np.asarray(batch)


class NoBackendError(RuntimeError):
    """No device backend can run the GPU-marked ops."""


def select_backend(ops: Sequence[str], setting: str | None = None) -> Any:
    """The backend the GPU stage of ``ops`` (their names, for the error) runs on.

    ``setting`` defaults to the environment variable ``HEADRACE_GPU_BACKEND`` (``"auto"`` when
    unset): ``"fake"`` gives :class:`FakeBackend`; ``"auto"`` the first usable GPU backend.

    Raises:
        ValueError: if the setting is not one of :data:`BACKENDS`.
        NoBackendError: if no backend is available.
    """
    if setting is None:
        setting = os.environ.get(BACKEND_ENV, "") or "auto"
    if setting not in BACKENDS:
        raise ValueError(f"{BACKEND_ENV} must be one of {list(BACKENDS)}, but got {setting!r}.")
    if setting == "fake":
        return FakeBackend()
    names = ", ".join(ops)
    raise NoBackendError(
        f"{names}: device_target 'GPU' needs a GPU decode backend, and none is available in "
        f"headrace here (it has adapters for none of {GPU_LIBRARIES} yet). Call .device('CPU') on "
        f"the op to run it in the map's workers, or set {BACKEND_ENV}=fake to run the GPU stage "
        f"on the host (for tests).")


def _cpu_decode(item: DeviceWork, op: str) -> np.ndarray:
    return dec.decode_rgb(item.source, op)


def run_batch(backend: Any, items: Sequence[DeviceWork]) -> tuple[Any, dict[str, int]]:
    """The GPU stage of one batch: decodes, transforms and stacks ``items`` on ``backend``.

    Returns the stacked batch (a backend array) and the fallbacks by reason (the worker's and the
    stage's own). A failure raises RuntimeError naming the op; ``index`` of the error's item is
    set as ``sample_index`` on the exception.
    """
    fallbacks: dict[str, int] = {}
    todo = [i for i, w in enumerate(items) if w.result is None and w.steps and w.steps[0][0] == "decode"]
    decoded: dict[int, Any] = {}
    if todo:
        by_op: dict[str, list[int]] = {}
        for i in todo:
            by_op.setdefault(items[i].steps[0][1], []).append(i)
        for op, idx in by_op.items():
            for i, img in zip(idx, backend.decode([items[i].source for i in idx], op)):
                decoded[i] = img
    outs = []
    for i, w in enumerate(items):
        try:
            if w.result is not None:
                fallbacks[w.fallback or "cpu"] = fallbacks.get(w.fallback or "cpu", 0) + 1
                outs.append(backend.upload(w.result))
            elif i in decoded and decoded[i] is None:
                fallbacks["decode failed"] = fallbacks.get("decode failed", 0) + 1
                img = _cpu_decode(w, w.steps[0][1])
                outs.append(backend.upload(apply_steps(img, w.steps)))
            elif i in decoded:
                outs.append(backend.transform(decoded[i], w.steps))
            else:
                outs.append(backend.transform(backend.upload(np.asarray(w.source)), w.steps))
        except Exception as e:
            e.sample_index = w.index  # type: ignore[attr-defined]
            raise
    shapes = {tuple(o.shape) for o in outs}
    if len(shapes) > 1:
        first = tuple(outs[0].shape)
        j = next(k for k, o in enumerate(outs) if tuple(o.shape) != first)
        err = RuntimeError(f"the GPU stage cannot stack the batch: sample {items[j].index} gives shape "
                           f"{tuple(outs[j].shape)} where sample {items[0].index} gives {first}; give the "
                           f"images one size before the batch (e.g. a Resize to a fixed (height, width)).")
        err.sample_index = items[j].index  # type: ignore[attr-defined]
        raise err
    return backend.stack(outs), fallbacks

