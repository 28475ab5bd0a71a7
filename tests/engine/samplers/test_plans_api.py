"""Public sampler classes: signatures, argument checks (exact messages), select_sampler's rules.

The messages are MindSpore 2.10's (tests/compat/test_samplers_compat.py compares them with it).
"""
import inspect

import numpy as np
import pytest

import headrace.dataset as ds
from headrace._engine.samplers import builtin as P
from headrace._util.errors import EarlyValueError
from headrace._util.types import SampleContext
from headrace.dataset import _sampler_args as A
from headrace.dataset import samplers as S
from tests.oracles.snippets import USER_SAMPLERS, local_functions


def ctx(n, k=0, seed=1):
    return SampleContext(n, k, seed)


def test_signatures_match_mindspore():
    sig = {name: str(inspect.signature(getattr(S, name))) for name in [
        "SequentialSampler", "RandomSampler", "DistributedSampler", "SubsetSampler", "SubsetRandomSampler",
        "WeightedRandomSampler", "PKSampler", "IterSampler", "Sampler", "BuiltinSampler"]}
    assert sig == {
        "SequentialSampler": "(start_index=None, num_samples=None)",
        "RandomSampler": "(replacement=False, num_samples=None, shuffle=<Shuffle.GLOBAL: 'global'>)",
        "DistributedSampler": "(num_shards, shard_id, shuffle=True, num_samples=None, offset=-1)",
        "SubsetSampler": "(indices, num_samples=None)",
        "SubsetRandomSampler": "(indices, num_samples=None)",
        "WeightedRandomSampler": "(weights, num_samples=None, replacement=True)",
        "PKSampler": "(num_val, num_class=None, shuffle=False, class_column='label', num_samples=None)",
        "IterSampler": "(sampler, num_samples=None)",
        "Sampler": "(num_samples=None)",
        "BuiltinSampler": "(num_samples=None)",
    }
    assert ds.Shuffle is S.Shuffle and ds.RandomSampler is S.RandomSampler


def test_shuffle_enum():
    assert [m.value for m in S.Shuffle] == ["false", "adaptive", "global", "partial", "files", "infile"]
    assert str(S.Shuffle.PARTIAL) == "Shuffle.PARTIAL" and f"{S.Shuffle.FILES}" == "Shuffle.FILES"
    assert S.Shuffle.GLOBAL == "global" and isinstance(S.Shuffle.GLOBAL, str)


