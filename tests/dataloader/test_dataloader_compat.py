"""headrace.dataset.dataloader against MindSpore 2.10 and torch's DataLoader on the same code."""
import functools

import numpy as np
import pytest

from headrace.dataset import dataloader as hdl
from headrace.dataset._tensor import Tensor
from tests.dataloader.program import PROGRAM, load

HEADRACE_API = dict(vars(hdl), tensor=Tensor)

ORACLE = PROGRAM + """
import mindspore as ms
import mindspore.dataset.dataloader as mdl
api = dict(vars(mdl), tensor=ms.Tensor)
RESULT = json.dumps(run_cases(api))
"""


@functools.lru_cache(maxsize=None)
def headrace_result(numpy_generators=True):
    return load()["run_cases"](HEADRACE_API, numpy_generators)


@functools.lru_cache(maxsize=None)
def oracle_result():
    import json

    from tests.oracles.oracle import oracle_python, run_ms
    if oracle_python() is None:
        pytest.skip("MindSpore oracle not set up (scripts/oracle_env.sh)")
    return json.loads(run_ms(ORACLE, timeout=600))


# worker cases: iterable datasets in worker processes (each worker iterates its own copy; sharded
# by get_worker_info() or not; a worker that runs out first), worker_init_fn once per worker,
# prefetch_factor, in_order=False, a fork context, errors in a worker and in worker_init_fn
WORKER_CASES = ["iterable_workers", "iterable_sharded", "iterable_sharded_persistent", "iterable_uneven",
                "worker_init_once", "prefetch_factor", "in_order_false", "fork_context", "sampler", "worker_errors",
                "worker_init_error"]
CASES = ["dicts", "dicts_workers", "dicts_persistent", "len", "no_batch", "tensor_dataset", "batch_sampler",
         "collate_fn", "iterable", "iterable_drop", "iterable_no_batch", "collate", "convert", "errors", "shuffle",
         "shuffle_workers", "random", "distributed", "batch_sampler_obj", "sampler_errors"] + WORKER_CASES


@pytest.mark.compat
@pytest.mark.parametrize("case", CASES)
def test_same_output_as_mindspore(case):
    assert headrace_result()[case] == oracle_result()[case]


# torch's types and texts differ where it has its own (torch.Tensor dtype names, error wording):
# the values, dtypes, shapes and structure must agree.
TORCH_CASES = ["dicts", "dicts_workers", "dicts_persistent", "len", "no_batch", "tensor_dataset", "batch_sampler",
               "collate_fn", "iterable", "iterable_drop", "iterable_no_batch", "collate", "convert"] + WORKER_CASES


def _torch_neutral(value):
    if isinstance(value, list):
        if len(value) == 3 and value[0] == "T" and isinstance(value[1], str):
            return ["T", value[1].replace("torch.", ""), value[2]]
        return [_torch_neutral(v) for v in value]
    return value


def _raised(error):
    """The type of exception a worker raised: torch raises that type with its own text, MindSpore (and
    so headrace) a RuntimeError naming it (headrace keeps the original as the cause)."""
    kind, text = error
    return text.split(" caught ")[1].split()[0] if kind == "RuntimeError" else kind


@functools.lru_cache(maxsize=None)
def torch_result():
    torch = pytest.importorskip("torch")
    import torch.utils.data as tdl
    api = {"DataLoader": tdl.DataLoader, "Dataset": tdl.Dataset, "IterableDataset": tdl.IterableDataset,
           "TensorDataset": tdl.TensorDataset, "default_collate": tdl.default_collate,
           "default_convert": tdl.default_convert, "get_worker_info": tdl.get_worker_info, "Sampler": tdl.Sampler,
           "tensor": torch.from_numpy}
    return load()["run_cases"](api, False)


