"""MindDataset's shuffle modes through ``shuffle=``, ``RandomSampler(shuffle=)`` and
``DistributedSampler(shuffle=)``, with and without ``MS_DEV_MINDRECORD_SHARD_BY_BLOCK``, against
MindSpore 2.10: the same files (four files of 100, 77, 37 and 19 rows written by headrace), three
epochs, two seeds; sizes and every row must agree. Also the checks of ``add_sampler`` /
``use_sampler`` and reading a list of files that differ in schema description.
"""
from __future__ import annotations

import os

import pytest

import headrace.dataset as hds
from headrace.mindrecord import FileWriter
from tests.helpers import numbered_mindrecords
from tests.oracles.oracle import run_ms
from tests.oracles.oracle_codec import OracleException

pytestmark = pytest.mark.compat

SIZES = [100, 77, 37, 19]
MODES = ["None", "True", "False", "ds.Shuffle.ADAPTIVE", "ds.Shuffle.GLOBAL", "ds.Shuffle.PARTIAL",
         "ds.Shuffle.FILES", "ds.Shuffle.INFILE"]

_READ = """
import os
def read(files, kind, mode, shards, extra, seed, block):
    if block:
        os.environ["MS_DEV_MINDRECORD_SHARD_BY_BLOCK"] = "true"
    else:
        os.environ.pop("MS_DEV_MINDRECORD_SHARD_BY_BLOCK", None)
    try:
        ds.config.set_seed(seed)
        value = eval(mode)
        kw = dict(extra)
        if kind == "shuffle":
            kw["shuffle"] = value
            if shards:
                kw.update(num_shards=shards[0], shard_id=shards[1])
        elif kind == "random":
            kw["sampler"] = ds.RandomSampler(shuffle=value, **kw.pop("sampler_kw", {}))
        else:
            kw["sampler"] = ds.DistributedSampler(shards[0], shards[1], shuffle=value, **kw.pop("sampler_kw", {}))
        d = ds.MindDataset(files, columns_list=["label"], **kw)
        it = d.create_tuple_iterator(output_numpy=True, num_epochs=3)
        rows = [[int(r[0]) for r in it] for _ in range(3)]
        return [d.get_dataset_size(), rows]
    except Exception as ex:
        return "error: " + type(ex).__name__
"""
ORACLE = _READ + "\nRESULT = [read(*c) for c in INPUTS]\n"


def _cases(files):
    out = []
    for mode in MODES:
        for shards in (None, (8, 5), (8, 7), (3, 1)):
            out.append(("shuffle", mode, shards, {}))
        if mode not in ("None", "True", "False"):
            out.append(("random", mode, None, {}))
        if mode != "None":
            out.append(("distributed", mode, (8, 5), {}))
            out.append(("distributed", mode, (3, 1), {}))
    out += [
        ("shuffle", "ds.Shuffle.PARTIAL", None, {"num_samples": 10}),
        ("shuffle", "ds.Shuffle.PARTIAL", (8, 5), {"num_samples": 4}),
        ("random", "ds.Shuffle.PARTIAL", None, {"sampler_kw": {"num_samples": 10, "replacement": True}}),
        ("random", "ds.Shuffle.GLOBAL", None, {"sampler_kw": {"num_samples": 10}}),
        ("random", "ds.Shuffle.ADAPTIVE", None, {"sampler_kw": {"num_samples": 10}}),
        ("random", "ds.Shuffle.FILES", None, {"sampler_kw": {"num_samples": 10}}),
        ("distributed", "ds.Shuffle.PARTIAL", (8, 5), {"sampler_kw": {"num_samples": 4}}),
        ("distributed", "ds.Shuffle.PARTIAL", (8, 5), {"sampler_kw": {"offset": 2}}),
        ("distributed", "False", (8, 5), {"sampler_kw": {"num_samples": 4}}),
        ("shuffle", "True", (8, 5), {"num_samples": 4}),
    ]
    for mode in ("False", "ds.Shuffle.PARTIAL", "ds.Shuffle.INFILE", "ds.Shuffle.GLOBAL"):
        out.append(("shuffle", mode, (5, 4), {"padded_sample": {"label": -1}, "num_padded": 2}))
    out.append(("shuffle", "ds.Shuffle.PARTIAL", None, {"padded_sample": {"label": -1}, "num_padded": 2}))
    return [(files, kind, mode, shards, extra, seed, block)
            for kind, mode, shards, extra in out for seed in (1234, 5) for block in (False, True)]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    files = numbered_mindrecords(tmp_path_factory.mktemp("partial"), SIZES,
                                 {"label": {"type": "int32"}, "data": {"type": "bytes"}},
                                 lambda i: {"label": i, "data": b"x"})
    cases = _cases(files)
    return cases, run_ms(ORACLE, cases)


