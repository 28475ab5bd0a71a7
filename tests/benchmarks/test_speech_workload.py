"""The speech workload (benchmarks/wspeech.py): its clips, their layout as Speech Commands read by
headrace's SpeechCommandsDataset, the batch check, and its runners on a tiny size (no timing
asserts; peers whose interpreter is not set up here are skipped)."""
import os

import numpy as np
import pytest

import headrace.dataset as ds
from benchmarks import __main__ as cli
from benchmarks import envs, wspeech

from . import test_runners as runners
from .test_runners import assert_ran

TINY = ["--speech-clips", "64", "--epochs", "1", "--warmup", "0", "--no-setup", "--timeout", "300", "-w", "speech"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("speech-data"))
    wspeech.generate(root, 64)
    return root


def test_clips_depend_only_on_their_index():
    a, b = wspeech.clip(5), wspeech.clip(5)
    assert a.dtype == np.dtype("<i2") and a.shape == (wspeech.RATE,)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, wspeech.clip(6))
    assert np.abs(a).max() > 1000  # a tone, not silence


def test_layout_is_read_by_speech_commands_dataset(data):
    rows = list(ds.SpeechCommandsDataset(wspeech.speech_dir(data, 64), shuffle=False)
                .create_dict_iterator(output_numpy=True))
    assert len(rows) == 64
    files = wspeech.files(data, 64)
    assert [str(r["label"]) for r in rows] == [w for _, w in files]
    first = rows[0]["waveform"]
    assert first.shape == (1, wspeech.RATE) and first.dtype == np.float32
    # the two readers differ only in the scale: MindSpore's 32767, torchaudio's 32768
    np.testing.assert_allclose(wspeech.read_clip(files[0][0]) * np.float32(32768 / 32767), first, rtol=1e-6)
    assert os.path.exists(os.path.join(wspeech.speech_dir(data, 64), ".complete"))


def test_check_batch():
    good = np.zeros((wspeech.BATCH, 1, wspeech.N_MELS, wspeech.FRAMES), np.float32)
    wspeech.check_batch(good)
    with pytest.raises(AssertionError):
        wspeech.check_batch(good[:, :, :, :100])
    with pytest.raises(AssertionError):
        wspeech.check_batch(good.astype(np.float64))
    bad = good.copy()
    bad[0, 0, 0, 0] = np.nan
    with pytest.raises(AssertionError, match="non-finite"):
        wspeech.check_batch(bad)


def run(data, tmp_path, *extra):
    return runners.run(data, tmp_path, *extra, tiny=TINY)


def test_planned_at_one_and_two_workers_for_three_systems(data, tmp_path):
    a = cli.parse_args(["--data", data, "--out", str(tmp_path), *TINY, "--list"])
    planned = sorted((cfg.system, w) for cfg, w in cli.plan(a))
    assert planned == [("headrace", 1), ("headrace", 2), ("headrace", 2), ("mindspore", 1), ("mindspore", 2),
                       ("torchaudio", 1), ("torchaudio", 2)]


def test_headrace_runner(data, tmp_path):
    rows = run(data, tmp_path, "-s", "headrace", "--workers", "1,2")
    assert_ran(rows)
    assert sorted((r["variant"], r["workers"]) for r in rows) == [
        ("SpeechCommandsDataset", 1), ("SpeechCommandsDataset", 2), ("SpeechCommandsDataset, processes", 2)]


@pytest.mark.slow
def test_mindspore_runner(data, tmp_path):
    runners.assert_peer_ran("mindspore", "mindspore.dataset.audio", data, tmp_path, tiny=TINY)


@pytest.mark.slow
def test_torchaudio_runner(data, tmp_path):
    runners.assert_peer_ran("torchaudio", "torchaudio", data, tmp_path, tiny=TINY)
    assert envs.interpreter("torchaudio").endswith(os.path.join("torchaudio-venv", "bin", "python"))
