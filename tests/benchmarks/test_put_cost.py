"""The put-cost benchmark (benchmarks/put_cost.py): what it converts, how often, and what it prints."""
import numpy as np
import pytest

from benchmarks import put_cost as pc


def test_the_batch_is_w1s():
    data, labels = pc.batch()
    assert (data.shape, data.dtype, labels.shape, labels.dtype) == ((256, 16), np.float32, (256,), np.int32)
    assert labels[:3].tolist() == [0, 1, 2]


def test_measure_converts_trials_times_after_three_untimed_and_writes_the_eviction_memory():
    calls = []
    junk = np.zeros(16, np.uint8)
    wall, cpu = pc.measure(calls.append, ("row",), trials=5, evict=junk, gap_s=0.0)
    assert calls == [("row",)] * 8
    assert junk.tolist() == [5] * 16  # written once before each timed conversion
    assert wall >= 0 and cpu >= 0


def test_each_installed_adapter_converts_a_batch_as_it_does_in_a_loader():
    pytest.importorskip("torch")
    jax = pytest.importorskip("jax")
    found = pc.converters()
    assert list(found) == ["torch.from_numpy (headrace.torch)", "headrace.jax put", "jax.device_put"]
    row = pc.batch()
    tensors = found["torch.from_numpy (headrace.torch)"](row)
    assert [t.numpy().tolist() for t in tensors] == [v.tolist() for v in row]
    for name in ("headrace.jax put", "jax.device_put"):
        arrays = found[name](row)
        assert all(isinstance(x, jax.Array) for x in arrays), name
        assert [np.asarray(x).tolist() for x in arrays] == [v.tolist() for v in row]


def test_main_prints_hot_and_cold_for_each_adapter(capsys):
    pytest.importorskip("torch")
    pytest.importorskip("jax")
    pc.main(["--trials", "3", "--evict", "1", "--gap-us", "0"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("one W1 batch (float32 (256, 16) + int32 (256,)), converted and freed; median of 3")
    assert [line.split(" hot ")[0].strip() for line in lines[1:]] == [
        "torch.from_numpy (headrace.torch)", "headrace.jax put", "jax.device_put"]
    assert all(" cold " in line for line in lines[1:])


@pytest.mark.parametrize("args", [["--trials", "0"], ["--evict", "0"], ["--gap-us", "-1"]])
def test_bad_arguments_are_refused(args, capsys):
    with pytest.raises(SystemExit):
        pc.main(args)
    assert "--trials and --evict must be at least 1, --gap-us at least 0" in capsys.readouterr().err
