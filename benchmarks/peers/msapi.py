"""Runner for the MindSpore data API, used literally as is for MindSpore 2.10 and for headrace:
`--module mindspore` or `--module headrace` picks the package, and the code below is what a
MindSpore user writes (`<module>.dataset`, `<module>.dataset.vision`, `<module>.mindrecord`).

    python -m benchmarks.peers.msapi --module headrace --workload w1 --variant threads --workers 2 \
        --data benchmarks/_data
"""
from __future__ import annotations

import contextlib
import os

import numpy as np

from .. import w1, w2, w3, wfeed, wspeech, wtext
from ..harness import Unavailable, import_or_unavailable, runner_main, time_calls, time_epochs, time_paired


def api(module: str, *names: str):
    """Imports `<module>.<name>` for each name; a missing module or class means Unavailable."""
    mods = [import_or_unavailable(f"{module}.{n}") for n in names]
    return mods[0] if len(mods) == 1 else mods


def need(mod, *attrs: str) -> None:
    for a in attrs:
        if not hasattr(mod, a):
            raise Unavailable(f"{mod.__name__}.{a} does not exist")


def versions(module: str) -> dict:
    mod = import_or_unavailable(module)
    return {module: getattr(mod, "__version__", "?"), "numpy": np.__version__}


TORCH_ADAPTER = " + headrace.torch"
JAX_ADAPTER = " + headrace.jax"
PROFILED = ", profiled"  # headrace only: the epochs run inside ``ds.profile()`` (issue 16: its cost)


KEPT = ", kept"  # headrace only: one iterator (or loader) made for the first epoch serves every epoch
# headrace only, with an adapter: epochs through a loader paired with epochs of a NumPy iterator
# over the same pipeline, read in turns in the same process (harness.time_paired: the adapter's
# cost as a ratio); each epoch makes its pipeline anew, and each side is closed inside its timed epoch
PAIRED = ", paired"
PAIRS_PER_EPOCH = 3  # a paired row reads this many pairs per epoch asked (--epochs): 3 pairs were too few
_kept: dict = {}


def base_variant(variant: str) -> str:
    """``variant`` without the suffixes that change only how it is read."""
    return (variant.removesuffix(KEPT).removesuffix(PAIRED).removesuffix(TORCH_ADAPTER).removesuffix(JAX_ADAPTER)
            .removesuffix(PROFILED))


def _loader(a, data):
    """The variant's framework loader over ``data`` (this rank reads it whole)."""
    adapter = "headrace.torch" if TORCH_ADAPTER in a.variant else "headrace.jax"
    return import_or_unavailable(adapter).Loader(data, shard=False)


def time_variant(a, make_data, count, check, output_numpy=True) -> dict:
    """The row's epochs over pipelines from ``make_data()``: through ``adapter_iter``, or for a
    PAIRED variant, the loader's epochs paired with a NumPy iterator's (``time_paired``)."""
    if a.variant.endswith(PAIRED):
        # Not kept: a kept loader starts its next epoch when one ends (its feature), which would
        # then run during the NumPy epoch of the pair, taking its CPU and giving the loader a
        # head start (W2: the loader's epochs came out 1.47x the NumPy ones). Both are closed
        # when their epoch ends, inside the timed epoch, so that nothing of either runs during
        # the next epoch. (Until 2026-11-28 only the loader's close was timed: ~10 ms of W1's
        # ~300 ms epoch over worker processes, counted against the loader alone.)
        def numpy_epoch():
            it = make_data().create_tuple_iterator(output_numpy=True, num_epochs=1)
            try:
                yield from it
            finally:
                it.stop()

        def loader_epoch():
            loader = _loader(a, make_data())
            try:
                yield from loader
            finally:
                loader.close()

        return time_paired(numpy_epoch, loader_epoch, count, a.epochs * PAIRS_PER_EPOCH, a.warmup, check)
    return time_epochs(lambda: adapter_iter(a, make_data(), output_numpy), count, a.epochs, a.warmup, check)


def adapter_iter(a, data, output_numpy=True):
    """The iterator over ``data`` a row measures: headrace's own (NumPy), or, for a variant with
    TORCH_ADAPTER / JAX_ADAPTER, ``headrace.torch.Loader`` (torch tensors; on the CPU converted
    by the pipeline's prefetch thread or the loop's) / ``headrace.jax.Loader`` (JAX arrays on the
    default device, here the CPU).
    Made anew each epoch, as the other rows' iterators are; a variant ending in KEPT makes one
    (``num_epochs=-1``, or one loader) and reads it again each epoch, as a training loop does
    (``data`` of later epochs is not used)."""
    kept = a.variant.endswith(KEPT)
    if kept and "it" in _kept:
        return iter(_kept["it"])
    if TORCH_ADAPTER in a.variant or JAX_ADAPTER in a.variant:
        it = _loader(a, data)
    else:
        it = data.create_tuple_iterator(output_numpy=output_numpy, num_epochs=-1 if kept else 1)
    if kept:
        _kept["it"] = it
    return iter(it)


# --------------------------------------------------------------------------- W1

