"""Sample-wise audio effects: Contrast, DCShift, Dither, Fade, Gain, Vol and mu-law companding
(MindSpore's names and argument checks over ``headrace._audio.effects``).

They take a waveform of shape <..., time> of any integer or float type; float64 stays float64 and
anything else is computed and returned as float32, as in MindSpore.
"""
from __future__ import annotations

import numpy as np

from headrace._audio import effects as ke
from headrace._util.rng import sample_rng
from headrace.dataset.audio import _checks as ck
from headrace.dataset.audio._base import AudioTensorOperation, as_float, op_error, require_numeric
from headrace.dataset.audio.utils import DensityFunction, FadeShape, GainType

__all__ = ["Contrast", "DCShift", "Dither", "Fade", "Gain", "MuLawDecoding", "MuLawEncoding", "Vol"]


class _SampleWise(AudioTensorOperation):
    def _run(self, x: np.ndarray) -> np.ndarray:
        require_numeric(x, self.op_name)
        return self._apply(as_float(x))

    def _apply(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class Contrast(_SampleWise):
    """sox's ``contrast``: louder-sounding audio by a sine-shaped distortion, like compression.

    Args:
        enhancement_amount (float, optional): in [0, 100]; 0 still changes the signal. Default: 75.0.

    Examples:
        >>> import numpy as np
        >>> Contrast()(np.array([[0.1, 0.5]])).round(4).tolist()
        [[0.2142, 0.7071]]
    """

    def __init__(self, enhancement_amount=75.0):
        self.enhancement_amount = ck.check_float(enhancement_amount, "enhancement_amount", 0, 100)

    def _apply(self, x: np.ndarray) -> np.ndarray:
        return ke.contrast(x, self.enhancement_amount)


class DCShift(_SampleWise):
    """Adds `shift` to the waveform (clipped to [-1, 1]), optionally through a limiter.

    Args:
        shift (float): in [-2.0, 2.0].
        limiter_gain (float, optional): gain of the limiter that keeps the shifted peaks below
            ``1 - (|shift| - limiter_gain)``; None: plain clipping. Default: None.

    Examples:
        >>> import numpy as np
        >>> DCShift(0.5)(np.array([[0.1, 0.7]])).tolist()
        [[0.6, 1.0]]
    """

    def __init__(self, shift, limiter_gain=None):
        self.shift = ck.check_float(shift, "shift", -2.0, 2.0)
        if limiter_gain is not None:
            ck.check_type(limiter_gain, (float, int), "limiter_gain")
            limiter_gain = float(limiter_gain)
        self.limiter_gain = limiter_gain

    def _apply(self, x: np.ndarray) -> np.ndarray:
        return ke.dcshift(x, self.shift, self.limiter_gain)


class Gain(_SampleWise):
    """Scales the waveform by `gain_db` decibels (no clipping).

    Args:
        gain_db (float, optional): gain in dB, in [-16777216, 16777216]. Default: 1.0.

    Examples:
        >>> import numpy as np
        >>> Gain(6.0)(np.array([[0.1, 0.5]])).round(4).tolist()
        [[0.1995, 0.9976]]
    """

    def __init__(self, gain_db=1.0):
        self.gain_db = ck.check_float(gain_db, "gain_db")

    def _apply(self, x: np.ndarray) -> np.ndarray:
        return ke.gain(x, self.gain_db)


class Vol(_SampleWise):
    """Scales the waveform by `gain` read as `gain_type` says, and clips it to [-1, 1].

    Args:
        gain (float): AMPLITUDE: a factor in [0, 16777216]; POWER: a power ratio in (0, 16777216];
            DB: decibels in [-16777216, 16777216].
        gain_type (GainType, optional): Default: GainType.AMPLITUDE.

    Examples:
        >>> import numpy as np
        >>> Vol(4.0, GainType.POWER)(np.array([[0.1, 0.7]])).tolist()
        [[0.2, 1.0]]
    """

    def __init__(self, gain, gain_type=GainType.AMPLITUDE):
        ck.check_type(gain, (int, float), "gain")
        self.gain_type = ck.check_enum(gain_type, GainType, "gain_type")
        if gain_type == GainType.AMPLITUDE:
            ck.check_float(gain, "gain", 0, ck.FLOAT_MAX)
            factor = float(gain)
        elif gain_type == GainType.POWER:
            ck.check_float(gain, "gain", 0, ck.FLOAT_MAX, left_open=True)
            factor = float(np.sqrt(gain))
        else:
            ck.check_float(gain, "gain")
            factor = 10.0 ** (gain / 20.0)
        self.gain = float(gain)
        self._factor = factor

    def _apply(self, x: np.ndarray) -> np.ndarray:
        return ke.vol(x, self._factor)


class Fade(_SampleWise):
    """Fades the waveform in over its first `fade_in_len` and out over its last `fade_out_len`
    samples.

    Args:
        fade_in_len (int, optional): in [0, 2147483647], at most the waveform's length. Default: 0.
        fade_out_len (int, optional): likewise. Default: 0.
        fade_shape (FadeShape, optional): the curve. Default: FadeShape.LINEAR.

    Raises:
        RuntimeError: (on call) if a fade is longer than the waveform.

    Examples:
        >>> import numpy as np
        >>> Fade(3, 2)(np.ones((1, 6))).round(2).tolist()
        [[0.0, 0.5, 1.0, 1.0, 1.0, 0.0]]
    """

    def __init__(self, fade_in_len=0, fade_out_len=0, fade_shape=FadeShape.LINEAR):
        self.fade_in_len = ck.check_int(fade_in_len, "fade_in_len")
        self.fade_out_len = ck.check_int(fade_out_len, "fade_out_len")
        self.fade_shape = ck.check_enum(fade_shape, FadeShape, "fade_shape")

    def _run(self, x: np.ndarray) -> np.ndarray:
        require_numeric(x, self.op_name)
        if self.fade_in_len == 0 and self.fade_out_len == 0:
            return x  # MindSpore hands the input back as it is, of any type
        return self._apply(as_float(x))

    def _apply(self, x: np.ndarray) -> np.ndarray:
        n = x.shape[-1]
        for name, value in (("fade_in_len", self.fade_in_len), ("fade_out_len", self.fade_out_len)):
            if value > n:
                raise op_error(self.op_name, f"invalid parameter, '{name}' should be no greater than 'length of "
                                             f"waveform', but got: {name} {value} while length of waveform {n}.")
        return ke.fade(x, self.fade_in_len, self.fade_out_len, self.fade_shape.value)


class Dither(_SampleWise):
    """Requantises the waveform to 16 bits with dither noise (sox's ``dither``).

    TPDF adds a triangular ramp over the signal (deterministic); RPDF adds one sample of the
    signal, and GPDF the sum of seven, picked at random positions (as MindSpore does; the draws come
    from the sample's keyed generator, so a pipeline gives the same output with any worker count).

    Args:
        density_function (DensityFunction, optional): Default: DensityFunction.TPDF.
        noise_shaping (bool, optional): feed each sample's quantisation error into the next.
            Default: False.

    Examples:
        >>> import numpy as np
        >>> Dither()(np.array([[1.0, 2.0, 3.0]])).round(6).tolist()
        [[0.999939, 1.999908, 2.999847]]
    """

    random = True

    def __init__(self, density_function=DensityFunction.TPDF, noise_shaping=False):
        self.density_function = ck.check_enum(density_function, DensityFunction, "density_function")
        self.noise_shaping = ck.check_bool(noise_shaping, "noise_shaping")

    def _apply(self, x: np.ndarray) -> np.ndarray:
        if self.density_function == DensityFunction.TPDF:
            offset: np.ndarray | float = ke.bartlett(x.shape[-1])
        else:
            flat = x.reshape(-1)
            picks = 1 if self.density_function == DensityFunction.RPDF else 7
            offset = float(flat[sample_rng().integers(0, flat.size, picks)].sum())
        return ke.dither(x, offset, self.noise_shaping)


class MuLawEncoding(_SampleWise):
    """Mu-law companding of a waveform in [-1, 1] to int32 codes in [0, quantization_channels - 1].

    Args:
        quantization_channels (int, optional): number of codes, in [1, 2147483647]. Default: 256.

    Examples:
        >>> import numpy as np
        >>> MuLawEncoding()(np.array([[-1.0, 0.0, 0.5]])).tolist()
        [[0, 128, 239]]
    """

    def __init__(self, quantization_channels=256):
        self.quantization_channels = ck.check_int(quantization_channels, "quantization_channels", 1)

    def _apply(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):  # 1 channel: mu = 0, MindSpore's INT_MIN
            return ke.mu_law_encode(x, self.quantization_channels)


class MuLawDecoding(_SampleWise):
    """The inverse of MuLawEncoding: codes in [0, quantization_channels - 1] to a waveform in [-1, 1]
    (float64 for float64 input, float32 otherwise).

    Args:
        quantization_channels (int, optional): number of codes, in [2, 2147483647] (1 is refused on
            call). Default: 256.

    Examples:
        >>> import numpy as np
        >>> MuLawDecoding()(np.array([[0, 128, 255]])).astype(float).round(4).tolist()
        [[-1.0, 0.0001, 1.0]]
    """

    def __init__(self, quantization_channels=256):
        self.quantization_channels = ck.check_int(quantization_channels, "quantization_channels", 1)

    def _apply(self, x: np.ndarray) -> np.ndarray:
        if self.quantization_channels == 1:
            raise RuntimeError("Decoding: invalid parameter, 'mu' can not be zero.")
        return ke.mu_law_decode(x, self.quantization_channels, x.dtype)
