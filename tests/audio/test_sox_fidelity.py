"""DetectPitchFrequency and sox's effects against MindSpore 2.10 on the 24 clips of
test_float32_fidelity, as float32 and as float64: the pitch of every frame exactly MindSpore's, in
each regime of the two frequency bounds (the first half of the lags above, at, just past and below
``lag_min``; no lag between the bounds), and the lag rule pinned on literal correlations; Flanger
(its LFO table MindSpore's to the last bit), Phaser and Overdrive far inside 1e-5 of the peak."""
from __future__ import annotations

import numpy as np
import pytest

import headrace.dataset.audio as audio
from headrace._audio.sox import best_lag, wave_table
from tests.audio.oracle_cases import RUN_CASES, needs_oracle, peak_error
from tests.audio.test_float32_fidelity import clips
from tests.oracles.oracle import run_ms

# (sample_rate, frame_time, win_length, freq_low, freq_high): lags = ceil(rate / freq_low),
# lag_min = ceil(rate / freq_high), and the first half [lag_min, lags // 2) of the lags searched
PITCH = ["DetectPitchFrequency(16000, 0.01, 4, 300, 400)",  # lags 54, lag_min 40: no first half
         "DetectPitchFrequency(16000, 0.01, 1, 300, 400)",
         "DetectPitchFrequency(16000, 0.005, 3, 400, 500)",  # lags 40, lag_min 32
         "DetectPitchFrequency(8000, 0.02, 2, 100, 150)",  # lags 80, lag_min 54
         "DetectPitchFrequency(16000, 0.01, 1, 200, 400)",  # half == lag_min
         "DetectPitchFrequency(16000, 0.01, 1, 196, 400)",  # half == lag_min + 1
         "DetectPitchFrequency(16000, 0.01, 5, 300, 302)",  # lag_min == lags - 1
         "DetectPitchFrequency(16000, 0.01, 1, 300, 290)",  # lag_min > lags
         "DetectPitchFrequency(16000)", "DetectPitchFrequency(16000, 0.01, 1, 85, 20000)"]

# sine and triangle LFOs, linear and quadratic reads, feedback of both signs, LFO periods of odd lengths
EFFECTS = ["Flanger(16000)", "Flanger(16000, 0, 0)", "Flanger(600, 30, 10, 95, 100, 10, 100)",
           "Flanger(16000, 5, 4, 30, 50, 2, 60, audio.Modulation.TRIANGULAR, audio.Interpolation.QUADRATIC)",
           "Flanger(44100, 1.5, 7, -60, 90, 7.3, 35, audio.Modulation.TRIANGULAR)",
           "Flanger(22050, 12, 10, 95, 100, 0.3, 100, audio.Modulation.SINUSOIDAL, audio.Interpolation.QUADRATIC)",
           "Flanger(8000, 30, 0.5, -95, 20, 9.9, 0, audio.Modulation.TRIANGULAR)",
           "Flanger(11025, 0.7, 3.3, 45, 71, 3.7, 50, audio.Modulation.TRIANGULAR, audio.Interpolation.QUADRATIC)",
           "Phaser(16000)", "Phaser(44100, 0.9, 0.5, 4.5, 0.7, 1.5, False)", "Overdrive()", "Overdrive(50, 80)"]

_ORACLE = RUN_CASES + """
RESULT = {k: [[[_run(e, c.astype(dt)) for c in C] for e in INPUTS[k]] for dt in (np.float32, np.float64)]
          for k in ("pitch", "effects")}
"""


@pytest.fixture(scope="module")
def oracle():
    return run_ms(_ORACLE, {"clips": clips(), "pitch": PITCH, "effects": EFFECTS})


@needs_oracle
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pitch_is_mindspores_on_24_clips(oracle, dtype):
    for expr, outs in zip(PITCH, oracle["pitch"][0 if dtype == np.float32 else 1]):
        op = eval("audio." + expr, {"audio": audio})
        assert len(outs) == 24
        for i, (x, ref) in enumerate(zip(clips(), outs)):
            got = op(x.astype(dtype))
            assert got.dtype == ref.dtype == np.float32 and got.shape == ref.shape, expr
            np.testing.assert_array_equal(got, ref, err_msg=f"{expr} on clip {i}")


