"""SplitPlan (issue 39, item 1): the parts of one split slice one fixed order."""
import numpy as np
import pytest

from headrace._engine.samplers import RandomPlan, SequentialPlan
from headrace._engine.samplers.split import SplitPlan
from headrace._util.types import SampleContext


class _Unhashable:
    """A base plan that cannot be a dict key (as a user's sampler may be)."""

    __hash__ = None  # type: ignore[assignment]

    def indices(self, ctx):
        return np.arange(ctx.num_rows)[::-1].copy()


@pytest.mark.parametrize("order", ["none", "random", "buffer"])
@pytest.mark.parametrize("base", [SequentialPlan(), RandomPlan(), _Unhashable()])
def test_parts_slice_one_order_every_pass(order, base):
    parts = [SplitPlan(base, 0, 7, order, 11), SplitPlan(base, 7, 3, order, 11), SplitPlan(base, 10, 2, order, 11)]
    for k in range(3):
        got = [p.indices(SampleContext(12, k, k + 100)).tolist() for p in parts]  # the pass's seed plays no part
        assert [len(g) for g in got] == [7, 3, 2] and sorted(sum(got, [])) == list(range(12))
        if k == 0:
            first = got
        assert got == first
    assert all(p.num_samples(12) == p.count for p in parts)


def test_unrandomized_parts_keep_the_base_order():
    assert SplitPlan(SequentialPlan(), 3, 4, "none", 0).indices(SampleContext(10, 0, 0)).tolist() == [3, 4, 5, 6]


def test_a_part_past_the_rows_is_an_error():
    with pytest.raises(RuntimeError, match=r"^Split part \[8, 12\) runs past the 10 rows of the dataset it was "
                                           r"split from: the dataset changed after the split\.$"):
        SplitPlan(SequentialPlan(), 8, 4, "random", 0).indices(SampleContext(10, 0, 0))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"order": "sorted"}, r"order must be one of \['none', 'random', 'buffer'\], but got 'sorted'"),
    ({"start": -1}, r"start and count must be >= 0, but got start -1, count 2"),
    ({"buffer_size": 0}, r"buffer_size must be positive, but got 0"),
])
def test_split_plan_checks_its_fields(kwargs, message):
    fields = dict(base=SequentialPlan(), start=0, count=2, order="none", seed=0) | kwargs
    with pytest.raises(ValueError, match=message):
        SplitPlan(**fields)


def test_equal_parts_are_equal_values():
    a, b = SplitPlan(RandomPlan(), 0, 3, "random", 5), SplitPlan(RandomPlan(), 0, 3, "random", 5)
    assert a == b and hash(a) == hash(b) and a != SplitPlan(RandomPlan(), 3, 3, "random", 5)
