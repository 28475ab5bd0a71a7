"""headrace.torch.Loader: tensors, epochs, set_epoch, checkpoints, device placement, arguments."""
import json
import re
import time
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import headrace.dataset as ds
from headrace.torch import CopyWarning, Loader, to_tensor
from tests.helpers import (assert_fails_at_the_fourth_batch, assert_held_batches_keep_their_values,
                           assert_loader_resumes_after_every_batch, assert_reads_ahead,
                           force_torch_device_thread, noted_rows, patterned_batches, rows, thread_spy, wait_for)


def numbers(n=10, shuffle=False, batch=3, **kw):
    return ds.NumpySlicesDataset({"x": np.arange(n, dtype=np.int64), "y": np.arange(n, dtype=np.float32) / 2},
                                 shuffle=shuffle, **kw).batch(batch)


@pytest.fixture(params=["direct", "thread"])
def path(request, monkeypatch):
    """The device queue's two paths: "direct" (CPU tensors, nothing to pin: the pipeline's
    prefetch thread is the queue) and "thread" (its own thread and ``arrive``: the path of CUDA and
    pinned memory, forced on the CPU)."""
    if request.param == "thread":
        force_torch_device_thread(monkeypatch)
    return request.param


def device_queue_threads():
    return [t.name for t in threading.enumerate() if "device queue" in t.name]


def plain(batch):
    return [t.tolist() for t in batch]


