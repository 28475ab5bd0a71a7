"""The adapter-cost benchmark's measures (benchmarks/adapter_cost.py), on tiny pipelines."""
import multiprocessing as mp
import statistics

import numpy as np
import pytest

import headrace.dataset as ds
from benchmarks import adapter_cost as ac


def test_the_steady_rate_counts_the_rows_after_the_first_batch_of_its_window():
    times = [0.5, 1.0, 1.5, 3.5, 4.0, 100.0]
    sizes = [1, 2, 3, 4, 5, 6]
    # batches 1..4: rows of batches 2, 3 and 4 over 4.0 - 1.0 seconds
    assert ac.steady_rate(times, sizes, skip=1, tail=1) == pytest.approx(12 / 3.0)
    assert ac.window(times, 0, 0) == (0, 5)


@pytest.mark.parametrize("skip, tail", [(3, 2), (5, 0), (-1, 1), (1, -1)])
def test_a_window_with_no_batches_in_it_is_refused(skip, tail):
    with pytest.raises(ValueError, match=f"an epoch of 6 batches has no window after skip={skip} and tail={tail}"):
        ac.steady_rate([1.0] * 6, [1] * 6, skip, tail)


def test_the_interval_of_the_median_holds_it_and_narrows_with_more_pairs():
    rng = np.random.default_rng(5)
    few = list(1 + 0.1 * rng.standard_normal(10))
    many = list(1 + 0.1 * rng.standard_normal(200))
    lo, hi = ac.median_interval(few)
    assert lo <= statistics.median(few) <= hi
    lo2, hi2 = ac.median_interval(many)
    assert lo2 <= statistics.median(many) <= hi2
    assert hi2 - lo2 < hi - lo
    assert ac.median_interval([0.97] * 7) == (0.97, 0.97)
    assert ac.median_interval(few) == ac.median_interval(few)  # seeded: the same interval each time
    with pytest.raises(ValueError, match="no ratios"):
        ac.median_interval([])


def _burn(seconds, ready, done):
    import time
    while time.process_time() < seconds:
        pass
    ready.set()
    done.wait(60)


def test_tree_cpu_counts_a_child_process():
    ctx = mp.get_context("spawn")
    ready, done = ctx.Event(), ctx.Event()
    before = ac.tree_cpu()
    child = ctx.Process(target=_burn, args=(0.5, ready, done))
    child.start()
    try:
        assert ready.wait(120)
        # the child's 0.5 CPU seconds (less a clock tick) are in the tree while it lives
        assert ac.tree_cpu() - before >= 0.5 - 0.02
    finally:
        done.set()
        child.join(60)
    assert child.exitcode == 0


def _tiny(batches=10):
    return ds.NumpySlicesDataset({"x": np.arange(4 * batches, dtype=np.float32)}, shuffle=False).batch(4)


def test_measure_pairs_the_loader_with_the_numpy_iterator():
    torch_loader = pytest.importorskip("headrace.torch").Loader
    numpy_it = _tiny().create_tuple_iterator(output_numpy=True, num_epochs=-1)
    loader = torch_loader(_tiny(), shard=False)
    try:
        res = ac.measure(numpy_it, loader, pairs=3, skip=1, tail=1)
    finally:
        loader.close()
        numpy_it.stop()
    assert [len(res[k]) for k in ("numpy", "loader", "steady", "whole")] == [3, 3, 3, 3]
    assert len(res["cpu"]) <= 3
    for key, i in (("steady", 0), ("whole", 1)):
        assert res[key] == pytest.approx([lo[i] / nu[i] for lo, nu in zip(res["loader"], res["numpy"])])
        assert all(x[i] > 0 for x in res["loader"] + res["numpy"])
    assert "95% interval of the median" in ac.report(res, "tiny")
    lines = ac.report(res, "tiny", baseline="NumPy + put").splitlines()
    assert lines[0] == "tiny"
    assert lines[1].startswith("  rows/s, steady window, loader/NumPy + put: median ")
    assert [line.split(" medians:")[0] for line in lines if " medians:" in line] == ["  NumPy + put", "  loader"]


def test_measure_refuses_iterators_whose_epochs_differ():
    torch_loader = pytest.importorskip("headrace.torch").Loader
    numpy_it = _tiny(10).create_tuple_iterator(output_numpy=True, num_epochs=-1)
    loader = torch_loader(_tiny(12), shard=False)
    try:
        with pytest.raises(RuntimeError, match="loader: an epoch of 12 batches, not 10"):
            ac.measure(numpy_it, loader, pairs=1, skip=1, tail=1)
    finally:
        loader.close()
        numpy_it.stop()


def test_the_check_run_reads_a_second_numpy_iterator(tmp_path, capsys):
    ac.main(["--adapter", "numpy", "--pairs", "2", "--items", "5120", "--skip", "2", "--tail", "1",
             "--data", str(tmp_path)])
    out = capsys.readouterr().out
    assert out.startswith("W1 threads, 2 workers, a second NumPy iterator vs NumPy (kept; steady window: batches 2..end-1)")
    assert out.count("95% interval of the median") >= 2
    with pytest.raises(SystemExit):
        ac.main(["--adapter", "numpy", "--depth", "4", "--data", str(tmp_path)])
    assert "--depth is the loader's: not with --adapter numpy" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        ac.main(["--adapter", "torch", "--baseline", "device_put", "--data", str(tmp_path)])
    assert "--baseline device_put is JAX's put: only with --adapter jax" in capsys.readouterr().err


def test_a_step_runs_after_every_batch_of_both_iterators():
    torch_loader = pytest.importorskip("headrace.torch").Loader
    numpy_it = _tiny(10).create_tuple_iterator(output_numpy=True, num_epochs=-1)
    loader = torch_loader(_tiny(10), shard=False)
    calls = []
    try:
        ac.measure(numpy_it, loader, pairs=2, skip=1, tail=1, step=lambda: calls.append(1))
    finally:
        loader.close()
        numpy_it.stop()
    assert len(calls) == (1 + 2) * 2 * 10  # an untimed epoch and 2 pairs, of each, 10 batches an epoch


def test_the_torch_step_is_one_operation_of_torch():
    # (the JAX step is tested in tests/jax/jax_cases.py: JAX runs in a process of its own)
    pytest.importorskip("torch")
    assert ac.make_step("torch")().tolist() == [2.0] * 4
    assert ac.make_step("none") is None
    with pytest.raises(ValueError, match="step must be 'none', 'torch' or 'jax', but got 'tf'"):
        ac.make_step("tf")
