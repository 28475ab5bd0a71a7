"""Erasing and mixing operations of ``headrace.dataset.vision``: CutOut, Erase, RandomErasing,
MixUp, MixUpBatch and CutMixBatch (MindSpore's names, signatures and checks; kernels in
``headrace/_image/mix.py``)."""
from __future__ import annotations

import numbers

import numpy as np

from headrace._util.rng import sample_rng
from headrace.dataset.transforms._base import Implementation
from headrace._util.checks import check_pos_int32
from headrace.dataset.transforms._checks import (FLOAT_MAX_INTEGER, UINT8_MAX,
                                                 check_pos_float32, check_positive,
                                                 check_ordered_range, check_range, type_check, type_check_list)
from headrace.dataset.vision._base import ImageTensorOperation, PyImageOperation, op_error
from headrace._image import mix as M
from headrace.dataset.vision._color_checks import CV_NO_F16, _Device, check_image
from headrace.dataset.vision.utils import ImageBatchFormat

__all__ = ["CutMixBatch", "CutOut", "Erase", "MixUp", "MixUpBatch", "RandomErasing"]


class CutOut(ImageTensorOperation):
    """Sets `num_patches` random square patches of side `length` to 0.

    A patch may hang over the image border (it is clipped), as in MindSpore.

    Args:
        length (int): side of each patch, at least 1 and at most the image height and width.
        num_patches (int, optional): number of patches. Default: 1.
        is_hwc (bool, optional): whether the image is <H, W, C> (else <C, H, W>). Default: True.

    Raises:
        TypeError: if `length` or `num_patches` is not an int, or `is_hwc` not a bool.
        ValueError: if `length` or `num_patches` is less than 1.
        RuntimeError: if the image is not 3-D or is smaller than a patch.

    Examples:
        >>> import numpy as np
        >>> out = CutOut(2, num_patches=3)(np.full((6, 6, 3), 9, np.uint8))
        >>> out.shape, bool(np.isin(out, (0, 9)).all())
        ((6, 6, 3), True)
    """

    implementation = Implementation.C
    random = True

    def __init__(self, length, num_patches=1, is_hwc=True):
        type_check(length, (int,), "length")
        type_check(num_patches, (int,), "num_patches")
        type_check(is_hwc, (bool,), "is_hwc")
        check_range(length, (1, FLOAT_MAX_INTEGER))
        check_range(num_patches, (1, FLOAT_MAX_INTEGER))
        self.length = length
        self.num_patches = num_patches
        self.is_hwc = is_hwc

    def _run(self, img):
        if img.ndim < 3:
            raise op_error("CutOut", f"the image should be <H, W, C> or <C, H, W>, but got rank: {img.ndim}. "
                                     f"You may need to perform Decode first.")
        if img.ndim > 3:
            raise op_error("CutOut", f"image shape is not <H,W,C>, but got rank: {img.ndim}")
        h, w = (img.shape[0], img.shape[1]) if self.is_hwc else (img.shape[1], img.shape[2])
        if self.length > h or self.length > w:
            raise op_error("CutOut", f"box size is too large for image erase, got box height: {self.length}, "
                                     f"box width: {self.length}, and image height: {h}, image width: {w}")
        return M.cutout(img, self.length, self.num_patches, self.is_hwc, sample_rng())