def run_w1(a) -> dict:
    ds = api(a.module, "dataset")
    need(ds, "GeneratorDataset")
    src = w1.load_source(a.data, a.items)
    procs = base_variant(a.variant) == "processes"
    output_numpy = a.variant != "ms.Tensor output"

    def make_data():
        data = ds.GeneratorDataset(src, ["data", "label"], shuffle=False,
                                   num_parallel_workers=a.workers, python_multiprocessing=procs)
        data = data.map(w1.plus1, input_columns=["data"], num_parallel_workers=a.workers,
                        python_multiprocessing=procs)
        return data.batch(w1.BATCH)

    def check(batch):
        w1.check_batch(*(np.asarray(c.asnumpy() if hasattr(c, "asnumpy") else c) for c in batch))

    with ds.profile() if a.variant.endswith(PROFILED) else contextlib.nullcontext():
        return time_variant(a, make_data, lambda b: (len(b[0]), 0), check, output_numpy)


# --------------------------------------------------------------------------- W2

def mindrecord_file(a, FileWriter, files) -> str:
    """W2 as MindRecord written by this system's own FileWriter (once, untimed)."""
    d = os.path.join(w2.w2_dir(a.data, a.items or w2.COUNT), "mindrecord", a.module)
    path = os.path.join(d, "images.mindrecord")
    if os.path.exists(path + ".done"):
        return path
    os.makedirs(d, exist_ok=True)
    writer = FileWriter(path, shard_num=1, overwrite=True)
    writer.add_schema({"image": {"type": "bytes"}, "label": {"type": "int32"}}, "w2")
    for s in range(0, len(files), 500):
        rows = []
        for p, label in files[s:s + 500]:
            with open(p, "rb") as f:
                rows.append({"image": f.read(), "label": label})
        writer.write_raw_data(rows)
    writer.commit()
    open(path + ".done", "w").close()
    return path


LOW_MEMORY = "MindDataset low-memory"


def run_w2(a) -> dict:
    ds, vision, mr = api(a.module, "dataset", "dataset.vision", "mindrecord")
    variant = base_variant(a.variant)
    folder = variant == "ImageFolderDataset"
    need(ds, "ImageFolderDataset" if folder else "MindDataset")
    need(vision, "RandomHorizontalFlip", "Normalize", "HWC2CHW",
         *(["RandomCropDecodeResize"] if variant == "RandomCropDecodeResize"
           else ["Decode", "RandomResizedCrop"]))
    if not folder:
        need(mr, "FileWriter")
    d = w2.w2_dir(a.data, a.items or w2.COUNT)
    files = w2.manifest(d)
    mean, std = [float(v) for v in w2.MEAN], [float(v) for v in w2.STD]
    tail = [vision.RandomHorizontalFlip(), vision.Normalize(mean=mean, std=std), vision.HWC2CHW()]
    if variant == "RandomCropDecodeResize":
        ops = [vision.RandomCropDecodeResize(w2.SIZE)] + tail
    else:
        ops = [vision.Decode(), vision.RandomResizedCrop(w2.SIZE)] + tail
    if variant == LOW_MEMORY:
        # MindSpore's FAQ on memory: a prefetch of 2, one worker, a small shuffle buffer.
        ds.config.set_prefetch_size(2)
        path = mindrecord_file(a, mr.FileWriter, files)

        def source():
            data = ds.MindDataset(path, columns_list=["image", "label"], shuffle=False,
                                  num_parallel_workers=a.workers)
            return data.shuffle(buffer_size=w2.BATCH)
    elif folder:
        def source():
            return ds.ImageFolderDataset(os.path.join(d, "jpeg"), shuffle=True,
                                         num_parallel_workers=a.workers)
    else:
        path = mindrecord_file(a, mr.FileWriter, files)

        def source():
            return ds.MindDataset(path, columns_list=["image", "label"], shuffle=True,
                                  num_parallel_workers=a.workers)

    def make_data():
        data = source().map(ops, input_columns=["image"], num_parallel_workers=a.workers)
        return data.batch(w2.BATCH)

    return time_variant(a, make_data, lambda b: (len(b[0]), 0),
                        lambda b: w2.check_batch(np.asarray(b[0]), np.asarray(b[1])))


# --------------------------------------------------------------------------- W3

