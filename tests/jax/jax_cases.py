"""headrace.jax.Loader: arrays, buffers, checkpoints, sharding (2 CPU devices), several JAX
processes (CPU collectives over gloo), and the Orbax handler.

Run by test_jax.py in a pytest process of its own: once JAX has run a computation, every later
fork in that process warns "JAX is multithreaded", which would follow the rest of the suite."""
import json
import os
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import headrace.dataset as ds
from headrace.jax import Loader
from tests.helpers import (assert_fails_at_the_fourth_batch, assert_held_batches_keep_their_values,
                           assert_loader_resumes_after_every_batch, assert_reads_ahead,
                           noted_rows, patterned_batches, rows, run_together,
                           thread_spy, wait_for)


def numbers(n=10, shuffle=False, batch=4):
    return ds.NumpySlicesDataset({"x": np.arange(n, dtype=np.float32), "t": np.array([f"r{i}" for i in range(n)])},
                                 shuffle=shuffle).batch(batch)


def cpu_device():
    """The CPU device, named: the "on CPU devices" cases also run where the default device is a
    GPU."""
    return jax.devices("cpu")[0]


def env():
    return {**os.environ, "PYTHONPATH": os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", "")}


def test_batches_are_jax_arrays_and_text_stays_numpy():
    loader = Loader(numbers(), as_dict=True)
    got = list(loader)
    assert len(loader) == 3 and len(got) == 3
    assert all(isinstance(b["x"], jax.Array) for b in got)
    assert all(type(b["t"]) is np.ndarray for b in got)
    assert [b["x"].tolist() for b in got] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert got[2]["t"].tolist() == ["r8", "r9"] and got[0]["x"].dtype == np.float32
    device = jax.devices()[0]
    placed = list(Loader(numbers(), columns=["x"], device=device))
    assert all(b[0].devices() == {device} for b in placed)


def _put_threads(monkeypatch, fail_at=None):
    """The names of the threads that put each batch (the put raises at the ``fail_at``-th)."""
    from headrace.jax._put import DevicePut
    return thread_spy(monkeypatch, DevicePut, "row", fail_at, OverflowError("no room on the device"))


def _not_cpu(monkeypatch):
    """Makes new loaders treat their CPU device as another device: the device thread's path."""
    import headrace.jax._loader as loader_module
    monkeypatch.setattr(loader_module, "_on_cpu", lambda sharding, device: False)


def test_only_arrays_bound_for_cpu_devices_alone_take_the_prefetch_threads_put():
    from headrace.jax._loader import _on_cpu

    class Gpu:
        platform = "gpu"

    class Sharding:
        def __init__(self, *devices):
            self.device_set = set(devices)

    cpu, gpu = jax.devices("cpu")[0], Gpu()
    assert _on_cpu(None, cpu) and not _on_cpu(None, gpu)
    assert _on_cpu(Sharding(cpu), None) and not _on_cpu(Sharding(cpu, gpu), None)
    assert _on_cpu(None, None) == (jax.default_backend() == "cpu")


def test_device_puts_run_on_the_device_thread_not_the_loop(monkeypatch):
    _not_cpu(monkeypatch)
    threads = _put_threads(monkeypatch)
    got = [b[0].tolist() for b in Loader(numbers(), columns=["x"])]
    assert got == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert threads == ["headrace.jax.Loader device buffer"] * 3


def _prefetched(loader):
    """How many batches the loader's pipeline has made ahead (its prefetch thread's queue)."""
    return loader._reader._res.iterator._run.prefetched()


def test_on_cpu_devices_the_prefetch_thread_puts_ahead_and_no_device_thread_runs(monkeypatch):
    import threading
    import time
    threads = _put_threads(monkeypatch)
    loader = Loader(numbers(n=60, batch=2), columns=["x"], device=cpu_device())
    it = iter(loader)
    got = []
    for _ in range(31):
        # a training step, after which the next batch is ready (a batch the loop waits for is
        # put in the loop's thread: see the next test)
        time.sleep(0.005)
        wait_for(lambda: _prefetched(loader) > 0 or len(got) == 30, "a batch ready")  # (then the end)
        b = next(it, None)
        if b is None:
            break
        assert isinstance(b[0], jax.Array)
        got.append(b[0].tolist())
        seen = len(threads)  # (the next epoch's first batches are put ahead when this one ends)
        assert not [t.name for t in threading.enumerate() if "headrace.jax.Loader" in t.name]
    loader.close()
    assert got == [[i, i + 1] for i in range(0, 60, 2)]
    assert threads[:seen] == ["headrace-prefetch"] * 30


def test_on_cpu_devices_a_batch_the_loop_waits_for_is_put_in_the_loops_thread(monkeypatch):
    # XLA's put lets go of the GIL, and taking it back in the prefetch thread would delay the
    # next batch; the loop waits anyway
    import threading
    import time
    threads = _put_threads(monkeypatch)
    gates = [threading.Event() for _ in range(6)]

    def gated(x):
        assert gates[int(x)].wait(60)
        return x

    data = ds.NumpySlicesDataset({"x": np.arange(6, dtype=np.float32)}, shuffle=False).map(gated, input_columns="x")
    loader = Loader(data.batch(1), device=cpu_device())
    it = iter(loader)
    for i in range(6):
        time.sleep(0.005)  # a training step (a loop that takes batches back to back: see Ahead)
        if i % 2 == 0:  # the loop asks first, and the batch is made while it waits
            opener = threading.Thread(target=lambda: (wait_for(lambda: _waiting(loader), "the loop waits"),
                                                       gates[i].set()))
            opener.start()
            assert next(it)[0].tolist() == [i]
            opener.join()
        else:  # the batch is ready before the loop asks
            gates[i].set()
            wait_for(lambda: _prefetched(loader) > 0, "a batch ready")
            assert next(it)[0].tolist() == [i]
    assert threads == ["MainThread", "headrace-prefetch"] * 3
    loader.close()


def _waiting(loader):
    pf = loader._reader._res.iterator._run._prefetcher
    return pf is not None and pf.consumer_waiting


def test_on_cpu_devices_both_buffers_bound_the_batches_read_ahead():
    data, seen = noted_rows(40)
    loader = Loader(data, cpu_buffer=2, device_buffer=3, device=cpu_device())
    it = assert_reads_ahead(loader, seen, 2 + 3)
    assert [b[0].tolist() for b in it] == [[i] for i in range(1, 40)]
    loader.close()


@pytest.mark.parametrize("device_buffer, ahead", [(None, 4), (3, 4 + 3)])
def test_on_cpu_devices_by_default_the_buffer_is_the_pipelines_prefetch(device_buffer, ahead):
    ds.config.set_prefetch_size(4)  # cpu_buffer=None: as far ahead as NumPy output reads ...
    data, seen = noted_rows(40)
    loader = Loader(data, device_buffer=device_buffer, device=cpu_device())
    it = assert_reads_ahead(loader, seen, ahead)  # ... and a device_buffer given adds its batches
    assert [b[0].tolist() for b in it] == [[i] for i in range(1, 40)]
    loader.close()


@pytest.mark.parametrize("cpu", [True, False])
def test_a_put_that_fails_ahead_fails_in_the_loop_at_its_batch(monkeypatch, cpu):
    _put_threads(monkeypatch, fail_at=4)
    if cpu:  # put by the pipeline's prefetch thread
        loader = Loader(numbers(n=20, batch=2), columns=["x"], device=cpu_device())
        assert_fails_at_the_fourth_batch(loader, OverflowError, "no room on the device",
                                         ready=lambda: _prefetched(loader) > 0)
    else:  # put by the device thread
        _not_cpu(monkeypatch)
        assert_fails_at_the_fourth_batch(
            Loader(numbers(n=20, batch=2), columns=["x"]), OverflowError, "no room on the device",
            note="(raised in headrace's device queue thread 'headrace.jax.Loader device buffer')")


@pytest.mark.parametrize("cpu", [True, False])
def test_leaving_early_stops_both_threads(monkeypatch, cpu):
    import threading
    if not cpu:
        _not_cpu(monkeypatch)
    loader = Loader(numbers(n=40, batch=2), columns=["x"], cpu_buffer=2, device_buffer=2,
                    device=cpu_device() if cpu else None)
    for i, b in enumerate(loader):
        if i == 1:
            break
    names = [t.name for t in threading.enumerate()]
    assert not [n for n in names if "headrace.jax.Loader" in n or n.startswith("headrace-prefetch")], names
    assert [b[0].tolist() for b in loader][:1] == [[0, 1]]   # reading again works: a fresh epoch
    loader.close()


@pytest.mark.parametrize("cpu_buffer, device_buffer", [(1, 1), (2, 3), (4, 8)])
def test_state_counts_only_delivered_batches(cpu_buffer, device_buffer):
    ds.config.set_seed(9)
    data = ds.NumpySlicesDataset({"x": np.arange(11)}, shuffle=True).batch(2)
    loader = Loader(data, cpu_buffer=cpu_buffer, device_buffer=device_buffer)
    full, states = assert_loader_resumes_after_every_batch(loader, lambda: Loader(data, device_buffer=device_buffer))
    assert full == [r[0] for r in rows(data, num_epochs=2)]
    positions = [None if s["iterator"] == "null" else (json.loads(s["iterator"])["epoch"],
                                                       json.loads(s["iterator"])["step"]) for _, s in states]
    assert positions == [None] + [(0, k) for k in range(1, 7)] + [(1, 0)] + [(1, k) for k in range(1, 7)]
    loader.close()


def test_set_epoch_and_early_exit_follow_the_pipeline():
    ds.config.set_seed(4)
    data = ds.NumpySlicesDataset({"x": np.arange(8)}, shuffle=True).batch(4)
    expected = [r[0] for r in rows(data, num_epochs=3)]
    loader = Loader(data)
    for b in loader:
        break
    assert [b[0].tolist() for b in loader] == expected[2:4]
    loader.set_epoch(0)
    assert [b[0].tolist() for b in loader] == expected[0:2]
    loader.close()


def test_a_resumed_loop_that_sets_each_epoch_goes_on_from_the_restored_position():
    ds.config.set_seed(4)
    data = ds.NumpySlicesDataset({"x": np.arange(8)}, shuffle=True).batch(2)
    expected = [r[0] for r in rows(data, num_epochs=3)]  # 4 batches per epoch
    loader = Loader(data, device_buffer=2)
    loader.set_epoch(1)
    it = iter(loader)
    assert [next(it)[0].tolist() for _ in range(3)] == expected[4:7]
    state = loader.state_dict()
    it.close()
    loader.close()
    resumed, got = Loader(data), []
    resumed.load_state_dict(state)
    for epoch in (1, 2):
        resumed.set_epoch(epoch)
        got += [b[0].tolist() for b in resumed]
    assert got == expected[7:12]
    resumed.close()


def test_refused_states_and_argument_checks():
    loader = Loader(numbers())
    with pytest.raises(ValueError, match="the state comes from a different pipeline"):
        Loader(numbers(batch=3)).load_state_dict(Loader(numbers()).state_dict() | {
            "iterator": json.dumps(numbers().create_tuple_iterator(num_epochs=1).get_state())})
    with pytest.raises(ValueError, match="not valid JSON"):
        loader.load_state_dict(loader.state_dict() | {"iterator": "{"})
    with pytest.raises(ValueError, match=r"device_buffer must be in \[1, 1024\], but got 0"):
        Loader(numbers(), device_buffer=0)
    with pytest.raises(TypeError, match="cpu_buffer must be an int"):
        Loader(numbers(), cpu_buffer=2.0)
    with pytest.raises(TypeError, match="sharding must be a jax.sharding.Sharding"):
        Loader(numbers(), sharding="data")
    with pytest.raises(TypeError, match="device must be a jax.Device"):
        Loader(numbers(), device="cpu")
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("data",))
    with pytest.raises(ValueError, match="sharding and device cannot both be given"):
        Loader(numbers(), sharding=jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("data")),
               device=jax.devices()[0])
    with pytest.raises(TypeError, match="headrace dataset"):
        Loader(np.arange(3))
    loader.close()


