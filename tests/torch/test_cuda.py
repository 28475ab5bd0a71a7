"""headrace.torch.Loader on a CUDA device: pinned host tensors, non-blocking copies on the device
queue's own stream, the event the training stream waits on, and ``record_stream``.

These run only where torch sees a GPU (they skip on CI, which has none). The same path (the
device queue's own thread, then ``arrive``) runs on the CPU in test_loader.py and test_failures.py,
as their "thread" cases. Each check compares exact values: a copy that the training stream
read before it had landed would show up as wrong numbers, not as a crash."""
import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover - exercised on a GPU machine only
    pytest.skip("no CUDA device", allow_module_level=True)

import headrace.dataset as ds
from headrace.torch import Loader
from headrace.torch._convert import Transfer
from tests.helpers import assert_held_batches_keep_their_values, patterned_batches


def pattern(n=64, size=1 << 16, batch=4):
    """Rows whose every element is the row's index (float32), so a batch's sum names its rows."""
    class Rows:
        def __getitem__(self, i):
            return (np.full(size, i, np.float32), np.int64(i))

        def __len__(self):
            return n
    return ds.GeneratorDataset(Rows(), ["x", "i"], shuffle=False).batch(batch)


def expected_sums(n=64, size=1 << 16, batch=4):
    return [float(sum(range(s, min(s + batch, n))) * size) for s in range(0, n, batch)]


def test_batches_arrive_on_the_gpu_with_exact_values_pinned_and_not():
    for pin in (False, True):
        loader = Loader(pattern(), device="cuda", pin_memory=pin, queue_depth=4)
        assert loader.device == torch.device("cuda") and loader._transfer.pin is pin
        for epoch in range(2):
            sums, ids = [], []
            for x, i in loader:
                assert x.device.type == "cuda" and i.device.type == "cuda"
                assert x.dtype == torch.float32 and i.dtype == torch.int64 and x.shape[1] == 1 << 16
                sums.append(float(x.sum(dtype=torch.float64)))
                ids.extend(i.tolist())
            assert sums == expected_sums(), (pin, epoch)
            assert ids == list(range(64))
        loader.close()


def test_transfer_pins_and_records_an_event_on_its_own_stream():
    transfer = Transfer("cuda", True)
    assert transfer.stream is not None and transfer.stream != torch.cuda.current_stream()
    value, event = transfer([np.arange(6, dtype=np.int32).reshape(2, 3), np.array(["a", "b"])])
    assert isinstance(event, torch.cuda.Event)
    out = transfer.arrive(value, event)
    assert out[0].device.type == "cuda" and out[0].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert out[1].tolist() == ["a", "b"]  # text stays NumPy on the host
    host = transfer.__class__(None, True)([np.arange(3)])[0][0]
    assert host.is_pinned() and host.device.type == "cpu"


def test_pinned_copies_are_exact_for_every_numpy_dtype_and_layout():
    from headrace.torch._convert import pinned
    rng = np.random.default_rng(0)
    arrays = [rng.random((3, 224, 224), dtype=np.float32), rng.integers(-9, 9, (5, 7)).astype(np.int64),
              rng.random(10) < 0.5, rng.random((4, 4)).astype(np.float16)[:, ::2], np.array(3, np.uint8)]
    for a in arrays:
        out = pinned(torch.from_numpy(a))
        assert out.is_pinned() and out.shape == a.shape and out.is_contiguous()
        assert np.array_equal(out.numpy(), a)
    grad = torch.ones(3, requires_grad=True)  # NumPy cannot view it: torch pins it instead
    assert pinned(grad).is_pinned() and pinned(grad).tolist() == [1.0, 1.0, 1.0]


def test_training_stream_waits_for_the_copy_while_it_is_busy():
    # The training stream is kept busy with large matrix products; each batch is then consumed on
    # it at once. Without the event wait the consumer's kernel could read a buffer that the side
    # stream had not finished writing; with it, every sum is exact.
    a = torch.randn(4096, 4096, device="cuda")
    loader = Loader(pattern(n=128, size=1 << 18, batch=8), device="cuda", pin_memory=True, queue_depth=8)
    sums = []
    for x, _ in loader:
        for _ in range(3):
            a = torch.tanh(a @ a)  # queued work ahead of the read below on the same stream
        sums.append(x.sum(dtype=torch.float64))
    torch.cuda.synchronize()
    assert [float(s) for s in sums] == expected_sums(n=128, size=1 << 18, batch=8)
    loader.close()


def test_a_second_device_index_and_as_dict():
    loader = Loader(pattern(n=8), device=torch.device("cuda", 0), as_dict=True, columns=["i"])
    got = [b["i"] for b in loader]
    assert [t.device for t in got] == [torch.device("cuda", 0)] * 2
    assert [t.tolist() for t in got] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    loader.close()


def test_checkpoint_resumes_on_the_gpu():
    loader = Loader(pattern(n=32, size=8), device="cuda", pin_memory=True)
    it = iter(loader)
    first = [next(it)[1].tolist() for _ in range(3)]
    state = loader.state_dict()
    it.close()
    other = Loader(pattern(n=32, size=8), device="cuda", pin_memory=True)
    other.load_state_dict(state)
    rest = [b[1].tolist() for b in other]
    assert first + rest == [list(range(s, s + 4)) for s in range(0, 32, 4)]
    loader.close()
    other.close()


def test_an_error_with_a_full_device_queue_reaches_the_loop_and_stops_the_thread():
    def boom(x):
        if int(x.reshape(-1)[0]) == 40:
            raise ValueError("row forty")
        return x

    data = pattern(n=64, size=16, batch=1).map(boom, input_columns=["x"])
    loader = Loader(data, device="cuda", pin_memory=True, queue_depth=2)
    before = threading.active_count()
    got = 0
    with pytest.raises(RuntimeError, match="row forty"):
        for _ in loader:
            got += 1
    assert got == 40
    loader.close()
    assert threading.active_count() <= before


def test_batches_from_worker_processes_arrive_exact_while_all_are_held():
    for pin in (True, False):
        assert_held_batches_keep_their_values(
            Loader(patterned_batches(), device="cuda", pin_memory=pin, queue_depth=4), lambda t: t.is_cuda,
            host=lambda t: t.cpu(),
            work=lambda b: torch.stack([t.float().sum() for t in b]).sum())  # the loop's work on its stream
