"""Geometry ops: resize, crops, flips and pads (MindSpore's signatures). Warps are in
``_ops_warp.py``, multi-crops and patches in ``_ops_patches.py``.

NumPy input runs OpenCV kernels (``headrace._image.geometry``); a PIL image runs Pillow, as MindSpore's
Python implementation does. Random ops draw from ``sample_rng()`` in the same order on both paths.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image, ImageOps

from headrace._util.rng import sample_rng
from headrace.dataset.transforms._base import Implementation
from headrace.dataset.vision import _checks as ck
from headrace.dataset.vision._base import ImageTensorOperation, is_pil, op_error, same_size
from headrace.dataset.vision._color_checks import _Device
from headrace._image import geometry as geo
from headrace.dataset.vision._tables import CV_BORDER, CV_INTER, PIL_INTER, PIL_PAD_MODE
from headrace.dataset.vision.utils import Border, Inter

__all__ = ["CenterCrop", "Crop", "RandomCrop", "RandomResizedCrop", "Resize", "ResizedCrop"]

PIL_ONLY = ("img should be PIL image. Got {}. Use Decode() for encoded data or ToPIL() for decoded "
            "data.")
NO_PIL_INTER = "Current Interpolation is not supported with PIL input."
DECODE_FIRST = " You may need to perform Decode first."


def _need_pil(img: Any) -> None:
    if not is_pil(img):
        raise TypeError(PIL_ONLY.format(type(img)))


def _shape_text(img: np.ndarray) -> str:
    return "<" + ",".join(str(d) for d in img.shape) + ">"


def _per_image(img: np.ndarray, fn) -> np.ndarray:
    """Applies ``fn`` to an HW/HWC image, or to each image of a batch (..., H, W, C)."""
    if img.ndim <= 3:
        return fn(img)
    lead = img.shape[:-3]
    flat = img.reshape((-1,) + img.shape[-3:])
    out = np.stack([fn(x) for x in flat])
    return out.reshape(lead + out.shape[1:])


def _check_pil_input(img: Any, inter: Inter) -> None:
    """What a Pillow kernel that resamples checks: a PIL image, and an interpolation Pillow has."""
    _need_pil(img)
    if inter in (Inter.AREA, Inter.PILCUBIC):
        raise TypeError(NO_PIL_INTER)


def _interpolation_mode(op: ImageTensorOperation, inter: Inter) -> None:
    """MindSpore's rule: ANTIALIAS only exists in Pillow, AREA and PILCUBIC only in OpenCV."""
    if inter in (Inter.AREA, Inter.PILCUBIC):
        op.implementation = Implementation.C
    elif inter == Inter.ANTIALIAS:
        op.implementation = Implementation.PY


def _resize_array(img: np.ndarray, h: int, w: int, inter: Inter, op: str) -> np.ndarray:
    if inter == Inter.PILCUBIC:
        if img.ndim != 3 or img.shape[2] != 3:
            raise op_error(op, f"Interpolation mode PILCUBIC only supports image with 3 channels, but "
                               f"got: {_shape_text(img)}")
        return geo.resize_pil_cubic(img, h, w)
    if inter == Inter.ANTIALIAS:
        raise op_error(op, "Unsupported interpolation, only support NEAREST, LINEAR, CUBIC, AREA and "
                           "PILCUBIC.")
    return geo.resize(img, h, w, CV_INTER[inter])


def _device_resize_mode(inter: Inter, op: str = "Resize") -> Any:
    """The resize mode of a device step (``headrace/_image/device.py``) for ``inter``."""
    if inter == Inter.PILCUBIC:
        return "pilcubic"
    if inter == Inter.ANTIALIAS:
        raise op_error(op, "Unsupported interpolation, only support NEAREST, LINEAR, CUBIC, AREA and "
                           "PILCUBIC.")
    return CV_INTER[inter]


def _device_resize(shape: tuple, oh: int, ow: int, inter: Inter, op: str) -> tuple[list[tuple], tuple]:
    """The device steps resizing an image of ``shape`` to oh x ow, checked as ``_resize_array``."""
    if inter == Inter.PILCUBIC and (len(shape) != 3 or shape[2] != 3):
        raise op_error(op, f"Interpolation mode PILCUBIC only supports image with 3 channels, but got: "
                           f"<{','.join(str(d) for d in shape)}>")
    return [("resize", oh, ow, _device_resize_mode(inter, op))], (oh, ow) + tuple(shape[2:])


