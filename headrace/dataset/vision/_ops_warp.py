"""Warping ops: Rotate, RandomRotation, Affine, RandomAffine (OpenCV-4 fixed-point sampling for
NumPy input, so results match MindSpore; Pillow for PIL input)."""
from __future__ import annotations

import math
import numbers

import numpy as np
from PIL import Image

from headrace._util.rng import sample_rng
from headrace.dataset.transforms._base import Implementation
from headrace.dataset.vision import _checks as ck
from headrace.dataset.vision._base import ImageTensorOperation, is_pil, op_error
from headrace._image import geometry as geo
from headrace.dataset.vision._tables import CV_INTER, PIL_INTER
from headrace.dataset.vision._ops_geometry import NO_PIL_INTER, _check_pil_input, _interpolation_mode
from headrace.dataset.vision.utils import Inter

__all__ = ["Affine", "RandomAffine", "RandomRotation", "Rotate"]


# ------------------------------------------------------------------------------ rotation/affine


def _check_warp_image(img: np.ndarray, op: str) -> None:
    # MindSpore's words (both rotations run its kernel "Rotate")
    if img.ndim < 2 and op == "Rotate":
        raise op_error("Rotate", "the image tensor should have at least two dimensions. You may need to perform "
                                 f"Decode first. Got rank {img.ndim}.")
    if img.ndim not in (2, 3) and op == "RandomRotation":
        raise op_error("Rotate", f"input tensor is not in shape of <H,W> or <H,W,C>, but got rank: {img.ndim}")
    if img.ndim not in (2, 3):
        raise op_error(op, f"image shape is not <H,W,C> or <H,W>, but got rank: {img.ndim}")


class Rotate(ImageTensorOperation):
    """Rotates the image counter-clockwise by `degrees`.

    Args:
        degrees (Union[int, float]): the angle.
        resample (Inter, optional): NEAREST, BILINEAR, BICUBIC or AREA. Default: Inter.NEAREST.
        expand (bool, optional): grow the output to hold the whole rotated image. Default: False.
        center (tuple[float, float], optional): (x, y) to rotate about; None is the image centre.
            Default: None.
        fill_value (Union[int, tuple[int, int, int]], optional): fill outside the image. Default: 0.

    Raises:
        TypeError: if an argument has the wrong type.
        ValueError: if a value is out of range.

    Examples:
        >>> import numpy as np
        >>> Rotate(90)(np.array([[1, 2], [3, 4]], np.uint8)).tolist()
        [[2, 4], [1, 3]]
    """

    implementation = Implementation.C

    def __init__(self, degrees, resample=Inter.NEAREST, expand=False, center=None, fill_value=0):
        ck.type_check(degrees, (float, int), "degrees")
        ck.check_float32(degrees, "degrees")
        _check_resample_expand_center_fill(resample, expand, center, fill_value)
        self.degrees, self.resample, self.expand = degrees, resample, expand
        self.center, self.fill_value = center, fill_value
        self._fill = ck.fill_tuple(fill_value)[::-1]  # MindSpore's C++ Rotate reads the triple as BGR

    def _run(self, img: np.ndarray) -> np.ndarray:
        _check_warp_image(img, "Rotate")
        return _rotate_array(img, float(self.degrees), self.resample, self.expand, self.center, self._fill, "Rotate")


def _check_resample_expand_center_fill(resample, expand, center, fill_value) -> None:
    ck.type_check(resample, (Inter,), "resample")
    ck.type_check(expand, (bool,), "expand")
    if center is not None:
        ck.check_2tuple(center, "center")
        for v in center:
            ck.type_check(v, (int, float), "center")
            ck.check_range(v, (ck.INT32_MIN, ck.INT32_MAX), "center")
    ck.check_fill_value(fill_value)


def _warp_inter(resample: Inter, op: str, img: np.ndarray, kernel: str) -> int:
    """OpenCV's flag for ``resample``; refuses what MindSpore's warp kernel (``kernel``: "Rotate" or
    "Affine", the name its message gives whichever op called it) refuses."""
    if resample in (Inter.ANTIALIAS, Inter.PILCUBIC):
        raise op_error(op, "Invalid interpolation mode, only support NEAREST, LINEAR, CUBIC and AREA.")
    if resample == Inter.BICUBIC and img.ndim == 3 and img.shape[2] > 4:
        raise op_error(kernel, "interpolation can not be CUBIC when image channel is greater than 4.")
    return CV_INTER[resample]