@pytest.mark.parametrize("case", TORCH_CASES)
def test_same_output_as_torch_dataloader(case):
    expected = _torch_neutral(torch_result()[case])
    got = headrace_result()[case]
    if case == "collate":
        # NumPy int32 scalars: torch keeps int32, MindSpore (and so headrace) makes int64
        assert expected[4] == ["T", "int32", [1, 2]] and got[4] == ["T", "int64", [1, 2]]
        expected, got = expected[:4] + expected[5:], got[:4] + got[5:]
    if case == "worker_errors":
        expected = [[before, _raised(error), after] for before, error, after in expected]
        got = [[before, _raised(error), after] for before, error, after in got]
    elif case == "worker_init_error":
        expected, got = _raised(expected), _raised(got)
    assert got == expected


def test_workers_know_their_id_and_run_worker_init_fn_once():
    class Who(hdl.Dataset):
        def __len__(self):
            return 12

        def __getitem__(self, i):
            info = hdl.get_worker_info()
            import os
            return [i, info.id, info.num_workers, os.environ.get("HR_INIT_COUNT", "0"), type(info.dataset).__name__]

    def init(worker_id):
        import os
        os.environ["HR_INIT_COUNT"] = str(int(os.environ.get("HR_INIT_COUNT", "0")) + 1)

    got = [[list(map(str, col)) for col in b] for b in hdl.DataLoader(Who(), batch_size=2, num_workers=2,
                                                                       worker_init_fn=init)]
    assert [b[0] for b in got] == [[str(2 * k), str(2 * k + 1)] for k in range(6)]
    assert {w for b in got for w in b[1]} <= {"0", "1"}
    assert all(b[2] == ["2", "2"] and b[3] == ["1", "1"] and b[4] == ["Who", "Who"] for b in got)
    assert hdl.get_worker_info() is None  # not in a worker


def test_a_failing_sample_in_a_worker_names_it():
    program = load()
    with pytest.raises(RuntimeError, match=r"(?s)^DataLoader worker 0 \(pid: \d+\) caught KeyError with message:\n"
                                           r"Traceback.*KeyError: 'no sample 4'") as e:
        list(hdl.DataLoader(program["fails_at"](hdl.Dataset, 6, 4, program["no_sample"]), batch_size=2, num_workers=2))
    assert e.value.__notes__ == ["(fetching the batch of indices [4, 5])"]
    assert type(e.value.__cause__) is KeyError


def test_timeout_raises_mindspore_error():
    class Slow(hdl.Dataset):
        def __len__(self):
            return 40

        def __getitem__(self, i):
            import time
            time.sleep(120 if i >= 20 else 0)
            return i

    loader = hdl.DataLoader(Slow(), batch_size=2, num_workers=1, timeout=10)
    it = iter(loader)
    got = []
    with pytest.raises(RuntimeError, match="DataLoader timed out waiting for data after 10 seconds."):
        for b in it:
            got.append(b.tolist())
    assert got == [[2 * k, 2 * k + 1] for k in range(len(got))] and len(got) <= 10  # rows 20+ never come
    it.close()


def test_pin_memory_logs_mindspore_warning(caplog):
    with caplog.at_level("WARNING", logger="headrace.dataset.dataloader"):
        out = [[t.tolist() for t in b] for b in hdl.DataLoader(hdl.TensorDataset(np.arange(3)), batch_size=2,
                                                                pin_memory=True)]
    assert out == [[[0, 1]], [[2]]]
    assert "Set pin_memory as True on CPU device will not have any effect." in caplog.text


def test_workers_end_with_the_epoch_and_with_close():
    import os
    import time

    from headrace._engine.exec import forkserver
    from tests.conftest import descendants

    def workers():
        server = forkserver.current()  # the fork server and its idle spares are not workers
        ours = {server.pid} | server.spares if server is not None and not server.dead else set()
        return descendants(os.getpid()) - ours

    before = workers()
    assert [b.tolist() for b in hdl.DataLoader(list(range(4)), batch_size=2, num_workers=2)] == [[0, 1], [2, 3]]
    loader = hdl.DataLoader(list(range(6)), batch_size=2, num_workers=2, persistent_workers=True)
    assert [[b.tolist() for b in loader] for _ in range(2)] == [[[0, 1], [2, 3], [4, 5]]] * 2
    it = iter(loader)
    next(it)
    it.close()
    deadline = time.monotonic() + 30
    while workers() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert workers() - before == set()
