"""Conversion ops: Normalize, NormalizePad, HWC2CHW, ToTensor, ToPIL, ToNumpy, ToType, Rescale."""
from __future__ import annotations

import numbers

import numpy as np
from PIL import Image

from headrace.common import dtype as mstype
from headrace.dataset.transforms._base import Implementation, PyTensorOperation
from headrace.dataset.transforms.transforms import TypeCast
from headrace.dataset.vision import _checks as ck
from headrace.dataset.vision._base import ImageTensorOperation, is_pil, op_error
from headrace.dataset.vision._color_checks import _Device
from headrace._image import convert as cv
from headrace._util.errors import EarlyValueError

__all__ = ["HWC2CHW", "Normalize", "NormalizeHWC2CHW", "NormalizePad", "Rescale", "ToNumpy", "ToPIL", "ToTensor", "ToType"]


def _numeric(img: np.ndarray, op: str) -> None:
    if img.dtype.kind not in "biuf":
        raise op_error(op, f"the data type of the image should be numeric (bool, int or float), but got "
                           f"{img.dtype}.")


class _NormalizeBase(ImageTensorOperation):
    implementation = Implementation.C
    _name = "Normalize"

    def _prepare(self, mean, std, is_hwc) -> None:
        ck.check_normalize_param(mean, std)
        ck.type_check(is_hwc, (bool,), "is_hwc")
        self.mean, self.std, self.is_hwc = mean, std, is_hwc
        self._mean = np.asarray(mean, np.float32)
        self._std = np.asarray(std, np.float32)

    def _normalized(self, img: np.ndarray) -> tuple[np.ndarray, int]:
        op = self._name
        if self._mean.size == 0:
            raise op_error(op, "mean expecting non-empty vector")
        if img.ndim < 2:
            raise op_error(op, f"input tensor should have at least 2 dimensions, but got: {img.ndim}")
        _numeric(img, op)
        if img.ndim == 2:
            axis, channels = 0, 1
        else:
            axis = img.ndim - 1 if self.is_hwc else img.ndim - 3
            channels = img.shape[axis]
        n = self._mean.size
        if n != 1 and n != channels:
            raise op_error(op, f"number of channels does not match the size of mean and std vectors, got "
                               f"channels: {channels}, size of mean: {n}")
        if img.ndim == 2:
            out = img.astype(np.float32)
            out -= self._mean[0]
            out /= self._std[0]
            return out, axis
        mean, std = self._mean, self._std
        if n == 1 and channels != 1:
            mean, std = np.repeat(mean, channels), np.repeat(std, channels)
        return cv.normalize(img, mean, std, axis), axis


class Normalize(_Device, _NormalizeBase):
    """Normalizes each channel: ``(image - mean) / std``, giving float32.

    Args:
        mean (Sequence[float]): per-channel means in [0, 255] (one value applies to all channels).
        std (Sequence[float]): per-channel standard deviations in (0, 255].
        is_hwc (bool, optional): True for <H, W, C> input, False for <C, H, W>. Default: True.

    Raises:
        TypeError: if an argument has the wrong type.
        ValueError: if `mean` and `std` differ in length or a value is out of range.
        RuntimeError: if the channel count does not match `mean`.

    Examples:
        >>> import numpy as np
        >>> Normalize([1.0], [2.0])(np.array([[1, 3]], np.uint8)).tolist()
        [[0.0, 1.0]]
    """

    def fuse_next(self, nxt, options):
        """``[Normalize(..., is_hwc=True), HWC2CHW()]`` -> :class:`NormalizeHWC2CHW` (exact)."""
        if type(self) is Normalize and self.is_hwc and type(nxt) is HWC2CHW and self.device_target == "CPU":
            return NormalizeHWC2CHW(self, nxt)
        return None

    def __init__(self, mean, std, is_hwc=True):
        self._prepare(mean, std, is_hwc)

    def _run(self, img: np.ndarray) -> np.ndarray:
        if self.device_target != "CPU":
            self._check_device()
        return self._normalized(img)[0]

    def _check_gpu(self) -> None:
        if not self.is_hwc:
            raise ValueError("Normalize: device_target 'GPU' normalizes <H,W,C> images (is_hwc=True), but "
                             "is_hwc is False.")

    def _device_plan(self, shape: tuple) -> tuple[list[tuple], tuple]:
        """The GPU stage's step for an image of ``shape``, checked as the CPU kernel checks."""
        n = self._mean.size
        if len(shape) < 2:
            raise op_error("Normalize", f"input tensor should have at least 2 dimensions, but got: {len(shape)}")
        if len(shape) > 3:
            raise op_error("Normalize", f"device_target 'GPU' normalizes one <H,W> or <H,W,C> image, but got "
                                        f"rank: {len(shape)}.")
        channels = 1 if len(shape) == 2 else shape[2]
        if n != 1 and n != channels:
            raise op_error("Normalize", f"number of channels does not match the size of mean and std vectors, "
                                        f"got channels: {channels}, size of mean: {n}")
        return [("normalize", tuple(float(m) for m in self._mean), tuple(float(s) for s in self._std))], shape


