"""Automatic augmentation operations of ``headrace.dataset.vision``: AutoAugment, RandAugment,
TrivialAugmentWide, UniformAugment and RandomSelectSubpolicy (MindSpore's names, signatures and checks; kernels in
``headrace/_image/augment.py``)."""
from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image

from headrace._util.rng import sample_rng
from headrace.dataset.transforms._base import Implementation, as_operation
from headrace.dataset.transforms._checks import (FLOAT_MAX_INTEGER, check_2tuple, check_positive,
                                                 check_uint8, check_range, type_check)
from headrace.dataset.vision._base import ImageTensorOperation, op_error
from headrace._image import augment as A
from headrace.dataset.vision._color_checks import U8, check_image
from headrace.dataset.vision.utils import AutoAugmentPolicy, Inter

__all__ = ["AutoAugment", "RandAugment", "RandomSelectSubpolicy", "TrivialAugmentWide", "UniformAugment"]

_WARPABLE = (Inter.NEAREST, Inter.BILINEAR, Inter.BICUBIC, Inter.AREA)


def _check_fill_value(fill_value: Any) -> tuple[int, int, int]:
    if isinstance(fill_value, int) and not isinstance(fill_value, bool):
        check_uint8(fill_value, "fill_value")
        return (fill_value,) * 3
    if isinstance(fill_value, tuple) and len(fill_value) == 3:
        for i, value in enumerate(fill_value):
            check_uint8(value, f"fill_value[{i}]")
        return tuple(fill_value)
    if isinstance(fill_value, bool):
        check_uint8(fill_value, "fill_value")
    raise TypeError("fill_value should be a single integer or a 3-tuple.")


class _AutoAugmentBase(ImageTensorOperation):
    implementation = Implementation.C
    random = True
    interpolation: Inter
    _msgs: dict[str, str] | None = None

    def _check_input(self, img: np.ndarray) -> None:
        if self.interpolation not in _WARPABLE:
            raise op_error(self.op_name, f"interpolation {self.interpolation.name} is not supported; use "
                                         f"NEAREST, BILINEAR, BICUBIC or AREA.")
        check_image(img, self.op_name, ranks=(3,), channels=(3,), dtypes=U8, msgs=self._msgs)

    def _keep_warp(self, interpolation: Any, fill_value: Any) -> None:
        """Checks and keeps the settings of the geometric steps (checked last, as MindSpore does)."""
        type_check(interpolation, (Inter,), "interpolation")
        self.fill_value = _check_fill_value(fill_value)
        self.interpolation = interpolation


def _check_bins(num_magnitude_bins: Any) -> None:
    type_check(num_magnitude_bins, (int,), "num_magnitude_bins")
    check_range(num_magnitude_bins, (2, FLOAT_MAX_INTEGER), "num_magnitude_bins")


class AutoAugment(_AutoAugmentBase):
    """AutoAugment (Cubuk et al.): applies one of 25 learned two-step sub-policies, drawn at random.

    Each step of the drawn sub-policy runs with its own probability and magnitude; signed
    magnitudes are negated half of the time.

    Args:
        policy (AutoAugmentPolicy, optional): the policies learned on IMAGENET, CIFAR10 or SVHN.
            Default: AutoAugmentPolicy.IMAGENET.
        interpolation (Inter, optional): resampling of the geometric steps (NEAREST, BILINEAR,
            BICUBIC or AREA). Default: Inter.NEAREST.
        fill_value (Union[int, tuple[int, int, int]], optional): colour for areas outside the
            image after a geometric step, in [0, 255]. Default: 0.

    Raises:
        TypeError: if `policy` is not an AutoAugmentPolicy, `interpolation` not an Inter, or
            `fill_value` not an int or a 3-tuple.
        ValueError: if a `fill_value` is not in [0, 255].
        RuntimeError: if the image is not uint8 <H, W, 3>.

    Examples:
        >>> import numpy as np
        >>> AutoAugment()(np.zeros((8, 8, 3), np.uint8)).shape
        (8, 8, 3)
    """

    _msgs = {"rank": "input tensor is not in shape of <H,W,C>, but got rank: {nd}",
             "channel": "channel of input image should be 3, but got: {c}"}

    def __init__(self, policy=AutoAugmentPolicy.IMAGENET, interpolation=Inter.NEAREST, fill_value=0):
        type_check(policy, (AutoAugmentPolicy,), "policy")
        self._keep_warp(interpolation, fill_value)
        self.policy = policy

    def _run(self, img):
        self._check_input(img)
        return A.auto_augment(img, self.policy.value, int(self.interpolation), self.fill_value, sample_rng())


