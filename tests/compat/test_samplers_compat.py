"""Samplers and shuffles against MindSpore 2.10 itself (the oracle): orders, sizes, messages.

Each test sends a batch of cases to one oracle run. A case builds the same sampler (or the same
source arguments) from the same source text on both sides, so the two sides cannot drift apart.
"""
import re

import numpy as np
import pytest

import headrace.dataset as hds
from headrace._util.errors import EarlyValueError
from headrace._util import mtshuffle
from headrace._util.types import SampleContext
from headrace.dataset import _sampler_args as A

from tests.oracles.oracle import run_ms
from tests.oracles.snippets import USER_SAMPLERS, local_functions


def our_passes(plan, n, passes, seed, labels=None):
    return [plan.indices(SampleContext(n, k, seed, labels)).tolist() for k in range(passes)]


# ---- orders and sizes of samplers over GeneratorDataset --------------------------------------

# (GeneratorDataset keyword arguments as source text, rows, epochs, repeat count, config seed).
# Seed 5489 means "never set": only deterministic samplers run with it.
ORDER_CASES = [
    ("dict(shuffle=True)", 10, 3, 1, 1),
    ("dict(shuffle=True)", 37, 2, 1, 7),
    ("dict(shuffle=True)", 1000, 2, 1, 123456789),
    ("dict(shuffle=True)", 10, 2, 3, 3),
    ("dict()", 25, 2, 1, 4294967295),
    ("dict(sampler=ds.RandomSampler(num_samples=50))", 65535, 2, 1, 7),
    ("dict(sampler=ds.RandomSampler(num_samples=50))", 65536, 2, 1, 7),
    ("dict(sampler=ds.RandomSampler(num_samples=50))", 70001, 3, 1, 8),
    ("dict(sampler=ds.DistributedSampler(1000, 3))", 70001, 2, 1, 9),
    ("dict(sampler=ds.RandomSampler(replacement=True))", 10, 3, 1, 3),
    ("dict(sampler=ds.RandomSampler(replacement=True, num_samples=20))", 3000000, 2, 1, 3),
    ("dict(sampler=ds.RandomSampler(num_samples=4))", 10, 3, 1, 3),
    ("dict(sampler=ds.RandomSampler(num_samples=40))", 10, 2, 1, 3),
    ("dict(num_samples=6)", 10, 3, 1, 3),
    ("dict(num_samples=6, shuffle=False)", 10, 2, 1, 3),
    ("dict(shuffle=False)", 7, 2, 1, 3),
    ("dict(num_shards=3, shard_id=0)", 10, 2, 1, 11),
    ("dict(num_shards=3, shard_id=1)", 10, 2, 1, 11),
    ("dict(num_shards=3, shard_id=2, num_samples=2)", 10, 2, 1, 11),
    ("dict(num_shards=3, shard_id=2)", 10, 2, 1, 5489),
    ("dict(num_shards=4, shard_id=3, shuffle=False)", 10, 1, 1, 5489),
    ("dict(sampler=ds.DistributedSampler(3, 1))", 10, 3, 1, 5489),
    ("dict(sampler=ds.DistributedSampler(4, 2, shuffle=False))", 2, 2, 1, 1),
    ("dict(sampler=ds.DistributedSampler(3, 0, shuffle=False, offset=1))", 10, 1, 1, 1),
    ("dict(sampler=ds.DistributedSampler(4, 1, shuffle=False, offset=3))", 10, 1, 1, 1),
    ("dict(sampler=ds.DistributedSampler(4, 0, offset=4))", 10, 2, 1, 6),
    ("dict(sampler=ds.DistributedSampler(5, 4, num_samples=1))", 23, 2, 1, 6),
    ("dict(sampler=ds.DistributedSampler(2, 0, shuffle=ds.Shuffle.GLOBAL))", 9, 2, 1, 6),
    ("dict(sampler=ds.SequentialSampler(3, 4))", 10, 2, 1, 1),
    ("dict(sampler=ds.SequentialSampler(start_index=2))", 10, 1, 1, 1),
    ("dict(sampler=ds.SequentialSampler(num_samples=0))", 4, 1, 1, 1),
    ("dict(sampler=ds.SubsetSampler([3, 5, 7, 9, 11, 13, 2], num_samples=3))", 20, 2, 1, 11),
    ("dict(sampler=ds.SubsetSampler(np.array([4, 1])))", 5, 1, 1, 11),
    ("dict(sampler=ds.SubsetRandomSampler([3, 5, 7, 9, 11, 13, 2]))", 20, 3, 1, 11),
    ("dict(sampler=ds.SubsetRandomSampler([3, 5, 7, 9, 11, 13, 2], num_samples=3))", 20, 3, 1, 11),
    ("dict(sampler=ds.SubsetRandomSampler(list(range(0, 300, 3))))", 300, 2, 1, 12),
    ("dict(sampler=ds.WeightedRandomSampler([0.1, 0.5, 0.2, 0.0, 1.0, 3]))", 6, 2, 1, 11),
    ("dict(sampler=ds.WeightedRandomSampler([0.1, 0.5, 0.2, 0.0, 1.0, 3], replacement=False))", 6, 2, 1, 11),
    ("dict(sampler=ds.WeightedRandomSampler([0.1, 0.5, 0.2, 0.0, 1.0, 3], 3, False))", 6, 1, 1, 11),
    ("dict(sampler=ds.WeightedRandomSampler([1, 0, 0, 2], num_samples=4, replacement=False))", 10, 1, 1, 2),
    ("dict(sampler=ds.WeightedRandomSampler([1, 2, 3]))", 10, 2, 1, 11),
    ("dict(sampler=ds.WeightedRandomSampler([(i % 5) + 0.25 for i in range(200)], 30))", 400, 1, 1, 13),
    ("dict(sampler=ds.WeightedRandomSampler(2.0))", 10, 1, 1, 13),
    ("dict(sampler=[3, 1, 2])", 10, 2, 1, 1),
    ("dict(sampler=(4, 3, 2, 1), num_samples=2)", 10, 1, 1, 1),
    ("dict(sampler=range(2, 5))", 10, 2, 1, 1),
    ("dict(sampler=ds.IterSampler([4, 3, 2, 1], num_samples=2))", 5, 1, 1, 1),
    ("dict(sampler=chain(ds.SequentialSampler(1, 5), ds.RandomSampler()))", 10, 3, 1, 5),
    ("dict(sampler=chain(ds.RandomSampler(num_samples=4), ds.RandomSampler()))", 10, 3, 1, 5),
    ("dict(sampler=chain(ds.DistributedSampler(2, 1), ds.RandomSampler(num_samples=7)))", 10, 3, 1, 5),
    ("dict(sampler=chain(ds.SubsetSampler([4, 0, 2]), ds.SequentialSampler(5)))", 10, 2, 1, 5),
    ("dict(sampler=chain(ds.SequentialSampler(1, 2), ds.SubsetSampler([9, 8, 7, 6])))", 10, 2, 1, 5),
    ("dict(sampler=chain(ds.WeightedRandomSampler([1, 1, 5]), ds.SequentialSampler(4)))", 10, 2, 1, 5),
    ("dict(sampler=chain(ds.SequentialSampler(1), chain(ds.SequentialSampler(2), ds.SequentialSampler(3))))",
     10, 2, 1, 5),
    ("dict(sampler=chain(ds.SequentialSampler(), ds.RandomSampler(num_samples=3)))", 10, 3, 1, 5),
    ("dict(sampler=chain(ds.SequentialSampler(0, 4), ds.RandomSampler(replacement=True)))", 10, 3, 1, 5),
    ("dict(sampler=chain(ds.SubsetRandomSampler([0, 1, 2]), ds.DistributedSampler(3, 1)))", 10, 2, 1, 5),
    ("dict(sampler=chain(ds.DistributedSampler(2, 0, shuffle=False), ds.SubsetRandomSampler([5, 1, 7, 3])))",
     10, 2, 1, 5),
]

