"""Converters from common dataset formats to MindRecord (MindSpore's ``mindspore.mindrecord`` tools).

Each has MindSpore's constructor and ``transform()`` / ``run()``, writes through ``FileWriter``
with MindSpore's schema, and shows a tqdm progress bar when run in a terminal. The same
conversions are available from the command line as ``headrace convert``.
"""
from ._common import PathNotExistsError
from .images import Cifar100ToMR, Cifar10ToMR, ImageNetToMR, MnistToMR
from .tables import CsvToMR, FixedLenFeature, TFRecordToMR

__all__ = ["Cifar100ToMR", "Cifar10ToMR", "CsvToMR", "FixedLenFeature", "ImageNetToMR", "MnistToMR",
           "PathNotExistsError", "TFRecordToMR"]
