"""DataLoader worker processes: how far they fetch ahead (prefetch_factor), how they start
(multiprocessing_context), out-of-order delivery (in_order=False), failures, timeouts and shutdown.
Outputs shared with MindSpore and torch are compared in test_dataloader_compat.py."""
import multiprocessing
import os
import signal
import time

import numpy as np
import pytest

from headrace.dataset import dataloader as hdl
from tests.dataloader.program import load
from tests.helpers import wait_for


class Noted(hdl.Dataset):
    """0..n-1; each index read leaves a file named after it in ``folder`` (seen from any process)."""

    def __init__(self, folder, n=100):
        self.folder, self.n = str(folder), n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        open(os.path.join(self.folder, str(i)), "w").close()
        return i


class NotedStream(hdl.IterableDataset):
    """0..n-1 in each worker; each item read leaves a file named ``<worker>_<item>`` in ``folder``."""

    def __init__(self, folder, n=100):
        self.folder, self.n = str(folder), n

    def __iter__(self):
        wid = hdl.get_worker_info().id
        for i in range(self.n):
            open(os.path.join(self.folder, f"{wid}_{i}"), "w").close()
            yield i


def _ours():
    """This process's descendants that are not the fork server or its idle spares."""
    from headrace._engine.exec import forkserver
    from tests.conftest import descendants
    server = forkserver.current()
    spare = {server.pid} | server.spares if server is not None and not server.dead else set()
    return descendants(os.getpid()) - spare


def _wait_gone(before):
    wait_for(lambda: not (_ours() - before), "the workers to exit", seconds=30)


@pytest.mark.parametrize("dataset", [Noted, NotedStream])
@pytest.mark.parametrize("workers, factor, taken", [(2, 3, 1), (2, 1, 0), (3, 2, 4)])
def test_prefetch_factor_bounds_how_far_workers_fetch_ahead(tmp_path, dataset, workers, factor, taken):
    # MindSpore 2.10 and torch fetch exactly workers * prefetch_factor batches beyond those taken
    bound = workers * factor + taken
    it = iter(hdl.DataLoader(dataset(tmp_path), batch_size=1, num_workers=workers, prefetch_factor=factor))
    for _ in range(taken):
        next(it)
    wait_for(lambda: len(os.listdir(tmp_path)) >= bound, f"{bound} batches fetched")
    time.sleep(0.3)  # the workers would fetch further now if they were allowed to
    assert len(os.listdir(tmp_path)) == bound
    it.close()


def test_the_default_prefetch_factor_is_two(tmp_path):
    it = iter(hdl.DataLoader(Noted(tmp_path), batch_size=2, num_workers=2))
    wait_for(lambda: len(os.listdir(tmp_path)) >= 8, "4 batches fetched")
    time.sleep(0.3)
    assert sorted(map(int, os.listdir(tmp_path))) == list(range(8))
    it.close()


class Gate(hdl.Dataset):
    """0..9; index 0 waits (up to a minute) until a file ``go`` appears in ``folder``."""

    def __init__(self, folder):
        self.folder = str(folder)

    def __len__(self):
        return 10

    def __getitem__(self, i):
        deadline = time.monotonic() + 60
        while i == 0 and not os.path.exists(os.path.join(self.folder, "go")):
            if time.monotonic() > deadline:
                raise TimeoutError("batch 0 was never released")
            time.sleep(0.01)
        return i


def test_in_order_false_delivers_later_batches_before_a_slow_one(tmp_path):
    got = []
    for b in hdl.DataLoader(Gate(tmp_path), batch_size=1, num_workers=2, in_order=False):
        got.append(int(b[0]))
        if len(got) == 8:  # batch 0 is released only once every batch that can pass it has come
            open(os.path.join(tmp_path, "go"), "w").close()
    # MindSpore 2.10 and torch deliver this order (worker 0 holds batch 0 and then batch 2; the
    # batches freed meanwhile go to worker 1). Releasing batch 0 any earlier would race worker 1.
    assert got == [1, 3, 4, 5, 6, 7, 8, 9, 0, 2]


def test_in_order_false_delivers_every_batch_once_from_iterable_workers():
    class Stream(hdl.IterableDataset):
        def __iter__(self):
            info = hdl.get_worker_info()
            return iter(range(info.id * 100, info.id * 100 + 7))

    got = [b.tolist() for b in hdl.DataLoader(Stream(), batch_size=3, num_workers=3, in_order=False)]
    assert sorted(got) == sorted([[w * 100 + k for k in ks] for w in range(3) for ks in ([0, 1, 2], [3, 4, 5], [6])])


def _how_started(_):
    """Whether this process was spawned (a fresh interpreter running the engine's spawn entry) and its parent."""
    with open("/proc/self/cmdline", "rb") as f:
        spawned = b"_spawn_main" in f.read()
    return [spawned, os.getppid()]


