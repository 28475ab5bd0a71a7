"""Bounding-box ops: they take two columns, an image and its boxes, and return both.

The boxes are an N x K float32 array (K >= 4) of [x, y, width, height, ...] in pixels; the
checks and errors are MindSpore's (``headrace._image.bbox.check_inputs``), the box arithmetic is done in
float32 as in MindSpore's C++ ops. These are NumPy ops (MindSpore's C implementation): a PIL image
goes through ``np.asarray``. Random ops draw from ``sample_rng()``.
"""
from __future__ import annotations

import numpy as np

from headrace._util.rng import sample_rng
from headrace.dataset.transforms._base import Implementation, PyTensorOperation, TensorOperation
from headrace.dataset.vision import _checks as ck
from headrace.dataset.vision._base import ImageTensorOperation
from headrace._image import bbox as kb
from headrace._image import geometry as geo
from headrace.dataset.vision._ops_flip_pad import _flip_any
from headrace.dataset.vision._ops_geometry import RandomCrop, RandomResizedCrop, Resize, _resize_array
from headrace.dataset.vision._ops_patches import RandomResize
from headrace.dataset.vision.utils import Border, Inter

_UNSUPPORTED_INTER = "Unsupported interpolation, only support NEAREST, LINEAR, CUBIC, AREA and PILCUBIC."

__all__ = ["BoundingBoxAugment", "RandomCropWithBBox", "RandomHorizontalFlipWithBBox",
           "RandomResizeWithBBox", "RandomResizedCropWithBBox", "RandomVerticalFlipWithBBox",
           "ResizeWithBBox"]


