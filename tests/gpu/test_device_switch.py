"""``.device("GPU")`` on the vision ops (issue 43): which ops take it, MindSpore's refusal text for
the others, and the refusals of settings the GPU stage cannot run."""
from __future__ import annotations

import numpy as np
import pytest

import headrace.dataset.vision as vision
from headrace._image import device
from tests.gpu.images import jpeg, photo

MS_REFUSAL = "Input device_target is not within the valid set of ['CPU', 'Ascend']."

GPU_OPS = {
    "Decode": lambda: vision.Decode(),
    "RandomCropDecodeResize": lambda: vision.RandomCropDecodeResize(8),
    "Resize": lambda: vision.Resize((4, 5)),
    "Crop": lambda: vision.Crop((1, 2), (3, 4)),
    "ResizedCrop": lambda: vision.ResizedCrop(0, 1, 4, 5, (3, 2)),
    "RandomResizedCrop": lambda: vision.RandomResizedCrop(6),
    "Normalize": lambda: vision.Normalize([1.0, 2.0, 3.0], [2.0, 2.0, 2.0]),
    "HorizontalFlip": lambda: vision.HorizontalFlip(),
    "VerticalFlip": lambda: vision.VerticalFlip(),
    "RandomHorizontalFlip": lambda: vision.RandomHorizontalFlip(),
    "RandomVerticalFlip": lambda: vision.RandomVerticalFlip(),
}


@pytest.mark.parametrize("name", sorted(GPU_OPS))
def test_the_listed_ops_take_gpu_and_return_themselves(name):
    op = GPU_OPS[name]()
    assert op.device_target == "CPU"
    assert op.device("GPU") is op and op.device_target == "GPU"
    assert op.device("CPU") is op and op.device_target == "CPU"
    assert op.device() is op and op.device_target == "CPU"


@pytest.mark.parametrize("name", sorted(GPU_OPS))
@pytest.mark.parametrize("target", ["gpu", "cuda", "TPU", ""])
def test_other_targets_are_refused_in_mindspores_words(name, target):
    op = GPU_OPS[name]()
    with pytest.raises(ValueError) as e:
        op.device(target)
    assert str(e.value) == MS_REFUSAL
    assert op.device_target == "CPU"


@pytest.mark.parametrize("name", ["Decode", "Resize"])
def test_a_non_string_target_is_a_type_error(name):
    with pytest.raises(TypeError, match="device_target"):
        GPU_OPS[name]().device(1)


@pytest.mark.parametrize("op", [vision.AdjustBrightness(1.0), vision.Invert(), vision.Erase(0, 0, 1, 1)])
def test_ops_without_a_gpu_stage_refuse_gpu_as_mindspore_does(op):
    with pytest.raises(ValueError) as e:
        op.device("GPU")
    assert str(e.value) == MS_REFUSAL


def test_settings_without_a_gpu_stage_are_refused():
    with pytest.raises(ValueError, match=r"^Decode: to_pil=True decodes to a PIL image"):
        vision.Decode(to_pil=True).device("GPU")
    with pytest.raises(ValueError, match=r"is_hwc=True\), but is_hwc is False"):
        vision.Normalize([1.0], [1.0], is_hwc=False).device("GPU")


@pytest.mark.parametrize("name", sorted(GPU_OPS))
def test_an_eager_call_of_a_gpu_op_is_refused_not_run_on_the_cpu(name):
    op = GPU_OPS[name]().device("GPU")
    data = jpeg(photo(12, 14, 0)) if "Decode" in name else photo(12, 14, 0)
    with pytest.raises(RuntimeError) as e:
        op(data)
    assert str(e.value) == (f"{name}: device_target 'GPU' runs in the GPU stage of a dataset map only, not "
                            f"eagerly nor in debug mode (ds.config.set_debug_mode); call .device('CPU') to run "
                            f"the op here.")
    assert op.device("CPU")(data).dtype in (np.uint8, np.float32)


def test_ascend_is_accepted_and_refused_when_run_as_before():
    op = vision.Decode().device("Ascend")
    with pytest.raises(RuntimeError, match=r"^Decode: device_target 'Ascend' is not available in headrace"):
        op(jpeg(photo(4, 4, 0)))


def test_the_backend_setting_is_checked():
    with pytest.raises(ValueError) as e:
        device.select_backend(["Decode"], "cuda")
    assert str(e.value) == "HEADRACE_GPU_BACKEND must be one of ['auto', 'fake'], but got 'cuda'."
    assert device.select_backend(["Decode"], "fake").name == "fake"
    with pytest.raises(device.NoBackendError, match=r"^Decode, Resize: device_target 'GPU' needs a GPU decode "
                                                    r"backend, and none is available"):
        device.select_backend(["Decode", "Resize"], "auto")


_ORACLE = """
import mindspore.dataset.vision as v
ops = {"Decode": v.Decode(), "RandomCropDecodeResize": v.RandomCropDecodeResize(8), "Resize": v.Resize((4, 5)),
       "Crop": v.Crop((1, 2), (3, 4)), "ResizedCrop": v.ResizedCrop(0, 1, 4, 5, (3, 2)),
       "RandomResizedCrop": v.RandomResizedCrop(6), "Normalize": v.Normalize([1.0, 2.0, 3.0], [2.0, 2.0, 2.0]),
       "HorizontalFlip": v.HorizontalFlip(), "VerticalFlip": v.VerticalFlip(),
       "RandomHorizontalFlip": v.RandomHorizontalFlip(), "RandomVerticalFlip": v.RandomVerticalFlip()}
RESULT = {}
for name, op in ops.items():
    if not hasattr(op, "device"):
        RESULT[name] = None
        continue
    out = []
    for target in ("GPU", "gpu", "", "CPU", "Ascend"):
        try:
            op.device(target)
            out.append("ok")
        except Exception as e:
            out.append(type(e).__name__ + ": " + str(e))
    RESULT[name] = out
"""


def test_mindspore_refuses_gpu_where_headrace_extends_it():
    from tests.oracles.oracle import run_ms
    ms = run_ms(_ORACLE)
    refusal = "ValueError: " + MS_REFUSAL
    # the ops MindSpore gives .device(): the same refusal of anything but CPU and Ascend, so "GPU"
    # (accepted by headrace) changes the meaning of no MindSpore program
    for name in ("Decode", "Resize", "Crop", "ResizedCrop", "Normalize", "HorizontalFlip", "VerticalFlip"):
        assert ms[name] == [refusal, refusal, refusal, "ok", "ok"], name
        op = GPU_OPS[name]()
        for target in ("gpu", ""):
            with pytest.raises(ValueError) as e:
                op.device(target)
            assert "ValueError: " + str(e.value) == refusal
    # the random ops have no .device() in MindSpore: headrace adds it
    for name in ("RandomCropDecodeResize", "RandomResizedCrop", "RandomHorizontalFlip", "RandomVerticalFlip"):
        assert ms[name] is None, name
