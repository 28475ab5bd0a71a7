"""The readers under the audio datasets (headrace/_audio/io.py): WAV by its chunks, every PCM width
and float, what MindSpore 2.10 would read differently, NIST SPHERE segments; malformed files."""
from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headrace._audio import io


def riff(chunks: list[tuple[bytes, bytes]], claimed: dict[bytes, int] | None = None) -> bytes:
    """A RIFF/WAVE file of ``chunks`` (odd sizes padded); ``claimed`` overrides a chunk's size field."""
    claimed = claimed or {}
    body = b"WAVE" + b"".join(cid + struct.pack("<I", claimed.get(cid, len(c))) + c + b"\0" * (len(c) % 2)
                              for cid, c in chunks)
    return b"RIFF" + struct.pack("<I", len(body)) + body


def fmt(channels=1, rate=16000, bits=16, tag=1, extensible_tag=None) -> bytes:
    align = channels * bits // 8
    head = struct.pack("<HHIIHH", 0xFFFE if extensible_tag is not None else tag, channels, rate, rate * align, align,
                       bits)
    if extensible_tag is None:
        return head
    guid_tail = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"
    return head + struct.pack("<HHI", 22, bits, 0) + struct.pack("<H", extensible_tag) + guid_tail


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(0, 50), st.lists(st.binary(max_size=7), max_size=3), st.booleans(),
       st.integers(0, 2 ** 32 - 1))
def test_16_bit_pcm_any_layout(channels, frames, extra, extra_first, seed):
    """Samples / 32767, one row per channel, whatever chunks surround the data; MindSpore's reading
    is the same exactly when the header is the 44-byte one and the file is mono."""
    s = np.random.default_rng(seed).integers(-32768, 32768, (frames, channels)).astype("<i2")
    others = [(b"LIST", e) for e in extra]
    chunks = ([*others, (b"fmt ", fmt(channels)), (b"data", s.tobytes())] if extra_first
              else [(b"fmt ", fmt(channels)), *others, (b"data", s.tobytes())])
    audio = io.read_wav(riff(chunks))
    assert audio.samples.dtype == np.float32 and audio.samples.shape == (channels, frames)
    assert audio.samples.flags.c_contiguous
    np.testing.assert_array_equal(audio.samples, (s.T / 32767).astype(np.float32))
    assert audio.rate == 16000
    assert (audio.mindspore_differs == ()) == (not others and channels == 1)


@pytest.mark.parametrize("bits,dtype,scale", [(24, None, 8388607), (32, "<i4", 2147483647)])
def test_wide_pcm(bits, dtype, scale):
    vals = np.array([0, 1, -1, scale, -scale - 1, 12345], dtype=np.int64)
    if bits == 24:
        raw = b"".join(int(v & 0xFFFFFF).to_bytes(3, "little") for v in vals)
    else:
        raw = vals.astype(dtype).tobytes()
    audio = io.read_wav(riff([(b"fmt ", fmt(bits=bits)), (b"data", raw)]))
    np.testing.assert_array_equal(audio.samples[0], (vals / scale).astype(np.float32))
    assert audio.mindspore_differs == (f"its samples are PCM of {bits} bits, and MindSpore reads every sample as "
                                       "16-bit PCM",)


@pytest.mark.parametrize("bits", [8, 16, 24])
def test_every_narrow_sample_is_its_float64_quotient_rounded_to_float32(bits):
    # read_wav divides 8- to 24-bit samples in float32: the same float32 as float64's quotient rounded
    if bits == 24:  # every 64th value and both ends (all 2**24 take a few seconds)
        vals = np.concatenate([np.arange(-(1 << 23), 1 << 23, 64), [-(1 << 23), (1 << 23) - 1, -1, 1, 63]])
        raw = vals.astype("<i4").view(np.uint8).reshape(-1, 4)[:, :3].tobytes()
    else:
        vals = np.arange(256) - 128 if bits == 8 else np.arange(-(1 << 15), 1 << 15)
        raw = (vals + 128).astype(np.uint8).tobytes() if bits == 8 else vals.astype("<i2").tobytes()
    got = io._pcm_to_float(raw, bits // 8, False, bits == 8)
    want = (vals.astype(np.float64) / float((1 << (bits - 1)) - 1)).astype(np.float32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))


