"""What ``headrace.dataset.vision`` exports: every op of ``vision.transforms`` (the same objects),
the enums and functions of ``vision.utils``, and nothing its ``__all__`` cannot resolve."""
import headrace.dataset.vision as vision
from headrace.dataset.vision import transforms, utils


def test_all_is_sorted_and_every_name_resolves():
    assert vision.__all__ == sorted(set(vision.__all__))
    assert len(vision.__all__) == 98
    missing = [name for name in vision.__all__ if not hasattr(vision, name)]
    assert missing == []


def test_every_transforms_op_is_exported_as_the_same_object():
    ops = [name for name in transforms.__all__ if name != "ImageTensorOperation"]
    assert len(ops) == 78
    for name in ops:
        assert name in vision.__all__ and getattr(vision, name) is getattr(transforms, name), name
    assert "ImageTensorOperation" not in vision.__all__


def test_the_other_names_are_utils_modules_and_helpers():
    rest = sorted(set(vision.__all__) - set(transforms.__all__))
    assert rest == ["AutoAugmentPolicy", "Border", "ConvertMode", "ImageBatchFormat", "ImageDataWarning",
                    "ImageReadMode", "Inter", "SliceMode", "encode_jpeg", "encode_png", "get_image_num_channels",
                    "get_image_size", "not_random", "read_file", "read_image", "transforms", "utils",
                    "write_file", "write_jpeg", "write_png"]
    assert vision.Border is utils.Border and vision.read_file is utils.read_file
    assert vision.transforms is transforms and vision.utils is utils
