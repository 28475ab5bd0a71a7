"""Issue 39 (items 1-4) against MindSpore 2.10: split parts (sizes, rows, order, samplers after a
split, a split of a split, the error texts), the padding of bucket_batch_by_length and
padded_batch, Tensor.dtype, and sampler chains. The same snippet runs on both sides."""
import pytest

from tests.helpers import numbered_mindrecord
from tests.oracles.oracle import run_ms
from tests.oracles.snippets import INT_ROWS, assert_same, oracle_program, run_local
from tests.sources.makers import write_tfrecord

pytestmark = pytest.mark.compat

_SPLIT_HELPERS = (
    "def N(**kw):\n    return ds.NumpySlicesDataset(list(range(10)), column_names=['x'], **kw)\n"
    "def T(**kw):\n    return ds.TextFileDataset({lines!r}, **kw)\n"
    "def C(**kw):\n    return ds.CSVDataset({csv!r}, column_names=['x'], **kw)\n"
    "def TF(**kw):\n    return ds.TFRecordDataset({tfr!r}, num_parallel_workers=1, **kw)\n"
    "def g():\n    for i in range(10):\n        yield (np.array(i),)\n"
    "def G():\n    return ds.GeneratorDataset(g, ['x'])\n"
)

# (pipeline giving `d`, seed, epochs). Under a seed MindSpore's parts are disjoint; a shuffled source
# is re-drawn each epoch in MindSpore (rows move between parts), so those cases read one epoch.
_SPLITS = {
    "index_random": ("N(shuffle=False).split([0.8, 0.2])[{k}]", 5, 2),
    "index_consecutive": ("N(shuffle=False).split([0.8, 0.2], randomize=False)[{k}]", 5, 2),
    "index_shuffled_source": ("N().split([0.8, 0.2])[{k}]", 5, 1),
    "index_three_fractions": ("N(shuffle=False).split([0.33, 0.33, 0.34])[{k}]", 7, 2),
    "index_remainder_first": ("N(shuffle=False).split([0.15, 0.15, 0.7], randomize=False)[{k}]", 5, 1),
    "index_remainder_largest": ("N(shuffle=False).split([0.15, 0.15, 0.15, 0.55], randomize=False)[{k}]", 5, 1),
    "index_ints": ("N(shuffle=False).split([3, 7])[{k}]", 3, 1),
    "index_split_of_split": ("N(shuffle=False).split([0.6, 0.4])[{k} % 2].split([0.5, 0.5])[{k} // 2]", 5, 1),
    "text_random": ("T(shuffle=False).split([0.8, 0.2])[{k}]", 5, 2),
    "text_shuffled_source": ("T().split([0.8, 0.2])[{k}]", 5, 1),
    "text_consecutive": ("T(shuffle=False).split([0.33, 0.33, 0.34], randomize=False)[{k}]", 5, 1),
    "text_split_of_split": ("T(shuffle=False).split([0.6, 0.4])[{k} % 2].split([0.5, 0.5])[{k} // 2]", 5, 1),
    "csv_random": ("C(shuffle=False).split([0.3, 0.7])[{k}]", 11, 2),
    "stream_random": ("G().split([0.8, 0.2])[{k}]", 5, 2),
    "tfrecord_random": ("TF(shuffle=False).split([0.7, 0.3])[{k}]", 7, 2),
    "tfrecord_shuffled_source": ("TF().split([0.7, 0.3])[{k}]", 1, 1),
    "tfrecord_files_consecutive": ("TF(shuffle=ds.Shuffle.FILES).split([5, 18], randomize=False)[{k}]", 7, 1),
}
_PARTS = {"index_three_fractions": 3, "index_remainder_first": 3, "index_remainder_largest": 4,
          "index_split_of_split": 4, "text_consecutive": 3, "text_split_of_split": 4}

# a sampler set on a part samples the part's rows (MindSpore's parts keep the split underneath)
_AFTER = {
    "use_distributed_after_split": ("d = N(shuffle=False).split([0.8, 0.2])[0]\n"
                                    "d.use_sampler(ds.DistributedSampler(2, {k}, shuffle=False))", 5),
    "add_distributed_after_split": ("d = N().split([0.8, 0.2])[0]\n"
                                    "d.add_sampler(ds.DistributedSampler(2, {k}, shuffle=False))", 5),
    "use_distributed_after_consecutive": ("d = N(shuffle=False).split([0.8, 0.2], randomize=False)[0]\n"
                                          "d.use_sampler(ds.DistributedSampler(2, {k}, shuffle=False))", 5),
}

