"""MindDataset's Shuffle.PARTIAL / ADAPTIVE, MS_DEV_MINDRECORD_SHARD_BY_BLOCK, samplers carrying a
shuffle mode, and add_sampler / use_sampler checks.

The expected lists were produced by MindSpore 2.10 on the same files: four files of 100, 77, 37
and 19 rows whose ``label`` is the row's global position (0..232), under ``ds.config.set_seed(1234)``;
``tests/compat/test_mindrecord_partial_compat.py`` checks the same cases (and more) live. The 2.2
million-row digests come from one MindSpore run over two files of 700000 and 1500000 rows (too slow
to repeat in the suite).
"""
import hashlib

import numpy as np
import pytest

import headrace.dataset as ds
from headrace._engine.samplers.mindrecord import (
    SHARD_BY_BLOCK_ENV, MindShufflePlan, shard_by_block, shard_positions,
)
from headrace._util.types import SampleContext
from headrace.dataset import Shuffle
from headrace.mindrecord import FileWriter
from tests.helpers import numbered_mindrecords

SIZES = [100, 77, 37, 19]
SEED = 1234


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return numbered_mindrecords(
        tmp_path_factory.mktemp("modes"), SIZES,
        {"file_name": {"type": "string"}, "label": {"type": "int32"}, "data": {"type": "bytes"}},
        lambda i: {"file_name": f"{i}.jpg", "label": i, "data": b"ab"}, index=["file_name", "label"])


@pytest.fixture
def block(monkeypatch):
    monkeypatch.setenv(SHARD_BY_BLOCK_ENV, "true")


@pytest.fixture
def strided(monkeypatch):
    monkeypatch.delenv(SHARD_BY_BLOCK_ENV, raising=False)


def epochs(files, n=2, make_sampler=None, **kw):
    """Sizes and rows of ``n`` epochs under seed 1234 (``make_sampler()`` runs after the seed is set:
    a DistributedSampler takes the seed configured when it is made)."""
    ds.config.set_seed(SEED)
    if make_sampler is not None:
        kw["sampler"] = make_sampler()
    d = ds.MindDataset(files, columns_list=["label"], **kw)
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=n)
    return d.get_dataset_size(), [[int(r[0]) for r in it] for _ in range(n)]


# ------------------------------------------------------------------------------ shard positions

def test_shard_positions_strided_and_block_wrap_to_equal_sizes():
    assert shard_positions(10, 3, 2, False).tolist() == [2, 5, 8, 1]
    assert shard_positions(10, 3, 2, True).tolist() == [8, 9, 0, 1]
    assert shard_positions(233, 8, 7, True).tolist() == list(range(210, 233)) + list(range(7))
    assert shard_positions(233, 8, 5, False)[:3].tolist() == [5, 13, 21]


@pytest.mark.parametrize("value, on", [("true", True), ("True", True), ("TRUE", True), ("1", False),
                                       ("yes", False), ("false", False), ("", False)])
def test_shard_by_block_reads_true_in_any_case(monkeypatch, value, on):
    monkeypatch.setenv(SHARD_BY_BLOCK_ENV, value)
    assert shard_by_block() is on


# ------------------------------------------------------------------------------ Shuffle.PARTIAL

def test_partial_shuffles_the_files_then_the_rows_afresh_every_epoch(files, strided):
    size, (e0, e1) = epochs(files, shuffle=Shuffle.PARTIAL)
    assert size == 233 and sorted(e0) == list(range(233)) and sorted(e1) == list(range(233))
    assert e0[:10] == [46, 113, 180, 107, 93, 10, 70, 39, 35, 198]
    assert e1[:10] == [63, 125, 129, 116, 163, 209, 197, 20, 18, 161]


def test_partial_with_a_sampler_is_the_same_order(files, strided):
    assert epochs(files, sampler=ds.RandomSampler(shuffle=Shuffle.PARTIAL)) == epochs(files, shuffle=Shuffle.PARTIAL)