CASES = [
    # (constructor, exception type, message)
    (lambda: S.SequentialSampler(1.0), TypeError, "start_index must be integer but was: 1.0."),
    (lambda: S.SequentialSampler(True), TypeError, "start_index must be integer but was: True."),
    (lambda: S.SequentialSampler(-1), EarlyValueError,
     "SequentialSampler: start_index_ must be greater than or equal to 0, but got: -1"),
    (lambda: S.SequentialSampler(0, -1), ValueError,
     "num_samples exceeds the boundary between 0 and 9223372036854775807(INT64_MAX)!"),
    (lambda: S.SequentialSampler(0, 2**63), ValueError,
     "num_samples exceeds the boundary between 0 and 9223372036854775807(INT64_MAX)!"),
    (lambda: S.SequentialSampler(0, 1.5), TypeError, "num_samples must be integer but was: 1.5."),
    (lambda: S.RandomSampler(1), TypeError, "replacement must be a boolean value but was: 1."),
    (lambda: S.RandomSampler(num_samples=-3), ValueError,
     "num_samples exceeds the boundary between 0 and 9223372036854775807(INT64_MAX)!"),
    (lambda: S.RandomSampler(shuffle=True), TypeError, "shuffle must be valid shuffle mode but was: True."),
    (lambda: S.RandomSampler(shuffle=S.Shuffle.FALSE), TypeError,
     "shuffle must be valid shuffle mode but was: Shuffle.FALSE."),
    (lambda: S.DistributedSampler(2.0, 0), TypeError, "num_shards must be integer but was: 2.0."),
    (lambda: S.DistributedSampler(2, "0"), TypeError, "shard_id must be integer but was: 0."),
    (lambda: S.DistributedSampler(2, 0, shuffle="x"), TypeError,
     "shuffle must be a boolean value or valid shuffle mode but was: x."),
    (lambda: S.DistributedSampler(2, 0, num_samples=1.0), TypeError, "num_samples must be integer but was: 1.0."),
    (lambda: S.DistributedSampler(2, 0, offset=1.0), TypeError, "offset must be integer but was: 1.0."),
    (lambda: S.DistributedSampler(0, 0).plan(), EarlyValueError, "DistributedSampler: num_shards must be greater than 0, but got: 0"),
    (lambda: S.DistributedSampler(2, -1).plan(), EarlyValueError, "DistributedSampler: shard_id must be in range [0, 2), but got: -1"),
    (lambda: S.DistributedSampler(2, 2).plan(), EarlyValueError, "DistributedSampler: shard_id must be in range [0, 2), but got: 2"),
    (lambda: S.DistributedSampler(2, 0, offset=3), EarlyValueError,
     "DistributedSampler: offset must be no more than num_shards(2), but got: 3"),
    (lambda: S.DistributedSampler(2, 0, offset=-5), ValueError,
     "DistributedSampler: offset must be -1 or in [0, num_shards(2)], but got: -5"),
    (lambda: S.SubsetSampler("abc"), TypeError, "Unsupported sampler object of type (<class 'str'>)"),
    (lambda: S.SubsetSampler(None), TypeError, "Unsupported sampler object of type (<class 'NoneType'>)"),
    (lambda: S.SubsetSampler([1, 2.0]), TypeError,
     "SubsetSampler: Type of indices element must be int, but got list[1]: 2.0, type: <class 'float'>."),
    (lambda: S.SubsetSampler([1, True]), TypeError,
     "SubsetSampler: Type of indices element must be int, but got list[1]: True, type: <class 'bool'>."),
    (lambda: S.SubsetSampler([1], -1), ValueError,
     "num_samples exceeds the boundary between 0 and 9223372036854775807(INT64_MAX)!"),
    (lambda: S.SubsetRandomSampler([1], "2"), TypeError, "num_samples must be integer but was: 2."),
    (lambda: S.WeightedRandomSampler(["a"]), TypeError,
     "type of weights element must be number, but got w[0]: a, type: <class 'str'>."),
    (lambda: S.WeightedRandomSampler([1, True]), TypeError,
     "type of weights element must be number, but got w[1]: True, type: <class 'bool'>."),
    (lambda: S.WeightedRandomSampler([1, 2], replacement=1), TypeError, "replacement must be a boolean value but was: 1."),
    (lambda: S.WeightedRandomSampler([]), EarlyValueError, "WeightedRandomSampler: weights vector must not be empty"),
    (lambda: S.WeightedRandomSampler([0, 0]), EarlyValueError,
     "WeightedRandomSampler: elements of weights vector must not be all zero"),
    (lambda: S.WeightedRandomSampler([1, -1]), EarlyValueError,
     "WeightedRandomSampler: weights vector must not contain negative numbers, got: weights[1] = -1.000000"),
    (lambda: S.WeightedRandomSampler([1, float("inf")]), EarlyValueError,
     "WeightedRandomSampler: weights vector must not contain inf or nan, got: weights[1] = inf"),
    (lambda: S.WeightedRandomSampler([1, 2], num_samples=5, replacement=False), ValueError,
     "Invalid parameter, without replacement, weight size must be greater than or equal to num_samples, "
     "but got weight size: 2, num_samples: 5"),
    (lambda: S.PKSampler(1.0), TypeError, "num_val must be integer but was: 1.0."),
    (lambda: S.PKSampler(1, num_class=2), NotImplementedError, "Not supported to specify num_class for PKSampler."),
    (lambda: S.PKSampler(1, shuffle=1), TypeError, "shuffle must be a boolean value but was: 1."),
    (lambda: S.PKSampler(1, class_column=1), TypeError, "class_column must be a str value but was: 1."),
    (lambda: S.PKSampler(0), ValueError, "PKSampler: num_val must be greater than 0, but got: 0"),
    (lambda: S.PKSampler(1, num_samples=-1), ValueError,
     "num_samples exceeds the boundary between 0 and 9223372036854775807(INT64_MAX)!"),
    (lambda: S.IterSampler(5), TypeError, "sampler should be either iterable or from mindspore.dataset.samplers."),
    (lambda: S.IterSampler([1], num_samples=1.0), TypeError, "num_samples must be integer but was: 1.0."),
]


@pytest.mark.parametrize("make, exc, message", CASES)
def test_argument_checks(make, exc, message):
    with pytest.raises(exc) as e:
        make()
    assert type(e.value) is exc
    assert str(e.value) == message


