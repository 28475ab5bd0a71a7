"""Engine index plans: exact orders, sizes, errors, and properties.

Literal orders guard determinism: they are MindSpore 2.10's orders under ``set_seed`` (the same
cases are compared against MindSpore itself in tests/compat/test_samplers_compat.py).
"""
import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from headrace._engine.samplers import builtin as S
from headrace._util.types import SampleContext


@dataclasses.dataclass(frozen=True)
class Ctx(SampleContext):
    """A context that also says whether the seed was fixed by the user."""

    seeded: bool = True


def passes(plan, n, seed, count, labels=None):
    return [plan.indices(SampleContext(n, k, seed, labels)).tolist() for k in range(count)]


LABELS = np.array([0, 0, 0, 1, 2, 2, 2, 2, 3, 3])  # classes of 10 rows (as ImageFolder numbers them)


# ---- sequential ------------------------------------------------------------------------------

def test_sequential_orders_and_sizes():
    assert passes(S.SequentialPlan(), 4, 0, 2) == [[0, 1, 2, 3]] * 2
    assert passes(S.SequentialPlan(3, 4), 10, 0, 1) == [[3, 4, 5, 6]]
    assert passes(S.SequentialPlan(8, 5), 10, 0, 1) == [[8, 9]]
    # Sizes: rows actually read (MindSpore reports -3 for start 8 / num_samples 5 / 10 rows).
    assert [S.SequentialPlan(*a).num_samples(10) for a in [(3, 4), (8, 5), (8, 0), (0, 3), (12, 0)]] == [4, 2, 2, 3, 0]
    assert S.SequentialPlan().indices(SampleContext(0, 0, 0)).tolist() == []


def test_sequential_start_past_the_end():
    with pytest.raises(RuntimeError) as e:
        S.SequentialPlan(12).indices(SampleContext(10, 0, 0))
    assert str(e.value) == ("Invalid parameter, start_index must be less than num_rows, but got "
                            "start_index: 12, num_rows: 10.")


def test_indices_are_int64_and_read_only():
    out = S.RandomPlan().indices(SampleContext(5, 0, 1))
    assert out.dtype == np.int64
    with pytest.raises(ValueError):
        out[0] = 3


# ---- random ----------------------------------------------------------------------------------

def test_random_literal_orders():
    # MindSpore: set_seed(3), RandomSampler, 10 rows, three epochs.
    assert passes(S.RandomPlan(), 10, 3, 3) == [
        [3, 1, 8, 5, 2, 6, 9, 7, 0, 4], [3, 7, 2, 8, 6, 5, 1, 4, 0, 9], [8, 0, 5, 2, 6, 1, 4, 7, 9, 3]]
    assert passes(S.RandomPlan(num_samples_limit=4), 10, 3, 3) == [[3, 1, 8, 5], [3, 7, 2, 8], [8, 0, 5, 2]]
    assert S.RandomPlan(num_samples_limit=40).num_samples(10) == 10


def test_random_with_replacement_literal():
    # MindSpore: set_seed(3), RandomSampler(replacement=True), 10 rows; pass k draws from mt19937(3 + k).
    assert passes(S.RandomPlan(True), 10, 3, 3) == [
        [5, 0, 7, 8, 2, 1, 5, 5, 8, 4], [9, 9, 5, 1, 9, 8, 7, 6, 6, 5], [2, 0, 8, 8, 2, 3, 9, 9, 4, 0]]
    assert passes(S.RandomPlan(True, 7), 100, 3, 2) == [[55, 7, 70, 83, 29, 12, 51], [96, 90, 54, 17, 97, 85, 71]]


def test_random_large_and_resumed_pass_equals_sequential_passes():
    # Pass 3 computed cold equals pass 3 reached pass by pass (the chain cache must not matter).
    n = 70001
    warm = [S.RandomPlan().indices(SampleContext(n, k, 11)) for k in range(4)]
    S._chains._entries.clear()
    cold = S.RandomPlan().indices(SampleContext(n, 3, 11))
    assert np.array_equal(cold, warm[3])
    assert np.array_equal(S.RandomPlan().indices(SampleContext(n, 1, 11)), warm[1])


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 300), seed=st.integers(0, 2**32 - 1), k=st.integers(0, 3))
def test_random_pass_is_a_permutation(n, seed, k):
    out = S.RandomPlan().indices(SampleContext(n, k, seed))
    assert sorted(out.tolist()) == list(range(n))