_PRELUDE = """
def chain(parent, child):
    parent.add_child(child)
    return parent
"""

_ORDER_SNIPPET = _PRELUDE + """
class Src:
    def __init__(self, n): self.n = n
    def __len__(self): return self.n
    def __getitem__(self, i): return (np.array(i),)
out = []
for kw_src, n, epochs, repeat, seed in INPUTS:
    ds.config.set_seed(seed)
    d = ds.GeneratorDataset(Src(n), ["x"], **eval(kw_src))
    size = d.get_dataset_size()
    if repeat > 1:
        d = d.repeat(repeat)
    it = d.batch(8192).create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    got = [np.concatenate([b[0] for b in it]).tolist() for _ in range(epochs)]
    out.append((size, got))
RESULT = out
"""


def our_case(kw_src, n, epochs, repeat, seed):
    hds.config.set_seed(seed)
    scope = {"ds": hds, "np": np}
    exec(_PRELUDE, scope)
    kw = eval(kw_src, scope)
    plan = A.select_sampler(kw.get("num_samples"), kw.get("shuffle"), kw.get("sampler"), kw.get("num_shards"),
                            kw.get("shard_id"))
    flat = our_passes(plan, n, epochs * repeat, seed)
    return plan.num_samples(n), [sum(flat[e * repeat:(e + 1) * repeat], []) for e in range(epochs)]


