"""Argument checks of the vision ops, worded as MindSpore words them (run once, in constructors).

General helpers (``type_check``, ``check_range``, ...) live in ``headrace.dataset.transforms._checks``
and are re-exported here so vision modules import from one place.
"""
from __future__ import annotations

import numbers
from typing import Any

from headrace._util.checks import check_pos_int32
from headrace.dataset.transforms._checks import (FLOAT_MAX_INTEGER, INT32_MAX, INT32_MIN,
                                                 check_2tuple, check_float32,
                                                 check_non_negative_float32,
                                                 check_pos_float32,
                                                 check_positive, check_prob,
                                                 check_ordered_range, check_uint8, check_range, type_check,
                                                 type_check_list)

__all__ = ["FLOAT_MAX_INTEGER", "INT32_MAX", "INT32_MIN", "check_2tuple", "check_crop_coordinates",
           "check_crop_size", "check_degrees", "check_fill_value", "check_float32",
           "check_non_negative_float32", "check_normalize_param",
           "check_padding", "check_pos_float32", "check_pos_int32", "check_positive", "check_prob",
           "check_ordered_range", "check_resize_size", "check_scale_ratio_attempts", "check_uint8",
           "check_range", "fill_tuple", "parse_padding", "size_pair", "type_check", "type_check_list"]


def check_crop_size(size: Any) -> None:
    """An int in [1, 16777216] or a (h, w) list/tuple of such ints."""
    type_check(size, (int, list, tuple), "size")
    if isinstance(size, int):
        check_range(size, (1, FLOAT_MAX_INTEGER))
    elif len(size) == 2:
        for i, v in enumerate(size):
            type_check(v, (int,), f"size[{i}]")
            check_range(v, (1, FLOAT_MAX_INTEGER))
    else:
        raise TypeError("Size should be a single integer or a list/tuple (h, w) of length 2.")


def check_resize_size(size: Any) -> None:
    """Resize's size: an int in [1, 16777216] or (h, w) with each in [1, 2147483647]."""
    if isinstance(size, int):
        check_range(size, (1, FLOAT_MAX_INTEGER))
    elif isinstance(size, (tuple, list)) and len(size) == 2:
        for i, v in enumerate(size):
            type_check(v, (int,), f"size at dim {i}")
            check_range(v, (1, INT32_MAX), f"size at dim {i}")
    else:
        raise TypeError("Size should be a single integer or a list/tuple (h, w) of length 2.")


def size_pair(size: int | list | tuple) -> tuple[int, int]:
    return (size, size) if isinstance(size, int) else (int(size[0]), int(size[1]))


def check_crop_coordinates(coordinates: Any) -> None:
    type_check(coordinates, (list, tuple), "coordinates")
    if len(coordinates) != 2:
        raise TypeError("Coordinates should be a list/tuple (y, x) of length 2.")
    for i, v in enumerate(coordinates):
        type_check(v, (int,), f"coordinates[{i}]")
        check_range(v, (0, INT32_MAX), f"coordinates[{i}]")


def check_fill_value(fill_value: Any) -> None:
    if isinstance(fill_value, int):
        check_uint8(fill_value, "fill_value")
    elif isinstance(fill_value, tuple) and len(fill_value) == 3:
        for i, v in enumerate(fill_value):
            check_uint8(v, f"fill_value[{i}]")
    else:
        raise TypeError("fill_value should be a single integer or a 3-tuple.")


def fill_tuple(fill_value: int | tuple) -> tuple[int, int, int]:
    return (fill_value,) * 3 if isinstance(fill_value, int) else tuple(fill_value)


def check_padding(padding: Any) -> None:
    type_check(padding, (tuple, list, numbers.Number), "padding")
    if isinstance(padding, numbers.Number):
        type_check(padding, (int,), "padding")
        check_range(padding, (0, INT32_MAX), "padding")
    else:
        if len(padding) not in (2, 4):
            raise ValueError("The size of the padding list or tuple should be 2 or 4.")
        for i, v in enumerate(padding):
            type_check(v, (int,), f"padding[{i}]")
            check_range(v, (0, INT32_MAX), "pad_value")


def parse_padding(padding: int | list | tuple) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) from an int, a (left/right, top/bottom) pair or a 4-tuple."""
    if isinstance(padding, numbers.Number):
        return (int(padding),) * 4
    if len(padding) == 2:
        return (padding[0], padding[1], padding[0], padding[1])
    return tuple(padding)


def check_degrees(degrees: Any) -> None:
    type_check(degrees, (int, float, list, tuple), "degrees")
    if isinstance(degrees, (int, float)):
        check_non_negative_float32(degrees, "degrees")
    elif len(degrees) == 2:
        type_check_list(degrees, (int, float), "degrees")
        for v in degrees:
            check_float32(v, "degrees")
        if degrees[0] > degrees[1]:
            raise ValueError("degrees should be in (min,max) format. Got (max,min).")
    else:
        raise TypeError("If degrees is a sequence, the length must be 2.")


def check_scale_ratio_attempts(size: Any, scale: Any, ratio: Any, max_attempts: Any) -> None:
    """The size/scale/ratio/max_attempts checks of RandomResizedCrop and RandomCropDecodeResize."""
    check_crop_size(size)
    if scale is not None:
        type_check(scale, (tuple, list), "scale")
        if len(scale) != 2:
            raise TypeError("scale should be a list/tuple of length 2.")
        type_check_list(scale, (float, int), "scale")
        if scale[0] > scale[1]:
            raise ValueError("scale should be in (min,max) format. Got (max,min).")
        check_ordered_range(scale, (0, FLOAT_MAX_INTEGER))
        check_positive(scale[1], "scale[1]")
    if ratio is not None:
        type_check(ratio, (tuple, list), "ratio")
        if len(ratio) != 2:
            raise TypeError("ratio should be a list/tuple of length 2.")
        check_pos_float32(ratio[0], "ratio[0]")
        check_pos_float32(ratio[1], "ratio[1]")
        if ratio[0] > ratio[1]:
            raise ValueError("ratio should be in (min,max) format. Got (max,min).")
    if max_attempts is not None:
        check_pos_int32(max_attempts, "max_attempts", exact_int=True)


def check_normalize_param(mean: Any, std: Any) -> None:
    type_check(mean, (list, tuple), "mean")
    type_check(std, (list, tuple), "std")
    if len(mean) != len(std):
        raise ValueError("Length of mean and std must be equal.")
    for i, v in enumerate(mean):
        type_check(v, (int, float), f"mean[{i}]")
        check_range(v, (0, 255), f"mean[{i}]")
    for i, v in enumerate(std):
        type_check(v, (int, float), f"std[{i}]")
        check_range(v, (0, 255), f"std[{i}]", left_open=True)

