"""One program run against three implementations of the same API: MindSpore 2.10's
``mindspore.dataset.dataloader``, headrace's ``headrace.dataset.dataloader`` and (where the
case does not use NumPy generators) torch's ``torch.utils.data``. ``run_cases(api)`` returns each
case's output as plain JSON-able values, with every tensor written ["T", dtype, values]."""

PROGRAM = r'''
import json
import multiprocessing

import numpy as np


def describe(v):
    name = type(v).__name__
    if name == "Tensor" or name == "Parameter" or hasattr(v, "asnumpy") or type(v).__module__.startswith("torch"):
        arr = v.asnumpy() if hasattr(v, "asnumpy") else (v.numpy() if hasattr(v, "numpy") else np.asarray(v))
        return ["T", str(arr.dtype), arr.tolist()]
    if isinstance(v, np.ndarray):
        return ["A", str(v.dtype), v.tolist()]
    if isinstance(v, dict):
        return ["dict", [[k, describe(x)] for k, x in v.items()]]
    if isinstance(v, (list, tuple)):
        return [name, [describe(x) for x in v]]
    if isinstance(v, np.generic):
        return ["np", str(v.dtype), v.item()]
    return [name, v]


def error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return [type(e).__name__, str(e)]
    return ["no error", ""]


def until_error(loader, go_on=True):
    """[batches before the error, [error type, first line with the pid as N], the batches after
    (when ``go_on``)]."""
    import re
    it, out = iter(loader), [[], None, []]
    while True:
        try:
            b = next(it)
        except StopIteration:
            return out
        except Exception as e:  # noqa: BLE001
            if out[1] is not None:
                raise
            out[1] = [type(e).__name__, re.sub(r"pid: \d+", "pid: N", str(e).splitlines()[0])]
            if not go_on:
                e.__traceback__ = None  # its frames hold the iterator: torch's then ends 10 s later, in a GC
                return out
            continue
        out[0 if out[1] is None else 2].append(describe(b))


def fails_at(Dataset, n, at, act):
    """A map-style ``Dataset`` of the items 0..n-1 whose item ``at`` first calls ``act(at)`` (which
    raises, or ends its worker)."""
    class FailsAt(Dataset):
        def __len__(self):
            return n

        def __getitem__(self, i):
            if i == at:
                act(i)
            return i

    return FailsAt()


def no_sample(i):
    raise KeyError("no sample %d" % i)


def run_cases(api, numpy_generators=True):
    DataLoader, Dataset, IterableDataset = api["DataLoader"], api["Dataset"], api["IterableDataset"]
    TensorDataset, default_collate, default_convert = api["TensorDataset"], api["default_collate"], api["default_convert"]
    tensor, get_worker_info, Sampler = api["tensor"], api["get_worker_info"], api["Sampler"]

    class Records(Dataset):
        def __len__(self):
            return 7

        def __getitem__(self, i):
            return {"a": np.array([i, i * 2], dtype=np.int32), "b": float(i) / 2, "c": (i, "s%d" % i),
                    "d": np.float32(i), "e": [i, i + 1], "f": bool(i % 2)}

    class Stream(IterableDataset):
        def __iter__(self):
            return iter([(np.arange(2, dtype=np.int16) + i, "t%d" % i) for i in range(5)])

    class Sharded(IterableDataset):  # each worker reads its own share
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            info = get_worker_info()
            if info is None:
                return iter(range(self.n))
            return iter(range(info.id, self.n, info.num_workers))

    class Uneven(IterableDataset):  # worker 0 runs out first
        def __iter__(self):
            info = get_worker_info()
            if info is None:  # MindSpore also calls __iter__ once in the calling process
                return iter([])
            return iter([info.id * 100 + j for j in range(1 if info.id == 0 else 5)])

    class Inits(IterableDataset):  # what worker_init_fn did to this worker's copy
        def __iter__(self):
            info = get_worker_info()
            if info is None:
                return iter([])
            return iter([[info.id, info.num_workers, getattr(self, "inits", 0), info.dataset is self]])

    def count_init(worker_id):
        copy = get_worker_info().dataset
        copy.inits = getattr(copy, "inits", 0) + 1

    def failing_init(worker_id):
        if worker_id == 1:
            raise KeyError("no init")

    # The failing batch comes first: MindSpore 2.10 raises the error of a batch that arrives before
    # the one it waits for at once, and then waits for that batch forever.
    class Boom(IterableDataset):  # worker 0's iterator raises at once
        def __iter__(self):
            info = get_worker_info()
            if info is not None and info.id == 0:
                raise ValueError("boom")
            yield 1
            yield 2

    class Picks(Sampler):
        def __init__(self):
            pass

        def __iter__(self):
            return iter([5, 0, 3])

        def __len__(self):
            return 3

    def epochs(loader, n=2):
        return [[describe(b) for b in loader] for _ in range(n)]

    out = {}
    out["dicts"] = epochs(DataLoader(Records(), batch_size=3))
    out["dicts_workers"] = epochs(DataLoader(Records(), batch_size=3, num_workers=2))
    out["dicts_persistent"] = epochs(DataLoader(Records(), batch_size=3, num_workers=2, persistent_workers=True))
    out["len"] = [len(DataLoader(Records(), batch_size=3)), len(DataLoader(Records(), batch_size=3, drop_last=True)),
                  len(DataLoader(Records(), batch_size=None))]
    out["no_batch"] = epochs(DataLoader(Records(), batch_size=None), 1)
    td = TensorDataset(tensor(np.arange(10).reshape(5, 2)), tensor(np.arange(5)))
    out["tensor_dataset"] = epochs(DataLoader(td, batch_size=2, drop_last=True), 1)
    out["batch_sampler"] = epochs(DataLoader(Records(), batch_sampler=[[3, 1], [0, 2, 6]]), 1)
    out["collate_fn"] = epochs(DataLoader(Records(), batch_size=4, collate_fn=lambda b: [len(b), b[0]["c"]]), 1)
    out["iterable"] = epochs(DataLoader(Stream(), batch_size=2))
    out["iterable_drop"] = epochs(DataLoader(Stream(), batch_size=2, drop_last=True), 1)
    out["iterable_no_batch"] = epochs(DataLoader(Stream(), batch_size=None), 1)
    out["iterable_workers"] = epochs(DataLoader(Stream(), batch_size=2, num_workers=2))
    out["iterable_sharded"] = epochs(DataLoader(Sharded(9), batch_size=2, num_workers=2))
    out["iterable_sharded_persistent"] = epochs(DataLoader(Sharded(9), batch_size=2, num_workers=2,
                                                           persistent_workers=True), 3)
    out["iterable_uneven"] = [epochs(DataLoader(Uneven(), batch_size=2, num_workers=2), 1),
                              epochs(DataLoader(Uneven(), batch_size=2, num_workers=2, drop_last=True), 1),
                              epochs(DataLoader(Uneven(), batch_size=None, num_workers=2), 1)]
    out["worker_init_once"] = epochs(DataLoader(Inits(), batch_size=None, num_workers=2, worker_init_fn=count_init))
    out["prefetch_factor"] = [epochs(DataLoader(Records(), batch_size=3, num_workers=2, prefetch_factor=1), 1),
                              epochs(DataLoader(Sharded(9), batch_size=2, num_workers=2, prefetch_factor=5), 1)]
    out["in_order_false"] = [sorted(json.dumps(b) for b in epochs(DataLoader(Records(), batch_size=2, num_workers=2,
                                                                             in_order=False), 1)[0]),
                             sorted(json.dumps(b) for b in epochs(DataLoader(Sharded(9), batch_size=2, num_workers=2,
                                                                             in_order=False), 1)[0])]
    out["fork_context"] = [epochs(DataLoader(Records(), batch_size=3, num_workers=2, multiprocessing_context="fork"), 1),
                           epochs(DataLoader(Sharded(5), num_workers=2,
                                             multiprocessing_context=multiprocessing.get_context("fork")), 1)]
    out["sampler"] = [epochs(DataLoader(Records(), batch_size=2, sampler=Picks()), 1),
                      epochs(DataLoader(Records(), batch_size=2, sampler=[4, 1, 2]), 1),
                      epochs(DataLoader(Records(), batch_size=2, sampler=[4, 1, 2], num_workers=2), 1),
                      epochs(DataLoader(Records(), batch_size=None, sampler=[6, 0]), 1),
                      len(DataLoader(Records(), batch_size=2, sampler=Picks()))]
    out["worker_errors"] = [until_error(DataLoader(fails_at(Dataset, 6, 1, no_sample), batch_size=2, num_workers=2)),
                            until_error(DataLoader(Boom(), batch_size=None, num_workers=2))]
    out["worker_init_error"] = until_error(DataLoader(Stream(), num_workers=2, worker_init_fn=failing_init), False)[1]
    out["collate"] = [describe(default_collate([1, 2])), describe(default_collate([0.5, 1.5])),
                      describe(default_collate([True, False])), describe(default_collate(["x", "y"])),
                      describe(default_collate([np.int32(1), np.int32(2)])),
                      describe(default_collate([{"k": (1, "a")}, {"k": (2, "b")}])),
                      describe(default_collate([[1, 2], [3, 4]]))]
    out["convert"] = [describe(default_convert(np.array([1, 2]))), describe(default_convert(np.int32(3))),
                      describe(default_convert((np.array(1.5), "s", [np.int64(2)]))),
                      describe(default_convert(np.array(["text"]))), describe(default_convert(7))]
    out["errors"] = [
        error(lambda: DataLoader(Stream(), shuffle=True)),
        error(lambda: DataLoader(Stream(), sampler=[0, 1])),
        error(lambda: DataLoader(Records(), batch_sampler=[[0]], batch_size=2)),
        error(lambda: DataLoader(Records(), sampler=[0, 1], shuffle=True)),
        error(lambda: DataLoader(Records(), num_workers=-1)),
        error(lambda: DataLoader(Records(), batch_size=0)),
        error(lambda: DataLoader(Records(), batch_size=True)),
        error(lambda: DataLoader(Records(), persistent_workers=True)),
        error(lambda: DataLoader(Records(), prefetch_factor=2)),
        error(lambda: DataLoader(Records(), timeout=-1)),
        error(lambda: default_collate([[1, 2], [3]])),
        error(lambda: default_collate([object(), object()])),
    ]
    if numpy_generators:
        RandomSampler, DistributedSampler = api["RandomSampler"], api["DistributedSampler"]
        BatchSampler, SequentialSampler = api["BatchSampler"], api["SequentialSampler"]
        gen = np.random.default_rng(5)
        out["shuffle"] = epochs(DataLoader(Records(), batch_size=3, shuffle=True, generator=gen), 3)
        gen = np.random.default_rng(5)
        out["shuffle_workers"] = epochs(DataLoader(Records(), batch_size=3, shuffle=True, generator=gen,
                                                   num_workers=2), 2)
        out["random"] = [list(RandomSampler(range(9), generator=np.random.default_rng(1))),
                         list(RandomSampler(range(9), replacement=True, num_samples=40,
                                            generator=np.random.default_rng(2))),
                         list(RandomSampler(range(4), num_samples=10, generator=np.random.default_rng(3)))]
        sampler = DistributedSampler(Records(), num_replicas=3, rank=2, shuffle=True, seed=4)
        dist = [list(sampler), len(sampler)]
        sampler.set_epoch(1)
        dist.append(list(sampler))
        dist.append(list(DistributedSampler(Records(), num_replicas=3, rank=0, shuffle=False, drop_last=True)))
        dist.append(list(DistributedSampler(range(2), num_replicas=5, rank=4, shuffle=False)))
        one = DistributedSampler(range(4))  # no distributed job: one replica, rank 0
        dist.append([list(one), one.num_replicas, one.rank])
        out["distributed"] = dist
        out["batch_sampler_obj"] = [list(BatchSampler(SequentialSampler(range(7)), 3, False)),
                                    list(BatchSampler(SequentialSampler(range(7)), 3, True)),
                                    len(BatchSampler(SequentialSampler(range(7)), 3, False))]
        out["sampler_errors"] = [
            error(lambda: RandomSampler(range(3), num_samples=0)),
            error(lambda: RandomSampler(range(3), generator=1)),
            error(lambda: DistributedSampler(range(3), num_replicas=2, rank=2)),
            error(lambda: BatchSampler(range(3), 0, False)),
        ]
    return json.loads(json.dumps(out))
'''


def load(namespace=None):
    """PROGRAM's functions (describe, fails_at, no_sample, run_cases) in a fresh namespace."""
    env = {} if namespace is None else namespace
    exec(PROGRAM, env)
    return env