def test_accepted_variants():
    assert S.SubsetSampler(3).indices == [3]
    assert S.SubsetSampler(np.array([3, 1])).indices == [3, 1]
    assert S.SubsetSampler(iter([5, 6, 7, 8]), 2).indices == [5, 6]
    assert S.SubsetSampler([5, 6, 7, 8], 2).indices == [5, 6]
    assert S.WeightedRandomSampler(2.0).weights == [2.0]
    assert S.DistributedSampler(2, 0, shuffle="global").shuffle is S.Shuffle.GLOBAL
    assert S.DistributedSampler(2, 0, shuffle=False).shuffle is S.Shuffle.FALSE
    assert S.RandomSampler(shuffle="files").shuffle is S.Shuffle.FILES
    assert S.SubsetSampler([]).plan().indices(ctx(5)).tolist() == []


def test_plans_of_each_sampler():
    assert S.SequentialSampler().plan() == P.SequentialPlan(0, 0)
    assert S.SequentialSampler(2, 3).plan() == P.SequentialPlan(2, 3)
    assert S.RandomSampler(True, 4).plan() == P.RandomPlan(True, 4)
    assert S.SubsetSampler([1, 2]).plan() == P.SubsetPlan((1, 2), 0, False)
    assert S.SubsetRandomSampler([1, 2]).plan() == P.SubsetPlan((1, 2), 0, True)
    assert S.WeightedRandomSampler([1, 2, 3], 2, False).plan() == P.WeightedRandomPlan((1.0, 2.0, 3.0), 2, False)
    assert S.PKSampler(2, shuffle=True, num_samples=5).plan() == P.PKPlan(2, True, 5)
    assert S.RandomSampler().parse() == S.RandomSampler().plan()


def test_distributed_seed_is_the_config_seed_when_made():
    assert S.DistributedSampler(2, 0).plan().seed == 5490  # 5489 (never set) + 1
    ds.config.set_seed(11)
    made = S.DistributedSampler(2, 0)
    ds.config.set_seed(99)
    assert made.plan() == P.DistributedPlan(2, 0, True, 0, -1, 12)
    assert made.plan() == made.plan()  # making the plan changes nothing
    assert S.DistributedSampler(3, 1, False, 2, 1).plan() == P.DistributedPlan(3, 1, False, 2, 1, 100)


def test_distributed_set_offset():
    s = S.DistributedSampler(3, 0, shuffle=False)
    assert s.set_offset(1) is s and s.offset == 1
    assert s.plan().indices(ctx(10)).tolist() == [2, 5, 8]
    with pytest.raises(EarlyValueError, match=r"offset must be no more than num_shards\(3\), but got: 4"):
        s.set_offset(4)


@pytest.mark.parametrize("make, mode", [
    (lambda: S.RandomSampler(shuffle=S.Shuffle.PARTIAL), "Shuffle.PARTIAL"),
    (lambda: S.RandomSampler(shuffle=S.Shuffle.INFILE), "Shuffle.INFILE"),
    (lambda: S.DistributedSampler(2, 0, shuffle=S.Shuffle.FILES), "Shuffle.FILES"),
    (lambda: S.DistributedSampler(2, 0, shuffle=S.Shuffle.ADAPTIVE), "Shuffle.ADAPTIVE"),
])
def test_file_shuffle_modes_are_refused_by_random_access_plans(make, mode):
    with pytest.raises(RuntimeError) as e:
        make().plan()
    assert str(e.value) == f"The shuffle mode: {mode} is not supported with current dataset."


def test_get_num_samples_table():
    s = S.SequentialSampler(num_samples=3)
    assert s.get_num_samples() == 3
    s.add_child(S.RandomSampler(num_samples=2))
    assert s.get_num_samples() == 2
    s = S.SequentialSampler()
    s.add_child(S.RandomSampler(num_samples=4))
    assert s.get_num_samples() == 4
    s = S.SequentialSampler(num_samples=5)
    s.add_child(S.RandomSampler())
    assert s.get_num_samples() == 5
    assert S.SequentialSampler().get_num_samples() is None
    assert S.SubsetSampler([1, 2, 3]).get_num_samples() == 3
    assert S.SubsetSampler([1, 2, 3], 2).get_num_samples() == 2