def run_w3(a) -> dict:
    ds, mr = api(a.module, "dataset", "mindrecord")
    need(mr, "FileWriter")
    if a.variant != "write":
        need(ds, "MindDataset")
    rows = a.items or w3.ROWS
    path = os.path.join(w3.w3_dir(a.data), a.module, "records.mindrecord")
    os.makedirs(os.path.dirname(path), exist_ok=True)

    def write(payloads, target=path):
        writer = mr.FileWriter(target, shard_num=1, overwrite=True)
        writer.add_schema({"label": {"type": "int32"}, "data": {"type": "bytes"}}, "w3")
        for s in range(0, rows, w3.CHUNK):
            writer.write_raw_data([{"label": i, "data": payloads[i]}
                                   for i in range(s, min(s + w3.CHUNK, rows))])
        writer.commit()
        return rows, rows * w3.RECORD

    if a.variant == "write":
        payloads = w3.payloads(rows)
        # each epoch writes a fresh path; earlier epochs' files are deleted and os.sync() runs
        # untimed before it (w3.FreshPaths), identically for every system
        fresh = w3.FreshPaths(os.path.join(os.path.dirname(path), "write"), os.path.basename(path))
        res = time_calls(lambda: write(payloads, fresh.path), a.epochs, a.warmup, before=fresh.next)
        fresh.cleanup()
        return res
    if not w3.is_complete(path, rows):
        write(w3.payloads(rows))
        w3.mark_complete(path, rows)

    def make_iter():
        data = ds.MindDataset(path, columns_list=["data", "label"],
                              shuffle=a.variant == "read shuffle", num_parallel_workers=a.workers)
        return data.create_tuple_iterator(output_numpy=True, num_epochs=1)

    def count(row):   # MindSpore gives a bytes field as an `S102400` array of shape (1,)
        return 1, np.asarray(row[0]).nbytes

    def check(row):
        assert count(row)[1] == w3.RECORD, count(row)

    cold = (lambda: w3.drop_cache([path, path + ".db"])) if a.variant == "read cold" else None
    return time_epochs(make_iter, count, a.epochs, a.warmup, check, before=cold)


# --------------------------------------------------------------------------- text

def run_text(a) -> dict:
    ds, text, transforms = api(a.module, "dataset", "dataset.text", "dataset.transforms")
    need(text, "BertTokenizer", "Lookup", "Truncate")
    reviews, vocab_file = wtext.generate(a.data, a.items or wtext.N)
    vocab = text.Vocab.from_file(vocab_file)

    def make_iter():
        data = ds.TextFileDataset(reviews, shuffle=False)
        ops = [text.BertTokenizer(vocab, lower_case=True), text.Lookup(vocab, "[UNK]"),
               text.Truncate(wtext.MAXLEN), transforms.PadEnd([wtext.MAXLEN], 0)]
        data = data.map(ops, input_columns=["text"], num_parallel_workers=a.workers)
        data = data.batch(wtext.BATCH)
        return data.create_tuple_iterator(output_numpy=True, num_epochs=1)

    return time_epochs(make_iter, lambda b: (len(b[0]), 0), a.epochs, a.warmup, lambda b: wtext.check_batch(b[0]))


def run_speech(a) -> dict:
    ds, audio = api(a.module, "dataset", "dataset.audio")
    need(ds, "SpeechCommandsDataset")
    need(audio, "MelSpectrogram", "AmplitudeToDB", "TimeMasking", "FrequencyMasking")
    folder = wspeech.generate(a.data, a.items or wspeech.N)
    procs = a.variant.endswith(wspeech.PROCESSES)

    def make_iter():
        data = ds.SpeechCommandsDataset(folder, shuffle=True, num_parallel_workers=a.workers)
        data = data.map(wspeech.ops(audio), input_columns=["waveform"], num_parallel_workers=a.workers,
                        python_multiprocessing=procs)
        data = data.project(["waveform"]).batch(wspeech.BATCH, drop_remainder=True)
        return data.create_tuple_iterator(output_numpy=True, num_epochs=1)

    return time_epochs(make_iter, lambda b: (len(b[0]), 0), a.epochs, a.warmup, lambda b: wspeech.check_batch(b[0]))


def run_feed(a) -> dict:
    if a.module != "headrace":
        raise Unavailable("the feed workload runs headrace's framework loaders")
    ds = api(a.module, "dataset")
    steps = a.items or wfeed.STEPS
    data = ds.GeneratorDataset(wfeed.Indices(steps), ["i"], shuffle=False)
    data = data.map(wfeed.make_batch, input_columns=["i"], num_parallel_workers=max(1, a.workers))
    if a.variant == "headrace.torch":
        from headrace.torch import Loader
    elif a.variant == "headrace.jax":
        from headrace.jax import Loader  # type: ignore[no-redef]
    else:
        raise ValueError(f"unknown feed variant {a.variant!r}")
    return wfeed.time_loops(lambda: Loader(data), steps, a.epochs, a.warmup)


def run_cache_workload(a) -> dict:
    ds, vision, mr = api(a.module, "dataset", "dataset.vision", "mindrecord")
    need(ds, "DatasetCache", "MindDataset")
    from .. import wcache

    path = mindrecord_file(a, mr.FileWriter, w2.manifest(w2.w2_dir(a.data, a.items or w2.COUNT)))
    return wcache.run_cache(a, ds, vision, path, time_epochs,
                            lambda b: w2.check_batch(np.asarray(b[0]), np.asarray(b[1])))


def run(a) -> dict:
    fn = {"w1": run_w1, "w2": run_w2, "w3": run_w3, "text": run_text, "cache": run_cache_workload,
          "feed": run_feed, "speech": run_speech}[a.workload]
    res = fn(a)
    res["versions"] = versions(a.module)
    return res


if __name__ == "__main__":
    runner_main(run, __doc__)
