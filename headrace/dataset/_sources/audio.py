"""MindSpore's seven audio datasets: CMUArcticDataset, GTZANDataset, LibriTTSDataset,
LJSpeechDataset, SpeechCommandsDataset, TedliumDataset, YesNoDataset.

Each lists its rows when the pipeline is first planned (a small index of file names and texts)
and reads one clip per row by index, so samplers, shuffling, sharding and worker counts behave as
for every other random-access source. The waveform column is float32 of shape (channels, frames);
16-bit samples are divided by 32767, as MindSpore does (``headrace/_audio/io.py`` gives the scale of
the other widths).

Differences from MindSpore 2.10, all measured against it:

- WAV files are read by their chunks. MindSpore assumes a 44-byte header and 16-bit mono samples,
  and misreads other files silently; here such a file is read as it says, with a ``AudioDataWarning``
  naming it and what MindSpore would do instead (an error under ``ds.config.set_strict_decode(True)``).
- TedliumDataset returns the samples of each segment; MindSpore 2.10 returns zeros of the right
  length for every segment.
- SpeechCommandsDataset's ``get_dataset_size()`` counts the rows of its usage; MindSpore's counts the
  rows of every usage.
- A malformed line of a transcript file is an error naming the file and line (MindSpore 2.10 dies
  of a segmentation fault on some, e.g. an LJSpeech metadata.csv with a line of two fields).
- STM files (TEDLIUM): a blank line is skipped, a CR of a CR LF line end is not part of the
  transcript, and a line with no transcript has an empty one (MindSpore 2.10 fails on a blank line,
  keeps the CR and repeats the identifier as the transcript).
"""
from __future__ import annotations

import os
import warnings
from typing import Any, Sequence

import numpy as np

from headrace._audio import io as audio_io
from headrace._engine import plan as P
from headrace._image import limits as _limits
from headrace._util import checks
from headrace._util.errors import PipelineError
from headrace.dataset._sources._docs import with_sampling_args
from headrace.dataset._sources._files import FileSourceDataset, NoDataStream, check_dir, read_bytes
from headrace.dataset._sources.base import MappableDataset

__all__ = ["AudioDataWarning", "CMUArcticDataset", "GTZANDataset", "LJSpeechDataset", "LibriTTSDataset",
           "SpeechCommandsDataset", "TedliumDataset", "YesNoDataset"]


class AudioDataWarning(UserWarning):
    """A WAV file that MindSpore 2.10 would decode differently from what the file says."""


def _check_choice(value: Any, valid: Sequence[str], name: str, default: str | None = None) -> str:
    """``value`` (None: ``default``) as one of ``valid``, with MindSpore's error texts."""
    if value is None and default is not None:
        return default
    checks.check_type(value, str, name)
    if value not in valid:
        raise ValueError(f"Input {name} is not within the valid set of {list(valid)}.")
    return value


def _file_bytes(path: str, op: str, offset: int = 0, length: int = -1) -> bytes:
    try:
        return read_bytes(path, offset, length)
    except OSError as e:
        raise PipelineError(op, f"Invalid file, failed to open {path}: {e.strerror or e}.", file=path) from e


def _text_lines(path: str, op: str) -> list[str]:
    """The lines of a UTF-8 text file (line ends removed)."""
    data = _file_bytes(path, op)
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError as e:
        raise PipelineError(op, f"Invalid file, {path} is not UTF-8 text: {e}.", file=path) from e


def _numbered_lines(path: str, op: str, what: str | None = None) -> list[tuple[int, str]]:
    """(number from 1, line) of each non-blank line of a UTF-8 text file; with ``what``, a file that
    does not exist is the error "failed to find <what>" (else the error of opening it)."""
    if what is not None and not os.path.isfile(path):
        raise PipelineError(op, f"Invalid file, failed to find {what}: {path}", file=path)
    return [(n, line) for n, line in enumerate(_text_lines(path, op), 1) if line.strip()]