def test_partial_sharded_strided_and_by_block(files, monkeypatch):
    monkeypatch.delenv(SHARD_BY_BLOCK_ENV, raising=False)
    size, (e0, e1) = epochs(files, shuffle=Shuffle.PARTIAL, num_shards=8, shard_id=5)
    assert size == 30
    assert e0[:10] == [210, 186, 77, 153, 13, 21, 178, 214, 169, 137]
    assert e1[:10] == [32, 64, 96, 40, 169, 16, 24, 121, 104, 105]
    monkeypatch.setenv(SHARD_BY_BLOCK_ENV, "true")
    size, (e0, e1) = epochs(files, shuffle=Shuffle.PARTIAL, num_shards=8, shard_id=5)
    assert e0[:10] == [82, 79, 75, 60, 67, 68, 78, 63, 62, 58]
    assert e1[:10] == [37, 41, 45, 38, 25, 35, 36, 19, 46, 17]
    assert sorted(e0) == list(range(54, 84))  # the shard's block of the file-shuffled order


def test_partial_takes_num_samples_before_shuffling(files, strided):
    assert epochs(files, shuffle=Shuffle.PARTIAL, num_samples=10) == (
        10, [[107, 103, 100, 106, 101, 105, 102, 109, 108, 104], [101, 107, 103, 105, 108, 109, 106, 102, 104, 100]])
    assert epochs(files, sampler=ds.RandomSampler(replacement=True, num_samples=10, shuffle=Shuffle.PARTIAL))[1][0] \
        == [107, 103, 100, 106, 101, 105, 102, 109, 108, 104]
    assert epochs(files, shuffle=Shuffle.PARTIAL, num_shards=8, shard_id=5, num_samples=4) == (
        4, [[113, 129, 105, 121], [113, 121, 129, 105]])


def test_partial_keeps_padded_rows_after_the_files(files, monkeypatch):
    monkeypatch.setenv(SHARD_BY_BLOCK_ENV, "true")
    size, (e0, _) = epochs(files, shuffle=Shuffle.PARTIAL, num_shards=5, shard_id=4,
                           padded_sample={"label": -1}, num_padded=2)
    assert size == 47
    assert e0[:18] == [209, 182, 93, 99, 180, 200, 194, 212, 195, 205, 213, 192, 193, 190, 197, 183, 186, -1]
    assert e0.count(-1) == 2


def _digest(a):
    return hashlib.sha256(np.ascontiguousarray(a, dtype="<i8").tobytes()).hexdigest()[:32]


@pytest.mark.parametrize("shards, epoch, digest, head, run_edge", [
    ((1, 0), 0, "4d8c833441c5d48d43128519b25caf51", [1364446, 1416062, 1332747], [1076922, 1305072, 164446, 216062]),
    ((1, 0), 1, "6e09e6d99995fdee254a849674a1a17b", [1281539, 1658877, 1390361], [1102908, 1585153, 81539, 458877]),
    ((2, 1), 0, "cc4c4f375520d7ee6d7843b01a44e79c", [2028893, 2132125, 1965495], [1453845, 1910145, 612213, 565593]),
    ((2, 1), 1, "4dc17217b01e04a7e25371dd9bb3ef5f", [1863079, 417755, 2080723], [1505817, 270307, 585557, 673083]),
])
def test_partial_shuffles_runs_of_a_million_rows_as_mindspore(shards, epoch, digest, head, run_edge):
    """Two files of 700000 and 1500000 rows: past 1000000 rows each run is shuffled on its own."""
    plan = MindShufflePlan(shards[0], shards[1], 0, seed=SEED, mode="partial", sizes=(700000, 1500000),
                           by_block=False)
    got = plan.indices(SampleContext(2200000, epoch, SEED))
    assert len(got) == 2200000 // shards[0]
    assert got[:3].tolist() == head
    assert got[999998:1000002].tolist() == run_edge
    assert _digest(got) == digest


# ------------------------------------------------------------------------------ Shuffle.ADAPTIVE

def test_adaptive_is_global_up_to_a_hundred_million_rows(files, strided):
    assert epochs(files, shuffle=Shuffle.ADAPTIVE) == epochs(files, shuffle=Shuffle.GLOBAL) == epochs(files)
    size, (e0, _) = epochs(files, sampler=ds.RandomSampler(shuffle=Shuffle.ADAPTIVE))
    assert e0[:5] == [142, 13, 199, 7, 189]