class RandAugment(_AutoAugmentBase):
    """RandAugment (Cubuk et al.): applies `num_ops` operations drawn uniformly, at one magnitude.

    Args:
        num_ops (int, optional): number of operations applied in sequence, >= 0. Default: 2.
        magnitude (int, optional): magnitude bin of every operation, in [0, num_magnitude_bins).
            Default: 9.
        num_magnitude_bins (int, optional): bins of each magnitude table, >= 2. Default: 31.
        interpolation (Inter, optional): resampling of geometric operations. Default: Inter.NEAREST.
        fill_value (Union[int, tuple[int, int, int]], optional): colour for areas outside the
            image, in [0, 255]. Default: 0.

    Raises:
        TypeError: if an argument has the wrong type.
        ValueError: if an argument is out of range.
        RuntimeError: if the image is not uint8 <H, W, 3>.

    Examples:
        >>> import numpy as np
        >>> RandAugment(num_ops=0)(np.full((4, 4, 3), 7, np.uint8))[0, 0].tolist()
        [7, 7, 7]
    """

    def __init__(self, num_ops=2, magnitude=9, num_magnitude_bins=31, interpolation=Inter.NEAREST,
                 fill_value=0):
        type_check(num_ops, (int,), "num_ops")
        check_range(num_ops, (0, FLOAT_MAX_INTEGER), "num_ops")
        _check_bins(num_magnitude_bins)
        type_check(magnitude, (int,), "magnitude")
        check_range(magnitude, (0, num_magnitude_bins), "magnitude", right_open=True)
        self._keep_warp(interpolation, fill_value)
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins

    def _run(self, img):
        self._check_input(img)
        return A.rand_augment(img, self.num_ops, self.magnitude, self.num_magnitude_bins,
                              int(self.interpolation), self.fill_value, sample_rng())


class TrivialAugmentWide(_AutoAugmentBase):
    """TrivialAugment Wide (Müller & Hutter): one operation and one magnitude, drawn uniformly.

    Args:
        num_magnitude_bins (int, optional): as in :class:`RandAugment`. Default: 31.
        interpolation (Inter, optional): as in :class:`RandAugment`. Default: Inter.NEAREST.
        fill_value (Union[int, tuple[int, int, int]], optional): as in :class:`RandAugment`. Default: 0.

    Raises:
        TypeError, ValueError: where :class:`RandAugment` raises them for these arguments.
        RuntimeError: if the image is not uint8 <H, W, 3>.

    Examples:
        >>> import numpy as np
        >>> TrivialAugmentWide()(np.zeros((8, 8, 3), np.uint8)).shape
        (8, 8, 3)
    """

    def __init__(self, num_magnitude_bins=31, interpolation=Inter.NEAREST, fill_value=0):
        _check_bins(num_magnitude_bins)
        self._keep_warp(interpolation, fill_value)
        self.num_magnitude_bins = num_magnitude_bins

    def _run(self, img):
        self._check_input(img)
        return A.trivial_augment_wide(img, self.num_magnitude_bins, int(self.interpolation),
                                      self.fill_value, sample_rng())


