"""read_mindrecord / MindRecordDatasource: rows, orders under a seed, read tasks, schema."""
import numpy as np
import pytest

ray = pytest.importorskip("ray")
import pyarrow as pa
from hypothesis import given, settings, strategies as st

import headrace.dataset as ds
from headrace.ray import MindRecordDatasource, read_mindrecord
from headrace.ray._read import file_ranges, page_starts
from tests.ray.conftest import make_rows, write_set

COLUMNS = ["data", "ids", "label", "name", "score", "vec"]


def local_epochs(path, epochs, seed, **kw):
    ds.config.set_seed(seed)
    it = ds.MindDataset(path, **kw).create_dict_iterator(output_numpy=True, num_epochs=epochs)
    return [list(it) for _ in range(epochs)]


def assert_same_rows(ray_rows, local_rows):
    assert len(ray_rows) == len(local_rows)
    for pos, (a, b) in enumerate(zip(ray_rows, local_rows)):
        assert a["data"] == b["data"].tobytes()
        assert a["name"] == str(b["name"])
        assert a["label"] == int(b["label"]) and type(a["label"]) is not float
        assert a["score"] == float(b["score"])
        assert a["vec"].dtype == np.float32 and np.array_equal(a["vec"], b["vec"])
        assert a["ids"].dtype == np.int64 and np.array_equal(a["ids"], b["ids"])
        assert a["__sample__"] == pos


def test_rows_are_minddatasets_in_file_order(local_ray, mr_set):
    rows = read_mindrecord(mr_set, shuffle=False, rows_per_task=7).take_all()
    (local,) = local_epochs(mr_set, 1, 1, shuffle=False)
    assert [r["label"] for r in rows] == list(range(50))
    assert_same_rows(rows, local)
    assert {r["__epoch__"] for r in rows} == {0}


def test_each_execution_reads_the_next_epochs_shuffle(local_ray, mr_set):
    data = read_mindrecord(mr_set, seed=11, rows_per_task=8)  # shuffle=None: MindDataset's default
    ours = [data.take_all() for _ in range(3)]
    local = local_epochs(mr_set, 3, 11)
    for epoch in range(3):
        assert_same_rows(ours[epoch], local[epoch])
        assert {r["__epoch__"] for r in ours[epoch]} == {epoch}
    assert [r["label"] for r in ours[0]] != [r["label"] for r in ours[1]]


ORACLE_ORDER = """
ds.config.set_seed(INPUTS[1])
it = ds.MindDataset(INPUTS[0], columns_list=["label"]).create_dict_iterator(output_numpy=True, num_epochs=2)
RESULT = [[int(r["label"]) for r in it] for _ in range(2)]
"""


@pytest.mark.compat
def test_each_epochs_order_is_mindspores(local_ray, mr_set):
    from tests.oracles.oracle import oracle_python, run_ms

    if oracle_python() is None:
        pytest.skip("MindSpore oracle not set up (scripts/oracle_env.sh)")
    data = read_mindrecord(mr_set, ["label"], seed=17, rows_per_task=9)
    ours = [[r["label"] for r in data.take_all()] for _ in range(2)]
    assert ours == run_ms(ORACLE_ORDER, [mr_set, 17])


@pytest.mark.parametrize("shuffle", [ds.Shuffle.FILES, ds.Shuffle.INFILE, ds.Shuffle.GLOBAL])
def test_fixed_epoch_reads_minddatasets_order_of_that_epoch(local_ray, mr_set, shuffle):
    local = local_epochs(mr_set, 3, 5, shuffle=shuffle)
    rows = read_mindrecord(mr_set, ["label"], shuffle=shuffle, seed=5, epoch=2).take_all()
    assert [r["label"] for r in rows] == [int(r["label"]) for r in local[2]]
    assert list(rows[0]) == ["label", "__sample__", "__epoch__"]


def test_seed_from_config(local_ray, mr_set):
    ds.config.set_seed(4)
    rows = read_mindrecord(mr_set, ["label"], epoch=0).take_all()
    assert [r["label"] for r in rows] == [int(r["label"]) for r in local_epochs(mr_set, 1, 4)[0]]


def test_schema_of_the_blocks(local_ray, mr_set):
    schema = read_mindrecord(mr_set, shuffle=False).schema()
    assert schema.names == COLUMNS + ["__sample__", "__epoch__"]
    types = dict(zip(schema.names, schema.types))
    assert types["data"] == pa.binary() and types["name"] == pa.string()
    assert types["label"] == pa.int32() and types["score"] == pa.float64()
    assert "shape=(2, 3)" in str(types["vec"]) and "VariableShaped" in str(types["ids"])