_SPLIT_ERRORS = ["[]", "[1, 0.5]", "[0.5, 1]", "['a']", "(0.5, 0.5)", "[0.0, 1.0]", "[0, 10]", "[11]", "[0.5, 0.4]",
                 "[0.05, 0.95]", "[0.01, 0.01, 0.98]"]


def _split_cases(lines, csv, tfr):
    helpers = _SPLIT_HELPERS.format(lines=lines, csv=csv, tfr=tfr)
    cases = {}
    for name, (expr, seed, epochs) in _SPLITS.items():
        for k in range(_PARTS.get(name, 2)):
            cases[f"{name}_{k}"] = (helpers + f"d = {expr.format(k=k)}\nEPOCHS = {epochs}", seed)
    for name, (code, seed) in _AFTER.items():
        for k in range(2):
            cases[f"{name}_{k}"] = (helpers + code.format(k=k), seed)
    cases["sharded_source"] = (helpers + "d = N(num_shards=2, shard_id=0).split([0.5, 0.5])[0]", 5)
    cases["sharded_text"] = (helpers + "d = T(num_shards=2, shard_id=0).split([0.5, 0.5])[0]", 5)
    for i, sizes in enumerate(_SPLIT_ERRORS):
        cases[f"sizes_error_{i}"] = (helpers + f"d = N(shuffle=False).split({sizes})[0]", 5)
    return cases


@pytest.fixture(scope="module")
def split_cases(tmp_path_factory):
    root = tmp_path_factory.mktemp("split")
    lines, csv = root / "lines.txt", root / "rows.csv"
    lines.write_text("".join(f"{i}\n" for i in range(10)))
    csv.write_text("".join(f"{i}\n" for i in range(10)))
    for k, (lo, hi) in enumerate(((0, 9), (9, 23))):  # two files: a shuffle also reorders files
        write_tfrecord(str(root / f"t{k}.tfrecord"), [{"v": ("int64", [i])} for i in range(lo, hi)])
    return _split_cases(str(lines), str(csv), [str(root / "t0.tfrecord"), str(root / "t1.tfrecord")])


def _run_both(code, seed):
    """(ours, MindSpore's) description of ``d``; an error while building it is described as a value."""
    wrapped = ("try:\n" + "".join(f"    {line}\n" for line in code.splitlines())
               + "except Exception as e:\n    ERR = (type(e).__name__, str(e))\n")
    return wrapped, seed


@pytest.fixture(scope="module")
def split_oracle(split_cases):
    items = [_run_both(c, s) for c, s in split_cases.values()]
    program = oracle_program(items).replace("RESULT = [", _ERR_DESCRIBE + "RESULT = [")
    return dict(zip(split_cases, run_ms(program, inputs=items)))


# A snippet whose building fails sets ERR instead of d: describe the error (type and text).
_ERR_DESCRIBE = '''
_run_snippet = run_snippet
def run_snippet(code, seed=None):
    if seed is not None:
        ds.config.set_seed(seed)
    env = {"ds": ds, "np": np, "EPOCHS": 1}
    exec(code, env)
    if "ERR" in env:
        return {"error": env["ERR"][0], "msg": env["ERR"][1]}
    return _run_snippet(code, seed)
'''


def _local(code, seed):
    import numpy as np  # noqa: PLC0415

    import headrace.dataset as ds  # noqa: PLC0415
    env = {"ds": ds, "np": np, "EPOCHS": 1}
    ds.config.set_seed(seed)
    exec(code, env)
    if "ERR" in env:
        return {"error": env["ERR"][0], "msg": env["ERR"][1]}
    return run_local(code, seed)


def test_split_parts_same_as_mindspore(split_cases, split_oracle):
    assert len(split_cases) == 62
    for name in split_cases:
        code, seed = _run_both(*split_cases[name])
        ours, theirs = _local(code, seed), split_oracle[name]
        if name.startswith(("sizes_error", "sharded")):
            assert "error" in theirs, f"{name}: MindSpore gave {theirs}"
        else:
            assert "error" not in theirs, f"{name}: {theirs}"
        assert_same(ours, theirs, name)
        if "error" in theirs:
            assert ours["error"] == theirs["error"], f"{name}: {ours} vs {theirs}"
            assert ours["msg"] == theirs["msg"], f"{name}: {ours} vs {theirs}"


