"""Random access (``dataset[i]``) and Python dicts in rows, against MindSpore 2.10: the same
program runs on both sides and reports values with their types spelled out."""
import pytest

from tests.oracles.oracle import run_headrace, run_ms

PROGRAM = r'''
def desc(x):
    if isinstance(x, dict):
        return ["dict", [[k, desc(v)] for k, v in x.items()]]
    if isinstance(x, (list, tuple)):
        return [type(x).__name__, [desc(v) for v in x]]
    if hasattr(x, "asnumpy"):
        a = x.asnumpy()
        return ["Tensor", a.dtype.str, a.tolist()]
    if isinstance(x, np.ndarray):
        return ["ndarray", x.dtype.str, x.tolist()]
    return [type(x).__name__, repr(x)]

def err(e):
    kind = "RuntimeError" if isinstance(e, RuntimeError) else type(e).__name__
    return ["error", kind, str(e)]

def attempt(fn):
    try:
        return fn()
    except Exception as e:
        return err(e)

class RA:
    def __getitem__(self, i):
        return (np.array([i]), np.array([i * 10]))
    def __len__(self):
        return 6

def gen():
    for i in range(3):
        yield (np.array(i),)

def first(d):
    return [desc(r) for r in d.create_tuple_iterator(num_epochs=1, output_numpy=True)]

def access(make, seed=None, n=7):
    if seed is not None:
        ds.config.set_seed(seed)
    d = make()
    # Iterate first, as MindSpore's own tests do: there, random access on a shuffled
    # DistributedSampler advances the order later iterators read (headrace does not copy that).
    rows = first(d)
    return {"getitem": [attempt(lambda: desc(d[i])) for i in range(n)], "iter": rows}

def random_access():
    out = {}
    out["plain"] = access(lambda: ds.GeneratorDataset(RA(), ["a", "b"], shuffle=False))
    out["shuffle"] = access(lambda: ds.GeneratorDataset(RA(), ["a", "b"], shuffle=True), seed=5)
    out["shards"] = access(lambda: ds.GeneratorDataset(RA(), ["a", "b"], num_shards=4, shard_id=3, shuffle=False))
    out["shards_shuffled"] = access(lambda: ds.GeneratorDataset(RA(), ["a", "b"], num_shards=3, shard_id=0,
                                                                 shuffle=True, num_samples=4), seed=200)
    out["num_samples"] = access(lambda: ds.GeneratorDataset(RA(), ["a", "b"], shuffle=False, num_samples=3))
    out["subset"] = access(lambda: ds.GeneratorDataset(RA(), ["a", "b"], sampler=ds.SubsetSampler([4, 0, 2])))
    out["sequential"] = access(lambda: ds.GeneratorDataset(RA(), ["a", "b"], sampler=ds.SequentialSampler(2, 3)))
    out["list"] = access(lambda: ds.GeneratorDataset([5, 6, 7], ["a"], shuffle=False), n=4)
    out["slices"] = access(lambda: ds.NumpySlicesDataset({"a": [1, 2, 3], "b": [4.5, 5.5, 6.5]}, shuffle=False), n=4)
    d = ds.GeneratorDataset(RA(), ["a", "b"], shuffle=False)
    out["bad_index"] = [attempt(lambda: d["x"]), attempt(lambda: d[1.5]), attempt(lambda: d[-1])]
    out["no_getitem"] = attempt(lambda: ds.GeneratorDataset(gen, ["a"])[0])
    out["map"] = attempt(lambda: d.map(lambda x: x, input_columns=["a"])[0])
    out["batch"] = attempt(lambda: d.batch(2)[0])
    return out

DICT_ROWS = [(np.array([i]), {"a": np.array([i, i]), "b": i * 1.5, "s": "n%d" % i, "t": (i, 2), "l": [i],
                              "n": None, "by": b"x", "d": {"x": i}}) for i in range(4)]

def rows_of(rows, cols, build=None, numpy=True, kind="tuple"):
    def g():
        for r in rows:
            yield r
    try:
        d = ds.GeneratorDataset(g, cols, shuffle=False)
        if build is not None:
            d = build(d)
        make = d.create_tuple_iterator if kind == "tuple" else d.create_dict_iterator
        return [desc(r) for r in make(num_epochs=1, output_numpy=numpy)]
    except Exception as e:
        return err(e)

def dicts():
    out = {}
    for numpy_ in (True, False):
        for kind in ("tuple", "dict"):
            out["rows_%s_%s" % (numpy_, kind)] = rows_of(DICT_ROWS, ["x", "d"], numpy=numpy_, kind=kind)
    out["map_returns_dict"] = rows_of(DICT_ROWS, ["x", "d"], lambda d: d.map(lambda x: {"m": x * 2, "k": 3},
                                                                               input_columns=["x"]))
    out["map_sees_raw"] = rows_of(DICT_ROWS, ["x", "d"], lambda d: d.map(
        lambda v: {"types": [type(v["b"]).__name__, type(v["s"]).__name__, type(v["t"]).__name__]},
        input_columns=["d"]))
    flat = [(np.array([i]), {"a": np.array([i, i]), "b": [1, 2.5][i % 2], "s": "x" * (i + 1), "t": (i, i)})
            for i in range(5)]
    for numpy_ in (True, False):
        out["batch_%s" % numpy_] = rows_of(flat, ["x", "d"], lambda d: d.batch(2), numpy=numpy_)
    out["batch_key_order"] = rows_of([({"a": 1, "b": 2},), ({"b": 3, "a": 4},)], ["d"], lambda d: d.batch(2))
    out["batch_nested"] = rows_of([({"a": {"x": 1}},), ({"a": {"x": 2}},)], ["d"], lambda d: d.batch(2))
    out["batch_ragged"] = rows_of([({"a": np.array([1, 2])},), ({"a": np.array([1])},)], ["d"], lambda d: d.batch(2))
    out["batch_none"] = rows_of([({"v": None},), ({"v": None},)], ["d"], lambda d: d.batch(2))
    zipped = [(np.array(i), {"a": i}) for i in range(4)]
    pbms = {
        "lod": lambda x, d, i: (x, d),
        "dict_dict": lambda x, d, i: ({"k": 1}, {"k": 2}),
        "arr_dict": lambda x, d, i: (np.array([1, 2, 3]), {"k": 1}),
        "list_lod": lambda x, d, i: ([5, 6], d),
        "dict_list": lambda x, d, i: ({"k": 1}, [1]),
        "dict_lod": lambda x, d, i: ({"k": 1}, d),
        "short_arr_lod": lambda x, d, i: (np.array([1]), d),
        "long_lod": lambda x, d, i: (x, d + d[:1]),
    }
    for name, f in pbms.items():
        out["pbm_" + name] = rows_of(zipped, ["x", "d"], lambda d, f=f: d.batch(2, per_batch_map=f))
    d = ds.GeneratorDataset(lambda: iter([(np.array([i]), {"a": i}) for i in range(4)]), ["x", "d"], shuffle=False)
    out["types_shapes"] = [[str(t) for t in d.output_types()], d.output_shapes(), d.batch(2).output_shapes()]
    out["unsupported"] = rows_of([({"a": np.array([1, None], dtype=object)},)], ["d"])
    return out

RESULT = {"random_access": random_access(), "dicts": dicts()}
'''


