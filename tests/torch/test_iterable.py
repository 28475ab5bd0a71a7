"""as_iterable_dataset: DataLoader workers split their rank's rows, set_epoch reaches persistent
workers, len(), and text values that torch's default collate takes."""
import copy
import pickle
from types import SimpleNamespace
from unittest import mock

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import headrace.dataset as ds
import headrace.torch._iterable as iterable
from headrace._feed.shard import reshard
from headrace.torch import as_iterable_dataset

# What each rank reads in one process (num_workers=0) under ds.config.set_seed(3):
# (rows, world size, shuffle) -> [rank 0's order, rank 1's, ...]
RANK_ORDERS = {
    (7, 1, False): [[0, 1, 2, 3, 4, 5, 6]],
    (7, 1, True): [[3, 6, 0, 2, 5, 1, 4]],
    (10, 1, False): [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]],
    (10, 1, True): [[3, 1, 8, 5, 2, 6, 9, 7, 0, 4]],
    (7, 2, False): [[0, 2, 4, 6], [1, 3, 5, 0]],  # rank 1 comes up short: row 0 pads it (ranks stay even)
    (7, 2, True): [[0, 2, 3, 1], [6, 5, 4, 0]],
    (10, 2, False): [[0, 2, 4, 6, 8], [1, 3, 5, 7, 9]],
    (10, 2, True): [[0, 4, 5, 1, 8], [7, 2, 3, 9, 6]],
}


def _make(rows, world=1, rank=0, shuffle=False, batch=None, **batch_kw):
    ds.config.set_seed(3)
    data = ds.NumpySlicesDataset({"x": np.arange(rows)}, shuffle=shuffle)
    if batch:
        data = data.batch(batch, **batch_kw)
    with mock.patch.object(iterable, "torch_shard", return_value=(world, rank)):  # a simulated world
        return as_iterable_dataset(data)


def _read_as_worker(items, workers, wid):
    """The items DataLoader worker ``wid`` of ``workers`` reads (torch's get_worker_info says which it is)."""
    with mock.patch("torch.utils.data.get_worker_info", return_value=SimpleNamespace(num_workers=workers, id=wid)):
        return [item[0].tolist() for item in items]


def _loader(items, **kw):
    return torch.utils.data.DataLoader(items, multiprocessing_context="fork" if kw.get("num_workers") else None, **kw)


@pytest.mark.parametrize("batch", [None, 2])
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("world", [1, 2])
@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("rows", [7, 10])
def test_workers_split_their_ranks_rows_each_once(rows, workers, world, shuffle, batch):
    for rank in range(world):
        order = RANK_ORDERS[rows, world, shuffle][rank]
        items = _make(rows, world, rank, shuffle, batch)
        alone = [r[0].tolist() for r in items]
        assert (sum(alone, []) if batch else alone) == order
        for wid in range(workers):
            mine = order[wid::workers]  # positions wid, wid + workers, ... of the rank's order
            want = [mine[i:i + 2] for i in range(0, len(mine), 2)] if batch else mine
            assert _read_as_worker(items, workers, wid) == want


@pytest.mark.filterwarnings("ignore:This DataLoader will create 3 worker processes")  # on a 2-core machine
def test_a_dataloader_delivers_each_row_once_in_the_ranks_order():
    # 7 rows, 2 workers, torch batching: no row repeats (the last batch is short instead)
    assert [b[0].tolist() for b in _loader(_make(7), batch_size=2, num_workers=2)] == [[0, 2], [1, 3], [4, 6], [5]]
    # unbatched: torch takes the workers' items in turn, which is the rank's order
    assert [int(b[0]) for b in _loader(_make(10, shuffle=True), batch_size=None, num_workers=3)] == \
        [3, 1, 8, 5, 2, 6, 9, 7, 0, 4]
    # a batching pipeline: each worker batches its own rows
    got = [b[0].tolist() for b in _loader(_make(10, shuffle=True, batch=2), batch_size=None, num_workers=2)]
    assert got == [[3, 8], [1, 5], [2, 9], [6, 7], [0], [4]]


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_set_epoch_reaches_persistent_workers(context):
    ds.config.set_seed(3)
    items = as_iterable_dataset(ds.NumpySlicesDataset({"x": np.arange(8)}, shuffle=True))
    want = [[3, 1, 0, 5, 2, 6, 4, 7], [3, 7, 2, 0, 6, 5, 1, 4], [0, 3, 5, 2, 6, 1, 4, 7]]
    alone = []
    for epoch in range(3):
        items.set_epoch(epoch)
        alone.append([int(b[0]) for b in torch.utils.data.DataLoader(items, batch_size=None)])
    assert alone == want
    loader = torch.utils.data.DataLoader(items, batch_size=None, num_workers=2, persistent_workers=True,
                                         multiprocessing_context=context)
    got = []
    for epoch in range(3):
        items.set_epoch(epoch)
        got.append([int(b[0]) for b in loader])
    assert got == want
    del loader  # ends the workers


def test_copies_and_pickles_carry_the_epoch_but_not_its_sharing():
    items = _make(4, shuffle=True)
    items.set_epoch(2)
    twin = copy.deepcopy(items)
    again = pickle.loads(pickle.dumps(items))
    assert twin.epoch == again.epoch == 2
    items.set_epoch(5)
    twin.set_epoch(1)
    assert (items.epoch, twin.epoch, again.epoch) == (5, 1, 2)
    assert [int(r[0]) for r in twin] == [int(r[0]) for r in _with_epoch(_make(4, shuffle=True), 1)]


