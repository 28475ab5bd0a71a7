"""Elastic resume (issue 15): a loader state saved with N ranks restores on M ranks; every row not
delivered before the save is delivered exactly once across the new ranks, and later epochs are the
M-rank epochs."""
import collections
import json
import os
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import headrace.dataset as ds
from headrace._engine.samplers import SequentialPlan
from headrace._engine.samplers.mindrecord import (
    ADAPTIVE_ROWS, SHARD_BY_BLOCK_ENV, MindDealtOrder, MindFilePlan, MindShufflePlan, shard_positions,
)
from headrace._engine.samplers.resumed import ResumedPassPlan
from headrace._feed.shard import reshard
from headrace._feed.stream import EpochReader
from headrace._util.types import SampleContext
from tests.helpers import numbered_mindrecords, run_together


def pipeline(n, batch, shuffle, drop=False):
    ds.config.set_seed(7)
    return ds.NumpySlicesDataset({"id": np.arange(n)}, shuffle=shuffle).map(lambda x: x + 0).batch(
        batch, drop_remainder=drop)


def reader(data, shards, shard_id):
    sharded = reshard(data, shards, shard_id, "test") if shards > 1 else data
    return EpochReader(sharded, None, lambda row: row, 2, (shards, shard_id), "test", data)


def read(r, batches=None):
    """ids of the next ``batches`` batches of the reader's current epoch (all: None)."""
    out = []
    for i, row in enumerate(r.epoch()):
        out.append(row[0].tolist())
        if batches is not None and i + 1 == batches:
            break
    return out


def flat(batches):
    return [x for b in batches for x in b]


def test_the_resumed_pass_deals_the_rest_of_the_order_and_pads_from_what_was_read():
    plan = ResumedPassPlan(SequentialPlan(), SequentialPlan(), pass_index=1, start=4, num_shards=3, shard_id=2)
    ctx = SampleContext(10, 1, 0)
    assert plan.indices(ctx).tolist() == [6, 9]             # positions 6, 9 of 4..9
    assert ResumedPassPlan(SequentialPlan(), SequentialPlan(), 1, 5, 3, 2).indices(ctx).tolist() == [7, 0]
    assert plan.indices(SampleContext(10, 0, 0)).tolist() == list(range(10))   # other passes: `then`
    with pytest.raises(ValueError, match="start must be above 0"):
        ResumedPassPlan(SequentialPlan(), SequentialPlan(), 1, 0, 3, 2)


def test_two_ranks_to_three_with_shuffle_delivers_every_row_once():
    data = pipeline(23, 2, shuffle=True)
    old = [reader(data, 2, r) for r in range(2)]
    got_old = [read(r, 3) for r in old]                     # 3 batches each: 12 rows
    state = old[1].state()
    new = [reader(data, 3, r) for r in range(3)]
    for r in new:
        r.load_state(state)
    rest = [read(r) for r in new]
    before, after = flat(flat(got_old)), [flat(b) for b in rest]
    assert len(set(before)) == 12
    # 11 rows left, dealt over 3 ranks: 4 each, the 12th a pad repeating a row read before the save
    assert [len(a) for a in after] == [4, 4, 4]
    assert sorted(set(before) | set(flat(after))) == list(range(23))
    assert sorted(flat(after))[:-1] != sorted(set(flat(after)))   # one repeat ...
    assert set(after[2][-1:]) <= set(before)                       # ... the pad of the last rank
    assert len(json.dumps(new[0].state())) < 1024     # small: a position, not a list of rows
    saved = json.loads(new[0].state()["resume"])
    assert saved == {"pass": 0, "start": 12, "shards": 2}
    # the epoch after is the 3-rank epoch a fresh job reads
    fresh = [reader(data, 3, r) for r in range(3)]
    for r in fresh:
        r.set_epoch(1)
    assert [read(r) for r in new] == [read(r) for r in fresh]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 40), old=st.integers(1, 4), new=st.integers(1, 4), batch=st.integers(1, 5),
       shuffle=st.booleans(), frac=st.floats(0, 1), saver=st.integers(0, 3))
