"""All vision operations in one module (MindSpore's ``mindspore.dataset.vision.transforms``)."""
from headrace.dataset.vision._base import ImageTensorOperation
from headrace.dataset.vision._ops_convert import (HWC2CHW, Normalize, NormalizePad, Rescale, ToNumpy,
                                                  ToPIL, ToTensor, ToType)
from headrace.dataset.vision._ops_decode import Decode, RandomCropDecodeResize
from headrace.dataset.vision._ops_geometry import (Affine, CenterCrop, Crop, HorizontalFlip, Pad,
                                                   PadToSize, RandomAffine, RandomCrop,
                                                   RandomHorizontalFlip, RandomResizedCrop,
                                                   RandomRotation, RandomVerticalFlip, Resize,
                                                   ResizedCrop, Rotate, VerticalFlip)

__all__ = ["Affine", "CenterCrop", "Crop", "Decode", "HWC2CHW", "HorizontalFlip", "ImageTensorOperation",
           "Normalize", "NormalizePad", "Pad", "PadToSize", "RandomAffine", "RandomCrop",
           "RandomCropDecodeResize", "RandomHorizontalFlip", "RandomResizedCrop", "RandomRotation",
           "RandomVerticalFlip", "Rescale", "Resize", "ResizedCrop", "Rotate", "ToNumpy", "ToPIL",
           "ToTensor", "ToType", "VerticalFlip"]
