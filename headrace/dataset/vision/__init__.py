"""Vision transforms (MindSpore's ``mindspore.dataset.vision``).

NumPy input runs OpenCV / libjpeg-turbo kernels; a PIL image runs Pillow where the op has a Pillow
path (as MindSpore picks its C++ or Python implementation).
"""
from headrace.dataset.transforms._base import not_random
from headrace.dataset.vision import _fusion  # noqa: F401  (registers fuse_ops rules)
from headrace.dataset.vision import transforms, utils
from headrace.dataset.vision.transforms import (HWC2CHW, Affine, CenterCrop, Crop, Decode,
                                                HorizontalFlip, Normalize, NormalizePad, Pad,
                                                PadToSize, RandomAffine, RandomCrop,
                                                RandomCropDecodeResize, RandomHorizontalFlip,
                                                RandomResizedCrop, RandomRotation,
                                                RandomVerticalFlip, Rescale, Resize, ResizedCrop,
                                                Rotate, ToNumpy, ToPIL, ToTensor, ToType,
                                                VerticalFlip)
from headrace.dataset.vision.utils import (AutoAugmentPolicy, Border, ConvertMode, ImageBatchFormat,
                                           ImageReadMode, Inter, SliceMode, encode_jpeg, encode_png,
                                           get_image_num_channels, get_image_size, read_file,
                                           read_image, write_file, write_jpeg, write_png)

__all__ = ["Affine", "AutoAugmentPolicy", "Border", "CenterCrop", "ConvertMode", "Crop", "Decode",
           "HWC2CHW", "HorizontalFlip", "ImageBatchFormat", "ImageReadMode", "Inter", "Normalize",
           "NormalizePad", "Pad", "PadToSize", "RandomAffine", "RandomCrop", "RandomCropDecodeResize",
           "RandomHorizontalFlip", "RandomResizedCrop", "RandomRotation", "RandomVerticalFlip",
           "Rescale", "Resize", "ResizedCrop", "Rotate", "SliceMode", "ToNumpy", "ToPIL", "ToTensor",
           "ToType", "VerticalFlip", "encode_jpeg", "encode_png", "get_image_num_channels",
           "get_image_size", "not_random", "read_file", "read_image", "transforms", "utils",
           "write_file", "write_jpeg", "write_png"]