def _listdir(path: str, op: str, what: str = "folder", files_only: bool = False) -> list[str]:
    """The names in folder ``path`` in the order the file system lists them (MindSpore's order);
    ``files_only``: only those of files (as ``os.path.isfile`` says, from the directory's own entry
    types where it has them: no stat a file: 3,200 clips listed in 1.4 ms against 6-7 ms, warm cache)."""
    try:
        if not files_only:
            return os.listdir(path)
        with os.scandir(path) as entries:
            return [e.name for e in entries if e.is_file()]
    except OSError as e:
        raise PipelineError(op, f"Invalid file, failed to open {what}: {path} ({e.strerror or e}).",
                            file=path) from e


def load_wav(path: str, op: str, rate: int | None = None, corpus: str = "") -> tuple[np.ndarray, int]:
    """The waveform (float32, (channels, frames)) and sample rate of the WAV file at ``path``.

    A file MindSpore would read differently gives an ``AudioDataWarning`` (a PipelineError under
    ``ds.config.set_strict_decode(True)``). With ``rate``, another sample rate is an error (the
    corpora that fix their rate).

    Raises:
        PipelineError: the file cannot be opened or is not a WAV file headrace reads.
    """
    try:
        audio = audio_io.read_wav(_file_bytes(path, op))
    except audio_io.AudioFormatError as e:
        raise PipelineError(op, f"Invalid file, {path} cannot be read as a WAV file: {e}", file=path) from e
    if audio.mindspore_differs:
        why = "; ".join(audio.mindspore_differs)
        detail = f"{path}: MindSpore 2.10 would decode this WAV file differently: {why}"
        if _limits.current().strict_decode:
            raise PipelineError(op, f"Invalid file, {detail} (an error because ds.config.set_strict_decode(True)).",
                                file=path)
        warnings.warn(f"{op}: {detail}. headrace decodes it as the file says; ds.config.set_strict_decode(True) "
                      "makes this an error.", AudioDataWarning, stacklevel=2)
    if rate is not None and audio.rate != rate:
        raise PipelineError(op, f"Invalid file, sampling rate of {corpus} wav file must be {rate}, file path: {path}",
                            file=path)
    return audio.samples, audio.rate


class _AudioSource:
    """A ``RandomAccessSource`` over rows listed as (wav path, fixed columns...)."""

    def __init__(self, op: str, names: Sequence[str], rows: list[tuple], rate: int | None = None,
                 rate_dtype: type = np.int32, corpus: str = "") -> None:
        self.op = op
        self.column_names = list(names)
        self.rows = rows
        self.rate, self.rate_dtype, self.corpus = rate, rate_dtype, corpus

    def __len__(self) -> int:
        return len(self.rows)

    def file_of(self, index: int) -> str:
        return self.rows[index][0]

    def read(self, index: int) -> tuple:
        path, *rest = self.rows[index]
        wave, rate = load_wav(path, self.op, self.rate, self.corpus)
        return (wave, np.array(rate, dtype=self.rate_dtype), *(_column(v) for v in rest))


def _column(value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, str):
        return np.array(value)
    return np.array(value[1], dtype=value[0])  # (dtype, number)


class _AudioDataset(FileSourceDataset):
    """Base of the seven: their columns are known without listing the files, so a corpus that
    cannot be listed (a missing transcript file or folder) fails when it is read, as in MindSpore,
    and ``get_col_names()`` still answers."""

    _columns: tuple[str, ...] = ()
    _empty_is_data = False  # zero rows is an empty dataset (not MindSpore's no-data error)
    _usages: tuple[str, ...] = ()  # the usages of a dataset with MindSpore's usage signature, 'all' last
    _rate: int | None = None  # the sample rate of a corpus that fixes it (another is an error)
    _rate_dtype: type = np.int32  # of the sample_rate column
    _corpus = ""  # the corpus's name in the error of another rate

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):
        # the signature GTZAN, LibriTTS and SpeechCommands share; the others have their own
        self.dataset_dir = check_dir(dataset_dir)
        self.usage = _check_choice(usage, self._usages, "usage", "all")
        super().__init__(num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache)

    def _make_source(self) -> Any:
        op = self._source_name()
        return _AudioSource(op, self._columns, self._rows(op), self._rate, self._rate_dtype, self._corpus)

    def _rows(self, op: str) -> list[tuple]:
        """(wav path, the values of the columns after waveform and sample_rate ...) of each row."""
        raise NotImplementedError(f"{type(self).__name__} must implement _rows()")

    def _make_plan(self) -> P.Node:
        try:
            src = self._source()
        except PipelineError as e:
            stream = NoDataStream(self._columns, e.op, e.detail, e.file)
            return P.StreamNode((), self._columns, stream, self._source_name(), None, 0)
        if self._empty_is_data and len(src) == 0:
            return MappableDataset._make_plan(self)
        return super()._make_plan()


