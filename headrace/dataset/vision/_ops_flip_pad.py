"""Flips and pads: HorizontalFlip, VerticalFlip, their random forms, Pad and PadToSize."""
from __future__ import annotations
import numpy as np
from PIL import Image
from headrace._util.rng import sample_rng
from headrace.dataset.transforms._base import Implementation
from headrace.dataset.transforms._cast import type_name
from headrace.dataset.vision import _checks as ck
from headrace.dataset.vision._base import ImageTensorOperation, op_error
from headrace.dataset.vision._color_checks import _Device
from headrace.dataset.vision._ops_convert import NormalizeHWC2CHW
from headrace._image import geometry as geo
from headrace.dataset.vision._tables import CV_BORDER
from headrace.dataset.vision.utils import Border
from headrace.dataset.vision._ops_geometry import DECODE_FIRST, _check_pad_image, _need_pil, _pad_pil


__all__ = ["HorizontalFlip", "Pad", "PadToSize", "RandomHorizontalFlip", "RandomVerticalFlip", "VerticalFlip"]


_FLIP_TYPES = frozenset(np.dtype(d) for d in ("bool", "int8", "uint8", "int16", "uint16", "int32", "float16",
                                                "float32", "float64"))


_NO_CV_TYPES = frozenset(np.dtype(d) for d in ("uint32", "int64", "uint64"))


def _check_flip(img: np.ndarray, op: str) -> None:
    if op == "RandomVerticalFlip" and img.ndim not in (2, 3):  # MindSpore's op takes no batches
        raise op_error(op, f"input tensor is not in shape of <H,W> or <H,W,C>, but got rank: {img.ndim}"
                           + ("." + DECODE_FIRST if img.ndim < 2 else ""))
    if img.ndim < 2:
        raise op_error(op, "the image tensor should have at least two dimensions." + DECODE_FIRST)
    dt = img.dtype
    if dt not in _FLIP_TYPES:
        if op == "RandomVerticalFlip":  # MindSpore words this one's refusal after OpenCV
            if dt in _NO_CV_TYPES or dt.kind in "USO":
                raise op_error(op, f"Cannot convert [{type_name(dt)}] to OpenCV type. Currently unsupported "
                                   "data type: [uint32, int64, uint64, string]")
            return
        raise op_error(op, "the data type of image tensor does not match the requirement of operator. Expecting "
                           "tensor in type of (bool, int8, uint8, int16, uint16, int32, float16, float32, "
                           f"float64). But got type {type_name(dt)}.")


def _flip_any(img: np.ndarray, horizontal: bool) -> np.ndarray:
    if img.ndim <= 3:
        return geo.flip(img, horizontal)
    axis = img.ndim - 2 if horizontal else img.ndim - 3
    return np.ascontiguousarray(np.flip(img, axis=axis))


def _device_flip(shape: tuple, horizontal: bool, flip: bool = True) -> tuple[list[tuple], tuple]:
    """The GPU stage's flip step (none when ``flip`` is False) for an <H,W> or <H,W,C> image."""
    if len(shape) not in (2, 3):
        raise RuntimeError(f"device_target 'GPU' flips one <H,W> or <H,W,C> image, but got rank: {len(shape)}.")
    return ([("flip", horizontal)] if flip else []), tuple(shape)