SHARDING_SCRIPT = textwrap.dedent("""
    import json
    import jax, numpy as np, headrace.dataset as ds
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    from headrace.jax import Loader
    sharding = NamedSharding(Mesh(np.array(jax.devices()), ("data",)), P("data"))
    data = ds.NumpySlicesDataset({"x": np.arange(8).reshape(8, 1)}, shuffle=False).batch(4)
    out = []
    for b in Loader(data, sharding=sharding):
        out.append({"shape": list(b[0].shape), "sharding": list(b[0].sharding.spec),
                    "shards": sorted([[s.device.id, s.data.tolist()] for s in b[0].addressable_shards]),
                    "sum": int(jax.jit(lambda a: a.sum())(b[0]))})
    print(json.dumps({"devices": len(jax.devices()), "out": out}))
""")


def on_cpu_devices(script, count):
    """The JSON ``script`` prints last, run in a JAX process of its own with ``count`` CPU devices."""
    run_env = env() | {"XLA_FLAGS": f"--xla_force_host_platform_device_count={count}", "JAX_PLATFORMS": "cpu"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180, env=run_env)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_sharding_builds_global_arrays_over_two_cpu_devices():
    report = on_cpu_devices(SHARDING_SCRIPT, 2)
    assert report["devices"] == 2
    assert report["out"] == [
        {"shape": [4, 1], "sharding": ["data"], "shards": [[0, [[0], [1]]], [1, [[2], [3]]]],
         "sum": 6},
        {"shape": [4, 1], "sharding": ["data"], "shards": [[0, [[4], [5]]], [1, [[6], [7]]]],
         "sum": 22}]