def test_read_tasks_are_page_aligned_and_independent_of_parallelism(local_ray, mr_set):
    d = ds.MindDataset(mr_set, shuffle=False)
    src = MindRecordDatasource(d, seed=0, rows_per_task=12)
    tasks = {p: src.get_read_tasks(p) for p in (1, 2, 200)}
    shapes = {p: [(t.metadata.num_rows, t.metadata.size_bytes, tuple(t.metadata.input_files)) for t in ts]
              for p, ts in tasks.items()}
    assert shapes[1] == shapes[2] == shapes[200]
    starts = set(page_starts(d._source()).tolist())
    ranges = file_ranges(d._source(), 12)
    assert [b - a for a, b in ranges] == [m[0] for m in shapes[1]]
    assert all(a in starts for a, _ in ranges) and ranges[0][0] == 0 and ranges[-1][1] == 50
    assert all(a < 25 <= b - 1 for a, b in ranges) is False   # no task spans the two files
    files = d._source().files
    assert shapes[1][0][2] == (files[0],) and shapes[1][-1][2] == (files[1],)
    locs = d._source()._reader._locs
    a, b = ranges[0]
    assert shapes[1][0][1] == int(locs[a:b, 1].sum() + locs[a:b, 3].sum())


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 60))
def test_file_ranges_cover_every_row_once_in_whole_pages(mr_set, rows_per_task):
    src = ds.MindDataset(mr_set, shuffle=False)._source()
    ranges = file_ranges(src, rows_per_task)
    starts = set(page_starts(src).tolist())
    assert [r for a, b in ranges for r in range(a, b)] == list(range(50))
    assert all(a in starts for a, _ in ranges)
    assert all(not (a < 25 < b) for a, b in ranges)
    # a range ends at the first page start at or past rows_per_task rows (or at its file's end)
    for a, b in ranges:
        inner = [s for s in starts if a < s < b]
        assert all(s - a < rows_per_task for s in inner)


def test_shuffled_tasks_are_fixed_position_ranges(local_ray, mr_set):
    src = MindRecordDatasource(ds.MindDataset(mr_set), seed=3, rows_per_task=16)
    assert [t.metadata.num_rows for t in src.get_read_tasks(4)] == [16, 16, 16, 2]
    order = src.order(0)
    assert sorted(order.tolist()) == list(range(50))
    ds.config.set_seed(3)
    assert order.tolist() == [int(r["label"]) for r in ds.MindDataset(mr_set).create_dict_iterator(output_numpy=True)]


def test_a_read_task_does_not_carry_the_row_table(local_ray, tmp_path):
    import pickle

    small = write_set(str(tmp_path / "small.mindrecord"), make_rows(40, 0, 10))
    large = write_set(str(tmp_path / "large.mindrecord"), make_rows(4000, 0, 10))
    sizes = []
    for path in (small, large):
        src = MindRecordDatasource(ds.MindDataset(path), seed=1, rows_per_task=10)
        sizes.append(len(pickle.dumps(src.get_read_tasks(1)[0])))
    # the large set's row table is 128 KB; its tasks share it through the object store
    assert abs(sizes[1] - sizes[0]) < 512, sizes


def test_a_list_of_files_reads_only_those(local_ray, tmp_path):
    first = write_set(str(tmp_path / "a.mindrecord"), make_rows(6, 0, 10))
    second = write_set(str(tmp_path / "b.mindrecord"), make_rows(4, 6, 10))
    rows = read_mindrecord([second, first], ["label"], shuffle=False).take_all()
    assert [r["label"] for r in rows] == [6, 7, 8, 9, 0, 1, 2, 3, 4, 5]


@pytest.mark.parametrize("kwargs, error, message", [
    ({"rows_per_task": 0}, ValueError, "rows_per_task must be at least 1, but got 0."),
    ({"rows_per_task": 2.5}, TypeError, "rows_per_task must be an int, but got 2.5"),
    ({"seed": -1}, ValueError, "seed must be at least 0, but got -1."),
    ({"epoch": True}, TypeError, "epoch must be an int or None, but got True"),
    ({"preserve_order": 1}, TypeError, "preserve_order must be a bool, but got 1."),
    ({"columns": "label"}, TypeError, "columns must be a list of column names or None, but got 'label'."),
    ({"columns": ["nope"]}, RuntimeError, "column name: nope can not found in schema"),
])
def test_bad_arguments(mr_set, kwargs, error, message):
    with pytest.raises(error, match=None) as info:
        read_mindrecord(mr_set, **kwargs)
    assert message in str(info.value)


