"""RankLoader: each Ray Train worker reads its shard of a headrace pipeline, resumable from the
Ray Train checkpoint."""
import json
import os

import numpy as np
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
    with pytest.raises(RuntimeError, match="headrace.ray.train_shard: no Ray Train context here .*pass rank= and world_size= yourself."):
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


# ---- headrace.torch.Loader under TorchTrainer (gloo on CPU): rank and world size from Ray Train,
# its state in the Ray Train checkpoint, resumed on another number of workers

ROWS, BATCH, STOP = 48, 4, 3   # 24 rows a rank of 2; the first run stops after 3 batches a rank (24 rows read)


def torch_loop(config):
    import torch
    import torch.distributed as dist

    from headrace.ray import restore_loader, save_loader, train_shard
    from headrace.torch import Loader

    ds.config.set_seed(config["seed"])
    loader = Loader(numbered().batch(BATCH), as_dict=True, **train_shard())
    # the first run's checkpoint (Ray Train 2's way to start a new run from one: a config entry);
    # in the first run None: ray.train.get_checkpoint(), None in a fresh run
    resumed = restore_loader(loader, config["checkpoint"])
    seen = []
    for i, batch in enumerate(loader):
        assert isinstance(batch["label"], torch.Tensor)
        seen.append(batch["label"].tolist())
        if not resumed and i == STOP - 1:
            break
    rank = loader.shard_id
    folder = os.path.join(config["out"], f"{config['run']}-rank{rank}")
    os.makedirs(folder)
    save_loader(loader, folder)
    with open(os.path.join(folder, "seen.json"), "w") as f:
        json.dump({"rank": rank, "world": loader.num_shards, "dist": [dist.get_rank(), dist.get_world_size()],
                   "seen": seen}, f)
    ray.train.report({"batches": len(seen)}, checkpoint=None if resumed else Checkpoint.from_directory(folder))
    loader.close()


def torch_fit(loop, config, workers, storage, **run):
    """``loop`` run by a TorchTrainer of ``workers`` CPU workers (gloo), its run named ``config["run"]``;
    ``run``: more RunConfig fields. The result, checked for no error."""
    from ray.train.torch import TorchConfig, TorchTrainer

    scaling = ScalingConfig(num_workers=workers, use_gpu=False, resources_per_worker={"CPU": 0.5})
    result = TorchTrainer(loop, train_loop_config=config, torch_config=TorchConfig(backend="gloo"),
                          scaling_config=scaling,
                          run_config=RunConfig(name=config["run"], storage_path=str(storage), **run)).fit()
    assert result.error is None
    return result


def fit_torch(config, workers, storage, checkpoint=None):
    result = torch_fit(torch_loop, {**config, "checkpoint": checkpoint}, workers, storage)
    seen = {}
    for rank in range(workers):
        with open(os.path.join(config["out"], f"{config['run']}-rank{rank}", "seen.json")) as f:
            got = json.load(f)
        assert (got["rank"], got["world"], got["dist"]) == (rank, workers, [rank, workers])
        seen[rank] = got["seen"]
    return result, seen


def numbered():
    """Rows 0..47 under a shuffle."""
    return ds.NumpySlicesDataset({"label": np.arange(ROWS, dtype=np.int64)}, shuffle=True)


def shard_rows(world, rank):
    ds.config.set_seed(21)
    data = ds.NumpySlicesDataset({"label": np.arange(ROWS, dtype=np.int64)}, shuffle=True, num_shards=world,
                                 shard_id=rank).batch(BATCH)
    return [b[0].tolist() for b in data.create_tuple_iterator(output_numpy=True, num_epochs=1)]


def resumed_locally(checkpoint, rank, world):
    """What rank ``rank`` of ``world`` reads after restoring ``checkpoint``, outside Ray Train."""
    from headrace.ray import restore_loader
    from headrace.torch import Loader

    ds.config.set_seed(21)
    loader = Loader(numbered().batch(BATCH), rank=rank, world_size=world)
    try:
        assert restore_loader(loader, checkpoint) is True
        return [b[0].tolist() for b in loader]
    finally:
        loader.close()


