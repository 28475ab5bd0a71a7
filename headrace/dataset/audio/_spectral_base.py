"""What the spectral transforms share: argument checks worded as MindSpore words them, the checks
of an input's type and shape at call time, the STFT settings of an op, and the power and decibel
conversions. A float64 input gives float64; any other numeric input (ints, bool, float16, float32)
is computed and returned as float32. Complex values are real arrays with a last axis of 2 (real,
imaginary).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from headrace._audio import spectral as sk
from headrace._util.checks import INT32_MAX, check_range
from headrace._util.errors import kernel_error
from headrace.dataset.audio._base import AudioTensorOperation, op_error
from headrace.dataset.audio.utils import BorderType, WindowType
from headrace.dataset.transforms._base import returns_contiguous
from headrace.dataset.transforms._cast import type_name
from headrace.dataset.transforms._checks import check_float32, check_non_negative_float32, check_pos_float32, type_check

_FREQ_TIME = "<..., freq, time>"


_COMPLEX = "<..., complex=2>"


# ---- argument checks (MindSpore's order and words) ----

def _pos_int(value: Any, name: str) -> None:
    type_check(value, (int,), name)
    check_range(value, (1, INT32_MAX), name)


def _nonneg_int(value: Any, name: str) -> None:
    type_check(value, (int,), name)
    check_range(value, (0, INT32_MAX), name)


def _win_not_over(win_length: int, n_fft: int) -> None:
    if win_length > n_fft:
        raise ValueError(f"Input win_length should be no more than n_fft, but got win_length: {win_length} "
                         f"and n_fft: {n_fft}.")


def _check_win_hop(n_fft: int, win_length: Any, hop_length: Any, zero_ok: bool = False) -> None:
    """win_length (positive, or with ``zero_ok`` non-negative; at most n_fft), then hop_length,
    when given."""
    check = _nonneg_int if zero_ok else _pos_int
    if win_length is not None:
        check(win_length, "win_length")
        _win_not_over(win_length, n_fft)
    if hop_length is not None:
        check(hop_length, "hop_length")


def _check_stft_args(n_fft: Any, win_length: Any, hop_length: Any, pad: Any, window: Any, normalized: Any,
                     center: Any, pad_mode: Any, onesided: Any) -> None:
    """The STFT arguments of MelSpectrogram and InverseSpectrogram, in the order MindSpore checks
    them for those two (after n_fft)."""
    type_check(window, (WindowType,), "window")
    type_check(normalized, (bool,), "normalized")
    type_check(center, (bool,), "center")
    type_check(pad_mode, (BorderType,), "pad_mode")
    type_check(onesided, (bool,), "onesided")
    _nonneg_int(pad, "pad")
    if hop_length is not None:
        _pos_int(hop_length, "hop_length")
    if win_length is not None:
        _pos_int(win_length, "win_length")
        _win_not_over(win_length, n_fft)


def _frame_lengths(n_fft: int, win_length: int | None, hop_length: int | None) -> tuple[int, int]:
    """(win_length, hop_length) with MindSpore's defaults: n_fft, and half the window (None or 0)."""
    win = win_length or n_fft
    return win, hop_length or win // 2


def _mel_freqs(f_min: Any, f_max: Any, sample_rate: int) -> None:
    type_check(f_min, (int, float), "f_min")
    check_float32(f_min, "f_min")
    if f_max is not None:
        type_check(f_max, (int, float), "f_max")
        check_pos_float32(f_max, "f_max")
        if f_min >= f_max:
            raise ValueError("MelScale: f_max should be greater than f_min.")
    elif f_min >= sample_rate // 2:
        raise ValueError("MelScale: sample_rate // 2 should be greater than f_min when f_max is set to None.")


def _check_f_max(f_min: float, f_max: Any, sample_rate: int, without_max: str) -> None:
    """MelSpectrogram's and LFCC's bound on f_max (checked for its type before): non-negative and at
    least f_min; without it, f_min below the Nyquist rate (``without_max``: the op's own words)."""
    if f_max is not None:
        check_non_negative_float32(f_max, "f_max")
        if f_min > f_max:
            raise ValueError(f"f_max should be greater than or equal to f_min, but got f_min: {f_min} and "
                             f"f_max: {f_max}.")
    elif f_min >= sample_rate // 2:
        raise ValueError(without_max)


def _power(power: Any) -> None:
    type_check(power, (int, float), "power")
    check_non_negative_float32(power, "power")


# ---- input checks ----