class NormalizePad(_NormalizeBase):
    """Normalizes like :class:`Normalize` and appends a channel of zeros (C channels become C + 1).

    MindSpore 2.10's NumPy kernel scrambles the pixels of HWC output (it writes C values per pixel
    into a C + 1 layout); headrace returns the documented result instead.

    Args:
        mean (Sequence[float]): per-channel means in [0, 255].
        std (Sequence[float]): per-channel standard deviations in (0, 255].
        dtype (str, optional): "float32" or "float16". Default: "float32".
        is_hwc (bool, optional): True for <H, W, C> input, False for <C, H, W>. Default: True.

    Raises:
        TypeError: if an argument has the wrong type.
        ValueError: if a value is out of range or `dtype` is not supported.

    Examples:
        >>> import numpy as np
        >>> NormalizePad([1.0], [2.0])(np.ones((1, 1, 1), np.uint8)).tolist()
        [[[0.0, 0.0]]]
    """

    _name = "NormalizePad"

    def __init__(self, mean, std, dtype="float32", is_hwc=True):
        self._prepare(mean, std, is_hwc)
        if not isinstance(dtype, str):
            raise TypeError("dtype should be string.")
        if dtype not in ("float32", "float16"):
            raise ValueError("dtype only supports float32 or float16.")
        self.dtype = dtype
        self._dtype = np.dtype(dtype)

    def _run(self, img: np.ndarray) -> np.ndarray:
        out, axis = self._normalized(img)
        if img.ndim == 2:
            out, axis = out[:, :, None], 2
        pad_shape = list(out.shape)
        pad_shape[axis] = 1
        res = np.concatenate([out, np.zeros(pad_shape, np.float32)], axis=axis)
        return res if self._dtype == np.float32 else res.astype(self._dtype)


class HWC2CHW(ImageTensorOperation):
    """Transposes an <H, W, C> image to <C, H, W> (an <H, W> image is returned unchanged).

    Examples:
        >>> import numpy as np
        >>> HWC2CHW()(np.zeros((2, 3, 4), np.uint8)).shape
        (4, 2, 3)
    """

    implementation = Implementation.C
    device_follows = True  # after GPU ops in a map, the GPU stage transposes (``_device_plan``)

    def _run(self, img: np.ndarray) -> np.ndarray:
        if img.ndim not in (2, 3):
            raise op_error("HWC2CHW", f"image shape should be <H,W> or <H,W,C>, but got rank: {img.ndim}")
        return cv.hwc_to_chw(img)

    def _device_plan(self, shape: tuple) -> tuple[list[tuple], tuple]:
        """The GPU stage's transpose, for an image of ``shape`` after GPU ops."""
        if len(shape) not in (2, 3):
            raise op_error("HWC2CHW", f"image shape should be <H,W> or <H,W,C>, but got rank: {len(shape)}")
        return ([("chw",)], (shape[2], shape[0], shape[1])) if len(shape) == 3 else ([], shape)