def test_importing_headrace_imports_no_framework():
    code = ("import sys, headrace, headrace.dataset, headrace.mindrecord\n"
            "print(sorted(m for m in ('torch', 'jax', 'jaxlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_batches_are_tensors_in_column_order(path):
    loader = Loader(numbers())
    it = iter(loader)
    got = [next(it)]
    assert bool(device_queue_threads()) == (path == "thread")
    got += list(it)
    assert len(loader) == 4 and len(got) == 4
    assert all(isinstance(t, torch.Tensor) for b in got for t in b)
    assert [b[0].dtype for b in got] == [torch.int64] * 4 and got[0][1].dtype == torch.float32
    assert [plain(b) for b in got] == [[[0, 1, 2], [0.0, 0.5, 1.0]], [[3, 4, 5], [1.5, 2.0, 2.5]],
                                       [[6, 7, 8], [3.0, 3.5, 4.0]], [[9], [4.5]]]


def test_as_dict_and_columns(path):
    got = list(Loader(numbers(), as_dict=True, columns=["y"]))
    assert [list(b) for b in got] == [["y"]] * 4
    assert got[3]["y"].tolist() == [4.5]
    assert [b[0].tolist() for b in Loader(numbers(), columns="x")][1] == [3, 4, 5]


def test_to_tensor_shares_memory_and_copies_only_when_it_must():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = to_tensor(a)
    assert t.data_ptr() == a.ctypes.data
    a[0, 0] = 42
    assert t[0, 0].item() == 42  # the same memory
    strided = to_tensor(a[:, ::2])  # positive strides: still shared
    assert strided.tolist() == [[42.0, 2.0], [3.0, 5.0]] and strided.data_ptr() == a.ctypes.data
    ro = a.copy()
    ro.flags.writeable = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # (torch warns when it shares read-only memory: we copy instead)
        t_ro = to_tensor(ro)
        # a native int32 first: what to_tensor keeps about its dtype must not decide for '>i4'
        assert to_tensor(np.arange(3, dtype="<i4")).tolist() == [0, 1, 2]
        swapped = np.arange(3, dtype=">i4")
        zero_d = np.array(7, dtype=np.int16)
        assert to_tensor(zero_d).item() == 7 and to_tensor(zero_d).data_ptr() == zero_d.ctypes.data
        t_swapped = to_tensor(swapped)
        assert t_swapped.tolist() == [0, 1, 2] and t_swapped.dtype == torch.int32
        assert to_tensor(a[::-1]).tolist() == [[3.0, 4.0, 5.0], [42.0, 1.0, 2.0]]
    assert t_ro.data_ptr() != ro.ctypes.data and t_ro.tolist() == ro.tolist()
    # each copy said why, and nothing else warned
    assert [(w.category, str(w.message)) for w in caught] == [
        (CopyWarning, f"headrace.torch: a NumPy array {why}, so its tensor is a copy, not a view of its memory.")
        for why in ("is read-only (torch shares only writeable memory)", "is not in this machine's byte order",
                    "has negative strides (a reversed view)")]
    text = np.array(["a", "b"])
    assert to_tensor(text) is text  # no torch type for text: the NumPy array itself
    nested = to_tensor({"k": np.array([1, 2]), "s": np.array("z"), "l": [np.array(1.5)]})
    assert nested["k"].tolist() == [1, 2] and isinstance(nested["s"], np.ndarray)
    assert isinstance(nested["l"], list) and nested["l"][0].item() == 1.5


def test_engine_batches_are_not_copied(path):
    seen = []
    loader = Loader(numbers(batch=5))
    for b in loader:
        seen.append(b[0].numpy().flags.writeable)  # a tensor made from a (writeable) batch array
    assert seen == [True, True]


def test_epochs_follow_the_pipeline_and_set_epoch_picks_one(path):
    ds.config.set_seed(7)
    data = numbers(shuffle=True)
    expected = rows(data, num_epochs=4)  # 4 batches per epoch
    loader = Loader(data)
    first, second = [plain(b) for b in loader], [plain(b) for b in loader]
    assert first + second == expected[:8]
    assert first != second  # pass 1 is another shuffle
    loader.set_epoch(3)
    assert [plain(b) for b in loader] == expected[12:16]
    loader.set_epoch(0)
    assert [plain(b) for b in loader] == expected[:4]
    loader.close()


def test_a_resumed_loop_that_sets_each_epoch_goes_on_from_the_restored_position(path):
    ds.config.set_seed(1)
    data = numbers(shuffle=True)
    expected = rows(data, num_epochs=3)  # 4 batches per epoch
    loader = Loader(data)
    loader.set_epoch(1)
    it = iter(loader)
    assert [plain(next(it)), plain(next(it))] == expected[4:6]
    state = loader.state_dict()
    it.close()
    loader.close()
    resumed, got = Loader(data), []
    resumed.load_state_dict(state)
    for epoch in (1, 2):                      # the README's loop, from the saved epoch
        resumed.set_epoch(epoch)
        got += [plain(b) for b in resumed]
    assert got == expected[6:12]
    resumed.close()
    # set_epoch with another epoch starts that epoch from its beginning, as without a state
    other = Loader(data)
    other.load_state_dict(state)
    other.set_epoch(2)
    assert [plain(b) for b in other] == expected[8:12]
    other.set_epoch(1)                        # the restored position was left: epoch 1 from its start
    assert [plain(b) for b in other] == expected[4:8]
    other.close()


def test_leaving_an_epoch_early_starts_the_next_one(path):
    ds.config.set_seed(3)
    data = numbers(shuffle=True)
    expected = rows(data, num_epochs=2)
    loader = Loader(data)
    for i, b in enumerate(loader):
        if i == 1:
            break
    assert [plain(b) for b in loader] == expected[4:8]
    loader.close()


def test_set_epoch_checks_and_refuses_during_an_epoch():
    loader = Loader(numbers())
    with pytest.raises(TypeError, match="epoch must be an int"):
        loader.set_epoch("1")
    with pytest.raises(ValueError, match="epoch must be >= 0, but got -1"):
        loader.set_epoch(-1)
    it = iter(loader)
    next(it)
    with pytest.raises(RuntimeError, match="set_epoch: called while an epoch is being read"):
        loader.set_epoch(2)
    it.close()
    loader.close()


@pytest.mark.parametrize("buffered", [False, True], ids=["index", "shuffle_buffer"])
def test_state_dict_resumes_after_every_delivered_batch(buffered, path):
    ds.config.set_seed(11)
    data = ds.NumpySlicesDataset({"x": np.arange(10)}, shuffle=not buffered)
    if buffered:
        data = data.shuffle(4)  # a stream op with a state of its own
    data = data.batch(3)
    loader = Loader(data, queue_depth=3)
    full, _ = assert_loader_resumes_after_every_batch(loader, lambda: Loader(data))
    assert full == [r[0] for r in rows(data, num_epochs=2)]
    loader.close()


def test_state_dict_shape_is_fixed_and_plain():
    loader = Loader(numbers())
    fresh = loader.state_dict()
    pipeline = fresh.pop("pipeline")
    assert fresh == {"format": "headrace.loader", "version": 3, "num_shards": 1, "shard_id": 0, "epoch": 0,
                     "iterator": "null", "resume": "null"}
    assert re.fullmatch("[0-9a-f]{16}", pipeline)
    # the same for an equal pipeline made again; another for another pipeline or other columns
    assert Loader(numbers()).state_dict()["pipeline"] == pipeline
    assert Loader(numbers(batch=4)).state_dict()["pipeline"] != pipeline
    assert Loader(numbers(), columns=["x"]).state_dict()["pipeline"] != pipeline
    it = iter(loader)
    next(it)
    mid = loader.state_dict()
    assert sorted(mid) == sorted([*fresh, "pipeline"]) and mid["epoch"] == 0
    inner = json.loads(mid["iterator"])
    assert (inner["epoch"], inner["step"]) == (0, 1)
    it.close()
    loader.close()


@pytest.mark.filterwarnings("ignore:torch.distributed is disabled:UserWarning")
def test_torch_distributed_checkpoint_saves_and_restores_the_loader(tmp_path):
    dcp = pytest.importorskip("torch.distributed.checkpoint")
    ds.config.set_seed(5)
    data = numbers(shuffle=True)
    expected = [r[0] for r in rows(data, num_epochs=1)]
    loader = Loader(data)
    it = iter(loader)
    got = [next(it)[0].tolist(), next(it)[0].tolist()]
    dcp.save({"data": loader}, checkpoint_id=str(tmp_path / "ckpt"))
    it.close()
    loader.close()
    fresh = Loader(data)
    dcp.load({"data": fresh}, checkpoint_id=str(tmp_path / "ckpt"))
    got += [b[0].tolist() for b in fresh]
    assert got == expected
    fresh.close()


def test_load_state_dict_refuses_foreign_and_corrupted_states():
    loader = Loader(numbers())
    it = iter(loader)
    next(it)
    good = loader.state_dict()
    it.close()
    other = Loader(numbers(batch=4))
    with pytest.raises(ValueError, match="the state comes from a different pipeline"):
        other.load_state_dict(good)
    with pytest.raises(TypeError, match="state must be a dict from state_dict"):
        other.load_state_dict([1])
    with pytest.raises(ValueError, match=r"missing \['iterator'\], unknown \['x'\]"):
        other.load_state_dict({**{k: v for k, v in good.items() if k != "iterator"}, "x": 1})
    with pytest.raises(ValueError, match="not a headrace loader state"):
        other.load_state_dict({**good, "format": "torchdata"})
    with pytest.raises(ValueError, match="state\\['iterator'\\] is not valid JSON"):
        other.load_state_dict({**good, "iterator": good["iterator"][:-5]})
    with pytest.raises(ValueError, match="state\\['epoch'\\] is 3 but the iterator state is in epoch 0"):
        other.load_state_dict({**good, "epoch": 3})
    with pytest.raises(ValueError, match="saved by shard 1 of 2 of another pipeline .* a different pipeline"):
        loader.load_state_dict({**good, "num_shards": 2, "shard_id": 1})
    # a state taken before the first batch names its pipeline too, also when restored elsewhere
    with Loader(numbers()) as unread:
        before_first = unread.state_dict()
    assert before_first["iterator"] == "null"
    for state in (before_first, {**before_first, "num_shards": 2, "shard_id": 1}):
        with pytest.raises(ValueError, match=r"the state comes from a different pipeline: its state\['pipeline'\] "
                                             f"is '{before_first['pipeline']}'"):
            other.load_state_dict(state)
    with pytest.raises(ValueError, match=r"state\['pipeline'\] must be 16 hex digits .* 'nope'"):
        loader.load_state_dict({**good, "pipeline": "nope"})
    with pytest.raises(ValueError, match=r"must be 'headrace.loader' / one of \[1, 2, 3\], but got .* / 4"):
        loader.load_state_dict({**good, "version": 4})
    broken = json.loads(good["iterator"])
    broken["step"] = "two"
    with pytest.raises(TypeError, match=r"state\['step'\] must be an int"):
        loader.load_state_dict({**good, "iterator": json.dumps(broken)})
    # a refused state changes nothing: the loader still reads from the start
    assert [b[0].tolist() for b in other][0] == [0, 1, 2, 3]
    # ... also one in the middle of an epoch
    mid = Loader(numbers())
    it = iter(mid)
    assert next(it)[0].tolist() == [0, 1, 2]
    it.close()
    before = mid.state_dict()
    with pytest.raises(ValueError, match="the state comes from a different pipeline"):
        mid.load_state_dict(Loader(numbers(batch=4)).state_dict() | {
            "iterator": json.dumps(numbers(batch=4).create_tuple_iterator(num_epochs=1).get_state())})
    assert mid.state_dict() == before
    mid.close()
    loader.load_state_dict(good)
    assert [b[0].tolist() for b in loader] == [[3, 4, 5], [6, 7, 8], [9]]
    other.close()
    loader.close()


def test_device_cpu_and_pinning_without_an_accelerator_warns():
    loader = Loader(numbers(), device="cpu")
    assert loader.device == torch.device("cpu")
    assert all(t.device.type == "cpu" for b in loader for t in b)
    if torch.cuda.is_available():  # pragma: no cover - this CI has no GPU
        pytest.skip("an accelerator is present")
    with pytest.warns(UserWarning, match="pin_memory=True but no accelerator is available"):
        pinned = Loader(numbers(), pin_memory=True)
    assert [b[0].tolist() for b in pinned][0] == [0, 1, 2]


def test_on_the_cpu_the_pipeline_reads_at_most_queue_depth_batches_ahead():
    # CPU tensors with nothing to pin are made by the pipeline's prefetch thread or the loop's;
    # the prefetch thread is the queue, queue_depth batches deep
    data, seen = noted_rows(40)
    loader = Loader(data, queue_depth=2)
    it = assert_reads_ahead(loader, seen, 2)
    status = loader.status()
    assert status["have_sent"] == 1 and len(status["queue_sizes"]) == 1 and status["queue_sizes"][0] <= 2
    assert not [t.name for t in threading.enumerate() if "device queue" in t.name]
    rest = list(it)
    assert [b[0].tolist() for b in rest] == [[i] for i in range(1, 40)]
    assert loader.status()["have_sent"] == 40 and max(loader.status()["queue_sizes"]) <= 2
    loader.close()


@pytest.mark.parametrize("depth", [1, 3])
def test_the_device_queue_thread_keeps_at_most_queue_depth_batches_ready(monkeypatch, depth):
    # the path of CUDA and pinned memory, on the CPU: its own thread, queue_depth batches deep
    force_torch_device_thread(monkeypatch)
    data, seen = noted_rows(40)
    loader = Loader(data, queue_depth=depth)
    it = iter(loader)
    assert next(it)[0].tolist() == [0]
    wait_for(lambda: loader.status()["queue_sizes"] and loader.status()["queue_sizes"][-1] == depth,
             f"{depth} batches ready")
    time.sleep(0.2)  # a training step: the thread would put more if the queue let it
    assert max(loader.status()["queue_sizes"]) == depth
    assert device_queue_threads() == ["headrace.torch.Loader device queue"]
    assert [b[0].tolist() for b in it] == [[i] for i in range(1, 40)]
    assert loader.status()["have_sent"] == 40 and max(loader.status()["queue_sizes"]) == depth
    loader.close()
    assert seen[:40] == list(range(40)) and not device_queue_threads()  # (then the next epoch's first)


@pytest.mark.parametrize("prefetch", [3, 5])
def test_by_default_the_loader_on_the_cpu_reads_as_far_ahead_as_numpy_output(prefetch):
    # queue_depth=None: the prefetch thread keeps the pipeline's own prefetch size ready (a
    # read-ahead of 2 cost W1 with thread workers ~10% against NumPy output)
    ds.config.set_prefetch_size(prefetch)
    data, seen = noted_rows(40)
    loader = Loader(data)
    it = assert_reads_ahead(loader, seen, prefetch)
    assert [b[0].tolist() for b in it] == [[i] for i in range(1, 40)]
    assert max(loader.status()["queue_sizes"]) <= prefetch
    loader.close()


@pytest.mark.parametrize("kwargs, error, message", [
    ({"queue_depth": 0}, ValueError, r"queue_depth must be in \[1, 1024\], but got 0"),
    ({"queue_depth": "2"}, TypeError, "queue_depth must be an int"),
    ({"as_dict": 1}, TypeError, "as_dict must be True or False"),
    ({"pin_memory": None}, TypeError, "pin_memory must be True or False"),
    ({"shard": "yes"}, TypeError, "shard must be True or False"),
    ({"columns": [1]}, TypeError, "columns must be a list of column names"),
    ({"device": 1.5}, TypeError, "device must be None, a str, an int or a torch.device"),
    ({"device": "nope"}, ValueError, r"device must name a torch device \('cpu', 'cuda', 'cuda:1', an accelerator "
                                     r"index or a torch.device\), but got 'nope': Expected one of cpu, cuda"),
])
def test_arguments_are_checked(kwargs, error, message):
    with pytest.raises(error, match=message):
        Loader(numbers(), **kwargs)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is present")
@pytest.mark.parametrize("device", ["cuda", "cuda:1", torch.device("cuda")])
def test_a_device_torch_cannot_use_here_is_refused_when_the_loader_is_made(device):
    with pytest.raises(ValueError, match=f"device={re.escape(repr(device))}: torch cannot place tensors on cuda"):
        Loader(numbers(), device=device)


def test_dataset_must_be_a_headrace_dataset():
    with pytest.raises(TypeError, match="dataset must be a headrace dataset .* but got list"):
        Loader([1, 2])


def test_unknown_column_is_reported():
    with pytest.raises(ValueError, match="Invalid column"):
        list(Loader(numbers(), columns=["nope"]))


def test_a_loader_reads_its_first_batches_before_the_loop_asks():
    data, seen = noted_rows(12, batch=3)
    loader = Loader(data, queue_depth=2)
    wait_for(lambda: len(seen) >= 3, "a batch read before iterating")
    assert seen[:3] == [0, 1, 2]
    assert loader.status()["have_sent"] == 0                 # the status is that of epochs iterated
    assert loader.state_dict()["iterator"] == "null"         # the state counts batches received only
    loader.set_epoch(0)                                       # the epoch being read ahead: kept
    assert [b[0].tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]
    assert seen[:12] == list(range(12))                       # each row read once, no restart
    # at the end of an epoch the next one is read ahead as well
    wait_for(lambda: len(seen) >= 15, "the next epoch's first batch")
    assert loader.status()["have_sent"] == 4                 # still the epoch iterated last
    assert json.loads(loader.state_dict()["iterator"])["epoch"] == 1
    loader.set_epoch(5)                                       # another epoch: read ahead from its start
    assert [b[0].tolist() for b in loader][0] == [0, 1, 2]
    loader.close()


@pytest.mark.parametrize("as_dict", [False, True])
def test_a_batch_the_loop_drops_is_freed_at_once(as_dict):
    # The loader's generators kept the last batch until the loop asked for the next one, so it was
    # freed inside that request (counted as the loop's wait for data) and held memory until then.
    import weakref
    loader = Loader(numbers(30), as_dict=as_dict)
    it = iter(loader)
    batch = next(it)
    ref = weakref.ref(batch["x"] if as_dict else batch[0])
    del batch
    assert ref() is None
    assert plain(next(it).values() if as_dict else next(it)) == [[3, 4, 5], [1.5, 2.0, 2.5]]
    loader.close()


def _transfer_threads(monkeypatch, fail_at=None):
    from headrace.torch import _convert
    return thread_spy(monkeypatch, _convert.Transfer, "__call__", fail_at, OverflowError("no room for this batch"))


def test_a_loop_that_works_between_batches_gets_them_converted_ahead(monkeypatch):
    threads = _transfer_threads(monkeypatch)
    got = []
    loader = Loader(numbers(n=60, batch=2))
    for b in loader:
        got.append(b[0].tolist())
        seen = len(threads)  # (the next epoch's first batches are read ahead when this one ends)
        time.sleep(0.005)  # a training step
    loader.close()
    assert got == [[i, i + 1] for i in range(0, 60, 2)]
    assert threads[:seen] == ["headrace-prefetch"] * 30  # by the pipeline's prefetch thread, ahead


def _nap(x):
    time.sleep(0.002)
    return x


def test_a_loop_that_only_reads_converts_in_its_own_thread_once_the_prefetch_thread_is_let_go(monkeypatch):
    # rows from worker processes that take ~2 ms each, a loop that takes them at once: the
    # prestarted prefetch thread only adds a hand-off, and is let go after its trial
    threads = _transfer_threads(monkeypatch)
    data = ds.NumpySlicesDataset({"x": np.arange(400)}, shuffle=False).map(
        _nap, input_columns="x", num_parallel_workers=2, python_multiprocessing=True).batch(2)
    loader = Loader(data)
    got = []
    for b in loader:
        got.append(b[0].tolist())
        seen = len(threads)
    loader.close()
    assert got == [[i, i + 1] for i in range(0, 400, 2)]
    epoch = threads[:seen]
    assert len(epoch) == 200 and set(epoch) == {"headrace-prefetch", "MainThread"}
    assert epoch[:7] == ["headrace-prefetch"] * 7  # the trial


def test_a_conversion_that_fails_ahead_fails_in_the_loop_at_its_batch(monkeypatch):
    _transfer_threads(monkeypatch, fail_at=4)
    assert_fails_at_the_fourth_batch(Loader(numbers(n=20, batch=2)), OverflowError, "no room for this batch")


def test_in_debug_mode_the_loader_reads_in_the_loops_thread(monkeypatch):
    threads = _transfer_threads(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the debug-mode notice
        ds.config.set_debug_mode(True)
    try:
        loader = Loader(numbers(n=20, batch=2))
        got = []
        for b in loader:
            got.append(b[0].tolist())
            assert not [t.name for t in threading.enumerate() if t.name.startswith("headrace-prefetch")]
        loader.close()
    finally:
        ds.config.set_debug_mode(False)
    assert got == [[i, i + 1] for i in range(0, 20, 2)]
    assert set(threads) == {"MainThread"}


def test_batches_from_worker_processes_keep_their_values_while_held(path):
    # torch.from_numpy shares the batch's memory: the engine must not reuse it while a tensor holds it
    assert_held_batches_keep_their_values(Loader(patterned_batches()), lambda t: isinstance(t, torch.Tensor))