def test_adaptive_plan_is_partial_above_its_row_limit(monkeypatch):
    from headrace._engine.samplers import mindrecord as engine_mr
    assert engine_mr.ADAPTIVE_ROWS == 100_000_000
    monkeypatch.setattr(engine_mr, "ADAPTIVE_ROWS", 232)  # the 233 rows above the limit
    ctx = SampleContext(233, 1, SEED)
    adaptive = MindShufflePlan(mode="adaptive", sizes=tuple(SIZES)).indices(ctx)
    assert adaptive.tolist() == MindShufflePlan(mode="partial", sizes=tuple(SIZES)).indices(ctx).tolist()
    assert adaptive[:10].tolist() == [63, 125, 129, 116, 163, 209, 197, 20, 18, 161]
    monkeypatch.setattr(engine_mr, "ADAPTIVE_ROWS", 233)
    assert MindShufflePlan(mode="adaptive", sizes=tuple(SIZES)).indices(ctx).tolist() == \
        MindShufflePlan(mode="global").indices(ctx).tolist()


# ------------------------------------------------------------------------------ samplers with a mode

@pytest.mark.parametrize("mode", [Shuffle.GLOBAL, Shuffle.ADAPTIVE, Shuffle.PARTIAL, Shuffle.FILES, Shuffle.INFILE,
                                  False])
def test_distributed_sampler_mode_equals_shuffle_argument(files, mode, block):
    by_sampler = epochs(files, make_sampler=lambda: ds.DistributedSampler(8, 5, shuffle=mode))
    assert by_sampler == epochs(files, shuffle=mode, num_shards=8, shard_id=5)


def test_random_sampler_with_infile_files(files, strided):
    assert epochs(files, sampler=ds.RandomSampler(shuffle=Shuffle.INFILE))[1][0][:10] == \
        [48, 61, 43, 6, 68, 30, 92, 80, 64, 4]
    assert epochs(files, sampler=ds.RandomSampler(shuffle=Shuffle.FILES))[1][0][:3] == [100, 101, 102]


def test_random_sampler_num_samples_without_replacement_reshuffles_its_rows(files, strided):
    assert epochs(files, n=3, sampler=ds.RandomSampler(num_samples=10)) == (10, [
        [142, 13, 199, 7, 189, 106, 166, 135, 131, 217], [13, 135, 7, 106, 131, 217, 166, 199, 189, 142],
        [189, 13, 142, 199, 135, 7, 217, 131, 106, 166]])


@pytest.mark.parametrize("sampler", [ds.RandomSampler(num_samples=10, shuffle=Shuffle.FILES),
                                     ds.DistributedSampler(8, 5, num_samples=4, shuffle=Shuffle.INFILE)])
def test_files_modes_refuse_num_samples_in_a_sampler(files, sampler):
    with pytest.raises(RuntimeError) as e:
        ds.MindDataset(files, sampler=sampler)
    assert str(e.value) == ("MindDataset: Shuffle.kFiles or Shuffle.kInfile and num_samples cannot be specified at "
                            "the same time.")


# ------------------------------------------------------------------------------ block sharding

def test_block_shards_without_shuffle_are_contiguous_and_wrap(files, block):
    assert epochs(files, shuffle=False, num_shards=8, shard_id=5)[1][0] == list(range(150, 180))
    assert epochs(files, shuffle=False, num_shards=8, shard_id=7)[1][0] == list(range(210, 233)) + list(range(7))
    assert epochs(files, sampler=ds.DistributedSampler(8, 5, num_samples=4, shuffle=False))[1] == \
        [[150, 151, 152, 153]] * 2


def test_block_shards_of_global_files_and_infile(files, block):
    assert epochs(files, shuffle=Shuffle.GLOBAL, num_shards=3, shard_id=1)[1][0][:10] == \
        [125, 124, 34, 100, 148, 171, 194, 96, 9, 27]
    assert epochs(files, shuffle=Shuffle.FILES, num_shards=8, shard_id=5)[1] == \
        [list(range(54, 84)), list(range(17, 47))]
    assert epochs(files, shuffle=Shuffle.INFILE, num_shards=8, shard_id=5)[1][0][:5] == [132, 115, 176, 103, 143]


