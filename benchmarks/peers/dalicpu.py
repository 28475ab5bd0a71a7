"""Runner for NVIDIA DALI's CPU pipeline (`nvidia-dali-cuda120` wheel, run with `device_id=None`:
no GPU is touched). W2 only.

* ``image_random_crop``: ``fn.readers.file`` -> ``fn.decoders.image_random_crop`` (the fused
  decoder that decodes only the crop window) -> ``fn.resize`` 224x224 -> ``fn.crop_mirror_normalize``
  (flip with probability 0.5, mean/std, CHW float32);
* ``decode + random_resized_crop``: the plain chain, a full decode then ``fn.random_resized_crop``.

``num_threads`` is the worker count. DALI's reader does not end an epoch on a short batch: every
batch holds 128 images (the last one of an epoch runs into the next epoch's order), so an epoch here
is ceil(N / 128) batches and the count is the images actually produced.

    python -m benchmarks.peers.dalicpu --workload w2 --variant image_random_crop --workers 2 --data benchmarks/_data
"""
from __future__ import annotations

import math

import numpy as np

from .. import w2
from ..harness import Unavailable, import_or_unavailable, runner_main, time_epochs

VARIANTS = ("image_random_crop", "decode + random_resized_crop")
SEED = 1


def build(dali, files: list[str], labels: list[int], fused: bool, workers: int):
    fn, types = dali.fn, dali.types

    @dali.pipeline_def(batch_size=w2.BATCH, num_threads=workers, device_id=None, seed=SEED)
    def pipe():
        jpegs, label = fn.readers.file(files=files, labels=labels, random_shuffle=True,
                                       name="Reader")
        if fused:
            images = fn.decoders.image_random_crop(
                jpegs, device="cpu", output_type=types.RGB, random_area=[0.08, 1.0],
                random_aspect_ratio=[3 / 4, 4 / 3], num_attempts=10)
            images = fn.resize(images, resize_x=w2.SIZE, resize_y=w2.SIZE)
        else:
            images = fn.decoders.image(jpegs, device="cpu", output_type=types.RGB)
            images = fn.random_resized_crop(images, size=[w2.SIZE, w2.SIZE])
        images = fn.crop_mirror_normalize(
            images, dtype=types.FLOAT, output_layout="CHW", mean=[float(v) for v in w2.MEAN],
            std=[float(v) for v in w2.STD], mirror=fn.random.coin_flip(probability=0.5))
        return images, label

    p = pipe()
    p.build()
    return p


def run(a) -> dict:
    dali = import_or_unavailable("nvidia.dali")
    import nvidia.dali.fn  # noqa: F401  (registers the fn namespace on the package)
    import nvidia.dali.types  # noqa: F401
    if a.workload != "w2":
        raise Unavailable(f"the DALI runner runs w2, not {a.workload}")
    if a.variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, not {a.variant!r}")
    manifest = w2.manifest(w2.w2_dir(a.data, a.items or w2.COUNT))
    files, labels = [p for p, _ in manifest], [lab for _, lab in manifest]
    pipe = build(dali, files, labels, a.variant == "image_random_crop", max(1, a.workers))
    steps = math.ceil(len(files) / w2.BATCH)

    def make_iter():
        for _ in range(steps):
            images, label = pipe.run()
            yield images.as_array(), label.as_array()

    res = time_epochs(make_iter, lambda b: (len(b[0]), 0), a.epochs, a.warmup,
                      lambda b: w2.check_batch(b[0], b[1]))
    res["versions"] = {"nvidia-dali": dali.__version__, "numpy": np.__version__}
    return res


if __name__ == "__main__":
    runner_main(run, __doc__)
