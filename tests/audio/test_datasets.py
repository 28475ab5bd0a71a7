"""The seven audio datasets against MindSpore 2.10 on fixture corpora written here (one oracle
process for the module): columns, dtypes, shapes, values, orders with shuffle=False, under a seed
and per shard; their argument checks; and their behaviour where headrace deliberately differs
(WAV files MindSpore misreads, TEDLIUM samples, errors on malformed transcripts)."""
from __future__ import annotations

import os
import pickle
import struct
import warnings

import numpy as np
import pytest

import headrace.dataset as ds
from headrace.dataset._sources.audio import AudioDataWarning
from tests.audio.oracle_cases import needs_oracle
from tests.oracles.oracle import run_ms
from tests.oracles.oracle_codec import OracleException



def _samples(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-32768, 32768, n).astype("<i2")


def write_wav(path: str, samples: np.ndarray, rate: int = 16000) -> None:
    """A canonical 44-byte-header mono 16-bit WAV file (what MindSpore reads correctly)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    body = samples.astype("<i2").tobytes()
    with open(path, "wb") as f:
        f.write(b"RIFF" + struct.pack("<I", 36 + len(body)) + b"WAVE" + b"fmt "
                + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16) + b"data" + struct.pack("<I", len(body))
                + body)


def write_sph(path: str, samples: np.ndarray, rate: int = 16000, big_endian: bool = False) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    head = (f"NIST_1A\n   1024\nsample_count -i {len(samples)}\nsample_n_bytes -i 2\nchannel_count -i 1\n"
            f"sample_byte_format -s2 {'10' if big_endian else '01'}\nsample_rate -i {rate}\n"
            "sample_coding -s3 pcm\nend_head\n").encode()
    with open(path, "wb") as f:
        f.write(head + b"\0" * (1024 - len(head)) + samples.astype(">i2" if big_endian else "<i2").tobytes())


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def build_corpora(root: str) -> dict[str, str]:
    """Small corpora in each dataset's layout; file creation orders differ from name orders, so
    orders that follow the file system, a list file or a sort are told apart."""
    seed = iter(range(1000))
    cmu = os.path.join(root, "cmu", "cmu_us_bdl_arctic")
    _write(os.path.join(cmu, "etc", "txt.done.data"),
           '( arctic_b0003 "Third, with comma." )\n( arctic_a0001 "First." )\n( arctic_a0002 "Two" )\n')
    for i, u in enumerate(["b0003", "a0001", "a0002"]):
        write_wav(os.path.join(cmu, "wav", f"arctic_{u}.wav"), _samples(300 + i, next(seed)))
    for genre, nums in [("rock", [91, 10, 0, 57]), ("blues", [29, 0, 98, 50]), ("jazz", [41, 73])]:
        for n in nums:
            write_wav(os.path.join(root, "gtzan", genre, f"{genre}.{n:05d}.wav"), _samples(200 + n, next(seed)), 22050)
    for name in ["odd_name.wav", "blues.00001.WAV", "x.y.wav", "rock_00003.wav"]:  # only x.y.wav is a GTZAN name
        write_wav(os.path.join(root, "gtzan", "blues", name), _samples(150, next(seed)), 22050)
    for usage, spk, ch, utts in [("train-clean-100", "30", "7", ["30_7_000002_000000", "30_7_000001_000000"]),
                                 ("train-clean-100", "1000", "12", ["1000_12_000001_000003"]),
                                 ("dev-clean", "9", "4", ["9_4_000001_000000"])]:
        folder = os.path.join(root, "libri", usage, spk, ch)
        _write(os.path.join(folder, f"{spk}_{ch}.trans.tsv"), "".join(f"{u}\tOrig {u}, A.\tnorm {u} a\n" for u in utts))
        for u in utts:
            write_wav(os.path.join(folder, f"{u}.wav"), _samples(250, next(seed)), 24000)
    lj = os.path.join(root, "lj")
    _write(os.path.join(lj, "metadata.csv"), "LJ002-0001|Text two, \"quoted\"|Text two\nLJ001-0001|One|One n\n"
                                             "LJ003-0001|Three|\n")
    for u in ["LJ002-0001", "LJ001-0001", "LJ003-0001"]:
        write_wav(os.path.join(lj, "wavs", f"{u}.wav"), _samples(220, next(seed)), 22050)
    sc = os.path.join(root, "sc")
    for word, name in [("zeta", "aaaa1111_nohash_0"), ("alpha", "bbbb2222_nohash_1"), ("zeta", "cccc3333_nohash_12"),
                       ("mid", "dddd4444_nohash_2"), ("alpha", "0000aaaa_nohash_5"), ("_background_noise_", "noise")]:
        write_wav(os.path.join(sc, word, f"{name}.wav"), _samples(160, next(seed)))
    _write(os.path.join(sc, "testing_list.txt"), "zeta/cccc3333_nohash_12.wav\n")
    _write(os.path.join(sc, "validation_list.txt"), "alpha/bbbb2222_nohash_1.wav\n")
    for name in ["1_0_0_1_1_0_0_1", "0_0_0_0_1_1_1_1", "1_1_1_1_0_0_0_0", "0_1_0_1_0_1_0_1"]:
        write_wav(os.path.join(root, "yesno", f"{name}.wav"), _samples(180, next(seed)), 8000)
    for usage in ["train", "dev", "test"]:
        for talk, lines in [("zTalk", 12), ("aTalk", 2), ("mTalk", 3)]:
            write_sph(os.path.join(root, "ted1", usage, "sph", f"{talk}.sph"), _samples(16000, next(seed)))
            text = "".join(f"{talk} 1 {talk}_spk {k * 0.05:.2f} {k * 0.05 + 0.01 * (k % 3 + 1):.2f} <o,f{k},male> "
                           f"{usage} words {k} of {talk}\n" for k in range(lines))
            _write(os.path.join(root, "ted1", usage, "stm", f"{talk}.stm"), text)
    for talk in ["t4", "t3"]:
        write_sph(os.path.join(root, "ted3", "data", "sph", f"{talk}.sph"), _samples(8000, next(seed)), big_endian=True)
        _write(os.path.join(root, "ted3", "data", "stm", f"{talk}.stm"),
               f"{talk} 1 s 0.0001 0.0004 <x> a\n{talk} 1 s 0.1234 0.4567 <y> b c\n")
    return {k: os.path.join(root, k) for k in ["cmu", "gtzan", "libri", "lj", "sc", "yesno", "ted1", "ted3"]}


# (dataset class, path key, extra positional args, extra keyword args)
CASES = [
    ("CMUArcticDataset", "cmu", [], {"name": "bdl"}),
    ("GTZANDataset", "gtzan", [], {}),
    ("GTZANDataset", "gtzan", [], {"usage": "train"}),
    ("GTZANDataset", "gtzan", [], {"usage": "test"}),
    ("LibriTTSDataset", "libri", [], {}),
    ("LibriTTSDataset", "libri", [], {"usage": "train-clean-100"}),
    ("LJSpeechDataset", "lj", [], {}),
    ("SpeechCommandsDataset", "sc", [], {}),
    ("SpeechCommandsDataset", "sc", [], {"usage": "train"}),
    ("SpeechCommandsDataset", "sc", [], {"usage": "valid"}),
    ("YesNoDataset", "yesno", [], {}),
    ("TedliumDataset", "ted1", ["release1"], {}),
    ("TedliumDataset", "ted1", ["release2"], {"usage": "dev"}),
    ("TedliumDataset", "ted3", ["release3"], {}),
]

_ORACLE = """
def rows(d):
    return [dict(r) for r in d.create_dict_iterator(output_numpy=True, num_epochs=1)]