# ---- distributed -----------------------------------------------------------------------------

def test_distributed_unshuffled_pads_by_wrapping():
    shards = [passes(S.DistributedPlan(3, s, shuffle=False), 10, 0, 1)[0] for s in range(3)]
    assert shards == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]
    assert [passes(S.DistributedPlan(4, s, shuffle=False), 2, 0, 1)[0] for s in range(4)] == [[0], [1], [0], [1]]


def test_distributed_shuffled_literal():
    # MindSpore: set_seed(11) -> DistributedSampler(3, s) uses seed 12 for pass 0, 13 for pass 1.
    got = [passes(S.DistributedPlan(3, s, seed=12), 10, 999, 2) for s in range(3)]
    assert got == [[[7, 9, 6, 4], [1, 9, 6, 8]], [[3, 5, 1, 7], [2, 4, 0, 1]], [[8, 2, 0, 3], [3, 5, 7, 2]]]
    # Unseeded MindSpore uses get_seed() = 5489, plus one.
    got = [passes(S.DistributedPlan(3, s, seed=5490), 10, 0, 2) for s in range(3)]
    assert got == [[[7, 6, 3, 2], [0, 5, 6, 4]], [[8, 0, 4, 7], [9, 8, 2, 0]], [[5, 1, 9, 8], [3, 7, 1, 9]]]
    assert [passes(S.DistributedPlan(3, s, num_samples_limit=2, seed=12), 10, 0, 1)[0] for s in range(3)] == [
        [7, 9], [3, 5], [8, 2]]


def test_distributed_offset():
    got = [S.DistributedPlan(3, s, False, offset=1).indices(SampleContext(10, 0, 0)).tolist() for s in range(3)]
    assert got == [[2, 5, 8], [0, 3, 6, 9], [1, 4, 7]]
    assert [S.DistributedPlan(3, s, False, offset=1).num_samples(10) for s in range(3)] == [3, 4, 3]
    got = [S.DistributedPlan(4, s, False, offset=3).indices(SampleContext(10, 0, 0)).tolist() for s in range(4)]
    assert got == [[1, 5, 9], [2, 6], [3, 7], [0, 4, 8]]
    # An empty shard yields row 0 (and reports one row).
    plan = S.DistributedPlan(4, 0, False, offset=3)
    assert plan.indices(SampleContext(1, 0, 0)).tolist() == [0]
    assert plan.num_samples(1) == 1


def test_distributed_sizes():
    assert [S.DistributedPlan(4, s).num_samples(10) for s in range(4)] == [3, 3, 3, 3]
    assert S.DistributedPlan(3, 0, num_samples_limit=2).num_samples(10) == 2
    assert S.DistributedPlan(3, 0, num_samples_limit=2).rows_for_parent(SampleContext(10, 0, 0)) == 2
    assert S.DistributedPlan(3, 0).rows_for_parent(SampleContext(10, 0, 0)) == 10
    assert S.DistributedPlan(2, 0).indices(SampleContext(0, 0, 0)).tolist() == []


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 200), k=st.integers(1, 9), shuffle=st.booleans(), seed=st.integers(0, 2**32 - 1),
       p=st.integers(0, 2))
