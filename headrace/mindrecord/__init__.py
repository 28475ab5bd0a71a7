"""MindRecord files with MindSpore's ``mindspore.mindrecord`` API.

``FileWriter`` writes, ``FileReader`` iterates, ``MindPage`` groups rows by an index field, and
``reindex`` rebuilds a lost or damaged ``.db`` index from its data file, ``verify`` checks files in
full (``set_verify_on_open(True)`` makes every reader do it when it opens its files). Files are
byte-compatible with MindSpore 2.10 in both directions.
"""
from ._format.verify import ShardReport, get_verify_on_open, set_verify_on_open
from .common.exceptions import *  # noqa: F403 - MindSpore exports its exception names here too
from .common.exceptions import __all__ as _exception_names
from .config import set_dec_mode, set_enc_key, set_enc_mode
from .converters import (
    Cifar100ToMR, Cifar10ToMR, CsvToMR, FixedLenFeature, ImageNetToMR, MnistToMR, TFRecordToMR,
)
from ._reindex import reindex
from ._status import FAILED, SUCCESS, MSRStatus
from ._verify import verify
from .filereader import FileReader
from .filewriter import DroppedRow, FileWriter, InvalidRowWarning, WriteReport
from .mindpage import MindPage


__all__ = ["Cifar100ToMR", "Cifar10ToMR", "CsvToMR", "DroppedRow", "FAILED", "FileReader", "FileWriter",
           "FixedLenFeature", "ImageNetToMR", "InvalidRowWarning", "MSRStatus", "MindPage", "MnistToMR", "SUCCESS",
           "ShardReport", "TFRecordToMR", "WriteReport", "get_verify_on_open", "reindex", "set_verify_on_open",
           "set_dec_mode", "set_enc_key", "set_enc_mode", "verify"] + _exception_names