_CMU_NAMES = ("aew", "ahw", "aup", "awb", "axb", "bdl", "clb", "eey", "fem", "gka", "jmk", "ksp", "ljm", "lnh",
              "rms", "rxr", "slp", "slt")


def _cmu_line(line: str) -> tuple[str, str] | None:
    """(utterance id, transcript) of a ``( arctic_a0001 "Text." )`` line of txt.done.data."""
    text = line.strip()
    if not (text.startswith("(") and text.endswith(")")):
        return None
    inner = text[1:-1].strip()
    parts = inner.split(None, 1)
    if len(parts) != 2 or not parts[0].startswith("arctic_"):
        return None
    quoted = parts[1].strip()
    if len(quoted) < 2 or quoted[0] != '"' or quoted[-1] != '"':
        return None
    return parts[0][len("arctic_"):], quoted[1:-1]


@with_sampling_args
class CMUArcticDataset(_AudioDataset):
    """The CMU Arctic speech corpus of one speaker: ``dataset_dir/cmu_us_<name>_arctic/`` with
    ``etc/txt.done.data`` (``( arctic_a0001 "Text." )`` lines) and ``wav/arctic_<id>.wav``.

    Columns: ``waveform`` (float32, (channels, frames)), ``sample_rate`` (uint32, always 16000:
    another rate is an error), ``transcript`` (str), ``utterance_id`` (str, e.g. ``'a0001'``), in
    the order of txt.done.data.

    Args:
        dataset_dir (str): The folder holding ``cmu_us_<name>_arctic``.
        name (str, optional): The speaker, one of 'aew', 'ahw', 'aup', 'awb', 'axb', 'bdl', 'clb',
            'eey', 'fem', 'gka', 'jmk', 'ksp', 'ljm', 'lnh', 'rms', 'rxr', 'slp', 'slt'. Default: None, 'aew'.
        {sampling_args}

    Raises:
        TypeError, ValueError: a bad argument (MindSpore's messages).
        RuntimeError: when read: a missing txt.done.data or wav file, a malformed line, a rate
            other than 16000 Hz.

    Examples:
        >>> import headrace.dataset as ds
        >>> d = ds.CMUArcticDataset("/data/cmu_arctic", name="bdl", shuffle=False)  # doctest: +SKIP
    """

    _columns = ("waveform", "sample_rate", "transcript", "utterance_id")
    _rate, _rate_dtype, _corpus = 16000, np.uint32, "CMUArctic"

    def __init__(self, dataset_dir, name=None, num_samples=None, num_parallel_workers=None, shuffle=None,
                 sampler=None, num_shards=None, shard_id=None, cache=None):
        self.dataset_dir = check_dir(dataset_dir)
        self.name = _check_choice(name, _CMU_NAMES, "name", "aew")
        FileSourceDataset.__init__(self, num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache)

    def _rows(self, op: str) -> list[tuple]:
        base = os.path.join(self.dataset_dir, f"cmu_us_{self.name}_arctic")
        label = os.path.join(base, "etc", "txt.done.data")
        rows = []
        for n, line in _numbered_lines(label, op, "label file"):
            parsed = _cmu_line(line)
            if parsed is None:
                raise PipelineError(op, f"Invalid file, the file may not be a CMUArctic dataset file: {label} "
                                        f"(line {n}: {line.strip()[:80]!r}).", file=label)
            uid, text = parsed
            rows.append((os.path.join(base, "wav", f"arctic_{uid}.wav"), text, uid))
        return rows


_GENRES = ("blues", "classical", "country", "disco", "hiphop", "jazz", "metal", "pop", "reggae", "rock")

