"""The split of a map with GPU ops (issue 43) on the fake backend: random parameters drawn in the
workers as on the CPU path, one GPU stage per batch, CPU fallbacks and their counters."""
from __future__ import annotations

import os
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import headrace.dataset as ds
import headrace.dataset.vision as vision
from headrace._engine import device_stage
from headrace._image import device
from headrace._util.errors import PipelineError
from headrace.dataset.vision import Inter
from tests.gpu.images import jpeg, mixed, photo, png, progressive

MEAN, STD = [120.0, 110.0, 100.0], [60.0, 55.0, 50.0]


@pytest.fixture()
def fake(monkeypatch):
    monkeypatch.setenv(device.BACKEND_ENV, "fake")


def source(images):
    return ds.GeneratorDataset(lambda: ((x,) for x in images), ["image"], shuffle=False)


def rcdr_chain(target):
    # Output 40 from images of at most 64 x 80: every window is under twice the output, so the CPU
    # op decodes at full scale (no reduced DCT) and its pixels equal the fake backend's.
    return [vision.RandomCropDecodeResize(40, scale=(0.1, 1.0)).device(target),
            vision.RandomHorizontalFlip().device(target), vision.RandomVerticalFlip(0.3).device(target),
            vision.Normalize(MEAN, STD).device(target), vision.HWC2CHW()]


def rrc_chain(target):
    return [vision.Decode().device(target), vision.RandomResizedCrop((24, 32)).device(target),
            vision.RandomHorizontalFlip().device(target)]


def read(images, ops, batch=8, **map_kw):
    data = source(images).map(ops, input_columns="image", **map_kw)
    if batch:
        data = data.batch(batch)
    return [r[0] for r in data.create_tuple_iterator(output_numpy=True)]