@pytest.fixture(scope="module")
def both():
    import headrace.dataset as ds
    old = ds.config.get_seed()
    try:
        return run_headrace(PROGRAM), run_ms(PROGRAM)
    finally:
        ds.config.set_seed(old)


def _same(ours, theirs, keys):
    """Equal values; errors equal in kind and carrying MindSpore's key text (``keys[name]``)."""
    if isinstance(theirs, list) and theirs[:1] == ["error"]:
        assert isinstance(ours, list) and ours[:2] == theirs[:2], (ours, theirs)
        return
    assert ours == theirs


RA_CASES = ["plain", "shuffle", "shards", "shards_shuffled", "num_samples", "subset", "sequential", "list", "slices"]


@pytest.mark.compat
@pytest.mark.parametrize("name", RA_CASES)
def test_random_access_matches(both, name):
    ours, theirs = both[0]["random_access"][name], both[1]["random_access"][name]
    assert ours["iter"] == theirs["iter"]
    assert len(ours["getitem"]) == len(theirs["getitem"])
    for o, t in zip(ours["getitem"], theirs["getitem"]):
        if t[:1] == ["error"]:
            assert o[:2] == t[:2]
            assert "exceeded the number of data samples." in o[2] and "exceeded the number of data samples." in t[2]
        else:
            assert o == t


@pytest.mark.compat
def test_random_access_errors_match(both):
    ours, theirs = both[0]["random_access"], both[1]["random_access"]
    for o, t in zip(ours["bad_index"][:1], theirs["bad_index"][:1]):
        assert o == t  # TypeError with MindSpore's text
    assert ours["bad_index"][1][:2] == theirs["bad_index"][1][:2] == ["error", "TypeError"]
    assert ours["bad_index"][2][:2] == theirs["bad_index"][2][:2] == ["error", "RuntimeError"]
    assert "Index [-1] exceeded the number of data samples." in ours["bad_index"][2][2]
    assert ours["no_getitem"] == theirs["no_getitem"] == ["error", "RuntimeError", "Dataset don't support randomized access."]
    assert ours["map"] == theirs["map"] == ["error", "TypeError", "'MapDataset' object is not subscriptable"]
    assert ours["batch"] == theirs["batch"] == ["error", "TypeError", "'BatchDataset' object is not subscriptable"]


DICT_CASES = ["rows_True_tuple", "rows_True_dict", "rows_False_tuple", "rows_False_dict", "map_returns_dict",
              "map_sees_raw", "batch_True", "batch_False", "batch_key_order", "pbm_lod", "pbm_dict_dict",
              "pbm_arr_dict", "pbm_list_lod", "types_shapes"]


@pytest.mark.compat
@pytest.mark.parametrize("name", DICT_CASES)
def test_dict_rows_match(both, name):
    assert both[0]["dicts"][name] == both[1]["dicts"][name]


@pytest.mark.compat
@pytest.mark.parametrize("name,key", [
    ("batch_nested", "Batch: failed to create a NumPy array with primitive types for the dictionary objects in "
                     "column 0, key: 'a'."),
    ("batch_none", "primitive types for the dictionary objects in column 0, key: 'v'."),
    ("batch_ragged", "Failed to batch Python dictionary: ValueError: setting an array element with a sequence."),
    ("pbm_dict_list", "mismatched types returned from per_batch_map function"),
    ("pbm_dict_lod", "mismatched types returned from per_batch_map function"),
    ("pbm_short_arr_lod", "Invalid data, column: x expects: 2 rows returned from 'per_batch_map', got: 1"),
    ("pbm_long_lod", "Invalid data, column: d expects: 2 rows returned from 'per_batch_map', got: 3"),
    ("unsupported", "A NumPy array of unsupported type detected: object."),
])
def test_dict_errors_match(both, name, key):
    ours, theirs = both[0]["dicts"][name], both[1]["dicts"][name]
    assert theirs[:2] == ours[:2]
    assert key in theirs[2] and key in ours[2]
