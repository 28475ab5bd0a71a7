"""Runner for tf.data (tensorflow-cpu): W1 with Python per row (numpy_function, from_generator) and a
native graph upper bound; W2 from a TFRecord file with TensorFlow's own image ops.

    python -m benchmarks.peers.tfdata --workload w2 --variant TFRecord --workers 2 --data benchmarks/_data
"""
from __future__ import annotations

import os
import shutil
import tempfile

import numpy as np

from .. import w1, w2
from ..harness import import_or_unavailable, runner_main, time_epochs


def w1_pipeline(tf, src, variant: str, workers: int):
    def plus1_map(x, y):
        return tf.numpy_function(w1.plus1, [x], tf.float32), y

    if variant == "numpy_function":
        def getitem(i):
            return src[int(i)]
        data = tf.data.Dataset.range(len(src)).map(
            lambda i: tuple(tf.numpy_function(getitem, [i], [tf.float32, tf.int32])),
            num_parallel_calls=workers)
        data = data.map(plus1_map, num_parallel_calls=workers)
    elif variant == "from_generator":
        def rows():
            for i in range(len(src)):
                yield src[i]
        sig = (tf.TensorSpec((16,), tf.float32), tf.TensorSpec((), tf.int32))
        data = tf.data.Dataset.from_generator(rows, output_signature=sig)
        data = data.map(plus1_map, num_parallel_calls=workers)
    elif variant == "native":
        n = len(src)
        data = tf.data.Dataset.from_tensor_slices((src.data[:n], src.labels[:n]))
        data = data.map(lambda x, y: (x + 1, y), num_parallel_calls=workers)
    else:
        raise ValueError(variant)
    return data.batch(w1.BATCH)


def tfrecord_file(tf, d: str, files) -> str:
    """W2 as TFRecord (tf.train.Example{image: bytes, label: int64}), written once, untimed."""
    path = os.path.join(d, "tfrecord", "images.tfrecord")
    if os.path.exists(path + ".done"):
        return path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tf.io.TFRecordWriter(path) as writer:
        for p, label in files:
            with open(p, "rb") as f:
                feat = {"image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[f.read()])),
                        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[label]))}
            writer.write(tf.train.Example(features=tf.train.Features(feature=feat))
                         .SerializeToString())
    open(path + ".done", "w").close()
    return path


def w2_pipeline(tf, path: str, n: int, variant: str, workers: int):
    features = {"image": tf.io.FixedLenFeature([], tf.string),
                "label": tf.io.FixedLenFeature([], tf.int64)}
    whole = tf.constant([0.0, 0.0, 1.0, 1.0], shape=[1, 1, 4])
    mean, std = tf.constant(w2.MEAN), tf.constant(w2.STD)

    def crop_box(shape):
        begin, size, _ = tf.image.sample_distorted_bounding_box(
            shape, whole, min_object_covered=0.0, aspect_ratio_range=(3 / 4, 4 / 3),
            area_range=(0.08, 1.0), max_attempts=10, use_image_if_no_bounding_boxes=True)
        return begin, size

    def finish(img):
        img = tf.image.resize(img, [w2.SIZE, w2.SIZE], method="bilinear", antialias=False)
        img = tf.image.random_flip_left_right(img)
        return tf.transpose((img - mean) / std, [2, 0, 1])

    def plain(rec):
        f = tf.io.parse_single_example(rec, features)
        img = tf.io.decode_jpeg(f["image"], channels=3)
        begin, size = crop_box(tf.shape(img))
        return finish(tf.slice(img, begin, size)), f["label"]

    def fused(rec):
        f = tf.io.parse_single_example(rec, features)
        begin, size = crop_box(tf.io.extract_jpeg_shape(f["image"]))
        window = tf.stack([begin[0], begin[1], size[0], size[1]])
        return finish(tf.io.decode_and_crop_jpeg(f["image"], window, channels=3)), f["label"]

    fn = fused if variant == "decode_and_crop_jpeg" else plain
    data = tf.data.TFRecordDataset(path).shuffle(n).map(fn, num_parallel_calls=workers)
    return data.batch(w2.BATCH)


def run(a) -> dict:
    # TensorFlow's autograph writes ``__autograph_generated_file*.py`` modules into the temporary
    # folder and leaves them there (the runner may end without running exit handlers): give it a
    # folder of this run's own, removed when the run is done.
    folder = tempfile.mkdtemp(prefix="hr-bench-tf-")
    saved = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = tempfile.tempdir = folder
    try:
        return _run(a)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        tempfile.tempdir = saved[1]
        if saved[0] is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved[0]


def _run(a) -> dict:
    tf = import_or_unavailable("tensorflow")
    workers = max(a.workers, 1)
    if a.workload == "w1":
        src = w1.load_source(a.data, a.items)
        make = lambda: iter(w1_pipeline(tf, src, a.variant, workers))  # noqa: E731
        check = lambda b: w1.check_batch(b[0].numpy(), b[1].numpy())  # noqa: E731
    elif a.workload == "w2":
        d = w2.w2_dir(a.data, a.items or w2.COUNT)
        files = w2.manifest(d)
        path = tfrecord_file(tf, d, files)
        make = lambda: iter(w2_pipeline(tf, path, len(files), a.variant, workers))  # noqa: E731
        check = lambda b: w2.check_batch(b[0].numpy(), b[1].numpy())  # noqa: E731
    else:
        raise ValueError(f"tf.data runs w1 and w2, not {a.workload}")
    res = time_epochs(make, lambda b: (int(b[0].shape[0]), 0), a.epochs, a.warmup, check)
    res["versions"] = {"tensorflow": tf.__version__, "numpy": np.__version__}
    return res


if __name__ == "__main__":
    runner_main(run, __doc__)
