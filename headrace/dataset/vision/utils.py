"""Enums and image file helpers of ``headrace.dataset.vision`` (MindSpore's names and values)."""
from __future__ import annotations

import enum
import os

import cv2
import numpy as np
from PIL import Image

from headrace._util.files import read_regular
from headrace._image.decode import decode_with_mode

__all__ = ["AutoAugmentPolicy", "Border", "ConvertMode", "ImageBatchFormat", "ImageReadMode", "Inter",
           "SliceMode", "encode_jpeg", "encode_png", "get_image_num_channels", "get_image_size",
           "read_file", "read_image", "write_file", "write_jpeg", "write_png"]


class Inter(enum.IntEnum):
    """Interpolation methods. ``LINEAR`` and ``CUBIC`` are aliases of ``BILINEAR`` and ``BICUBIC``."""

    NEAREST = 0
    ANTIALIAS = 1
    BILINEAR = LINEAR = 2
    BICUBIC = CUBIC = 3
    AREA = 4
    PILCUBIC = 5


class Border(str, enum.Enum):
    """Padding modes: CONSTANT fills with a value, EDGE repeats the edge, REFLECT mirrors without
    the edge pixel, SYMMETRIC mirrors with it."""

    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"


class ImageBatchFormat(enum.IntEnum):
    """Layout of an image batch: NHWC or NCHW."""

    NHWC = 0
    NCHW = 1


class ImageReadMode(enum.IntEnum):
    """How ``read_image`` decodes: as stored, as one grey channel, or as RGB."""

    UNCHANGED = 0
    GRAYSCALE = 1
    COLOR = 2


class SliceMode(enum.IntEnum):
    """What SlicePatches does with a remainder: pad it or drop it."""

    PAD = 0
    DROP = 1


class AutoAugmentPolicy(str, enum.Enum):
    """The policy sets of AutoAugment, learned on these datasets."""

    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


class ConvertMode(enum.IntEnum):
    """Colour conversions of ConvertColor (the RGB spellings alias the BGR ones)."""

    COLOR_BGR2BGRA = COLOR_RGB2RGBA = 0
    COLOR_BGRA2BGR = COLOR_RGBA2RGB = 1
    COLOR_BGR2RGBA = COLOR_RGB2BGRA = 2
    COLOR_RGBA2BGR = COLOR_BGRA2RGB = 3
    COLOR_BGR2RGB = COLOR_RGB2BGR = 4
    COLOR_BGRA2RGBA = COLOR_RGBA2BGRA = 5
    COLOR_BGR2GRAY = 6
    COLOR_RGB2GRAY = 7
    COLOR_GRAY2BGR = COLOR_GRAY2RGB = 8
    COLOR_GRAY2BGRA = COLOR_GRAY2RGBA = 9
    COLOR_BGRA2GRAY = 10
    COLOR_RGBA2GRAY = 11


# ------------------------------------------------------------------------------ file functions


def _check_filename(filename, op: str) -> None:
    if not isinstance(filename, str):
        raise TypeError(f"Input filename is not of type {str}, but got: {type(filename)}.")


def _check_regular_file(filename: str, op: str) -> None:
    if not os.path.exists(filename):
        raise RuntimeError(f"{op}: Invalid file path, {filename} does not exist.")
    if not os.path.isfile(filename):
        raise RuntimeError(f"{op}: Invalid file path, {filename} is not a regular file.")


def _read_regular(filename: str, op: str) -> bytes:
    """The file's bytes; refused if it became a FIFO or device since it was checked."""
    try:
        return read_regular(filename)
    except OSError as e:
        raise RuntimeError(f"{op}: Invalid file path, failed to read {filename}: {e.strerror or e}.") from None


def read_file(filename):
    """Reads a file's bytes into a 1-D uint8 array.

    Args:
        filename (str): the file to read.

    Returns:
        numpy.ndarray, the bytes (uint8, 1-D).

    Raises:
        TypeError: if `filename` is not a str.
        RuntimeError: if the file does not exist or is not a regular file.

    Examples:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
        >>> _ = open(path, "wb").write(b"ab")
        >>> read_file(path).tolist()
        [97, 98]
    """
    _check_filename(filename, "ReadFile")
    _check_regular_file(filename, "ReadFile")
    return np.frombuffer(_read_regular(filename, "ReadFile"), np.uint8).copy()