PLACEMENT_SCRIPT = textwrap.dedent("""
    import json, time
    import numpy as np, jax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import headrace.dataset as ds
    from headrace.jax import Loader
    devs = jax.devices()
    data = ds.NumpySlicesDataset({"x": np.arange(8)}, shuffle=False).batch(4)
    where = lambda b: [[d.id for d in b[0].devices()], b[0].committed]
    report = {}
    with jax.default_device(devs[3]):
        made_in = Loader(data)
    time.sleep(0.3)  # it reads ahead meanwhile, outside the context
    report["made in a context"] = [where(b) for _ in range(2) for b in made_in]
    plain = Loader(data)
    with jax.default_device(devs[2]):
        report["read in a context"] = [where(b) for b in plain]
    sharding = NamedSharding(Mesh(np.array(devs), ("data",)), P("data"))
    short = Loader(ds.NumpySlicesDataset({"x": np.arange(10)}, shuffle=False).batch(4), sharding=sharding)
    shapes = []
    try:
        for b in short:
            shapes.append(list(b[0].shape))
    except ValueError as e:
        report["short"] = [shapes, str(e), e.__notes__[-1]]
    print(json.dumps(report))
""")


def test_default_device_and_a_batch_that_does_not_fit_the_sharding():
    report = on_cpu_devices(PLACEMENT_SCRIPT, 4)
    # device=None: the default device where the loader was made, uncommitted, every epoch
    assert report["made in a context"] == [[[3], False]] * 4
    assert report["read in a context"] == [[[0], False]] * 2
    shapes, message, note = report["short"]
    assert shapes == [[4], [4]]
    assert message.startswith("headrace.jax.Loader: column 'x': this process's batch of shape (2,) does not fit "
                              "sharding=NamedSharding(")
    assert message.endswith("An epoch's last batch is short unless the pipeline batches with drop_remainder=True.")
    assert "axis 0 is partitioned 4 times, but the dimension size is 2" in message
    assert note == "headrace.jax.Loader: raised making batch 2 (from 0) of epoch 0."


