"""RankLoader: each Ray Train worker reads its shard of a headrace pipeline, resumable from the
Ray Train checkpoint."""
import json
import os

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.train")
from ray.train import Checkpoint, RunConfig, ScalingConfig
from ray.train.v2.api.data_parallel_trainer import DataParallelTrainer

import headrace.dataset as ds
from headrace.ray import RankLoader


def pipeline(path):
    return ds.MindDataset(path, ["label"]).batch(4)


def shard_labels(path, world, rank, epoch, seed):
    ds.config.set_seed(seed)
    it = ds.MindDataset(path, ["label"], num_shards=world, shard_id=rank).batch(4).create_tuple_iterator(
        output_numpy=True, num_epochs=epoch + 1)
    for _ in range(epoch):
        list(it)
    return [b[0].tolist() for b in it]


def train_loop(config):
    ds.config.set_seed(config["seed"])
    loader = RankLoader(pipeline(config["path"]), as_dict=True)
    resumed = loader.restore()   # ray.train.get_checkpoint(): None in this fresh run
    seen = []
    for i, batch in enumerate(loader):
        seen.append(batch["label"].tolist())
        if not resumed and i == 1:   # a checkpoint after two batches, then this run stops
            break
    folder = os.path.join(config["out"], f"rank{loader.rank}-{'b' if resumed else 'a'}")
    os.makedirs(folder)
    loader.save_to(folder)
    with open(os.path.join(folder, "seen.json"), "w") as f:
        json.dump({"rank": loader.rank, "world": loader.world_size, "seen": seen}, f)
    ray.train.report({"batches": len(seen)}, checkpoint=Checkpoint.from_directory(folder))
    loader.close()


def test_each_worker_reads_its_shard_and_resumes_from_the_checkpoint(local_ray, mr_set, tmp_path):
    storage = tmp_path / "storage"
    config = {"path": mr_set, "seed": 13, "out": str(tmp_path)}
    scaling = ScalingConfig(num_workers=2, resources_per_worker={"CPU": 0.5})
    result = DataParallelTrainer(train_loop, train_loop_config=config, scaling_config=scaling,
                                 run_config=RunConfig(name="first", storage_path=str(storage))).fit()
    assert result.error is None
    firsts = {json.load(open(tmp_path / f"rank{r}-a" / "seen.json"))["rank"]: json.load(
        open(tmp_path / f"rank{r}-a" / "seen.json")) for r in (0, 1)}
    for rank in (0, 1):
        assert firsts[rank]["world"] == 2
        assert firsts[rank]["seen"] == shard_labels(mr_set, 2, rank, 0, 13)[:2]
    # the reported checkpoint (Ray Train merges the ranks' folders into one) resumes each rank
    # right after its own second batch (here outside Ray Train, with the ranks given)
    for rank in (0, 1):
        ds.config.set_seed(13)
        loader = RankLoader(pipeline(mr_set), rank=rank, world_size=2)
        assert loader.restore(result.checkpoint) is True
        assert [b[0].tolist() for b in loader] == shard_labels(mr_set, 2, rank, 0, 13)[2:]
        loader.close()
    shards = [sum(shard_labels(mr_set, 2, r, 0, 13), []) for r in (0, 1)]
    assert len(shards[0]) == len(shards[1]) == 25 and sorted(shards[0] + shards[1]) == list(range(50))


def test_outside_ray_train_the_rank_is_given(mr_set, tmp_path):
    ds.config.set_seed(5)
    loader = RankLoader(pipeline(mr_set), rank=1, world_size=3)
    it = iter(loader)
    first = [next(it)[0].tolist() for _ in range(2)]
    folder = tmp_path / "ck"
    folder.mkdir()
    assert os.path.basename(loader.save_to(str(folder))) == "headrace-loader-rank00001.json"
    it.close()
    loader.close()
    again = RankLoader(pipeline(mr_set), rank=1, world_size=3)
    assert again.restore(str(folder)) is True
    rest = [b[0].tolist() for b in again]
    again.close()
    assert first + rest == shard_labels(mr_set, 3, 1, 0, 5)
    assert len(loader) == len(first + rest) == 5


def test_errors(mr_set, tmp_path):
    with pytest.raises(RuntimeError, match="headrace.ray.RankLoader: no Ray Train context here .*pass rank= and world_size="):
        RankLoader(pipeline(mr_set))
    with pytest.raises(ValueError, match="rank and world_size go together: give both or neither, but got rank=1, "
                                         "world_size=None."):
        RankLoader(pipeline(mr_set), rank=1)
    with pytest.raises(ValueError, match=r"shard_id must be in \[0, 1\] \(num_shards=2\), but got 2."):
        RankLoader(pipeline(mr_set), rank=2, world_size=2)
    with pytest.raises(TypeError, match="dataset must be a headrace dataset"):
        RankLoader([1, 2], rank=0, world_size=1)
    loader = RankLoader(pipeline(mr_set), rank=0, world_size=2)
    try:
        with pytest.raises(ValueError, match="holds no loader state"):
            loader.restore(str(tmp_path))
    finally:
        loader.close()
