"""Resume-at-any-step equals the uninterrupted run, for every op; worker count never changes output."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import headrace.dataset as ds
from headrace._util.rng import sample_rng
from tests.helpers import assert_resume_equivalence, rows


def src(n=7):
    return ds.NumpySlicesDataset({"x": list(range(n)), "y": [i * 10 for i in range(n)]}, shuffle=False)


def noisy(x):
    return x * 1000 + sample_rng().integers(0, 1000)


PIPELINES = {
    "source": lambda: src(),
    "shuffled_source": lambda: ds.NumpySlicesDataset(list(range(9))),
    "map": lambda: src().map(lambda x: x + 1, input_columns="x"),
    "random_map": lambda: src().map(noisy, input_columns="x"),
    "map_threads": lambda: src().map(noisy, input_columns="x", num_parallel_workers=2),
    "filter": lambda: src().filter(lambda x, y: x % 2 == 0),
    "batch": lambda: src().batch(3),
    "batch_drop": lambda: src().batch(3, drop_remainder=True),
    "batch_callable": lambda: src().batch(lambda info: info.get_batch_num() + 1),
    "per_batch_map": lambda: src().batch(2, per_batch_map=lambda x, y, info: (x, y), input_columns=["x", "y"]),
    "padded_batch": lambda: ds.GeneratorDataset(lambda: (np.arange(n) for n in (1, 2, 3)), ["v"]).padded_batch(2, pad_info={}),
    "bucket": lambda: ds.GeneratorDataset(lambda: (np.arange(n) for n in (1, 3, 2, 4)), ["v"]).bucket_batch_by_length(
        ["v"], [3], [2, 2], pad_info={"v": None}),
    "shuffle": lambda: src().shuffle(3),
    "repeat": lambda: src(3).repeat(3),
    "shuffle_under_repeat": lambda: src(4).shuffle(2).repeat(3),
    "take_skip": lambda: src().skip(2).take(3),
    "zip": lambda: ds.zip((src(), src(5).rename(["x", "y"], ["p", "q"]))),
    "concat": lambda: src(3) + src(2),
    "project_rename": lambda: src().project(["y"]).rename("y", "z"),
    "flat_map": lambda: ds.NumpySlicesDataset([[1, 2], [3, 4, 5]], shuffle=False).flat_map(
        lambda v: ds.NumpySlicesDataset(v, shuffle=False)),
    "generator": lambda: ds.GeneratorDataset(lambda: (np.array(i) for i in range(5)), ["g"]),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_resume_equivalence_every_op(name):
    ds.config.set_seed(11)
    full = assert_resume_equivalence(PIPELINES[name](), num_epochs=2)
    assert full.count("EPOCH_END") == 2 and len(full) > 2


def test_unseeded_pipeline_resumes_with_its_own_seed():
    d = ds.NumpySlicesDataset(list(range(12)))  # no set_seed: a seed drawn per iterator, kept in the state
    assert_resume_equivalence(d.map(noisy), num_epochs=2, stride=5)


def test_state_from_another_pipeline_is_refused():
    it = src().shuffle(3).create_tuple_iterator()
    next(it)
    state = it.get_state()
    other = src().create_tuple_iterator()
    with pytest.raises(ValueError, match="different pipeline"):
        other.set_state(state)


OPS = st.sampled_from(["map", "random_map", "batch", "shuffle", "repeat", "take", "skip", "filter"])


def build(chain, workers):
    d = ds.NumpySlicesDataset({"x": list(range(13))}, shuffle=False)
    batched = False
    for op in chain:
        if op == "map":
            d = d.map(lambda x: x * 3 + 1, num_parallel_workers=workers)
        elif op == "random_map":
            d = d.map(noisy, num_parallel_workers=workers)
        elif op == "batch" and not batched:
            d = d.batch(3, per_batch_map=lambda x, info: ([v + 1 for v in x],), num_parallel_workers=workers)
            batched = True
        elif op == "shuffle":
            d = d.shuffle(4)
        elif op == "repeat":
            d = d.repeat(2)
        elif op == "take":
            d = d.take(9)
        elif op == "skip":
            d = d.skip(2)
        elif op == "filter" and not batched:
            d = d.filter(lambda x: x % 4 != 1, num_parallel_workers=workers)
    return d


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chain=st.lists(OPS, max_size=5), workers=st.integers(2, 4), seed=st.integers(0, 2**32 - 1))
def test_any_chain_same_output_for_one_and_n_workers(chain, workers, seed):
    ds.config.set_seed(seed)
    one = rows(build(chain, 1), 2)
    ds.config.set_seed(seed)
    many = rows(build(chain, workers), 2)
    assert one == many


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chain=st.lists(OPS, max_size=4), seed=st.integers(0, 2**32 - 1))
def test_any_chain_resumes_at_any_step(chain, seed):
    ds.config.set_seed(seed)
    assert_resume_equivalence(build(chain, 2), num_epochs=2, stride=3)