def test_torch_loader_under_torch_trainer_resumes_on_one_and_on_three_workers(local_ray, tmp_path):
    pytest.importorskip("torch")
    config = {"seed": 21, "out": str(tmp_path)}
    first, seen = fit_torch({**config, "run": "two"}, 2, tmp_path / "storage")
    # each rank read its own shard (MindDataset's num_shards / shard_id rule) up to the checkpoint
    for rank in (0, 1):
        assert seen[rank] == shard_rows(2, rank)[:STOP]
    read = [r for rank in (0, 1) for b in seen[rank] for r in b]
    assert len(read) == len(set(read)) == 2 * STOP * BATCH
    for workers in (1, 3):
        _, rest = fit_torch({**config, "run": f"on{workers}"}, workers, tmp_path / "storage", first.checkpoint)
        # every rank reads as many rows (24 left: 24 on one, 8 a rank on three), each left row once,
        # none read before the checkpoint again: no batch skipped or repeated
        after = [r for rank in range(workers) for b in rest[rank] for r in b]
        assert [len(rest[rank]) for rank in range(workers)] == [6 // workers] * workers
        assert sorted(read + after) == list(range(ROWS))
        # and exactly the rows the same restore gives outside Ray Train, batch by batch
        for rank in range(workers):
            assert rest[rank] == resumed_locally(first.checkpoint, rank, workers)


# ---- a training worker killed at step k: Ray Train's FailureConfig(max_failures=1) starts the
# worker group again from the latest reported checkpoint, and each rank's loader restored from it
# goes on right after that checkpoint's batch

KILL_AT = 3   # rank 1 dies on receiving its batch of step 3 (the fourth), in the first attempt only


def squared():
    """``numbered()`` mapped to (label, square): a map the restore reads through."""
    return numbered().map(lambda x: (x, x * x), "label", ["label", "square"])


def killed_loop(config):
    """A step a batch: its rows all-reduced over the ranks (gloo), then a checkpoint of the loader's
    position and of the history of the steps so far (the rows of each, its attempt), so that the
    checkpoint Ray Train restores carries exactly the steps its position is after."""
    import torch
    import torch.distributed as dist
    from ray.train import CheckpointConsistencyMode

    from headrace.ray import restore_loader, save_loader, train_shard
    from headrace.torch import Loader

    marker = os.path.join(config["out"], "killed.json")
    attempt = int(os.path.exists(marker))
    ds.config.set_seed(config["seed"])
    loader = Loader(squared().batch(BATCH), as_dict=True, **train_shard())
    rank = loader.shard_id
    history = []
    checkpoint = ray.train.get_checkpoint()
    if restore_loader(loader, checkpoint):   # nothing to restore in the first attempt
        with checkpoint.as_directory() as folder, open(os.path.join(folder, f"history-{rank}.json")) as f:
            history = json.load(f)
    for batch in loader:
        step = len(history)
        if (rank, step, attempt) == (1, KILL_AT, 0):
            # once Ray Train has committed the checkpoints reported so far (so which one it restores
            # is known), the worker dies without a word
            done = ray.train.get_all_reported_checkpoints(consistency_mode=CheckpointConsistencyMode.COMMITTED)
            with open(marker + ".tmp", "w") as f:
                json.dump({"rank": rank, "step": step, "committed": [c.metrics["step"] for c in done]}, f)
            os.replace(marker + ".tmp", marker)
            os._exit(1)
        rows = batch["label"].tolist()
        total = torch.tensor(sum(rows))
        dist.all_reduce(total)
        history.append({"step": step, "attempt": attempt, "rows": rows, "squares": batch["square"].tolist(),
                        "total": int(total)})
        folder = os.path.join(config["out"], f"attempt{attempt}-step{step}-rank{rank}")
        os.makedirs(folder)
        save_loader(loader, folder)
        with open(os.path.join(folder, f"history-{rank}.json"), "w") as f:
            json.dump(history, f)
        ray.train.report({"step": step}, checkpoint=Checkpoint.from_directory(folder))
    loader.close()


def test_a_worker_killed_at_step_k_restarts_from_the_checkpoint_every_row_once(local_ray, tmp_path):
    pytest.importorskip("torch")
    from ray.train import FailureConfig

    config = {"seed": 21, "out": str(tmp_path), "run": "killed"}
    result = torch_fit(killed_loop, config, 2, tmp_path / "storage", failure_config=FailureConfig(max_failures=1))
    # rank 1 died at step k of the first attempt, after the checkpoints of steps 0..k-1 were committed
    with open(tmp_path / "killed.json") as f:
        assert json.load(f) == {"rank": 1, "step": KILL_AT, "committed": list(range(KILL_AT))}
    # the last checkpoint holds each rank's history: the steps before the kill from the first
    # attempt, the rest from the second, which began right after the restored checkpoint's step
    steps = ROWS // 2 // BATCH
    with result.checkpoint.as_directory() as folder:
        histories = []
        for rank in (0, 1):
            with open(os.path.join(folder, f"history-{rank}.json")) as f:
                histories.append(json.load(f))
    for rank, history in enumerate(histories):
        assert [h["step"] for h in history] == list(range(steps))
        assert [h["attempt"] for h in history] == [0] * KILL_AT + [1] * (steps - KILL_AT)
        # the rank's shard in its order, batch by batch: no batch skipped or repeated over the restart
        assert [h["rows"] for h in history] == shard_rows(2, rank)
        assert [h["squares"] for h in history] == [[r * r for r in h["rows"]] for h in history]
    # the two ranks stepped together, in both attempts
    assert [h["total"] for h in histories[0]] == [h["total"] for h in histories[1]] == [
        sum(a["rows"]) + sum(b["rows"]) for a, b in zip(*histories)]
    # every row of the epoch exactly once
    delivered = [r for history in histories for h in history for r in h["rows"]]
    assert sorted(delivered) == list(range(ROWS))


def test_torch_loader_reads_the_shard_of_a_given_rank_and_resumes_it_from_a_folder(tmp_path):
    pytest.importorskip("torch")
    from headrace.ray import restore_loader, save_loader
    from headrace.torch import Loader

    ds.config.set_seed(21)
    loader = Loader(numbered().batch(BATCH), rank=2, world_size=3)
    assert (loader.shard_id, loader.num_shards, len(loader)) == (2, 3, 4)
    it = iter(loader)
    first = [next(it)[0].tolist()]
    it.close()
    assert os.path.basename(save_loader(loader, str(tmp_path))) == "headrace-loader-rank00002.json"
    loader.close()
    ds.config.set_seed(21)
    again = Loader(numbered().batch(BATCH), rank=2, world_size=3)
    try:
        assert restore_loader(again, tmp_path) is True
        assert first + [b[0].tolist() for b in again] == shard_rows(3, 2)
    finally:
        again.close()


def test_torch_loader_and_checkpoint_errors(tmp_path):
    pytest.importorskip("torch")
    from headrace.ray import restore_loader, save_loader, train_shard
    from headrace.torch import Loader

    data = numbered().batch(BATCH)
    with pytest.raises(ValueError, match=r"^rank and world_size go together: give both or neither, but got "
                                         r"rank=None, world_size=2\.$"):
        Loader(data, world_size=2)
    with pytest.raises(ValueError, match=r"^rank=0 and world_size=2 name a shard to read, but shard=False reads the "
                                         r"whole dataset: drop one or the other\.$"):
        Loader(data, shard=False, rank=0, world_size=2)
    with pytest.raises(ValueError, match=r"^shard_id must be in \[0, 1\] \(num_shards=2\), but got 2\.$"):
        Loader(data, rank=2, world_size=2)
    with pytest.raises(TypeError, match=r"^num_shards must be an int, but got '2' of type str\.$"):
        Loader(data, rank=0, world_size="2")
    with pytest.raises(RuntimeError, match=r"^headrace.ray.train_shard: no Ray Train context here .*call it inside "
                                           r"train_loop_per_worker, or pass rank= and world_size= yourself\.$"):
        train_shard()
    with pytest.raises(TypeError, match=r"^headrace.ray.save_loader: loader must be a headrace loader .* but got "
                                        r"list\.$"):
        save_loader([], str(tmp_path))
    loader = Loader(data, rank=1, world_size=2)
    try:
        with pytest.raises(ValueError, match=r"^directory must be an existing directory, but got 'no/such/dir'\.$"):
            save_loader(loader, "no/such/dir")
        with pytest.raises(TypeError, match=r"^checkpoint must be a ray.train.Checkpoint, a directory or None, but "
                                            r"got int\.$"):
            restore_loader(loader, 5)
        with pytest.raises(ValueError, match=r"^headrace.ray.restore_loader: the checkpoint .* holds no loader state "
                                             r"\(headrace-loader-rank00001.json or headrace-loader-rank00000.json\); "
                                             r"save it with save_loader\.$"):
            restore_loader(loader, str(tmp_path))
        with pytest.raises(RuntimeError, match=r"^headrace.ray.restore_loader: no Ray Train context here .*pass "
                                               r"checkpoint="):
            restore_loader(loader)
    finally:
        loader.close()


def test_a_minddataset_state_of_two_ranks_resumes_on_three_and_on_one(mr_set, tmp_path):
    """MindDataset deals its MindRecord order out over the ranks; the rows of the epoch that no rank
    had received are that order's rest, dealt out again over the new ranks."""
    ds.config.set_seed(3)
    for rank in (0, 1):
        loader = RankLoader(pipeline(mr_set), rank=rank, world_size=2)
        it = iter(loader)
        next(it), next(it)
        it.close()
        loader.save_to(str(tmp_path))
        loader.close()
    shards = [sum(shard_labels(mr_set, 2, r, 0, 3), []) for r in (0, 1)]
    order = [shards[p % 2][p // 2] for p in range(50)]   # the epoch's order, as the two shards deal it
    assert sorted(order) == list(range(50))
    for world in (3, 1):
        size = -(-34 // world)                             # 50 - 16 rows left, as many on every rank
        for rank in range(world):
            ds.config.set_seed(3)
            again = RankLoader(pipeline(mr_set), rank=rank, world_size=world)
            try:
                assert again.restore(str(tmp_path)) is True
                got = sum((b[0].tolist() for b in again), [])
                # positions 16 + rank + world * j of the order; past its end (pads), rows read before
                assert got == [order[p] if p < 50 else order[(p - 50) % 16]
                               for p in range(16 + rank, 16 + world * size, world)]
                assert [b[0].tolist() for b in again] == shard_labels(mr_set, world, rank, 1, 3)
            finally:
                again.close()


def test_one_checkpoint_holds_several_loaders_by_key(tmp_path):
    pytest.importorskip("torch")
    from headrace.ray import restore_loader, save_loader
    from headrace.torch import Loader

    ds.config.set_seed(21)
    train, evaluate = (Loader(numbered().batch(BATCH), rank=1, world_size=2) for _ in range(2))
    for loader, batches in ((train, 2), (evaluate, 1)):
        it = iter(loader)
        for _ in range(batches):
            next(it)
        it.close()
    assert os.path.basename(save_loader(train, tmp_path, key="train")) == "headrace-train-rank00001.json"
    assert os.path.basename(save_loader(evaluate, tmp_path, key="eval")) == "headrace-eval-rank00001.json"
    train.close()
    evaluate.close()
    for key, done in (("train", 2), ("eval", 1)):
        ds.config.set_seed(21)
        again = Loader(numbered().batch(BATCH), rank=1, world_size=2)
        try:
            assert restore_loader(again, tmp_path, key=key) is True
            assert [b[0].tolist() for b in again] == shard_rows(2, 1)[done:]
        finally:
            again.close()
    with pytest.raises(ValueError, match=r"^headrace.ray.save_loader: key must be a name of letters, digits, '_', "
                                         r"'\.' and '-' \(not starting with '\.' or '-'\), but got '\.\./x'\.$"):
        save_loader(train, tmp_path, key="../x")
    with pytest.raises(ValueError, match=r"holds no loader state \(headrace-test-rank00001.json or "
                                         r"headrace-test-rank00000.json\)"):
        restore_loader(train, tmp_path, key="test")
