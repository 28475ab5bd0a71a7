"""Perspective warps: Perspective (NumPy via OpenCV-4 sampling, or Pillow) and RandomPerspective
(Pillow only, as in MindSpore)."""
from __future__ import annotations

import numpy as np

from headrace._util.rng import sample_rng
from headrace.dataset.vision import _checks as ck
from headrace.dataset.vision._base import ImageTensorOperation, PyImageOperation, is_pil, op_error
from headrace.dataset.vision._tables import CV_INTER, PIL_INTER
from headrace._image import perspective as kp
from headrace.dataset.vision._ops_geometry import NO_PIL_INTER, _interpolation_mode, _need_pil
from headrace.dataset.vision.utils import Inter

__all__ = ["Perspective", "RandomPerspective"]

# MindSpore's Perspective samples PILCUBIC bilinearly (checked against it).
_CV_PERSPECTIVE_INTER = {**CV_INTER, Inter.PILCUBIC: CV_INTER[Inter.BILINEAR]}


def _check_points(points, name: str) -> None:
    ck.type_check(points, (list, tuple), name)
    if len(points) != 4:
        raise TypeError(f"{name} should be a list or tuple of length 4.")
    for i, point in enumerate(points):
        ck.type_check(point, (list, tuple), f"{name}[{i}]")
        if len(point) != 2:
            raise TypeError(f"{name}[{i}] should be a list or tuple of length 2.")
        for j, value in enumerate(point):
            ck.type_check(value, (int,), f"{name}[{i}][{j}]")
            ck.check_range(value, (ck.INT32_MIN, ck.INT32_MAX), f"{name}[{i}][{j}]")


class Perspective(ImageTensorOperation):
    """Warps the image so that the four `start_points` move to the four `end_points`.

    Pixels that map from outside the image are black; the output keeps the input's size.

    Args:
        start_points (Sequence[Sequence[int, int]]): four (x, y) corners in the input
            (top-left, top-right, bottom-right, bottom-left).
        end_points (Sequence[Sequence[int, int]]): where they go in the output.
        interpolation (Inter, optional): NEAREST, BILINEAR, BICUBIC, AREA or PILCUBIC for NumPy
            input (AREA and PILCUBIC sample bilinearly, as in MindSpore), NEAREST, BILINEAR or BICUBIC
            for PIL input. Default: Inter.BILINEAR.

    Raises:
        TypeError: if an argument has the wrong type or the point lists the wrong length.
        ValueError: if a coordinate is outside the int32 range.
        RuntimeError: if the image is not HW or HWC.

    Examples:
        >>> import numpy as np
        >>> img = np.arange(12, dtype=np.uint8).reshape(3, 4)
        >>> shift = Perspective([[0, 0], [3, 0], [3, 2], [0, 2]], [[1, 0], [4, 0], [4, 2], [1, 2]], Inter.NEAREST)
        >>> shift(img).tolist()
        [[0, 0, 1, 2], [0, 4, 5, 6], [0, 8, 9, 10]]
    """

    def __init__(self, start_points, end_points, interpolation=Inter.BILINEAR):
        _check_points(start_points, "start_points")
        _check_points(end_points, "end_points")
        ck.type_check(interpolation, (Inter,), "interpolation")
        self.start_points, self.end_points, self.interpolation = start_points, end_points, interpolation
        _interpolation_mode(self, interpolation)
        self._matrix = kp.perspective_matrix(start_points, end_points)

    def _run(self, img: np.ndarray) -> np.ndarray:
        if img.ndim not in (2, 3):
            raise op_error("Perspective", "the dimension of image tensor does not match the requirement of "
                                          "operator. Expecting tensor in dimension of (2, 3), in shape of <H, W> or "
                                          f"<H, W, C>. But got dimension {img.ndim}."
                           + (" You may need to perform Decode first." if img.ndim < 2 else ""))
        if self.interpolation == Inter.ANTIALIAS:
            _need_pil(img)
        return kp.warp_perspective(img, self._matrix, _CV_PERSPECTIVE_INTER[self.interpolation])

    def _run_pil(self, img):
        _need_pil(img)
        if self.interpolation in (Inter.AREA, Inter.PILCUBIC):
            raise TypeError(NO_PIL_INTER)
        return kp.pil_perspective(img, self.start_points, self.end_points, PIL_INTER[self.interpolation])


class RandomPerspective(PyImageOperation):
    """With probability `prob`, moves each corner of a PIL image inwards by a random amount (up
    to `distortion_scale` of half the width / height) and warps the image accordingly.

    Args:
        distortion_scale (float, optional): how far corners may move, in [0, 1]. Default: 0.5.
        prob (float, optional): probability of warping, in [0, 1]. Default: 0.5.
        interpolation (Inter, optional): NEAREST, BILINEAR or BICUBIC (ANTIALIAS is accepted but
            Pillow refuses it for warps). Default: Inter.BICUBIC.

    Raises:
        TypeError: if an argument has the wrong type (both numbers must be floats).
        ValueError: if a number is outside [0, 1], or the input is not a PIL image.
        RuntimeError: if `interpolation` is AREA or PILCUBIC (when called).

    Examples:
        >>> import numpy as np
        >>> from PIL import Image
        >>> img = Image.fromarray(np.zeros((8, 8, 3), np.uint8))
        >>> RandomPerspective(0.3, 1.0)(img).size
        (8, 8)
    """

    random = True

    def __init__(self, distortion_scale=0.5, prob=0.5, interpolation=Inter.BICUBIC):
        ck.type_check(distortion_scale, (float,), "distortion_scale")
        ck.type_check(prob, (float,), "prob")
        ck.type_check(interpolation, (Inter,), "interpolation")
        ck.check_range(distortion_scale, (0.0, 1.0), "distortion_scale")
        ck.check_range(prob, (0.0, 1.0), "prob")
        self.distortion_scale, self.prob, self.interpolation = distortion_scale, prob, interpolation

    def end_points(self, width: int, height: int) -> list[list[int]]:
        """Draws the four moved corners (top-left, top-right, bottom-right, bottom-left)."""
        rng = sample_rng()
        dx, dy = int(self.distortion_scale * (width // 2)), int(self.distortion_scale * (height // 2))

        def pick(lo, hi):
            return int(rng.integers(lo, hi + 1))

        return [[pick(0, dx), pick(0, dy)], [pick(width - dx - 1, width - 1), pick(0, dy)],
                [pick(width - dx - 1, width - 1), pick(height - dy - 1, height - 1)],
                [pick(0, dx), pick(height - dy - 1, height - 1)]]

    def _run_pil(self, img):
        if not is_pil(img):
            raise ValueError("Input image should be a Pillow image.")
        if self.interpolation in (Inter.AREA, Inter.PILCUBIC):
            raise RuntimeError("Unsupported interpolation, only support NEAREST, ANTIALIAS, LINEAR and CUBIC.")
        if not sample_rng().random() < self.prob:
            return img
        w, h = img.size
        start = [[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]]
        return kp.pil_perspective(img, start, self.end_points(w, h), PIL_INTER[self.interpolation])
