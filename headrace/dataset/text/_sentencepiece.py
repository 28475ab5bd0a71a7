"""SentencePieceVocab (trains a model with the ``sentencepiece`` package) and SentencePieceTokenizer."""
from __future__ import annotations

import io
import os
from typing import Any, Iterator

import numpy as np

from headrace._util.checks import check_type
from headrace.dataset.text._common import (
    SentencePieceModel, SPieceTokenizerLoadType, SPieceTokenizerOutType, TextOperation, decode_item, optional,
)

__all__ = ["SentencePieceTokenizer", "SentencePieceVocab"]

_RESERVED = ("input", "vocab_size", "model_prefix", "character_coverage", "model_type")


def _spm() -> Any:
    return optional("sentencepiece", "SentencePiece")


class SentencePieceVocab:
    """A trained SentencePiece model (its serialised bytes), as MindSpore's ``SentencePieceVocab``.

    Examples:
        >>> v = SentencePieceVocab.from_file([path], 100, 0.9995, SentencePieceModel.UNIGRAM, {})
        ... # doctest: +SKIP
    """

    def __init__(self) -> None:
        self._proto: bytes | None = None

    @property
    def model_proto(self) -> bytes:
        """The serialised model (what ``save_model`` writes)."""
        if self._proto is None:
            raise RuntimeError("SentencePieceVocab has not been built: use from_file() or from_dataset().")
        return self._proto

    @classmethod
    def from_file(cls, file_path: list, vocab_size: int, character_coverage: float, model_type: SentencePieceModel,
                  params: dict) -> "SentencePieceVocab":
        """Trains on text files (one sentence a line)."""
        check_type(file_path, list, "file_path")
        for p in file_path:
            check_type(p, str, "file_path")
            if not os.path.isfile(p):
                raise ValueError(f"file_path {p} is not exist or permission denied.")
        _check_train_args(vocab_size, character_coverage, model_type, params)
        return cls._train({"input": ",".join(file_path)}, vocab_size, character_coverage, model_type, params)

    @classmethod
    def from_dataset(cls, dataset: Any, col_names: list, vocab_size: int, character_coverage: float,
                     model_type: SentencePieceModel, params: dict) -> "SentencePieceVocab":
        """Trains on the strings of one column of a pipeline."""
        check_type(col_names, list, "col_names")
        for c in col_names:
            check_type(c, str, "col_names")
        _check_train_args(vocab_size, character_coverage, model_type, params)
        names = dataset.get_col_names()
        col = col_names[0] if col_names else names[0]
        if col not in names:
            raise RuntimeError(f"Invalid column name, column name: {col} does not exist, check existed column "
                               f"with dataset API 'get_col_names'")
        return cls._train({"sentence_iterator": _sentences(dataset, col)}, vocab_size, character_coverage,
                          model_type, params)

    @classmethod
    def _train(cls, source: dict, vocab_size: int, character_coverage: float, model_type: SentencePieceModel,
               params: dict) -> "SentencePieceVocab":
        spm = _spm()
        options = {k: v for k, v in params.items() if k not in _RESERVED}
        options.update(source, vocab_size=vocab_size, character_coverage=character_coverage,
                       model_type=_model_name(model_type), minloglevel=2)
        out = io.BytesIO()
        try:
            spm.SentencePieceTrainer.train(model_writer=out, **options)
        except (RuntimeError, OSError) as exc:
            raise RuntimeError(f"SentencePieceVocab: {exc}") from exc
        vocab = cls()
        vocab._proto = out.getvalue()
        return vocab

    @staticmethod
    def save_model(vocab: "SentencePieceVocab", path: str, filename: str) -> None:
        """Writes the model to ``path/filename`` (loadable by SentencePiece and SentencePieceTokenizer)."""
        check_type(vocab, SentencePieceVocab, "vocab")
        check_type(path, str, "path")
        check_type(filename, str, "filename")
        if not os.path.isdir(path):
            raise ValueError(f"path {path} is not exist or permission denied.")
        with open(os.path.join(path, filename), "wb") as f:
            f.write(vocab.model_proto)

    def __getstate__(self) -> dict:
        return {"proto": self._proto}

    def __setstate__(self, state: dict) -> None:
        self._proto = state["proto"]


