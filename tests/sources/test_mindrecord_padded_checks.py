"""A padded sample that does not fit its column fails when the pipeline runs, as a RuntimeError (and
a ValueError / TypeError, as before), with MindSpore 2.10's sentence first where it has one (an
array for a scalar column: the oracle's text, "{}" included) and headrace's reason after it."""
import numpy as np
import pytest

import headrace.dataset as ds
from headrace.mindrecord import FileWriter


@pytest.fixture
def path(tmp_path):
    p = str(tmp_path / "pad.mindrecord")
    writer = FileWriter(p, 1)
    writer.add_schema({"file_name": {"type": "string"}, "label": {"type": "int32"}, "data": {"type": "float64"}}, "s")
    writer.write_raw_data([{"file_name": str(i), "label": i, "data": float(i)} for i in range(10)])
    writer.commit()
    return p


@pytest.mark.parametrize("column, value, kind, reason", [
    ("data", np.array([1, 2, 3]), ValueError, "padded_sample['data'] does not fit column 'data' (float64): expected a "
                                              "scalar, got shape (3,)"),
    ("file_name", np.array([1, 2]), TypeError, "padded_sample['file_name'] does not fit column 'file_name' (string): "
                                               "expected str, got ndarray"),
    ("label", np.array([1.5]), ValueError, "padded_sample['label'] does not fit column 'label' (int32): array([1.5]) "
                                           "is not a whole number for a int32 column"),
])
def test_an_array_for_a_scalar_column(path, column, value, kind, reason):
    pad = {"data": 1.5, "file_name": "x", "label": -1, column: value}
    d = ds.MindDataset(path, ["label", "file_name", "data"], 1, num_shards=4, shard_id=3, padded_sample=pad,
                       num_padded=2, shuffle=False)
    with pytest.raises(RuntimeError) as info:
        list(d.create_dict_iterator(num_epochs=1, output_numpy=True))
    assert isinstance(info.value, kind)
    assert str(info.value) == (f"Invalid padded_sample, the value of column: {column} should be string or number but "
                               f"got: {{}}, check 'padded_sample'. {reason}")


def test_a_value_out_of_range_keeps_headrace_wording(path):
    d = ds.MindDataset(path, ["label"], 1, num_shards=4, shard_id=3, padded_sample={"label": 2**40}, num_padded=2,
                       shuffle=False)
    with pytest.raises(RuntimeError, match=r"^padded_sample\['label'\] does not fit column 'label' \(int32\): "
                                           r"1099511627776 does not fit in int32$") as info:
        list(d.create_dict_iterator(num_epochs=1, output_numpy=True))
    assert isinstance(info.value, ValueError)


def _chain(*samplers):
    for parent, child in zip(samplers, samplers[1:]):
        parent.add_child(child)
    return samplers[0]


_CHAIN_TEXT = ("When the padded sample logic is enabled and use sampler chain,the first sampler which is specified by "
               "parameter sampler or (num_shards, shard_id) is not distributed sampling.")


@pytest.mark.parametrize("make, num_padded, want", [
    # MindSpore 2.10 (oracle): a chain needs a distributed sampler innermost, checked before the sample
    (lambda: _chain(ds.SequentialSampler(), ds.RandomSampler()), 1, _CHAIN_TEXT),
    (lambda: _chain(ds.DistributedSampler(2, 0, shuffle=False), ds.RandomSampler()), 1, _CHAIN_TEXT),
    # whose shards must divide the rows, padded ones included
    (lambda: _chain(ds.RandomSampler(), ds.DistributedSampler(2, 0, shuffle=False)), 1,
     "Invalid data, the size of dataset and padded samples: 11 can not be divisible by the value of 'num_shards': 2."),
    (lambda: _chain(ds.RandomSampler(), ds.DistributedSampler(2, 0, shuffle=False)), 2, 6),
])
def test_padded_rows_under_a_sampler_chain(path, make, num_padded, want):
    pad = {"data": np.array([1, 2, 3]) if want == _CHAIN_TEXT else 1.5, "file_name": "x", "label": -1}
    d = ds.MindDataset(path, ["label", "file_name", "data"], 1, sampler=make(), padded_sample=pad,
                       num_padded=num_padded)
    if isinstance(want, int):
        rows = [int(r["label"]) for r in d.create_dict_iterator(num_epochs=1, output_numpy=True)]
        assert len(rows) == want and set(rows) <= set(range(10)) | {-1}
        return
    with pytest.raises(RuntimeError) as info:
        list(d.create_dict_iterator(num_epochs=1, output_numpy=True))
    assert str(info.value).startswith(want)