def _device_window(shape: tuple, op: str) -> tuple[int, int]:
    """(h, w) of an <H,W> or <H,W,C> image on the GPU stage, else the op's rank error."""
    if len(shape) not in (2, 3):
        raise op_error(op, f"input tensor is not in shape of <H,W> or <H,W,C>, but got rank: {len(shape)}."
                       + (DECODE_FIRST if len(shape) < 2 else ""))
    return shape[0], shape[1]


# --------------------------------------------------------------------------------------- resize


class Resize(_Device, ImageTensorOperation):
    """Resizes the image to `size` with the given interpolation.

    Args:
        size (Union[int, Sequence[int]]): (height, width), or one int: the shorter side becomes
            `size` and the other keeps the aspect ratio (rounded down).
        interpolation (Inter, optional): NEAREST, BILINEAR, BICUBIC, AREA, PILCUBIC (NumPy input)
            or ANTIALIAS (PIL input). Default: Inter.BILINEAR.

    Raises:
        TypeError: if `size` or `interpolation` has the wrong type.
        ValueError: if `size` is not positive.
        RuntimeError: if the image has fewer than 2 dimensions.

    Examples:
        >>> import numpy as np
        >>> Resize((2, 3))(np.zeros((4, 6, 3), np.uint8)).shape
        (2, 3, 3)
    """

    def __init__(self, size, interpolation=Inter.LINEAR):
        if interpolation is None:
            raise KeyError("Interpolation should not be None")
        ck.check_resize_size(size)
        ck.type_check(interpolation, (Inter,), "interpolation")
        self.size, self.interpolation = size, interpolation
        _interpolation_mode(self, interpolation)
        self._inter = interpolation

    def _run(self, img: np.ndarray) -> np.ndarray:
        if self.device_target != "CPU":
            self._check_device()
        if img.ndim < 2:
            raise op_error("Resize", "the image tensor should have at least two dimensions." + DECODE_FIRST)
        h, w = (img.shape[-3], img.shape[-2]) if img.ndim >= 4 else img.shape[:2]
        oh, ow = self._out_size(h, w)
        if img.ndim >= 4:
            return _per_image(img, lambda x: _resize_array(x, oh, ow, self._inter, "Resize"))
        if img.dtype == np.bool_:
            return _resize_array(img.view(np.uint8), oh, ow, self._inter, "Resize").astype(bool)
        return _resize_array(img, oh, ow, self._inter, "Resize")

    def _out_size(self, h: int, w: int) -> tuple[int, int]:
        oh, ow = geo.output_size(self.size, h, w)
        if oh > 1000 * h or ow > 1000 * w:
            raise op_error("Resize", f"the resizing width or height is too big, it's 1000 times bigger "
                                     f"than the original image, got output height: {oh}, width: {ow}, "
                                     f"and original image size:{h}, {w}")
        return oh, ow

    def _device_plan(self, shape: tuple) -> tuple[list[tuple], tuple]:
        """The GPU stage's steps for an image of ``shape``, checked as the CPU kernel checks."""
        if len(shape) < 2:
            raise op_error("Resize", "the image tensor should have at least two dimensions." + DECODE_FIRST)
        if len(shape) > 3:
            raise op_error("Resize", f"device_target 'GPU' resizes one <H,W> or <H,W,C> image, but got rank: "
                                     f"{len(shape)}.")
        oh, ow = self._out_size(shape[0], shape[1])
        return _device_resize(shape, oh, ow, self._inter, "Resize")

    def _run_pil(self, img):
        if self.device_target != "CPU":
            self._check_device()
        _check_pil_input(img, self._inter)
        return _pil_resize(img, self.size, PIL_INTER[self._inter])


def _pil_resize(img: Image.Image, size, resample) -> Image.Image:
    if isinstance(size, int):
        w, h = img.size
        aspect = w / h
        if (w <= h and w == size) or (h <= w and h == size):
            return img
        if w < h:
            return img.resize((size, int(size / aspect)), resample)
        return img.resize((int(size * aspect), size), resample)
    return img.resize((size[1], size[0]), resample)


# ---------------------------------------------------------------------------------------- crops