out = []
for name, key, args, kw in INPUTS["cases"]:
    make = lambda **more: getattr(ds, name)(INPUTS["paths"][key], *args, **kw, **more)
    ds.config.set_seed(5)
    out.append({"plain": rows(make(shuffle=False)), "seeded": rows(make(shuffle=True)),
                "shard": rows(make(num_shards=2, shard_id=1, shuffle=False)),
                "sampled": rows(make(num_samples=2, shuffle=True)),
                "random": rows(make(sampler=ds.RandomSampler(replacement=True, num_samples=3))),
                "cols": make(shuffle=False).get_col_names()})
bad = []
for name, args, kw in INPUTS["bad"]:
    r = catch(lambda: getattr(ds, name)(INPUTS["paths"]["yesno"], *args, **kw))
    bad.append(r if isinstance(r, Exception) else "constructed")
RESULT = {"cases": out, "bad": bad}
"""

# Argument errors, checked word for word against MindSpore (constructed over the yesno folder).
BAD = [
    ("CMUArcticDataset", [], {"name": "abc"}),
    ("CMUArcticDataset", [], {"name": ["aew"]}),
    ("GTZANDataset", [], {"usage": "train-clean-100"}),
    ("LibriTTSDataset", [], {"usage": "train"}),
    ("SpeechCommandsDataset", [], {"usage": 3}),
    ("TedliumDataset", ["release4"], {}),
    ("TedliumDataset", [None], {}),
    ("TedliumDataset", ["release3"], {"usage": "train"}),
    ("TedliumDataset", ["release1"], {"usage": "validation"}),
    ("YesNoDataset", [], {"num_shards": 2, "shard_id": 2}),
]


def _rows(d) -> list[dict]:
    return [dict(r) for r in d.create_dict_iterator(output_numpy=True, num_epochs=1)]


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    return build_corpora(str(tmp_path_factory.mktemp("audio-corpora")))


@pytest.fixture(scope="module")
def oracle(corpora):
    return run_ms(_ORACLE, {"paths": corpora, "cases": [list(c) for c in CASES], "bad": [list(b) for b in BAD]})


def _make(corpora, name, key, args, kw, **more):
    return getattr(ds, name)(corpora[key], *args, **kw, **more)


def _assert_rows_equal(ours: list[dict], theirs: list[dict], waveform: bool) -> None:
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert list(a) == list(b)
        for col in a:
            if col == "waveform" and not waveform:
                assert a[col].shape == b[col].shape and a[col].dtype == b[col].dtype
                continue
            assert a[col].dtype == b[col].dtype, col
            assert a[col].shape == b[col].shape, col
            np.testing.assert_array_equal(a[col], b[col], err_msg=col)


@needs_oracle
@pytest.mark.parametrize("case", range(len(CASES)), ids=[f"{c[0]}-{c[1]}-{c[3]}" for c in CASES])
def test_rows_match_mindspore(corpora, oracle, case):
    """Every column, dtype, shape and value, in MindSpore's order: unshuffled, shuffled under a seed,
    one shard, num_samples, a sampler drawing with replacement. TEDLIUM waveforms only by shape and dtype: MindSpore 2.10 returns zeros for them."""
    name, key, args, kw = CASES[case]
    want = oracle["cases"][case]
    waveform = name != "TedliumDataset"
    ds.config.set_seed(5)
    assert _make(corpora, name, key, args, kw, shuffle=False).get_col_names() == want["cols"]
    _assert_rows_equal(_rows(_make(corpora, name, key, args, kw, shuffle=False)), want["plain"], waveform)
    _assert_rows_equal(_rows(_make(corpora, name, key, args, kw, shuffle=True)), want["seeded"], waveform)
    _assert_rows_equal(_rows(_make(corpora, name, key, args, kw, num_shards=2, shard_id=1, shuffle=False)),
                       want["shard"], waveform)
    _assert_rows_equal(_rows(_make(corpora, name, key, args, kw, num_samples=2, shuffle=True)), want["sampled"], waveform)
    _assert_rows_equal(_rows(_make(corpora, name, key, args, kw, sampler=ds.RandomSampler(replacement=True, num_samples=3))),
                       want["random"], waveform)


@needs_oracle
def test_argument_errors_match_mindspore(corpora, oracle):
    for (name, args, kw), theirs in zip(BAD, oracle["bad"]):
        assert isinstance(theirs, OracleException), (name, kw)
        with pytest.raises(Exception) as info:
            getattr(ds, name)(corpora["yesno"], *args, **kw)
        assert type(info.value).__name__ == theirs.type_name, (name, kw, str(info.value))
        assert str(info.value) == theirs.msg.split("\n")[0], (name, kw)


def test_values_and_types(corpora):
    """Pinned values, independent of the oracle: int16 / 32767, float32 (1, N), the label columns."""
    rows = _rows(ds.YesNoDataset(corpora["yesno"], shuffle=False))
    by_label = {tuple(r["label"].tolist()): r for r in rows}
    r = by_label[(0, 0, 0, 0, 1, 1, 1, 1)]
    raw = np.fromfile(os.path.join(corpora["yesno"], "0_0_0_0_1_1_1_1.wav"), "<i2", offset=44)
    assert r["waveform"].dtype == np.float32 and r["waveform"].shape == (1, 180)
    np.testing.assert_array_equal(r["waveform"][0], (raw / 32767).astype(np.float32))
    assert r["sample_rate"].dtype == np.int32 and int(r["sample_rate"]) == 8000
    assert r["label"].dtype == np.int32
    cmu = _rows(ds.CMUArcticDataset(corpora["cmu"], name="bdl", shuffle=False))
    assert [(str(x["utterance_id"]), str(x["transcript"])) for x in cmu] == [
        ("b0003", "Third, with comma."), ("a0001", "First."), ("a0002", "Two")]
    assert cmu[0]["sample_rate"].dtype == np.uint32
    libri = _rows(ds.LibriTTSDataset(corpora["libri"], usage="dev-clean"))
    assert [(int(x["speaker_id"]), int(x["chapter_id"]), x["speaker_id"].dtype) for x in libri] == [
        (9, 4, np.dtype(np.uint32))]


def test_tedlium_segments_hold_the_samples(corpora):
    """MindSpore 2.10 returns zeros; headrace returns frames int(start*rate) to int(end*rate) of the talk."""
    rows = _rows(ds.TedliumDataset(corpora["ted3"], "release3", shuffle=False))
    assert [(str(r["talk_id"]), str(r["transcript"]), str(r["identifier"]), r["waveform"].shape) for r in rows] == [
        ("t3", "a", "<x>", (1, 5)), ("t4", "a", "<x>", (1, 5)), ("t3", "b c", "<y>", (1, 5333)),
        ("t4", "b c", "<y>", (1, 5333))]
    raw = np.fromfile(os.path.join(corpora["ted3"], "data", "sph", "t3.sph"), ">i2", offset=1024)
    np.testing.assert_array_equal(rows[2]["waveform"][0], (raw[1974:7307] / 32767).astype(np.float32))
    np.testing.assert_array_equal(rows[0]["waveform"][0], (raw[1:6] / 32767).astype(np.float32))


def test_tedlium_segment_past_the_end_or_reversed_is_an_error(tmp_path):
    write_sph(str(tmp_path / "data" / "sph" / "t.sph"), _samples(1600, 1))
    _write(str(tmp_path / "data" / "stm" / "t.stm"), "t 1 s 0.05 0.2 <x> too long\n")
    with pytest.raises(RuntimeError, match=r"failed to read data part from sph file: .*t\.sph.*runs past the end"):
        _rows(ds.TedliumDataset(str(tmp_path), "release3", shuffle=False))
    _write(str(tmp_path / "data" / "stm" / "t.stm"), "t 1 s 0.05 0.02 <x> backwards\n")
    with pytest.raises(RuntimeError, match=r"t\.stm line 1 ends \(0\.02 s\) before it starts \(0\.05 s\)"):
        _rows(ds.TedliumDataset(str(tmp_path), "release3", shuffle=False))


def test_stm_blank_lines_crlf_and_empty_transcripts(tmp_path):
    write_sph(str(tmp_path / "data" / "sph" / "t.sph"), _samples(1600, 2))
    os.makedirs(tmp_path / "data" / "stm")
    (tmp_path / "data" / "stm" / "t.stm").write_bytes(b"t 1 s 0.00 0.01 <x>\r\n\nt 1 s 0.02 0.03 <y> two  spaces\r\n")
    rows = _rows(ds.TedliumDataset(str(tmp_path), "release3", shuffle=False))
    assert [(str(r["transcript"]), str(r["identifier"]), r["waveform"].shape) for r in rows] == [
        ("", "<x>", (1, 160)), ("two  spaces", "<y>", (1, 160))]


def _riff(path, chunks) -> None:
    body = b"WAVE" + b"".join(cid + struct.pack("<I", len(c)) + c + b"\0" * (len(c) % 2) for cid, c in chunks)
    with open(path, "wb") as f:
        f.write(b"RIFF" + struct.pack("<I", len(body)) + body)


def _fmt(channels=1, rate=16000, bits=16, tag=1) -> bytes:
    align = channels * bits // 8
    return struct.pack("<HHIIHH", tag, channels, rate, rate * align, align, bits)


def test_wav_with_extra_chunks_is_read_right_and_warns(tmp_path):
    s = _samples(40, 3)
    _riff(tmp_path / "0_1.wav", [(b"fmt ", _fmt()), (b"LIST", b"INFOISFT\x05\x00\x00\x00Lavf\x00"), (b"data", s.tobytes())])
    with pytest.warns(AudioDataWarning, match=r"0_1\.wav: MindSpore 2\.10 would decode this WAV file differently: its "
                                              r"header is not the 44-byte layout.*data is at byte 62"):
        rows = _rows(ds.YesNoDataset(str(tmp_path), shuffle=False))
    np.testing.assert_array_equal(rows[0]["waveform"], (s / 32767).astype(np.float32)[None])
    ds.config.set_strict_decode(True)
    with pytest.raises(RuntimeError, match=r"an error because ds.config.set_strict_decode\(True\)"):
        _rows(ds.YesNoDataset(str(tmp_path), shuffle=False))
    with pytest.raises(RuntimeError, match=r"an error because ds.config.set_strict_decode\(True\)"):
        _rows(ds.YesNoDataset(str(tmp_path)).map(_double, input_columns=["waveform"], num_parallel_workers=2,
                                                 python_multiprocessing=True))


def test_canonical_wav_does_not_warn(corpora):
    with warnings.catch_warnings():
        warnings.simplefilter("error", AudioDataWarning)
        assert len(_rows(ds.YesNoDataset(corpora["yesno"]))) == 4


def test_stereo_wav_gives_one_row_per_channel(tmp_path):
    s = _samples(40, 4)
    _riff(tmp_path / "1.wav", [(b"fmt ", _fmt(channels=2)), (b"data", s.tobytes())])
    with pytest.warns(AudioDataWarning, match=r"2 channels.*shape \(1, 40\) instead of \(2, 20\)"):
        (row,) = _rows(ds.YesNoDataset(str(tmp_path)))
    np.testing.assert_array_equal(row["waveform"], (s.reshape(20, 2).T / 32767).astype(np.float32))


def test_bad_wav_and_missing_files_name_the_file(tmp_path, corpora):
    with open(tmp_path / "1_1.wav", "wb") as f:
        f.write(b"not a wav file at all" * 4)
    with pytest.raises(RuntimeError, match=r"1_1\.wav cannot be read as a WAV file: not a RIFF/WAVE file"):
        _rows(ds.YesNoDataset(str(tmp_path)))
    os.remove(tmp_path / "1_1.wav")
    _riff(tmp_path / "1_1.wav", [(b"fmt ", _fmt(tag=2, bits=4)), (b"data", b"\0" * 8)])
    with pytest.raises(RuntimeError, match=r"its samples are MS ADPCM of 4 bits"):
        _rows(ds.YesNoDataset(str(tmp_path)))
    with pytest.raises(RuntimeError, match=r"sampling rate of CMUArctic wav file must be 16000, file path: .*a0001"):
        bad = tmp_path / "cmu" / "cmu_us_aew_arctic"
        _write(str(bad / "etc" / "txt.done.data"), '( arctic_a0001 "x" )\n')
        write_wav(str(bad / "wav" / "arctic_a0001.wav"), _samples(10, 5), 8000)
        _rows(ds.CMUArcticDataset(str(tmp_path / "cmu")))
    os.remove(bad / "wav" / "arctic_a0001.wav")
    with pytest.raises(RuntimeError, match=r"failed to open .*arctic_a0001\.wav"):
        _rows(ds.CMUArcticDataset(str(tmp_path / "cmu")))


@pytest.mark.parametrize("name, wav, rate", [
    ("GTZANDataset", "blues/blues.00000.wav", 22050),
    ("LibriTTSDataset", "dev-clean/9/4/9_4_000001_000000.wav", 24000),
])
def test_a_corpus_with_a_fixed_rate_refuses_another(tmp_path, name, wav, rate):
    _write(str(tmp_path / "dev-clean" / "9" / "4" / "9_4.trans.tsv"), "9_4_000001_000000\tA.\ta\n")
    write_wav(str(tmp_path / wav), _samples(10, 5), rate)
    (row,) = _rows(getattr(ds, name)(str(tmp_path)))
    assert row["sample_rate"] == rate and row["sample_rate"].dtype == np.uint32
    write_wav(str(tmp_path / wav), _samples(10, 5), 16000)
    corpus = name[:-len("Dataset")]
    with pytest.raises(RuntimeError, match=rf"sampling rate of {corpus} wav file must be {rate}, file path: .*{wav}"):
        _rows(getattr(ds, name)(str(tmp_path)))


def test_malformed_transcripts_are_errors(tmp_path):
    _write(str(tmp_path / "metadata.csv"), "a|b\n")
    with pytest.raises(RuntimeError, match=r"metadata\.csv line 1 is not 'id\|transcription\|normalized"):
        _rows(ds.LJSpeechDataset(str(tmp_path)))
    _write(str(tmp_path / "cmu_us_aew_arctic" / "etc" / "txt.done.data"), 'arctic_a0001 "x"\n')
    with pytest.raises(RuntimeError, match=r"the file may not be a CMUArctic dataset file: .*txt\.done\.data \(line 1"):
        _rows(ds.CMUArcticDataset(str(tmp_path)))
    write_wav(str(tmp_path / "sc" / "word" / "noname.wav"), _samples(10, 6))
    with pytest.raises(RuntimeError, match=r"failed to get file info: noname\.wav"):
        _rows(ds.SpeechCommandsDataset(str(tmp_path / "sc")))


def test_empty_folders_give_mindspores_no_data_errors(tmp_path):
    with pytest.raises(RuntimeError, match=r"no \.wav files found under"):
        _rows(ds.YesNoDataset(str(tmp_path)))
    with pytest.raises(RuntimeError, match=r"no valid data matching the dataset API LibriTTSDataset"):
        _rows(ds.LibriTTSDataset(str(tmp_path)))
    with pytest.raises(RuntimeError, match=r"no valid data found in path:"):
        _rows(ds.GTZANDataset(str(tmp_path)))
    with pytest.raises(RuntimeError, match=r"failed to open folder: .*train[/\\]stm"):
        _rows(ds.TedliumDataset(str(tmp_path), "release1"))
    assert ds.YesNoDataset(str(tmp_path)).get_dataset_size() == 0
    with pytest.raises(ValueError, match=r"The folder .*nope does not exist or is not a directory"):
        ds.YesNoDataset(str(tmp_path / "nope"))
    with pytest.raises(RuntimeError, match=r"TedliumNode: extension \.wav is not supported\."):
        ds.TedliumDataset(str(tmp_path), "release1", extensions=".wav")


def test_columns_are_known_before_the_files_are_listed(tmp_path):
    """As in MindSpore: get_col_names() answers for a folder without the corpus; reading it fails."""
    d = ds.CMUArcticDataset(str(tmp_path))
    assert d.get_col_names() == ["waveform", "sample_rate", "transcript", "utterance_id"]
    with pytest.raises(RuntimeError, match=r"failed to find label file: .*cmu_us_aew_arctic[/\\]etc[/\\]txt\.done\.data"):
        _rows(d)
    assert ds.TedliumDataset(str(tmp_path), "release2").get_col_names() == [
        "waveform", "sample_rate", "transcript", "talk_id", "speaker_id", "identifier"]


def test_speech_commands_usage_with_no_files_is_empty(tmp_path):
    write_wav(str(tmp_path / "up" / "abcd_nohash_0.wav"), _samples(10, 8))
    _write(str(tmp_path / "testing_list.txt"), "up/abcd_nohash_0.wav\n")
    _write(str(tmp_path / "validation_list.txt"), "")
    assert _rows(ds.SpeechCommandsDataset(str(tmp_path), usage="valid")) == []
    assert [str(r["speaker_id"]) for r in _rows(ds.SpeechCommandsDataset(str(tmp_path), usage="test"))] == ["abcd"]


def test_folders_and_links_named_like_clips(tmp_path):
    """A folder named like a clip is not a clip; a link to a clip is one (as os.path.isfile says)."""
    write_wav(str(tmp_path / "up" / "abcd_nohash_0.wav"), _samples(10, 8))
    (tmp_path / "up" / "dir_nohash_1.wav").mkdir()
    (tmp_path / "up" / "link_nohash_2.wav").symlink_to(tmp_path / "up" / "abcd_nohash_0.wav")
    (tmp_path / "up" / "gone_nohash_3.wav").symlink_to(tmp_path / "nowhere.wav")
    rows = _rows(ds.SpeechCommandsDataset(str(tmp_path), usage="all", shuffle=False))
    assert [(str(r["speaker_id"]), int(r["utterance_number"])) for r in rows] == [("abcd", 0), ("link", 2)]
    np.testing.assert_array_equal(rows[0]["waveform"], rows[1]["waveform"])


def test_speech_commands_size_counts_its_usage(corpora):
    """MindSpore 2.10 reports the size of every usage (5) for each; headrace the rows it reads."""
    sizes = {u: ds.SpeechCommandsDataset(corpora["sc"], usage=u).get_dataset_size()
             for u in ["all", "train", "test", "valid"]}
    assert sizes == {"all": 5, "train": 3, "test": 1, "valid": 1}


@pytest.mark.parametrize("workers,processes", [(1, False), (3, False), (2, True)])
def test_same_rows_with_any_workers(corpora, workers, processes):
    """A shuffled, mapped pipeline gives the same rows with threads and worker processes."""
    def run(w, p):
        ds.config.set_seed(11)
        d = ds.LibriTTSDataset(corpora["libri"], shuffle=True, num_parallel_workers=w)
        d = d.map(_double, input_columns=["waveform"], num_parallel_workers=w, python_multiprocessing=p)
        return _rows(d)
    base = run(1, False)
    _assert_rows_equal(run(workers, processes), base, True)
    assert [str(r["utterance_id"]) for r in base] != sorted(str(r["utterance_id"]) for r in base) or len(base) < 3


def _double(x):
    return x * 2


def test_sources_pickle(corpora):
    for name, key, args, kw in CASES:
        d = _make(corpora, name, key, args, kw)
        src = pickle.loads(pickle.dumps(d._source()))
        assert len(src) == d.get_dataset_size()
        assert len(src.read(0)) == len(d.get_col_names())