def _ours(case):
    g = {"ds": hds}
    exec(_READ, g)
    try:
        return g["read"](*case)
    finally:
        os.environ.pop("MS_DEV_MINDRECORD_SHARD_BY_BLOCK", None)


def test_modes_and_shards_match_mindspore(world):
    cases, theirs = world
    bad = []
    for case, t in zip(cases, theirs):
        assert not isinstance(t, OracleException)
        o = _ours(case)
        if o != t:
            bad.append((case[1:], str(t)[:120], str(o)[:120]))
    assert not bad, "\n".join(map(str, bad[:5])) + f"\n... {len(bad)} of {len(cases)} differ"


def test_every_mode_ran_in_both_layouts(world):
    cases, theirs = world
    ok = [c for c, t in zip(cases, theirs) if isinstance(t, list)]
    for mode in MODES:
        for block in (False, True):
            assert sum(1 for c in ok if c[2] == mode and c[6] == block and c[3]) >= 4, (mode, block)


_ADD = """
import mindspore.dataset as ds
files = INPUTS
def attempt(fn):
    try:
        fn()
        return "ok"
    except Exception as e:
        return type(e).__name__ + ": " + str(e)
S = ds.Shuffle
RESULT = [
    attempt(lambda: ds.MindDataset(files, shuffle=S.PARTIAL).add_sampler(ds.DistributedSampler(8, 1, shuffle=S.INFILE))),
    attempt(lambda: ds.MindDataset(files, shuffle=S.GLOBAL).add_sampler(ds.DistributedSampler(4, 3, shuffle=S.INFILE))),
    attempt(lambda: ds.MindDataset(files, shuffle=False).add_sampler(ds.RandomSampler(shuffle=S.PARTIAL))),
    attempt(lambda: ds.MindDataset(files, sampler=ds.RandomSampler(shuffle=S.PARTIAL)).add_sampler(ds.SequentialSampler())),
    attempt(lambda: ds.MindDataset(files).add_sampler(ds.DistributedSampler(4, 3))),
    attempt(lambda: ds.MindDataset(files, shuffle=S.PARTIAL).use_sampler(ds.RandomSampler(shuffle=S.INFILE))),
    attempt(lambda: ds.NumpySlicesDataset(list(range(10)), shuffle=False).use_sampler(ds.RandomSampler(shuffle=S.FILES))),
    attempt(lambda: ds.NumpySlicesDataset(list(range(10)), shuffle=True).add_sampler(ds.DistributedSampler(2, 1, shuffle=S.INFILE))),
    attempt(lambda: ds.DistributedSampler(8, 1, shuffle=S.PARTIAL).add_child(ds.RandomSampler(shuffle=S.PARTIAL))),
    attempt(lambda: ds.DistributedSampler(8, 1, shuffle=S.PARTIAL).add_child(ds.RandomSampler(shuffle=S.GLOBAL))),
    attempt(lambda: ds.DistributedSampler(8, 1, shuffle=S.INFILE).add_child(ds.RandomSampler(shuffle=S.GLOBAL))),
]
"""


def test_add_sampler_use_sampler_and_add_child_checks_match_mindspore(world):
    files = world[0][0][0]
    theirs = run_ms(_ADD, files)
    g = {"FILES": files}
    exec(_ADD.replace("import mindspore.dataset as ds", "import headrace.dataset as ds").replace(
        "files = INPUTS", "files = FILES"), g)
    assert g["RESULT"] == theirs
    assert theirs[4] == "ok" and sum(r == "ok" for r in theirs) == 1


_DESC = """
import mindspore.dataset as ds
RESULT = [int(r[0]) for r in ds.MindDataset(INPUTS, columns_list=["id"], shuffle=False)
          .create_tuple_iterator(output_numpy=True)]
"""


def test_files_differing_in_schema_description_read_as_one_dataset(tmp_path):
    files = []
    for k, desc in enumerate(["first", "second"]):
        w = FileWriter(str(tmp_path / f"d{k}"))
        w.add_schema({"id": {"type": "int32"}, "data": {"type": "bytes"}}, desc)
        w.write_raw_data([{"id": 10 * k + j, "data": b"x"} for j in range(3)])
        w.commit()
        files.append(str(tmp_path / f"d{k}"))
    ours = [int(r[0]) for r in hds.MindDataset(files, columns_list=["id"], shuffle=False)
            .create_tuple_iterator(output_numpy=True)]
    assert ours == run_ms(_DESC, files) == [0, 1, 2, 10, 11, 12]