def test_distributed_shards_partition_and_pad(n, k, shuffle, seed, p):
    shards = [S.DistributedPlan(k, s, shuffle, seed=seed).indices(SampleContext(n, p, 0)) for s in range(k)]
    size = -(-n // k)
    assert all(len(s) == size for s in shards)
    # Interleaving the shards gives the (permuted) rows in order, wrapped to a multiple of k.
    interleaved = np.stack(shards, axis=1).reshape(-1)
    order = S.RandomPlan().indices(SampleContext(n, p, seed)) if shuffle else np.arange(n)
    assert interleaved.tolist() == order[np.arange(size * k) % n].tolist()
    assert set(interleaved.tolist()) == set(range(n))


# ---- subset ----------------------------------------------------------------------------------

def test_subset_orders_and_bounds():
    assert passes(S.SubsetPlan((3, 5, 7, 9)), 20, 0, 2) == [[3, 5, 7, 9]] * 2
    assert S.SubsetPlan((3, 5, 7, 9), 3).num_samples(20) == 3
    assert S.SubsetPlan((0,) * 7).num_samples(5) == 7  # what a pass yields (MindSpore says 5, then fails)
    assert S.SubsetPlan(()).indices(SampleContext(5, 0, 0)).tolist() == []
    for bad in [(3, 7), (3, -1)]:
        with pytest.raises(RuntimeError) as e:
            S.SubsetPlan(bad).indices(SampleContext(5, 0, 0))
        assert str(e.value) == f"Sample ID ({bad[1]}) is out of bound, expected range [0, 4]"


def test_subset_random_reapplies_the_same_shuffle():
    # MindSpore: set_seed(11), SubsetRandomSampler([3, 5, 7, 9, 11, 13, 2]), 20 rows.
    plan = S.SubsetPlan((3, 5, 7, 9, 11, 13, 2), shuffle=True)
    assert passes(plan, 20, 11, 3) == [
        [2, 11, 3, 5, 7, 9, 13], [13, 7, 2, 11, 3, 5, 9], [9, 3, 13, 7, 2, 11, 5]]
    assert passes(S.SubsetPlan((3, 5, 7), shuffle=True), 20, 11, 3) == [[5, 7, 3], [7, 3, 5], [3, 5, 7]]


@settings(max_examples=40, deadline=None)
@given(ids=st.lists(st.integers(0, 49), max_size=60), seed=st.integers(0, 2**32 - 1), k=st.integers(0, 3),
       seeded=st.booleans())
def test_subset_random_pass_is_a_permutation_of_the_ids(ids, seed, k, seeded):
    out = S.SubsetPlan(tuple(ids), shuffle=True).indices(Ctx(50, k, seed, None, seeded)).tolist()
    assert sorted(out) == sorted(ids)


def test_subset_random_unseeded_gets_fresh_passes():
    plan = S.SubsetPlan(tuple(range(50)), shuffle=True)
    seeded = [plan.indices(Ctx(50, k, 4, None, True)).tolist() for k in range(3)]
    fresh = [plan.indices(Ctx(50, k, 4, None, False)).tolist() for k in range(3)]
    assert seeded == passes(plan, 50, 4, 3)
    assert fresh[0] != seeded[0] and len({tuple(p) for p in fresh}) == 3
    assert all(sorted(p) == list(range(50)) for p in fresh)
    assert fresh == [plan.indices(Ctx(50, k, 4, None, False)).tolist() for k in range(3)]  # still pure


# ---- weighted --------------------------------------------------------------------------------

W = (0.1, 0.5, 0.2, 0.0, 1.0, 3.0)


def test_weighted_literals():
    # MindSpore: set_seed(11); the same draws every epoch.
    assert passes(S.WeightedRandomPlan(W), 6, 11, 2) == [[1, 5, 4, 5, 1, 4]] * 2
    assert passes(S.WeightedRandomPlan(W, replacement=False), 6, 11, 2) == [[5, 4, 0, 2, 1, 3]] * 2
    assert passes(S.WeightedRandomPlan(W, 3, False), 6, 11, 1) == [[5, 4, 0]]
    assert passes(S.WeightedRandomPlan((1.0, 2.0, 3.0)), 10, 11, 1) == [[0, 2, 1, 2, 0, 1, 2, 2, 0, 2]]
    assert S.WeightedRandomPlan(W, 12).num_samples(6) == 6


def test_weighted_unseeded_passes_differ():
    plan = S.WeightedRandomPlan(tuple(float(i % 7 + 1) for i in range(40)))
    fresh = [plan.indices(Ctx(40, k, 9, None, False)).tolist() for k in range(2)]
    assert fresh[0] != fresh[1]
    assert plan.indices(Ctx(40, 0, 9, None, True)).tolist() == plan.indices(Ctx(40, 1, 9, None, True)).tolist()


def test_weighted_errors():
    with pytest.raises(RuntimeError) as e:
        S.WeightedRandomPlan((1.0, 2.0, 3.0, 4.0, 5.0)).indices(SampleContext(3, 0, 0))
    assert str(e.value) == ("Invalid parameter, size of sample weights must be less than or equal to num of data, "
                            "otherwise might cause generated id out of bound or other errors, but got weight size: 5, "
                            "num of data: 3")
    with pytest.raises(RuntimeError) as e:
        S.WeightedRandomPlan((1.0, 2.0), replacement=False).indices(SampleContext(5, 0, 0))
    assert str(e.value) == ("Invalid parameter, without replacement, weight size must be greater than or equal to "
                            "num_samples, but got weight size: 2, num_samples: 5")


@settings(max_examples=30, deadline=None)
@given(w=st.lists(st.one_of(st.just(0.0), st.floats(0.01, 10)), min_size=1, max_size=30).filter(lambda w: sum(w) > 0),
       seed=st.integers(0, 2**32 - 1))
def test_weighted_never_draws_zero_weights(w, seed):
    out = S.WeightedRandomPlan(tuple(w)).indices(SampleContext(len(w), 0, seed)).tolist()
    assert len(out) == len(w)
    assert all(w[i] > 0 for i in out)
    no_repl = S.WeightedRandomPlan(tuple(w), replacement=False).indices(SampleContext(len(w), 0, seed)).tolist()
    assert sorted(no_repl) == list(range(len(w)))
    positive = [i for i in no_repl if w[i] > 0]
    assert no_repl[:len(positive)] == positive  # zero weights come last


# ---- PK --------------------------------------------------------------------------------------

def test_pk_literals():
    labels = lambda: LABELS  # noqa: E731
    # MindSpore: set_seed(5), ImageFolder with classes of 3, 1, 4 and 2 files.
    assert passes(S.PKPlan(2), 10, 5, 3, labels) == [
        [0, 0, 3, 3, 4, 5, 9, 9], [2, 2, 3, 3, 7, 4, 8, 8], [0, 0, 3, 3, 5, 7, 9, 8]]
    assert passes(S.PKPlan(2, True), 10, 5, 3, labels) == [
        [9, 9, 0, 1, 3, 3, 5, 4], [9, 9, 0, 0, 3, 3, 4, 5], [8, 8, 2, 0, 3, 3, 6, 5]]
    assert passes(S.PKPlan(3, num_samples_limit=5), 10, 5, 2, labels) == [[0, 0, 2, 3, 3], [2, 2, 0, 3, 3]]
    assert S.PKPlan(2).num_samples(10, labels) == 8
    assert S.PKPlan(3, num_samples_limit=5).num_samples(10, labels) == 5
    assert S.PKPlan(5, num_samples_limit=100).num_samples(10, labels) == 20
    assert S.PKPlan(2).num_samples(10) == -1  # unknown without labels


def test_pk_needs_labels():
    with pytest.raises(ValueError, match="PKSampler needs the class of every row"):
        S.PKPlan(1).indices(SampleContext(3, 0, 0))


@settings(max_examples=30, deadline=None)
@given(labels=st.lists(st.integers(-3, 5), min_size=1, max_size=40), k=st.integers(1, 4),
       seed=st.integers(0, 2**32 - 1), shuffle=st.booleans())
def test_pk_draws_k_of_each_class(labels, k, seed, shuffle):
    arr = np.array(labels)
    out = S.PKPlan(k, shuffle).indices(SampleContext(len(arr), 0, seed, lambda: arr)).tolist()
    classes = [int(arr[i]) for i in out]
    assert len(out) == k * len(set(labels))
    blocks = [classes[i:i + k] for i in range(0, len(classes), k)]
    assert all(len(set(b)) == 1 for b in blocks)
    firsts = [b[0] for b in blocks]
    assert sorted(firsts) == sorted(set(labels))
    if not shuffle:
        assert firsts == sorted(set(labels))


# ---- chains ----------------------------------------------------------------------------------

def test_chains_literal():
    # MindSpore, set_seed(5), 10 rows.
    assert passes(S.chain([S.SequentialPlan(1, 5), S.RandomPlan()]), 10, 5, 1) == [[8, 5, 2, 4, 6]]
    assert passes(S.chain([S.RandomPlan(num_samples_limit=4), S.RandomPlan()]), 10, 5, 3) == [
        [2, 9, 6, 5], [0, 9, 2, 3], [2, 1, 7, 0]]
    assert passes(S.chain([S.DistributedPlan(2, 1, seed=6), S.RandomPlan(num_samples_limit=7)]), 10, 5, 3) == [
        [6, 4, 8, 3], [3, 5, 0, 8], [5, 7, 9, 0]]
    assert passes(S.chain([S.SubsetPlan((4, 0, 2)), S.SequentialPlan(5)]), 10, 5, 1) == [[9, 5, 7]]
    assert passes(S.chain([S.SequentialPlan(1, 2), S.SubsetPlan((9, 8, 7, 6))]), 10, 5, 1) == [[8, 7]]
    assert passes(S.chain([S.WeightedRandomPlan((1.0, 1.0, 5.0)), S.SequentialPlan(4)]), 10, 5, 1) == [
        [4, 6, 6, 6, 4, 6]]
    assert passes(S.chain([S.SequentialPlan(1), S.SequentialPlan(2), S.SequentialPlan(3)]), 10, 5, 1) == [
        [6, 7, 8, 9]]
    assert passes(S.chain([S.SequentialPlan(0, 4), S.RandomPlan(True)]), 10, 5, 3) == [
        [2, 0, 8, 8], [8, 9, 3, 2], [0, 2, 7, 3]]
    assert passes(S.chain([S.RandomPlan(), S.PKPlan(2)]), 10, 5, 2, lambda: LABELS) == [
        [3, 0, 5, 3, 4, 9, 9, 0], [3, 8, 4, 2, 2, 3, 7, 8]]


def test_chain_sizes():
    assert S.chain([S.SequentialPlan(1, 5), S.RandomPlan()]).num_samples(10) == 5
    assert S.chain([S.RandomPlan(), S.DistributedPlan(3, 1, False)]).num_samples(10) == 4
    assert S.chain([S.DistributedPlan(2, 1), S.RandomPlan(num_samples_limit=7)]).num_samples(10) == 4
    assert S.chain([S.SubsetPlan((4, 0, 2)), S.SequentialPlan(5)]).num_samples(10) == 3
    assert S.chain([S.WeightedRandomPlan((1.0, 1.0, 5.0)), S.SequentialPlan(4)]).num_samples(10) == 6
    assert S.chain([S.RandomPlan(), S.PKPlan(2)]).num_samples(10, lambda: LABELS) == 8
    assert S.chain([S.RandomPlan(), S.PKPlan(2)]).num_samples(10) == -1
    nested = S.chain([S.SequentialPlan(1), S.SequentialPlan(2), S.SequentialPlan(3)])
    assert nested.rows_for_parent(SampleContext(10, 0, 0)) == 4


def test_chain_parent_past_child_output():
    # A distributed child tells its parent about all rows but yields only its shard (as MindSpore).
    plan = S.chain([S.SequentialPlan(), S.DistributedPlan(3, 1, False)])
    with pytest.raises(RuntimeError) as e:
        plan.indices(SampleContext(10, 0, 0))
    assert str(e.value) == "Not a valid index"
    assert "position 4 of its child sampler's output, which has 4 ids" in e.value.__notes__[0]
    ok = S.chain([S.SubsetPlan((0, 1)), S.DistributedPlan(3, 1, False)])
    assert ok.indices(SampleContext(10, 0, 0)).tolist() == [1, 4]


def test_pk_cannot_be_a_parent():
    with pytest.raises(ValueError, match="PKSampler cannot sample from a child sampler"):
        S.ChainedPlan(S.PKPlan(1), S.SequentialPlan())


def test_is_shuffled_and_is_sharded():
    assert not S.SequentialPlan().is_shuffled() and S.RandomPlan().is_shuffled()
    assert S.DistributedPlan(2, 0).is_sharded() and not S.DistributedPlan(1, 0).is_sharded()
    assert not S.DistributedPlan(2, 0, shuffle=False).is_shuffled()
    assert S.chain([S.SequentialPlan(), S.RandomPlan()]).is_shuffled()
    assert not S.chain([S.SubsetPlan((0,)), S.RandomPlan()]).is_shuffled()
    assert S.chain([S.RandomPlan(), S.DistributedPlan(2, 0, False)]).is_sharded()
    assert S.chain([S.SequentialPlan(), S.SequentialPlan()]) == S.chain([S.SequentialPlan(), S.SequentialPlan()])
    assert S.RandomPlan().pure and S.chain([S.SequentialPlan(), S.RandomPlan()]).pure


# ---- user samplers ---------------------------------------------------------------------------

class Counting:
    """A stateful user sampler: each pass yields [k, k + 1, resets]."""

    def __init__(self, num_samples=None):
        self.num_samples = num_samples
        self.k = 0
        self.resets = 0
        self.dataset_size = 0

    def _handshake(self, n):
        self.dataset_size = n

    def reset(self):
        self.resets += 1

    def __iter__(self):
        self.k += 1
        return iter([self.k, self.k + 1, self.resets])


def test_user_plan_passes_reset_between_passes():
    plan = S.UserPlan(Counting())
    assert not plan.pure
    # MindSpore: [1, 2, 0], [2, 3, 1], [3, 4, 2] -- reset() between passes, not before the first.
    assert passes(plan, 10, 0, 3) == [[1, 2, 0], [2, 3, 1], [3, 4, 2]]
    assert plan.indices(SampleContext(10, 1, 0)).tolist() == [2, 3, 1]  # a new run replays from a copy
    assert plan.indices(SampleContext(10, 1, 0)).tolist() == [2, 3, 1]  # asking twice does not advance
    assert passes(S.UserPlan(Counting(2)), 10, 0, 2) == [[1, 2], [2, 3]]
    assert plan.sampler.k == 0  # the user's object is not touched


def test_user_plan_sizes_and_batches():
    class Reverse(Counting):
        def __iter__(self):
            return iter(range(self.dataset_size - 1, -1, -1))

    assert S.UserPlan(Reverse()).num_samples(5) == 5
    assert S.UserPlan(Counting(12)).num_samples(5) == 12  # not capped (MindSpore reads past the end)
    assert S.UserPlan(Counting(12)).rows_for_parent(SampleContext(5, 0, 0)) == 12  # its own count

    class Batches(Counting):
        def __iter__(self):
            return iter([[0, 1], 2, [4, 3]])

    plan = S.UserPlan(Batches())
    ctx = SampleContext(5, 0, 0)
    assert plan.indices(ctx).tolist() == [0, 1, 2, 4, 3]
    assert plan.batch_sizes(ctx) == [2, 0, 2]
    assert S.chain([S.UserPlan(Reverse()), S.SequentialPlan(5)]).indices(SampleContext(10, 0, 0)).tolist() == [
        9, 8, 7, 6, 5]


@pytest.mark.parametrize("items, message", [
    ([1, 2.0], "Python sampler should return index of type integer, but got: float64"),
    ([], "Python sampler should return index of type integer, but got: float64"),
    ([1, "a"], "Python sampler should return index of type integer, but got: <U21"),
    ([[1, 2], [3]], "Fetched indices can not be converted to a valid ndarray."),
])
def test_user_plan_bad_indices(items, message):
    class Bad(Counting):
        def __iter__(self):
            return iter(items)

    if items and isinstance(items[0], list):
        # Lists are flattened, so only unflattenable items fail; nested ragged lists do.
        class Bad(Counting):  # noqa: F811
            def __iter__(self):
                return iter([[1, [2, 3]]])
    with pytest.raises(RuntimeError) as e:
        S.UserPlan(Bad()).indices(SampleContext(5, 0, 0))
    assert str(e.value) == message