def _model_name(model_type: Any) -> str:
    if isinstance(model_type, SentencePieceModel):
        return model_type.name.lower()
    return model_type.lower()


def _sentences(dataset: Any, col: str) -> Iterator[str]:
    for row in dataset.create_dict_iterator(num_epochs=1, output_numpy=True):
        a = row[col]
        for s in np.ravel(a).tolist():
            yield decode_item(s)


def _check_train_args(vocab_size: Any, character_coverage: Any, model_type: Any, params: Any) -> None:
    check_type(vocab_size, int, "vocab_size")
    if not 0 <= vocab_size <= 2**31 - 1:
        raise ValueError(f"Input vocab_size is not within the required interval of [0, {2**31 - 1}].")
    check_type(character_coverage, (int, float), "character_coverage")
    if not 0.98 <= character_coverage <= 1.0:
        raise ValueError("Input character_coverage is not within the required interval of [0.98, 1.0].")
    check_type(model_type, (str, SentencePieceModel), "model_type")
    check_type(params, dict, "params")
    for k, v in params.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"params should be a dict of str to str, but got {k!r}: {v!r}.")


class SentencePieceTokenizer(TextOperation):
    """Tokenizes one string with a SentencePiece model, into piece strings or ids (int32).

    Args:
        mode (Union[str, SentencePieceVocab]): a model file path, or a trained SentencePieceVocab.
        out_type (SPieceTokenizerOutType): STRING or INT.

    Examples:
        >>> tok = SentencePieceTokenizer("m.model", SPieceTokenizerOutType.STRING)  # doctest: +SKIP
    """

    def __init__(self, mode: Any, out_type: SPieceTokenizerOutType) -> None:
        check_type(mode, (str, SentencePieceVocab), "mode is not an instance of str or text.SentencePieceVocab.")
        check_type(out_type, SPieceTokenizerOutType, "out_type is not an instance of SPieceTokenizerOutType")
        _spm()
        self.mode, self.out_type = mode, out_type
        self.load_type = SPieceTokenizerLoadType.FILE if isinstance(mode, str) else SPieceTokenizerLoadType.MODEL
        self._proto = None if isinstance(mode, str) else mode.model_proto
        self._sp = None if isinstance(mode, str) else self._load()

    def _load(self) -> Any:
        if self._proto is None:
            if not os.path.isfile(self.mode):
                raise RuntimeError(f"SentencePieceTokenizer: Get real path failed, path={self.mode}")
            with open(self.mode, "rb") as f:
                self._proto = f.read()
        sp = _spm().SentencePieceProcessor()
        try:
            sp.LoadFromSerializedProto(self._proto)
        except (RuntimeError, OSError) as exc:
            raise RuntimeError(f"SentencePieceTokenizer: load model failed: {exc}") from exc
        return sp

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_sp"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __call__(self, *args: Any) -> np.ndarray:
        if len(args) != 1:
            raise RuntimeError("SentencePieceTokenizer: input should be one column data.")
        value = args[0]
        if not isinstance(value, str):
            a = np.asarray(value)
            if a.ndim != 0 or a.dtype.kind not in "US":
                raise RuntimeError("SentencePieceTokenizer: the input shape should be scalar and the input datatype "
                                   "should be string.")
            value = decode_item(a.item())
        if self._sp is None:
            self._sp = self._load()
        if self.out_type == SPieceTokenizerOutType.INT:
            return np.array(self._sp.EncodeAsIds(value), dtype=np.int32)
        pieces = self._sp.EncodeAsPieces(value)
        return np.array(pieces, dtype=str) if pieces else np.array([], dtype="<U1")