def _rotate_array(img: np.ndarray, degrees: float, resample: Inter, expand: bool, center, fill: tuple,
                  op: str) -> np.ndarray:
    h, w = img.shape[:2]
    m, ow, oh = geo.rotation_matrix(h, w, degrees, center, expand)
    return geo.warp_affine(img, m, ow, oh, _warp_inter(resample, op, img, "Rotate"), fill)


class RandomRotation(ImageTensorOperation):
    """Rotates the image by an angle drawn uniformly from `degrees`.

    Args:
        degrees (Union[int, float, Sequence[float]]): (min, max) of the angle, or one non-negative
            number d for (-d, d).
        resample, expand, center, fill_value (optional): as in :class:`Rotate`, with the same defaults.

    Raises:
        TypeError: if an argument has the wrong type.
        ValueError: if a value is out of range.

    Examples:
        >>> import numpy as np
        >>> RandomRotation((90, 90))(np.array([[1, 2], [3, 4]], np.uint8)).tolist()
        [[2, 4], [1, 3]]
    """

    random = True

    def __init__(self, degrees, resample=Inter.NEAREST, expand=False, center=None, fill_value=0):
        ck.check_degrees(degrees)
        _check_resample_expand_center_fill(resample, expand, center, fill_value)
        if isinstance(degrees, (int, float)):
            d = degrees % 360
            rng = (-d, d)
        elif degrees[1] - degrees[0] >= 360:
            rng = (-180, 180)
        else:
            lo, hi = degrees[0] % 360, degrees[1] % 360
            rng = (lo, hi + 360 if lo > hi else hi)
        self.degrees, self.resample, self.expand = degrees, resample, expand
        self.center, self.fill_value = center, fill_value
        _interpolation_mode(self, resample)
        self._range = (float(rng[0]), float(rng[1]))
        self._fill = ck.fill_tuple(fill_value)
        self._fill_bgr = self._fill[::-1]  # the C++ op reads the triple as BGR

    def _angle(self) -> float:
        return float(sample_rng().uniform(self._range[0], self._range[1]))

    def _run(self, img: np.ndarray) -> np.ndarray:
        _check_warp_image(img, "RandomRotation")
        return _rotate_array(img, self._angle(), self.resample, self.expand, self.center, self._fill_bgr,
                             "RandomRotation")

    def _run_pil(self, img):
        _check_pil_input(img, self.resample)
        angle = self._angle() % 360.0
        if self.resample == Inter.ANTIALIAS and (angle not in (0, 90, 180, 270) or self.center):
            raise ValueError("When using Inter.ANTIALIAS, center needs to be None and angle needs to be an "
                             "integer multiple of 90.")
        return img.rotate(angle, PIL_INTER[self.resample], self.expand, self.center, fillcolor=self._fill)


def _check_affine_args(degrees, translate, scale, shear, resample, fill_value) -> None:
    ck.type_check(degrees, (int, float), "degrees")
    ck.check_range(degrees, (-180, 180), "degrees")
    ck.type_check(translate, (list, tuple), "translate")
    if len(translate) != 2:
        raise TypeError("The length of translate should be 2.")
    for i, t in enumerate(translate):
        ck.type_check(t, (int, float), f"translate[{i}]")
        ck.check_range(t, (-1.0, 1.0), f"translate[{i}]")
    ck.type_check(scale, (int, float), "scale")
    ck.check_positive(scale, "scale")
    ck.type_check(shear, (numbers.Number, tuple, list), "shear")
    if isinstance(shear, (list, tuple)):
        if len(shear) != 2:
            raise TypeError("The length of shear should be 2.")
        for i, s in enumerate(shear):
            ck.type_check(s, (int, float), f"shear[{i}]")
            ck.check_range(s, (-180, 180), f"shear[{i}]")
    else:
        ck.check_range(shear, (-180, 180), "shear")
    ck.type_check(resample, (Inter,), "resample")
    ck.check_fill_value(fill_value)