PROCESS_SCRIPT = textwrap.dedent("""
    import json, sys
    import jax
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address="127.0.0.1:" + sys.argv[2], num_processes=2,
                               process_id=int(sys.argv[1]))
    import numpy as np, headrace.dataset as ds
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    from headrace.jax import Loader
    sharding = NamedSharding(Mesh(np.array(jax.devices()), ("data",)), P("data"))
    data = ds.NumpySlicesDataset({"x": np.arange(12)}, shuffle=True).batch(2)
    loader = Loader(data, sharding=sharding)
    out = [{"shape": list(b[0].shape), "local": [s.data.tolist() for s in b[0].addressable_shards],
            "sum": int(jax.jit(lambda a: a.sum())(b[0]))} for b in loader]
    print(json.dumps({"shard": [loader.num_shards, loader.shard_id], "len": len(loader), "out": out}))
    jax.distributed.shutdown()
""")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_two_processes(tmp_path, name, text):
    """Runs ``text`` as processes 0 and 1 of a JAX job on the CPU; the JSON each printed last."""
    script = tmp_path / name
    script.write_text(text)
    port = str(_free_port())
    run_env = env() | {"JAX_PLATFORMS": "cpu"}
    outs = run_together([[sys.executable, str(script), str(i), port] for i in range(2)], run_env, timeout=240)
    return [json.loads(o.strip().splitlines()[-1]) for o in outs]


