import json

import numpy as np
import pytest

import headrace.dataset as ds


def test_defaults():
    c = ds.config
    assert c.get_seed() == 5489
    assert c.get_prefetch_size() == 16
    assert c.get_multiprocessing_start_method() == "fork"
    assert c.get_iterator_mode() == {"do_copy": False, "parallel_convert": False}
    assert c.get_error_samples_mode() == c.ErrorSamplesMode.RETURN
    assert 1 <= c.get_num_parallel_workers() <= 8


@pytest.mark.parametrize("setter, value, exc, text", [
    ("set_seed", -1, ValueError, r"seed given is not within the required range \[0, UINT32_MAX\(4294967295\)\]."),
    ("set_seed", "a", TypeError, "seed isn't of type int."),
    ("set_seed", 2**32, ValueError, "seed given is not within the required range"),
    ("set_num_parallel_workers", 0, ValueError, r"Number of parallel workers given is not within the required range \(0, INT32_MAX\(2147483647\)\]."),
    ("set_prefetch_size", 0, ValueError, r"size is not within the required range \(0, INT32_MAX\(2147483647\)\]."),
    ("set_multiprocessing_start_method", "x", ValueError, r"Input start_method is not within the valid set of \['fork', 'spawn'\]."),
    ("set_monitor_sampling_interval", 0, ValueError, "Interval given is not within the required range"),
    ("set_callback_timeout", 0, ValueError, "Timeout given is not within the required range."),
    ("set_enable_shared_mem", 1, TypeError, "enable must be of type bool."),
])
def test_setter_errors(setter, value, exc, text):
    with pytest.raises(exc, match=text):
        getattr(ds.config, setter)(value)


def test_set_and_get_and_snapshot_at_iterator_creation():
    ds.config.set_seed(1)
    assert ds.config.get_seed() == 1
    ds.config.set_prefetch_size(4)
    assert ds.config.get_prefetch_size() == 4
    ds.config.set_multiprocessing_start_method("spawn")
    assert ds.config.get_multiprocessing_start_method() == "spawn"
    d = ds.NumpySlicesDataset(list(range(10)))
    it = d.create_tuple_iterator(output_numpy=True)
    ds.config.set_seed(2)  # after the iterator was created: does not change its order
    first = [int(r[0]) for r in it]
    ds.config.set_seed(1)
    assert [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)] == first


def test_more_workers_than_cpus_warns(monkeypatch):
    monkeypatch.setattr(ds.config.os, "cpu_count", lambda: 2)
    with pytest.warns(UserWarning, match="exceeds the number of CPUs"):
        ds.config.set_num_parallel_workers(4)
    assert ds.config.get_num_parallel_workers() == 4


def test_load(tmp_path):
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"seed": 9, "numParallelWorkers": 1, "opConnectorSize": 8}))
    ds.config.load(str(p))
    assert (ds.config.get_seed(), ds.config.get_num_parallel_workers(), ds.config.get_prefetch_size()) == (9, 1, 8)
    with pytest.raises(RuntimeError, match="Failed to load config file"):
        ds.config.load(str(tmp_path / "missing.json"))


def test_auto_offload_is_refused_not_ignored():
    assert ds.config.get_auto_offload() is False
    ds.config.set_auto_offload(False)
    with pytest.raises(ValueError, match=r"set_auto_offload\(True\) is not supported: headrace runs dataset "
                                         r"operations on the host"):
        ds.config.set_auto_offload(True)
    assert ds.config.get_auto_offload() is False
    with pytest.raises(TypeError, match="offload must be of type bool."):
        ds.config.set_auto_offload(1)


def test_no_video_backend_without_video_decoding():
    # headrace decodes no video (MindSpore's read_video / DecodeVideo are absent): no backend to pick
    assert not hasattr(ds.config, "set_video_backend") and not hasattr(ds.config, "get_video_backend")
    assert not hasattr(ds.vision, "read_video") and not hasattr(ds.vision, "DecodeVideo")


@pytest.mark.parametrize("name", ["fast_recovery", "dynamic_shape"])
def test_settings_met_either_way_are_reported_back(name):
    setter, getter = getattr(ds.config, f"set_{name}"), getattr(ds.config, f"get_{name}")
    default = getter()
    setter(not default)
    assert getter() is (not default)
    with pytest.raises(TypeError, match="must be of type bool."):
        setter("yes")