class CenterCrop(ImageTensorOperation):
    """Crops the central region of `size`; a size larger than the image pads it with zeros.

    Args:
        size (Union[int, Sequence[int]]): (height, width), or one int for a square.

    Raises:
        TypeError: if `size` has the wrong type.
        ValueError: if `size` is not positive.

    Examples:
        >>> import numpy as np
        >>> CenterCrop(2)(np.arange(16, dtype=np.uint8).reshape(4, 4)).tolist()
        [[5, 6], [9, 10]]
    """

    def __init__(self, size):
        ck.check_crop_size(size)
        self.size = size
        self._hw = ck.size_pair(size)

    def _run(self, img: np.ndarray) -> np.ndarray:
        if img.ndim < 2:
            raise op_error("CenterCrop", f"Input tensor should have at least 2 dimensions, but got: {img.ndim}")
        return _per_image(img, self._one)

    def _one(self, img: np.ndarray) -> np.ndarray:
        ch, cw = self._hw
        h, w = img.shape[:2]
        if ch > h or cw > w:
            dh, dw = max(ch - h, 0), max(cw - w, 0)
            if dh >= 3 * h or dw >= 3 * w:  # MindSpore's bound on the NumPy path
                raise op_error("CenterCrop", f"Padding size cannot be more than 3 times of the original image "
                                             f"size, got top padding: {dh}, left padding: {dw}, while the "
                                             f"original image size: {h}, {w}")
            img = geo.pad(img, dh - dh // 2, dh // 2, dw - dw // 2, dw // 2, CV_BORDER[Border.CONSTANT], 0)
            h, w = img.shape[:2]
        return geo.crop(img, (h - ch) // 2, (w - cw) // 2, ch, cw)

    def _run_pil(self, img):
        _need_pil(img)
        w, h = img.size
        ch, cw = self._hw
        top, left = int(round((h - ch) / 2.0)), int(round((w - cw) / 2.0))
        return img.crop((left, top, left + cw, top + ch))


class Crop(_Device, ImageTensorOperation):
    """Crops the window at `coordinates` (top, left) of `size`.

    Args:
        coordinates (Sequence[int]): (top, left) of the window.
        size (Union[int, Sequence[int]]): (height, width), or one int for a square.

    Raises:
        TypeError: if `coordinates` is not two ints or `size` not an int or two.
        ValueError: if a coordinate is negative or a size not positive.
        RuntimeError: if the window does not fit in the image.

    Examples:
        >>> import numpy as np
        >>> Crop((1, 1), 2)(np.arange(16, dtype=np.uint8).reshape(4, 4)).tolist()
        [[5, 6], [9, 10]]
    """

    implementation = Implementation.C

    def __init__(self, coordinates, size):
        ck.check_crop_coordinates(coordinates)
        ck.check_crop_size(size)
        self.coordinates, self.size = coordinates, size
        self._box = (coordinates[0], coordinates[1]) + ck.size_pair(size)

    def _device_plan(self, shape: tuple) -> tuple[list[tuple], tuple]:
        """The GPU stage's step for an image of ``shape``, checked as the CPU kernel checks."""
        top, left, ch, cw = self._fitted(*_device_window(shape, "Crop"))
        return [("crop", top, left, ch, cw)], (ch, cw) + tuple(shape[2:])

    def _run(self, img: np.ndarray) -> np.ndarray:
        if self.device_target != "CPU":
            self._check_device()
        if img.ndim not in (2, 3):
            tail = DECODE_FIRST if img.ndim < 2 else ""
            raise op_error("Crop", f"input tensor is not in shape of <H,W> or <H,W,C>, but got rank: "
                                   f"{img.ndim}.{tail}" if tail else
                           f"input tensor is not in shape of <H,W> or <H,W,C>, but got rank: {img.ndim}")
        return geo.crop(img, *self._fitted(img.shape[0], img.shape[1]))

    def _fitted(self, h: int, w: int) -> tuple[int, int, int, int]:
        """The window (top, left, height, width), checked to fit an h x w image."""
        top, left, ch, cw = self._box
        if top + ch > h:
            raise op_error("Crop", f"Crop height dimension: {top + ch} exceeds image height: {h}")
        if left + cw > w:
            raise op_error("Crop", f"Crop width dimension: {left + cw} exceeds image width: {w}")
        return self._box


def _pad_pil(img: Image.Image, left: int, top: int, right: int, bottom: int, fill: tuple,
             mode: Border) -> Image.Image:
    """MindSpore's Pillow padding (ImageOps.expand for constant, np.pad otherwise)."""
    if mode == Border.CONSTANT:
        if img.mode == "P":
            palette = img.getpalette()
            out = ImageOps.expand(img, border=(left, top, right, bottom), fill=fill)
            out.putpalette(palette)
            return out
        if img.mode in ("L", "1"):
            fill = (fill[0],)
        return ImageOps.expand(img, border=(left, top, right, bottom), fill=fill)
    arr = np.asarray(img)
    widths = ((top, bottom), (left, right)) + (((0, 0),) if arr.ndim == 3 else ())
    out = Image.fromarray(np.pad(arr, widths, PIL_PAD_MODE[mode]))
    if img.mode == "P":
        out.putpalette(img.getpalette())
    return out


def _check_pad_image(img: np.ndarray, op: str = "Pad") -> None:
    if img.ndim not in (2, 3):
        raise op_error(op, "the dimension of image tensor does not match the requirement of operator. "
                           "Expecting tensor in dimension of (2, 3), in shape of <H, W> or <H, W, C>. "
                           f"But got dimension {img.ndim}." + (DECODE_FIRST if img.ndim < 2 else ""))
    if img.ndim == 3 and img.shape[2] not in (1, 3):
        raise op_error(op, "the channel of image tensor does not match the requirement of operator. "
                           f"Expecting tensor in channel of (1, 3). But got channel {img.shape[2]}.")


class RandomCrop(ImageTensorOperation):
    """Crops a window of `size` at a random position, after optional padding.

    Args:
        size (Union[int, Sequence[int]]): (height, width) of the window, or one int.
        padding (Union[int, Sequence[int]], optional): padding added first: an int for all sides,
            (left/right, top/bottom) or (left, top, right, bottom). Default: None.
        pad_if_needed (bool, optional): pad the image when it is smaller than `size`. Default: False.
        fill_value (Union[int, tuple[int, int, int]], optional): fill for CONSTANT padding. Default: 0.
        padding_mode (Border, optional): CONSTANT, EDGE, REFLECT or SYMMETRIC. Default: Border.CONSTANT.

    Raises:
        TypeError: if an argument has the wrong type.
        ValueError: if a value is out of range.
        RuntimeError: if the (padded) image is smaller than `size`.

    Examples:
        >>> import numpy as np
        >>> RandomCrop(4, padding=2)(np.zeros((4, 4, 3), np.uint8)).shape
        (4, 4, 3)
    """

    random = True
    shared_draw = True  # several columns (an image and its mask) get the same window

    def __init__(self, size, padding=None, pad_if_needed=False, fill_value=0, padding_mode=Border.CONSTANT):
        ck.check_crop_size(size)
        ck.type_check(pad_if_needed, (bool,), "pad_if_needed")
        if padding is not None:
            ck.check_padding(padding)
        if fill_value is not None:
            ck.check_fill_value(fill_value)
        if padding_mode is not None:
            ck.type_check(padding_mode, (Border,), "padding_mode")
        self.size, self.padding, self.pad_if_needed = size, padding, pad_if_needed
        self.fill_value, self.padding_mode = fill_value, padding_mode
        self._hw = ck.size_pair(size)
        self._pad = ck.parse_padding(padding) if padding is not None else (0, 0, 0, 0)
        self._fill = ck.fill_tuple(fill_value)
        self._border = CV_BORDER[padding_mode]

    def _run(self, img: np.ndarray) -> np.ndarray:
        if img.ndim < 2:
            raise op_error("RandomCropOp", f"input tensor should have at least 2 dimensions, but got: {img.ndim}")
        return _per_image(img, self._one)

    def _check_shared(self, arrays: list[np.ndarray]) -> None:
        same_size(arrays, "RandomCrop", "Input images in different column must have the same shape, check "
                                        "the output shape in specified 'input_columns' before call this operation.")

    def _padded(self, img: np.ndarray) -> tuple[np.ndarray, int, int]:
        """The image with the fixed padding and, with pad_if_needed, what the window lacks;
        also the (top, left) offsets added. Checks that the window fits."""
        _check_pad_image(img)
        ch, cw = self._hw
        left, top, right, bottom = self._pad
        h, w = img.shape[0] + top + bottom, img.shape[1] + left + right
        if self.pad_if_needed:
            if h < ch:
                top, bottom = top + ch - h, bottom + ch - h
            if w < cw:
                left, right = left + cw - w, right + cw - w
            h, w = img.shape[0] + top + bottom, img.shape[1] + left + right
        if h < ch or w < cw:
            raise op_error("RandomCrop", f"invalid crop size, crop size is bigger than the image "
                                         f"dimensions, got crop height: {ch}, crop width: {cw}")
        if top or bottom or left or right:
            img = geo.pad(img, top, bottom, left, right, self._border, self._fill)
        return img, top, left

    def _one(self, img: np.ndarray) -> np.ndarray:
        img, _, _ = self._padded(img)
        ch, cw = self._hw
        h, w = img.shape[:2]
        rng = sample_rng()
        y = int(rng.integers(0, h - ch + 1))
        x = int(rng.integers(0, w - cw + 1))
        return geo.crop(img, y, x, ch, cw)

    def _run_pil(self, img):
        _need_pil(img)
        ch, cw = self._hw
        if self.padding is not None:
            img = _pad_pil(img, *self._pad, self._fill, self.padding_mode)
        if self.pad_if_needed and img.size[0] < cw:
            d = cw - img.size[0]
            img = _pad_pil(img, d, 0, d, 0, self._fill, self.padding_mode)
        if self.pad_if_needed and img.size[1] < ch:
            d = ch - img.size[1]
            img = _pad_pil(img, 0, d, 0, d, self._fill, self.padding_mode)
        w, h = img.size
        if ch > h or cw > w:
            raise ValueError(f"Crop size {tuple(self.size) if not isinstance(self.size, int) else self._hw} "
                             f"is larger than input image size {(h, w)}.")
        rng = sample_rng()
        y = int(rng.integers(0, h - ch + 1))
        x = int(rng.integers(0, w - cw + 1))
        return img.crop((x, y, x + cw, y + ch))


def _keep_window_args(op: ImageTensorOperation, size, scale, ratio, interpolation, max_attempts) -> None:
    """Checks the arguments RandomResizedCrop and RandomCropDecodeResize share, and keeps them on
    ``op`` (with the output (h, w) and the ranges as floats)."""
    if interpolation is not None:
        ck.type_check(interpolation, (Inter,), "interpolation")
    ck.check_scale_ratio_attempts(size, scale, ratio, max_attempts)
    op.size, op.scale, op.ratio = size, scale, ratio
    op.interpolation, op.max_attempts = interpolation, max_attempts
    op._hw = ck.size_pair(size)
    op._scale = (float(scale[0]), float(scale[1]))
    op._ratio = (float(ratio[0]), float(ratio[1]))


class RandomResizedCrop(_Device, ImageTensorOperation):
    """Crops a random window (area fraction in `scale`, aspect ratio in `ratio`) and resizes it.

    Args:
        size (Union[int, Sequence[int]]): output (height, width), or one int for a square.
        scale (Sequence[float], optional): range of the window's area fraction. Default: (0.08, 1.0).
        ratio (Sequence[float], optional): range of its aspect ratio (width / height).
            Default: (3/4, 4/3).
        interpolation (Inter, optional): the resize interpolation. Default: Inter.BILINEAR.
        max_attempts (int, optional): tries before falling back to a centre crop. Default: 10.

    Raises:
        TypeError: if an argument has the wrong type.
        ValueError: if a range is reversed or out of bounds.

    Examples:
        >>> import numpy as np
        >>> RandomResizedCrop(8)(np.zeros((20, 30, 3), np.uint8)).shape
        (8, 8, 3)
    """

    random = True
    shared_draw = True  # several columns (an image and its mask) get the same window

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3. / 4., 4. / 3.), interpolation=Inter.BILINEAR,
                 max_attempts=10):
        _keep_window_args(self, size, scale, ratio, interpolation, max_attempts)
        _interpolation_mode(self, interpolation)

    def _check_shared(self, arrays: list[np.ndarray]) -> None:
        same_size(arrays, "RandomCropAndResizeOp", "Input tensor in different columns of each row must have "
                                                   "the same size.")

    def box(self, h: int, w: int, pil: bool = False) -> tuple[int, int, int, int]:
        """Draws (top, left, height, width) for an h x w image from ``sample_rng()``."""
        return geo.random_resized_crop_box(sample_rng(), h, w, self._scale, self._ratio, self.max_attempts, pil)

    def _run(self, img: np.ndarray) -> np.ndarray:
        if self.device_target != "CPU":
            self._check_device()
        if img.ndim < 2:
            raise op_error("RandomResizedCrop", "input tensor should have at least 2 dimensions, but got: "
                                                f"{img.ndim}")
        return _per_image(img, self._one)

    def _device_plan(self, shape: tuple) -> tuple[list[tuple], tuple]:
        """The GPU stage's steps for an image of ``shape``: the window drawn as ``_run`` draws it."""
        if len(shape) < 2:
            raise op_error("RandomResizedCrop", "input tensor should have at least 2 dimensions, but got: "
                                                f"{len(shape)}")
        if len(shape) > 3:
            raise op_error("RandomResizedCrop", f"device_target 'GPU' crops one <H,W> or <H,W,C> image, but got "
                                                f"rank: {len(shape)}.")
        top, left, ch, cw = self.box(shape[0], shape[1])
        steps, out = _device_resize((ch, cw) + tuple(shape[2:]), self._hw[0], self._hw[1], self.interpolation,
                                    "RandomResizedCrop")
        return [("crop", top, left, ch, cw)] + steps, out

    def _one(self, img: np.ndarray) -> np.ndarray:
        top, left, ch, cw = self.box(img.shape[0], img.shape[1])
        window = img[top:top + ch, left:left + cw]
        return _resize_array(window, self._hw[0], self._hw[1], self.interpolation, "RandomResizedCrop")

    def _run_pil(self, img):
        if self.device_target != "CPU":
            self._check_device()
        _check_pil_input(img, self.interpolation)
        w, h = img.size
        top, left, ch, cw = self.box(h, w, pil=True)
        window = img.crop((left, top, left + cw, top + ch))
        return window.resize((self._hw[1], self._hw[0]), PIL_INTER[self.interpolation])