def test_two_jax_processes_read_their_shards_into_global_arrays(tmp_path):
    r0, r1 = _run_two_processes(tmp_path, "proc.py", PROCESS_SCRIPT)
    assert r0["shard"] == [2, 0] and r1["shard"] == [2, 1] and r0["len"] == r1["len"] == 3
    local0 = [v for b in r0["out"] for s in b["local"] for v in s]
    local1 = [v for b in r1["out"] for s in b["local"] for v in s]
    assert sorted(local0 + local1) == list(range(12))  # each row once across the two processes
    for b0, b1 in zip(r0["out"], r1["out"]):
        assert b0["shape"] == b1["shape"] == [4]  # global batch: 2 rows from each process
        assert b0["sum"] == b1["sum"] == sum(b0["local"][0]) + sum(b1["local"][0])


def test_orbax_handler_saves_and_restores_the_loader(tmp_path):
    pytest.importorskip("orbax.checkpoint")
    import orbax.checkpoint as ocp

    from headrace.jax.orbax_handler import LoaderCheckpointHandler, LoaderRestore, LoaderSave
    ds.config.set_seed(2)
    data = ds.NumpySlicesDataset({"x": np.arange(10)}, shuffle=True).batch(3)
    expected = [r[0] for r in rows(data, num_epochs=1)]
    loader = Loader(data)
    it = iter(loader)
    got = [next(it)[0].tolist()]
    ckpt = ocp.Checkpointer(LoaderCheckpointHandler())
    ckpt.save(tmp_path / "step1", args=LoaderSave(loader))
    assert sorted(p.name for p in (tmp_path / "step1").iterdir() if p.suffix == ".json") == [
        "headrace_loader_process_0_of_1.json"]
    it.close()
    fresh = Loader(data)
    ckpt.restore(tmp_path / "step1", args=LoaderRestore(fresh))
    got += [b[0].tolist() for b in fresh]
    assert got == expected
    with pytest.raises(ValueError, match="the state comes from a different pipeline"):
        ckpt.restore(tmp_path / "step1", args=LoaderRestore(Loader(data.batch(1))))
    with pytest.raises(TypeError, match="expected a headrace loader"):
        ckpt.restore(tmp_path / "step1", args=LoaderRestore(object()))
    loader.close()
    fresh.close()


ELASTIC_SCRIPT = textwrap.dedent("""
    import json, sys
    import jax
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address="127.0.0.1:" + sys.argv[2], num_processes=2,
                               process_id=int(sys.argv[1]))
    import numpy as np, headrace.dataset as ds
    from headrace.jax import Loader
    ds.config.set_seed(4)
    loader = Loader(ds.NumpySlicesDataset({"x": np.arange(21)}, shuffle=True).batch(2))
    it = iter(loader)
    got = [next(it)[0].tolist() for _ in range(2)]
    if len(sys.argv) > 3:  # also saved through the Orbax handler, into this directory
        import orbax.checkpoint as ocp
        from headrace.jax.orbax_handler import LoaderCheckpointHandler, LoaderSave
        ocp.Checkpointer(LoaderCheckpointHandler()).save(sys.argv[3], args=LoaderSave(loader))
    print(json.dumps({"got": got, "state": loader.state_dict()}))
    it.close()
    loader.close()
    jax.distributed.shutdown()
""")


def test_a_state_of_two_jax_processes_restores_in_one(tmp_path):
    reports = _run_two_processes(tmp_path, "elastic.py", ELASTIC_SCRIPT)
    before = [x for r in reports for b in r["got"] for x in b]          # 2 processes x 2 batches of 2
    assert len(set(before)) == 8
    ds.config.set_seed(4)
    one = Loader(ds.NumpySlicesDataset({"x": np.arange(21)}, shuffle=True).batch(2))
    one.load_state_dict(reports[1]["state"])                           # either process's state
    rest = [x for b in one for x in b[0].tolist()]
    assert sorted(before + rest) == list(range(21))                    # the 13 others, once each
    assert json.loads(one.state_dict()["resume"]) == {"pass": 0, "start": 8, "shards": 2}
    one.close()


