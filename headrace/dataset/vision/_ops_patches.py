"""Ops giving several crops or patches (FiveCrop, TenCrop, SlicePatches) and RandomResize."""
from __future__ import annotations

import numpy as np
from PIL import Image

from headrace._util.rng import sample_rng
from headrace.dataset.transforms._base import Implementation
from headrace.dataset.vision import _checks as ck
from headrace.dataset.vision._base import ImageTensorOperation, op_error
from headrace.dataset.vision._ops_geometry import Resize, _need_pil
from headrace.dataset.vision.utils import Inter, SliceMode

__all__ = ["FiveCrop", "RandomResize", "SlicePatches", "TenCrop"]


# ------------------------------------------------------------------------- multi-crop / patches


class FiveCrop(ImageTensorOperation):
    """Crops the four corners and the centre of a PIL image (a Pillow-only op).

    Args:
        size (Union[int, Sequence[int]]): (height, width) of each crop, or one int.

    Returns:
        tuple of 5 PIL images: top-left, top-right, bottom-left, bottom-right, centre.

    Raises:
        TypeError: if `size` has the wrong type, or the input is not a PIL image.
        ValueError: if `size` is not positive or larger than the image.

    Examples:
        >>> from PIL import Image
        >>> [im.size for im in FiveCrop(2)(Image.new("RGB", (4, 3)))]
        [(2, 2), (2, 2), (2, 2), (2, 2), (2, 2)]
    """

    implementation = Implementation.PY

    def __init__(self, size):
        ck.check_crop_size(size)
        self.size = size
        self._hw = ck.size_pair(size)

    def _run_pil(self, img):
        _need_pil(img)
        return _five_crop(img, self._hw)


def _five_crop(img: Image.Image, hw: tuple[int, int]) -> tuple:
    w, h = img.size
    ch, cw = hw
    if ch > h or cw > w:
        raise ValueError(f"Crop size {hw} is larger than input image size {(h, w)}.")
    top, left = int(round((h - ch) / 2.0)), int(round((w - cw) / 2.0))
    return (img.crop((0, 0, cw, ch)), img.crop((w - cw, 0, w, ch)), img.crop((0, h - ch, cw, h)),
            img.crop((w - cw, h - ch, w, h)), img.crop((left, top, left + cw, top + ch)))


class TenCrop(ImageTensorOperation):
    """FiveCrop of a PIL image and FiveCrop of its mirror image (a Pillow-only op).

    Args:
        size (Union[int, Sequence[int]]): (height, width) of each crop, or one int.
        use_vertical_flip (bool, optional): mirror top to bottom instead of left to right.
            Default: False.

    Returns:
        tuple of 10 PIL images.

    Raises:
        TypeError: if an argument has the wrong type, or the input is not a PIL image.
        ValueError: if `size` is not positive or larger than the image.

    Examples:
        >>> from PIL import Image
        >>> len(TenCrop(2)(Image.new("RGB", (4, 3))))
        10
    """

    implementation = Implementation.PY

    def __init__(self, size, use_vertical_flip=False):
        ck.check_crop_size(size)
        if use_vertical_flip is not None:
            ck.type_check(use_vertical_flip, (bool,), "use_vertical_flip")
        self.size, self.use_vertical_flip = size, use_vertical_flip
        self._hw = ck.size_pair(size)

    def _run_pil(self, img):
        _need_pil(img)
        first = _five_crop(img, self._hw)
        mirrored = img.transpose(Image.FLIP_TOP_BOTTOM if self.use_vertical_flip else Image.FLIP_LEFT_RIGHT)
        return first + _five_crop(mirrored, self._hw)


