"""benchmarks/audio_ops.py: it times every audio transform, prints one row per op with its goal,
and refuses bad options."""
from __future__ import annotations

import pytest

import headrace.dataset.audio as audio
from benchmarks import audio_ops


def test_every_transform_has_a_row():
    timed = {expr.split("(")[0] for expr, _ in audio_ops.OPS.values()}
    assert timed == set(audio.transforms.__all__)
    assert len(audio.transforms.__all__) == 51


def test_goals_are_issue_41s():
    # the goals the table gave each row before goal_of: a biquad 1 ms, three spectral ops, the loops
    goals = {name: audio_ops.goal_of(name) for name in audio_ops.OPS}
    biquads = ["AllpassBiquad", "BandBiquad", "BandpassBiquad", "BandrejectBiquad", "BassBiquad", "Biquad",
               "DeemphBiquad", "EqualizerBiquad", "HighpassBiquad", "LowpassBiquad", "RiaaBiquad", "TrebleBiquad"]
    assert {n: g for n, g in goals.items() if isinstance(g, float)} == {
        **dict.fromkeys(biquads, 1.0), "Spectrogram": 2.0, "MelSpectrogram": 3.0, "Resample": 6.0}
    assert [n for n, g in goals.items() if g == audio_ops.LOOP_GOAL] == [
        "Overdrive", "Phaser", "Flanger", "Vad", "Vad-quiet", "DetectPitchFrequency"]
    assert sum(g is None for g in goals.values()) == 31 and len(goals) == 52


def test_rows_name_the_op_its_time_and_its_goal(capsys):
    audio_ops.main(["--calls", "1", "--only", "LowpassBiquad,Gain,Vad-quiet"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["op", "ms", "x", "real", "time", "goal"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert set(rows) == {"LowpassBiquad", "Gain", "Vad-quiet"}
    assert float(rows["Gain"][1]) > 0 and len(rows["Gain"]) == 3  # (no goal)
    assert rows["LowpassBiquad"][3:6] == ["<=", "1", "ms"]
    assert rows["Vad-quiet"][3:5] == ["loop:", ">="]


@pytest.mark.parametrize("argv, message", [
    (["--calls", "0"], "--calls must be at least 1, got 0"),
    (["--only", "Nope"], "--only: unknown op(s) ['Nope']"),
])
def test_bad_options_are_refused(argv, message, capsys):
    with pytest.raises(SystemExit):
        audio_ops.main(argv)
    assert message in capsys.readouterr().err