def test_an_orbax_checkpoint_of_two_jax_processes_restores_in_one(tmp_path):
    pytest.importorskip("orbax.checkpoint")
    import orbax.checkpoint as ocp

    from headrace.jax.orbax_handler import LoaderCheckpointHandler, LoaderRestore
    script = tmp_path / "elastic.py"
    script.write_text(ELASTIC_SCRIPT)
    port, ckpt = str(_free_port()), tmp_path / "ckpt"
    run_env = env() | {"JAX_PLATFORMS": "cpu"}
    outs = run_together([[sys.executable, str(script), str(i), port, str(ckpt)] for i in range(2)], run_env,
                        timeout=240)
    before = [x for o in outs for b in json.loads(o.strip().splitlines()[-1])["got"] for x in b]
    assert len(set(before)) == 8
    assert sorted(p.name for p in ckpt.iterdir() if p.suffix == ".json") == [
        "headrace_loader_process_0_of_2.json", "headrace_loader_process_1_of_2.json"]
    ds.config.set_seed(4)
    one = Loader(ds.NumpySlicesDataset({"x": np.arange(21)}, shuffle=True).batch(2))
    checkpointer = ocp.Checkpointer(LoaderCheckpointHandler())
    checkpointer.restore(ckpt, args=LoaderRestore(one))               # 1 process: process 0's file
    rest = [x for b in one for x in b[0].tolist()]
    assert sorted(before + rest) == list(range(21))                    # the 13 others, once each
    one.close()
    # a directory with a process's file missing, or files of two saves, is refused by name
    (ckpt / "headrace_loader_process_1_of_2.json").rename(ckpt / "headrace_loader_process_1_of_3.json")
    with pytest.raises(ValueError, match=r"holds loader states saved by \[2, 3\] processes"):
        checkpointer.restore(ckpt, args=LoaderRestore(Loader(ds.NumpySlicesDataset({"x": np.arange(21)}))))
    (ckpt / "headrace_loader_process_1_of_3.json").unlink()
    with pytest.raises(FileNotFoundError, match=r"lacks the loader states of processes \[1\] of the 2 that saved"):
        checkpointer.restore(ckpt, args=LoaderRestore(Loader(ds.NumpySlicesDataset({"x": np.arange(21)}))))
    (ckpt / "headrace_loader_process_0_of_2.json").unlink()
    with pytest.raises(FileNotFoundError, match="holds no loader state"):
        checkpointer.restore(ckpt, args=LoaderRestore(Loader(ds.NumpySlicesDataset({"x": np.arange(21)}))))


def test_close_during_an_epoch_ends_the_device_thread_and_the_epoch_raises(monkeypatch):
    # The device thread of a suspended epoch outlived close() and, at interpreter exit, was torn
    # down inside JAX: "terminate called ... FATAL: exception not rethrown" (3 exits in 14).
    import threading
    _not_cpu(monkeypatch)

    def device_threads():
        return [t.name for t in threading.enumerate() if t.name == "headrace.jax.Loader device buffer"]

    loader = Loader(numbers(40))
    it = iter(loader)
    assert next(it)[0].tolist() == [0, 1, 2, 3]
    assert device_threads() == ["headrace.jax.Loader device buffer"]
    loader.close()
    assert device_threads() == []
    with pytest.raises(RuntimeError, match="The device queue was stopped"):
        next(it)
    loader.close()  # idempotent


def test_close_during_an_epoch_on_cpu_devices_ends_the_prefetch_thread():
    import threading

    def prefetch_threads():
        return [t.name for t in threading.enumerate() if t.name.startswith("headrace-prefetch")]

    loader = Loader(numbers(40), device=cpu_device())
    it = iter(loader)
    assert next(it)[0].tolist() == [0, 1, 2, 3]
    loader.close()
    assert prefetch_threads() == []
    with pytest.raises(RuntimeError, match="The iterator has been stopped"):
        next(it)
    loader.close()