_PAD_HELPERS = (
    "def gen():\n    for n in [1, 3, 2, 5, 4, 2, 7]:\n"
    "        yield (np.arange(n, dtype=np.int32) + 1, np.ones((n, 2), np.float32) * n, np.array(n, np.int64),\n"
    "               np.array(['w'] * n))\n"
    "def src():\n    return ds.GeneratorDataset(gen, ['a', 'b', 'c', 's'], shuffle=False)\n"
    "def src1():\n    return src().project(['a'])\n"
)

_PADDING = {
    # bucket_batch_by_length without pad_info, or with {}: every column padded to the longest row with 0
    "bucket_no_pad_info": "src().bucket_batch_by_length(['a'], [3, 6], [2, 3, 2])",
    "bucket_empty_pad_info": "src().bucket_batch_by_length(['a'], [3, 6], [2, 3, 2], pad_info={})",
    "bucket_none_pad_info": "src().bucket_batch_by_length(['a'], [3, 6], [2, 3, 2], pad_info=None)",
    "bucket_to_boundary_no_pad_info": "src().bucket_batch_by_length(['a'], [3, 6, 8], [2, 2, 2, 2], "
                                      "pad_to_bucket_boundary=True)",
    "bucket_to_boundary_named": "src().bucket_batch_by_length(['a'], [3, 6, 8], [2, 2, 2, 2], pad_info={'a': "
                                "([None], -1), 'b': ([None, 2], 0), 's': ([None], ''), 'c': ([], 0)}, "
                                "pad_to_bucket_boundary=True)",
    "bucket_to_boundary_last_bucket": "src1().bucket_batch_by_length(['a'], [3, 6], [2, 2, 2], "
                                      "pad_info={'a': ([None], -1)}, pad_to_bucket_boundary=True)",
    # a column pad_info does not name is not padded
    "bucket_named_only": "src().bucket_batch_by_length(['a'], [3, 6], [2, 2, 2], pad_info={'a': ([None], -1)})",
    "bucket_named_only_one_column": "src1().bucket_batch_by_length(['a'], [3, 6], [2, 2, 2], "
                                    "pad_info={'a': ([None], -1)})",
    # padded_batch cuts a dimension where the pad shape is smaller
    "padded_truncates": "src().padded_batch(3, pad_info={'a': ([2], 9), 'b': ([3, 3], 0), 's': ([4], 'p')})",
    "padded_truncates_and_pads": "src().padded_batch(2, pad_info={'a': ([4], -1), 'b': ([2, 1], 5), 'c': ([], 0), "
                                 "'s': ([None], '')})",
    "padded_empty_pad_info": "src().padded_batch(3, pad_info={})",
}


@pytest.fixture(scope="module")
def padding_oracle():
    items = [(_PAD_HELPERS + f"d = {expr}", None) for expr in _PADDING.values()]
    return dict(zip(_PADDING, run_ms(oracle_program(items), inputs=items)))


_PAD_ERRORS = {"bucket_to_boundary_last_bucket": "requested to pad to bucket boundary failed",
               "bucket_named_only": "Cannot batch tensors with different shapes in column 1"}


def test_padding_same_as_mindspore(padding_oracle):
    for name, expr in _PADDING.items():
        theirs = padding_oracle[name]
        if name in _PAD_ERRORS:
            assert theirs["error"] == "RuntimeError"
            assert _PAD_ERRORS[name] in theirs["msg"]
        else:
            assert "error" not in theirs, f"{name}: {theirs}"
        ours = run_local(_PAD_HELPERS + f"d = {expr}")
        assert_same(ours, theirs, name)
        if name in _PAD_ERRORS:
            assert _PAD_ERRORS[name] in ours["msg"], ours


