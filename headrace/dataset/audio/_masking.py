"""Masking of spectrograms along time or frequency: fixed, random (the keyed generator of the sample)
and independent per example (``iid_masks``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from headrace._util.checks import check_range
from headrace._util.rng import sample_rng
from headrace.dataset.audio._base import AudioTensorOperation, op_error
from headrace.dataset.audio._spectral_base import _FREQ_TIME, _nonneg_int, _numeric, _pos_int

from headrace.dataset.transforms._checks import check_float32, check_non_negative_float32, type_check
__all__ = ["FrequencyMasking", "MaskAlongAxis", "MaskAlongAxisIID", "TimeMasking"]


def _mask(x: np.ndarray, op: str, start: int, width: int, value: float, axis: int) -> np.ndarray:
    """``x`` with ``width`` entries from ``start`` along ``axis`` (-1 time, -2 freq) set to ``value``."""
    n = x.shape[axis]
    if start > n:  # (MindSpore's words say 'less than', its test is 'no more than')
        raise op_error("MaskAlongAxis", "invalid parameter, 'mask_start' should be less than the length of the "
                                        f"masked dimension, but got: 'mask_start' {start} and length {n}")
    if start + width > n:
        raise op_error("MaskAlongAxis", "invalid parameter, the sum of 'mask_start' and 'mask_width' should be no "
                                        f"more than the length of the masked dimension, but got: 'mask_start' "
                                        f"{start}, 'mask_width' {width} and length {n}")
    out = x.copy()
    if width > 0:
        if axis == -1:
            out[..., start:start + width] = value
        else:
            out[..., start:start + width, :] = value
    return out


def _iid_masks(x: np.ndarray, param: int, value: float, axis: int) -> np.ndarray:
    """Each (freq, time) matrix of ``x`` masked along ``axis`` over a random band: width uniform in
    [0, param), start uniform over the rest (drawn from the sample's keyed generator)."""
    out = x.copy()
    n = x.shape[axis]
    flat = out.reshape((-1,) + x.shape[-2:])
    rng = sample_rng()
    for m in flat:
        width = int(rng.random() * param)
        start = int(rng.random() * (n - width))
        if axis == -1:
            m[:, start:start + width] = value
        else:
            m[start:start + width, :] = value
    return out


def _check_masking(iid_masks: Any, param: Any, mask_start: Any, mask_value: Any) -> None:
    type_check(iid_masks, (bool,), "iid_masks")
    type_check(param, (int,), "mask_param")
    check_non_negative_float32(param, "mask_param")
    type_check(mask_start, (int,), "mask_start")
    check_non_negative_float32(mask_start, "mask_start")
    type_check(mask_value, (int, float), "mask_value")
    check_non_negative_float32(mask_value, "mask_value")


class TimeMasking(AudioTensorOperation):
    """Masks consecutive time steps of a spectrogram (..., freq, time) with ``mask_value``.

    With ``iid_masks`` False the mask covers ``[mask_start, mask_start + time_mask_param)``; with
    True each (freq, time) matrix gets its own random band of width below ``time_mask_param``.

    Args:
        iid_masks (bool, optional): random masks. Default: False.
        time_mask_param (int, optional): mask width (its upper bound when random). Default: 0.
        mask_start (int, optional): first masked step when not random. Default: 0.
        mask_value (float, optional): Default: 0.0.

    Examples:
        >>> TimeMasking(time_mask_param=1, mask_start=1)(np.ones((1, 3), np.float32)).tolist()
        [[1.0, 0.0, 1.0]]
    """

    _axis, _name, _label, _dim = -1, "TimeMasking", "time_mask_param", "time"
    random = True

    def __init__(self, iid_masks=False, time_mask_param=0, mask_start=0, mask_value=0.0):
        _check_masking(iid_masks, time_mask_param, mask_start, mask_value)
        self.iid_masks, self.time_mask_param = iid_masks, time_mask_param
        self.mask_start, self.mask_value = mask_start, mask_value
        self.random = iid_masks

    def _param(self) -> int:
        return self.time_mask_param

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _numeric(x, self._name, 2, _FREQ_TIME)
        param = self._param()
        n = x.shape[self._axis]
        if param > n:
            raise op_error(self._name, f"invalid parameter, '{self._label}' should be less than or equal to the "
                                       f"length of {self._dim} dimension, but got: 'frequency_mask_param' {param} "
                                       f"and length {n}")
        if self.iid_masks:
            return _iid_masks(x, param, self.mask_value, self._axis)
        return _mask(x, self._name, self.mask_start, param, self.mask_value, self._axis)


class FrequencyMasking(TimeMasking):
    """Masks consecutive frequency bins of a spectrogram (..., freq, time) with ``mask_value``.

    With ``iid_masks`` False the mask covers ``[mask_start, mask_start + freq_mask_param)``; with
    True each (freq, time) matrix gets its own random band of width below ``freq_mask_param``.

    Args:
        iid_masks (bool, optional): random masks. Default: False.
        freq_mask_param (int, optional): mask width (its upper bound when random). Default: 0.
        mask_start (int, optional): first masked bin when not random. Default: 0.
        mask_value (float, optional): Default: 0.0.

    Examples:
        >>> FrequencyMasking(freq_mask_param=1, mask_start=1)(np.ones((3, 1), np.float32)).tolist()
        [[1.0], [0.0], [1.0]]
    """

    _axis, _name, _label, _dim = -2, "FrequencyMasking", "frequency_mask_param", "frequency"

    def __init__(self, iid_masks=False, freq_mask_param=0, mask_start=0, mask_value=0.0):  # noqa: D107
        _check_masking(iid_masks, freq_mask_param, mask_start, mask_value)
        self.iid_masks, self.freq_mask_param = iid_masks, freq_mask_param
        self.mask_start, self.mask_value = mask_start, mask_value
        self.random = iid_masks

    def _param(self) -> int:
        return self.freq_mask_param


class MaskAlongAxis(AudioTensorOperation):
    """Sets ``mask_width`` entries from ``mask_start`` along ``axis`` (1: frequency, 2: time) of a
    spectrogram (..., freq, time) to ``mask_value``.

    Examples:
        >>> MaskAlongAxis(0, 1, 5.0, 2)(np.zeros((1, 2), np.float32)).tolist()
        [[5.0, 0.0]]
    """

    def __init__(self, mask_start, mask_width, mask_value, axis):
        type_check(mask_start, (int,), "mask_start")
        type_check(mask_width, (int,), "mask_width")
        type_check(mask_value, (int, float), "mask_value")
        type_check(axis, (int,), "axis")
        _nonneg_int(mask_start, "mask_start")
        _pos_int(mask_width, "mask_width")
        check_float32(mask_value, "mask_value")
        check_range(axis, (1, 2), "axis")
        self.mask_start, self.mask_width, self.mask_value, self.axis = mask_start, mask_width, mask_value, axis

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _numeric(x, "MaskAlongAxis", 2, _FREQ_TIME)
        return _mask(x, "MaskAlongAxis", self.mask_start, self.mask_width, self.mask_value,
                     -1 if self.axis == 2 else -2)


class MaskAlongAxisIID(AudioTensorOperation):
    """Masks a random band along ``axis`` (1: frequency, 2: time) of each (freq, time) matrix: width
    uniform in [0, mask_param), start uniform over the rest, from the sample's keyed generator.

    Examples:
        >>> MaskAlongAxisIID(0, 5.0, 2)(np.zeros((1, 2), np.float32)).tolist()
        [[0.0, 0.0]]
    """

    random = True

    def __init__(self, mask_param, mask_value, axis):
        _nonneg_int(mask_param, "mask_param")
        type_check(mask_value, (int, float), "mask_value")
        check_float32(mask_value, "mask_value")
        type_check(axis, (int,), "axis")
        check_range(axis, (1, 2), "axis")
        self.mask_param, self.mask_value, self.axis = mask_param, mask_value, axis

    def _run(self, x: np.ndarray) -> np.ndarray:
        x = _numeric(x, "MaskAlongAxisIID", 2, _FREQ_TIME)
        axis = -1 if self.axis == 2 else -2
        if self.mask_param > x.shape[axis]:
            dim = "time" if axis == -1 else "frequency"
            raise op_error("MaskAlongAxisIID", f"mask_param should be less than or equal to the length of {dim} "
                                               "dimension.")
        return _iid_masks(x, self.mask_param, self.mask_value, axis)