class Erase(_Device, ImageTensorOperation):
    """Fills a box of an <H, W, 3> image with a value.

    Args:
        top (int): top row of the box (>= 0).
        left (int): left column of the box (>= 0).
        height (int): box height (>= 1).
        width (int): box width (>= 1).
        value (Union[float, Sequence[float, float, float]], optional): fill value, one or per
            channel, in [0, 255]; rounded into the image dtype. Default: 0.0.
        inplace (bool, optional): write into the input array. Default: False.

    Raises:
        TypeError: if an argument has the wrong type.
        ValueError: if an argument is out of range.
        RuntimeError: if the image is not <H, W, 3>, the box is taller or wider than the image,
            or it starts outside the image.

    Examples:
        >>> import numpy as np
        >>> Erase(0, 1, 1, 2, value=7)(np.zeros((2, 3, 3), np.uint8))[..., 0].tolist()
        [[0, 7, 7], [0, 0, 0]]
    """

    implementation = Implementation.C

    def __init__(self, top, left, height, width, value=0.0, inplace=False):
        check_pos_int32(top, "top", allow_zero=True, exact_int=True)
        check_pos_int32(left, "left", allow_zero=True, exact_int=True)
        check_pos_int32(height, "height", exact_int=True)
        check_pos_int32(width, "width", exact_int=True)
        type_check(inplace, (bool,), "inplace")
        type_check(value, (float, int, tuple), "value")
        values = tuple([value] * 3) if isinstance(value, (float, int)) else value
        type_check_list(values, (float, int), "value")
        if len(values) != 3:
            raise TypeError("value should be a single integer/float or a 3-tuple.")
        for i, val in enumerate(values):
            check_range(val, (0, UINT8_MAX), f"value[{i}]")
        self.top, self.left, self.height, self.width = top, left, height, width
        self.value = (value,) if isinstance(value, (float, int)) else value
        self.inplace = inplace
        self._fill = tuple(float(v) for v in values)

    def _run(self, img):
        self._check_device()
        if img.ndim != 3:
            raise op_error("Erase", f"input tensor is not in shape of <H,W,C>, but got rank: {img.ndim}")
        if img.shape[2] != 3:
            raise op_error("Erase", f"channel of input image should be 3, but got: {img.shape[2]}")
        check_image(img, "Erase", ranks=(3,), channels=(3,), dtypes=CV_NO_F16 + ("float16",))
        h, w = img.shape[:2]
        if self.height > h or self.width > w:
            raise op_error("Erase", f"box size is too large for image erase, got box height: {self.height}, "
                                    f"box width: {self.width}, and image height: {h}, image width: {w}")
        if self.top > h or self.left > w:
            raise op_error("Erase", f"the box starting at (top={self.top}, left={self.left}) lies outside "
                                    f"the image of height {h} and width {w}.")
        return M.erase(img, self.top, self.left, self.height, self.width, self._fill, self.inplace)


