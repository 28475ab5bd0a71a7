"""Vision transforms (MindSpore's ``mindspore.dataset.vision``)."""
from headrace.dataset.vision.utils import (AutoAugmentPolicy, Border, ConvertMode, ImageBatchFormat,
                                           ImageReadMode, Inter, SliceMode)

__all__ = ["AutoAugmentPolicy", "Border", "ConvertMode", "ImageBatchFormat", "ImageReadMode", "Inter",
           "SliceMode"]