def test_batches_from_worker_processes_keep_their_values_while_held():
    # On a CPU device XLA uses an aligned batch's memory as it is; on a GPU the copy is
    # asynchronous: either way the engine must not reuse a batch's memory while an array holds it.
    assert_held_batches_keep_their_values(Loader(patterned_batches()), lambda a: isinstance(a, jax.Array))


def test_a_batch_the_loop_drops_is_freed_at_once():
    # Freeing a JAX batch inside the next request took ~80 us of the loop's wait for data.
    import weakref
    loader = Loader(numbers(40))
    it = iter(loader)
    batch = next(it)
    ref = weakref.ref(batch[0])
    del batch
    assert ref() is None
    assert next(it)[0].tolist() == [4, 5, 6, 7]
    loader.close()


def test_a_large_batch_reaches_the_cpu_device_without_a_copy():
    # The engine's large batches start 64-byte aligned, which XLA's CPU client uses as it is
    # (W2's 77 MB batch: 3 ms against 70 ms for a copy).
    data = ds.NumpySlicesDataset({"x": np.ones((8, 3, 128, 128), np.float32)}, shuffle=False).batch(8)
    batch = next(data.create_tuple_iterator(output_numpy=True, num_epochs=1))[0]
    assert batch.nbytes >= 1 << 20 and batch.ctypes.data % 64 == 0
    assert jax.device_put(batch, jax.devices("cpu")[0]).unsafe_buffer_pointer() == batch.ctypes.data


PUT_ARRAYS = [np.arange(12, dtype=np.float32).reshape(3, 4), np.arange(5, dtype=np.int32), np.array(7, np.uint8),
              np.array([True, False]), np.arange(6, dtype=np.float16)[::2], np.array([np.nan, 1.5], np.float32),
              np.arange(4, dtype=np.int64), np.arange(3, dtype=np.float64), np.zeros((0, 3), np.float32),
              np.array([2**40 + 3, -(2**33) - 1, 9], np.int64), np.array([2**63 + 5], np.uint64),
              np.array([1 + 2j], np.complex128)]


def same_as_device_put(got, value, device):
    want = jax.device_put(value, device)
    assert type(got) is type(want) and got.aval == want.aval and got.sharding == want.sharding
    assert got._committed == want._committed and got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("device", [None, "first"])
def test_the_direct_put_gives_what_device_put_gives(device):
    from headrace.jax._put import DevicePut
    device = jax.devices()[0] if device == "first" else device
    put = DevicePut(device)
    for value in PUT_ARRAYS * 2:  # (the second time with the abstract values kept from the first)
        same_as_device_put(put(value), value, device)
    assert put._fast is not None  # the first float32 array checked the direct path; it agreed
    # dtypes JAX converts (64-bit ones without x64) are converted by NumPy, then put directly
    assert put._target == {np.dtype(t): np.dtype(t) for t in (np.float32, np.int32, np.uint8, np.bool_, np.float16)} | {
        np.dtype(np.int64): np.dtype(np.int32), np.dtype(np.float64): np.dtype(np.float32),
        np.dtype(np.uint64): np.dtype(np.uint32), np.dtype(np.complex128): np.dtype(np.complex64)}
    # a batch's columns at once: the same arrays, text and Python objects left as they are
    text, obj = np.array(["a"]), {"k": np.arange(2)}
    for puts in (DevicePut(device), put):  # no dtype checked yet, then all of them
        got = puts.row(PUT_ARRAYS + [text, obj])
        for g, value in zip(got, PUT_ARRAYS):
            same_as_device_put(g, value, device)
        assert len(got) == len(PUT_ARRAYS) + 2 and got[-2] is text and got[-1] is obj


def test_the_direct_put_is_checked_on_the_first_values_of_a_large_array(monkeypatch):
    # (comparing a whole 77 MB batch cost W2 ~0.1-0.5 s an epoch)
    from headrace.jax import _put
    real, checked = _put._agrees, []
    monkeypatch.setattr(_put, "_agrees", lambda fast, value, ref: checked.append(value.copy()) or real(fast, value, ref))
    put = _put.DevicePut(None)
    big = np.arange(100_000, dtype=np.float32).reshape(1000, 100)
    same_as_device_put(put(big), big, None)
    assert [c.tolist() for c in checked] == [list(range(_put.PROBE))] and put._target == {big.dtype: big.dtype}
    same_as_device_put(put(big + 1), big + 1, None)  # the direct path now
    assert len(checked) == 1


