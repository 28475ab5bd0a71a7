"""Reading audio files into float32 arrays of shape (channels, frames): RIFF/WAVE and NIST SPHERE,
in NumPy alone.

Scale: an integer sample ``v`` of ``b`` bits becomes ``v / (2**(b - 1) - 1)`` (16-bit: ``v / 32767``,
the scale MindSpore's audio datasets use, so its values are matched exactly; full scale positive is
1.0 at every width); unsigned 8-bit samples are centred first (``(v - 128) / 127``). Float files keep
their values.

``read_wav`` reads every well-formed PCM or IEEE-float WAV correctly and also says, in
``Audio.mindspore_differs``, why MindSpore 2.10 would read the same bytes differently: its reader
takes a fixed 44-byte header (``fmt `` chunk of 16 bytes at offset 12, ``data`` chunk at offset 36),
reads 16-bit samples only, puts all channels interleaved in one row, and pads a data chunk that the
file cuts short with zeros. The caller decides what to do with the reasons (the datasets warn).
"""
from __future__ import annotations

import dataclasses
import struct

import numpy as np

__all__ = ["Audio", "AudioFormatError", "SphereFormat", "decode_sphere", "parse_sphere_header", "read_sphere",
           "read_wav", "sample_scale", "sphere_header_size"]

_PCM, _FLOAT, _EXTENSIBLE = 1, 3, 0xFFFE
_FORMAT_NAMES = {2: "MS ADPCM", 6: "A-law", 7: "mu-law", 0x11: "IMA ADPCM", 0x55: "MP3"}


class AudioFormatError(ValueError):
    """The bytes are not an audio file this module can read (the message says why)."""


@dataclasses.dataclass(frozen=True)
class Audio:
    """Decoded samples (float32, shape (channels, frames)), their rate in Hz, and the reasons
    MindSpore 2.10 would decode the same file differently (empty when it reads it the same)."""

    samples: np.ndarray
    rate: int
    mindspore_differs: tuple[str, ...] = ()


def sample_scale(bits: int) -> float:
    """The divisor of a ``bits``-wide integer sample: ``2**(bits - 1) - 1`` (32767 for 16 bits)."""
    return float((1 << (bits - 1)) - 1)


def _pcm_to_float(raw: memoryview | bytes, width: int, big_endian: bool, unsigned8: bool) -> np.ndarray:
    """Integer samples of ``width`` bytes to float32 on the scale of ``sample_scale``."""
    order = ">" if big_endian else "<"
    if width == 1:
        vals = np.frombuffer(raw, np.uint8).astype(np.int16)
        if unsigned8:
            vals -= 128
        else:
            vals = np.frombuffer(raw, np.int8).astype(np.int16)
    elif width == 3:
        b = np.frombuffer(raw, np.uint8).reshape(-1, 3).astype(np.int32)
        lo, hi = (b[:, 2], b[:, 0]) if big_endian else (b[:, 0], b[:, 2])
        vals = lo | (b[:, 1] << 8) | (hi << 16)
        vals = np.where(vals >= 1 << 23, vals - (1 << 24), vals)
    elif width in (2, 4, 8):
        vals = np.frombuffer(raw, f"{order}i{width}")
    else:
        raise AudioFormatError(f"samples of {width} bytes are not supported (1, 2, 3, 4 or 8 bytes are).")
    if width <= 3:
        # a float32 division is correctly rounded, and so is the float64 one rounded to float32 here:
        # q = v / (2**(b-1) - 1) with b <= 24 lies at least 2**-48 (relative) from every float32
        # midpoint, farther than float64's first rounding moves it, so both give the same float32
        # (3.6 against 8.0 us through float64 on a 1 s clip; the tests check every 8- and 16-bit value)
        return np.divide(vals, np.float32(sample_scale(width * 8)), dtype=np.float32)
    # float64 keeps 32-bit samples exact before the one rounding to float32
    return (vals.astype(np.float64) / sample_scale(width * 8)).astype(np.float32)


def _frames(flat: np.ndarray, channels: int) -> np.ndarray:
    """Interleaved samples to a C-contiguous (channels, frames) array."""
    return np.ascontiguousarray(flat.reshape(-1, channels).T)


