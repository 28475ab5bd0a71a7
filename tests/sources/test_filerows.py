"""Index plans of the file-by-file sources (TFRecord, CSV, TextFile): properties and pinned orders."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from headrace._util.types import SampleContext
from headrace._engine.samplers.files import FileRowsPlan
from headrace._util.mtshuffle import buffer_shuffle
from headrace.dataset.samplers import shuffle_mode
from headrace._util.mtshuffle import MT19937_64
import headrace.dataset as ds


def passes(plan, total, n, seed):
    return [plan.indices(SampleContext(total, k, seed)).tolist() for k in range(n)]


@settings(max_examples=60, deadline=None)
@given(counts=st.lists(st.integers(0, 7), min_size=1, max_size=5), mode=st.sampled_from(["false", "files", "global"]),
       shards=st.integers(1, 4), seed=st.integers(0, 2**32 - 1), limit=st.one_of(st.none(), st.integers(1, 12)))
def test_row_shards_cover_the_rows(counts, mode, shards, seed, limit):
    total = sum(counts)
    arr = np.array(counts)
    per = math.ceil(total / shards) if total else 0
    union = set()
    for sid in range(shards):
        plan = FileRowsPlan(lambda: arr, mode, shards, sid, limit, equal_rows=True)
        for rows in passes(plan, total, 2, seed):
            want = min(per, limit) if limit else per
            assert len(rows) == want == plan.num_samples(total)
            assert all(0 <= r < total for r in rows)
            if not limit:
                union |= set(rows)
            if mode == "false":
                assert rows == passes(plan, total, 1, seed)[0]
    if not limit:
        assert union == set(range(total))


@settings(max_examples=60, deadline=None)
@given(counts=st.lists(st.integers(0, 6), min_size=2, max_size=6), mode=st.sampled_from(["false", "files", "global"]),
       seed=st.integers(0, 1000))
def test_file_shards_partition_each_pass(counts, mode, seed):
    arr = np.array(counts)
    shards = 2
    for k in range(3):
        got = [FileRowsPlan(lambda: arr, mode, shards, s, None, equal_rows=False).indices(
            SampleContext(sum(counts), k, seed)).tolist() for s in range(shards)]
        assert sorted(got[0] + got[1]) == list(range(sum(counts)))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 60), size=st.integers(1, 70), seed=st.integers(0, 2**64 - 1))
def test_buffer_shuffle_is_a_permutation(n, size, seed):
    out = buffer_shuffle(list(range(n)), size, MT19937_64(seed))
    assert sorted(out) == list(range(n))
    if size == 1:
        assert out == list(range(n))


def test_pinned_orders():
    # MindSpore 2.10's orders for files of 4, 2 and 3 rows (one reader), seed 1; they guard determinism
    counts = np.array([4, 2, 3])
    plan = FileRowsPlan(lambda: counts, "global", None, None, None)
    assert passes(plan, 9, 3, 1) == [[3, 6, 2, 4, 7, 5, 0, 1, 8], [4, 0, 1, 5, 2, 7, 3, 6, 8],
                                      [8, 4, 5, 6, 1, 2, 0, 7, 3]]
    plan = FileRowsPlan(lambda: counts, "files", 2, 1, None)
    assert passes(plan, 9, 2, 1) == [[3, 6, 7, 8, 4], [5, 6, 7, 8, 0]]
    assert plan.is_shuffled() and plan.is_sharded()
    assert not FileRowsPlan(lambda: counts, "false", 1, 0, None).is_sharded()


@pytest.mark.parametrize("value, mode", [(None, "global"), (True, "global"), (False, "false"),
                                         (ds.Shuffle.GLOBAL, "global"), (ds.Shuffle.FILES, "files"),
                                         (ds.Shuffle.INFILE, "false"), (ds.Shuffle.PARTIAL, "false"),
                                         (ds.Shuffle.ADAPTIVE, "false"), (ds.Shuffle.FALSE, "false")])
def test_shuffle_modes(value, mode):
    assert shuffle_mode(value) == mode


def test_shuffle_mode_rejects_others():
    with pytest.raises(TypeError, match="shuffle must be of boolean or enum of 'Shuffle' values"):
        shuffle_mode("global")