MODES = [pytest.param(dict(num_parallel_workers=1), id="1-worker"),
         pytest.param(dict(num_parallel_workers=2), id="2-threads"),
         pytest.param(dict(num_parallel_workers=1, python_multiprocessing=True), id="1-process"),
         pytest.param(dict(num_parallel_workers=2, python_multiprocessing=True), id="2-processes")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("chain", [rcdr_chain, rrc_chain])
def test_gpu_ops_give_the_cpu_paths_windows_and_flips_for_every_sample(fake, mode, chain):
    images = mixed(40)
    ds.config.set_seed(1234)
    cpu = read(images, chain("CPU"), **mode)
    gpu = read(images, chain("GPU"), **mode)
    assert [b.shape for b in gpu] == [b.shape for b in cpu] and len(gpu) == 5
    assert gpu[0].dtype == cpu[0].dtype
    for a, b in zip(cpu, gpu):
        assert np.array_equal(a, b)  # same windows and flips: the pixels of different ones differ


def test_the_windows_and_flips_vary_and_follow_the_seed(fake, monkeypatch):
    seen = []

    class Recording(device.FakeBackend):
        def transform(self, img, steps):
            seen.append(steps[1:])
            return super().transform(img, steps)

    monkeypatch.setattr(device_stage.device, "select_backend", lambda ops: Recording())
    images = [jpeg(photo(64, 80, i)) for i in range(30)]
    ds.config.set_seed(5)
    read(images, rcdr_chain("GPU"), num_parallel_workers=2)
    first = list(seen)
    seen.clear()
    read(images, rcdr_chain("GPU"), num_parallel_workers=1)
    assert seen == first  # the worker count changes nothing
    windows = {s[0] for s in first}
    assert len(first) == 30 and len(windows) == 30 and all(s[0][0] == "crop" for s in first)
    flips = [sum(1 for t in s if t[0] == "flip") for s in first]
    assert 0 < sum(flips) < 60
    seen.clear()
    ds.config.set_seed(6)
    read(images, rcdr_chain("GPU"), num_parallel_workers=1)
    assert {s[0] for s in seen} != windows


def test_png_and_progressive_jpegs_fall_back_and_the_profiler_counts_them(fake):
    # 5% PNG and 2% progressive JPEG among 400 images
    images = [jpeg(photo(48, 56, i)) for i in range(400)]
    for i in range(0, 400, 20):
        images[i] = png(photo(48, 56, i))
    for i in range(3, 400, 50):
        images[i] = progressive(photo(48, 56, i))
    ds.config.set_seed(3)
    cpu = read(images, rcdr_chain("CPU"), batch=50, num_parallel_workers=2)
    with ds.profile() as p:
        gpu = read(images, rcdr_chain("GPU"), batch=50, num_parallel_workers=2)
    assert all(np.array_equal(a, b) for a, b in zip(cpu, gpu)) and len(gpu) == 8
    (run,) = p.to_dict()["runs"]
    (dev,) = run["devices"]
    assert dev["backend"] == "fake" and dev["samples"] == 400 and dev["batches"] == 8
    assert dev["fallbacks"] == {"png": 20, "progressive": 8}
    assert abs(dev["fallback_pct"] - 7.0) <= 1.0
    assert any(o["label"].startswith("gpu_stage") or o["name"] == "GPUStage" for o in run["ops"])


def test_the_counters_are_kept_without_the_profiler(fake):
    images = mixed(12, png_every=4, progressive_every=6)
    it = source(images).map(rcdr_chain("GPU"), input_columns="image").batch(4).create_tuple_iterator()
    assert len(list(it)) == 3
    stage = it._run.tree
    assert type(stage) is device_stage.DeviceStageIter
    assert stage.counters() == {"backend": "fake", "samples": 12, "batches": 3,
                                "fallbacks": {"png": 3, "progressive": 2}, "fallback_share": 5 / 12}
    it.stop()


def test_a_jpeg_the_backend_fails_to_decode_is_decoded_on_the_cpu_and_counted(fake, monkeypatch):
    images = [jpeg(photo(50, 60, i)) for i in range(6)]
    bad = bytes(images[4])

    class Failing(device.FakeBackend):
        def decode(self, buffers, op):
            return [None if bytes(b) == bad else img for b, img in zip(buffers, super().decode(buffers, op))]

    monkeypatch.setattr(device_stage.device, "select_backend", lambda ops: Failing())
    ds.config.set_seed(9)
    cpu = read(images, rrc_chain("CPU"), batch=3)
    with ds.profile() as p:
        gpu = read(images, rrc_chain("GPU"), batch=3)
    assert all(np.array_equal(a, b) for a, b in zip(cpu, gpu))
    (dev,) = p.to_dict()["runs"][0]["devices"]
    assert dev["fallbacks"] == {"decode failed": 1} and dev["fallback_pct"] == pytest.approx(16.7)


def test_a_jpeg_without_its_end_marker_falls_back_in_the_worker(fake):
    whole = jpeg(photo(40, 40, 1))
    cut = np.concatenate([whole[:-2], np.frombuffer(b"\x00\x00", np.uint8)])
    images = [jpeg(photo(40, 40, 0)), cut]
    ds.config.set_seed(2)
    with pytest.warns(UserWarning, match="JPEG data ends early"):
        cpu = read(images, [vision.Decode().device("CPU"), vision.Resize((8, 8)).device("CPU")], batch=2)
    with ds.profile() as p, pytest.warns(UserWarning, match="JPEG data ends early"):
        gpu = read(images, [vision.Decode().device("GPU"), vision.Resize((8, 8)).device("GPU")], batch=2)
    assert np.array_equal(cpu[0], gpu[0]) and gpu[0].shape == (2, 8, 8, 3)
    assert p.to_dict()["runs"][0]["devices"][0]["fallbacks"] == {"damaged": 1}


def test_without_a_backend_the_build_fails_naming_the_ops(monkeypatch):
    monkeypatch.delenv(device.BACKEND_ENV, raising=False)
    data = source(mixed(4)).map(rrc_chain("GPU"), input_columns="image").batch(2)
    with pytest.raises(device.NoBackendError) as e:
        data.create_tuple_iterator()
    assert str(e.value).startswith("Decode, RandomResizedCrop, RandomHorizontalFlip: device_target 'GPU' "
                                   "needs a GPU decode backend, and none is available")
    assert "HEADRACE_GPU_BACKEND=fake" in str(e.value) and ".device('CPU')" in str(e.value)


def test_rows_without_a_batch_get_one_image_each(fake):
    images = mixed(6)
    ds.config.set_seed(4)
    cpu = read(images, rrc_chain("CPU"), batch=0)
    gpu = read(images, rrc_chain("GPU"), batch=0)
    assert [a.shape for a in gpu] == [(24, 32, 3)] * 6
    assert all(np.array_equal(a, b) for a, b in zip(cpu, gpu))


def test_ops_above_the_gpu_map_see_images(fake):
    images = mixed(8)
    ds.config.set_seed(8)

    def total(x):
        return np.array(int(x.astype(np.int64).sum()))

    def pipe(target):
        data = source(images).map(rrc_chain(target), input_columns="image", num_parallel_workers=2)
        data = data.map(total, input_columns="image", num_parallel_workers=2)
        return [int(r[0]) for r in data.create_tuple_iterator(output_numpy=True)]

    assert pipe("GPU") == pipe("CPU")

    def flip_batch(images, info):
        return ([np.ascontiguousarray(x[::-1]) for x in images],)

    def per_batch(target):
        data = source(images).map(rrc_chain(target), input_columns="image")
        data = data.batch(4, per_batch_map=flip_batch, input_columns=["image"])
        return [r[0] for r in data.create_tuple_iterator(output_numpy=True)]

    assert all(np.array_equal(a, b) for a, b in zip(per_batch("GPU"), per_batch("CPU")))


def test_cpu_ops_before_the_gpu_ops_run_in_the_worker(fake):
    images = [photo(30 + i, 40, i) for i in range(6)]
    ds.config.set_seed(11)

    def chain(target):
        return [vision.Rescale(1.0, 0.0), lambda x: x.astype(np.uint8),
                vision.Crop((2, 3), (20, 30)).device(target), vision.Resize((10, 12), Inter.NEAREST).device(target),
                vision.HorizontalFlip().device(target)]

    cpu, gpu = read(images, chain("CPU"), batch=3), read(images, chain("GPU"), batch=3)
    assert [a.shape for a in gpu] == [(3, 10, 12, 3)] * 2
    assert all(np.array_equal(a, b) for a, b in zip(cpu, gpu))


def test_a_cpu_op_after_a_gpu_op_in_one_map_is_refused():
    with pytest.raises(ValueError) as e:  # when the pipeline is built
        source(mixed(2)).map([vision.Decode().device("GPU"), vision.Invert()], input_columns="image"
                             ).create_tuple_iterator()
    assert str(e.value) == ("map: Invert follows Decode, which runs on the GPU, but does not run on the GPU itself; "
                            "mark it .device('GPU') too, or move it to a map of its own after the batch (the GPU "
                            "stage runs after the map's other ops).")
    with pytest.raises(ValueError, match=r"^map: Decode on the GPU must be the map's first GPU op, but Resize"):
        source(mixed(2)).map([vision.Resize(4).device("GPU"), vision.Decode().device("GPU")],
                             input_columns="image").create_tuple_iterator()


def test_a_window_outside_the_image_names_the_op_and_sample(fake):
    images = [jpeg(photo(40, 40, 0)), jpeg(photo(10, 40, 1))]
    data = source(images).map([vision.Decode().device("GPU"), vision.Crop((0, 0), (20, 20)).device("GPU")],
                              input_columns="image").batch(2)
    with pytest.raises(RuntimeError) as e:
        list(data.create_tuple_iterator())
    assert "Crop height dimension: 20 exceeds image height: 10" in str(e.value)
    assert "Crop" in str(e.value)


def test_images_of_different_sizes_cannot_be_stacked(fake):
    images = [jpeg(photo(40, 40, 0)), jpeg(photo(30, 40, 1))]
    data = source(images).map([vision.Decode().device("GPU")], input_columns="image").batch(2)
    with pytest.raises(PipelineError) as e:
        list(data.create_tuple_iterator())
    assert "the GPU stage cannot stack the batch: sample 1 gives shape (30, 40, 3) where sample 0 gives " \
           "(40, 40, 3)" in str(e.value)
    assert "map operation: [Decode]" in str(e.value)


def test_a_resumed_gpu_pipeline_gives_the_rest_of_the_output(fake):
    from tests.helpers import assert_resume_equivalence
    ds.config.set_seed(13)
    data = source(mixed(10, png_every=4)).map(rrc_chain("GPU"), input_columns="image").batch(3)
    assert_resume_equivalence(data, num_epochs=2, stride=2)


def test_gpu_ops_inside_a_compose_are_split_too(fake):
    from headrace.dataset.transforms import Compose
    images = mixed(6)
    ds.config.set_seed(21)
    cpu = read(images, [Compose(rrc_chain("CPU"))], batch=3)
    gpu = read(images, [Compose(rrc_chain("GPU"))], batch=3)
    assert all(np.array_equal(a, b) for a, b in zip(cpu, gpu))


def test_ray_map_ops_refuse_gpu_ops():
    pytest.importorskip("ray")
    import subprocess
    import sys
    # in a process of its own: importing ray starts threads, which would taint this process's fork server
    code = ("import headrace.dataset.vision as v\n"
            "from headrace.ray._map import HeadraceMap\n"
            "try:\n"
            "    HeadraceMap([v.Decode().device('GPU'), v.RandomResizedCrop(8).device('GPU')], ['image'], ['image'],\n"
            "                seed=1, op_id=0, seed_globals=False)\n"
            "except ValueError as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == ("map_ops: Decode, RandomResizedCrop marked .device('GPU') run in a headrace "
                                  "pipeline only; call .device('CPU') on them in map_ops."), out.stderr[-2000:]


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), prob=st.sampled_from([0.0, 0.5, 1.0]),
       scale=st.sampled_from([(0.08, 1.0), (0.5, 0.6), (1.0, 1.0)]), workers=st.integers(1, 2))