class NormalizeHWC2CHW(ImageTensorOperation):
    """``[Normalize(mean, std), HWC2CHW()]`` as one op: writes the CHW float32 result directly;
    with ``flip`` (a flip op just before them, see ``_Flip.fuse_next``) it flips on the way, drawing
    as the flip draws.

    Falls back to running the ops for anything but an <H, W, C> array whose channel count
    matches `mean` (so errors and edge cases are those of the original ops).
    """

    implementation = Implementation.C

    def __init__(self, normalize: Normalize, hwc2chw: HWC2CHW, flip=None):
        self.source_ops = (normalize, hwc2chw) if flip is None else (flip, normalize, hwc2chw)
        self._norm, self._t, self._flip = normalize, hwc2chw, flip
        self._mean, self._std = normalize._mean, normalize._std

    def _takes(self, img: np.ndarray) -> bool:
        """Whether the fused kernel runs on ``img`` (else the ops run one after the other)."""
        n = self._mean.size
        return (img.ndim == 3 and img.shape[2] == n and n > 0 and img.dtype.kind in "biuf"
                and (self._flip is None or img.dtype == np.uint8))  # uint8: which the flip's own checks pass

    def _kernel(self, img: np.ndarray, out: np.ndarray | None) -> np.ndarray:
        flip = self._flip
        code = None if flip is None or not flip._flips() else (1 if flip._horizontal else 0)
        return cv.normalize_hwc_to_chw(img, self._mean, self._std, code, out)

    def _run(self, img: np.ndarray) -> np.ndarray:
        if self._takes(img):
            return self._kernel(img, None)
        if self._flip is not None:
            img = self._flip._run(img)
        return self._t._run(self._norm._run(img))

    def write_into(self, img, *, out: np.ndarray):
        """``self(img)``, written into ``out`` where the fused kernel runs and ``out`` is a
        C-contiguous float32 array of the result's shape (a map's last op writing its row of the
        batch: see ``headrace/_engine/exec/stage_program.py``).

        Returns:
            numpy.ndarray, the result: ``out`` itself when it was written there, else a new array.
        """
        if (type(img) is np.ndarray and type(out) is np.ndarray and self._takes(img) and out.dtype == np.float32
                and out.shape == (img.shape[2], img.shape[0], img.shape[1]) and out.flags.c_contiguous):
            return self._kernel(img, out)
        return self(img)

    @property
    def op_name(self) -> str:
        return "Normalize+HWC2CHW" if self._flip is None else f"{self._flip.op_name}+Normalize+HWC2CHW"


def _dtype_arg(value, name: str) -> np.dtype:
    if isinstance(value, mstype.Type):
        return value.np_dtype
    if value is None:
        ck.type_check(value, (mstype.Type, np.dtype), name)
    try:
        return np.dtype(value)
    except (TypeError, ValueError):
        ck.type_check(value, (mstype.Type, np.dtype), name)
        raise


_TO_TENSOR_REFUSED = (np.dtype(np.uint32), np.dtype(np.int64), np.dtype(np.uint64))


class ToTensor(ImageTensorOperation):
    """Converts an <H, W, C> (or <H, W>) image to <C, H, W> scaled by 1/255, as `output_type`.

    Args:
        output_type (Union[mindspore.dtype, numpy.dtype], optional): the output type.
            Default: numpy.float32.

    Raises:
        TypeError: if `output_type` is not a data type.
        RuntimeError: if the image is not 2-D or 3-D, or holds uint32, int64, uint64, strings or
            bytes (as in MindSpore).

    Examples:
        >>> import numpy as np
        >>> ToTensor()(np.full((1, 1, 3), 255, np.uint8)).shape
        (3, 1, 1)
    """

    implementation = Implementation.C

    def __init__(self, output_type=np.float32):
        self.output_type = output_type
        self._dtype = _dtype_arg(output_type, "output_type")

    def _run(self, img: np.ndarray) -> np.ndarray:
        # MindSpore refuses these types before it looks at the shape
        if img.dtype.kind in "SUO" or img.dtype in _TO_TENSOR_REFUSED:
            raise op_error("ToTensor", "Input includes unsupported data type in [uint32, int64, uint64, string, bytes].")
        if img.ndim < 2:
            raise op_error("ToTensor", f"rank of input data should be greater than: 2, but got:{img.ndim}")
        if img.ndim > 3:
            raise op_error("ToTensor", f"image shape should be <H,W,C>, but got rank: {img.ndim}")
        _numeric(img, "ToTensor")
        return cv.to_tensor_c(img, self._dtype)

    def _run_pil(self, img):
        arr = np.asarray(img)
        if arr.ndim not in (2, 3):
            raise TypeError(f"The dimension of input image should be 2 or 3. Got {arr.ndim}.")
        if arr.ndim == 2:
            arr = arr[:, :, None]
        return (arr.transpose(2, 0, 1) / 255.0).astype(self._dtype)


