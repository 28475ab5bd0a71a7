"""Base of the vision operations.

How a vision op plugs in (read this if you add one)
---------------------------------------------------
Subclass :class:`ImageTensorOperation` (it checks MindSpore's eager input rule: only a NumPy
array or a PIL image is accepted) and write

* ``__init__``: check arguments with ``headrace._util.checks`` and the ``check_*`` helpers in
  ``headrace.dataset.vision._checks`` (MindSpore's messages); precompute everything a call needs
  (tables, interpolation codes, kernel sizes). No validation work per call.
* ``_run(self, img)``: the NumPy/OpenCV kernel (MindSpore's C++ op). ``img`` is an ndarray
  (a PIL image given to a NumPy-only op has gone through ``np.asarray``). Return an ndarray.
  Check the rank/channels with :func:`require_image` and raise :func:`op_error` for bad input:
  a ``RuntimeError`` whose text starts with the op name, e.g. ``"Resize: the image tensor should
  have at least two dimensions. You may need to perform Decode first."``.
* ``_run_pil(self, img)`` (optional): the Pillow kernel (MindSpore's Python op); runs when the
  input is a single ``PIL.Image``. Return a PIL image. Ops without it get ``np.asarray(img)``.
* class attributes: ``implementation`` (None when both kernels exist, ``Implementation.C`` for
  NumPy only); ``random = True`` for random ops, which draw from
  ``headrace._util.rng.sample_rng()`` inside ``_run`` / ``_run_pil`` (never global RNG state).
  Draw the same numbers in the same order in both kernels, so NumPy and Pillow paths agree.
* Pillow-only ops (MindSpore's PY ops: ToPIL, Grayscale, RandomErasing, ...) subclass
  :class:`PyImageOperation` and define only ``_run_pil``.

Minimal example::

    class Invert(ImageTensorOperation):
        def _run(self, img):
            require_image(img, "Invert", channels=(3,))
            return 255 - img            # (dtype handling omitted)

        def _run_pil(self, img):
            return ImageOps.invert(img)

Kernels that are shared between ops live in ``headrace._image`` as plain
functions on arrays (no op objects), so they can be benchmarked and fused.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from PIL import Image

from headrace._util.errors import kernel_error
from headrace._util.rng import sample_rng
from headrace.dataset.transforms._base import (Implementation, PyTensorOperation, TensorOperation, contiguous,
                                               returns_contiguous)

__all__ = ["NO_INPUT", "ONE_TO_ONE", "ImageTensorOperation", "Implementation", "PyImageOperation", "is_pil",
           "op_error", "require_image", "same_size"]


def is_pil(value: Any) -> bool:
    """Whether ``value`` is a PIL image."""
    return isinstance(value, Image.Image)


ONE_TO_ONE = "The op is OneToOne, can only accept one tensor as input."
NO_INPUT = "Input Tensor is not valid."


class ImageTensorOperation(TensorOperation):
    """Base of vision ops: accepts only NumPy arrays or PIL images, else ``TypeError``.

    How many inputs an op takes (class attributes, MindSpore's rules):

    * ``one_to_one = True`` (the default): exactly one image; several raise ``RuntimeError`` with
      ``many_inputs_error`` (MindSpore's "The op is OneToOne, ..."), unless
    * ``shared_draw = True``: each of several images (columns of one row) goes through ``_run``
      with the same random draws, as MindSpore applies one flip or one crop window to an image and
      its mask. ``_check_shared(arrays)`` may refuse inputs whose sizes differ.
    * ``one_to_one = False``: the op's ``_run(*arrays)`` takes several inputs itself (bounding box
      and batch-mixing ops).
    """

    one_to_one = True
    shared_draw = False
    many_inputs_error = ONE_TO_ONE

    @returns_contiguous  # TensorOperation.__call__ and _run_shared make the arrays contiguous
    def __call__(self, *args: Any) -> Any:
        for a in args:
            if not isinstance(a, (np.ndarray, Image.Image)):
                raise TypeError(f"Input should be NumPy or PIL image, got {type(a)}.")
        if len(args) == 1 or not self.one_to_one or self.implementation == Implementation.PY:
            return TensorOperation.__call__(self, *args)
        if not args:
            raise RuntimeError(NO_INPUT)
        if not self.shared_draw:
            raise RuntimeError(self.many_inputs_error.format(n=len(args)))
        arrays = [a if type(a) is np.ndarray else np.asarray(a) for a in args]
        self._check_shared(arrays)
        return self._run_shared(arrays)

    def _check_shared(self, arrays: list[np.ndarray]) -> None:
        """Raises for inputs that cannot share one draw (the default accepts any)."""

    def _run_shared(self, arrays: list[np.ndarray]) -> tuple:
        """``_run`` on each array, replaying the first one's random draws for the others."""
        bits = sample_rng().bit_generator
        start = bits.state
        outs = [self._run(arrays[0])]
        for a in arrays[1:]:
            bits.state = start
            outs.append(self._run(a))
        return contiguous(tuple(outs))


def same_size(arrays: list[np.ndarray], op: str, detail: str) -> None:
    """Raises ``op_error(op, detail)`` unless every array has the first one's height and width."""
    hw = arrays[0].shape[:2]
    for a in arrays[1:]:
        if a.shape[:2] != hw:
            raise op_error(op, detail)


class PyImageOperation(PyTensorOperation):
    """Base of Pillow-only vision ops (implementation PY): ``_run_pil`` runs on any input."""


def op_error(op: str, detail: str) -> RuntimeError:
    """The error a kernel raises for bad input: ``RuntimeError("<op>: <detail>")``, which a map
    reports as MindSpore reports its C++ ops' failures (``errors.kernel_error``)."""
    return kernel_error(f"{op}: {detail}")


def require_image(img: np.ndarray, op: str, *, ranks: Sequence[int] = (2, 3),
                  channels: Sequence[int] | None = None) -> None:
    """Raises ``op_error`` unless ``img`` has one of ``ranks`` and (for HWC) one of ``channels``.

    Args:
        img: the array a kernel got.
        op: the op name for the message.
        ranks: accepted numbers of dimensions. Default: (2, 3) (HW or HWC).
        channels: accepted channel counts for 3-D input; None accepts any.
    """
    nd = img.ndim
    if nd not in ranks:
        if nd < 2:
            raise op_error(op, "the image tensor should have at least two dimensions. You may need "
                               "to perform Decode first.")
        raise op_error(op, f"input tensor is not in shape of <H,W> or <H,W,C>, but got rank: {nd}")
    if channels is not None and nd == 3 and img.shape[2] not in channels:
        raise op_error(op, f"the channel of the input image of shape <H,W,C> is not "
                           f"{' or '.join(str(c) for c in channels)}, but got: {img.shape[2]}")