_DTYPE_PROGRAM = '''
import {mod} as mstype
cols = {{"f32": np.ones((2, 3), np.float32), "f64": np.ones(2, np.float64), "f16": np.ones(2, np.float16),
        "i8": np.arange(2, dtype=np.int8), "i16": np.arange(2, dtype=np.int16), "i32": np.arange(2, dtype=np.int32),
        "i64": np.arange(2), "u8": np.arange(2, dtype=np.uint8), "u16": np.arange(2, dtype=np.uint16),
        "u32": np.arange(2, dtype=np.uint32), "u64": np.arange(2, dtype=np.uint64), "b": np.array([True, False])}}
names = list(cols)
types = [mstype.float32, mstype.float64, mstype.float16, mstype.int8, mstype.int16, mstype.int32, mstype.int64,
         mstype.uint8, mstype.uint16, mstype.uint32, mstype.uint64, mstype.bool_]
d = ds.NumpySlicesDataset(cols, shuffle=False)
row = next(d.create_tuple_iterator())
drow = next(d.create_dict_iterator())
RESULT = []
for k, (name, t) in enumerate(zip(names, types)):
    v, dv = row[k], drow[name]
    RESULT.append([name, type(v).__name__, str(v.dtype), repr(v.dtype), [v.dtype == u for u in types],
                   str(dv.dtype), dv.dtype == t, str(v.asnumpy().dtype), type(v.asnumpy()).__name__])
'''


def test_tensor_dtype_same_as_mindspore():
    theirs = run_ms(_DTYPE_PROGRAM.format(mod="mindspore.common.dtype"))
    env = {}
    exec("import numpy as np\nimport headrace.dataset as ds\n" + _DTYPE_PROGRAM.format(mod="headrace.common.dtype"), env)
    ours = env["RESULT"]
    assert len(theirs) == 12
    assert ours == theirs
    assert theirs[0][:4] == ["f32", "Tensor", "Float32", "mindspore.float32"]


# -- item 4: sampler chains on MindDataset, dataset[i], MindDataset + PaddedDataset shards ---------

_CHAINS = [  # samplers outermost first: the first is given to MindDataset, each later one a child
    "ds.RandomSampler(), ds.DistributedSampler(4, 2)",
    "ds.RandomSampler(), ds.DistributedSampler(4, 2, shuffle=False)",
    "ds.DistributedSampler(4, 2), ds.RandomSampler()",
    "ds.DistributedSampler(4, 2, shuffle=False), ds.RandomSampler()",
    "ds.SequentialSampler(1, 2), ds.DistributedSampler(4, 1, shuffle=False)",
    "ds.SequentialSampler(1, 2), ds.DistributedSampler(4, 1)",
    "ds.DistributedSampler(4, 1, shuffle=False), ds.SequentialSampler(1, 8)",
    "ds.RandomSampler(), ds.SequentialSampler(2, 6)",
    "ds.SequentialSampler(1, 5), ds.RandomSampler()",
    "ds.RandomSampler(), ds.RandomSampler()",
    "ds.RandomSampler(), ds.SequentialSampler(1, 8), ds.RandomSampler()",
    "ds.DistributedSampler(2, 1, shuffle=False), ds.RandomSampler(), ds.SequentialSampler(2, 8)",
    "ds.RandomSampler(), ds.DistributedSampler(2, 1, shuffle=False), ds.RandomSampler()",
    "ds.SubsetRandomSampler([0, 1, 2, 3, 4, 5]), ds.DistributedSampler(2, 0, shuffle=False)",
    "ds.DistributedSampler(2, 0, shuffle=False), ds.SubsetRandomSampler([0, 1, 2, 3, 4, 5])",
    "ds.SubsetSampler([0, 1, 2, 3]), ds.RandomSampler()",
    "ds.RandomSampler(), ds.SubsetSampler([5, 1, 7, 3])",
    "ds.DistributedSampler(5, 4, shuffle=False), ds.RandomSampler()",
    "ds.DistributedSampler(4, 1, shuffle=False, num_samples=2), ds.RandomSampler()",
    "ds.SequentialSampler(1, 5), ds.SequentialSampler(3, 8)",
]