# The fault-filtered split of GTZAN (Kereliuk, Sturm and Larsen, 2015) that MindSpore's usages
# select: file numbers per genre, read off MindSpore 2.10 over a folder of all 1000 files.
_GTZAN_SPLITS = {
    "train": {
        "blues": "29-49 73-97",
        "classical": "30-33 43-48 50-67 80-99",
        "country": "19-26 28-29 65-99",
        "disco": "5 15-20 22-37 39-45 47 49 53-54 56-57 59 61 70 73-74 89",
        "hiphop": "2-25 28-29 31-38 41-42 55-61 77-80",
        "jazz": "0-1 11-24 41 47-72",
        "metal": "2-3 5 21 24 35 46-57 59-66 69 71-72 79-80 84 86 89-99",
        "pop": "2-9 11-12 16-20 23-29 31-36 38-42 44 46 49-50 80 97-99",
        "reggae": "0-2 4 6 9 11-12 14-32 42-45 49-51 54-60 63 69",
        "rock": "0-9 16-26 57-70 91-99",
    },
    "valid": {
        "blues": "0-11 50-60",
        "classical": "0-10 68-76",
        "country": "0-7 9-18 27 41-42 45 49",
        "disco": "0 2-4 6-14 46 48 52 67-68 72 75 90 95",
        "hiphop": "81-98",
        "jazz": "2-10 25-32",
        "metal": "0-1 6-11 16-20 36-37 68 76-77 81-82",
        "pop": "10 53 55 58-62 81 83-86",
        "reggae": "61-62 70 72 74 76-78 85 92-99",
        "rock": "38 49-56 71-85",
    },
    "test": {
        "blues": "12-28 61-72 98-99",
        "classical": "11-29 34-41 49 77-79",
        "country": "30-40 43-44 46-48 50-51 53-64",
        "disco": "1 21 58 62-66 69 76-88 91-94 96-97 99",
        "hiphop": "0 26-27 30 40 43-45 51-54 62-75 99",
        "jazz": "73-99",
        "metal": "12-15 22-23 25-33 38-39 67 70 73-75 78 83 85 87-88",
        "pop": "0-1 13-14 43 63-66 69-79 82 88-96",
        "reggae": "34-40 46-48 52-53 64-68 71 79 82-84 87-90",
        "rock": "10-15 27-37 39-48 86-90",
    },
}


def _gtzan_split(usage: str) -> list[tuple[str, int]]:
    out = []
    for genre in _GENRES:
        for part in _GTZAN_SPLITS[usage][genre].split():
            lo, _, hi = part.partition("-")
            out.extend((genre, i) for i in range(int(lo), int(hi or lo) + 1))
    return out


@with_sampling_args
class GTZANDataset(_AudioDataset):
    """The GTZAN music genre collection: ``dataset_dir/<genre>/<genre>.000NN.wav`` for the ten genres.

    Columns: ``waveform`` (float32, (channels, frames)), ``sample_rate`` (uint32, always 22050:
    another rate is an error), ``label`` (str, the genre). ``usage`` 'train' (443 files), 'valid'
    (197) and 'test' (290) read the fault-filtered split, in genre and number order, skipping files
    that are absent; 'all' reads every file of each genre folder named ``<name>.<number>.wav`` (a
    dot before ``.wav``, as MindSpore tests it), genres in the order above and files in the order the
    file system lists them (as MindSpore does).

    Args:
        dataset_dir (str): The folder holding the genre folders.
        usage (str, optional): 'train', 'valid', 'test' or 'all'. Default: None, 'all'.
        {sampling_args}

    Examples:
        >>> import headrace.dataset as ds
        >>> d = ds.GTZANDataset("/data/gtzan/genres", usage="train")  # doctest: +SKIP
    """

    _columns = ("waveform", "sample_rate", "label")
    _usages = ("train", "valid", "test", "all")
    _rate, _rate_dtype, _corpus = 22050, np.uint32, "GTZAN"

    def _rows(self, op: str) -> list[tuple]:
        rows = []
        if self.usage == "all":
            for genre in _GENRES:
                folder = os.path.join(self.dataset_dir, genre)
                if os.path.isdir(folder):
                    # MindSpore's test of a GTZAN name: '<name>.<number>.wav' (a dot before '.wav')
                    rows.extend((os.path.join(folder, f), genre) for f in _listdir(folder, op, files_only=True)
                                if f.endswith(".wav") and "." in f[:-4])
        else:
            for genre, i in _gtzan_split(self.usage):
                path = os.path.join(self.dataset_dir, genre, f"{genre}.{i:05d}.wav")
                if os.path.isfile(path):
                    rows.append((path, genre))
        return rows

    def _no_data_detail(self) -> str:
        return f"Invalid data, no valid data found in path:{self.dataset_dir}"