def test_is_shuffled_is_sharded():
    assert S.RandomSampler().is_shuffled() and not S.SequentialSampler().is_shuffled()
    assert S.DistributedSampler(2, 0).is_shuffled() and S.DistributedSampler(2, 0).is_sharded()
    assert not S.DistributedSampler(1, 0, shuffle=False).is_shuffled()
    assert not S.DistributedSampler(1, 0).is_sharded()
    assert S.SubsetRandomSampler([1]).is_shuffled() and not S.SubsetSampler([1]).is_shuffled()
    assert S.WeightedRandomSampler([1]).is_shuffled() and S.PKSampler(1, shuffle=True).is_shuffled()
    seq = S.SequentialSampler()
    seq.add_child(S.DistributedSampler(2, 1))
    assert seq.is_shuffled() and seq.is_sharded()
    assert seq.plan().is_shuffled() and seq.plan().is_sharded()
    with pytest.raises(NotImplementedError, match="Sampler must implement is_shuffled."):
        S.BuiltinSampler().is_shuffled()


def test_add_child_rules():
    s = S.SequentialSampler(start_index=0, num_samples=3)
    s.add_child(S.RandomSampler(num_samples=4))
    assert isinstance(s.get_child(), S.RandomSampler)
    assert s.parse_child() == P.RandomPlan(False, 4) and S.SequentialSampler().parse_child() is None
    assert isinstance(s.plan(), P.ChainedPlan)
    with pytest.raises(RuntimeError) as e:
        s.add_child(S.SequentialSampler())
    assert str(e.value) == "Cannot add child sampler, this sampler already has a child."
    with pytest.raises(RuntimeError) as e:
        S.SequentialSampler().add_child(S.RandomSampler(shuffle=S.Shuffle.PARTIAL))
    assert str(e.value) == ("When multiple samplers are used, ensure that the shuffle of the input sampler "
                            "must not be Shuffle.PARTIAL.")
    with pytest.raises(RuntimeError) as e:
        S.RandomSampler(shuffle=S.Shuffle.FILES).add_child(S.SequentialSampler())
    assert str(e.value) == ("When multiple samplers are used, ensure that the shuffle of the current sampler "
                            "must be Shuffle.FALSE or Shuffle.GLOBAL, but got: Shuffle.FILES.")
    with pytest.raises(TypeError, match="Input sampler is not an instance of a sampler."):
        S.SequentialSampler().add_child([1, 2])
    none_child = S.SequentialSampler()
    none_child.add_child(None)
    assert none_child.get_child() is None
    pk = S.PKSampler(1)
    pk.add_child(S.SequentialSampler())
    with pytest.raises(ValueError, match="PKSampler cannot sample from a child sampler"):
        pk.plan()


_USER = local_functions(USER_SAMPLERS)  # the user samplers that the compat test runs in MindSpore
Reverse, Counter, WithLen = _USER["Rev"], _USER["Cnt"], _USER["WithLen"]


def test_user_sampler():
    r = Reverse()
    assert r.dataset_size == 0 and r.num_samples is None
    assert r.get_num_samples() == 0  # iterates a copy with no rows yet, as MindSpore
    assert r.plan().num_samples(5) == 5
    assert r.plan().indices(ctx(5)).tolist() == [4, 3, 2, 1, 0]
    assert WithLen().num_samples == 4 and WithLen().plan().indices(ctx(10)).tolist() == [1, 2, 3, 4]
    c = Counter(num_samples=1)
    assert c.get_indices().tolist() == [1] and c.get_indices().tolist() == [2]
    assert c._get_batch_sizes() == [0] and c._get_batch_sizes() == [0] and c._get_batch_sizes() == []
    assert not r.is_shuffled() and not r.is_sharded()
    r.add_child(S.RandomSampler())
    assert r.is_shuffled() and isinstance(r.plan(), P.ChainedPlan)
    with pytest.raises(NotImplementedError):
        iter(ds.Sampler())
    ds.Sampler().reset()


def test_iter_sampler():
    it = S.IterSampler([3, 1, 2])
    assert it.num_samples == 3 and isinstance(it, ds.Sampler)
    assert it.plan().indices(ctx(5)).tolist() == [3, 1, 2]
    assert S.IterSampler(range(2, 5)).plan().num_samples(10) == 3
    assert S.IterSampler([4, 3, 2, 1], num_samples=2).plan().indices(ctx(5)).tolist() == [4, 3]
    gen = S.IterSampler(iter([3, 1]))
    assert gen.num_samples is None and gen.plan().indices(ctx(5)).tolist() == [3, 1]


# ---- select_sampler / resolve_sampler ----------------------------------------------------------

def resolved(*args):
    return A.resolve_sampler(*args)


