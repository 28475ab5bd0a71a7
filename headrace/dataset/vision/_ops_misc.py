"""Colour-space and linear ops on NumPy arrays that MindSpore implements in Python:
RgbToHsv, HsvToRgb and LinearTransformation (Pillow-free, but MindSpore's "PY" ops, so they take
NumPy arrays only and return float arrays).
"""
from __future__ import annotations

import numpy as np

from headrace.dataset.vision import _checks as ck
from headrace.dataset.vision._base import PyImageOperation
from headrace.dataset.vision._kernels import hsv

__all__ = ["HsvToRgb", "LinearTransformation", "RgbToHsv"]


def _check_rgb_array(img, is_hwc: bool, to_hsv: bool) -> None:
    # MindSpore words the two ops' messages slightly differently (spacing, final full stop).
    if not isinstance(img, np.ndarray):
        raise TypeError(f"img should be NumPy image. Got {type(img)}" + ("" if to_hsv else "."))
    if img.ndim not in (3, 4):
        layouts = "(C ,H, W)" if to_hsv else "(C, H, W)"
        raise TypeError(f"img shape should be (H, W, C)/(N, H, W, C)/{layouts}/(N, C, H, W). Got {img.shape}.")
    c = img.shape[-1] if is_hwc else img.shape[-3]
    if c != 3:
        raise TypeError(f"img should be 3 channels RGB img. Got {c} channels.")


def _convert(img: np.ndarray, is_hwc: bool, fn) -> np.ndarray:
    axis = -1 if is_hwc else -3
    a, b, c = (np.take(img, i, axis=axis) for i in range(3))
    return np.stack(fn(a, b, c), axis=axis)


class RgbToHsv(PyImageOperation):
    """Converts RGB images (one, or a batch) to HSV, as float64.

    Hue and saturation are in [0, 1]; value is the largest channel, in the input's scale (so
    float input in [0, 1] gives value in [0, 1], uint8 input gives value in [0, 255]).

    Args:
        is_hwc (bool, optional): whether the layout is (H, W, C) / (N, H, W, C) rather than
            (C, H, W) / (N, C, H, W). Default: False.

    Raises:
        TypeError: if `is_hwc` is not a bool, or the input is not a 3- or 4-D NumPy array with
            3 channels.

    Examples:
        >>> import numpy as np
        >>> RgbToHsv(is_hwc=True)(np.array([[[1.0, 0.5, 0.0]]])).tolist()
        [[[0.08333333333333333, 1.0, 1.0]]]
    """

    def __init__(self, is_hwc=False):
        ck.type_check(is_hwc, (bool,), "is_hwc")
        self.is_hwc = is_hwc

    def _run_pil(self, img):
        _check_rgb_array(img, self.is_hwc, True)
        return _convert(img, self.is_hwc, hsv.rgb_to_hsv)


class HsvToRgb(PyImageOperation):
    """Converts HSV images (one, or a batch) back to RGB, as float64.

    Args:
        is_hwc (bool, optional): whether the layout is (H, W, C) / (N, H, W, C) rather than
            (C, H, W) / (N, C, H, W). Default: False.

    Raises:
        TypeError: if `is_hwc` is not a bool, or the input is not a 3- or 4-D NumPy array with
            3 channels.

    Examples:
        >>> import numpy as np
        >>> HsvToRgb(is_hwc=True)(np.array([[[0.5, 1.0, 1.0]]])).tolist()
        [[[0.0, 1.0, 1.0]]]
    """

    def __init__(self, is_hwc=False):
        ck.type_check(is_hwc, (bool,), "is_hwc")
        self.is_hwc = is_hwc

    def _run_pil(self, img):
        _check_rgb_array(img, self.is_hwc, False)
        return _convert(img, self.is_hwc, hsv.hsv_to_rgb)


class LinearTransformation(PyImageOperation):
    """Flattens the array, subtracts `mean_vector` and multiplies by `transformation_matrix`
    (a row vector times the matrix, as in ZCA whitening), keeping the input's shape.

    Args:
        transformation_matrix (numpy.ndarray): a square D x D matrix, D the number of elements
            of the input.
        mean_vector (numpy.ndarray): a vector of length D.

    Raises:
        TypeError: if an argument or the input is not a NumPy array.
        ValueError: if the matrix is not square, the vector's length differs from it, or the
            input does not have D elements.

    Examples:
        >>> import numpy as np
        >>> op = LinearTransformation(np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([1.0, 0.0]))
        >>> op(np.array([3.0, 5.0])).tolist()
        [5.0, 2.0]
    """

    def __init__(self, transformation_matrix, mean_vector):
        ck.type_check(transformation_matrix, (np.ndarray,), "transformation_matrix")
        ck.type_check(mean_vector, (np.ndarray,), "mean_vector")
        shape = transformation_matrix.shape
        if shape[0] != shape[1]:
            raise ValueError(f"transformation_matrix should be a square matrix. Got shape {shape} instead.")
        if mean_vector.shape[0] != shape[0]:
            raise ValueError(f"mean_vector length {mean_vector.shape[0]} should match either one dimension of "
                             f"the squaretransformation_matrix {shape}.")
        self.transformation_matrix, self.mean_vector = transformation_matrix, mean_vector

    def _run_pil(self, img):
        if not isinstance(img, np.ndarray):
            raise TypeError(f"img should be NumPy array. Got {type(img)}")
        m = self.transformation_matrix
        if m.shape[0] != img.size:
            raise ValueError(f"transformation_matrix shape {m.shape} not compatible with Numpy image shape "
                             f"{img.shape}.")
        return np.dot(img.reshape(1, -1) - self.mean_vector, m).reshape(img.shape)