_LIBRI_USAGES = ("dev-clean", "dev-other", "test-clean", "test-other", "train-clean-100", "train-clean-360",
                 "train-other-500")


@with_sampling_args
class LibriTTSDataset(_AudioDataset):
    """The LibriTTS corpus: ``dataset_dir/<usage>/<speaker>/<chapter>/`` with
    ``<speaker>_<chapter>.trans.tsv`` (utterance id, original text, normalized text per line) and
    ``<utterance id>.wav``.

    Columns: ``waveform`` (float32, (channels, frames)), ``sample_rate`` (uint32, always 24000:
    another rate is an error), ``original_text``, ``normalized_text`` (str), ``speaker_id``,
    ``chapter_id`` (uint32), ``utterance_id`` (str). Usages in the order of the list below, speaker
    and chapter folders in the order the file system lists them (as MindSpore does), utterances in
    the order of their .trans.tsv file; an absent usage folder is skipped.

    Args:
        dataset_dir (str): The folder holding the usage folders.
        usage (str, optional): 'dev-clean', 'dev-other', 'test-clean', 'test-other',
            'train-clean-100', 'train-clean-360', 'train-other-500' or 'all'. Default: None, 'all'.
        {sampling_args}

    Examples:
        >>> import headrace.dataset as ds
        >>> d = ds.LibriTTSDataset("/data/LibriTTS", usage="train-clean-100")  # doctest: +SKIP
    """

    _columns = ("waveform", "sample_rate", "original_text", "normalized_text", "speaker_id", "chapter_id",
                "utterance_id")
    _usages = _LIBRI_USAGES + ("all",)
    _rate, _rate_dtype, _corpus = 24000, np.uint32, "LibriTTS"

    def _rows(self, op: str) -> list[tuple]:
        rows: list[tuple] = []
        for usage in _LIBRI_USAGES if self.usage == "all" else (self.usage,):
            top = os.path.join(self.dataset_dir, usage)
            if not os.path.isdir(top):
                continue
            for speaker in _listdir(top, op):
                sdir = os.path.join(top, speaker)
                if not os.path.isdir(sdir):
                    continue
                for chapter in _listdir(sdir, op):
                    cdir = os.path.join(sdir, chapter)
                    tsv = os.path.join(cdir, f"{speaker}_{chapter}.trans.tsv")
                    if os.path.isfile(tsv):
                        rows.extend(self._rows_of(tsv, cdir, op))
        return rows

    @staticmethod
    def _rows_of(tsv: str, folder: str, op: str) -> list[tuple]:
        rows = []
        for n, line in _numbered_lines(tsv, op):
            fields = line.split("\t")
            ids = fields[0].split("_")
            if len(fields) != 3 or len(ids) != 4 or not all(p.isdigit() for p in ids[:2]):
                raise PipelineError(op, f"Invalid file, {tsv} line {n} is not '<speaker>_<chapter>_<n>_<m>\\t"
                                        f"<original text>\\t<normalized text>': {line[:80]!r}.", file=tsv)
            speaker, chapter = int(ids[0]), int(ids[1])
            if speaker > 0xFFFFFFFF or chapter > 0xFFFFFFFF:
                raise PipelineError(op, f"Invalid file, {tsv} line {n}: speaker or chapter id does not fit uint32.",
                                    file=tsv)
            rows.append((os.path.join(folder, f"{fields[0]}.wav"), fields[1], fields[2], (np.uint32, speaker),
                         (np.uint32, chapter), fields[0]))
        return rows

    def _no_data_detail(self) -> str:
        return (f"Invalid data, no valid data matching the dataset API LibriTTSDataset. Please check dataset API or "
                f"file path: {self.dataset_dir}.")


