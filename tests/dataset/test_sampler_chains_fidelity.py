"""Sampler chains on MindDataset, ``dataset[i]``, and MindDataset + PaddedDataset shards (issue 39,
item 4). Literal orders are MindSpore 2.10's (they guard the emulation; the oracle comparison is
tests/compat/test_issue39_fidelity_compat.py)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace.dataset as ds
from headrace._engine.samplers.mindchain import ChainOp, MindChainPlan
from headrace._util.types import SampleContext
from tests.helpers import numbered_mindrecord
from tests.oracles.snippets import INT_ROWS, local_functions


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    return numbered_mindrecord(tmp_path_factory.mktemp("chains"))


_INT_ROWS = local_functions(INT_ROWS)  # the helpers of the oracle comparison, on headrace
_rows, _sharded = _INT_ROWS["rows"], _INT_ROWS["sharded"]


def _chain(*samplers):
    for parent, child in zip(samplers, samplers[1:]):
        parent.add_child(child)
    return samplers[0]


def test_a_distributed_parent_shards_the_random_order_its_child_drew(path):
    ds.config.set_seed(0)
    d = ds.MindDataset(path, sampler=ds.RandomSampler())
    assert _rows(d)[0] == [2, 7, 10, 6, 11, 0, 4, 9, 5, 3, 1, 8]
    d.add_sampler(ds.DistributedSampler(4, 2, shuffle=False))
    assert _rows(d, 2) == [[10, 4, 1], [10, 4, 1]]  # positions 2, 6, 10 of that order, every epoch


def test_a_random_parent_shuffles_its_distributed_childs_shard_in_the_first_epoch(path):
    ds.config.set_seed(0)
    d = ds.MindDataset(path, sampler=_chain(ds.RandomSampler(), ds.DistributedSampler(4, 2)))
    assert _rows(d, 4) == [[1, 10, 4], [4, 6, 1], [11, 5, 0], [3, 7, 8]]


def test_random_over_random_reshuffles_every_epoch(path):
    ds.config.set_seed(0)
    d = ds.MindDataset(path, sampler=_chain(ds.RandomSampler(), ds.RandomSampler()))
    assert _rows(d, 2) == [[10, 9, 1, 4, 8, 2, 11, 3, 0, 6, 7, 5], [1, 0, 7, 2, 9, 5, 11, 6, 8, 4, 10, 3]]


def test_a_sequence_over_a_shard_keeps_its_count_in_later_epochs(path):
    ds.config.set_seed(0)
    d = ds.MindDataset(path, sampler=_chain(ds.SequentialSampler(1, 2), ds.DistributedSampler(4, 1, shuffle=False)))
    assert _rows(d, 3) == [[5, 9], [1, 5], [1, 5]]
    assert d.get_dataset_size() == 2


@pytest.mark.parametrize(("kwargs", "order"), [
    ({}, [2, 7, 10, 6, 11, 0, 4, 9, 5, 3, 1, 8]),
    ({"shuffle": False, "num_shards": 3, "shard_id": 1}, [1, 4, 7, 10]),
    ({"sampler": ds.SubsetSampler([5, 3, 1])}, [5, 3, 1]),
])
def test_getitem_is_the_row_the_iterator_gives_there(path, kwargs, order):
    ds.config.set_seed(0)
    d = ds.MindDataset(path, **kwargs)
    assert [int(d[i][0]) for i in range(len(order))] == order == _rows(d)[0]
    with pytest.raises(RuntimeError, match=rf"^Input index is not within the required interval of "
                                           rf"\[0, {len(order) - 1}\], but got {len(order)}\.$"):
        d[len(order)]


def test_getitem_without_a_seed_keeps_one_order(path):
    d = ds.MindDataset(path)
    first = [int(d[i][0]) for i in range(12)]
    assert sorted(first) == list(range(12)) and [int(d[i][0]) for i in range(12)] == first


def test_mind_and_padded_rows_are_sharded_in_contiguous_blocks(path):
    pad = [{"id": np.array(-1, np.int64)}] * 4
    assert _sharded(lambda: ds.MindDataset(path, shuffle=False) + ds.PaddedDataset(pad), 8) == \
        [[0, 1], [2, 3], [4, 5], [6, 7], [8, -1], [9, -1], [10, -1], [11, -1]]
    assert _sharded(lambda: ds.PaddedDataset(pad[:2]) + ds.MindDataset(path, shuffle=False), 8) == \
        [[-1, 0], [-1, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10], [11]]


_ops = st.one_of(
    st.builds(ChainOp, st.just("shuffle"), limit=st.integers(0, 4)),
    st.builds(ChainOp, st.just("sequence"), limit=st.integers(0, 6), start=st.integers(0, 3)),
    st.builds(ChainOp, st.just("subset"), limit=st.integers(0, 3), shuffle=st.booleans(),
              ids=st.lists(st.integers(-3, 30), min_size=1, max_size=6).map(tuple)),
    st.integers(1, 5).flatmap(
        lambda shards: st.builds(ChainOp, st.just("shard"), shuffle=st.booleans(), num_shards=st.just(shards),
                                 shard_id=st.integers(0, shards - 1), seed=st.integers(0, 9),
                                 limit=st.integers(0, 3))),
)


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(_ops, min_size=1, max_size=4).filter(lambda o: sum(op.kind == "shard" for op in o) <= 1),
       n=st.integers(1, 20), seed=st.integers(0, 2**32 - 1), passes=st.integers(1, 4))
def test_chain_plan_reads_rows_of_the_source_as_many_as_it_says_purely(ops, n, seed, passes):
    plan = MindChainPlan(tuple(ops))
    first = plan.indices(SampleContext(n, 0, seed))
    assert len(first) == plan.num_samples(n)
    for k in range(passes):
        ids = plan.indices(SampleContext(n, k, seed))
        assert ids.dtype == np.int64 and ((ids >= 0) & (ids < n)).all()
        np.testing.assert_array_equal(ids, MindChainPlan(tuple(ops)).indices(SampleContext(n, k, seed)))
        if not any(op.kind == "shard" for op in ops):
            assert sorted(ids.tolist()) == sorted(first.tolist())  # later passes reorder pass 0's rows


def test_chain_plan_checks_its_operations():
    with pytest.raises(ValueError, match="kind must be one of"):
        ChainOp("pk")
    with pytest.raises(ValueError, match=r"num_shards must be >= 1, but got 0"):
        ChainOp("shard", num_shards=0)
    # MindSpore reads a shard_id past the last shard as strides from there: rows 2, 4, ... of 10
    assert MindChainPlan((ChainOp("shard", num_shards=2, shard_id=2),), by_block=False).indices(
        SampleContext(10, 0, 0)).tolist() == [2, 4, 6, 8, 0]
    # and a negative one as unsigned 64-bit positions: -1 of 10 rows is (2**64 - 1) % 10 = 5, then 1, 3, ...
    assert MindChainPlan((ChainOp("shard", num_shards=2, shard_id=-1),), by_block=False).indices(
        SampleContext(10, 0, 0)).tolist() == [5, 1, 3, 5, 7]
    with pytest.raises(ValueError, match="one distributed sampler at most"):
        MindChainPlan((ChainOp("shard", num_shards=2), ChainOp("shard", num_shards=2)))
    with pytest.raises(ValueError, match="at least one operation"):
        MindChainPlan(())


def test_a_chain_resumes_from_any_position(path):
    from tests.helpers import assert_resume_equivalence  # noqa: PLC0415
    ds.config.set_seed(2)
    d = ds.MindDataset(path, sampler=_chain(ds.RandomSampler(), ds.SequentialSampler(1, 9), ds.RandomSampler()))
    assert_resume_equivalence(d, num_epochs=3)