class ToType(TypeCast):
    """Casts the image to `data_type` (the same conversion as TypeCast).

    Args:
        data_type (Union[mindspore.dtype, numpy.dtype]): the target type.

    Raises:
        TypeError: if `data_type` is not a data type.

    Examples:
        >>> import numpy as np
        >>> ToType(np.float32)(np.array([[1]], np.uint8)).dtype
        dtype('float32')
    """

    def __repr__(self) -> str:
        return f"ToType({self.data_type!r})"


class Rescale(ImageTensorOperation):
    """Computes ``image * rescale + shift`` in float32.

    Args:
        rescale (float): the scale factor.
        shift (float): the value added after scaling.

    Raises:
        TypeError: if an argument is not a number.
        ValueError: if a value is out of range, or rescale is negative (also a RuntimeError, as
            MindSpore raises it when the op is used).
        RuntimeError: when called on a uint32, int64 or uint64 image (as in MindSpore).

    Examples:
        >>> import numpy as np
        >>> Rescale(1.0 / 255.0, -1.0)(np.array([[255]], np.uint8)).tolist()  # 1/255 in float32: as MindSpore
        [[5.9138983488082886e-08]]
    """

    implementation = Implementation.C

    def __init__(self, rescale, shift):
        ck.type_check(rescale, (numbers.Number,), "rescale")
        ck.type_check(shift, (numbers.Number,), "shift")
        ck.check_float32(rescale, "rescale")
        ck.check_float32(shift, "shift")
        if rescale < 0:  # MindSpore takes it here and refuses it when the op is first used
            raise EarlyValueError(f"Rescale: rescale must be greater than or equal to 0, got: {rescale:f}")
        self.rescale, self.shift = rescale, shift

    def _run(self, img: np.ndarray) -> np.ndarray:
        _numeric(img, "Rescale")
        if img.dtype in _TO_TENSOR_REFUSED:  # MindSpore's OpenCV path takes none of them
            raise op_error("Rescale", f"load image failed. Rescale does not take {img.dtype} images (uint32, "
                                      "int64 and uint64 are refused, as in MindSpore).")
        return cv.rescale(img, self.rescale, self.shift)


class ToPIL(PyTensorOperation):
    """Converts a NumPy image (<H, W>, <H, W, 1..4>) to a PIL image; following dual ops then run in
    Pillow. A PIL image passes through.

    Examples:
        >>> import numpy as np
        >>> ToPIL()(np.zeros((2, 3, 3), np.uint8)).size
        (3, 2)
    """

    def _run_pil(self, img):
        if is_pil(img):
            return img
        if not isinstance(img, np.ndarray):
            raise TypeError(f"The input image should be of type numpy.ndarray or PIL.Image.Image. "
                            f"Got {type(img)}.")
        if img.ndim not in (2, 3):
            raise ValueError(f"The dimension of input image should be 2 or 3. Got {img.ndim}.")
        if img.ndim == 2:
            img = img[:, :, None]
        if img.shape[-1] > 4:
            raise ValueError(f"The channel of input image should not exceed 4. Got {img.shape[-1]}.")
        if img.shape[-1] == 1:
            if img.dtype not in (np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32,
                                 np.float32, np.float64):
                raise TypeError(f"The input image type {img.dtype} is not supported when image shape is "
                                f"[H, W] or [H, W, 1].")
            img = img[:, :, 0]
        elif img.dtype != np.uint8:
            raise TypeError(f"The input image type {img.dtype} is not supported when image shape is "
                            f"[H, W, 2], [H, W, 3] or [H, W, 4].")
        return Image.fromarray(np.ascontiguousarray(img))


class ToNumpy(PyTensorOperation):
    """Converts a PIL image to a NumPy array (uint8 <H, W, C> for RGB); following dual ops then
    run in OpenCV. An array passes through.

    Examples:
        >>> from PIL import Image
        >>> ToNumpy()(Image.new("RGB", (3, 2))).shape
        (2, 3, 3)
    """

    def _run_pil(self, img):
        if isinstance(img, np.ndarray):
            return img
        return np.array(img)