class RandomResize(ImageTensorOperation):
    """Resizes to `size` with an interpolation drawn from NEAREST, BILINEAR, BICUBIC and AREA.

    Args:
        size (Union[int, Sequence[int]]): as in :class:`Resize`.

    Raises:
        TypeError: if `size` has the wrong type.
        ValueError: if `size` is not positive.

    Examples:
        >>> import numpy as np
        >>> RandomResize((2, 3))(np.zeros((4, 6, 3), np.uint8)).shape
        (2, 3, 3)
    """

    implementation = Implementation.C
    random = True
    shared_draw = True  # several columns get the same interpolation
    _CHOICES = (Inter.NEAREST, Inter.BILINEAR, Inter.BICUBIC, Inter.AREA)

    def __init__(self, size):
        ck.check_resize_size(size)
        self.size = size
        self._ops = tuple(Resize(size, inter) for inter in self._CHOICES)

    def pick(self) -> Resize:
        """This sample's Resize (one draw from the sample's generator)."""
        return self._ops[int(sample_rng().integers(len(self._ops)))]

    def _run(self, img: np.ndarray) -> np.ndarray:
        return self.pick()._run(img)


class SlicePatches(ImageTensorOperation):
    """Cuts the image into `num_height` x `num_width` patches (row by row).

    Args:
        num_height (int, optional): patches along the height. Default: 1.
        num_width (int, optional): patches along the width. Default: 1.
        slice_mode (SliceMode, optional): PAD pads the image at the bottom/right with
            `fill_value` to a multiple of the patch count; DROP drops the remainder. Default: SliceMode.PAD.
        fill_value (int, optional): padding value in [0, 255]. Default: 0.

    Returns:
        tuple of arrays (a single array when there is one patch).

    Raises:
        TypeError: if an argument has the wrong type.
        ValueError: if a value is out of range.
        RuntimeError: if there are more patches than pixels along an axis.

    Examples:
        >>> import numpy as np
        >>> [p.shape for p in SlicePatches(1, 2)(np.zeros((2, 4), np.uint8))]
        [(2, 2), (2, 2)]
    """

    implementation = Implementation.C
    many_inputs_error = ("size of input should be 1, which means 'input_columns' should be 1 when call "
                         "this operator, but got:{n}")

    def __init__(self, num_height=1, num_width=1, slice_mode=SliceMode.PAD, fill_value=0):
        if num_height is not None:
            ck.type_check(num_height, (int,), "num_height")
            ck.check_range(num_height, (1, ck.INT32_MAX), "num_height")
        if num_width is not None:
            ck.type_check(num_width, (int,), "num_width")
            ck.check_range(num_width, (1, ck.INT32_MAX), "num_width")
        if slice_mode is not None:
            ck.type_check(slice_mode, (SliceMode,), "slice_mode")
        if fill_value is not None:
            ck.type_check(fill_value, (int,), "fill_value")
            ck.check_range(fill_value, (0, 255), "fill_value")
        self.num_height, self.num_width, self.slice_mode, self.fill_value = num_height, num_width, slice_mode, fill_value

    def _run(self, img: np.ndarray):
        if img.ndim < 2:
            raise RuntimeError(f"Rank of input data should be greater than 2, but got:{img.ndim}")
        if img.ndim > 3:
            raise op_error("SlicePatches", f"input tensor is not in shape of <H,W> or <H,W,C>, but got rank: "
                                           f"{img.ndim}")
        nh, nw = self.num_height, self.num_width
        h, w = img.shape[:2]
        if nh > h:
            raise op_error("SlicePatches", f"The number of patches on height axis equals 0 or is greater than "
                                           f"height, got number of patches:{nh}")
        if nw > w:
            raise op_error("SlicePatches", f"The number of patches on width axis equals 0 or is greater than "
                                           f"width, got number of patches:{nw}")
        if nh == 1 and nw == 1:
            return img
        if self.slice_mode == SliceMode.DROP:
            ph, pw = h // nh, w // nw
        else:
            ph, pw = -(-h // nh), -(-w // nw)
            if ph * nh != h or pw * nw != w:
                widths = ((0, ph * nh - h), (0, pw * nw - w)) + (((0, 0),) if img.ndim == 3 else ())
                img = np.pad(img, widths, constant_values=self.fill_value)
        return tuple(img[i * ph:(i + 1) * ph, j * pw:(j + 1) * pw].copy() for i in range(nh) for j in range(nw))
