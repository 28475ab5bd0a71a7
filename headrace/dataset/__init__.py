"""headrace.dataset: MindSpore's ``mindspore.dataset`` API (``import headrace.dataset as ds``).

Examples:
    >>> import headrace.dataset as ds
    >>> d = ds.NumpySlicesDataset({"x": [1, 2, 3]}, shuffle=False).map(lambda x: x * 2).batch(2)
    >>> [r["x"].tolist() for r in d.create_dict_iterator(output_numpy=True)]
    [[2, 4], [6]]
"""
from headrace.dataset import core, text, transforms, vision
from headrace.dataset import dataloader  # noqa: F401 - MindSpore 2.10 imports it with mindspore.dataset
from headrace.dataset._datasets import (
    BatchDataset, BatchInfo, BucketBatchByLengthDataset, ConcatDataset, Dataset, FilterDataset, FlatMapDataset,
    MapDataset, PaddedBatchDataset, ProjectDataset, RenameDataset, RepeatDataset, ShuffleDataset, SkipDataset,
    TakeDataset, ZipDataset, zip,  # noqa: A004 - MindSpore's ds.zip
)
from headrace.dataset._cache_plan import auto_cache
from headrace.dataset._iterators import DictIterator, TupleIterator
from headrace.dataset.callback import DSCallback, WaitedDSCallback
from headrace.dataset._schema import Schema
from headrace.dataset._serdes import compare, deserialize, serialize, show
from headrace.dataset._sources.audio import (
    CMUArcticDataset, GTZANDataset, LJSpeechDataset, LibriTTSDataset, SpeechCommandsDataset, TedliumDataset,
    YesNoDataset,
)
from headrace.dataset._sources.base import MappableDataset, SourceDataset
from headrace.dataset._sources.coco_voc import CocoDataset, VOCDataset
from headrace.dataset._sources.generator import GeneratorDataset, NumpySlicesDataset
from headrace.dataset._sources.mindrecord import MindDataset
from headrace.dataset._sources.misc import FakeImageDataset, PaddedDataset, RandomDataset
from headrace.dataset._sources.mnist_cifar import (
    Cifar100Dataset, Cifar10Dataset, FashionMnistDataset, MnistDataset,
)
from headrace.dataset._sources.text_corpora import (
    AGNewsDataset, AmazonReviewDataset, DBpediaDataset, EnWik9Dataset, IMDBDataset, PennTreebankDataset,
    SogouNewsDataset, WikiTextDataset, YahooAnswersDataset, YelpReviewDataset,
)
from headrace.dataset._sources.text_files import CSVDataset, TextFileDataset
from headrace.dataset._sources.text_iwslt import IWSLT2016Dataset, IWSLT2017Dataset
from headrace.dataset._sources.text_parsed import (
    CLUEDataset, CoNLL2000Dataset, Multi30kDataset, SQuADDataset, SST2Dataset, UDPOSDataset,
)
from headrace.dataset._sources.tfrecord import TFRecordDataset
from headrace.dataset._sources.vision_folders import CelebADataset, ImageFolderDataset, ManifestDataset
from headrace.dataset._tensor import Tensor
from headrace.dataset.cache import DatasetCache
# Modules above Dataset that lend it what it needs through _provided (sync_wait, device_que).
from headrace.dataset import _provided, _sync, _transfer  # noqa: F401
from headrace.dataset.core import config
from headrace.dataset.profiling import profile as profile  # headrace's own (not in __all__: not a MindSpore name)
from headrace.dataset.samplers import (
    BuiltinSampler, DistributedSampler, IterSampler, PKSampler, RandomSampler, Sampler, SequentialSampler,
    Shuffle, SubsetRandomSampler, SubsetSampler, WeightedRandomSampler,
)

__all__ = [
    "AGNewsDataset", "AmazonReviewDataset", "DBpediaDataset", "EnWik9Dataset", "IMDBDataset", "PennTreebankDataset",
    "SogouNewsDataset", "WikiTextDataset", "YahooAnswersDataset", "YelpReviewDataset", "CoNLL2000Dataset",
    "Multi30kDataset", "SST2Dataset", "UDPOSDataset", "CLUEDataset", "SQuADDataset", "IWSLT2016Dataset",
    "IWSLT2017Dataset",
    "CMUArcticDataset", "GTZANDataset", "LJSpeechDataset", "LibriTTSDataset", "SpeechCommandsDataset",
    "TedliumDataset", "YesNoDataset",
    "BatchDataset", "BatchInfo", "BucketBatchByLengthDataset", "BuiltinSampler", "CSVDataset",
    "CelebADataset", "Cifar100Dataset", "Cifar10Dataset", "CocoDataset", "ConcatDataset", "Dataset",
    "DictIterator", "DistributedSampler", "FakeImageDataset", "FashionMnistDataset", "FilterDataset",
    "FlatMapDataset", "GeneratorDataset", "ImageFolderDataset", "IterSampler", "ManifestDataset",
    "MapDataset", "MappableDataset", "MindDataset", "MnistDataset", "NumpySlicesDataset", "PKSampler",
    "PaddedBatchDataset", "PaddedDataset", "ProjectDataset", "RandomDataset", "RandomSampler",
    "RenameDataset", "RepeatDataset", "Sampler", "Schema", "SequentialSampler", "Shuffle", "ShuffleDataset",
    "SkipDataset", "SourceDataset", "SubsetRandomSampler", "SubsetSampler", "TFRecordDataset", "TakeDataset",
    "Tensor", "TextFileDataset", "TupleIterator", "VOCDataset", "WeightedRandomSampler", "ZipDataset",
    "DSCallback", "WaitedDSCallback",
    "DatasetCache", "auto_cache",
    "compare", "config", "core", "deserialize", "serialize", "show", "text", "transforms", "vision", "zip",
]

# ds.deserialize builds a source from the class of this name here (see _provided).
_provided.provide(public_names=globals())

# As in MindSpore, ``ds.transforms.vision`` is the vision package (set here: transforms never imports vision).
transforms.vision = vision  # type: ignore[attr-defined]