def test_select_sampler_defaults():
    r = resolved(None, None, None, None, None)
    assert type(r) is S.RandomSampler and not r.replacement and r.num_samples is None
    assert type(resolved(None, True, None, None, None)) is S.RandomSampler
    r = resolved(5, None, None, None, None)
    assert type(r) is S.RandomSampler and r.replacement and r.num_samples == 5  # MindSpore draws with replacement
    r = resolved(5, False, None, None, None)
    assert type(r) is S.SequentialSampler and r.num_samples == 5
    r = resolved(2, None, None, 3, 1)
    assert type(r) is S.DistributedSampler and r.shuffle is S.Shuffle.GLOBAL and r.num_samples == 2
    r = resolved(None, False, None, 3, 1)
    assert type(r) is S.DistributedSampler and r.shuffle is S.Shuffle.FALSE
    r = resolved(None, S.Shuffle.GLOBAL, None, None, None)
    assert type(r) is S.RandomSampler
    assert A.select_sampler(None, False, None, None, None) == P.SequentialPlan()
    assert A.select_sampler(None, None, None, None, None) == P.RandomPlan()


def test_select_sampler_with_a_sampler():
    seq = S.SequentialSampler()
    assert resolved(None, None, seq, None, None) is seq
    for args, text in [((None, True), "num_samples: None, num_shards: None, shard_id: None, shuffle: True."),
                       ((None, False), "num_samples: None, num_shards: None, shard_id: None, shuffle: False."),
                       ((2, None), "num_samples: 2, num_shards: None, shard_id: None, shuffle: None.")]:
        with pytest.raises(ValueError) as e:
            resolved(args[0], args[1], seq, None, None)
        assert str(e.value) == "Conflicting arguments during sampler assignments. " + text
    with pytest.raises(ValueError) as e:
        resolved(None, None, Reverse(), 2, 0)
    assert str(e.value) == ("Conflicting arguments during sampler assignments. num_samples: None, num_shards: 2, "
                            "shard_id: 0, shuffle: None.")
    r = resolved(2, True, [4, 3, 2, 1], None, None)  # a list is a SubsetSampler; shuffle is ignored
    assert type(r) is S.SubsetSampler and r.indices == [4, 3]
    assert type(resolved(None, None, (1, 2), None, None)) is S.SubsetSampler
    assert type(resolved(None, None, np.array([1]), None, None)) is S.SubsetSampler
    assert resolved(None, None, 3, None, None).indices == [3]
    assert type(resolved(None, None, range(3), None, None)) is S.IterSampler
    with pytest.raises(TypeError) as e:
        resolved(None, None, "abc", None, None)
    assert str(e.value) == "Unsupported sampler object of type (<class 'str'>)"
    with pytest.raises(TypeError) as e:
        resolved(None, None, 2.5, None, None)
    assert str(e.value) == "Unsupported sampler object of type (<class 'float'>)"


def test_select_sampler_bad_shuffle():
    with pytest.raises(RuntimeError) as e:
        resolved(None, "sometimes", None, None, None)
    assert str(e.value) == "The input parameter shuffle: sometimes is not valid."
    with pytest.raises(RuntimeError) as e:
        A.select_sampler(None, S.Shuffle.PARTIAL, None, None, None)
    assert str(e.value) == "The shuffle mode: Shuffle.PARTIAL is not supported with current dataset."


@pytest.mark.parametrize("kwargs, exc, message", [
    (dict(sampler=1, shuffle=True), RuntimeError, "sampler and shuffle cannot be specified at the same time."),
    (dict(sampler=1, num_shards=2, shard_id=0), RuntimeError, "sampler and sharding cannot be specified at the same time."),
    (dict(sampler=1, num_samples=2), RuntimeError, "sampler and num_samples cannot be specified at the same time."),
    (dict(num_shards=2), RuntimeError, "num_shards is specified and currently requires shard_id as well."),
    (dict(shard_id=0), RuntimeError, "shard_id is specified but num_shards is not."),
    (dict(num_shards=0, shard_id=0), ValueError, "Input num_shards is not within the required interval of [1, 2147483647]."),
    (dict(num_shards=2, shard_id=2), ValueError, "Input shard_id is not within the required interval of [0, 1]."),
])
def test_check_sampler_shuffle_shard_options(kwargs, exc, message):
    with pytest.raises(exc) as e:
        A.check_sampler_shuffle_shard_options(**kwargs)
    assert str(e.value) == message
    A.check_sampler_shuffle_shard_options(num_shards=2, shard_id=1)