class HowStarted(hdl.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return _how_started(i)


@pytest.mark.parametrize("context", ["spawn", multiprocessing.get_context("spawn"), "forkserver",
                                     multiprocessing.get_context("forkserver")])
def test_spawn_context_spawns_the_workers(context):
    # ('forkserver': workers that inherit nothing of this process's state, as spawned ones)
    got = [b for b in hdl.DataLoader(HowStarted(), batch_size=None, num_workers=2, multiprocessing_context=context)]
    assert got == [[True, os.getpid()]] * 4  # fresh interpreters, children of this process


@pytest.mark.parametrize("context", [None, "fork", multiprocessing.get_context("fork")])
def test_fork_context_forks_the_workers(context):
    got = [b for b in hdl.DataLoader(HowStarted(), batch_size=None, num_workers=2, multiprocessing_context=context)]
    assert [spawned for spawned, _ in got] == [False] * 4


def test_config_start_method_applies_when_no_context_is_given():
    import headrace.dataset as ds
    ds.config.set_multiprocessing_start_method("spawn")
    got = [b for b in hdl.DataLoader(HowStarted(), batch_size=None, num_workers=1)]
    assert got == [[True, os.getpid()]] * 4
    got = [b for b in hdl.DataLoader(HowStarted(), batch_size=None, num_workers=1, multiprocessing_context="fork")]
    assert [spawned for spawned, _ in got] == [False] * 4


def test_unknown_start_methods_are_refused():
    with pytest.raises(ValueError, match=r"^multiprocessing_context must be one of \['fork', 'spawn', 'forkserver'\] "
                                         r"or a multiprocessing context with one of these start methods, but got: "
                                         r"'threads'\.$"):
        hdl.DataLoader(HowStarted(), num_workers=2, multiprocessing_context="threads")


def test_spawned_workers_get_lambdas_and_local_classes():
    class Local(hdl.IterableDataset):
        def __iter__(self):
            info = hdl.get_worker_info()
            return iter(range(info.id, 6, info.num_workers))

    loader = hdl.DataLoader(Local(), batch_size=2, num_workers=2, multiprocessing_context="spawn",
                            collate_fn=lambda b: [x * 10 for x in b])
    assert list(loader) == [[0, 20], [10, 30], [40], [50]]


@pytest.mark.parametrize("iterable", [False, True])
def test_no_worker_is_left_after_break_or_a_dropped_iterator(iterable):
    before = _ours()
    data = _Count() if iterable else hdl.TensorDataset(np.arange(50))
    for _ in hdl.DataLoader(data, batch_size=2, num_workers=2):
        break
    _wait_gone(before)
    it = iter(hdl.DataLoader(data, batch_size=2, num_workers=2, persistent_workers=True))
    next(it)
    assert _ours() - before
    del it
    _wait_gone(before)


class _FailsAt1(hdl.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 1:
            raise KeyError(i)
        return i


@pytest.mark.parametrize("loader", [
    lambda: hdl.DataLoader(_FailsAt1(), batch_size=2, num_workers=2),  # the dataset raises
    lambda: hdl.DataLoader(list(range(4)), batch_size=2, num_workers=2,
                           collate_fn=lambda b: (lambda: b)),  # the batch cannot be sent back (the engine's error)
], ids=["dataset-error", "engine-error"])
def test_an_iterator_dropped_after_a_worker_error_ends_its_workers(loader):
    import gc
    before = _ours()

    def fail():
        with pytest.raises(RuntimeError, match="DataLoader worker 0"):
            list(loader())

    gc.disable()  # freed when the error is: neither the iterator nor the error sits in a reference cycle
    try:
        fail()
        _wait_gone(before)
    finally:
        gc.enable()


class _Count(hdl.IterableDataset):
    def __iter__(self):
        return iter(range(50))


def test_an_error_in_an_iterable_worker_reaches_the_caller_and_the_others_go_on():
    class Boom(hdl.IterableDataset):
        def __iter__(self):
            info = hdl.get_worker_info()
            yield info.id * 10
            if info.id == 1:
                raise ValueError("boom in worker 1")
            yield info.id * 10 + 1

    it = iter(hdl.DataLoader(Boom(), batch_size=None, num_workers=2))
    assert [next(it), next(it), next(it)] == [0, 10, 1]
    with pytest.raises(RuntimeError, match=r"(?s)^DataLoader worker 1 \(pid: \d+\) caught ValueError with "
                                           r"message:\nTraceback.*ValueError: boom in worker 1") as e:
        next(it)
    assert type(e.value.__cause__) is ValueError
    assert list(it) == []


def test_an_error_in_worker_init_fn_ends_the_iteration():
    def init(worker_id):
        if worker_id == 1:
            raise KeyError("no init")

    before = _ours()
    it = iter(hdl.DataLoader(_Count(), batch_size=2, num_workers=2, worker_init_fn=init))
    with pytest.raises(RuntimeError, match=r"(?s)^DataLoader worker 1 \(pid: \d+\) caught KeyError.*'no init'"):
        list(it)
    assert list(it) == []
    _wait_gone(before)


def test_a_killed_worker_is_reported():
    killer = load()["fails_at"](hdl.Dataset, 8, 5, lambda i: os.kill(os.getpid(), signal.SIGKILL))
    before = _ours()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\): \d+\) exited unexpectedly.") as e:
        list(hdl.DataLoader(killer, batch_size=2, num_workers=2))
    assert "SIGKILL" in str(e.value.__cause__)
    _wait_gone(before)


def test_timeout_applies_to_iterable_workers():
    class Stuck(hdl.IterableDataset):
        def __iter__(self):
            yield 1
            time.sleep(120)

    before = _ours()
    it = iter(hdl.DataLoader(Stuck(), batch_size=None, num_workers=1, timeout=1))
    assert next(it) == 1
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out waiting for data after 1 seconds.$"):
        next(it)
    it.close()
    _wait_gone(before)


def test_persistent_iterable_workers_restart_their_iterator_after_an_epoch_left_early():
    class Sharded(hdl.IterableDataset):
        def __iter__(self):
            info = hdl.get_worker_info()
            return iter(range(info.id, 9, info.num_workers))

    loader = hdl.DataLoader(Sharded(), batch_size=2, num_workers=2, persistent_workers=True)
    it = iter(loader)
    assert next(it).tolist() == [0, 2]
    assert [b.tolist() for b in loader] == [[0, 2], [1, 3], [4, 6], [5, 7], [8]]
    assert [b.tolist() for b in loader] == [[0, 2], [1, 3], [4, 6], [5, 7], [8]]
    it.close()