class Affine(ImageTensorOperation):
    """Applies an affine transform: rotation, translation, scale and shear about the centre.

    Args:
        degrees (float): rotation angle in degrees, in [-180, 180].
        translate (Sequence[float]): horizontal and vertical translation as fractions of the
            image width and height, each in [-1, 1].
        scale (float): scale factor, positive.
        shear (Union[float, Sequence[float]]): shear angle(s) in degrees: one for x, or (x, y).
        resample (Inter, optional): the interpolation. Default: Inter.NEAREST.
        fill_value (Union[int, tuple[int, int, int]], optional): fill outside the image. Default: 0.

    Raises:
        TypeError: if an argument has the wrong type, or `translate` or a sequence `shear` does
            not have 2 values.
        ValueError: if `degrees`, `translate` or `shear` is out of range, or `scale` is not positive.

    Examples:
        >>> import numpy as np
        >>> Affine(0, [0, 0], 1.0, 0)(np.ones((3, 3), np.uint8)).tolist()
        [[1, 1, 1], [1, 1, 1], [1, 1, 1]]
    """

    implementation = Implementation.C

    def __init__(self, degrees, translate, scale, shear, resample=Inter.NEAREST, fill_value=0):
        _check_affine_args(degrees, translate, scale, shear, resample, fill_value)
        self.degrees, self.translate, self.scale, self.shear = degrees, translate, scale, shear
        self.resample, self.fill_value = resample, fill_value
        self._shear = (float(shear), 0.0) if isinstance(shear, numbers.Number) else (float(shear[0]), float(shear[1]))
        self._fill = ck.fill_tuple(fill_value)

    def _params(self, h: int, w: int) -> tuple[float, tuple[float, float], float, tuple[float, float]]:
        shift = (float(self.translate[0]) * w, float(self.translate[1]) * h)
        return float(self.degrees), shift, float(self.scale), self._shear

    def _run(self, img: np.ndarray) -> np.ndarray:
        return _affine_array(img, "Affine", self._params, self.resample, self._fill)


def _affine_array(img: np.ndarray, op: str, params, resample: Inter, fill: tuple) -> np.ndarray:
    """Affine's and RandomAffine's NumPy kernel; ``params(h, w)`` gives (angle, (tx, ty) in pixels,
    scale, (shear_x, shear_y)), called once the image is checked."""
    _check_warp_image(img, op)
    h, w = img.shape[:2]
    angle, shift, scale, shear = params(h, w)
    m = geo.affine_matrix(h, w, angle, shift, scale, shear)
    return geo.warp_affine(img, m, w, h, _warp_inter(resample, op, img, "Affine"), fill)


