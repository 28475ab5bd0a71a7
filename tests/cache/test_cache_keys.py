"""The cache key: any change of the source files or of an operation or parameter up to the cache
point gives another key (property test over sets of mutations); the same pipeline gives the same."""
import os
import shutil
import tempfile

from hypothesis import given, settings, strategies as st

import headrace.dataset as ds
import headrace.dataset.vision as vision
from headrace.mindrecord import FileWriter
from tests.cache.conftest import write_images

MUTATIONS = ("touch", "append", "rename", "add_file", "resize", "other_op", "closure", "body", "shard",
             "shard_id", "decode_arg", "extensions", "input_column", "session_only")


def _pipeline(root, m, cache):
    k = 3 if "closure" in m else 2
    fn = (lambda x: x * k) if "body" in m else (lambda x: x + k)
    src = ds.ImageFolderDataset(root, shuffle=False, decode="decode_arg" in m,
                                extensions=[".jpg", ".JPG"] if "extensions" in m else None,
                                num_shards=3 if "shard" in m else 2, shard_id=1 if "shard_id" in m else 0)
    img_op = [vision.CenterCrop(6)] if "other_op" in m else [vision.Resize(6 if "resize" in m else 5)]
    if "decode_arg" not in m:
        img_op = [vision.Decode()] + img_op
    d = src.map(img_op, input_columns="image")
    return d.map(fn, input_columns="image" if "input_column" in m else "label", cache=cache)


def _key(root, m):
    cache = ds.DatasetCache(session_id=2 if "session_only" in m else 1)
    node = _pipeline(root, m, cache)._plan
    return node.source.store.key


def _mutate_files(root, m):
    victim = os.path.join(root, "c0", "0000.jpg")
    if "touch" in m:
        st_ = os.stat(victim)
        os.utime(victim, ns=(st_.st_atime_ns, st_.st_mtime_ns + 1_000_000))
    if "append" in m:
        with open(victim, "ab") as f:
            f.write(b"\0")
    if "rename" in m:
        os.rename(os.path.join(root, "c1", "0001.jpg"), os.path.join(root, "c1", "0009.jpg"))
    if "add_file" in m:
        shutil.copy(victim, os.path.join(root, "c1", "0011.jpg"))


@settings(max_examples=25, deadline=None)
@given(st.sets(st.sampled_from([x for x in MUTATIONS if x != "session_only"]), min_size=1))
def test_any_mutation_changes_the_key(mutations):
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "img")
        write_images(__import__("pathlib").Path(root), 4)
        base = _key(root, set())
        assert _key(root, set()) == base  # the same pipeline, the same key
        _mutate_files(root, mutations)
        assert _key(root, mutations) != base


def test_every_single_mutation_gives_its_own_key(tmp_path):
    keys = {}
    for m in MUTATIONS:
        root = tmp_path / m
        write_images(root, 4)
        keys[m] = _key(str(root), {m}) if m not in ("touch", "append", "rename", "add_file") else None
    # File mutations are checked against their own unmutated copy (folders differ by path anyway).
    for m in ("touch", "append", "rename", "add_file"):
        root = str(tmp_path / m)
        base = _key(root, set())
        _mutate_files(root, {m})
        keys[m] = _key(root, set())
        assert keys[m] != base
    param_keys = [keys[m] for m in MUTATIONS if m not in ("touch", "append", "rename", "add_file", "session_only")]
    assert len(set(param_keys)) == len(param_keys)


def test_session_is_a_folder_not_part_of_the_key(tmp_path):
    write_images(tmp_path / "img", 2)
    assert _key(str(tmp_path / "img"), {"session_only"}) == _key(str(tmp_path / "img"), set())


def _write_mindrecord(path, values):
    w = FileWriter(path, 1, overwrite=True)
    w.add_schema({"v": {"type": "int64"}, "b": {"type": "bytes"}}, "s")
    w.write_raw_data([{"v": v, "b": bytes([v % 256]) * 8} for v in values])
    w.commit()


def test_mindrecord_rewrite_and_index_change_the_key(tmp_path):
    path = str(tmp_path / "a.mindrecord")
    _write_mindrecord(path, range(10))

    def key():
        d = ds.MindDataset(path, shuffle=False).map(lambda b: b, input_columns="b", cache=ds.DatasetCache())
        return d._plan.source.store.key

    k0 = key()
    assert key() == k0
    st_ = os.stat(path + ".db")
    os.utime(path + ".db", ns=(st_.st_atime_ns, st_.st_mtime_ns + 1_000_000))
    k1 = key()
    assert k1 != k0
    _write_mindrecord(path, range(5, 15))
    assert key() not in (k0, k1)
    rows = [int(r[1]) for r in ds.MindDataset(path, shuffle=False).map(
        lambda b: b, input_columns="b", cache=ds.DatasetCache()).create_tuple_iterator(output_numpy=True)]
    assert rows == list(range(5, 15))


SCALE = 2


def _scaled(x):
    return x * SCALE


def test_a_module_constant_the_function_reads_is_part_of_the_key():
    global SCALE

    def key():
        d = ds.NumpySlicesDataset([1, 2], ["x"], shuffle=False).map(_scaled, cache=ds.DatasetCache())
        return d._plan.source.store.key

    before = key()
    assert key() == before
    SCALE = 3
    try:
        assert key() != before
    finally:
        SCALE = 2
    assert key() == before