def test_unsigned_8_bit_float_and_extensible():
    u8 = np.array([0, 128, 255, 1], np.uint8)
    out = io.read_wav(riff([(b"fmt ", fmt(bits=8)), (b"data", u8.tobytes())])).samples
    np.testing.assert_array_equal(out[0], np.array([-128, 0, 127, -127], np.float32) / np.float32(127))
    f = np.array([0.5, -1.25, 3.0], "<f8")
    out = io.read_wav(riff([(b"fmt ", fmt(bits=64, tag=3)), (b"data", f.tobytes())])).samples
    np.testing.assert_array_equal(out[0], f.astype(np.float32))
    s = np.array([[1, 2], [3, 4], [-5, -6]], "<i2")
    audio = io.read_wav(riff([(b"fmt ", fmt(channels=2, extensible_tag=1)), (b"data", s.tobytes())]))
    np.testing.assert_array_equal(audio.samples, (s.T / 32767).astype(np.float32))
    assert any("header is not the 44-byte layout" in r for r in audio.mindspore_differs)


def test_truncated_data_chunk_reads_what_is_there():
    s = np.arange(10, dtype="<i2")
    audio = io.read_wav(riff([(b"fmt ", fmt()), (b"data", s.tobytes()[:8])], {b"data": 40}))
    np.testing.assert_array_equal(audio.samples[0], (s[:4] / 32767).astype(np.float32))
    assert audio.mindspore_differs == ("its data chunk claims 40 bytes but the file holds 8, and MindSpore pads the "
                                       "missing samples with zeros",)


@pytest.mark.parametrize("data,message", [
    (b"RIFF", "it holds 4 bytes, too few for a WAV file"),
    (b"RIFX\0\0\0\0WAVEfmt ", "not a RIFF/WAVE file (it starts with b'RIFX'"),
    (riff([(b"data", b"\0\0")]), "it has no fmt chunk"),
    (riff([(b"fmt ", fmt())]), "it has no data chunk"),
    (riff([(b"fmt ", fmt()[:12]), (b"data", b"")]), "its fmt chunk holds 12 bytes"),
    (riff([(b"fmt ", fmt(channels=0)), (b"data", b"")]), "its fmt chunk gives 0 channels of 16 bits"),
    (riff([(b"fmt ", fmt(tag=7, bits=8)), (b"data", b"\0")]), "its samples are mu-law of 8 bits"),
    (riff([(b"fmt ", fmt(tag=3, bits=16)), (b"data", b"\0\0")]), "its samples are IEEE float of 16 bits"),
])
def test_malformed_wav(data, message):
    with pytest.raises(io.AudioFormatError) as info:
        io.read_wav(data)
    assert message in str(info.value)


def sphere(samples: np.ndarray, fields: str, size: int = 1024) -> bytes:
    head = f"NIST_1A\n{size:7d}\n{fields}end_head\n".encode()
    return head + b"\0" * (size - len(head)) + samples.tobytes()


@given(st.integers(0, 40), st.integers(0, 40), st.booleans(), st.integers(1, 2), st.integers(0, 2 ** 32 - 1))
@settings(max_examples=40, deadline=None)
def test_sphere_segments(a, b, big, channels, seed):
    start, stop = min(a, b), max(a, b)
    s = np.random.default_rng(seed).integers(-32768, 32768, (40, channels)).astype(">i2" if big else "<i2")
    data = sphere(s, f"sample_count -i 40\nsample_n_bytes -i 2\nchannel_count -i {channels}\n"
                     f"sample_byte_format -s2 {'10' if big else '01'}\nsample_rate -i 8000\nsample_coding -s3 pcm\n")
    audio = io.read_sphere(data, start, stop)
    assert audio.rate == 8000
    np.testing.assert_array_equal(audio.samples, (s[start:stop].T.astype(np.float64) / 32767).astype(np.float32))


def test_sphere_errors():
    s = np.zeros(10, "<i2")
    ok = "sample_count -i 10\nsample_rate -i 16000\n"
    assert io.read_sphere(sphere(s, ok)).samples.shape == (1, 10)
    with pytest.raises(io.AudioFormatError, match=r"frames \[5, 11\) are not a span of its 10 frames"):
        io.read_sphere(sphere(s, ok), 5, 11)
    with pytest.raises(io.AudioFormatError, match="not a NIST SPHERE file"):
        io.read_sphere(b"RIFF" * 10)
    with pytest.raises(io.AudioFormatError, match="its header has no sample_rate field"):
        io.read_sphere(sphere(s, "sample_count -i 10\n"))
    with pytest.raises(io.AudioFormatError, match="coded as 'pcm,embedded-shorten-v2.00'"):
        io.read_sphere(sphere(s, ok + "sample_coding -s26 pcm,embedded-shorten-v2.00\n"))
    with pytest.raises(io.AudioFormatError, match="its header claims 4096 bytes, but the file holds"):
        io.read_sphere(sphere(s, ok)[:16].replace(b"   1024", b"   4096") + b"\0" * 100)