def _numeric(x: np.ndarray, op: str, rank: int = 1, layout: str = "<..., time>") -> np.ndarray:
    """``x`` as float32 (float64 stays), after MindSpore's type and rank checks."""
    if x.dtype.kind not in "biuf":
        raise op_error(op, "the data type of input tensor does not match the requirement of operator. "
                           f"Expecting tensor in type of [int, float, double]. But got type {type_name(x.dtype)}.")
    if x.ndim < rank:
        raise op_error(op, "the shape of input tensor does not match the requirement of operator. Expecting "
                           f"tensor in shape of {layout}. But got tensor with dimension {x.ndim}.")
    return x.astype(sk.work_dtype(x), copy=False)


def _complex_in(x: np.ndarray, op: str) -> np.ndarray:
    x = _numeric(x, op, 1, _COMPLEX)
    if x.shape[-1] != 2:
        raise op_error(op, "the shape of input tensor does not match the requirement of operator. "
                           f"Expecting tensor in shape of {_COMPLEX}.")
    return x


def _signal(x: np.ndarray, op: str) -> np.ndarray:
    if x.dtype.kind not in "biuf":
        raise op_error(op, f"input tensor type should be int, float or double, but got: {type_name(x.dtype)}")
    if x.ndim < 1:
        raise op_error(op, "input tensor is not in shape of <..., time>.")
    return x.astype(sk.work_dtype(x), copy=False)


class _OwnRankError(AudioTensorOperation):
    """An op whose refusal of a 0-d input MindSpore words its own way (``_rank_error``)."""

    _rank_error = ""

    @returns_contiguous  # AudioTensorOperation.__call__ makes the array contiguous
    def __call__(self, *args: Any) -> Any:
        if len(args) == 1 and isinstance(args[0], np.ndarray) and args[0].ndim == 0:
            raise kernel_error(self._rank_error)
        return AudioTensorOperation.__call__(self, *args)


class _Stft:
    """The STFT settings Spectrogram, MelSpectrogram, MFCC, LFCC and SpectralCentroid share."""

    def __init__(self, op: str, n_fft: int, win_length: int, hop_length: int, pad: int, window: WindowType,
                 normalized: bool, center: bool, pad_mode: BorderType, onesided: bool, strict_reflect: bool):
        self.op, self.n_fft, self.win_length, self.hop_length, self.pad = op, n_fft, win_length, hop_length, pad
        self.window, self.normalized, self.center = window.value, normalized, center
        self.pad_mode, self.onesided, self.strict_reflect = pad_mode.value, onesided, strict_reflect
        sk.fft_module()  # imported now, in the process that builds the pipeline (see fft_module)

    def __call__(self, x: np.ndarray, freq_last: bool = False) -> np.ndarray:
        n = x.shape[-1] + 2 * self.pad
        if self.center and self.strict_reflect and self.pad_mode == "reflect" and self.n_fft // 2 >= n:
            raise op_error(self.op, "Padding size should be less than the corresponding input dimension.")
        if not self.center and n < self.n_fft:
            raise op_error(self.op, f"n_fft should be more than 0 and less than {n}, but got n_fft: {self.n_fft}.")
        if self.center and n + 2 * (self.n_fft // 2) < self.n_fft:
            raise op_error(self.op, f"n_fft should be more than 0 and less than {n}, but got n_fft: {self.n_fft}.")
        return sk.stft(x, self.n_fft, self.hop_length, self.win_length, self.window, pad=self.pad,
                       center=self.center, pad_mode=self.pad_mode, onesided=self.onesided,
                       normalized=self.normalized, freq_last=freq_last)


def _power_out(spec: np.ndarray, power: float, dtype: np.dtype) -> np.ndarray:
    if power == 0:
        return sk.as_pairs(spec, dtype)
    return sk.power_spectrum(spec, power).astype(dtype, copy=False)



def _to_db(x: np.ndarray, power_scale: bool, top_db: float | None = 80.0) -> np.ndarray:
    return sk.amplitude_to_db(x, 10.0 if power_scale else 20.0, 1e-10, 0.0, top_db)


def _complex_spec(x: np.ndarray, op: str, layout: str = "<..., freq, num_frame, complex=2>") -> np.ndarray:
    x = _numeric(x, op, 0)
    if x.ndim < 3 or x.shape[-1] != 2:
        raise op_error(op, "the shape of input tensor does not match the requirement of operator. Expecting "
                           f"tensor in shape of {layout}.")
    return x
