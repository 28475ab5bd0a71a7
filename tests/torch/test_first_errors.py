"""A PyTorch user's first two errors (issue 38, item 6): torch's DataLoader given a headrace
pipeline says what to use instead, and int32 labels (MindSpore's convention) convert per column."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F
import torch.utils.data as tud

import headrace.dataset as ds
from headrace.torch import Loader, as_iterable_dataset


def _data():
    return ds.NumpySlicesDataset({"x": np.arange(12, dtype=np.float32).reshape(6, 2),
                                  "label": np.array([0, 1, 2, 1, 0, 2], np.int32)}, shuffle=False).batch(3)


def test_torchs_dataloader_on_a_pipeline_points_to_the_loader_and_as_iterable_dataset():
    with pytest.raises(TypeError) as info:
        next(iter(tud.DataLoader(_data())))
    assert str(info.value) == "'BatchDataset' object is not subscriptable"  # MindSpore's words...
    (note,) = info.value.__notes__  # ...and what to do instead, shown under them in the traceback
    assert "headrace.torch.Loader(dataset)" in note and "headrace.torch.as_iterable_dataset(dataset)" in note
    # what it points to works
    got = [b[1].tolist() for b in tud.DataLoader(as_iterable_dataset(_data()), batch_size=None)]
    assert got == [[0, 1, 2], [1, 0, 2]]


def test_a_pipeline_as_a_generator_source_is_still_iterated():
    g = ds.GeneratorDataset(_data(), ["x", "label"], shuffle=False)
    assert [r[1].tolist() for r in g.create_tuple_iterator(output_numpy=True)] == [[0, 1, 2], [1, 0, 2]]


def test_dtypes_converts_the_named_columns_for_torchs_losses():
    logits = torch.zeros(3, 3)
    with pytest.raises(RuntimeError):  # what the user met: int32 targets
        F.cross_entropy(logits, next(iter(Loader(_data())))[1])
    batches = list(Loader(_data(), dtypes={"label": torch.long}))
    assert [b[1].dtype for b in batches] == [torch.int64, torch.int64]
    assert [b[0].dtype for b in batches] == [torch.float32, torch.float32]
    assert [b[1].tolist() for b in batches] == [[0, 1, 2], [1, 0, 2]]
    assert float(F.cross_entropy(logits, batches[0][1])) == pytest.approx(np.log(3))
    as_dict = next(iter(Loader(_data(), as_dict=True, dtypes={"x": torch.float16, "label": torch.long})))
    assert (as_dict["x"].dtype, as_dict["label"].dtype) == (torch.float16, torch.int64)
    assert as_dict["x"].tolist() == [[0, 1], [2, 3], [4, 5]]


@pytest.mark.parametrize("dtypes,error,text", [
    ({"nope": torch.long}, ValueError, "dtypes names column 'nope', which the loader does not read; its columns are ['x', 'label']."),
    ({"label": "long"}, TypeError, "dtypes['label'] must be a torch.dtype (e.g. torch.long), but got 'long'."),
    ([("label", torch.long)], TypeError, "dtypes must be None or a dict of {column name: torch.dtype}"),
])
def test_dtypes_is_checked_when_the_loader_is_made(dtypes, error, text):
    with pytest.raises(error) as info:
        Loader(_data(), dtypes=dtypes)
    assert str(info.value).startswith(text)


def test_a_text_column_cannot_be_converted():
    d = ds.NumpySlicesDataset({"t": np.array(["a", "b"])}, shuffle=False).batch(2)
    with pytest.raises(TypeError, match="dtypes asks column 't' as torch.int64, but it holds ndarray"):
        next(iter(Loader(d, dtypes={"t": torch.long})))