class _BBoxOperation(ImageTensorOperation):
    """An op on (image, bbox): checks both, then runs ``_apply(img, boxes)``."""

    implementation = Implementation.C
    one_to_one = False  # (image, bbox): kb.check_inputs counts the inputs

    def _run(self, *args: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        img, boxes = kb.check_inputs(args)
        return self._apply(img, boxes)

    def _apply(self, img: np.ndarray, boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError


class _RandomFlipWithBBox(_BBoxOperation):
    """Flips the image and its boxes with probability `prob`, left-right or top-bottom."""

    random = True
    _horizontal = True

    def __init__(self, prob=0.5):
        self.prob = ck.check_prob(prob)

    def _apply(self, img, boxes):
        if sample_rng().random() < self.prob:
            if self._horizontal:
                return _flip_any(img, True), kb.hflip(boxes, img.shape[1])
            return _flip_any(img, False), kb.vflip(boxes, img.shape[0])
        return img, boxes


class RandomHorizontalFlipWithBBox(_RandomFlipWithBBox):
    """Flips the image left to right with probability `prob`, and its boxes with it.

    Args:
        prob (float, optional): as in :class:`RandomHorizontalFlip`. Default: 0.5.

    Raises:
        TypeError, ValueError: where :class:`RandomHorizontalFlip` raises them.
        RuntimeError: if the boxes are malformed or fall outside the image.

    Examples:
        >>> import numpy as np
        >>> img, box = RandomHorizontalFlipWithBBox(1.0)(np.zeros((4, 6, 3), np.uint8),
        ...                                              np.array([[1, 0, 2, 3]], np.float32))
        >>> box.tolist()
        [[3.0, 0.0, 2.0, 3.0]]
    """


class RandomVerticalFlipWithBBox(_RandomFlipWithBBox):
    """Flips the image top to bottom with probability `prob`, and its boxes with it.

    Args:
        prob (float, optional): as in :class:`RandomHorizontalFlipWithBBox`. Default: 0.5.

    Raises:
        TypeError, ValueError, RuntimeError: where :class:`RandomHorizontalFlipWithBBox` raises them.

    Examples:
        >>> import numpy as np
        >>> img, box = RandomVerticalFlipWithBBox(1.0)(np.zeros((4, 6, 3), np.uint8),
        ...                                            np.array([[1, 0, 2, 3]], np.float32))
        >>> box.tolist()
        [[1.0, 1.0, 2.0, 3.0]]
    """

    _horizontal = False


class ResizeWithBBox(_BBoxOperation):
    """Resizes the image as :class:`Resize` does and scales its boxes to match.

    Args:
        size (Union[int, Sequence[int]]): (height, width), or one int: the shorter side becomes
            `size` and the other keeps the aspect ratio (rounded down).
        interpolation (Inter, optional): NEAREST, BILINEAR, BICUBIC, AREA or PILCUBIC.
            Default: Inter.BILINEAR.

    Raises:
        TypeError: if `size` or `interpolation` has the wrong type.
        ValueError: if `size` is not positive.
        RuntimeError: if the boxes are malformed or fall outside the image.

    Examples:
        >>> import numpy as np
        >>> img, box = ResizeWithBBox((2, 3))(np.zeros((4, 6, 3), np.uint8),
        ...                                   np.array([[2, 0, 2, 4]], np.float32))
        >>> img.shape, box.tolist()
        ((2, 3, 3), [[1.0, 0.0, 1.0, 2.0]])
    """

    def __init__(self, size, interpolation=Inter.BILINEAR):
        ck.check_resize_size(size)
        ck.type_check(interpolation, (Inter,), "interpolation")
        self.size, self.interpolation = size, interpolation
        self._resize = Resize(size, interpolation)

    def _apply(self, img, boxes):
        if self.interpolation == Inter.ANTIALIAS:
            raise RuntimeError(_UNSUPPORTED_INTER)
        return _resize_pair(self._resize, img, boxes)


def _resize_pair(resize: Resize, img: np.ndarray, boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    out = resize._run(img)
    return out, kb.scale(boxes, img.shape[0], img.shape[1], out.shape[0], out.shape[1])


class RandomResizeWithBBox(_BBoxOperation):
    """Resizes with an interpolation drawn from NEAREST, BILINEAR, BICUBIC and AREA, and scales
    the boxes to match.

    Args:
        size (Union[int, Sequence[int]]): as in :class:`Resize`.

    Raises:
        TypeError: if `size` has the wrong type.
        ValueError: if `size` is not positive.
        RuntimeError: if the boxes are malformed or fall outside the image.

    Examples:
        >>> import numpy as np
        >>> img, box = RandomResizeWithBBox(2)(np.zeros((4, 6, 3), np.uint8),
        ...                                    np.array([[3, 2, 3, 2]], np.float32))
        >>> img.shape, box.tolist()
        ((2, 3, 3), [[1.5, 1.0, 1.5, 1.0]])
    """

    random = True

    def __init__(self, size):
        self._random_resize = RandomResize(size)  # checks `size`; draws the interpolation
        self.size = size

    def _apply(self, img, boxes):
        return _resize_pair(self._random_resize.pick(), img, boxes)


class RandomCropWithBBox(_BBoxOperation):
    """Crops a window of `size` at a random position (after optional padding), and crops the
    boxes with it: boxes wholly outside the window are dropped, the others are clipped to it.

    Args:
        size, padding, pad_if_needed, fill_value, padding_mode: as in :class:`RandomCrop` (the same
            defaults and checks).

    Raises:
        TypeError, ValueError: where :class:`RandomCrop` raises them.
        RuntimeError: if the boxes are malformed or the (padded) image is smaller than `size`.

    Examples:
        >>> import numpy as np
        >>> img, box = RandomCropWithBBox(8, padding=2)(np.zeros((4, 4, 3), np.uint8),
        ...                                             np.array([[0, 0, 4, 4]], np.float32))
        >>> img.shape, box.tolist()
        ((8, 8, 3), [[2.0, 2.0, 4.0, 4.0]])
    """

    random = True

    def __init__(self, size, padding=None, pad_if_needed=False, fill_value=0, padding_mode=Border.CONSTANT):
        # RandomCrop's arguments, checks and precomputed window settings, exactly
        RandomCrop.__init__(self, size, padding, pad_if_needed, fill_value, padding_mode)

    def _apply(self, img, boxes):
        original = img
        img, top, left = RandomCrop._padded(self, img)
        ch, cw = self._hw
        h, w = img.shape[:2]
        padded = img is not original
        if padded:
            boxes = kb.shift(boxes, left, top)
        if (h, w) == (ch, cw):  # the window is the whole (padded) image: boxes are only shifted
            return (img if padded else img.copy()), (boxes if padded else boxes.copy())
        rng = sample_rng()
        y = int(rng.integers(0, h - ch + 1))
        x = int(rng.integers(0, w - cw + 1))
        return geo.crop(img, y, x, ch, cw), kb.crop(boxes, y, x, ch, cw)


class RandomResizedCropWithBBox(_BBoxOperation):
    """Crops a random window as :class:`RandomResizedCrop` does, resizes it to `size`, and crops
    and scales the boxes with it (boxes wholly outside the window are dropped).

    Args:
        size, scale, ratio, interpolation, max_attempts: as in :class:`RandomResizedCrop` (the same
            defaults and checks).

    Raises:
        TypeError, ValueError: where :class:`RandomResizedCrop` raises them.
        RuntimeError: if the boxes are malformed or fall outside the image.

    Examples:
        >>> import numpy as np
        >>> op = RandomResizedCropWithBBox((2, 3), scale=(1, 1), ratio=(1.5, 1.5))
        >>> img, box = op(np.zeros((4, 6, 3), np.uint8), np.array([[0, 2, 6, 2]], np.float32))
        >>> img.shape, box.tolist()
        ((2, 3, 3), [[0.0, 1.0, 3.0, 1.0]])
    """

    random = True

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3. / 4., 4. / 3.), interpolation=Inter.BILINEAR,
                 max_attempts=10):
        self._crop = RandomResizedCrop(size, scale, ratio, interpolation, max_attempts)
        self.size, self.scale, self.ratio = size, scale, ratio
        self.interpolation, self.max_attempts = interpolation, max_attempts

    def _apply(self, img, boxes):
        if self.interpolation is None or self.interpolation == Inter.ANTIALIAS:
            raise RuntimeError(_UNSUPPORTED_INTER)
        top, left, ch, cw = self._crop.box(img.shape[0], img.shape[1])
        oh, ow = self._crop._hw
        out = _resize_array(img[top:top + ch, left:left + cw], oh, ow, self.interpolation, "RandomResizedCrop")
        return out, kb.scale(kb.crop(boxes, top, left, ch, cw), ch, cw, oh, ow)


class BoundingBoxAugment(_BBoxOperation):
    """Runs `transform` on the pixels under each box, each box chosen with probability `ratio`.

    The region under a box (its corners truncated to whole pixels) is cut out, transformed and
    written back; an output of another size is resized bilinearly to the region first. Boxes are
    returned unchanged.

    Args:
        transform (TensorOperation): the transform to run on each chosen region (not a
            Pillow-only op, as in MindSpore).
        ratio (float, optional): probability, in [0, 1], that a box is chosen. Default: 0.3.

    Raises:
        TypeError: if `transform` is not a transform object or `ratio` is not a number.
        ValueError: if `ratio` is not in [0, 1].
        RuntimeError: if the boxes are malformed or fall outside the image.

    Examples:
        >>> import numpy as np
        >>> from headrace.dataset.vision import Invert
        >>> img, box = BoundingBoxAugment(Invert(), 1.0)(np.zeros((2, 3, 3), np.uint8),
        ...                                              np.array([[1, 0, 2, 1]], np.float32))
        >>> img[:, :, 0].tolist()
        [[0, 255, 255], [0, 0, 0]]
    """

    random = True

    def __init__(self, transform, ratio=0.3):
        ck.type_check(ratio, (float, int), "ratio")
        ck.check_range(ratio, (0.0, 1.0), "ratio")
        if not isinstance(transform, TensorOperation) or isinstance(transform, PyTensorOperation):
            raise TypeError(f"Argument transform with value {transform} is not of type [{TensorOperation}], "
                            f"but got {type(transform)}.")
        self.transform, self.ratio = transform, ratio

    def _apply(self, img, boxes):
        img = img.copy()
        rng = sample_rng()
        for box in boxes:
            if rng.random() < self.ratio:
                kb.paste_region(img, box, self.transform)
        return img, boxes.copy()