@needs_oracle
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_effects_match_mindspore_on_24_clips(oracle, dtype):
    worst = {}
    for expr, outs in zip(EFFECTS, oracle["effects"][0 if dtype == np.float32 else 1]):
        op = eval("audio." + expr, {"audio": audio})
        for x, ref in zip(clips(), outs):
            got = op(x.astype(dtype))
            assert got.dtype == ref.dtype == dtype and got.shape == ref.shape, expr
            worst[expr] = max(worst.get(expr, 0.0), peak_error(got, ref))
    # a float32 output is a rounding or a few away (computed in float64 here, in float32 in part there)
    assert max(worst.values()) <= 2e-6, worst
    if dtype == np.float64:
        # the flanger's arithmetic is MindSpore's (with a float64 LFO table, 1.5e-5 away)
        assert max(v for e, v in worst.items() if e.startswith("Flanger")) <= 1e-14, worst


def test_lfo_tables_are_mindspores():
    # values MindSpore's flanger reads (recovered from its outputs), where a table computed in
    # float64 and rounded once holds the float32 neighbours 80.80390167236328 and 112.0479965209961
    sine = wave_table("sine", 8000, 80.0, 144.0, 1.5 * np.pi, False)
    triangle = wave_table("triangle", 8000, 80.0, 144.0, 1.5 * np.pi, False)
    assert sine.dtype == triangle.dtype == np.float64 and sine.shape == triangle.shape == (8000,)
    assert (sine[286], sine[463], triangle[2003]) == (80.80390930175781, 82.092529296875, 112.04800415039062)
    assert np.array_equal(sine, sine.astype(np.float32)) and np.array_equal(triangle, triangle.astype(np.float32))
    assert (sine.min(), sine.max(), triangle.min(), triangle.max()) == (80.0, 144.0, 80.0, 144.0)
    # the integer tables (the phaser's) round half away from zero: 2.5 -> 3 (points 4 and 0)
    assert wave_table("triangle", 8, 1.0, 4.0, 0.5 * np.pi, True).tolist() == [4, 3, 3, 2, 1, 2, 3, 3]


def _row(lags, values):
    row = np.full(lags, -0.5)
    for k, v in values.items():
        row[k] = v
    return row


@pytest.mark.parametrize("lags, lag_min, values, lag", [
    # the first half [2, 5) of 10 lags: its best wins when above 0.99 times the overall best
    (10, 2, {3: 0.5, 8: 0.505}, 4),
    (10, 2, {3: 0.5, 8: 0.51}, 9),
    (10, 2, {3: 0.5, 4: 0.5, 8: 0.505}, 4),  # the first of equal values
    (10, 2, {2: 0.5, 5: 0.505}, 3),  # index 5 is past the first half
    # no first half (lags // 2 <= lag_min): index lag_min alone stands for it
    (54, 40, {40: 0.5, 47: 0.505}, 41),
    (54, 40, {41: 0.5, 47: 0.505}, 48),  # index 41 is not compared
    (54, 40, {40: 0.4, 47: 0.505}, 48),
    (80, 40, {40: 0.5, 47: 0.505}, 41),  # lags // 2 == lag_min
    (54, 40, {40: -0.4991, 47: -0.499}, 48),  # all negative: nothing is above 0.99 times the best
    # no lag from lag_min on
    (54, 54, {53: 0.9}, 55),
    (54, 60, {}, 61),
])
def test_best_lag_rule(lags, lag_min, values, lag):
    row = _row(lags, values)
    assert best_lag(row[None, None], lag_min).tolist() == [[lag]]
    # rows are independent: the same row among others, in any leading shape
    rows = np.stack([_row(lags, {}), row, _row(lags, {lags - 1: 0.9})]).reshape(3, 1, lags)
    assert best_lag(rows, lag_min)[1].tolist() == [lag]