class _Flip(_Device, ImageTensorOperation):
    """What the four flips share: the input checks, the kernel and the GPU stage's step.

    ``_horizontal`` picks left-right (True) or top-bottom; ``_flips`` says whether this sample is
    flipped (always, unless a random flip's draw says no).
    """

    implementation = Implementation.C
    _horizontal = True

    def _flips(self) -> bool:
        return True

    def fuse_next(self, nxt, options):
        """``[a flip, Normalize+HWC2CHW]`` -> one :class:`NormalizeHWC2CHW` that flips on the way (exact)."""
        if type(nxt) is NormalizeHWC2CHW and nxt._flip is None and self.device_target == "CPU" \
                and type(self) in (HorizontalFlip, VerticalFlip, RandomHorizontalFlip, RandomVerticalFlip):
            return NormalizeHWC2CHW(nxt._norm, nxt._t, flip=self)
        return None

    def _run(self, img: np.ndarray) -> np.ndarray:
        if self.device_target != "CPU":
            self._check_device()
        _check_flip(img, self.op_name)
        return _flip_any(img, self._horizontal) if self._flips() else img

    def _device_plan(self, shape: tuple) -> tuple[list[tuple], tuple]:
        """The flip step; a random flip draws as ``_run`` draws (one number from ``sample_rng()``)."""
        return _device_flip(shape, self._horizontal, self._flips())


class _RandomFlip(_Flip):
    """A flip with probability `prob`, with a Pillow kernel too."""

    implementation = None
    random = True
    shared_draw = True  # several columns get the same flip

    def __init__(self, prob=0.5):
        self.prob = ck.check_prob(prob)

    def _flips(self) -> bool:
        return sample_rng().random() < self.prob

    def _run_pil(self, img):
        if self.device_target != "CPU":
            self._check_device()
        _need_pil(img)
        if self._flips():
            return img.transpose(Image.FLIP_LEFT_RIGHT if self._horizontal else Image.FLIP_TOP_BOTTOM)
        return img


class HorizontalFlip(_Flip):
    """Flips the image left to right.

    Examples:
        >>> import numpy as np
        >>> HorizontalFlip()(np.array([[1, 2, 3]], np.uint8)).tolist()
        [[3, 2, 1]]
    """


class VerticalFlip(_Flip):
    """Flips the image upside down.

    Examples:
        >>> import numpy as np
        >>> VerticalFlip()(np.array([[1], [2]], np.uint8)).tolist()
        [[2], [1]]
    """

    _horizontal = False


class RandomHorizontalFlip(_RandomFlip):
    """Flips the image left to right with probability `prob`.

    Args:
        prob (float, optional): probability of flipping, in [0, 1]. Default: 0.5.

    Raises:
        TypeError: if `prob` is not a number.
        ValueError: if `prob` is not in [0, 1].

    Examples:
        >>> import numpy as np
        >>> RandomHorizontalFlip(1.0)(np.array([[1, 2]], np.uint8)).tolist()
        [[2, 1]]
    """


class RandomVerticalFlip(_RandomFlip):
    """Flips the image upside down with probability `prob`.

    Args:
        prob (float, optional): as in :class:`RandomHorizontalFlip`. Default: 0.5.

    Raises:
        TypeError, ValueError: where :class:`RandomHorizontalFlip` raises them.

    Examples:
        >>> import numpy as np
        >>> RandomVerticalFlip(1.0)(np.array([[1], [2]], np.uint8)).tolist()
        [[2], [1]]
    """

    _horizontal = False


class Pad(ImageTensorOperation):
    """Pads the image borders.

    Args:
        padding (Union[int, Sequence[int]]): an int for all sides, (left/right, top/bottom) or
            (left, top, right, bottom).
        fill_value (Union[int, tuple[int, int, int]], optional): fill for CONSTANT mode. Default: 0.
        padding_mode (Border, optional): CONSTANT, EDGE, REFLECT or SYMMETRIC. Default: Border.CONSTANT.

    Raises:
        TypeError: if an argument has the wrong type.
        ValueError: if a value is out of range.

    Examples:
        >>> import numpy as np
        >>> Pad((1, 2))(np.zeros((2, 2, 3), np.uint8)).shape
        (6, 4, 3)
    """

    def __init__(self, padding, fill_value=0, padding_mode=Border.CONSTANT):
        ck.check_padding(padding)
        ck.check_fill_value(fill_value)
        ck.type_check(padding_mode, (Border,), "padding_mode")
        self.padding, self.fill_value, self.padding_mode = padding, fill_value, padding_mode
        self._pad = ck.parse_padding(padding)
        self._fill = ck.fill_tuple(fill_value)
        self._border = CV_BORDER[padding_mode]

    def _run(self, img: np.ndarray) -> np.ndarray:
        _check_pad_image(img)
        left, top, right, bottom = self._pad
        return geo.pad(img, top, bottom, left, right, self._border, self._fill)

    def _run_pil(self, img):
        _need_pil(img)
        return _pad_pil(img, *self._pad, self._fill, self.padding_mode)


