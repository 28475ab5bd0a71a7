"""The STFT- and mel-based, masking and elementwise transforms of headrace.dataset.audio and its
filter-bank functions: outputs against MindSpore 2.10 on fixture clips (one oracle process for the
module), refused inputs and argument checks worded as MindSpore words them, and the random ops on
the keyed generator inside pipelines."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace.dataset as ds
import headrace.dataset.audio as audio
from headrace._audio.filters import native
from tests.audio.oracle_cases import RUN_CASES, assert_refused_as_mindspore, each_case, needs_oracle, peak_error
from tests.helpers import assert_resume_equivalence
from tests.oracles.oracle import run_ms
from tests.oracles.oracle_codec import OracleException


def clips():
    rng = np.random.default_rng(5)
    t = np.arange(3200) / 16000
    s = 0.6 * np.sin(2 * np.pi * (300 + 2500 * t) * t) + 0.05 * rng.standard_normal(3200)
    two = np.stack([s, 0.7 * np.roll(s, 101)])
    spec = np.abs(rng.standard_normal((2, 201, 12))) ** 2 + 1e-3
    cplx = rng.standard_normal((2, 201, 9, 2))
    return {"f64": two, "f32": two.astype(np.float32), "one": s[:900].copy(), "three": two.reshape(2, 2, 1600).copy(),
            "three32": two.reshape(2, 2, 1600).astype(np.float32), "one32": s[:900].astype(np.float32),
            "int": (two * 1000).astype(np.int32), "f16": two[:, :500].astype(np.float16),
            "spec": spec, "spec32": spec.astype(np.float32), "db": 10 * np.log10(spec),
            "feat": rng.standard_normal((2, 40, 13)), "cplx": cplx, "cplx32": cplx.astype(np.float32),
            "small": rng.standard_normal((3, 5, 2)).astype(np.float32), "short": s[:64].astype(np.float32),
            "mel": np.abs(rng.standard_normal((1, 16, 4))).astype(np.float32)}


# MindSpore 2.10's MelSpectrogram, MFCC and LFCC return uninitialised memory for float64 input (NaN
# and 1e300 values, varying run to run): they are compared on float32 and int input only.
# Its TimeStretch and PhaseVocoder scale float64 output by a constant (12.6079...): compared on float32.
# Ops that accumulate phase in float32 reach hundreds of radians, where a float32 step is 6e-5 and moves
# the output by ~1e-5 of its peak: TimeStretch, PhaseVocoder and PitchShift (whose STFT is then summed
# term by term as MindSpore sums it) follow MindSpore's arithmetic with the C extension; the NumPy
# fallback differs by up to ~1e-3 of the peak: PHASE_TOL below.
W, B, N, M = "audio.WindowType", "audio.BorderType", "audio.NormType", "audio.MelType"

CASES = [
    ("Spectrogram()", ["f64", "f32", "one", "three", "int", "f16"]),
    ("Spectrogram(n_fft=256, hop_length=100, power=1.0)", ["f64", "f32"]),
    ("Spectrogram(n_fft=64, win_length=40, pad=7, window=%s.HAMMING, normalized=True)" % W, ["f64", "f32"]),
    ("Spectrogram(n_fft=64, window=%s.BLACKMAN, center=False)" % W, ["f64", "three"]),
    ("Spectrogram(n_fft=64, window=%s.BARTLETT, pad_mode=%s.CONSTANT)" % (W, B), ["f64"]),
    ("Spectrogram(n_fft=64, window=%s.KAISER, pad_mode=%s.EDGE, power=0.7)" % (W, B), ["f64", "f32"]),
    ("Spectrogram(n_fft=50, pad_mode=%s.SYMMETRIC, onesided=False)" % B, ["f64"]),
    ("Spectrogram(n_fft=32, power=0.0)", ["f64", "f32"]),
    ("Spectrogram(n_fft=100)", ["short"]),
    ("MelSpectrogram()", ["f32", "one32", "three32", "int"]),
    ("MelSpectrogram(8000, 256, 200, 80, 50.0, 3500.0, 3, 40, %s.HAMMING, 1.0, True)" % W, ["f32"]),
    ("MelSpectrogram(n_fft=128, n_mels=30, norm=%s.SLANEY, mel_scale=%s.SLANEY)" % (N, M), ["f32"]),
    ("MelSpectrogram(n_fft=128, n_mels=20, center=False, onesided=True, pad_mode=%s.CONSTANT)" % B, ["f32"]),
    ("AmplitudeToDB()", ["spec", "spec32", "three", "int", "f16"]),
    ("AmplitudeToDB(audio.ScaleType.MAGNITUDE, 2.0, 1e-5, 20.0)", ["spec", "spec32", "f64"]),
    ("AmplitudeToDB(top_db=5.0)", ["spec", "three"]),
    ("DBToAmplitude(0.5, 0.5)", ["db", "f32", "int"]),
    ("DBToAmplitude(2, 1)", ["db"]),
    ("TimeMasking(time_mask_param=4, mask_start=3, mask_value=2.5)", ["spec", "spec32", "int", "three"]),
    ("TimeMasking(time_mask_param=0, mask_start=3)", ["spec"]),
    ("FrequencyMasking(freq_mask_param=30, mask_start=100, mask_value=1.0)", ["spec", "spec32"]),
    ("FrequencyMasking(freq_mask_param=1, mask_start=0)", ["three"]),
    ("MaskAlongAxis(2, 5, -3.0, 2)", ["spec", "spec32", "int", "f16"]),
    ("MaskAlongAxis(0, 201, 7, 1)", ["spec"]),
    ("Angle()", ["cplx", "cplx32", "small"]),
    ("ComplexNorm()", ["cplx", "cplx32"]),
    ("ComplexNorm(3.0)", ["cplx", "small"]),
    ("ComplexNorm(0)", ["small"]),
    ("Magphase()", ["cplx", "cplx32"]),
    ("Magphase(2.5)", ["small"]),
    ("ComputeDeltas()", ["spec", "spec32", "feat", "int"]),
    ("ComputeDeltas(3, %s.REFLECT)" % B, ["feat"]),
    ("ComputeDeltas(8, %s.CONSTANT)" % B, ["feat"]),
    ("ComputeDeltas(7, %s.SYMMETRIC)" % B, ["feat", "three"]),
    ("SpectralCentroid(16000)", ["f64", "f32", "one", "int", "f16"]),
    ("SpectralCentroid(8000, 128, 100, 40, 3, %s.HAMMING)" % W, ["f64", "three"]),
    ("MelScale()", ["spec", "spec32"]),
    ("MelScale(20, 8000, 100.0, 3000.0, 201, %s.SLANEY, %s.SLANEY)" % (N, M), ["spec"]),
    ("MelScale(10, n_stft=5)", ["small"]),
    ("MFCC()", ["f32", "three32", "int", "f16"]),
    ("MFCC(16000, 13, log_mels=True, melkwargs={'n_fft': 256, 'win_length': 256, 'hop_length': 80, 'f_min': 0.0, "
     "'f_max': 8000.0, 'pad': 0, 'n_mels': 40, 'window': %s.HANN, 'power': 2.0, 'normalized': False, "
     "'center': True, 'pad_mode': %s.REFLECT, 'onesided': True, 'norm': %s.NONE, 'mel_scale': %s.HTK})" % (W, B, N, M), ["f32"]),
    ("MFCC(8000, 20, norm=audio.NormMode.NONE, melkwargs={'n_fft': 200, 'win_length': 160, 'hop_length': 50, "
     "'f_min': 20.0, 'f_max': 3000.0, 'pad': 2, 'n_mels': 30, 'window': %s.HAMMING, 'power': 1.0, 'normalized': "
     "True, 'center': True, 'pad_mode': %s.CONSTANT, 'onesided': True, 'norm': %s.SLANEY, 'mel_scale': %s.SLANEY})"
     % (W, B, N, M), ["f32"]),
    ("LFCC()", ["f32", "three32", "int", "f16"]),
    ("LFCC(16000, 64, 20, 50.0, 6000.0, log_lf=True, speckwargs={'n_fft': 256, 'win_length': 200, "
     "'hop_length': 64, 'pad': 0, 'window': %s.HAMMING, 'power': 1.0, 'normalized': True, 'center': True, "
     "'pad_mode': %s.REFLECT, 'onesided': True})" % (W, B), ["f32"]),
    ("LFCC(8000, 40, 13, norm=audio.NormMode.NONE)", ["f32"]),
    ("SlidingWindowCmn()", ["feat", "spec32", "f16"]),
    ("SlidingWindowCmn(5, 3)", ["feat", "int"]),
    ("SlidingWindowCmn(6, 2, True)", ["feat"]),
    ("SlidingWindowCmn(4, 2, False, True)", ["feat"]),
    ("SlidingWindowCmn(7, 1, True, True)", ["feat", "three"]),
    ("InverseSpectrogram(n_fft=400)", ["cplx", "cplx32"]),
    ("InverseSpectrogram(length=1500, n_fft=400, hop_length=160, window=%s.HAMMING, normalized=True)" % W,
     ["cplx"]),
    ("InverseSpectrogram(n_fft=400, hop_length=100, center=False, window=%s.HAMMING)" % W, ["cplx32"]),
    ("GriffinLim(n_fft=400, n_iter=4, rand_init=False)", ["spec", "spec32"]),
    ("GriffinLim(n_fft=400, n_iter=3, win_length=300, hop_length=120, window_type=%s.HAMMING, power=1.0, "
     "momentum=0.5, rand_init=False)" % W, ["spec"]),
    ("GriffinLim(n_fft=400, n_iter=3, win_length=300, rand_init=False)", ["spec32"]),
    ("GriffinLim(n_fft=400, n_iter=3, length=2400, rand_init=False)", ["spec", "spec32"]),
    ("GriffinLim(n_fft=400, n_iter=2, length=2200, rand_init=False)", ["spec"]),
    ("TimeStretch(fixed_rate=1.3)", ["cplx32"]),
    ("TimeStretch(hop_length=100, fixed_rate=0.7)", ["cplx32"]),
    ("TimeStretch()", ["cplx32"]),
    ("PhaseVocoder(1.5, np.linspace(0, np.pi * 200, 201, dtype=np.float32)[:, None])", ["cplx32"]),
    ("PhaseVocoder(0.8, np.linspace(0, 1.0, 201, dtype=np.float32)[:, None])", ["cplx32"]),
    ("PitchShift(16000, 3)", ["f64", "f32"]),
    ("PitchShift(16000, -4, 10, 256, 200, 50, %s.HAMMING)" % W, ["f64", "three", "three32"]),
    ("PitchShift(8000, 5, 12, 128, 100, 40, %s.BLACKMAN)" % W, ["f32"]),
    ("Resample(16000, 8000)", ["f64", "f32", "one", "three", "int", "f16"]),
    ("Resample(16000, 44100)", ["f64", "f32"]),
    ("Resample(48000, 16000, audio.ResampleMethod.KAISER_WINDOW, 8, 0.9)", ["f64", "f32"]),
    ("Resample(16000, 22050, audio.ResampleMethod.KAISER_WINDOW, 4, 0.8, 8.0)", ["f64"]),
    ("Resample(10, 10)", ["f32"]),
    ("Resample(2.5, 1.5)", ["f64"]),
]

# Inputs refused on call: (expression, input).
BAD_INPUTS = [
    ("Spectrogram(n_fft=4)", "np.array(1.0, np.float32)"),
    ("Spectrogram(n_fft=4)", "np.array(['a', 'b'])"),
    ("Spectrogram(n_fft=16, center=False)", "np.ones(5, np.float32)"),
    ("MelSpectrogram(n_fft=16, n_mels=4)", "np.ones(8, np.float32)"),
    ("AmplitudeToDB()", "np.ones(5, np.float32)"),
    ("AmplitudeToDB()", "np.array([['a']])"),
    ("TimeMasking(time_mask_param=2)", "np.ones(5, np.float32)"),
    ("TimeMasking(time_mask_param=6)", "np.ones((4, 5), np.float32)"),
    ("TimeMasking(True, 6)", "np.ones((4, 5), np.float32)"),
    ("TimeMasking(False, 2, 5)", "np.ones((4, 5), np.float32)"),
    ("TimeMasking(False, 2, 4)", "np.ones((4, 5), np.float32)"),
    ("FrequencyMasking(False, 5, 0)", "np.ones((4, 5), np.float32)"),
    ("FrequencyMasking(False, 2, 3)", "np.ones((4, 5), np.float32)"),
    ("MaskAlongAxis(0, 6, 0.0, 2)", "np.ones((4, 5), np.float32)"),
    ("MaskAlongAxisIID(5, 0.0, 1)", "np.ones((4, 5), np.float32)"),
    ("MaskAlongAxisIID(6, 0.0, 2)", "np.ones((4, 5), np.float32)"),
    ("Angle()", "np.ones((3, 3), np.float32)"),
    ("ComplexNorm()", "np.ones((3, 3), np.float32)"),
    ("Magphase()", "np.ones((3, 3), np.float32)"),
    ("ComputeDeltas()", "np.ones(3, np.float32)"),
    ("DBToAmplitude(1.0, 1.0)", "np.array(['a'])"),
    ("PhaseVocoder(1.1, np.zeros((201, 1)))", "np.ones((201, 3, 2), np.float32)"),
    ("SlidingWindowCmn()", "np.ones(3, np.float32)"),
    ("PitchShift(16000, 2)", "np.array(1.0, np.float32)"),
    ("TimeStretch()", "np.ones((201, 3), np.float32)"),
    ("PhaseVocoder(1.1, np.zeros((201, 1)))", "np.ones((201, 3), np.float32)"),
    ("InverseSpectrogram()", "np.ones((201, 3), np.float32)"),
    ("GriffinLim()", "np.ones((200, 3), np.float32)"),
    ("LFCC()", "np.array(1.0, np.float32)"),
    ("SpectralCentroid(16000)", "np.array(1.0, np.float32)"),
    ("Resample(16000, 8000)", "np.array(1.0, np.float32)"),
    ("DBToAmplitude(1.0, 1.0)", "np.array(1.0, np.float32)"),
    ("Angle()", "np.array(1.0, np.float32)"),
    ("MelScale()", "np.ones((200, 3), np.float32)"),
    ("Resample(16000, 8000)", "np.array(['a'])"),
    ("SpectralCentroid(16000)", "np.array(['a'])"),
]

_ORACLE = RUN_CASES + """
RESULT = {"cases": [_run(e, C[n]) for e, names in INPUTS["cases"] for n in names],
          "bad": [_run(e, eval(x)) for e, x in INPUTS["bad"]],
          "fb": [audio.melscale_fbanks(201, 0.0, 8000.0, 40, 16000),
                 audio.melscale_fbanks(100, 30.0, 4000.5, 17, 8000, audio.NormType.SLANEY, audio.MelType.SLANEY),
                 audio.melscale_fbanks(33, 0, 2000, 5, 44100, audio.NormType.NONE, audio.MelType.SLANEY),
                 audio.linear_fbanks(201, 0.0, 8000.0, 40, 16000), audio.linear_fbanks(65, 100, 7000.5, 9, 22050),
                 audio.create_dct(40, 128, audio.NormMode.ORTHO), audio.create_dct(13, 40, audio.NormMode.NONE),
                 audio.create_dct(8, 5)]}
