"""MindSpore code imports deep module paths; headrace mirrors them with the same names."""
import importlib

import numpy as np
import pytest

import headrace.dataset as ds


@pytest.mark.parametrize("module, names", [
    ("headrace.dataset.engine", ["GeneratorDataset", "MapDataset", "Iterator", "RandomSampler", "BatchInfo"]),
    ("headrace.dataset.engine.datasets", ["GeneratorDataset", "NumpySlicesDataset", "MindDataset", "zip"]),
    ("headrace.dataset.engine.iterators", ["DictIterator", "TupleIterator", "Iterator", "Tensor"]),
    ("headrace.dataset.engine.samplers", ["DistributedSampler", "PKSampler", "Sampler", "SubsetSampler"]),
    ("headrace.dataset.core.config", ["set_seed", "get_seed", "set_num_parallel_workers", "load"]),
    ("headrace.dataset.vision.transforms", ["Decode", "Resize", "HWC2CHW", "RandomResizedCrop"]),
    ("headrace.dataset.vision.utils", ["Inter", "Border", "ImageBatchFormat"]),
    ("headrace.dataset.transforms.transforms", ["Compose", "TypeCast", "OneHot"]),
    ("headrace.mindrecord", ["FileWriter", "FileReader", "MindPage"]),
    ("headrace.common.dtype", ["int32", "float32", "string"]),
])
def test_deep_paths_export_the_same_objects(module, names):
    mod = importlib.import_module(module)
    for name in names:
        assert hasattr(mod, name), f"{module}.{name}"
    if module.startswith("headrace.dataset.engine"):
        for name in names:
            if hasattr(ds, name):
                assert getattr(mod, name) is getattr(ds, name)


def test_callback_and_debug_mirrors():
    assert importlib.import_module("headrace.dataset.callback").__all__ == [
        "DSCallback", "DSRunContext", "TrainSync", "WaitedDSCallback"]
    assert importlib.import_module("headrace.dataset.debug").__all__ == [
        "DebugHook", "PrintDataHook", "PrintMetaDataHook"]
    assert ds.DSCallback is importlib.import_module("headrace.dataset.callback").DSCallback


def test_mstype_works_where_mindspore_takes_a_dtype():
    import headrace.common.dtype as mstype
    d = ds.NumpySlicesDataset([1, 2], shuffle=False).map(ds.transforms.TypeCast(mstype.float32))
    out = [r[0] for r in d.create_tuple_iterator(output_numpy=True)]
    assert out[0].dtype == np.float32


@pytest.mark.parametrize("kwargs", [dict(offload=True)])  # cache=: tests/cache; callbacks=: test_callbacks
def test_unsupported_map_features_are_refused_not_ignored(kwargs):
    with pytest.raises(ValueError, match="not supported by headrace"):
        ds.NumpySlicesDataset([1]).map(abs, **kwargs)