def test_the_datasource_checks_its_arguments(mr_set):
    with pytest.raises(TypeError, match="dataset must be a MindDataset .*but got MapDataset."):
        MindRecordDatasource(ds.MindDataset(mr_set).map(lambda x: x, "label"), seed=1)
    with pytest.raises(TypeError, match="seed must be an int, but got None"):
        MindRecordDatasource(ds.MindDataset(mr_set), seed=None)
    with pytest.raises(ValueError, match="rows_per_task must be at least 1, but got 0."):
        MindRecordDatasource(ds.MindDataset(mr_set), seed=1, rows_per_task=0)


def test_a_missing_file(tmp_path):
    with pytest.raises(ValueError, match="does not exist or permission denied"):
        read_mindrecord(str(tmp_path / "none.mindrecord"))


# ---- other headrace sources: read_dataset ---------------------------------------------------

def test_tfrecord_rows_equal_tfrecorddatasets(local_ray, tmp_path):
    from headrace._codecs.tfrecord import write_tfrecord
    from headrace.ray import read_dataset

    path = str(tmp_path / "a.tfrecord")
    write_tfrecord(path, [{"x": ("int64", [i, i + 1]), "f": ("float", [i / 4]), "s": ("bytes", [b"ab" * i])}
                          for i in range(11)])
    data = read_dataset(ds.TFRecordDataset(path), seed=3, rows_per_task=4)
    ours = [data.take_all() for _ in range(2)]   # each execution reads the next epoch
    ds.config.set_seed(3)
    it = ds.TFRecordDataset(path).create_dict_iterator(output_numpy=True, num_epochs=2)
    for epoch in range(2):
        theirs = list(it)
        assert [r["x"].tolist() for r in ours[epoch]] == [r["x"].tolist() for r in theirs]
        for a, b in zip(ours[epoch], theirs):
            for c in ("f", "s", "x"):
                assert a[c].dtype == b[c].dtype and np.array_equal(a[c], b[c])
        assert [r["__sample__"] for r in ours[epoch]] == list(range(11))


def test_image_folder_and_map_ops_equal_a_local_pipeline(local_ray, tmp_path):
    import cv2
    from headrace.dataset import vision
    from headrace.ray import map_ops, read_dataset

    for i in range(9):
        folder = tmp_path / "img" / "ab"[i % 2]
        folder.mkdir(parents=True, exist_ok=True)
        img = np.random.default_rng(i).integers(0, 255, (8 + i, 6, 3), dtype=np.uint8)
        cv2.imwrite(str(folder / f"{i}.png"), img)
    ops = [vision.Decode(), vision.RandomCrop(4)]
    ours = map_ops(read_dataset(ds.ImageFolderDataset(str(tmp_path / "img")), seed=5, rows_per_task=4),
                   ops, "image").take_all()
    ds.config.set_seed(5)
    theirs = list(ds.ImageFolderDataset(str(tmp_path / "img")).map(ops, "image").create_dict_iterator(
        output_numpy=True))
    assert [r["label"] for r in ours] == [int(r["label"]) for r in theirs]
    assert all(a["image"].shape == (4, 4, 3) and np.array_equal(a["image"], b["image"]) for a, b in zip(ours, theirs))


def test_read_dataset_refuses_what_is_not_a_source(mr_set):
    from headrace.ray import read_dataset

    with pytest.raises(ValueError, match="read_dataset: MapDataset is not a source read by index"):
        read_dataset(ds.MindDataset(mr_set).map(lambda x: x, "label"))
    with pytest.raises(ValueError, match="read_dataset: GeneratorDataset is not a source read by index"):
        read_dataset(ds.GeneratorDataset(lambda: iter([(1,)]), ["x"]))
    with pytest.raises(TypeError, match="dataset must be a headrace source dataset, but got list."):
        read_dataset([1])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=12))
def test_a_bytes_column_holds_each_rows_whole_buffer(values):
    from headrace.ray._blocks import binary_array
    # MindDataset's bytes: S arrays of shape (1,) (trailing NULs kept: .tobytes() is the payload)
    rows = [np.frombuffer(v, dtype=f"S{len(v)}") if v else np.zeros(1, dtype="S1") for v in values]
    col = binary_array(rows)
    assert col.type == pa.binary() and len(col) == len(values)
    assert col.to_pylist() == [r.tobytes() for r in rows]
    col.validate(full=True)
