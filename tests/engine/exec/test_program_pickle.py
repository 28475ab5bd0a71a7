"""How a stage program travels to workers that do not share memory (launch.dumps_program/load_blob):
plain objects arrive with their attributes inline, everything else exactly as pickle leaves it.
See NOTE [ attributes of unpickled objects ] in launch.py."""
from __future__ import annotations

import dataclasses
import enum
import gc
import os

import numpy as np
import pytest

from headrace._engine.exec import launch
from headrace._engine.run import PipelineRun
from tests.engine.exec.test_process_pool import opts, pipeline, read_all


def through_blob(obj):
    stream, bufs = launch.dumps_program(obj, "test program")
    fd = launch.write_blob(stream, bufs, "hr-test-")
    try:
        return launch.load_blob(fd)
    finally:
        os.close(fd)


def has_dict(obj) -> bool:
    """True when the object's attributes live in a materialised ``__dict__`` (slow reads)."""
    return any(type(r) is dict for r in gc.get_referents(obj))


class Plain:
    def __init__(self, n):
        self.n, self.items, self.me = n, [n, n + 1], None


class Base:
    def __init__(self):
        self.base = "b"


class Derived(Base):
    def __init__(self):
        super().__init__()
        self.extra = np.arange(3)


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self):
        self.a, self.b = 1, 2


class WithSetState:
    def __init__(self):
        self.x = 1

    def __setstate__(self, state):
        self.__dict__.update(state, restored=True)


class WithProperty:
    def __init__(self):
        self.__dict__["value"] = 5  # shadowed by the data descriptor below on attribute reads

    @property
    def value(self):
        return self.__dict__["value"] * 10

    @value.setter
    def value(self, v):
        raise AssertionError("the setter must not run when unpickling")


class ListWithAttrs(list):
    def __init__(self, items):
        super().__init__(items)
        self.tag = "t"


@dataclasses.dataclass(frozen=True)
class Frozen:
    a: int
    b: str


class Colour(enum.Enum):
    RED = 1


def test_plain_objects_arrive_with_their_attributes_inline_and_shared_references_kept():
    a = Plain(3)
    a.me = a
    b = Plain(7)
    b.me = a.items  # a list shared by both objects
    got_a, got_b = through_blob([a, b])
    assert (got_a.n, got_a.items, got_b.n, got_b.items) == (3, [3, 4], 7, [7, 8])
    assert got_a.me is got_a and got_b.me is got_a.items
    assert not has_dict(got_a) and not has_dict(got_b)
    derived = through_blob(Derived())
    assert derived.base == "b" and derived.extra.tolist() == [0, 1, 2] and not has_dict(derived)


def test_other_objects_pickle_exactly_as_before():
    slotted = through_blob(Slotted())
    assert (slotted.a, slotted.b) == (1, 2)
    restored = through_blob(WithSetState())
    assert vars(restored) == {"x": 1, "restored": True}
    prop = through_blob(WithProperty())
    assert prop.__dict__ == {"value": 5} and prop.value == 50
    lst = through_blob(ListWithAttrs([1, 2]))
    assert lst == [1, 2] and lst.tag == "t" and type(lst) is ListWithAttrs
    assert through_blob(Frozen(1, "x")) == Frozen(1, "x")
    assert through_blob(Colour.RED) is Colour.RED
    cls = through_blob(Plain)
    assert cls is Plain


class Scaler:
    def __init__(self, k):
        self.k = k


def test_a_served_workers_program_objects_keep_their_attributes_inline():
    holder = Scaler(2)

    def fn(x):  # a closure: travels by value with the object it holds
        return np.array([x[0] * holder.k, int(has_dict(holder))], np.int64)

    run = PipelineRun(pipeline(n=4, workers=2, procs=True, fn=fn, batch=0), 1, opts())
    try:
        assert run.tree.pool.launcher == "server"
        rows = read_all(run)
    finally:
        run.close()
    assert [r[0] for r in rows[:-1]] == [[0, 0], [2, 0], [4, 0], [6, 0]]


@pytest.mark.parametrize("obj", [Plain(1), Derived()])
def test_pickling_does_not_change_the_parents_object(obj):
    before = {k: v for k, v in vars(obj).items() if k != "extra"}
    through_blob(obj)
    assert {k: v for k, v in vars(obj).items() if k != "extra"} == before