class RandomErasing(PyImageOperation):
    """With probability `prob`, erases a random box of a <C, H, W> NumPy array.

    Up to `max_attempts` times, a box with an area share drawn from `scale` and an aspect ratio
    drawn from `ratio` is tried; the first one that fits inside the image is filled.

    Args:
        prob (float, optional): probability of erasing, in [0, 1]. Default: 0.5.
        scale (Sequence[float, float], optional): range of the erased area share. Default: (0.02, 0.33).
        ratio (Sequence[float, float], optional): range of the box aspect ratio. Default: (0.3, 3.3).
        value (Union[int, str, Sequence[int, int, int]], optional): fill value, one per channel,
            or 'random' for standard normal noise. Default: 0.
        inplace (bool, optional): write into the input array. Default: False.
        max_attempts (int, optional): attempts to find a box. Default: 10.

    Raises:
        TypeError: if an argument has the wrong type, or the input is not a NumPy array.
        ValueError: if an argument is out of range, or the input is not 3-D.

    Examples:
        >>> import numpy as np
        >>> out = RandomErasing(prob=1.0, value=(1, 2, 3))(np.full((3, 8, 8), 9, np.uint8))
        >>> out.shape, bool((out != 9).any())
        ((3, 8, 8), True)
    """

    random = True

    def __init__(self, prob=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False,
                 max_attempts=10):
        type_check(prob, (float, int), "prob")
        type_check_list(scale, (float, int), "scale")
        if len(scale) != 2:
            raise TypeError("scale should be a list or tuple of length 2.")
        type_check_list(ratio, (float, int), "ratio")
        if len(ratio) != 2:
            raise TypeError("ratio should be a list or tuple of length 2.")
        type_check(value, (int, list, tuple, str), "value")
        type_check(inplace, (bool,), "inplace")
        type_check(max_attempts, (int,), "max_attempts")
        if not (isinstance(value, numbers.Number) or value == "random"
                or (isinstance(value, (tuple, list)) and len(value) == 3)):
            raise ValueError("The value for erasing should be either a single value, or a string 'random', "
                             "or a sequence of 3 elements for RGB respectively.")
        check_range(prob, (0.0, 1.0), "prob")
        if scale[0] > scale[1]:
            raise ValueError("scale should be in (min,max) format. Got (max,min).")
        check_ordered_range(scale, (0, FLOAT_MAX_INTEGER))
        check_positive(scale[1], "scale[1]")
        if ratio[0] > ratio[1]:
            raise ValueError("ratio should be in (min,max) format. Got (max,min).")
        check_range(ratio[0], (0, FLOAT_MAX_INTEGER), left_open=True)
        check_range(ratio[1], (0, FLOAT_MAX_INTEGER), left_open=True)
        if isinstance(value, int):
            check_range(value, (0, 255))
        if isinstance(value, (list, tuple)):
            for item in value:
                type_check(item, (int,), "value")
                check_range(item, (0, 255), "value")
        check_range(max_attempts, (1, FLOAT_MAX_INTEGER))
        self.prob = prob
        self.scale = scale
        self.ratio = ratio
        self.value = value
        self.inplace = inplace
        self.max_attempts = max_attempts

    def _run_pil(self, img):
        if not isinstance(img, np.ndarray):
            raise TypeError(f"img should be NumPy array. Got {type(img)}.")
        if img.ndim != 3:
            raise ValueError(f"RandomErasing: the image should be a <C, H, W> array, but got shape "
                             f"{img.shape}.")
        return M.random_erasing(img, self.prob, self.scale, self.ratio, self.value, self.inplace,
                                self.max_attempts, sample_rng())


_MIXUP_LABELS = ("wrong labels shape. The second column (labels) must have a shape of NC or NLC "
                 "where N is the batch size, L is the number of labels in each row, and C is the number of "
                 "classes. labels must be in one-hot format and in a batch, but got rank: {}")


def _numeric(arr: np.ndarray) -> bool:
    return arr.dtype.kind in "biuf"


def _check_same_batch(op: str, images: np.ndarray, labels: np.ndarray) -> None:
    if images.shape[0] != labels.shape[0]:
        raise op_error(op, f"batch sizes of image and label must be the same, but got image size: "
                           f"{images.shape[0]} and label size: {labels.shape[0]}")