"""

PHASE_TOL = 1e-3


def _accumulates_phase(expr, out):
    return native is None and out.dtype == np.float32 and expr.startswith(("TimeStretch", "PhaseVocoder", "PitchShift"))


@pytest.fixture(scope="module")
def oracle():
    return run_ms(_ORACLE, {"clips": clips(), "cases": [[e, n] for e, n in CASES], "bad": BAD_INPUTS})


def _close(got, ref, where, tol):
    assert got.shape == ref.shape and got.dtype == ref.dtype, (where, got.shape, ref.shape, got.dtype, ref.dtype)
    assert np.array_equal(np.isnan(got), np.isnan(ref)), where
    err = peak_error(got[~np.isnan(ref)], ref[~np.isnan(ref)])
    assert err <= tol, f"{where}: max error {err:.2e} of the peak"


@needs_oracle
def test_outputs_match_mindspore(oracle):
    failures = []
    for expr, where, x, ref in each_case(CASES, clips(), oracle["cases"]):
        try:
            got = eval("audio." + expr)(x)
            assert not isinstance(ref, OracleException), f"{where}: MindSpore raised {ref}"
            for g, r in zip(got if isinstance(got, tuple) else [got], ref if isinstance(ref, tuple) else [ref]):
                # the phase of bins with (almost) no energy is rounding noise: compared via the magnitude
                _close(g, r, where, PHASE_TOL if _accumulates_phase(expr, g) else 1e-5)
        except (AssertionError, RuntimeError, ValueError) as e:
            failures.append(f"{where}: {e}"[:400])
    assert not failures, "\n".join(failures)


@needs_oracle
def test_refused_inputs_match_mindspore(oracle):
    assert_refused_as_mindspore(BAD_INPUTS, oracle["bad"])


@needs_oracle
def test_filter_banks_match_mindspore(oracle):
    got = [audio.melscale_fbanks(201, 0.0, 8000.0, 40, 16000),
           audio.melscale_fbanks(100, 30.0, 4000.5, 17, 8000, audio.NormType.SLANEY, audio.MelType.SLANEY),
           audio.melscale_fbanks(33, 0, 2000, 5, 44100, audio.NormType.NONE, audio.MelType.SLANEY),
           audio.linear_fbanks(201, 0.0, 8000.0, 40, 16000), audio.linear_fbanks(65, 100, 7000.5, 9, 22050),
           audio.create_dct(40, 128, audio.NormMode.ORTHO), audio.create_dct(13, 40, audio.NormMode.NONE),
           audio.create_dct(8, 5)]
    for i, (g, r) in enumerate(zip(got, oracle["fb"])):
        _close(g, r, f"bank {i}", 1e-5)  # MindSpore builds them in float32


def test_priority_values_pinned():
    # small literal cases (checked against MindSpore 2.10): a periodic Hann frame of ones, the dB floor
    x = np.ones(8, np.float32)
    np.testing.assert_allclose(audio.Spectrogram(n_fft=4, center=False, hop_length=4)(x), [[4.0, 4.0], [1.0, 1.0],
                                                                                           [0.0, 0.0]], atol=1e-6)
    db = audio.AmplitudeToDB(top_db=1.0)(np.array([[[[1., 2.]], [[40., 80.]]], [[[1., 2.]], [[400., 800.]]]],
                                                  np.float32))
    np.testing.assert_allclose(db.ravel(), [18.0309, 18.0309, 18.0309, 19.0309, 28.0309, 28.0309, 28.0309, 29.0309],
                               atol=1e-4)
    spec = np.arange(20, dtype=np.float32).reshape(4, 5) + 1
    out = audio.TimeMasking(time_mask_param=2, mask_start=1, mask_value=9.0)(spec)
    assert out[:, 1:3].tolist() == [[9.0, 9.0]] * 4 and np.array_equal(out[:, [0, 3, 4]], spec[:, [0, 3, 4]])
    out = audio.FrequencyMasking(freq_mask_param=2, mask_start=1, mask_value=9.0)(spec.astype(np.int32))
    assert out.dtype == np.float32 and out[1:3].tolist() == [[9.0] * 5] * 2


@pytest.mark.parametrize("expr, error, message", [
    ("Spectrogram(n_fft=0)", ValueError, "Input n_fft is not within the required interval of [1, 2147483647]."),
    ("Spectrogram(n_fft=False)", TypeError,
     "Argument n_fft with value False is not of type (<class 'int'>,), but got <class 'bool'>."),
    ("Spectrogram(win_length=500)", ValueError,
     "Input win_length should be no more than n_fft, but got win_length: 500 and n_fft: 400."),
    ("Spectrogram(power=-1.0)", ValueError, "Input power is not within the required interval of [0, 16777216]."),
    ("Spectrogram(center='s')", TypeError,
     "Argument center with value s is not of type [<class 'bool'>], but got <class 'str'>."),
    ("MelSpectrogram(f_min=1)", TypeError,
     "Argument f_min with value 1 is not of type [<class 'float'>], but got <class 'int'>."),
    ("MelSpectrogram(f_min=9000.0)", ValueError, "MelSpectrogram: sample_rate // 2 should be greater than f_min "
                                                 "when f_max is set to None, but got f_min: 9000.0."),
    ("MelSpectrogram(f_min=2.0, f_max=1.0)", ValueError,
     "f_max should be greater than or equal to f_min, but got f_min: 2.0 and f_max: 1.0."),
    ("MelSpectrogram(power=0.0)", ValueError, "Input power is not within the required interval of (0, 16777216]."),
    ("MelSpectrogram(mel_scale='htk')", TypeError,
     "Argument mel_type with value htk is not of type [<enum 'MelType'>], but got <class 'str'>."),
    ("AmplitudeToDB(top_db=0)", ValueError, "Input top_db is not within the required interval of (0, 16777216]."),
    ("AmplitudeToDB(stype='power')", TypeError,
     "Argument stype with value power is not of type [<enum 'ScaleType'>], but got <class 'str'>."),
    ("TimeMasking('True', 2, 10)", TypeError,
     "Argument iid_masks with value True is not of type [<class 'bool'>], but got <class 'str'>."),
    ("TimeMasking(True, 2, -10)", ValueError,
     "Input mask_start is not within the required interval of [0, 16777216]."),
    ("FrequencyMasking(True, -2, 10)", ValueError,
     "Input mask_param is not within the required interval of [0, 16777216]."),
    ("FrequencyMasking(mask_value=-1.0)", ValueError,
     "Input mask_value is not within the required interval of [0, 16777216]."),
    ("MaskAlongAxis(0, 0, 1.0, 1)", ValueError,
     "Input mask_width is not within the required interval of [1, 2147483647]."),
    ("MaskAlongAxisIID(1, 1.0, 3)", ValueError, "Input axis is not within the required interval of [1, 2]."),
    ("MFCC(dct_type=3)", ValueError, "Input dct_type must be 2, but got : 3."),
    ("MFCC(n_mfcc=40, melkwargs={'n_mels': 5})", ValueError,
     "Input n_mels should be greater than or equal to n_mfcc, but got n_mfcc: 40 and n_mels: 5."),
    ("LFCC(n_filter=1.1)", TypeError,
     "Argument n_filter with value 1.1 is not of type [<class 'int'>], but got <class 'float'>."),
    ("MelScale(f_min=10.0, f_max=5.0)", ValueError, "MelScale: f_max should be greater than f_min."),
    ("PitchShift(16000, 2, 's')", TypeError,
     "Argument bins_per_octave  with value s is not of type [<class 'int'>], but got <class 'str'>."),
    ("PitchShift(16000, 2, 0)", ValueError,
     "Input bins_per_octave is not within the required interval of [-2147483648, 0) and (0, 2147483647]."),
    ("Resample(rolloff=1)", TypeError,
     "Argument rolloff with value 1 is not of type [<class 'float'>], but got <class 'int'>."),
    ("ComputeDeltas(2)", ValueError, "Input win_length is not within the required interval of [3, 2147483647]."),
    ("ComplexNorm(-1)", ValueError, "Input power is not within the required interval of [0, 16777216]."),
    ("TimeStretch(fixed_rate=0)", ValueError,
     "Input fixed_rate is not within the required interval of (0, 16777216]."),
    ("PhaseVocoder(1.0, [1.0])", TypeError,
     "Argument phase_advance with value [1.0] is not of type [<class 'numpy.ndarray'>], but got <class 'list'>."),
    ("utils.create_dct(0, 3)", ValueError, "n_mfcc must be greater than 0, but got 0."),
    ("utils.melscale_fbanks(10, 5.0, 1.0, 4, 16000)", ValueError,
     "Input f_min should be no more than f_max, but got f_min: 5.0 and f_max: 1.0."),
    ("utils.linear_fbanks(10, 0, 100, 0, 16000)", ValueError,
     "Input n_filter is not within the required interval of [1, 2147483647]."),
])
def test_argument_checks(expr, error, message):
    with pytest.raises(error) as info:
        eval("audio." + expr)
    assert str(info.value) == message


def test_refused_at_run_time():
    # MindSpore refuses momentum >= 1 when a pipeline is built (a RuntimeError): here when the op is
    with pytest.raises(RuntimeError, match=r"^GriffinLim: momentum equal to or greater than 1 can be unstable, "
                                           r"but got: 1\.000000$"):
        audio.GriffinLim(n_fft=8, momentum=1)
    with pytest.raises(RuntimeError, match=r"^GriffinLim: n_fft must be less than length\.$"):
        audio.GriffinLim(n_fft=400, length=400)
    with pytest.raises(RuntimeError, match=r"^PhaseVocoder: invalid parameter, 'phase_advance' should be in shape "
                                           r"of <freq, 1>\.$"):
        audio.PhaseVocoder(1.2, np.zeros(4, np.float32))(np.ones((4, 3, 2), np.float32))
    data = ds.NumpySlicesDataset(np.ones((1, 200, 3), np.float32), ["a"], shuffle=False).map(
        audio.GriffinLim(), input_columns="a")
    with pytest.raises(RuntimeError, match=r"map operation: \[GriffinLim\] failed\. GriffinLim: the frequency of "
                                           r"the input should equal to n_fft / 2 \+ 1"):
        list(data.create_tuple_iterator(num_epochs=1))


def _pipeline(op, mode, rows):
    data = ds.NumpySlicesDataset(rows, ["audio"], shuffle=False).map(op, input_columns="audio", **mode)
    return [r[0] for r in data.create_tuple_iterator(num_epochs=1, output_numpy=True)]


_MODES = [dict(num_parallel_workers=2), dict(num_parallel_workers=2, python_multiprocessing=True)]


@pytest.mark.parametrize("op", [audio.TimeMasking(True, 6, mask_value=1e6),
                                audio.FrequencyMasking(True, 9, mask_value=1e6),
                                audio.MaskAlongAxisIID(5, 1e6, 2)], ids=["time", "freq", "iid"])
def test_random_masks_are_keyed(op):
    ds.config.set_seed(3)
    rows = np.abs(np.random.default_rng(1).standard_normal((6, 2, 12, 10))).astype(np.float32)
    serial = _pipeline(op, dict(num_parallel_workers=1), rows)
    for mode in _MODES:
        for a, b in zip(serial, _pipeline(op, mode, rows)):
            np.testing.assert_array_equal(a, b)
    masked = [int((out == 1e6).sum()) for out in serial]
    assert any(masked), "no mask was drawn in 12 matrices"
    for r, out in zip(rows, serial):
        keep = out != 1e6
        np.testing.assert_array_equal(out[keep], r[keep])
        for m, o in zip(r, out):   # each (freq, time) matrix: one band of whole rows or columns
            axis = 0 if isinstance(op, audio.FrequencyMasking) else 1
            band = np.all(o == 1e6, axis=1 - axis)
            assert band.sum() == np.any(o == 1e6, axis=1 - axis).sum()
            idx = np.flatnonzero(band)
            assert idx.size == 0 or idx[-1] - idx[0] + 1 == idx.size


def test_priority_ops_in_a_pipeline():
    rows = clips()["f32"][:, :1600].reshape(4, 800)
    chain = [audio.MelSpectrogram(n_fft=128, n_mels=20), audio.AmplitudeToDB(),
             audio.FrequencyMasking(freq_mask_param=3, mask_start=2)]
    want = []
    for r in rows:
        for op in chain:
            r = op(r)
        want.append(r)
    for mode in [dict(num_parallel_workers=1)] + _MODES:
        data = ds.NumpySlicesDataset(rows, ["audio"], shuffle=False).map(chain, input_columns="audio", **mode)
        got = [r[0] for r in data.create_tuple_iterator(num_epochs=1, output_numpy=True)]
        for a, b in zip(want, got):
            np.testing.assert_array_equal(a, b)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False, width=32), min_size=2, max_size=40).filter(
    lambda v: len(v) % 2 == 0), st.floats(0.0, 4.0))
def test_magphase_agrees_with_complex_norm_and_angle(values, power):
    x = np.array(values, np.float64).reshape(-1, 2)
    mag, phase = audio.Magphase(power)(x)
    np.testing.assert_allclose(mag, audio.ComplexNorm(power)(x), rtol=1e-12)
    np.testing.assert_array_equal(phase, audio.Angle()(x))
    np.testing.assert_allclose(np.hypot(x[:, 0], x[:, 1]) ** power, mag, rtol=1e-9, atol=1e-300)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([16, 32, 64]), st.sampled_from(list(audio.WindowType)))
def test_amplitude_db_round_trip(seed, n, window):
    x = np.random.default_rng(seed).uniform(-1, 1, 4 * n)
    p = audio.Spectrogram(n_fft=n, window=window)(x) + 1e-6
    db = audio.AmplitudeToDB(top_db=200.0)(p)
    np.testing.assert_allclose(audio.DBToAmplitude(1.0, 1.0)(db), p, rtol=1e-9)


@pytest.mark.parametrize("op, shape", [(audio.GriffinLim(n_fft=16, n_iter=3), (4, 9, 6)),
                                       (audio.InverseMelScale(9, n_mels=4, sample_rate=800, max_iter=60), (4, 4, 6))],
                         ids=["griffinlim", "inverse_mel"])
def test_random_starts_are_keyed(op, shape):
    ds.config.set_seed(5)
    row = np.abs(np.random.default_rng(2).standard_normal(shape[1:])).astype(np.float32) + 0.1
    rows = np.stack([row] * shape[0])   # the same input in every row: only the random start differs
    serial = _pipeline(op, dict(num_parallel_workers=1), rows)
    for mode in _MODES:
        for a, b in zip(serial, _pipeline(op, mode, rows)):
            np.testing.assert_array_equal(a, b)
    assert serial[0].dtype == np.float32
    assert not np.array_equal(serial[0], serial[1])


def test_inverse_mel_scale_inverts_mel_scale():
    rng = np.random.default_rng(4)
    fwd = audio.MelScale(n_mels=8, sample_rate=1600, n_stft=17)
    spec = np.abs(rng.standard_normal((17, 5))).astype(np.float32)
    mel = fwd(spec)
    back = audio.InverseMelScale(17, n_mels=8, sample_rate=1600, max_iter=3000, tolerance_loss=1e-9,
                                 tolerance_change=1e-12)(mel)
    assert back.shape == (17, 5) and back.min() >= 0
    np.testing.assert_allclose(fwd(back), mel, atol=0.05 * float(mel.max()))


def test_griffin_lim_recovers_a_tone():
    t = np.arange(4000) / 8000
    x = np.sin(2 * np.pi * 440 * t).astype(np.float32)
    spec = audio.Spectrogram(n_fft=256)(x)

    # the magnitude is what Griffin-Lim restores: away from the ends (reflect-padded frames), within 10%
    # of the original spectrogram's energy, and closer after 30 iterations than after one
    def error(n_iter):
        y = audio.GriffinLim(n_fft=256, n_iter=n_iter, rand_init=False, length=4000)(spec)
        assert y.shape == (4000,) and y.dtype == np.float32
        back = audio.Spectrogram(n_fft=256)(y)[:, 2:-2]
        return float(np.abs(back - spec[:, 2:-2]).sum() / spec[:, 2:-2].sum())
    assert error(30) < min(0.1, error(1))


def test_random_masks_resume_from_a_state():
    # a pipeline restored from get_state() draws the same masks for the rest of the run
    ds.config.set_seed(9)
    rows = np.abs(np.random.default_rng(6).standard_normal((5, 1, 8, 10))).astype(np.float32)
    data = ds.NumpySlicesDataset(rows, ["audio"], shuffle=True).map(
        [audio.TimeMasking(True, 4), audio.FrequencyMasking(True, 3)], input_columns="audio",
        num_parallel_workers=2)
    assert_resume_equivalence(data, num_epochs=2)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 40), st.integers(0, 45), st.sampled_from(["reflect", "constant"]))
def test_the_stft_padding_and_frames_are_numpys(seed, n, half, mode):
    from headrace._audio import spectral as sk  # noqa: PLC0415

    x = np.random.default_rng(seed).standard_normal((2, n)).astype(np.float32)
    if mode == "reflect" and half >= n:
        half = n - 1
    want = np.pad(x, [(0, 0), (half, half)], mode=mode)  # type: ignore[call-overload]
    got = sk._pad_last(x, half, mode)
    np.testing.assert_array_equal(got, want)
    for n_fft, hop in ((1, 1), (min(4, want.shape[-1]), 3), (want.shape[-1], 2)):
        frames = np.lib.stride_tricks.sliding_window_view(want, n_fft, axis=-1)[..., ::hop, :]
        np.testing.assert_array_equal(sk._frames(got, n_fft, hop), frames)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([np.complex64, np.complex128]), st.booleans())
def test_the_power_spectrum_rounds_as_re_re_plus_im_im(seed, dtype, swapped):
    from headrace._audio import spectral as sk  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    z = (rng.standard_normal((3, 7, 5)) + 1j * rng.standard_normal((3, 7, 5))).astype(dtype) * 1e3
    if swapped:
        z = np.swapaxes(z, -1, -2)
    got = sk.power_spectrum(z, 2.0)
    assert got.dtype == z.real.dtype and got.shape == z.shape
    np.testing.assert_array_equal(got, z.real * z.real + z.imag * z.imag)


def test_the_import_is_light_and_an_stft_op_readies_scipy_for_the_worker_processes():
    """``import headrace.dataset.audio`` loads neither SciPy nor soundfile; making an STFT op imports
    scipy.fft, so that the fork server preloads it instead of each worker importing it at its first
    clip (0.13 s of each 2-process epoch of the speech workload)."""
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    program = (
        "import sys\n"
        "import headrace.dataset.audio as audio\n"
        "from headrace._engine.exec import forkserver\n"
        "print(sorted(m for m in ('scipy', 'scipy.fft', 'soundfile') if m in sys.modules))\n"
        "audio.MelSpectrogram(n_fft=16, n_mels=4)\n"
        "print('scipy.fft' in sys.modules, 'scipy.fft' in forkserver.preload_list())\n")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "True True"], out.stderr