_MIND_PROGRAM = INT_ROWS + '''
path = INPUTS["path"]
def chain(text):
    samplers = eval("[" + text + "]")
    for parent, child in zip(samplers, samplers[1:]):
        parent.add_child(child)
    return samplers[0]
def P(k):
    return ds.PaddedDataset([{"id": np.array(-1 - i, np.int64)} for i in range(k)])
def M(**kw):
    return ds.MindDataset(path, **kw)
def getitem(d):
    return [[int(v) for v in d[i]] for i in range(d.get_dataset_size())]
RESULT = {}
for seed in (0, 3):
    ds.config.set_seed(seed)
    RESULT[f"chains_{seed}"] = [rows(M(sampler=chain(t)), 3) for t in INPUTS["chains"]]
    d = M(sampler=ds.RandomSampler())
    d.add_sampler(ds.DistributedSampler(4, 2, shuffle=False))
    RESULT[f"add_sampler_{seed}"] = rows(d, 2)
    RESULT[f"getitem_{seed}"] = [getitem(M()), getitem(M(shuffle=False, num_shards=3, shard_id=1)),
                                 getitem(M(sampler=ds.SubsetRandomSampler([5, 3, 1, 8])))]
    RESULT[f"getitem_is_iterator_order_{seed}"] = [rows(M())[0], rows(M(sampler=ds.SubsetRandomSampler([5, 3, 1, 8])))[0]]
    RESULT[f"mind_split_{seed}"] = [
        [rows(p, 4) for p in M(shuffle=False).split([0.75, 0.25])],
        [rows(p, 3) for p in M().split([0.75, 0.25])],
        [rows(p, 2) for p in M(shuffle=False).split([0.75, 0.25], randomize=False)],
        [rows(q, 2) for q in M(shuffle=False).split([0.75, 0.25])[0].split([0.5, 0.5])],
        [rows(p, 2) for p in M(sampler=chain("ds.SequentialSampler(1, 10), ds.RandomSampler()")).split([3, 7])]]
    RESULT[f"mind_split_num_samples_{seed}"] = [rows(p, 2) for p in M(shuffle=False, num_samples=8).split([0.5, 0.5])]
    part = M(shuffle=False).split([0.75, 0.25])[0]
    shards = []
    for k in range(2):  # a distributed sampler given to a part shards the part's rows, anew each epoch
        for shuffle in (True, False):
            part.use_sampler(ds.DistributedSampler(2, k, shuffle=shuffle))
            shards.append(rows(part, 3))
    part.add_sampler(ds.RandomSampler())
    shards.append(rows(part, 2))
    RESULT[f"mind_split_sampler_{seed}"] = shards
RESULT["padded"] = [sharded(lambda: M(shuffle=False) + P(4), 8), sharded(lambda: M(shuffle=False) + P(3), 5),
                    sharded(lambda: M() + P(4), 4), sharded(lambda: P(2) + M(shuffle=False), 8),
                    sharded(lambda: P(3) + M(shuffle=False), 5), sharded(lambda: M(shuffle=False) + M(shuffle=False), 5)]
'''


@pytest.fixture(scope="module")
def mind_file(tmp_path_factory):
    return numbered_mindrecord(tmp_path_factory.mktemp("chains"))


def test_mindrecord_sampler_chains_getitem_and_padded_shards_same_as_mindspore(mind_file):
    inputs = {"path": mind_file, "chains": _CHAINS}
    theirs = run_ms(_MIND_PROGRAM, inputs=inputs)
    import numpy as np  # noqa: PLC0415

    import headrace.dataset as ds  # noqa: PLC0415
    env = {"ds": ds, "np": np, "INPUTS": inputs}
    exec(_MIND_PROGRAM, env)
    ours = env["RESULT"]
    assert sorted(ours) == sorted(theirs)
    # the figures: a random order sharded by a distributed parent; the padded shards
    assert theirs["add_sampler_0"] == [[10, 4, 1], [10, 4, 1]]
    assert theirs["padded"][0] == [[0, 1], [2, 3], [4, 5], [6, 7], [8, -1], [9, -2], [10, -3], [11, -4]]
    for key in sorted(theirs):
        if key.startswith("chains"):
            for text, a, b in zip(_CHAINS, ours[key], theirs[key]):
                assert a == b, f"{key} {text}: ours {a}, MindSpore {b}"
        assert ours[key] == theirs[key], key
    for seed in (0, 3):
        order, subset_order = theirs[f"getitem_is_iterator_order_{seed}"]
        assert [r[0] for r in theirs[f"getitem_{seed}"][0]] == order
        assert [r[0] for r in theirs[f"getitem_{seed}"][2]] == subset_order