@with_sampling_args
class LJSpeechDataset(_AudioDataset):
    """The LJ Speech corpus: ``dataset_dir/metadata.csv`` (``id|transcription|normalized
    transcription`` lines) and ``dataset_dir/wavs/<id>.wav``.

    Columns: ``waveform`` (float32, (channels, frames)), ``sample_rate`` (int32),
    ``transcription``, ``normalized_transcription`` (str), in the order of metadata.csv.

    Args:
        dataset_dir (str): The folder holding metadata.csv and wavs/.
        {sampling_args}

    Examples:
        >>> import headrace.dataset as ds
        >>> d = ds.LJSpeechDataset("/data/LJSpeech-1.1")  # doctest: +SKIP
    """

    _columns = ("waveform", "sample_rate", "transcription", "normalized_transcription")

    def __init__(self, dataset_dir, num_samples=None, num_parallel_workers=None, shuffle=None, sampler=None,
                 num_shards=None, shard_id=None, cache=None):
        self.dataset_dir = check_dir(dataset_dir)
        FileSourceDataset.__init__(self, num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id,
                                   cache)

    def _rows(self, op: str) -> list[tuple]:
        meta = os.path.join(self.dataset_dir, "metadata.csv")
        rows = []
        for n, line in _numbered_lines(meta, op, "LJSpeech metadata file"):
            fields = line.split("|")
            if len(fields) != 3 or not fields[0]:
                raise PipelineError(op, f"Invalid file, {meta} line {n} is not 'id|transcription|normalized "
                                        f"transcription': {line[:80]!r}.", file=meta)
            rows.append((os.path.join(self.dataset_dir, "wavs", f"{fields[0]}.wav"), fields[1], fields[2]))
        return rows


@with_sampling_args
class SpeechCommandsDataset(_AudioDataset):
    """The Speech Commands corpus: ``dataset_dir/<word>/<speaker>_nohash_<n>.wav``, with
    ``testing_list.txt`` and ``validation_list.txt`` naming the test and validation files
    (``_background_noise_`` is not read).

    Columns: ``waveform`` (float32, (channels, frames)), ``sample_rate`` (int32), ``label`` (str,
    the word), ``speaker_id`` (str), ``utterance_number`` (int32); rows in path order. 'train' is
    every file in neither list.

    Args:
        dataset_dir (str): The corpus folder.
        usage (str, optional): 'train', 'test', 'valid' or 'all'. Default: None, 'all'.
        {sampling_args}

    Examples:
        >>> import headrace.dataset as ds
        >>> d = ds.SpeechCommandsDataset("/data/speech_commands_v0.02", usage="valid")  # doctest: +SKIP
    """

    _columns = ("waveform", "sample_rate", "label", "speaker_id", "utterance_number")
    _empty_is_data = True  # a usage that selects no file reads nothing (MindSpore too)
    _usages = ("train", "test", "valid", "all")

    def _listed(self, name: str, op: str) -> set[str]:
        path = os.path.join(self.dataset_dir, name)
        return {os.path.normpath(line.strip()) for _, line in _numbered_lines(path, op, name)}

    def _rows(self, op: str) -> list[tuple]:
        found = []
        for word in sorted(_listdir(self.dataset_dir, op, "directory")):
            folder = os.path.join(self.dataset_dir, word)
            if word == "_background_noise_" or not os.path.isdir(folder):
                continue
            found.extend(os.path.join(word, f) for f in sorted(_listdir(folder, op, "directory", files_only=True))
                         if f.endswith(".wav"))
        if not found:
            raise PipelineError(op, f"Invalid file, no .wav files found under {self.dataset_dir}",
                                file=self.dataset_dir)
        if self.usage != "all":
            test, valid = self._listed("testing_list.txt", op), self._listed("validation_list.txt", op)
            keep = {"test": lambda r: r in test, "valid": lambda r: r in valid,
                    "train": lambda r: r not in test and r not in valid}[self.usage]
            found = [r for r in found if keep(os.path.normpath(r))]
        rows = []
        for rel in found:
            word, name = os.path.split(rel)
            speaker, sep, number = name[:-len(".wav")].partition("_nohash_")
            if not sep or not number.isdigit() or int(number) > checks.INT32_MAX:
                raise PipelineError(op, f"Invalid file name, failed to get file info: {name} (expected "
                                        "'<speaker>_nohash_<n>.wav').", file=os.path.join(self.dataset_dir, rel))
            rows.append((os.path.join(self.dataset_dir, rel), word, speaker, (np.int32, int(number))))
        return rows