def test_block_switch_is_read_when_the_pipeline_runs(files, monkeypatch):
    monkeypatch.setenv(SHARD_BY_BLOCK_ENV, "true")
    d = ds.MindDataset(files, columns_list=["label"], shuffle=False, num_shards=8, shard_id=5)
    monkeypatch.delenv(SHARD_BY_BLOCK_ENV)
    assert [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)][:3] == [5, 13, 21]


# ------------------------------------------------------------------------------ add_sampler / use_sampler

def test_add_sampler_refuses_a_partial_current_sampler(files):
    d = ds.MindDataset(files, shuffle=Shuffle.PARTIAL)
    with pytest.raises(RuntimeError) as e:
        d.add_sampler(ds.DistributedSampler(8, 1, shuffle=Shuffle.INFILE))
    assert str(e.value) == ("When multiple samplers are used, ensure that the shuffle of the current sampler must "
                            "not be Shuffle.PARTIAL.")
    assert d.get_dataset_size() == 233  # unchanged
    with pytest.raises(RuntimeError, match="current sampler must not be Shuffle.PARTIAL"):
        ds.MindDataset(files, sampler=ds.RandomSampler(shuffle=Shuffle.PARTIAL)).add_sampler(ds.SequentialSampler())


@pytest.mark.parametrize("method", ["add_sampler", "use_sampler"])
def test_add_and_use_sampler_refuse_an_input_mode_other_than_false_or_global(files, method):
    for d in (ds.MindDataset(files, shuffle=Shuffle.GLOBAL), ds.NumpySlicesDataset(list(range(10)), shuffle=False)):
        with pytest.raises(RuntimeError) as e:
            getattr(d, method)(ds.DistributedSampler(4, 3, shuffle=Shuffle.INFILE))
        assert str(e.value) == ("When multiple samplers are used, ensure that the shuffle of the input sampler must "
                                "be Shuffle.FALSE or Shuffle.GLOBAL, but got: Shuffle.INFILE.")
    d = ds.MindDataset(files, columns_list=["label"])
    d.add_sampler(ds.DistributedSampler(4, 3))
    assert d.get_dataset_size() == 59


def test_add_child_messages_name_current_and_input_samplers():
    with pytest.raises(RuntimeError, match="shuffle of the input sampler must not be Shuffle.PARTIAL"):
        ds.DistributedSampler(8, 1, shuffle=Shuffle.PARTIAL).add_child(ds.RandomSampler(shuffle=Shuffle.PARTIAL))
    with pytest.raises(RuntimeError) as e:
        ds.DistributedSampler(8, 1, shuffle=Shuffle.INFILE).add_child(ds.RandomSampler(shuffle=Shuffle.GLOBAL))
    assert str(e.value) == ("When multiple samplers are used, ensure that the shuffle of the current sampler must be "
                            "Shuffle.FALSE or Shuffle.GLOBAL, but got: Shuffle.INFILE.")


# ------------------------------------------------------------------------------ file lists

def _write(path, desc="s", page_size=None, index=("file_name",)):
    w = FileWriter(str(path))
    if page_size:
        w.set_page_size(page_size)
    w.add_schema({"id": {"type": "int32"}, "file_name": {"type": "string"}, "data": {"type": "bytes"}}, desc)
    w.add_index(list(index))
    w.write_raw_data([{"id": k, "file_name": "a", "data": b"x" * 10} for k in range(5)])
    w.commit()
    return str(path)


def test_a_file_list_may_differ_in_schema_description_and_page_size(tmp_path):
    files = [_write(tmp_path / "a"), _write(tmp_path / "b", desc="other"), _write(tmp_path / "c", page_size=1 << 16)]
    d = ds.MindDataset(files, columns_list=["id"], shuffle=False)
    assert [int(r[0]) for r in d.create_tuple_iterator(output_numpy=True)] == list(range(5)) * 3


def test_a_file_list_must_agree_in_index_fields(tmp_path):
    files = [_write(tmp_path / "a"), _write(tmp_path / "d", index=("id",))]
    with pytest.raises(RuntimeError) as e:
        list(ds.MindDataset(files, shuffle=False).create_tuple_iterator(output_numpy=True))
    assert f"the metadata of mindrecord file: {files[1]} is different from others" in str(e.value)
    assert f"{files[1]} and {files[0]} differ in: index_fields." in "".join(getattr(e.value, "__notes__", []))