def _check_int_or_pair(value, name: str, may_be_empty: bool = False) -> None:
    """PadToSize's check of `size` (an int or two, all positive) or `offset` (likewise but zero
    allowed, and it may be empty)."""
    ck.type_check(value, (int, list, tuple), name)
    if isinstance(value, int):
        ck.check_pos_int32(value, name, allow_zero=may_be_empty, exact_int=True)
        return
    if len(value) not in ((0, 2) if may_be_empty else (2,)):
        raise ValueError(f"The {name} must be {'empty or ' if may_be_empty else ''}a sequence of length 2.")
    for i, v in enumerate(value):
        ck.check_pos_int32(v, f"{name}{i}", allow_zero=may_be_empty, exact_int=True)


class PadToSize(ImageTensorOperation):
    """Pads the image to `size`, placing it at `offset` (centred when None).

    Args:
        size (Union[int, Sequence[int]]): target (height, width), or one int for a square.
        offset (Union[int, Sequence[int]], optional): (top, left) of the image in the output, or
            one int for both; None or () centres it. Default: None.
        fill_value (Union[int, tuple[int, int, int]], optional): fill for CONSTANT mode. Default: 0.
        padding_mode (Border, optional): CONSTANT, EDGE, REFLECT or SYMMETRIC. Default: Border.CONSTANT.

    Raises:
        TypeError: if an argument has the wrong type.
        ValueError: if a value is out of range.
        RuntimeError: if the image is larger than `size` or does not fit at `offset`.

    Examples:
        >>> import numpy as np
        >>> PadToSize((4, 5))(np.zeros((2, 2), np.uint8)).shape
        (4, 5)
    """

    implementation = Implementation.C

    def __init__(self, size, offset=None, fill_value=0, padding_mode=Border.CONSTANT):
        _check_int_or_pair(size, "size")
        if offset is not None:
            _check_int_or_pair(offset, "offset", may_be_empty=True)
        ck.check_fill_value(fill_value)
        ck.type_check(padding_mode, (Border,), "padding_mode")
        self.size, self.offset, self.fill_value, self.padding_mode = size, offset, fill_value, padding_mode
        self._hw = ck.size_pair(size)
        if offset is None or (not isinstance(offset, int) and len(offset) == 0):
            self._offset = None
        else:
            self._offset = (offset, offset) if isinstance(offset, int) else (offset[0], offset[1])
        self._fill = ck.fill_tuple(fill_value)
        self._border = CV_BORDER[padding_mode]

    def _run(self, img: np.ndarray) -> np.ndarray:
        _check_pad_image(img, "PadToSize")
        th, tw = self._hw
        h, w = img.shape[:2]
        if th < h or tw < w:
            raise op_error("PadToSize", f"the target size to pad should be no less than the original image "
                                        f"size, but got target size ({th}, {tw}) and original size ({h}, {w}).")
        if self._offset is None:
            top, left = (th - h) // 2, (tw - w) // 2
        else:
            top, left = self._offset
            if top + h > th or left + w > tw:
                raise op_error("PadToSize", f"the sum of offset and original image size should be no more "
                                            f"than the target size to pad, but got offset ({top}, {left}) plus "
                                            f"original size ({h}, {w}) bigger than ({th}, {tw})")
        return geo.pad(img, top, th - h - top, left, tw - w - left, self._border, self._fill)
