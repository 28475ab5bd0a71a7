"""Vision transforms (MindSpore's ``mindspore.dataset.vision``).

NumPy input runs OpenCV / libjpeg-turbo kernels; a PIL image runs Pillow where the op has a Pillow
path (as MindSpore picks its C++ or Python implementation).
"""
from headrace.dataset.transforms._base import not_random
from headrace.dataset.vision import transforms, utils
# The ops: exported through transforms.__all__ (see __all__), hence the noqa.
from headrace.dataset.vision.transforms import (  # noqa: F401
                                                AdjustBrightness, AdjustContrast, AdjustGamma,
                                                AdjustHue, AdjustSaturation, AdjustSharpness,
                                                Affine, AutoAugment, AutoContrast, CenterCrop,
                                                ConvertColor, Crop, CutMixBatch, CutOut, Decode,
                                                Equalize, Erase, FiveCrop, GaussianBlur, Grayscale, HWC2CHW,
                                                HorizontalFlip, Invert, MixUp, MixUpBatch, Normalize,
                                                NormalizePad, Pad, PadToSize, Posterize,
                                                RandAugment, RandomAdjustSharpness, RandomAffine,
                                                RandomAutoContrast, RandomColor, RandomColorAdjust,
                                                RandomCrop, RandomCropDecodeResize, RandomEqualize,
                                                RandomErasing, RandomGrayscale,
                                                RandomHorizontalFlip, RandomInvert,
                                                RandomPosterize, RandomResize, RandomResizedCrop, RandomRotation,
                                                RandomSelectSubpolicy,
                                                RandomSharpness, RandomSolarize,
                                                RandomVerticalFlip, Rescale, Resize, ResizedCrop,
                                                Rotate, SlicePatches, Solarize, TenCrop, ToNumpy, ToPIL, ToTensor, ToType,
                                                TrivialAugmentWide, UniformAugment, VerticalFlip)
from headrace.dataset.vision.transforms import (BoundingBoxAugment, RandomCropWithBBox,  # noqa: F401
                                                RandomHorizontalFlipWithBBox, RandomResizedCropWithBBox,
                                                RandomResizeWithBBox, RandomVerticalFlipWithBBox,
                                                ResizeWithBBox)
from headrace.dataset.vision.transforms import HsvToRgb, LinearTransformation, RandomLighting, RgbToHsv  # noqa: F401
from headrace.dataset.vision.transforms import Perspective, RandomPerspective  # noqa: F401
from headrace._image.decode import ImageDataWarning  # headrace only: a damaged image decoded
from headrace.dataset.vision.utils import (AutoAugmentPolicy, Border, ConvertMode,
                                           ImageBatchFormat, ImageReadMode, Inter, SliceMode,
                                           encode_jpeg, encode_png, get_image_num_channels,
                                           get_image_size, read_file, read_image, write_file,
                                           write_jpeg, write_png)

__all__ = [
    "AutoAugmentPolicy", "Border", "ConvertMode", "ImageBatchFormat", "ImageDataWarning", "ImageReadMode", "Inter",
    "SliceMode", "encode_jpeg", "encode_png", "get_image_num_channels", "get_image_size", "not_random", "read_file",
    "read_image", "transforms", "utils", "write_file", "write_jpeg", "write_png",
]
# and every op vision.transforms exports (not its base class): those imported above with a noqa
__all__ = sorted(__all__ + [name for name in transforms.__all__ if name != "ImageTensorOperation"])