class ResizedCrop(_Device, ImageTensorOperation):
    """Crops the window (top, left, height, width) and resizes it to `size`.

    Args:
        top (int): top row of the window.
        left (int): left column of the window.
        height (int): window height.
        width (int): window width.
        size (Union[int, Sequence[int]]): output (height, width), or one int for a square.
        interpolation (Inter, optional): the resize interpolation. Default: Inter.BILINEAR.

    Raises:
        TypeError: if `top`, `left`, `height` or `width` is not an int, `size` not an int or two,
            or `interpolation` not an Inter.
        ValueError: if `top` or `left` is negative, or `height`, `width` or `size` not positive.
        RuntimeError: if the window does not fit in the image.

    Examples:
        >>> import numpy as np
        >>> ResizedCrop(0, 0, 4, 4, 2)(np.zeros((8, 8), np.uint8)).shape
        (2, 2)
    """

    implementation = Implementation.C

    def __init__(self, top, left, height, width, size, interpolation=Inter.BILINEAR):
        ck.check_pos_int32(top, "top", allow_zero=True, exact_int=True)
        ck.check_pos_int32(left, "left", allow_zero=True, exact_int=True)
        ck.check_pos_int32(height, "height", exact_int=True)
        ck.check_pos_int32(width, "width", exact_int=True)
        ck.type_check(interpolation, (Inter,), "interpolation")
        ck.check_crop_size(size)
        self.top, self.left, self.height, self.width = top, left, height, width
        self.size, self.interpolation = size, interpolation
        self._hw = ck.size_pair(size)

    def _check_window(self, shape: tuple) -> None:
        """Raises unless an image of ``shape`` is <H,W> or <H,W,C> and holds the window."""
        if len(shape) not in (2, 3):
            raise op_error("ResizedCropOp", f"input tensor is not in shape of <H,W> or <H,W,C>, but got "
                                            f"rank: {len(shape)}." + (DECODE_FIRST if len(shape) < 2 else ""))
        h, w = shape[0], shape[1]
        if self.top + self.height > h:
            raise op_error("ResizedCrop", f"the sum of top and height: {self.top + self.height} exceeds "
                                          f"image height: {h}")
        if self.left + self.width > w:
            raise op_error("ResizedCrop", f"the sum of left and width: {self.left + self.width} exceeds "
                                          f"image width: {w}")

    def _device_plan(self, shape: tuple) -> tuple[list[tuple], tuple]:
        """The GPU stage's steps for an image of ``shape``, checked as the CPU kernel checks."""
        self._check_window(shape)
        steps, out = _device_resize((self.height, self.width) + tuple(shape[2:]), self._hw[0], self._hw[1],
                                    self.interpolation, "ResizedCrop")
        return [("crop", self.top, self.left, self.height, self.width)] + steps, out

    def _run(self, img: np.ndarray) -> np.ndarray:
        if self.device_target != "CPU":
            self._check_device()
        self._check_window(img.shape)
        if self.interpolation == Inter.ANTIALIAS:
            raise RuntimeError("Unsupported interpolation, only support NEAREST, LINEAR, CUBIC, AREA and "
                               "PILCUBIC.")
        window = img[self.top:self.top + self.height, self.left:self.left + self.width]
        return _resize_array(window, self._hw[0], self._hw[1], self.interpolation, "ResizedCrop")


# ---------------------------------------------------------------------------------------- flips


# ----------------------------------------------------------------------------------------- pads