def read_wav(data: bytes) -> Audio:
    """Decodes a RIFF/WAVE file held in ``data``.

    Reads PCM (8, 16, 24, 32 bits), IEEE float (32, 64 bits) and WAVE_FORMAT_EXTENSIBLE files of
    those codings, with any number of channels and any chunks around ``fmt `` and ``data``. A
    ``data`` chunk that claims more bytes than the file holds is read as far as the file goes.

    Raises:
        AudioFormatError: not a RIFF/WAVE file, no ``fmt `` or ``data`` chunk, or a coding other
            than PCM / IEEE float (the message names it).
    """
    if len(data) < 12:
        raise AudioFormatError(f"it holds {len(data)} bytes, too few for a WAV file (a RIFF header is 12).")
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        head = bytes(data[:4])
        raise AudioFormatError(f"not a RIFF/WAVE file (it starts with {head!r}, a WAV file starts with b'RIFF' "
                               f"and has b'WAVE' at byte 8).")
    fmt: tuple[int, int, int, int] | None = None
    fmt_at = data_at = -1
    fmt_size = 0
    body: memoryview | None = None
    claimed = 0
    pos, view = 12, memoryview(data)
    while pos + 8 <= len(data) and (fmt is None or body is None):
        cid, size = data[pos:pos + 4], struct.unpack_from("<I", data, pos + 4)[0]
        start = pos + 8
        if cid == b"fmt ":
            if size < 16 or start + 16 > len(data):
                raise AudioFormatError(f"its fmt chunk holds {size} bytes, fewer than the 16 a WAV format needs.")
            tag, channels, rate, _, _, bits = struct.unpack_from("<HHIIHH", data, start)
            if tag == _EXTENSIBLE and size >= 40 and start + 26 <= len(data):
                tag = struct.unpack_from("<H", data, start + 24)[0]  # the sub-format GUID's first two bytes
            fmt, fmt_at, fmt_size = (tag, channels, rate, bits), pos, size
        elif cid == b"data":
            claimed, data_at = size, pos
            body = view[start:start + size]
        pos = start + size + (size & 1)
    if fmt is None:
        raise AudioFormatError("it has no fmt chunk (the chunk that gives the sample format).")
    if body is None:
        raise AudioFormatError("it has no data chunk.")
    tag, channels, rate, bits = fmt
    if channels == 0 or bits == 0:
        raise AudioFormatError(f"its fmt chunk gives {channels} channels of {bits} bits per sample.")
    if tag == _PCM and bits in (8, 16, 24, 32):
        flat = _pcm_to_float(body[:len(body) - len(body) % (bits // 8)], bits // 8, False, bits == 8)
    elif tag == _FLOAT and bits in (32, 64):
        flat = np.frombuffer(body[:len(body) - len(body) % (bits // 8)], f"<f{bits // 8}").astype(np.float32)
    else:
        name = {_PCM: "PCM", _FLOAT: "IEEE float"}.get(tag) or _FORMAT_NAMES.get(tag, f"format tag {tag:#06x}")
        raise AudioFormatError(f"its samples are {name} of {bits} bits; headrace reads PCM of 8, 16, 24 or 32 "
                               "bits and IEEE float of 32 or 64 bits.")
    flat = flat[:len(flat) - len(flat) % channels]
    differs = []
    if fmt_at != 12 or fmt_size != 16 or data_at != 36:
        differs.append("its header is not the 44-byte layout MindSpore assumes (fmt chunk of 16 bytes at byte 12, "
                       f"data chunk at byte 36; here fmt has {fmt_size} bytes at byte {fmt_at} and data is at "
                       f"byte {data_at})")
    if tag != _PCM or bits != 16:
        differs.append(f"its samples are {'PCM' if tag == _PCM else 'float'} of {bits} bits, and MindSpore reads "
                       "every sample as 16-bit PCM")
    if channels > 1:
        differs.append(f"it has {channels} channels, and MindSpore returns them interleaved in one row of shape "
                       f"(1, {len(flat)}) instead of ({channels}, {len(flat) // channels})")
    if claimed > len(body):
        differs.append(f"its data chunk claims {claimed} bytes but the file holds {len(body)}, and MindSpore pads "
                       "the missing samples with zeros")
    return Audio(_frames(flat, channels), int(rate), tuple(differs))


@dataclasses.dataclass(frozen=True)
class SphereFormat:
    """What a NIST SPHERE header says about the samples after it."""

    header_size: int  # bytes before the first sample
    rate: int
    channels: int
    width: int  # bytes per sample
    big_endian: bool
    frames: int | None  # sample_count, when the header gives it

    @property
    def frame_bytes(self) -> int:
        return self.width * self.channels


def sphere_header_size(head: bytes) -> int:
    """The header size of a SPHERE file from its first 16 bytes (``NIST_1A`` and the size).

    Raises:
        AudioFormatError: not a SPHERE file.
    """
    if len(head) < 16 or not head.startswith(b"NIST_1A"):
        raise AudioFormatError(f"not a NIST SPHERE file (it starts with {bytes(head[:7])!r}, not b'NIST_1A').")
    try:
        size = int(bytes(head[8:16]).strip())
    except ValueError:
        raise AudioFormatError(f"its header size {bytes(head[8:16])!r} is not a number.") from None
    if size < 16:
        raise AudioFormatError(f"its header claims {size} bytes, fewer than the 16 of its own first lines.")
    return size


def parse_sphere_header(header: bytes) -> SphereFormat:
    """The sample format given by a whole SPHERE header (``sphere_header_size`` bytes).

    Raises:
        AudioFormatError: a missing or malformed field, or a coding other than PCM
            (shorten-compressed files must be expanded first, e.g. with ``sph2pipe``).
    """
    size = sphere_header_size(header)
    if len(header) < size:
        raise AudioFormatError(f"its header claims {size} bytes, but the file holds {len(header)}.")
    fields: dict[str, str] = {}
    for line in bytes(header[16:size]).decode("latin-1").split("\n"):
        parts = line.strip().split(None, 2)
        if parts and parts[0] == "end_head":
            break
        if len(parts) == 3:
            fields[parts[0]] = parts[2]
    try:
        width = int(fields.get("sample_n_bytes", "2"))
        channels = int(fields.get("channel_count", "1"))
        rate = int(fields["sample_rate"])
        frames = int(fields["sample_count"]) if "sample_count" in fields else None
    except KeyError as e:
        raise AudioFormatError(f"its header has no {e.args[0]} field.") from None
    except ValueError as e:
        raise AudioFormatError(f"its header has a field that is not a number ({e}).") from None
    coding = fields.get("sample_coding", "pcm")
    if coding != "pcm":
        raise AudioFormatError(f"its samples are coded as {coding!r}; headrace reads uncompressed PCM SPHERE files "
                               "(expand shorten-compressed ones with sph2pipe first).")
    if width not in (1, 2, 3, 4) or channels < 1:
        raise AudioFormatError(f"its header gives {channels} channels of {width} bytes per sample.")
    order = fields.get("sample_byte_format", "01")
    return SphereFormat(size, rate, channels, width, order.startswith("10"), frames)


def decode_sphere(fmt: SphereFormat, raw: bytes | memoryview) -> np.ndarray:
    """Whole frames of ``raw`` (sample bytes of a file of format ``fmt``) as (channels, frames) float32."""
    raw = raw[:len(raw) - len(raw) % fmt.frame_bytes]
    return _frames(_pcm_to_float(raw, fmt.width, fmt.big_endian, False), fmt.channels)


def read_sphere(data: bytes, start: int | None = None, stop: int | None = None) -> Audio:
    """Decodes the PCM samples of a NIST SPHERE file held in ``data``, frames ``start`` to ``stop``
    (None: from the first, to the last).

    Raises:
        AudioFormatError: not a SPHERE file this module reads (see ``parse_sphere_header``), or
            frames that are not a span of the file.
    """
    fmt = parse_sphere_header(data[:sphere_header_size(data[:16])])
    have = (len(data) - fmt.header_size) // fmt.frame_bytes
    total = have if fmt.frames is None else min(fmt.frames, have)
    first = 0 if start is None else start
    last = total if stop is None else stop
    if first < 0 or last < first or last > total:
        raise AudioFormatError(f"frames [{first}, {last}) are not a span of its {total} frames.")
    at = fmt.header_size
    return Audio(decode_sphere(fmt, memoryview(data)[at + first * fmt.frame_bytes:at + last * fmt.frame_bytes]),
                 fmt.rate)