def read_image(filename, mode=ImageReadMode.UNCHANGED):
    """Reads and decodes an image file to an <H, W, C> uint8 array.

    Args:
        filename (str): the image file (JPEG, PNG, BMP, TIFF, ...).
        mode (ImageReadMode, optional): UNCHANGED keeps grey images 1-channel and colour images
            3-channel (alpha is dropped), GRAYSCALE gives 1 channel, COLOR 3 channels.
            Default: ImageReadMode.UNCHANGED.

    Returns:
        numpy.ndarray, the image (<H, W, 1> or <H, W, 3>).

    Raises:
        TypeError: if an argument has the wrong type.
        RuntimeError: if the file is missing or cannot be decoded.

    Examples:
        >>> import os, tempfile, cv2, numpy as np
        >>> path = os.path.join(tempfile.mkdtemp(), "x.png")
        >>> _ = cv2.imwrite(path, np.zeros((2, 3), np.uint8))
        >>> read_image(path).shape
        (2, 3, 1)
    """
    _check_filename(filename, "ReadImage")
    if not isinstance(mode, ImageReadMode):
        raise TypeError(f"Input mode is not of type {ImageReadMode}, but got: {type(mode)}.")
    _check_regular_file(filename, "ReadImage")
    data = _read_regular(filename, "ReadImage")
    if not data:
        raise RuntimeError(f"ReadImage: Failed to read file {filename}")
    try:
        img = decode_with_mode(data, int(mode), "ReadImage")
    except RuntimeError as exc:
        raise RuntimeError(f"ReadImage: Failed to decode file {filename}: {exc}") from None
    if mode == ImageReadMode.UNCHANGED and img.shape[2] == 4:
        img = np.ascontiguousarray(img[:, :, :3])
    return img


def _check_image(image, name: str = "image") -> None:
    if not isinstance(image, (np.ndarray, Image.Image)):
        raise TypeError(f"Input {name} is not of type {np.ndarray} or {Image.Image}, but got: {type(image)}.")


def get_image_size(image):
    """The [height, width] of an image (NumPy <..., H, W, C> / <H, W>, or PIL).

    Args:
        image (Union[numpy.ndarray, PIL.Image.Image]): the image.

    Returns:
        list[int], [height, width].

    Raises:
        TypeError: if `image` is not an array or PIL image.
        RuntimeError: if the array has fewer than 2 dimensions.

    Examples:
        >>> import numpy as np
        >>> get_image_size(np.zeros((3, 4, 5)))
        [3, 4]
    """
    _check_image(image)
    if isinstance(image, Image.Image):
        return [image.size[1], image.size[0]]
    if image.ndim < 2:
        raise RuntimeError(f"GetImageSize: invalid parameter, image should have at least two dimensions, "
                           f"but got: {image.ndim}")
    if image.ndim == 2:
        return [int(image.shape[0]), int(image.shape[1])]
    return [int(image.shape[-3]), int(image.shape[-2])]


def get_image_num_channels(image):
    """The number of channels of an image (1 for <H, W>).

    Args:
        image (Union[numpy.ndarray, PIL.Image.Image]): the image.

    Returns:
        int, the channel count.

    Raises:
        TypeError: if `image` is not an array or PIL image.
        RuntimeError: if the array has fewer than 2 dimensions.

    Examples:
        >>> import numpy as np
        >>> get_image_num_channels(np.zeros((3, 4)))
        1
    """
    _check_image(image)
    if isinstance(image, Image.Image):
        return len(image.getbands())
    if image.ndim < 2:
        raise RuntimeError(f"GetImageNumChannels: invalid parameter, image should have at least two "
                           f"dimensions, but got: {image.ndim}")
    return 1 if image.ndim == 2 else int(image.shape[-1])