def test_any_rank_count_to_any_other_reads_each_unread_row_once(n, old, new, batch, shuffle, frac, saver):
    data = pipeline(n, batch, shuffle)
    readers = [reader(data, old, r) for r in range(old)]
    steps = len(read(reader(data, old, 0)))                 # batches per old rank in an epoch
    s = int(frac * steps)
    before = flat(flat(read(r, s) if s else [] for r in readers))
    state = readers[saver % old].state()
    after = []
    for k in range(new):
        r = reader(data, new, k)
        r.load_state(state)
        after.append(flat(read(r)))
    if not before:   # nothing read: the new ranks read the epoch as a fresh job on their count does
        fresh = [reader(data, new, k) for k in range(new)]
        assert after == [flat(read(r)) for r in fresh]
        return
    unread = set(range(n)) - set(before)
    counts = collections.Counter(x for part in after for x in part)
    assert {x for x in counts if x in unread} == unread              # every unread row is read
    assert all(counts[x] == 1 for x in unread)                       # once
    if unread:
        assert max(map(len, after)) - min(map(len, after)) == 0      # all ranks read as many rows
        assert set(counts) - unread <= set(before)                   # pads repeat rows already read


def two_three_one(data, first, second):
    """``(before, middle, rest, states)``: the rows 2 ranks read in ``first`` batches each; those 3
    ranks restored from rank 0's state read in ``second`` batches each; one rank restored from the
    state of the third of them reads to the end of the epoch. ``states``: the two states restored."""
    two = [reader(data, 2, r) for r in range(2)]
    before = flat(flat(read(r, first) for r in two))
    states = [two[0].state()]
    three = [reader(data, 3, r) for r in range(3)]
    for r in three:
        r.load_state(states[0])
    middle = flat(flat(read(r, second) for r in three))
    states.append(three[2].state())
    one = reader(data, 1, 0)
    one.load_state(states[1])
    rest = flat(read(one))
    for r in two + three + [one]:
        r.close()
    return before, middle, rest, states


def test_a_saved_resumed_loader_resumes_again_on_yet_another_count():
    data = pipeline(30, 1, shuffle=True)
    before, middle, rest, (first, state) = two_three_one(data, 4, 2)     # 8 rows, 6 more, the rest
    assert json.loads(state["resume"]) == {"pass": 0, "start": 8, "shards": 2}
    assert sorted(before + middle + rest) == list(range(30))
    # the same shard restores the resumed pass as it was saved
    again = reader(data, 3, 2)
    again.load_state(state)
    whole = reader(data, 3, 2)
    whole.load_state(first)
    assert flat(read(again)) == flat(read(whole))[2:]   # shard 2's remainder after its 2 batches


def test_an_epoch_read_to_its_end_restores_as_the_next_epoch():
    data = pipeline(10, 2, shuffle=False, drop=True)
    old = [reader(data, 2, r) for r in range(2)]
    for r in old:
        read(r, 2)                                          # 2 of 5 rows each in batches of 2: all full ones
    new = reader(data, 1, 0)
    new.load_state(old[0].state())
    assert new.state()["epoch"] == 1 and new.state()["resume"] == "null"


def test_a_pipeline_with_a_shuffle_buffer_restores_only_into_its_own_shard():
    ds.config.set_seed(7)
    data = ds.NumpySlicesDataset({"id": np.arange(20)}, shuffle=False).shuffle(4).batch(2)
    old = reader(data, 2, 0)
    read(old, 1)
    with pytest.raises(ValueError, match="keeps a buffer of rows per rank"):
        reader(data, 3, 0).load_state(old.state())


@pytest.mark.parametrize("make, message", [
    (lambda: ds.NumpySlicesDataset({"id": np.arange(20)}, shuffle=False).filter(lambda x: x % 2 == 0),
     "FilterDataset changes which rows each rank reads"),
    (lambda: ds.NumpySlicesDataset({"id": np.arange(20)}, shuffle=False).batch(lambda info: 2),
     "batch size is a function"),
])
def test_pipelines_whose_rows_cannot_be_traced_back_are_refused_by_name(make, message):
    data = make()
    old = reader(data, 2, 0)
    read(old, 1)
    target = reader(data, 3, 1)
    with pytest.raises(ValueError, match=message):
        target.load_state(old.state())
    assert target.state()["iterator"] == "null"             # a refused state changes nothing


