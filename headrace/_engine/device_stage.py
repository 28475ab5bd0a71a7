"""The GPU stage: one step per batch, in the process that iterates, for a map whose ops run on a
device.

A map's function that carries ``device_ops`` (the names of its GPU ops; the dataset layer's
``DeviceSplit``) makes, in the stage's workers, one ``DeviceWork`` per sample (0-d object arrays;
a batch on top of the map collates them into a 1-D object array). The planner keeps such a map the
top map of its stage (``exec/stage_plan.py``: no map, filter or ``per_batch_map`` above it in the
stage), and :func:`wrap_device` puts a :class:`DeviceStageIter` on the stage: it hands each
row's work to ``headrace._image.device.run_batch`` (decode, transform and stack on the backend) and
the row on with the stacked images. So the ops above the stage see images, never the work items,
and one backend (one CUDA context) serves every worker.

The backend is chosen when the pipeline is built (``device.select_backend``); with none the build
fails naming the ops. Output goes to the iterator as host arrays (``backend.to_host``).

Counters (always on, a few integers per batch): samples, fallbacks by reason (the worker's CPU
decodes of inputs the device decoder does not take, and the stage's own for JPEGs it failed to
decode), the backend's name; a profiled run also files them under ``RunRecord.devices``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from headrace._engine import plan as P
from headrace._engine.ops.base import BuildContext, OpIter
from headrace._image import device
from headrace._util.errors import PipelineError
from headrace._util.types import Row


def device_ops(node: Any) -> tuple[str, ...] | None:
    """The GPU op names of a map node whose function is split for a device, else None."""
    if type(node) is not P.MapNode:
        return None
    ops = getattr(node.fn, "device_ops", None)
    return tuple(ops) if isinstance(ops, tuple) else None


def wrap_device(nodes: list[P.Node], it: OpIter, ctx: BuildContext) -> OpIter:
    """``it`` (the stage of ``nodes``) under a GPU stage when one of them is a split map."""
    maps = [n for n in nodes if device_ops(n) is not None]
    if not maps:
        return it
    names: list[str] = []
    for n in maps:
        names.extend(x for x in device_ops(n) or () if x not in names)
    backend = device.select_backend(names)
    return DeviceStageIter(ctx, it, backend, maps)


class DeviceStageIter(OpIter):
    """Runs the GPU stage of each row of its parent (a batch, or one sample)."""

    name = "GPUStage"

    def __init__(self, ctx: BuildContext, parent: OpIter, backend: Any, maps: list[P.Node]) -> None:
        super().__init__(ctx, (parent,))
        self.backend = backend
        self.op_names = "map operation: [" + ", ".join(
            x for n in maps for x in (device_ops(n) or ())) + "]"
        self.columns = tuple(c for n in maps for c in getattr(n, "out_names", ()))
        self.samples = 0
        self.fallbacks: dict[str, int] = {}
        self.batches = 0
        prof = getattr(ctx, "profile", None)
        self._record: dict | None = None
        if prof is not None:
            devices = getattr(prof, "devices", None)
            if devices is not None:
                self._record = devices[self.op_id] = {"backend": backend.name, "samples": 0, "batches": 0,
                                                      "fallbacks": self.fallbacks}

    @property
    def mode(self) -> Any:
        return getattr(self.parent, "mode", None)

    def counters(self) -> dict:
        """Backend name, samples, batches, fallbacks by reason and the fallback share (0..1)."""
        n = sum(self.fallbacks.values())
        return {"backend": self.backend.name, "samples": self.samples, "batches": self.batches,
                "fallbacks": dict(self.fallbacks), "fallback_share": n / self.samples if self.samples else 0.0}

    def __next__(self) -> Row:
        row = next(self.parent)
        out = None
        for j, value in enumerate(row):
            if type(value) is np.ndarray and value.dtype == object and value.size:
                first = value.flat[0]
                if isinstance(first, device.DeviceWork):
                    if out is None:
                        out = list(row)
                    out[j] = self._run(value)
        return row if out is None else tuple(out)

    def _run(self, value: np.ndarray) -> np.ndarray:
        items = list(value.flat)
        try:
            batch, fallbacks = device.run_batch(self.backend, items)
        except PipelineError:
            raise
        except Exception as e:
            idx = getattr(e, "sample_index", None)
            raise PipelineError(self.op_names, f"{type(e).__name__}: {e}", columns=self.columns,
                                index=idx) from e
        host = self.backend.to_host(batch)
        self.samples += len(items)
        self.batches += 1
        for reason, k in fallbacks.items():
            self.fallbacks[reason] = self.fallbacks.get(reason, 0) + k
        if self._record is not None:
            self._record["samples"], self._record["batches"] = self.samples, self.batches
        return host if value.ndim == 1 else host.reshape(value.shape + host.shape[1:])

    def skip(self, n: int) -> int:
        return self.parent.skip(n)

    def __str__(self) -> str:
        return f"GPUStage(backend={self.backend.name})"