class MixUpBatch(ImageTensorOperation):
    """Mixes a batch with a shuffled copy of itself: one weight ``lam ~ Beta(alpha, alpha)``.

    Call it on two batched columns, images (N, H, W, C) or (N, C, H, W) and one-hot labels (N, C)
    or (N, L, C). Images keep their dtype (rounded); labels come back as float32.

    Args:
        alpha (float, optional): Beta distribution parameter, positive. Default: 1.0.

    Raises:
        TypeError: if `alpha` is not a number.
        ValueError: if `alpha` is not positive.
        RuntimeError: if the columns are missing or have the wrong shapes.

    Examples:
        >>> import numpy as np
        >>> imgs = np.zeros((4, 2, 2, 3), np.uint8); labels = np.eye(4, dtype=np.int32)
        >>> out_imgs, out_labels = MixUpBatch(1.0)(imgs, labels)
        >>> out_imgs.shape, out_labels.dtype, np.allclose(out_labels.sum(axis=1), 1)
        ((4, 2, 2, 3), dtype('float32'), True)
    """

    implementation = Implementation.C
    one_to_one = False  # (images, labels): _run counts the inputs
    random = True

    def __init__(self, alpha=1.0):
        type_check(alpha, (int, float), "alpha")
        check_positive(alpha, "alpha")
        check_pos_float32(alpha)
        self.alpha = alpha

    def _run(self, *arrays):
        if len(arrays) < 2:
            raise op_error("MixUpBatch", f"size of input data should be 2 (including images or labels), but "
                                         f"got: {len(arrays)}, check 'input_columns' when call this operator.")
        images, labels = arrays[0], arrays[1]
        if labels.ndim not in (2, 3):
            raise op_error("MixUpBatch", _MIXUP_LABELS.format(labels.ndim))
        if images.ndim != 4:
            raise op_error("MixUpBatch", f"rank of image shape should be: 4, but got: {images.ndim}, make sure "
                                         f"image shape are <H,W,C> or <C,H,W> and batched before calling "
                                         f"MixUpBatch.")
        _check_same_batch("MixUpBatch", images, labels)
        if not _numeric(labels) or not _numeric(images):
            raise op_error("MixUpBatch", f"images and labels must be numeric, but got {images.dtype} and "
                                         f"{labels.dtype}. You may need to perform OneHot first.")
        return M.mixup_batch(images, labels, float(self.alpha), sample_rng())


class CutMixBatch(ImageTensorOperation):
    """Pastes a random box from a shuffled partner into each image of a batch (CutMix).

    Each image is mixed with probability `prob`; its box covers about ``1 - lam`` of the image
    with ``lam ~ Beta(alpha, alpha)``, and its label becomes the area-weighted mix of both labels.
    Call it on two batched columns: images and one-hot labels (N, C) or (N, L, C).

    Args:
        image_batch_format (ImageBatchFormat): NHWC or NCHW layout of the images.
        alpha (float, optional): Beta distribution parameter, positive. Default: 1.0.
        prob (float, optional): probability of mixing each image, in [0, 1]. Default: 1.0.

    Raises:
        TypeError: if `image_batch_format` is not an ImageBatchFormat or `alpha`/`prob` not a number.
        ValueError: if `alpha` is not positive or `prob` not in [0, 1].
        RuntimeError: if the columns are missing or have the wrong shapes.

    Examples:
        >>> import numpy as np
        >>> from headrace.dataset.vision.utils import ImageBatchFormat
        >>> imgs = np.zeros((4, 8, 8, 3), np.uint8); labels = np.eye(4, dtype=np.int32)
        >>> out_imgs, out_labels = CutMixBatch(ImageBatchFormat.NHWC)(imgs, labels)
        >>> out_imgs.shape, out_labels.dtype
        ((4, 8, 8, 3), dtype('float32'))
    """

    implementation = Implementation.C
    one_to_one = False  # (images, labels): _run counts the inputs
    random = True

    def __init__(self, image_batch_format, alpha=1.0, prob=1.0):
        type_check(image_batch_format, (ImageBatchFormat,), "image_batch_format")
        type_check(alpha, (int, float), "alpha")
        type_check(prob, (int, float), "prob")
        check_pos_float32(alpha)
        check_positive(alpha, "alpha")
        check_range(prob, (0, 1), "prob")
        self.image_batch_format = image_batch_format.value
        self.alpha = alpha
        self.prob = prob
        self._nchw = image_batch_format == ImageBatchFormat.NCHW

    def _run(self, *arrays):
        if len(arrays) < 2:
            raise op_error("CutMixBatch", f"invalid input size, input should have 2 columns (image and label), "
                                          f"but got: {len(arrays)}")
        images, labels = arrays[0], arrays[1]
        if images.ndim != 4:
            raise op_error("CutMixBatch", f"input image is not in shape of <B,H,W,C> or <B,C,H,W>, but got "
                                          f"dimension: {images.ndim}. You may need to perform Batch first.")
        if labels.ndim not in (2, 3):
            raise op_error("CutMixBatch", f"input label is not in shape of <Batch,Class> or <Batch,Row,Class>, "
                                          f"but got dimension: {labels.ndim}. You may need to perform OneHot "
                                          f"and Batch first.")
        _check_same_batch("CutMixBatch", images, labels)
        channels = images.shape[1] if self._nchw else images.shape[3]
        if channels not in (1, 3):
            raise op_error("CutMixBatch", f"input image is not in channel of 1 or 3, but got channel: {channels}")
        if not _numeric(labels):
            kind = "string" if labels.dtype.kind in "USO" else str(labels.dtype)
            raise op_error("CutMixBatch", f"invalid label type, label must be in a numeric type, but got: "
                                          f"{kind}. You may need to perform OneHot first.")
        if not _numeric(images):
            raise op_error("CutMixBatch", f"invalid image type, image must be in a numeric type, but got: "
                                          f"{images.dtype}.")
        return M.cutmix_batch(images, labels, float(self.alpha), float(self.prob), self._nchw, sample_rng())


