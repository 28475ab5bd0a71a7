"""The datasets made from one other dataset (``_OneInputDataset``): the input is checked first and
is the only child; the worker count is kept where the operation takes one."""
import pytest

import headrace.dataset as ds
from headrace.dataset import _datasets as D

# class: the arguments after input_dataset
ONE_INPUT = {
    D.MapDataset: (abs,), D.BatchDataset: (2,), D.BucketBatchByLengthDataset: (["a"], [2], [1, 1]),
    D.ShuffleDataset: (4,), D.RepeatDataset: (2,), D.TakeDataset: (1,), D.SkipDataset: (1,),
    D.FilterDataset: (bool,), D.ProjectDataset: (["a"],), D.RenameDataset: (["a"], ["b"]), D.FlatMapDataset: (abs,),
}


def _source():
    return ds.NumpySlicesDataset({"a": [1, 2, 3]}, shuffle=False)


@pytest.mark.parametrize("cls", ONE_INPUT, ids=lambda c: c.__name__)
def test_the_input_is_checked_first_and_is_the_only_child(cls):
    with pytest.raises(TypeError, match=r"^Argument input_dataset with value \[1\] is not of type"):
        cls([1], *ONE_INPUT[cls])
    src = _source()
    d = cls(src, *ONE_INPUT[cls])
    assert d.children == [src]


@pytest.mark.parametrize("cls", [D.MapDataset, D.BatchDataset])
def test_a_bad_input_is_reported_before_an_unknown_keyword(cls):
    with pytest.raises(TypeError, match="input_dataset"):
        cls([1], *ONE_INPUT[cls], bogus=1)
    with pytest.raises(TypeError, match=rf"^{cls.__name__}.__init__\(\) got an unexpected keyword argument 'bogus'$"):
        cls(_source(), *ONE_INPUT[cls], bogus=1)


@pytest.mark.parametrize("cls, args", [(D.MapDataset, (abs, None, None, 3)), (D.BatchDataset, (2, False, 3)),
                                       (D.FilterDataset, (bool, None, 3))], ids=lambda v: getattr(v, "__name__", ""))
def test_the_worker_count_is_kept(cls, args):
    assert cls(_source(), *args).num_parallel_workers == 3