def test_an_int64_column_is_put_directly_after_its_first_array(monkeypatch):
    from headrace.jax import _put
    real, calls = _put._batched_put, []

    def counted(*args):
        calls.append(args[0])
        return real(*args)

    monkeypatch.setattr(_put, "_batched_put", counted)
    put = _put.DevicePut(None)
    first = put(np.arange(3, dtype=np.int64))  # the public path, then the check: one direct put
    assert len(calls) == 1 and first.dtype == np.int32
    labels = np.array([5, 2**40 + 7, -1], np.int64)
    got = put(labels)
    assert len(calls) == 2 and calls[1].dtype == np.int32
    same_as_device_put(got, labels, None)
    assert np.asarray(got).tolist() == [5, 7, -1]  # as JAX wraps it


def test_the_direct_put_is_not_used_when_it_disagrees_with_device_put(monkeypatch):
    from headrace.jax import _put
    real = _put._batched_put

    def off_by_one(aval, sharding, xs, devices, committed):
        return real(aval, sharding, [x + 1 for x in xs], devices, committed)

    # only headrace's module sees the stand-ins (jax.device_put keeps the real function)
    monkeypatch.setattr(_put, "_batched_put", off_by_one)
    put = _put.DevicePut(None)
    for value in PUT_ARRAYS:
        same_as_device_put(put(value), value, None)
    assert put._broken and put._fast is None and put._target == {}

    def wrong_for_int32(aval, sharding, xs, devices, committed):
        return real(aval, sharding, [x + 1 if x.dtype == np.int32 else x for x in xs], devices, committed)

    # within one batch: float32 agrees and is put directly, int32 then disagrees, and the batch's
    # last float32 column takes the public path
    monkeypatch.setattr(_put, "_batched_put", wrong_for_int32)
    put = _put.DevicePut(None)
    batch = [PUT_ARRAYS[0], PUT_ARRAYS[1], PUT_ARRAYS[0] * 2]
    for got, value in zip(put.row(batch), batch):
        same_as_device_put(got, value, None)
    assert put._broken and put._fast is None

    def broken(*args):
        raise TypeError("changed signature")

    monkeypatch.setattr(_put, "_batched_put", broken)
    put = _put.DevicePut(None)
    assert np.asarray(put(PUT_ARRAYS[0])).tolist() == PUT_ARRAYS[0].tolist() and put._fast is None
    loader = Loader(numbers())  # the loader reads through the public path then
    assert [b[0].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    loader.close()


def test_the_adapter_benchmarks_jax_step_is_one_jax_operation():
    from benchmarks import adapter_cost
    out = adapter_cost.make_step("jax")()
    assert isinstance(out, jax.Array) and np.asarray(out).tolist() == [2.0] * 4


def test_the_adapter_benchmarks_device_put_baseline_puts_each_numpy_batch_in_the_loop(tmp_path, capsys):
    from benchmarks import adapter_cost
    numpy_it = numbers(10).create_tuple_iterator(columns=["x"], output_numpy=True, num_epochs=-1)
    try:
        loop = adapter_cost.LoopPut(numpy_it)
        for _ in range(2):  # each iter() is one epoch, as the kept iterator's
            epoch = list(loop)
            assert [type(b[0]) for b in epoch] == [type(jax.device_put(np.zeros(1)))] * 3
            assert [np.asarray(b[0]).tolist() for b in epoch] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
            assert {b[0].dtype for b in epoch} == {np.dtype(np.float32)}
            assert all(not b[0].committed for b in epoch)  # jax.device_put(batch), no device named
    finally:
        numpy_it.stop()
    adapter_cost.main(["--adapter", "jax", "--baseline", "device_put", "--pairs", "2", "--items", "5120",
                       "--skip", "2", "--tail", "1", "--data", str(tmp_path)])
    out = capsys.readouterr().out
    assert out.startswith("W1 threads, 2 workers, headrace.jax.Loader vs NumPy + jax.device_put (kept; "
                          "steady window: batches 2..end-1)")
    assert "rows/s, steady window, loader/NumPy + jax.device_put: median " in out
    assert "  NumPy + jax.device_put medians: " in out