def test_version_1_and_2_states_still_load_and_bad_resume_fields_are_named():
    data = pipeline(10, 2, shuffle=False)
    r = reader(data, 1, 0)
    read(r, 1)
    state = r.state()
    v2 = {k: v for k, v in state.items() if k != "pipeline"} | {"version": 2}
    v1 = {k: v for k, v in v2.items() if k != "resume"} | {"version": 1}
    for old in (v1, v2):
        fresh = reader(data, 1, 0)
        fresh.load_state(old)
        assert flat(read(fresh)) == list(range(2, 10))
    with pytest.raises(ValueError, match=r"missing \['pipeline'\], unknown \[\]"):
        reader(data, 1, 0).load_state(v2 | {"version": 3})
    for bad in ('{"pass": 0, "start": 3}', '{"pass": -1, "start": 3, "shards": 1}', "[1]", "{"):
        with pytest.raises(ValueError, match=r"state\['resume'\] must be the JSON"):
            reader(data, 1, 0).load_state({**state, "resume": bad})
    with pytest.raises(ValueError, match=r"state\['shard_id'\] is 2, not below"):
        reader(data, 1, 0).load_state({**state, "num_shards": 2, "shard_id": 2})


def test_a_state_of_another_pipeline_is_refused_on_any_shard():
    old = reader(pipeline(20, 3, shuffle=False), 2, 0)
    read(old, 1)
    target = reader(pipeline(20, 4, shuffle=False), 3, 1)
    with pytest.raises(ValueError, match="the state comes from a different pipeline: its state"):
        target.load_state(old.state())
    # a version 2 state has no 'pipeline': the saving shard's plan is checked instead
    v2 = {k: v for k, v in old.state().items() if k != "pipeline"} | {"version": 2}
    with pytest.raises(ValueError, match="saved by shard 0 of 2 of another pipeline"):
        target.load_state(v2)
    # before the first batch, the state names its pipeline only through 'pipeline'
    fresh = reader(pipeline(20, 3, shuffle=False), 2, 0)
    with pytest.raises(ValueError, match="the state comes from a different pipeline: its state"):
        target.load_state(fresh.state())


# ---- MindDataset: its MindRecord order dealt out again --------------------------------------

MIND_SHUFFLES = [True, False, ds.Shuffle.GLOBAL, ds.Shuffle.FILES, ds.Shuffle.INFILE]


@pytest.fixture(scope="module")
def mind_files(tmp_path_factory):
    """``files(sizes)``: one MindRecord file per size (written once per module) whose int64 column
    ``id`` numbers the rows of all the files in order from 0; their paths."""
    folder, made = tmp_path_factory.mktemp("mind"), {}

    def files(sizes):
        if sizes not in made:
            paths, start = [], 0
            for j, size in enumerate(sizes):
                sub = folder / f"{'-'.join(map(str, sizes))}.{j}"
                sub.mkdir()
                paths += numbered_mindrecords(sub, [size], {"id": {"type": "int64"}},
                                              lambda i, start=start: {"id": start + i})
                start += size
            made[sizes] = paths
        return made[sizes]
    return files


def mind_pipeline(paths, shuffle, batch, **kw):
    ds.config.set_seed(11)
    return ds.MindDataset(paths, shuffle=shuffle, **kw).batch(batch)


def epoch_rows(data, shards, epoch):
    """Each shard's rows of epoch ``epoch`` read by a fresh job of ``shards`` ranks."""
    out = []
    for k in range(shards):
        r = reader(data, shards, k)
        r.set_epoch(epoch)
        out.append(flat(read(r)))
        r.close()
    return out


