"""Colour-space, lighting and linear ops: RgbToHsv, HsvToRgb and LinearTransformation (MindSpore's
"PY" ops, but on NumPy arrays only, returning float arrays) and RandomLighting (NumPy kernel).
"""
from __future__ import annotations

import numpy as np
from PIL import Image

from headrace._util.rng import sample_rng
from headrace.dataset.transforms._base import Implementation
from headrace.dataset.vision import _checks as ck
from headrace.dataset.vision._base import ImageTensorOperation, PyImageOperation, op_error
from headrace._image import hsv

__all__ = ["HsvToRgb", "LinearTransformation", "RandomLighting", "RgbToHsv"]

# AlexNet's PCA of ImageNet RGB pixels (0..255 scale): eigenvalues and eigenvectors (columns).
# MindSpore uses these; its draws' covariance was checked against them.
_EIGVAL = np.array([55.46, 4.794, 1.148])
_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009],
                    [-0.5808, -0.0045, -0.8140],
                    [-0.5836, -0.6948, 0.4203]])


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


def _convert(img: np.ndarray, is_hwc: bool, fn, narrow) -> np.ndarray:
    """Runs `fn` on the three planes of each image; `narrow` applies MindSpore's float32 rounding."""
    if img.ndim == 4:
        return np.stack([_convert(x, is_hwc, fn, narrow) for x in img])
    axis = -1 if is_hwc else -3
    planes = [np.take(img, i, axis=axis) for i in range(3)]
    out = list(fn(*planes))
    if img.dtype.kind == "f" and img.dtype.itemsize < 8:
        narrow(out, [float(p.flat[0]) for p in planes], img.dtype)
    return np.stack(out, axis=axis)


# NOTE [ HSV float32 rounding ]
# MindSpore maps colorsys over the pixels with np.vectorize, which computes in Python floats but
# picks each output plane's dtype from a trial call on the first pixel as NumPy scalars. For
# float32 input that trial yields float32 for some outputs, and the whole plane is then stored
# in float32 (MindSpore's result is float64, holding float32-rounded values). We round the
# same planes, decided by the same first pixel of each image.

def _narrow_hsv(out: list, first: list, dtype: np.dtype) -> None:
    if min(first) != max(first):             # colourful first pixel: saturation was a float32
        out[1] = out[1].astype(dtype).astype(np.float64)


def _narrow_rgb(out: list, first: list, dtype: np.dtype) -> None:
    h, s, _ = first
    if s == 0.0:                            # grey first pixel: all three planes were float32
        chans = (0, 1, 2)
    else:                                   # the plane that returned v unchanged was float32
        chans = ((0, 1, 1, 2, 2, 0)[int(h * 6.0) % 6],)
    for c in chans:
        out[c] = out[c].astype(dtype).astype(np.float64)


class _HsvConversion(PyImageOperation):
    """RGB <-> HSV on one image or a batch, in the layout `is_hwc` names."""

    _to_hsv = True

    def __init__(self, is_hwc=False):
        ck.type_check(is_hwc, (bool,), "is_hwc")
        self.is_hwc = is_hwc

    def _run_pil(self, img):
        _check_rgb_array(img, self.is_hwc, self._to_hsv)
        if self._to_hsv:
            return _convert(img, self.is_hwc, hsv.rgb_to_hsv, _narrow_hsv)
        return _convert(img, self.is_hwc, hsv.hsv_to_rgb, _narrow_rgb)


class RgbToHsv(_HsvConversion):
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


class HsvToRgb(_HsvConversion):
    """Converts HSV images (one, or a batch) back to RGB, as float64.

    Args:
        is_hwc (bool, optional): the layout, as in :class:`RgbToHsv`. Default: False.

    Raises:
        TypeError: where :class:`RgbToHsv` raises it (`is_hwc` or the input).

    Examples:
        >>> import numpy as np
        >>> HsvToRgb(is_hwc=True)(np.array([[[0.5, 1.0, 1.0]]])).tolist()
        [[[0.0, 1.0, 1.0]]]
    """

    _to_hsv = False


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


class RandomLighting(ImageTensorOperation):
    """Adds AlexNet-style PCA lighting noise to an RGB image: one random shift per channel,
    ``eigvec @ (a * eigval)`` with ``a`` drawn from a normal distribution of deviation `alpha`.

    uint8 images are rounded and clipped to [0, 255]. Other dtypes get the shift added in their
    own type (MindSpore misreads non-uint8 input; we do not reproduce that).

    Args:
        alpha (float, optional): standard deviation of the three weights, >= 0. Default: 0.05.

    Raises:
        TypeError: if `alpha` is not a number.
        ValueError: if `alpha` is negative or too large.
        RuntimeError: if the image is not HWC with 3 channels.

    Examples:
        >>> import numpy as np
        >>> RandomLighting(0.0)(np.full((1, 2, 3), 7, np.uint8)).tolist()
        [[[7, 7, 7], [7, 7, 7]]]
    """

    implementation = Implementation.C
    random = True

    def __init__(self, alpha=0.05):
        ck.check_non_negative_float32(alpha, "alpha")
        self.alpha = alpha

    def shift(self) -> np.ndarray:
        """Draws the three per-channel shifts (R, G, B) from ``sample_rng()``."""
        weights = sample_rng().normal(0.0, float(self.alpha), 3) if self.alpha else np.zeros(3)
        return _EIGVEC @ (weights * _EIGVAL)

    def _run(self, img: np.ndarray) -> np.ndarray:
        if img.ndim < 2:
            raise op_error("RandomLighting", "the shape of input tensor does not match the requirement of "
                                             "operator. Expecting tensor in shape of <height, width, ...>. But got "
                                             f"tensor with dimension {img.ndim}.")
        if img.ndim != 3 or img.shape[2] != 3:
            shape = ",".join(str(d) for d in img.shape)
            raise op_error("RandomLighting", f"input tensor is not in shape of <H,W,C> or channel is not 3, got "
                                             f"rank: {img.ndim}, and shape: <{shape}>")
        out = img.astype(np.float64) + self.shift()
        if img.dtype == np.uint8:
            return np.clip(np.rint(out), 0, 255).astype(np.uint8)
        return out.astype(img.dtype)

    def _run_pil(self, img):
        return Image.fromarray(self._run(np.asarray(img)))
