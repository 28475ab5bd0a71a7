"""Pipeline error texts and iterator output types: headrace keeps what MindSpore users look for."""

import pytest

from tests.oracles.oracle import run_headrace, run_ms

# Each case builds `d` and reads it; both sides report the exception type and message.
CASES = {
    "column_count": "d = ds.GeneratorDataset(lambda: ((np.array(1), np.array(2)) for _ in range(2)), ['a'])",
    "len_mismatch": ("class S:\n    def __len__(self):\n        return 5\n    def __iter__(self):\n"
                     "        return iter([np.array(i) for i in range(3)])\nd = ds.GeneratorDataset(S(), ['a'])"),
    "user_map_error": ("def bad(x):\n    if x == 2:\n        raise ValueError('boom at 2')\n    return x\n"
                       "d = ds.NumpySlicesDataset(list(range(4)), shuffle=False).map(bad)"),
    "ragged_batch": "d = ds.GeneratorDataset(lambda: (np.arange(i) for i in (1, 2)), ['v']).batch(2)",
}

PROGRAM = """
def read(code):
    env = {"ds": ds, "np": np}
    try:
        exec(code, env)
        list(env["d"].create_tuple_iterator(output_numpy=True))
    except Exception as e:
        return [type(e).__name__, str(e)]
    return ["no error", ""]

def past_epochs():
    it = ds.NumpySlicesDataset([1, 2], shuffle=False).create_tuple_iterator(num_epochs=1)
    list(it)
    try:
        next(it)
    except Exception as e:
        return [type(e).__name__, str(e)]

def types():
    d = ds.NumpySlicesDataset({"a": [1, 2], "s": ["x", "y"], "f": [1.5, 2.5]}, shuffle=False)
    row = next(iter(d))
    drow = next(iter(d.create_dict_iterator()))
    return [[type(v).__name__ for v in row], sorted((k, type(v).__name__) for k, v in drow.items()),
            [type(v).__name__ for v in next(iter(d.create_tuple_iterator(output_numpy=True)))]]

RESULT = {"errors": {k: read(c) for k, c in INPUTS.items()}, "past_epochs": past_epochs(), "types": types()}
"""


@pytest.fixture(scope="module")
def both():
    return run_headrace(PROGRAM, CASES), run_ms(PROGRAM, inputs=CASES)


def _error_lines(msg):
    """The lines users read: the headline and the [ERROR] lines, with locations normalised."""
    return [line for line in msg.splitlines() if line.startswith(("[ERROR]", "Exception thrown"))]


@pytest.mark.compat
@pytest.mark.parametrize("name", sorted(CASES))
def test_error_type_and_key_text(both, name):
    ours, theirs = both
    (otype, omsg), (ttype, tmsg) = ours["errors"][name], theirs["errors"][name]
    assert otype == "PipelineError" and ttype == "RuntimeError"  # ours subclasses RuntimeError
    assert omsg.splitlines()[0] == tmsg.splitlines()[0]  # same headline
    assert "- Dataset Pipeline Error Message: " in omsg
    if "- Python Call Stack: " in tmsg:
        assert "- Python Call Stack: " in omsg
    key = {
        "column_count": "the size of column_names is:1 and number of returned NumPy array is:2",
        "len_mismatch": "The actual amount of data read from generator 3 is different from generator.len 5",
        "user_map_error": "ValueError: boom at 2",
        "ragged_batch": "Cannot batch tensors with different shapes in column 0",
    }[name]
    assert key in tmsg and key in omsg


@pytest.mark.compat
def test_reading_past_epochs(both):
    ours, theirs = both
    assert theirs["past_epochs"][0] == "RuntimeError"
    text = "EOF buffer encountered. User tries to fetch data beyond the specified number of epochs."
    assert text in theirs["past_epochs"][1] and text in ours["past_epochs"][1]


@pytest.mark.compat
def test_iterator_value_types(both):
    ours, theirs = both
    rename = {"Tensor": "Tensor", "ndarray": "ndarray"}
    assert [[rename.get(t, t) for t in row] if isinstance(row, list) and row and isinstance(row[0], str) else row
            for row in ours["types"]] == theirs["types"]


# Argument errors raised when a pipeline is built: same exception type and the same text, except
# that a class MindSpore defines is named by its own module path.
ARG_CASES = {
    "workers_str": "ds.NumpySlicesDataset([1, 2], ['a'], num_parallel_workers='a')",
    "workers_bool": "ds.NumpySlicesDataset([1, 2], ['a'], num_parallel_workers=True)",
    "shards_bool": "ds.NumpySlicesDataset([1, 2], ['a'], num_shards=True, shard_id=0)",
    "column_names_int": "ds.NumpySlicesDataset([1, 2], column_names=3)",
    "drop_remainder_int": "ds.NumpySlicesDataset([1, 2], ['a']).batch(2, drop_remainder=1)",
    "buffer_size_str": "ds.NumpySlicesDataset([1, 2], ['a']).shuffle('x')",
    "buffer_size_bool": "ds.NumpySlicesDataset([1, 2], ['a']).shuffle(True)",
    "take_bool": "ds.NumpySlicesDataset([1, 2], ['a']).take(True)",
    "project_item": "ds.NumpySlicesDataset([1, 2], ['a']).project(['a', 3])",
    "project_int": "ds.NumpySlicesDataset([1, 2], ['a']).project(3)",
    "save_name": "ds.NumpySlicesDataset([1, 2], ['a']).save(3)",
    "num_samples_str": "ds.ImageFolderDataset('/tmp', num_samples='3')",
}

ARG_PROGRAM = """
def build(code):
    try:
        eval(code, {"ds": ds, "np": np})
    except Exception as e:
        return [type(e).__name__, str(e)]
    return ["no error", ""]

RESULT = {k: build(c) for k, c in INPUTS.items()}
"""


@pytest.fixture(scope="module")
def arg_errors():
    return run_headrace(ARG_PROGRAM, ARG_CASES), run_ms(ARG_PROGRAM, inputs=ARG_CASES)


@pytest.mark.compat
@pytest.mark.parametrize("name", sorted(ARG_CASES))
def test_argument_error_texts(arg_errors, name):
    ours, theirs = arg_errors
    assert theirs[name][0] == "TypeError"
    assert ours[name] == theirs[name]