SEQUENTIAL_BUG = ("dict(sampler=ds.SequentialSampler(8, 5))", 10, 1, 1, 1)


def test_orders_and_sizes_match_mindspore():
    theirs = run_ms(_ORDER_SNIPPET, ORDER_CASES + [SEQUENTIAL_BUG])
    assert len(theirs) == len(ORDER_CASES) + 1
    for case, (size, orders) in zip(ORDER_CASES, theirs):
        our_size, our_orders = our_case(*case)
        assert our_orders == orders, case
        assert our_size == size, case
    # MindSpore 2.10 reports -3 rows for SequentialSampler(8, 5) over 10 rows, then yields [8, 9].
    # We report the 2 rows that are read.
    assert theirs[-1] == (-3, [[8, 9]])
    assert our_case(*SEQUENTIAL_BUG) == (2, [[8, 9]])


# ---- user samplers -----------------------------------------------------------------------------


USER_CASES = [
    ("Rev()", 5, 2), ("Cnt()", 10, 3), ("Cnt(2)", 10, 2), ("WithLen()", 10, 2), ("Big(num_samples=3)", 5, 1),
    ("chain(Rev(), ds.SequentialSampler(5))", 10, 2), ("chain(Cnt(), ds.SubsetSampler([9, 8, 7, 6, 5]))", 10, 2),
    ("ds.IterSampler(iter([3, 1, 2]))", 10, 1), ("chain(Big(num_samples=2), ds.SequentialSampler(5))", 10, 2),
    ("chain(ds.SequentialSampler(), Big(num_samples=3))", 10, 1), ("chain(ds.SequentialSampler(), Rev())", 10, 1),
    ("chain(ds.RandomSampler(), Big())", 10, 2),
]

# MindSpore counts a user parent's rows over the whole source, not over its child's output (it
# reports 10 here and yields 5); we report the rows yielded.
USER_SIZE_BUGS = {"chain(Rev(), ds.SequentialSampler(5))": 5}


def test_user_samplers_match_mindspore():
    snippet = USER_SAMPLERS + """
out = []
ds.config.set_seed(5)
for src, n, epochs in INPUTS:
    d = ds.GeneratorDataset([np.array(i) for i in range(n)], ["x"], sampler=eval(src))
    size = d.get_dataset_size()
    runs = []
    for _ in range(2):  # two iterators over one dataset
        it = d.create_tuple_iterator(num_epochs=epochs, output_numpy=True)
        runs.append([[int(r[0]) for r in it] for _ in range(epochs)])
    out.append((size, runs))
RESULT = out
"""
    theirs = run_ms(snippet, USER_CASES)
    scope = local_functions(USER_SAMPLERS)
    for (src, n, epochs), (size, runs) in zip(USER_CASES, theirs):
        plan = eval(src, scope).plan()
        assert plan.num_samples(n) == USER_SIZE_BUGS.get(src, size), src
        assert our_passes(plan, n, epochs, 5) == runs[0], src
        assert runs[1] == runs[0], src  # each iterator starts from a fresh copy of the sampler
        assert our_passes(plan, n, epochs, 5) == runs[1], src


# ---- PKSampler over a folder source ----------------------------------------------------------

PK_CASES = [("ds.PKSampler(2)", 3, 5), ("ds.PKSampler(2, shuffle=True)", 3, 5), ("ds.PKSampler(3, num_samples=5)", 2, 5),
            ("ds.PKSampler(5, num_samples=100)", 2, 5), ("ds.PKSampler(1, shuffle=True)", 4, 5),
            ("ds.PKSampler(1, num_samples=0)", 2, 77), ("chain(ds.RandomSampler(), ds.PKSampler(2))", 2, 5),
            ("chain(ds.SequentialSampler(1, 3), ds.PKSampler(2))", 2, 5)]