class UniformAugment(ImageTensorOperation):
    """Picks `num_ops` distinct transforms at random and applies each with probability 1/2.

    The picked transforms run in their list order; each receives the previous one's output, so
    all must accept and return the same kind of value.

    Args:
        transforms (Sequence): transforms (ops or callables) to choose from.
        num_ops (int, optional): how many to pick, at most ``len(transforms)``. Default: 2.

    Raises:
        TypeError: if `num_ops` is not an int, `transforms` not a sequence, or an entry not callable.
        ValueError: if `num_ops` is not positive or larger than the number of transforms, or an
            entry is a class instead of an instance.

    Examples:
        >>> import numpy as np
        >>> from headrace.dataset.vision._ops_color import Invert
        >>> out = UniformAugment([Invert()], num_ops=1)(np.zeros((2, 2, 3), np.uint8))
        >>> int(out[0, 0, 0]) in (0, 255)
        True
    """

    random = True

    def __init__(self, transforms, num_ops=2):
        type_check(num_ops, (int,), "num_ops")
        check_positive(num_ops, "num_ops")
        if hasattr(transforms, "__len__") and num_ops > len(transforms):
            raise ValueError("num_ops is greater than transforms list size.")
        type_check(transforms, (list, tuple), "transforms list")
        if not transforms:
            raise ValueError("transforms list can not be empty.")
        for i, op in enumerate(transforms):
            if not callable(op) and getattr(op, "parse", None) is None:
                raise TypeError(f"transforms[{i}] is neither a transforms op (TensorOperation) nor a "
                                f"callable pyfunc.")
            if isinstance(op, type):
                raise ValueError(f"op_list[{i}] should be a dataset processing operation instance, but got: "
                                 f"{op}. It may be missing parentheses for instantiation.")
        self.transforms = [as_operation(op) for op in transforms]
        self.num_ops = num_ops
        impls = [getattr(op, "implementation", None) for op in self.transforms]
        if all(i == Implementation.PY for i in impls):
            self.implementation = Implementation.PY
        elif all(i == Implementation.C for i in impls if i is not None) and any(i is not None for i in impls):
            self.implementation = Implementation.C if all(i is not None for i in impls) else None
        else:
            self.implementation = None

    def __call__(self, *args: Any) -> Any:
        _check_image_args(args)
        rng = sample_rng()
        picked = np.sort(rng.choice(len(self.transforms), size=self.num_ops, replace=False))
        values = args
        for idx in picked.tolist():
            if rng.random() < 0.5:
                values = _apply_op(self.transforms[idx], values)
        return values[0] if len(values) == 1 else values

    def __repr__(self) -> str:
        return f"UniformAugment({self.transforms!r}, num_ops={self.num_ops})"


def _apply_op(op: Any, values: tuple) -> tuple:
    out = op(*values)
    return out if isinstance(out, tuple) else (out,)


def _check_image_args(args: tuple) -> None:
    for a in args:
        if not isinstance(a, (np.ndarray, Image.Image)):
            raise TypeError(f"Input should be NumPy or PIL image, got {type(a)}.")


class RandomSelectSubpolicy(ImageTensorOperation):
    """Picks one sub-policy uniformly at random and runs its steps, each with its probability.

    A policy is a list of sub-policies; a sub-policy is a list of ``(op, prob)`` pairs applied in
    order, each one with probability ``prob``.

    Args:
        policy (list[list[tuple[TensorOperation, float]]]): the sub-policies.

    Raises:
        TypeError: if `policy` or a sub-policy is not a list, or an op is not callable.
        ValueError: if `policy` or a sub-policy is empty, a step is not an (op, prob) pair, or a
            probability is not in [0, 1].

    Examples:
        >>> import numpy as np
        >>> from headrace.dataset.vision._ops_color import Invert
        >>> op = RandomSelectSubpolicy([[(Invert(), 1.0)]])
        >>> op(np.zeros((1, 1, 3), np.uint8)).tolist()
        [[[255, 255, 255]]]
    """

    implementation = Implementation.C
    random = True

    def __init__(self, policy):
        type_check(policy, (list,), "policy")
        if not policy:
            raise ValueError("policy can not be empty.")
        for sub_ind, sub in enumerate(policy):
            type_check(sub, (list,), f"policy[{[sub_ind]}]")
            if not sub:
                raise ValueError(f"policy[{sub_ind}] can not be empty.")
            for op_ind, step in enumerate(sub):
                check_2tuple(step, f"policy[{sub_ind}][{op_ind}]")
                if not callable(step[0]) and getattr(step[0], "parse", None) is None:
                    raise TypeError(f"op of (op, prob) in policy[{sub_ind}][{op_ind}] is neither a transforms op "
                                    f"(TensorOperation) nor a callable pyfunc.")
                check_range(step[1], (0, 1), f"prob of (op, prob) policy[{sub_ind}][{op_ind}]")
        self.policy = policy
        self._policy = [[(as_operation(op), float(prob)) for op, prob in sub] for sub in policy]

    def __call__(self, *args: Any) -> Any:
        _check_image_args(args)
        rng = sample_rng()
        values = args
        for op, prob in self._policy[int(rng.integers(len(self._policy)))]:
            if rng.random() < prob:
                values = _apply_op(op, values)
        return values[0] if len(values) == 1 else values