class _TedliumSource:
    """Rows of (stm file, line): a segment of a talk's SPHERE file and the line's fields."""

    column_names = ("waveform", "sample_rate", "transcript", "talk_id", "speaker_id", "identifier")

    def __init__(self, op: str, rows: list[tuple[str, str, int, float, float, str, str, str, str]]) -> None:
        self.op = op
        self.rows = rows  # (sph path, stm path, line, start s, end s, transcript, talk, speaker, identifier)

    def __len__(self) -> int:
        return len(self.rows)

    def file_of(self, index: int) -> str:
        return self.rows[index][0]

    def read(self, index: int) -> tuple:
        sph, stm, line, start, end, transcript, talk, speaker, ident = self.rows[index]
        op = self.op
        try:
            size = audio_io.sphere_header_size(_file_bytes(sph, op, 0, 16))
            fmt = audio_io.parse_sphere_header(_file_bytes(sph, op, 0, size))
        except audio_io.AudioFormatError as e:
            raise PipelineError(op, f"Invalid file, {sph} cannot be read as a SPHERE file: {e}", file=sph) from e
        first, last = int(start * fmt.rate), int(end * fmt.rate)  # truncated, as MindSpore cuts segments
        if last < first:
            raise PipelineError(op, f"Invalid data, {stm} line {line} ends ({end} s) before it starts ({start} s).",
                                file=stm)
        length = (last - first) * fmt.frame_bytes
        raw = _file_bytes(sph, op, fmt.header_size + first * fmt.frame_bytes, length)
        if len(raw) != length or (fmt.frames is not None and last > fmt.frames):
            raise PipelineError(op, f"Invalid data, failed to read data part from sph file: {sph}: the segment "
                                    f"{start}-{end} s of {stm} line {line} runs past the end of the file.", file=sph)
        wave = audio_io.decode_sphere(fmt, raw)
        return (wave, np.array(fmt.rate, dtype=np.int32), np.array(transcript), np.array(talk), np.array(speaker),
                np.array(ident))