PK_COUNTS = {"a": 3, "b": 1, "c": 4, "d": 2}


def test_pk_sampler_matches_mindspore():
    snippet = _PRELUDE + """
import os, tempfile
root = tempfile.mkdtemp()
k = 0
for c, m in [("a", 3), ("b", 1), ("c", 4), ("d", 2)]:
    os.makedirs(os.path.join(root, c))
    for j in range(m):
        open(os.path.join(root, c, f"{j}.jpg"), "w").write(str(k))
        k += 1
def read(d, epochs):
    it = d.create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    return [[int(bytes(r[0]).decode()) for r in it] for _ in range(epochs)]
labels = [int(r[1]) for r in ds.ImageFolderDataset(root, shuffle=False).create_tuple_iterator(output_numpy=True)]
out = []
for src, epochs, seed in INPUTS:
    ds.config.set_seed(seed)
    d = ds.ImageFolderDataset(root, sampler=eval(src))
    out.append((d.get_dataset_size(), read(d, epochs)))
RESULT = (labels, out)
"""
    labels, theirs = run_ms(snippet, PK_CASES)
    assert labels == [0, 0, 0, 1, 2, 2, 2, 2, 3, 3]
    arr = np.array(labels)
    scope = {"ds": hds, "np": np}
    exec(_PRELUDE, scope)
    for (src, epochs, seed), (size, orders) in zip(PK_CASES, theirs):
        hds.config.set_seed(seed)
        plan = eval(src, scope).plan()
        assert plan.num_samples(10, lambda: arr) == size, src
        assert our_passes(plan, 10, epochs, seed, lambda: arr) == orders, src


# ---- Dataset.shuffle(buffer_size) --------------------------------------------------------------

# (rows, buffer size, epochs, repeat count, repeat placed before the shuffle, seed)
BUFFER_CASES = [(10, 4, 3, 1, False, 1), (1000, 2, 2, 1, False, 1), (10, 100, 2, 1, False, 1),
                (1000, 64, 2, 1, False, 1), (10, 4, 2, 2, False, 1), (10, 4, 2, 2, True, 1),
                (50, 7, 2, 1, False, 123456789), (50, 7, 2, 1, False, 4294967295), (3000, 1000, 2, 1, False, 77)]


def test_buffer_shuffle_matches_mindspore():
    snippet = """
out = []
for n, size, epochs, repeat, before, seed in INPUTS:
    ds.config.set_seed(seed)
    d = ds.GeneratorDataset([np.array(i) for i in range(n)], ["x"], shuffle=False)
    if before and repeat > 1:
        d = d.repeat(repeat)
    d = d.shuffle(size)
    if not before and repeat > 1:
        d = d.repeat(repeat)
    it = d.create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    out.append([[int(r[0]) for r in it] for _ in range(epochs)])
RESULT = out
"""
    theirs = run_ms(snippet, BUFFER_CASES)
    for case, orders in zip(BUFFER_CASES, theirs):
        n, size, epochs, repeat, before, seed = case
        rng = mtshuffle.MT19937_64(seed)  # the stream continues across repeats and epochs
        # A repeat under the shuffle makes one long input per epoch; above it, one input per repeat.
        inputs = [list(range(n)) * repeat] if before else [list(range(n))] * repeat
        ours = [[x for items in inputs for x in mtshuffle.buffer_shuffle(items, size, rng)] for _ in range(epochs)]
        assert ours == orders, case


# ---- argument checks ---------------------------------------------------------------------------

CONFLICT_CASES = [
    "dict(sampler=ds.SequentialSampler(), shuffle=True)", "dict(sampler=ds.SequentialSampler(), shuffle=False)",
    "dict(sampler=ds.SequentialSampler(), num_shards=2, shard_id=0)", "dict(sampler=ds.SequentialSampler(), num_samples=2)",
    "dict(sampler='abc')",
]