def resumed_rows(order, start, shards, shard):
    """What shard ``shard`` of ``shards`` reads of a pass resumed at position ``start`` of ``order``:
    positions ``start + shard + shards * j``; one past the end (a pad) repeats a row read before."""
    n = len(order)
    return [order[p] if p < n else order[(p - n) % start] for p in range(start + shard, start - (-(n - start) // shards) * shards, shards)]


@settings(max_examples=30, deadline=None)
@given(sizes=st.lists(st.integers(1, 13), min_size=1, max_size=2).map(tuple), old=st.integers(1, 4),
       new=st.integers(1, 4), batch=st.integers(1, 3), shuffle=st.sampled_from(range(len(MIND_SHUFFLES))),
       epoch=st.integers(0, 1), frac=st.floats(0, 1), saver=st.integers(0, 3))
@example(sizes=(9,), old=2, new=3, batch=2, shuffle=0, epoch=1, frac=0.5, saver=1)      # one file
@example(sizes=(5, 8), old=3, new=2, batch=1, shuffle=3, epoch=1, frac=0.4, saver=2)    # two, FILES
@example(sizes=(6, 4), old=1, new=4, batch=3, shuffle=4, epoch=0, frac=0.5, saver=0)    # one rank, INFILE
def test_a_minddataset_state_of_n_ranks_resumes_on_m_with_every_row_once(mind_files, sizes, old, new, batch,
                                                                        shuffle, epoch, frac, saver):
    data = mind_pipeline(mind_files(sizes), MIND_SHUFFLES[shuffle], batch)
    n = sum(sizes)
    whole = epoch_rows(data, old, epoch)                    # each old shard's rows of the epoch
    # the epoch's one order, as MindSpore deals it: position p is row p // old of shard p % old
    order = [whole[p % old][p // old] for p in range(n)]
    assert sorted(order) == list(range(n))
    steps = -(-len(whole[0]) // batch)
    s = int(frac * steps)
    readers = [reader(data, old, r) for r in range(old)]
    for r in readers:
        r.set_epoch(epoch)
    before = [flat(read(r, s)) if s else [] for r in readers]
    assert before == [w[:s * batch] for w in whole]
    start = min(old * min(s * batch, len(whole[0])), n)    # positions of the order read by all ranks
    state = readers[saver % old].state()
    for r in readers:
        r.close()
    after, then = [], []
    for k in range(new):
        r = reader(data, new, k)
        r.load_state(state)
        after.append(flat(read(r)))
        then.append(flat(read(r)))
        r.close()
    if start in (0, n):    # nothing read, or the epoch read to its end: the new ranks' own epochs
        rest = epoch + (start == n)
        assert after == epoch_rows(data, new, rest) and then == epoch_rows(data, new, rest + 1)
        return
    assert sorted(flat(before)) == sorted(order[:start])
    assert after == [resumed_rows(order, start, new, k) for k in range(new)]
    unread = collections.Counter(x for part in after for x in part if x not in set(order[:start]))
    assert sorted(unread) == sorted(order[start:]) and set(unread.values()) == {1}   # every row once
    assert then == epoch_rows(data, new, epoch + 1)          # the next epoch is the new job's own


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(1, 9), min_size=1, max_size=3).map(tuple), shards=st.integers(2, 5),
       pass_index=st.integers(0, 3), mode=st.sampled_from(["global", "adaptive", "false", "files", "infile"]))
def test_each_shard_of_a_mindrecord_plan_reads_its_strides_of_the_dealt_order(sizes, shards, pass_index, mode):
    n = sum(sizes)
    ctx = SampleContext(n, pass_index, 5)

    def plan(shard_id):
        if mode in ("files", "infile"):
            return MindFilePlan(mode, sizes, shards, shard_id, seed=9, by_block=False)
        return MindShufflePlan(shards, shard_id, seed=9, mode=mode, sizes=sizes, by_block=False)
    order = MindDealtOrder(plan(0)).indices(ctx)
    assert sorted(order.tolist()) == list(range(n))
    for k in range(shards):
        assert plan(k).indices(ctx).tolist() == order[shard_positions(n, shards, k, False)].tolist()


def test_the_dealt_order_is_refused_where_shards_do_not_take_strides_of_one_order():
    assert MindShufflePlan(2, 0, mode="adaptive").deals_one_order(ADAPTIVE_ROWS)
    assert not MindShufflePlan(2, 0, mode="adaptive").deals_one_order(ADAPTIVE_ROWS + 1)
    with pytest.raises(ValueError, match=r"^MindShufflePlan: mode 'partial' over 10 rows shuffles each shard's "
                                         r"rows on its own; its pass is not one order dealt out\.$"):
        MindDealtOrder(MindShufflePlan(2, 0, mode="partial", by_block=False)).indices(SampleContext(10, 0, 0))
    with pytest.raises(ValueError, match=r"^MindDealtOrder: shards read contiguous blocks, not strides"):
        MindDealtOrder(MindFilePlan("files", (4, 6), 2, 0, by_block=True)).indices(SampleContext(10, 0, 0))


def test_a_minddataset_of_two_files_two_ranks_to_three_pinned(mind_files):
    # Literal ids guard determinism (seed 11, 13 rows in files of 7 and 6). `before`: the first two
    # batches of each shard as MindSpore 2.10 reads them (the oracle's whole shards were, for True,
    # [8, 6, 7, 12, 5, 10, 3] and [4, 9, 2, 11, 1, 0, 8]); `after`: positions 8..12 of the order those
    # shards interleave, dealt over 3 ranks, the last one padded with position 0.
    for shuffle, before, after in [
            (True, [[8, 6, 7, 12], [4, 9, 2, 11]], [[5, 0], [1, 3], [10, 8]]),
            (ds.Shuffle.FILES, [[7, 9, 11, 0], [8, 10, 12, 1]], [[2, 5], [3, 6], [4, 7]]),
            (ds.Shuffle.INFILE, [[5, 6, 0, 3], [4, 1, 2, 11]], [[9, 8], [12, 10], [7, 5]])]:
        data = mind_pipeline(mind_files((7, 6)), shuffle, 2)
        two = [reader(data, 2, r) for r in range(2)]
        assert [flat(read(r, 2)) for r in two] == before
        three = [reader(data, 3, r) for r in range(3)]
        for r in three:
            r.load_state(two[1].state())
        assert [flat(read(r)) for r in three] == after
        assert json.loads(three[0].state()["resume"]) == {"pass": 0, "start": 8, "shards": 2}
        for r in two + three:
            r.close()


def test_a_resumed_minddataset_loader_resumes_again_and_padded_rows_count_once(mind_files):
    data = mind_pipeline(mind_files((7, 6)), ds.Shuffle.GLOBAL, 1, columns_list=["id"],
                         padded_sample={"id": -1}, num_padded=5)     # 18 rows: 2, 3 and 1 ranks divide them
    before, middle, rest, _ = two_three_one(data, 2, 3)                # 4 rows, 9 more, the last 5
    assert (len(before), len(middle), len(rest)) == (4, 9, 5)
    assert sorted(before + middle + rest) == [-1] * 5 + list(range(13))


@pytest.mark.parametrize("kw, old, message", [
    ({"num_samples": 5}, 2, r"MindDataset chooses its rows through num_samples=5, so a pass is not every row once"),
    ({"shuffle": ds.Shuffle.PARTIAL}, 2, r"MindDataset reads with Shuffle.PARTIAL .*here 13\), which shuffles the "
                                         r"rows of each shard on its own"),
])
def test_minddataset_row_choices_that_cannot_be_dealt_again_are_refused_by_name(mind_files, kw, old, message):
    data = mind_pipeline(mind_files((7, 6)), kw.pop("shuffle", True), 2, **kw)
    saver = reader(data, old, 0)
    read(saver, 1)
    target = reader(data, 3, 1)
    with pytest.raises(ValueError, match=f"^test.load_state_dict: {message}"):
        target.load_state(saver.state())
    assert target.state()["iterator"] == "null"             # a refused state changes nothing
    saver.close()
    target.close()


def test_minddataset_partial_from_one_rank_and_blocks_only_on_as_many(mind_files, monkeypatch):
    data = mind_pipeline(mind_files((7, 6)), ds.Shuffle.PARTIAL, 2)
    one = reader(data, 1, 0)
    before = flat(read(one, 2))
    two = [reader(data, 2, r) for r in range(2)]
    for r in two:
        r.load_state(one.state())
    rest = [flat(read(r)) for r in two]
    whole = epoch_rows(data, 1, 0)[0]
    assert before == whole[:4] and rest == [whole[4::2], whole[5::2] + whole[:1]]   # 9 rows over 2: one pad
    monkeypatch.setenv(SHARD_BY_BLOCK_ENV, "true")
    data = mind_pipeline(mind_files((7, 6)), True, 2)
    saver = reader(data, 2, 0)
    read(saver, 1)
    with pytest.raises(ValueError, match=f"^test.load_state_dict: {SHARD_BY_BLOCK_ENV} is true, so each shard of "
                                         "MindDataset reads a contiguous block of the order"):
        reader(data, 3, 0).load_state(saver.state())
    same = reader(data, 2, 0)
    same.load_state(saver.state())
    assert flat(read(same)) == epoch_rows(data, 2, 0)[0][2:]
    for r in [one, saver, same] + two:
        r.close()


ELASTIC_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np, torch.distributed as dist, torch.distributed.checkpoint as dcp
    import headrace.dataset as ds
    from headrace.torch import Loader
    store, rank, world, ckpt, phase = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=world)
    ds.config.set_seed(3)
    loader = Loader(ds.NumpySlicesDataset({"x": np.arange(29)}, shuffle=True).batch(2))
    if phase == "save":
        it = iter(loader)
        got = [next(it)[0].tolist() for _ in range(3)]
        dcp.save({"data": loader}, checkpoint_id=ckpt)
        it.close()
    else:
        dcp.load({"data": loader}, checkpoint_id=ckpt)
        got = [b[0].tolist() for b in loader]
    gathered = [None] * world
    dist.all_gather_object(gathered, got)
    if rank == 0:
        print(json.dumps(gathered))
    loader.close()
    dist.destroy_process_group()
""")


def run_ranks(tmp_path, world, phase):
    script = tmp_path / "elastic.py"
    script.write_text(ELASTIC_SCRIPT)
    store = tmp_path / f"store-{phase}"
    env = {**os.environ, "PYTHONPATH": os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", "")}
    outs = run_together([[sys.executable, str(script), str(store), str(r), str(world), str(tmp_path / "ckpt"),
                          phase] for r in range(world)], env)
    return [flat(batches) for batches in json.loads(outs[0])]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_torch_distributed_checkpoint_of_two_ranks_resumes_on_three(tmp_path):
    pytest.importorskip("torch.distributed.checkpoint")
    before = run_ranks(tmp_path, 2, "save")        # 2 ranks x 3 batches of 2: 12 of 29 rows
    after = run_ranks(tmp_path, 3, "load")          # 17 left: 6, 6, 6 (one pad) on 3 ranks
    read_before = set(flat(before))
    assert len(read_before) == 12
    assert [len(a) for a in after] == [6, 6, 6]
    rest = flat(after)
    unread = set(range(29)) - read_before
    assert sorted(x for x in rest if x in unread) == sorted(unread)
    assert len([x for x in rest if x not in unread]) == 1 and set(rest) - unread <= read_before


def test_an_epoch_ending_at_interpreter_exit_starts_no_next_epoch(monkeypatch):
    # A reading thread (the JAX device thread) can finish an epoch while the interpreter exits;
    # starting the next epoch then failed inside the teardown ("Exception ignored ... generation").
    r = reader(pipeline(8, 4, False), 1, 0)
    assert read(r) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert r._res.feeder is not None  # the next epoch was started when this one ended
    r._res.close()
    monkeypatch.setattr(sys, "is_finalizing", lambda: True)
    r.prestart()
    assert r._res.feeder is None
    monkeypatch.setattr(sys, "is_finalizing", lambda: False)
    r.prestart()
    assert r._res.feeder is not None
    r._res.close()
