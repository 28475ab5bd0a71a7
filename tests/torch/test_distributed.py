"""Sharding by torch.distributed rank (2 processes over gloo) and by DataLoader worker."""
import json
import os
import sys
import textwrap

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import headrace.dataset as ds
from headrace._feed.shard import reshard
from headrace.torch import as_iterable_dataset
from tests.helpers import run_together

RANK_SCRIPT = textwrap.dedent("""
    import json, os, sys
    import numpy as np, torch.distributed as dist
    import headrace.dataset as ds
    from headrace.torch import Loader
    dist.init_process_group("gloo", init_method="file://" + sys.argv[1], rank=int(sys.argv[2]), world_size=2)
    data = ds.NumpySlicesDataset({"x": np.arange(11)}, shuffle=True).batch(2)
    loader = Loader(data)
    out = {"shard": [loader.num_shards, loader.shard_id], "len": len(loader),
           "epochs": [[b[0].tolist() for b in loader] for _ in range(2)]}
    # torch's DataLoader over as_iterable_dataset: the rank's shard of 2, split between 2 workers
    import torch.utils.data
    from headrace.torch import as_iterable_dataset
    items = as_iterable_dataset(ds.NumpySlicesDataset({"x": np.arange(16)}, shuffle=False).batch(2))
    out["iterable"] = [b[0].tolist() for b in torch.utils.data.DataLoader(items, batch_size=None, num_workers=2)]
    out["iterable_len"] = len(items)
    gathered = [None, None]
    dist.all_gather_object(gathered, out)  # both ranks agree on what they read
    if dist.get_rank() == 0:
        print(json.dumps(gathered))
    loader.close()
    dist.destroy_process_group()
""")


def test_each_rank_reads_its_shard_under_torch_distributed(tmp_path):
    script = tmp_path / "rank.py"
    script.write_text(RANK_SCRIPT)
    store = tmp_path / "store"
    env = {**os.environ, "PYTHONPATH": os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", "")}
    outs = run_together([[sys.executable, str(script), str(store), str(r)] for r in range(2)], env, timeout=240)
    r0, r1 = json.loads(outs[0])
    assert r0["shard"] == [2, 0] and r1["shard"] == [2, 1]
    assert r0["len"] == r1["len"] == 3  # ceil(11 / 2) = 6 rows each, in batches of 2
    for epoch in range(2):
        a = sum(r0["epochs"][epoch], [])
        b = sum(r1["epochs"][epoch], [])
        assert len(a) == len(b) == 6
        assert sorted(set(a) | set(b)) == list(range(11))  # 12 reads: one row repeats (MindSpore's rule)
    assert r0["epochs"][0] != r0["epochs"][1]  # each epoch its own shuffle, agreed by both ranks
    # each rank reads its half (rows r, r + 2, ...), each of its DataLoader workers every other row
    # of that, batched by the worker; torch takes the workers' batches in turn
    assert r0["iterable"] == [[0, 4], [2, 6], [8, 12], [10, 14]]
    assert r1["iterable"] == [[1, 5], [3, 7], [9, 13], [11, 15]]
    assert r0["iterable_len"] == r1["iterable_len"] == 4


def test_reshard_matches_a_source_built_with_num_shards():
    data = ds.NumpySlicesDataset({"x": np.arange(10)}, shuffle=False).map(lambda x: x * 10).batch(2)
    twin = reshard(data, 3, 1, "test")
    direct = ds.NumpySlicesDataset({"x": np.arange(10)}, shuffle=False, num_shards=3, shard_id=1)
    direct = direct.map(lambda x: x * 10).batch(2)
    got = [r[0].tolist() for r in twin.create_tuple_iterator(output_numpy=True, num_epochs=1)]
    assert got == [r[0].tolist() for r in direct.create_tuple_iterator(output_numpy=True, num_epochs=1)]
    assert got == [[10, 40], [70, 0]]
    assert not data.is_sharded() and twin.is_sharded()  # the user's pipeline is unchanged
    assert reshard(data, 1, 0, "test") is data


@pytest.mark.parametrize("make, message", [
    (lambda: ds.NumpySlicesDataset([1, 2], num_shards=2, shard_id=0), "already sharded"),
    (lambda: ds.zip((ds.NumpySlicesDataset({"a": [1]}), ds.NumpySlicesDataset({"b": [1]}))),
     "several sources .*ZipDataset joins 2"),
    (lambda: ds.GeneratorDataset(lambda: iter([(np.array(1),)]), ["x"]), "reads a generator or iterable"),
    (lambda: ds.NumpySlicesDataset([1, 2, 3], sampler=ds.SequentialSampler()), "reads through a sampler"),
])
def test_pipelines_that_cannot_be_resharded_say_what_to_do(make, message):
    with pytest.raises(ValueError, match=message):
        reshard(make(), 2, 1, "who")


def test_reshard_checks_its_arguments():
    data = ds.NumpySlicesDataset([1, 2])
    with pytest.raises(ValueError, match=r"shard_id must be in \[0, 1\] \(num_shards=2\), but got 2"):
        reshard(data, 2, 2, "who")
    with pytest.raises(TypeError, match="num_shards must be an int"):
        reshard(data, 2.0, 0, "who")


@pytest.mark.parametrize("workers", [0, 2])
def test_as_iterable_dataset_shards_by_dataloader_worker(workers):
    ds.config.set_seed(1)  # without a seed an unsharded pipeline draws a new order every iteration
    data = ds.NumpySlicesDataset({"x": np.arange(12)}, shuffle=True).batch(3)
    wrapped = as_iterable_dataset(data)
    loader = torch.utils.data.DataLoader(wrapped, batch_size=None, num_workers=workers)
    first = [b[0].tolist() for b in loader]
    assert sorted(sum(first, [])) == list(range(12))  # every row once, no double shuffle or overlap
    assert all(len(b) == 3 for b in first) and all(isinstance(v, int) for b in first for v in b)
    again = [b[0].tolist() for b in loader]
    assert again == first  # the same pass unless set_epoch moves it
    wrapped.set_epoch(1)
    moved = [b[0].tolist() for b in loader]
    assert moved != first and sorted(sum(moved, [])) == list(range(12))


def test_as_iterable_dataset_dicts_and_torch_refuses_a_second_shuffle():
    data = ds.NumpySlicesDataset({"x": np.arange(4), "y": np.arange(4) * 2}, shuffle=False).batch(2)
    wrapped = as_iterable_dataset(data, as_dict=True, columns=["y"])
    assert [b["y"].tolist() for b in torch.utils.data.DataLoader(wrapped, batch_size=None)] == [[0, 2], [4, 6]]
    with pytest.raises(ValueError, match="shuffle"):
        torch.utils.data.DataLoader(wrapped, batch_size=None, shuffle=True)
    with pytest.raises(TypeError, match="as_dict must be True or False"):
        as_iterable_dataset(data, as_dict="no")
    with pytest.raises(ValueError, match="epoch must be >= 0, but got -2"):
        wrapped.set_epoch(-2)
    with pytest.raises(TypeError, match="epoch must be an int, but got 1.5"):
        wrapped.set_epoch(1.5)
    with pytest.raises(TypeError, match="headrace dataset"):
        as_iterable_dataset(range(3))
