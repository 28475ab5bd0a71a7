"""Issue 39, the order cases left, against MindSpore 2.10: a MindRecord shard whose ``shard_id`` is
outside ``[0, num_shards)`` (``DistributedSampler(2, -1)``: MindSpore reads each position as an
unsigned 64-bit number modulo the row count). The same program runs on both sides.

Left out on purpose: a ``SequentialSampler`` whose start plus count runs past the end of its
distributed child's rows. MindSpore 2.10 then yields more rows than its own ``get_dataset_size``
(3 rows, 2 shards, ``SequentialSampler(1, 3)``: size 1, but 2 rows, the second one read past the
shard's list; -1 for ``SequentialSampler(2, 2)`` of 3 shards); headrace stops at the shard's end."""
import pytest

from headrace.mindrecord import FileWriter
from tests.oracles.oracle import run_ms

pytestmark = pytest.mark.compat

_SIZES = (3, 4, 5, 6, 7, 10, 12)

_SHARD_PROGRAM = '''
import os
def rows(d, epochs):
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=epochs)
    return [[int(r[0]) for r in it] for _ in range(epochs)]
def chain(*samplers):
    for parent, child in zip(samplers, samplers[1:]):
        parent.add_child(child)
    return samplers[0]
def M(n, **kw):
    return ds.MindDataset(INPUTS["paths"][str(n)], **kw)
def D(shards, sid, shuffle, **kw):
    return ds.DistributedSampler(shards, sid, shuffle=shuffle, **kw)
RESULT = {}
for block in ("false", "true"):
    os.environ["MS_DEV_MINDRECORD_SHARD_BY_BLOCK"] = block
    for seed in (0, 7):
        ds.config.set_seed(seed)
        for n in INPUTS["sizes"]:
            for shards, sid in ((2, -1), (2, -2), (2, -3), (3, -1), (3, -5), (2, 2), (3, 4)):
                for shuffle in (True, False, ds.Shuffle.FILES):
                    key = f"{block} {seed} {n} {shards} {sid} {shuffle}"
                    RESULT[key] = rows(M(n, sampler=D(shards, sid, shuffle)), 3)
                    if shuffle is not ds.Shuffle.FILES:  # (add_sampler refuses FILES)
                        d = M(n, shuffle=False)
                        d.add_sampler(D(shards, sid, shuffle))
                        RESULT[key + " add_sampler"] = [d.get_dataset_size()] + rows(d, 2)
                if block == "false":
                    RESULT[f"{seed} {n} {shards} {sid} num_samples"] = rows(
                        M(n, sampler=D(shards, sid, False, num_samples=2)), 2)
                    RESULT[f"{seed} {n} {shards} {sid} random_over_shard"] = rows(
                        M(n, sampler=chain(ds.RandomSampler(), D(shards, sid, False))), 3)
                    RESULT[f"{seed} {n} {shards} {sid} shard_over_random"] = rows(
                        M(n, sampler=chain(D(shards, sid, False), ds.RandomSampler())), 3)
                    RESULT[f"{seed} {n} {shards} {sid} sequence_over_shuffled_shard"] = rows(
                        M(n, sampler=chain(ds.SequentialSampler(0, 2), D(shards, sid, True))), 3)
os.environ.pop("MS_DEV_MINDRECORD_SHARD_BY_BLOCK")
'''


@pytest.fixture(scope="module")
def mind_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("shard_ids")
    paths = {}
    for n in _SIZES:
        paths[str(n)] = str(root / f"rows{n}.mindrecord")
        writer = FileWriter(paths[str(n)], 1)
        writer.add_schema({"id": {"type": "int64"}}, "rows")
        writer.write_raw_data([{"id": i} for i in range(n)])
        writer.commit()
    return paths


def test_mindrecord_shard_id_out_of_range_same_as_mindspore(mind_files, monkeypatch):
    import numpy as np  # noqa: PLC0415

    import headrace.dataset as ds  # noqa: PLC0415
    inputs = {"paths": mind_files, "sizes": list(_SIZES)}
    theirs = run_ms(_SHARD_PROGRAM, inputs=inputs)
    monkeypatch.setenv("MS_DEV_MINDRECORD_SHARD_BY_BLOCK", "false")  # restored after the test
    env = {"ds": ds, "np": np, "INPUTS": inputs}
    exec(_SHARD_PROGRAM, env)
    ours = env["RESULT"]
    assert len(theirs) == 2 * 2 * 7 * 7 * (3 + 2) + 2 * 7 * 7 * 4
    # the case, and what the unsigned reading means: position -1 of 5 rows is (2**64 - 1) % 5 = 0,
    # of 6 rows (2**64 - 1) % 6 = 3, of 4 rows 3 (as -1 % 4)
    assert theirs["false 0 5 2 -1 True"][0] == [3, 0, 2]
    assert theirs["false 0 5 2 -1 False"][0] == [0, 1, 3]
    assert theirs["false 0 6 2 -1 False"][0] == [3, 1, 3]
    assert theirs["false 0 4 2 -1 False"][0] == [3, 1]
    assert theirs["true 0 7 2 -1 False"][0] == [5, 6, 0, 1]  # block -1 of 7 rows: positions -4 .. -1
    for key in sorted(theirs):
        assert ours[key] == theirs[key], f"{key}: ours {ours[key]}, MindSpore {theirs[key]}"