ERROR_CASES = [
    "ds.SequentialSampler(1.0)", "ds.SequentialSampler(0, -1)", "ds.SequentialSampler(-1)",
    "ds.RandomSampler(1)", "ds.RandomSampler(num_samples=-3)", "ds.RandomSampler(shuffle=True)",
    "ds.RandomSampler(shuffle=ds.Shuffle.FALSE)", "ds.RandomSampler(shuffle=ds.Shuffle.PARTIAL)",
    "ds.DistributedSampler(2.0, 0)", "ds.DistributedSampler(2, 0, shuffle='x')",
    "ds.DistributedSampler(2, 0, num_samples=1.0)", "ds.DistributedSampler(2, 0, offset=1.0)",
    "ds.DistributedSampler(0, 0)", "ds.DistributedSampler(-2, 0)", "ds.DistributedSampler(2, -1)",
    "ds.DistributedSampler(2, 2)", "ds.DistributedSampler(2, 0, offset=3)",
    "ds.DistributedSampler(2, 0, shuffle=ds.Shuffle.FILES)", "ds.DistributedSampler(2, 0, shuffle=ds.Shuffle.PARTIAL)",
    "ds.SubsetSampler('abc')", "ds.SubsetSampler(None)", "ds.SubsetSampler([1, 2.0])", "ds.SubsetSampler([1], -1)",
    "ds.SubsetRandomSampler([1.5])", "ds.WeightedRandomSampler(['a'])", "ds.WeightedRandomSampler([1, 2], replacement=1)",
    "ds.WeightedRandomSampler([])", "ds.WeightedRandomSampler([0, 0])", "ds.WeightedRandomSampler([1, -1])",
    "ds.WeightedRandomSampler([1, -0.5, 2])", "ds.WeightedRandomSampler([1, 2], num_samples=-2)",
    "ds.PKSampler(1.0)", "ds.PKSampler(1, num_class=2)", "ds.PKSampler(1, shuffle=1)", "ds.PKSampler(1, class_column=1)",
    "ds.PKSampler(1, num_samples=-1)",
]


def _error_line(message):
    m = re.search(r"\[ERROR\] (.*)", message)
    return m.group(1).strip() if m else message


def test_argument_errors_match_mindspore():
    snippet = """
import os, tempfile
root = tempfile.mkdtemp()
os.makedirs(os.path.join(root, "a"))
open(os.path.join(root, "a", "0.jpg"), "w").write("0")
cases, conflicts = INPUTS
conflict_out = []
for src in conflicts:
    try:
        ds.GeneratorDataset([np.array(i) for i in range(5)], ["x"], **eval(src))
        conflict_out.append(None)
    except Exception as e:
        conflict_out.append((type(e).__name__, str(e)))
out = []
for src in cases:
    try:
        s = eval(src)
    except Exception as e:
        out.append(("ctor", type(e).__name__, str(e)))
        continue
    try:
        if isinstance(s, ds.PKSampler):
            d = ds.ImageFolderDataset(root, sampler=s)
        else:
            d = ds.GeneratorDataset([np.array(i) for i in range(10)], ["x"], sampler=s)
        d.get_dataset_size()
        out.append(("ok", None, None))
    except Exception as e:
        out.append(("run", type(e).__name__, str(e)))
RESULT = (out, conflict_out)
"""
    theirs, conflicts = run_ms(snippet, (ERROR_CASES, CONFLICT_CASES))
    scope = {"ds": hds, "np": np}
    for src, (when, kind, message) in zip(ERROR_CASES, theirs):
        assert when != "ok", src
        try:
            eval(src, scope).plan()
        except Exception as e:  # noqa: BLE001 - compared below
            ours = e
        else:
            pytest.fail(f"{src}: no error")
        if when == "ctor":
            assert (type(ours).__name__, str(ours)) == (kind, message), src
        else:
            # MindSpore checks these only when the pipeline starts (RuntimeError); we refuse them at
            # once, same words, with an error both `except RuntimeError` and `except ValueError` catch
            # (EarlyValueError), or a RuntimeError where MindSpore's text says the dataset cannot use it.
            assert str(ours) == _error_line(message), src
            expected = RuntimeError if "not supported with current dataset" in message else EarlyValueError
            assert type(ours) is expected, src
    # A sampler object given with other sampling arguments (GeneratorDataset's path).
    for src, expected in zip(CONFLICT_CASES, conflicts):
        kw = eval(src, {"ds": hds})
        with pytest.raises(Exception) as e:
            A.select_sampler(kw.get("num_samples"), kw.get("shuffle"), kw.get("sampler"), kw.get("num_shards"),
                             kw.get("shard_id"))
        assert (type(e.value).__name__, str(e.value)) == expected, src