@with_sampling_args
class TedliumDataset(_AudioDataset):
    """The TED-LIUM corpus: talks as NIST SPHERE files cut into segments by their STM transcripts.

    Release 1 and 2 read ``dataset_dir/<usage>/stm/<talk>.stm`` and ``<usage>/sph/<talk>.sph`` for
    usage 'train', 'test', 'dev' (or all three); release 3 reads ``dataset_dir/data/stm`` and
    ``data/sph`` (usage 'all' only). Each STM line ``talk channel speaker start end <identifier>
    transcript`` is one row: the frames ``int(start * rate)`` to ``int(end * rate)`` of the talk.

    Columns: ``waveform`` (float32, (channels, frames)), ``sample_rate`` (int32), ``transcript``,
    ``talk_id``, ``speaker_id``, ``identifier`` (str). Row order is MindSpore's: by the line's number
    within its file compared as text ("10" before "2"), then by file name, then by usage.

    Args:
        dataset_dir (str): The release folder.
        release (str): 'release1', 'release2' or 'release3'.
        usage (str, optional): 'train', 'test', 'dev' or 'all' (release 3: 'all'). Default: None, 'all'.
        extensions (str, optional): Extension of the audio files; only '.sph'. Default: None, '.sph'.
        {sampling_args}

    Raises:
        TypeError, ValueError: a bad argument (MindSpore's messages).
        RuntimeError: an extension other than '.sph'; when read: a missing stm folder, a malformed
            STM line, a segment outside its file.

    Examples:
        >>> import headrace.dataset as ds
        >>> d = ds.TedliumDataset("/data/TEDLIUM_release1", "release1", usage="dev")  # doctest: +SKIP
    """

    _columns = _TedliumSource.column_names

    def __init__(self, dataset_dir, release, usage=None, extensions=None, num_samples=None,
                 num_parallel_workers=None, shuffle=None, sampler=None, num_shards=None, shard_id=None, cache=None):
        self.dataset_dir = check_dir(dataset_dir)
        self.release = _check_choice(release, ("release1", "release2", "release3"), "release")
        valid = ("all",) if self.release == "release3" else ("train", "test", "dev", "all")
        self.usage = _check_choice(usage, valid, "usage", "all")
        if extensions is not None:
            checks.check_type(extensions, str, "extensions")
            if extensions != ".sph":
                raise RuntimeError(f"TedliumNode: extension {extensions} is not supported.")
        self.extensions = ".sph"
        FileSourceDataset.__init__(self, num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id, cache)

    def _folders(self) -> list[str]:
        if self.release == "release3":
            return [os.path.join(self.dataset_dir, "data")]
        usages = ("train", "test", "dev") if self.usage == "all" else (self.usage,)
        return [os.path.join(self.dataset_dir, u) for u in usages]

    def _make_source(self) -> _TedliumSource:
        op = self._source_name()
        keyed = []
        for folder in self._folders():
            stm_dir = os.path.join(folder, "stm")
            if not os.path.isdir(stm_dir):
                raise PipelineError(op, f"Invalid file, failed to open folder: {stm_dir}", file=stm_dir)
            for name in _listdir(stm_dir, op):
                stm = os.path.join(stm_dir, name)
                if not name.endswith(".stm") or not os.path.isfile(stm):
                    continue
                sph = os.path.join(folder, "sph", name[:-len(".stm")] + self.extensions)
                for n, line in enumerate(_text_lines(stm, op)):
                    if line.strip():
                        keyed.append(((str(n), name, stm), (sph, stm) + self._fields(line, stm, n, op)))
        keyed.sort(key=lambda kv: kv[0])
        return _TedliumSource(op, [row for _, row in keyed])

    @staticmethod
    def _fields(line: str, stm: str, n: int, op: str) -> tuple:
        """(line, start, end, transcript, talk, speaker, identifier) of STM line ``n`` (0-based)."""
        parts = line.strip().split(" ", 6)
        try:
            if len(parts) < 6:
                raise ValueError("fewer than 6 fields")
            start, end = float(parts[3]), float(parts[4])
        except ValueError as e:
            raise PipelineError(op, f"Invalid file, {stm} line {n + 1} is not 'talk channel speaker start end "
                                    f"<identifier> transcript' ({e}): {line[:80]!r}.", file=stm) from e
        transcript = parts[6] if len(parts) > 6 else ""
        return (n + 1, start, end, transcript, parts[0], parts[2], parts[5])

    def _no_data_detail(self) -> str:
        return ("Invalid data, no valid data matching the dataset API TedliumDataset. Please check file path or "
                "dataset API.")


@with_sampling_args
class YesNoDataset(_AudioDataset):
    """The YesNo corpus: ``dataset_dir/<l1>_<l2>_..._<l8>.wav``, each name listing the clip's labels.

    Columns: ``waveform`` (float32, (channels, frames)), ``sample_rate`` (int32), ``label`` (int32,
    one per number of the name); files in the order the file system lists them (as MindSpore does).

    Args:
        dataset_dir (str): The folder holding the wav files.
        {sampling_args}

    Examples:
        >>> import headrace.dataset as ds
        >>> d = ds.YesNoDataset("/data/waves_yesno")  # doctest: +SKIP
    """

    _columns = ("waveform", "sample_rate", "label")

    def __init__(self, dataset_dir, num_samples=None, num_parallel_workers=None, shuffle=None, sampler=None,
                 num_shards=None, shard_id=None, cache=None):
        self.dataset_dir = check_dir(dataset_dir)
        FileSourceDataset.__init__(self, num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id,
                                   cache)

    def _rows(self, op: str) -> list[tuple]:
        rows = []
        for name in _listdir(self.dataset_dir, op, files_only=True):
            path = os.path.join(self.dataset_dir, name)
            if not name.endswith(".wav"):
                continue
            labels = name[:-len(".wav")].split("_")
            if not all(p.isdigit() and int(p) <= checks.INT32_MAX for p in labels):
                raise PipelineError(op, f"Invalid file name, {name} is not labels joined by '_' (e.g. "
                                        "'0_1_0_0_1_0_1_1.wav').", file=path)
            rows.append((path, np.array([int(p) for p in labels], dtype=np.int32)))
        return rows

    def _no_data_detail(self) -> str:
        return f"Invalid file, no .wav files found under {self.dataset_dir}"