def _encode_input(image, op: str) -> np.ndarray:
    if isinstance(image, Image.Image):
        image = np.asarray(image)
    if not isinstance(image, np.ndarray):
        raise TypeError(f"Input image is not of type {np.ndarray}, but got: {type(image)}.")
    if image.dtype != np.uint8:
        raise RuntimeError(f"{op}: The type of the image data should be UINT8, but got {image.dtype}.")
    if image.ndim == 3 and image.shape[2] == 1:
        image = image[:, :, 0]
    if image.ndim == 3 and image.shape[2] == 3:
        return cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
    if image.ndim == 2:
        return image
    raise RuntimeError(f"{op}: The image has invalid dimensions or channels, it should be <H, W>, "
                       f"<H, W, 1> or <H, W, 3>, but got shape {image.shape}.")


def _encode(image, op: str, ext: str, flag: int, value, name: str, bounds: tuple[int, int]) -> np.ndarray:
    """What encode_jpeg and encode_png share: the check of their int setting `name` (``value``, in
    ``bounds``), then the image's (``_encode_input``), then OpenCV's encoder for ``ext``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"Input {name} is not of type {int}, but got: {type(value)}.")
    lo, hi = bounds
    if not lo <= value <= hi:
        raise RuntimeError(f"{op}: Invalid {name} {value}, should be in range of [{lo}, {hi}].")
    ok, buf = cv2.imencode(ext, _encode_input(image, op), [flag, value])
    if not ok:
        raise RuntimeError(f"{op}: Failed to encode the image.")
    return buf.reshape(-1)


def encode_jpeg(image, quality=75):
    """Encodes an RGB (or grey) uint8 image as JPEG.

    Args:
        image (Union[numpy.ndarray, PIL.Image.Image]): <H, W>, <H, W, 1> or <H, W, 3> uint8.
        quality (int, optional): JPEG quality in [1, 100]. Default: 75.

    Returns:
        numpy.ndarray, the encoded bytes (uint8, 1-D).

    Examples:
        >>> import numpy as np
        >>> encode_jpeg(np.zeros((4, 4, 3), np.uint8))[:2].tolist()
        [255, 216]
    """
    return _encode(image, "EncodeJpeg", ".jpg", cv2.IMWRITE_JPEG_QUALITY, quality, "quality", (1, 100))


def encode_png(image, compression_level=6):
    """Encodes an RGB (or grey) uint8 image as PNG.

    Args:
        image (Union[numpy.ndarray, PIL.Image.Image]): <H, W>, <H, W, 1> or <H, W, 3> uint8.
        compression_level (int, optional): zlib level in [0, 9]. Default: 6.

    Returns:
        numpy.ndarray, the encoded bytes (uint8, 1-D).

    Examples:
        >>> import numpy as np
        >>> encode_png(np.zeros((4, 4, 3), np.uint8))[:4].tolist()
        [137, 80, 78, 71]
    """
    return _encode(image, "EncodePng", ".png", cv2.IMWRITE_PNG_COMPRESSION, compression_level, "compression_level",
                   (0, 9))


def write_file(filename, data):
    """Writes a 1-D uint8 array (or bytes) to a file.

    Args:
        filename (str): the file to write.
        data (numpy.ndarray): 1-D uint8 array.

    Examples:
        >>> import os, tempfile, numpy as np
        >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
        >>> write_file(path, np.array([1, 2], np.uint8)); os.path.getsize(path)
        2
    """
    _check_filename(filename, "WriteFile")
    if isinstance(data, (bytes, bytearray)):
        data = np.frombuffer(data, np.uint8)
    if not isinstance(data, np.ndarray):
        raise TypeError(f"Input data is not of type {np.ndarray}, but got: {type(data)}.")
    if data.dtype != np.uint8 or data.ndim != 1:
        raise RuntimeError(f"WriteFile: The data should be a 1-D uint8 array, but got shape {data.shape} and "
                           f"type {data.dtype}.")
    with open(filename, "wb") as f:
        f.write(data.tobytes())


def write_jpeg(filename, image, quality=75):
    """Encodes ``image`` as JPEG (see :func:`encode_jpeg`) and writes it to ``filename``."""
    write_file(filename, encode_jpeg(image, quality))


def write_png(filename, image, compression_level=6):
    """Encodes ``image`` as PNG (see :func:`encode_png`) and writes it to ``filename``."""
    write_file(filename, encode_png(image, compression_level))
