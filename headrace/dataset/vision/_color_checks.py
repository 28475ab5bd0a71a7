"""What the color ops share: MindSpore's input checks and messages (``check_image``), the dtype sets
each kernel accepts, and the device argument (``_Device``)."""
from __future__ import annotations
from typing import Any, Sequence
import numpy as np
from PIL import Image
from headrace.dataset.transforms._checks import (type_check)
from headrace.dataset.vision._base import op_error

_NO_MSGS: dict[str, str] = {}

_NAMES = {np.dtype(np.bool_): "bool", np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8",
          np.dtype(np.int16): "int16", np.dtype(np.uint16): "uint16", np.dtype(np.int32): "int32",
          np.dtype(np.uint32): "uint32", np.dtype(np.int64): "int64", np.dtype(np.uint64): "uint64",
          np.dtype(np.float16): "float16", np.dtype(np.float32): "float32",
          np.dtype(np.float64): "float64"}


ALL_CV = ("bool", "int8", "uint8", "int16", "uint16", "int32", "float16", "float32", "float64")


CV_NO_F16 = ("bool", "int8", "uint8", "int16", "uint16", "int32", "float32", "float64")


U8 = ("uint8",)


BLEND = ("uint8", "uint16", "float32")


FILTER = ("bool", "uint8", "int16", "uint16", "float32", "float64")


def _dtype_name(dtype: np.dtype) -> str:
    return _NAMES.get(dtype, str(dtype))


def _tuple_text(values: Sequence[Any]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ")"


def check_image(img: np.ndarray, op: str, *, ranks: Sequence[int] = (2, 3),
                channels: Sequence[int] | None = (1, 3), dtypes: Sequence[str] | None = ALL_CV,
                msgs: dict[str, str] | None = None) -> None:
    """Raises ``RuntimeError("<op>: ...")`` unless ``img`` has an accepted rank, channel count and dtype.

    The texts are MindSpore's ("the dimension of image tensor does not match the requirement of
    operator. Expecting tensor in dimension of (2, 3), ... But got dimension 4.").

    Args:
        img: the array the op got.
        op: op name for the message.
        ranks: accepted numbers of dimensions.
        channels: accepted sizes of the last axis of a 3-D image (None: any).
        dtypes: accepted dtype names (None: any).
        msgs: texts replacing the default ones, keyed "rank" ("rank1" for 1-D input), "channel" or
            "dtype"; they may use
            ``{nd}`` (rank), ``{c}`` (channels) and ``{dt}`` (dtype name).
    """
    nd = img.ndim
    msgs = msgs or _NO_MSGS
    if nd not in ranks and "rank" in msgs:
        raise op_error(op, msgs["rank1" if nd == 1 and "rank1" in msgs else "rank"].format(nd=nd))
    if channels is not None and nd == 3 and img.shape[2] not in channels and "channel" in msgs:
        raise op_error(op, msgs["channel"].format(c=img.shape[2]))
    if dtypes is not None and _dtype_name(img.dtype) not in dtypes and "dtype" in msgs:
        raise op_error(op, msgs["dtype"].format(dt=_dtype_name(img.dtype)))
    if nd not in ranks:
        shape = "<H, W> or <H, W, C>" if tuple(ranks) == (2, 3) else (
            "<H, W, C>" if tuple(ranks) == (3,) else "<H, W>")
        hint = " You may need to perform Decode first." if nd == 1 else ""
        raise op_error(op, f"the dimension of image tensor does not match the requirement of operator. "
                           f"Expecting tensor in dimension of {_tuple_text(ranks)}, in shape of {shape}. "
                           f"But got dimension {nd}.{hint}")
    if channels is not None and nd == 3 and img.shape[2] not in channels:
        raise op_error(op, f"the channel of image tensor does not match the requirement of operator. "
                           f"Expecting tensor in channel of {_tuple_text(channels)}. "
                           f"But got channel {img.shape[2]}.")
    if dtypes is not None and _dtype_name(img.dtype) not in dtypes:
        raise op_error(op, f"the data type of image tensor does not match the requirement of operator. "
                           f"Expecting tensor in type of {_tuple_text(dtypes)}. "
                           f"But got type {_dtype_name(img.dtype)}.")


# MindSpore's own texts for some ops' input errors.
INVERT_MSGS = {"rank": "input tensor is not in shape of <H,W,C>, but got rank: {nd}",
               "channel": "the number of channels of input tensor is not 3, but got: {c}"}


HIST_MSGS = {"rank": "image rank should be 2 or 3,  but got: {nd}",
             "channel": "channel of input image should be 1 or 3, but got: {c}"}


POSTERIZE_MSGS = {"rank": "input image is not in shape of <H,W,C> or <H,W>, but got rank: {nd}",
                  "dtype": "data type of input image should be int8 or uint8, but got {dt}"}


SHARPNESS_MSGS = {"rank": "shape of input is not <H,W,C> or <H,W>, but got rank: {nd}"}


HWC_OR_HW_MSGS = {"rank": "input tensor is not in shape of <H,W> or <H,W,C>, but got rank: {nd}",
                  "rank1": "input tensor is not in shape of <H,W> or <H,W,C>, but got rank: {nd}. You may need "
                           "to perform Decode first."}


PIL_REQUIRED = "img should be PIL image. Got {}. Use Decode() for encoded data or ToPIL() for decoded data."


def _require_pil(img: Any) -> None:
    if not isinstance(img, Image.Image):
        raise TypeError(PIL_REQUIRED.format(type(img)))


class _Device:
    """MindSpore's ``.device()`` switch. ``"CPU"`` runs the op in the map's workers; ``"GPU"`` (a
    headrace extension, on the ops with device steps: ``_device_plan`` / ``_device_decode_plan``)
    runs it in the GPU stage of its batch (``headrace/dataset/transforms/_device_split.py``);
    ``"Ascend"`` is accepted, as in MindSpore, and refused when the op runs."""

    device_target = "CPU"

    def device(self, device_target: str = "CPU") -> Any:
        """Selects where the op runs.

        Args:
            device_target (str, optional): ``"CPU"``, ``"Ascend"`` (not available in headrace), or
                ``"GPU"`` on the ops that have a GPU stage (a headrace extension). Default: ``"CPU"``.

        Returns:
            the op itself.

        Raises:
            TypeError: if `device_target` is not a str.
            ValueError: if it is not "CPU" or "Ascend" (or "GPU" where the op has a GPU stage).
        """
        type_check(device_target, (str,), "device_target")
        gpu = hasattr(self, "_device_plan") or hasattr(self, "_device_decode_plan")
        if device_target not in ("CPU", "Ascend") and not (gpu and device_target == "GPU"):
            raise ValueError("Input device_target is not within the valid set of ['CPU', 'Ascend'].")
        if device_target == "GPU":
            self._check_gpu()
        self.device_target = device_target
        return self

    def _check_gpu(self) -> None:
        """Raises ValueError where the op's settings have no GPU stage (override where needed)."""

    def _check_device(self) -> None:
        if self.device_target == "GPU":
            raise RuntimeError(f"{type(self).__name__}: device_target 'GPU' runs in the GPU stage of a dataset "
                               f"map only, not eagerly nor in debug mode (ds.config.set_debug_mode); call "
                               f".device('CPU') to run the op here.")
        if self.device_target != "CPU":
            raise RuntimeError(f"{type(self).__name__}: device_target 'Ascend' is not available in "
                               f"headrace; call .device('CPU').")


def _factor(value: Any, name: str | None) -> float:
    type_check(value, (float, int), name)
    return float(value)