def test_any_seed_gives_the_cpu_paths_output(seed, prob, scale, workers):
    images = mixed(9, png_every=4, progressive_every=5)

    def chain(target):
        return [vision.RandomCropDecodeResize(40, scale=scale).device(target),
                vision.RandomVerticalFlip(prob).device(target)]

    ds.config.set_seed(seed)
    cpu = read(images, chain("CPU"), batch=3, num_parallel_workers=workers)
    with mock.patch.dict(os.environ, {device.BACKEND_ENV: "fake"}):
        gpu = read(images, chain("GPU"), batch=3, num_parallel_workers=workers)
    assert len(gpu) == 3 and all(np.array_equal(a, b) for a, b in zip(cpu, gpu))


def test_debug_mode_refuses_gpu_ops_by_name(fake):
    ds.config.set_seed(1)
    with pytest.warns(UserWarning, match="debug mode is enabled"):
        ds.config.set_debug_mode(True)
    data = source(mixed(2)).map(rrc_chain("GPU"), input_columns="image")
    with pytest.raises(RuntimeError) as e:
        list(data.create_tuple_iterator())
    assert "Decode: device_target 'GPU' runs in the GPU stage of a dataset map only, not eagerly nor in debug " \
           "mode" in str(e.value)


def test_a_gpu_map_cannot_be_cached(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("HEADRACE_CACHE_SHM", str(tmp_path / "shm"))
    monkeypatch.setenv("HEADRACE_CACHE_SPILL", str(tmp_path / "spill"))
    folder = tmp_path / "images" / "c0"
    folder.mkdir(parents=True)
    for i, buf in enumerate(mixed(3)):
        (folder / f"{i}.jpg").write_bytes(buf.tobytes())
    data = ds.ImageFolderDataset(str(tmp_path / "images"), shuffle=False)
    data = data.map([vision.Decode().device("GPU")], input_columns="image", cache=ds.DatasetCache(1))
    with pytest.raises(RuntimeError) as e:
        data.create_tuple_iterator()
    assert str(e.value) == ("A map with ops marked .device('GPU') (Decode) cannot be cached: the GPU stage runs after "
                            "the cache. Cache a map before them, or use .device('CPU').")


def test_gpu_ops_take_one_column(fake):
    images = mixed(2)
    data = ds.GeneratorDataset(lambda: ((x, x) for x in images), ["a", "b"], shuffle=False)
    data = data.map([vision.Decode().device("GPU")], input_columns=["a", "b"])
    with pytest.raises(PipelineError) as e:
        list(data.create_tuple_iterator())
    assert ("map operation: [Decode] failed at columns: ['a', 'b'], sample index: 0. the GPU ops take one image, "
            "but the map gives them 2 inputs.") in str(e.value)


def test_shapes_types_and_other_columns_pass_through(fake):
    images = mixed(10)
    data = ds.GeneratorDataset(lambda: ((x, np.int32(i)) for i, x in enumerate(images)), ["image", "label"],
                               shuffle=False)
    data = data.map([vision.Decode().device("GPU"), vision.RandomResizedCrop(16).device("GPU"), vision.HWC2CHW()],
                    input_columns="image", num_parallel_workers=2, python_multiprocessing=True).batch(4)
    assert data.output_shapes() == [[4, 3, 16, 16], [4]]
    assert data.output_types() == [np.uint8, np.int32] and data.get_dataset_size() == 3
    rows = list(data.create_dict_iterator(num_epochs=1, output_numpy=True))
    assert [r["image"].shape for r in rows] == [(4, 3, 16, 16), (4, 3, 16, 16), (2, 3, 16, 16)]
    assert [r["label"].tolist() for r in rows] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