class RandomAffine(ImageTensorOperation):
    """Applies a random affine transform.

    Args:
        degrees (Union[int, float, Sequence[float]]): rotation range (min, max), or d for (-d, d).
        translate (Sequence[float], optional): maximum translation as fractions of the width and
            height: (tx, ty) draws x in [-tx, tx] * width and y in [-ty, ty] * height; four values
            (x_min, x_max, y_min, y_max) give the ranges. Default: None (no translation).
        scale (Sequence[float], optional): scale range (min, max). Default: None (1.0).
        shear (Union[float, Sequence[float]], optional): shear range: s for x in (-s, s);
            (min, max) for x; (x_min, x_max, y_min, y_max). Default: None (no shear).
        resample (Inter, optional): the interpolation. Default: Inter.NEAREST.
        fill_value (Union[int, tuple[int, int, int]], optional): fill outside the image (NumPy
            input; on a PIL image the outside is black, as in MindSpore with Pillow >= 10).
            Default: 0.

    Raises:
        TypeError: if an argument has the wrong type.
        ValueError: if a value is out of range.

    Examples:
        >>> import numpy as np
        >>> RandomAffine(0)(np.ones((3, 3), np.uint8)).tolist()
        [[1, 1, 1], [1, 1, 1], [1, 1, 1]]
    """

    random = True

    def __init__(self, degrees, translate=None, scale=None, shear=None, resample=Inter.NEAREST, fill_value=0):
        ck.check_degrees(degrees)
        if translate is not None:
            ck.type_check(translate, (list, tuple), "translate")
            ck.type_check_list(translate, (int, float), "translate")
            if len(translate) not in (2, 4):
                raise TypeError("translate should be a list or tuple of length 2 or 4.")
            for i, t in enumerate(translate):
                ck.check_range(t, (-1.0, 1.0), f"translate at {i}")
        if scale is not None:
            ck.type_check(scale, (tuple, list), "scale")
            ck.type_check_list(scale, (int, float), "scale")
            if len(scale) != 2:
                raise TypeError("scale should be a list or tuple of length 2.")
            if scale[0] > scale[1]:
                raise ValueError("Input scale[1] must be equal to or greater than scale[0].")
            ck.check_ordered_range(scale, (0, ck.FLOAT_MAX_INTEGER))
            ck.check_positive(scale[1], "scale[1]")
        if shear is not None:
            ck.type_check(shear, (numbers.Number, tuple, list), "shear")
            if isinstance(shear, numbers.Number):
                ck.check_positive(shear, "shear")
            else:
                ck.type_check_list(shear, (int, float), "shear")
                if len(shear) not in (2, 4):
                    raise TypeError("shear must be of length 2 or 4.")
                if len(shear) == 2 and shear[0] > shear[1]:
                    raise ValueError("Input shear[1] must be equal to or greater than shear[0]")
                if len(shear) == 4 and (shear[0] > shear[1] or shear[2] > shear[3]):
                    raise ValueError("Input shear[1] must be equal to or greater than shear[0] and "
                                     "shear[3] must be equal to or greater than shear[2].")
        ck.type_check(resample, (Inter,), "resample")
        if fill_value is not None:
            ck.check_fill_value(fill_value)
        self.degrees, self.translate, self.scale, self.shear = degrees, translate, scale, shear
        self.resample, self.fill_value = resample, fill_value
        _interpolation_mode(self, resample)
        self._degrees = (-float(degrees), float(degrees)) if isinstance(degrees, numbers.Number) else \
            (float(degrees[0]), float(degrees[1]))
        if translate is None:
            self._translate = (0.0, 0.0, 0.0, 0.0)
        elif len(translate) == 2:
            self._translate = (-translate[0], translate[0], -translate[1], translate[1])
        else:
            self._translate = tuple(float(t) for t in translate)
        self._scale = (1.0, 1.0) if scale is None else (float(scale[0]), float(scale[1]))
        if shear is None:
            self._shear = (0.0, 0.0, 0.0, 0.0)
        elif isinstance(shear, numbers.Number):
            self._shear = (-float(shear), float(shear), 0.0, 0.0)
        elif len(shear) == 2:
            self._shear = (float(shear[0]), float(shear[1]), 0.0, 0.0)
        else:
            self._shear = tuple(float(s) for s in shear)
        self._fill = ck.fill_tuple(fill_value if fill_value is not None else 0)

    def params(self, h: int, w: int, pil: bool = False) -> tuple[float, tuple[float, float], float,
                                                                   tuple[float, float]]:
        """Draws (angle, (tx, ty) in pixels, scale, (shear_x, shear_y)) from ``sample_rng()``.

        The NumPy path shifts by a fraction drawn from the translate ranges times the image size;
        the Pillow path, as MindSpore's Python op, by a whole number of pixels drawn from
        (-translate[0] * width, translate[0] * width) and (-translate[1] * height, ...).
        """
        rng = sample_rng()
        angle = float(rng.uniform(self._degrees[0], self._degrees[1]))
        ux, uy = float(rng.random()), float(rng.random())
        if pil:
            mx, my = (0.0, 0.0) if self.translate is None else (self.translate[0] * w, self.translate[1] * h)
            tx, ty = float(np.round(-mx + 2 * mx * ux)), float(np.round(-my + 2 * my * uy))
        else:
            t = self._translate
            tx = (t[0] + (t[1] - t[0]) * ux) * w
            ty = (t[2] + (t[3] - t[2]) * uy) * h
        scale = float(rng.uniform(self._scale[0], self._scale[1]))
        s = self._shear
        shear = (float(rng.uniform(s[0], s[1])), float(rng.uniform(s[2], s[3])))
        return angle, (tx, ty), scale, shear

    def _run(self, img: np.ndarray) -> np.ndarray:
        return _affine_array(img, "RandomAffine", self.params, self.resample, self._fill)

    def _run_pil(self, img):
        if not is_pil(img):
            raise ValueError("Input image should be a Pillow image.")
        if self.resample in (Inter.AREA, Inter.PILCUBIC):
            raise TypeError(NO_PIL_INTER)
        w, h = img.size
        angle, (tx, ty), scale, (sx, sy) = self.params(h, w, pil=True)
        # MindSpore's Python op passes the fill only when ``Image.__version__ >= '5'`` as strings,
        # which is False for Pillow 10 and later: outside pixels are black whatever fill_value is.
        return img.transform((w, h), Image.AFFINE, _pil_affine_inverse(w, h, angle, (tx, ty), scale, (sx, sy)),
                             PIL_INTER[self.resample])


def _pil_affine_inverse(w: int, h: int, angle: float, translate: tuple[float, float], scale: float,
                        shear: tuple[float, float]) -> list[float]:
    """The inverse matrix Pillow's ``Image.transform(AFFINE)`` wants, as MindSpore's Python op builds it."""
    cx, cy = w * 0.5 + 0.5, h * 0.5 + 0.5
    a = math.radians(angle)
    s0, s1 = math.radians(shear[0]), math.radians(shear[1])
    inv_scale = 1.0 / scale
    d = math.cos(a + s0) * math.cos(a + s1) + math.sin(a + s0) * math.sin(a + s1)
    m = [math.cos(a + s0), math.sin(a + s0), 0.0, -math.sin(a + s1), math.cos(a + s1), 0.0]
    m = [inv_scale / d * v for v in m]
    tx, ty = translate
    m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty)
    m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty)
    m[2] += cx
    m[5] += cy
    return m