@pytest.mark.parametrize("fast", [True, False])
def test_resume_is_exact_with_either_fast_recovery(fast):
    from headrace.dataset import vision
    ds.config.set_fast_recovery(fast)
    ds.config.set_seed(7)
    img = (np.arange(16 * 4 * 4 * 3) % 251).astype(np.uint8).reshape(16, 4, 4, 3)
    d = ds.NumpySlicesDataset({"a": img}, shuffle=True).map(
        [vision.RandomHorizontalFlip(0.5), lambda x: x + np.random.randint(0, 5, dtype=np.uint8)], "a").batch(2)
    whole = [r[0].tolist() for r in d.create_tuple_iterator(num_epochs=1, output_numpy=True)]
    it = d.create_tuple_iterator(num_epochs=1, output_numpy=True)
    head = [next(it)[0].tolist() for _ in range(3)]
    state = it.get_state()
    it.stop()
    again = d.create_tuple_iterator(num_epochs=1, output_numpy=True)
    again.set_state(state)
    assert head + [r[0].tolist() for r in again] == whole


# The type checks the setters share (headrace/dataset/core/_store.py): each message names the
# setter's own parameter, and a bool is never taken for an int.
@pytest.mark.parametrize("setter, value, text", [
    ("set_seed", True, "seed isn't of type int."),
    ("set_num_parallel_workers", 2.0, "num isn't of type int."),
    ("set_prefetch_size", True, "size isn't of type int."),
    ("set_monitor_sampling_interval", 1.5, "interval isn't of type int."),
    ("set_callback_timeout", False, "timeout isn't of type int."),
    ("set_multiprocessing_timeout_interval", "300", "interval isn't of type int."),
    ("set_worker_timeout", True, "timeout isn't of type int or float, but got bool."),
    ("set_helper_idle_timeout", "5", "timeout isn't of type int or float, but got str."),
    ("set_strict_decode", 1, "strict must be of type bool."),
    ("set_numa_enable", None, "numa_enable must be of type bool."),
])
def test_setter_type_errors_name_the_parameter(setter, value, text):
    before = {name: getattr(ds.config, name)() for name in ds.config.__all__ if name.startswith("get_")}
    with pytest.raises(TypeError) as e:
        getattr(ds.config, setter)(value)
    assert str(e.value) == text
    assert {name: getattr(ds.config, name)() for name in before} == before  # a refused value changes nothing


@pytest.mark.parametrize("setter, value, getter, expected", [
    ("set_worker_timeout", 2, "get_worker_timeout", 2),
    ("set_helper_idle_timeout", 0, "get_helper_idle_timeout", 0.0),
    ("set_callback_timeout", 2**31 - 1, "get_callback_timeout", 2**31 - 1),
    ("set_monitor_sampling_interval", 1, "get_monitor_sampling_interval", 1),
])
def test_setter_bounds_are_accepted(setter, value, getter, expected):
    getattr(ds.config, setter)(value)
    got = getattr(ds.config, getter)()
    assert got == expected and type(got) is type(expected)


def test_every_config_name_is_the_same_object_at_each_path():
    import headrace.dataset.core.config as deep
    from headrace.dataset.core import _autotune, _debug_mode, _iteration
    assert ds.config is deep and ds.core.config is deep
    assert len(deep.__all__) == 49 and sorted(deep.__all__) == deep.__all__
    for name in deep.__all__:
        assert getattr(ds.config, name) is getattr(deep, name), name
    # the private getters other modules read, and the defaults, stay importable from config
    assert (deep._sending_batches, deep._debug_before_run, deep._autotune_filepath) == (
        _iteration._sending_batches, _debug_mode._debug_before_run, _autotune._autotune_filepath)
    assert (deep.DEFAULT_SEED, deep.DEFAULT_MAX_IMAGE_PIXELS) == (5489, 89_478_485)


def test_reset_restores_every_default():
    defaults = {name: getattr(ds.config, name)() for name in ds.config.__all__ if name.startswith("get_")}
    ds.config.set_callback_timeout(5)
    ds.config.set_iterator_mode(do_copy=True)
    ds.config.set_sending_batches(3)
    ds.config.set_helper_idle_timeout(7)
    ds.config.set_seed(3)
    ds.config.set_error_samples_mode(ds.config.ErrorSamplesMode.SKIP)
    ds.config._reset()
    assert {name: getattr(ds.config, name)() for name in defaults} == defaults
    assert ds.config._sending_batches() == 0


def test_config_docstring_examples_run():
    import doctest
    import importlib
    import pkgutil

    import headrace.dataset.core as core
    attempted = 0
    for info in pkgutil.iter_modules(core.__path__):
        result = doctest.testmod(importlib.import_module(f"headrace.dataset.core.{info.name}"))
        assert result.failed == 0, info.name
        attempted += result.attempted
    assert attempted >= 8  # set_helper_idle_timeout's and set_enable_autotune's examples, at least