class MixUp(PyImageOperation):
    """Mixes a batch of NumPy images and one-hot labels with per-sample Beta(alpha, alpha) weights.

    With `is_single` each sample ``i`` is mixed with sample ``i + 1`` of the same batch (the last
    with the first); otherwise with the output of the previous call (the first call returns the
    batch unchanged), which makes the op keep state between calls, as MindSpore's does. Outputs
    are float64, computed the way NumPy broadcasts ``lam * image + (1 - lam) * other``.

    Args:
        batch_size (int): samples per batch, >= 1; the inputs must have exactly this many.
        alpha (float): Beta distribution parameter, positive.
        is_single (bool, optional): mix within the batch (True) or with the previous output.
            Default: True.

    Raises:
        TypeError: if an argument has the wrong type.
        ValueError: if `batch_size` < 1, `alpha` <= 0, or the inputs do not hold `batch_size` samples.

    Examples:
        >>> import numpy as np
        >>> images, labels = MixUp(4, 0.5)(np.zeros((4, 2, 2, 3), np.uint8), np.eye(4))
        >>> images.dtype, labels.shape, bool(np.allclose(labels.sum(axis=1), 1))
        (dtype('float64'), (4, 4), True)
    """

    random = True

    def __init__(self, batch_size, alpha, is_single=True):
        type_check(is_single, (bool,), "is_single")
        type_check(batch_size, (int,), "batch_size")
        type_check(alpha, (int, float), "alpha")
        check_range(batch_size, (1, FLOAT_MAX_INTEGER))
        check_positive(alpha, "alpha")
        self.batch_size = batch_size
        self.alpha = alpha
        self.is_single = is_single
        self.image = 0
        self.label = 0
        self.is_first = True

    def __call__(self, image, label):
        image, label = np.asarray(image), np.asarray(label)
        n = self.batch_size
        if image.shape[:1] != (n,) or label.shape[:1] != (n,):
            raise ValueError(f"MixUp: the image and label batches must hold batch_size={n} samples, but got "
                             f"image shape {image.shape} and label shape {label.shape}.")
        lam = sample_rng().beta(self.alpha, self.alpha, n)
        if self.is_single:
            other_image, other_label = np.roll(image, -1, axis=0), np.roll(label, -1, axis=0)
        else:
            if self.is_first:
                lam = np.ones(n)
                self.is_first = False
            other_image, other_label = self.image, self.label
        lam_image = lam.reshape((n,) + (1,) * (image.ndim - 1))
        lam_label = lam.reshape((n,) + (1,) * (label.ndim - 1))
        mixed_image = lam_image * image + (1 - lam_image) * other_image
        mixed_label = lam_label * label + (1 - lam_label) * other_label
        if not self.is_single:
            self.image, self.label = mixed_image, mixed_label
        return mixed_image, mixed_label
