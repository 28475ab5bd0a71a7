"""Dataset.save: a file saved by headrace reads in MindSpore exactly like MindSpore's own, and back."""
import pytest

from tests.oracles.oracle import run_ms
from tests.oracles.snippets import assert_same, run_local

PIPELINE = ("d = ds.NumpySlicesDataset({'a': np.arange(6, dtype=np.int32), 'u': np.arange(6, dtype=np.uint32), "
            "'f': np.arange(6, dtype=np.float16), 'v': np.ones((6, 2, 3), np.uint8), 's': ['x', 'yy', 'z', '', 'w', 'q'], "
            "'b': [b'a', b'bc', b'', b'd', b'e', b'f']}, shuffle=False)")


@pytest.mark.compat
def test_saved_files_read_the_same_both_ways(tmp_path):
    ours = str(tmp_path / "headrace.mindrecord")
    theirs = str(tmp_path / "mindspore.mindrecord")
    run_local(PIPELINE + f"\nd.save({ours!r}, num_files=1)\nd = ds.NumpySlicesDataset([1], shuffle=False)")
    code = f"""
env = {{"ds": ds, "np": np}}
exec({PIPELINE!r}, env)
env["d"].save({theirs!r})
from mindspore.mindrecord import FileReader
def read(path):
    r = FileReader(path)
    out = [r.schema(), [sorted(row.items()) for row in r.get_next()]]
    r.close()
    return out
"""
    results = run_ms(code + """
exec(DESCRIBE_SRC, globals())
RESULT = {"read_theirs": read(INPUTS[1]), "read_ours": read(INPUTS[0]),
          "ds_theirs": describe(ds.MindDataset(INPUTS[1], shuffle=False)),
          "ds_ours": describe(ds.MindDataset(INPUTS[0], shuffle=False))}
""".replace("DESCRIBE_SRC", repr(_describe_src())), inputs=[ours, theirs])
    assert _norm(results["read_ours"]) == _norm(results["read_theirs"])
    assert_same(results["ds_ours"], results["ds_theirs"], "MindSpore reading both files")
    mine = run_local(f"d = ds.MindDataset({theirs!r}, shuffle=False)")
    assert_same(mine, results["ds_theirs"], "headrace reading MindSpore's file")


def _describe_src():
    from tests.oracles.snippets import DESCRIBE
    return DESCRIBE


def _norm(value):
    """Arrays become (dtype, shape, values) so nested results compare with ==."""
    import numpy as np
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tolist())
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    return value