def _with_epoch(items, epoch):
    items.set_epoch(epoch)
    return items


@pytest.mark.filterwarnings("ignore:This DataLoader will create 3 worker processes")
def test_len_is_what_the_rank_yields_in_one_process():
    assert len(_make(7)) == 7
    assert [len(_make(7, 2, r)) for r in range(2)] == [4, 4]  # ceil(7 / 2), padded
    assert len(_make(7, batch=2)) == 4
    assert len(_make(7, batch=2, drop_remainder=True)) == 3
    assert [len(_make(10, 2, r, batch=2)) for r in range(2)] == [3, 3]
    items = _make(7)
    assert len(_loader(items, batch_size=None)) == 7 and len(_loader(items, batch_size=2)) == 4
    # unbatched, exact with workers
    loader = _loader(items, batch_size=None, num_workers=3)
    assert len(loader) == len(list(loader)) == 7


def test_with_workers_a_batching_pipeline_may_yield_more_than_its_len_and_torch_warns():
    items = _make(6, batch=2)  # one process: [0, 1], [2, 3], [4, 5]
    loader = _loader(items, batch_size=None, num_workers=2)
    assert len(loader) == 3
    with pytest.warns(UserWarning, match="was reported to be 3"):
        got = [b[0].tolist() for b in loader]
    assert got == [[0, 2], [1, 3], [4], [5]]  # each worker batches its 3 rows


def test_text_values_are_python_strings_for_torchs_default_collate():
    data = ds.NumpySlicesDataset({"s": np.array(list("abcde")), "b": np.array([b"p", b"q", b"r", b"s", b"t"]),
                                  "x": np.arange(5)}, shuffle=False)
    got = list(torch.utils.data.DataLoader(as_iterable_dataset(data, as_dict=True), batch_size=2))
    assert [{k: v if isinstance(v, list) else v.tolist() for k, v in b.items()} for b in got] == [
        {"s": ["a", "b"], "b": [b"p", b"q"], "x": [0, 1]},
        {"s": ["c", "d"], "b": [b"r", b"s"], "x": [2, 3]},
        {"s": ["e"], "b": [b"t"], "x": [4]}]
    first = next(iter(as_iterable_dataset(data)))
    assert first[0] == "a" and type(first[0]) is str and first[1] == b"p" and type(first[1]) is bytes
    assert isinstance(first[2], torch.Tensor) and first[2].ndim == 0
    # text arrays of higher rank stay NumPy arrays (torch has no text tensors), as Loader gives them
    table = ds.NumpySlicesDataset({"s": np.array([["a", "b"], ["c", "d"]])}, shuffle=False)
    rows = [r[0] for r in as_iterable_dataset(table)]
    assert all(type(r) is np.ndarray for r in rows) and [r.tolist() for r in rows] == [["a", "b"], ["c", "d"]]


def _parts(data, parts, world=1, rank=0):
    out = []
    for part in range(parts):
        it = reshard(data, world, rank, "test", split=(parts, part)).create_tuple_iterator(output_numpy=True,
                                                                                            num_epochs=1)
        out.append([int(r[0]) for r in it])
    return out


def test_split_keeps_the_sources_own_num_samples_sampler_and_shard():
    rows = {"x": np.arange(10)}
    assert _parts(ds.NumpySlicesDataset(rows, shuffle=False, num_samples=7), 2) == [[0, 2, 4, 6], [1, 3, 5]]
    assert _parts(ds.NumpySlicesDataset(rows, shuffle=False, num_samples=3), 2, 2, 1) == [[1, 5], [3]]
    assert _parts(ds.NumpySlicesDataset(rows, sampler=ds.SequentialSampler(2, 5)), 2) == [[2, 4, 6], [3, 5]]
    assert _parts(ds.NumpySlicesDataset(rows, shuffle=False, num_shards=2, shard_id=1), 2) == [[1, 5, 9], [3, 7]]
    assert _parts(ds.NumpySlicesDataset(rows, shuffle=False), 12) == [[i] for i in range(10)] + [[], []]


def test_without_a_seed_split_parts_agree_on_one_order():
    data = ds.NumpySlicesDataset({"x": np.arange(9)}, shuffle=True)
    first = _parts(data, 3)
    assert sorted(sum(first, [])) == list(range(9)) and _parts(data, 3) == first


class _PythonSampler:
    def __iter__(self):
        return iter([2, 0, 1])

    def __len__(self):
        return 3


@pytest.mark.parametrize("make, message", [
    (lambda: ds.zip((ds.NumpySlicesDataset({"a": [1]}), ds.NumpySlicesDataset({"b": [1]}))),
     "cannot split a pipeline with several sources .*num_workers=0"),
    (lambda: ds.NumpySlicesDataset({"x": np.arange(3)}, sampler=_PythonSampler()), "Python sampler object"),
    (lambda: ds.GeneratorDataset(lambda: iter([(np.array(1),)]), ["x"]), "reads a generator or iterable"),
])
def test_pipelines_workers_cannot_split_are_refused_by_name(make, message):
    with pytest.raises(ValueError, match=message):
        _read_as_worker(as_iterable_dataset(make()), 2, 1)
