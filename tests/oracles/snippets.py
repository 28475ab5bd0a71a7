"""Run the same pipeline-building snippet under MindSpore (oracle) and headrace; compare results.

A snippet is Python text that sees ``ds`` and ``np`` and assigns the dataset to ``d`` (and may set
``EPOCHS``). ``describe(d)`` reads it the same way on both sides.
"""
import textwrap

DESCRIBE = '''
def describe(d, epochs=1):
    out = {"cols": d.get_col_names(), "size": d.get_dataset_size(), "rows": []}
    it = d.create_tuple_iterator(num_epochs=epochs, output_numpy=True)
    for _ in range(epochs):
        out["rows"].append([[np.asarray(v) for v in r] for r in it])
    return out

def run_snippet(code, seed=None):
    if seed is not None:
        ds.config.set_seed(seed)
    env = {"ds": ds, "np": np, "EPOCHS": 1}
    exec(code, env)
    try:
        return describe(env["d"], env["EPOCHS"])
    except Exception as e:
        return {"error": type(e).__name__, "msg": str(e)}
'''


# Helpers for snippets over a one-column dataset of ints, and for the local tests that pin their
# results (run them with ``local_functions``).
INT_ROWS = '''
def rows(d, epochs=1):
    it = d.create_tuple_iterator(output_numpy=True, num_epochs=epochs)
    return [[int(r[0]) for r in it] for _ in range(epochs)]
def sharded(make, n):
    out = []
    for k in range(n):
        d = make()
        d.use_sampler(ds.DistributedSampler(n, k, shuffle=False))
        out.append(rows(d)[0])
    return out
'''

# User samplers (subclasses of ds.Sampler) as MindSpore's users write them: Rev reads the rows
# backwards, Cnt gives [k, k + 1, resets] on its k-th iteration, WithLen says 4 but yields 6, Big
# yields 0..7; chain(parent, child) adds the child.
USER_SAMPLERS = """
class Rev(ds.Sampler):
    def __iter__(self):
        return iter(range(self.dataset_size - 1, -1, -1))
class Cnt(ds.Sampler):
    def __init__(self, num_samples=None):
        super().__init__(num_samples)
        self.k = 0
        self.resets = 0
    def __iter__(self):
        self.k += 1
        return iter([self.k, self.k + 1, self.resets])
    def reset(self):
        self.resets += 1
class WithLen(ds.Sampler):
    def __iter__(self):
        return iter([1, 2, 3, 4, 5, 6])
    def __len__(self):
        return 4
class Big(ds.Sampler):
    def __iter__(self):
        return iter(range(8))
def chain(parent, child):
    parent.add_child(child)
    return parent
"""


def oracle_program(snippets):
    """Program text for run_ms: runs every snippet, RESULT is the list of descriptions."""
    return DESCRIBE + "\nRESULT = [run_snippet(c, s) for c, s in INPUTS]\n"


def run_local(code, seed=None):
    return local_functions(DESCRIBE)["run_snippet"](textwrap.dedent(code), seed)


def local_functions(text):
    """The names that the snippet text ``text`` defines, run with ``ds`` bound to headrace.dataset
    and ``np`` to NumPy, as a dict."""
    import numpy as np  # noqa: PLC0415
    import headrace.dataset as ds  # noqa: PLC0415
    env = {"ds": ds, "np": np}
    exec(text, env)
    return env


def assert_same(ours, theirs, label):
    assert ("error" in ours) == ("error" in theirs), f"{label}: ours={_short(ours)} theirs={_short(theirs)}"
    if "error" in theirs:
        return
    assert ours["cols"] == theirs["cols"], label
    assert ours["size"] == theirs["size"], label
    assert len(ours["rows"]) == len(theirs["rows"]), label
    for e, (a, b) in enumerate(zip(ours["rows"], theirs["rows"])):
        assert len(a) == len(b), f"{label}: epoch {e} has {len(a)} rows, MindSpore {len(b)}"
        for i, (ra, rb) in enumerate(zip(a, b)):
            for c, (x, y) in enumerate(zip(ra, rb)):
                where = f"{label}: epoch {e} row {i} column {c}"
                assert x.dtype == y.dtype, f"{where}: dtype {x.dtype} vs {y.dtype}"
                assert x.shape == y.shape, f"{where}: shape {x.shape} vs {y.shape}"
                assert x.tolist() == y.tolist(), f"{where}: {x.tolist()} vs {y.tolist()}"


def _short(d):
    return {k: (v if k != "rows" else "...") for k, v in d.items()}
