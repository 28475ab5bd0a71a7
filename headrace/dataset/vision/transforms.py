"""All vision operations in one module (MindSpore's ``mindspore.dataset.vision.transforms``)."""
from headrace.dataset.vision._base import ImageTensorOperation
from headrace.dataset.vision._ops_bbox import (BoundingBoxAugment, RandomCropWithBBox,
                                               RandomHorizontalFlipWithBBox, RandomResizedCropWithBBox,
                                               RandomResizeWithBBox, RandomVerticalFlipWithBBox,
                                               ResizeWithBBox)
from headrace.dataset.vision._ops_augment import (AutoAugment, RandAugment, RandomSelectSubpolicy,
                                                  TrivialAugmentWide, UniformAugment)
from headrace.dataset.vision._ops_color import (
    AdjustBrightness, AdjustContrast, AdjustGamma, AdjustHue, AdjustSaturation,
    AdjustSharpness, AutoContrast, ConvertColor, Equalize, GaussianBlur, Grayscale, Invert,
    Posterize, Solarize,
)
from headrace.dataset.vision._ops_color_random import (
    RandomAdjustSharpness, RandomAutoContrast, RandomColor, RandomColorAdjust,
    RandomEqualize, RandomGrayscale, RandomInvert, RandomPosterize, RandomSharpness,
    RandomSolarize,
)
from headrace.dataset.vision._ops_convert import (HWC2CHW, Normalize, NormalizePad, Rescale, ToNumpy,
                                                  ToPIL, ToTensor, ToType)
from headrace.dataset.vision._ops_decode import Decode, RandomCropDecodeResize
from headrace.dataset.vision._ops_geometry import (
    CenterCrop, Crop, RandomCrop, RandomResizedCrop, Resize, ResizedCrop,
)
from headrace.dataset.vision._ops_flip_pad import (
    HorizontalFlip, Pad, PadToSize, RandomHorizontalFlip, RandomVerticalFlip, VerticalFlip,
)
from headrace.dataset.vision._ops_misc import HsvToRgb, LinearTransformation, RandomLighting, RgbToHsv
from headrace.dataset.vision._ops_perspective import Perspective, RandomPerspective
from headrace.dataset.vision._ops_patches import FiveCrop, RandomResize, SlicePatches, TenCrop
from headrace.dataset.vision._ops_warp import Affine, RandomAffine, RandomRotation, Rotate
from headrace.dataset.vision._ops_mix import CutMixBatch, CutOut, Erase, MixUp, MixUpBatch, RandomErasing

__all__ = [
    "AdjustBrightness", "AdjustContrast", "AdjustGamma", "AdjustHue", "AdjustSaturation",
    "AdjustSharpness", "Affine", "AutoAugment", "AutoContrast", "BoundingBoxAugment", "CenterCrop",
    "ConvertColor", "Crop", "CutMixBatch", "CutOut", "Decode", "Equalize", "Erase", "FiveCrop",
    "GaussianBlur", "Grayscale", "HWC2CHW", "HorizontalFlip", "HsvToRgb", "ImageTensorOperation",
    "Invert", "LinearTransformation", "MixUp", "MixUpBatch", "Normalize", "NormalizePad", "Pad",
    "PadToSize", "Perspective", "Posterize", "RandAugment", "RandomAdjustSharpness", "RandomAffine",
    "RandomAutoContrast", "RandomColor", "RandomColorAdjust", "RandomCrop", "RandomCropDecodeResize",
    "RandomCropWithBBox", "RandomEqualize", "RandomErasing", "RandomGrayscale", "RandomHorizontalFlip",
    "RandomHorizontalFlipWithBBox", "RandomInvert", "RandomLighting", "RandomPerspective",
    "RandomPosterize", "RandomResize", "RandomResizeWithBBox", "RandomResizedCrop",
    "RandomResizedCropWithBBox", "RandomRotation", "RandomSelectSubpolicy", "RandomSharpness",
    "RandomSolarize", "RandomVerticalFlip", "RandomVerticalFlipWithBBox", "Rescale", "Resize",
    "ResizeWithBBox", "ResizedCrop", "RgbToHsv", "Rotate", "SlicePatches", "Solarize", "TenCrop",
    "ToNumpy", "ToPIL", "ToTensor", "ToType", "TrivialAugmentWide", "UniformAugment", "VerticalFlip",
]
