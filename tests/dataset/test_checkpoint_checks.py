"""A state restores only into its own pipeline, and a corrupted state is refused field by field."""
import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import headrace.dataset as ds
from tests.helpers import plain

FP_MISMATCH = "set_state: the state comes from a different pipeline: its fingerprint is "


def src(n=100):
    return ds.NumpySlicesDataset({"x": list(range(n)), "y": [i * 10 for i in range(n)]}, shuffle=False)


def state_after(dataset, steps, num_epochs=-1):
    it = dataset.create_tuple_iterator(num_epochs=num_epochs, output_numpy=True)
    for _ in range(steps):
        next(it)
    s = json.loads(json.dumps(it.get_state()))
    it.stop()
    return s


def restore(dataset, state, num_epochs=-1):
    it = dataset.create_tuple_iterator(num_epochs=num_epochs, output_numpy=True)
    try:
        it.set_state(state)
    finally:
        it.stop()


# ---- item 9: a state from another pipeline ----------------------------------------------------

def test_batch_10_state_is_refused_by_a_batch_20_pipeline():
    ds.config.set_seed(3)
    state = state_after(src().batch(10), 2)
    with pytest.raises(ValueError) as e:
        restore(src().batch(20), state)
    msg = str(e.value)
    assert msg.startswith(FP_MISMATCH + repr(state["fingerprint"]) + ", this pipeline's is '")
    assert msg.endswith("A state restores only into a pipeline of the same structure (the same ops, sources "
                        "and their sizes, samplers, batch sizes, drop_remainder, shuffle buffers and seeds "
                        "(ds.config.set_seed when the pipeline was made), repeat/take/skip counts and columns).")


OTHERS = {
    "batch_size": lambda: src().batch(20),
    "drop_remainder": lambda: src().batch(10, drop_remainder=True),
    "shuffle_buffer": lambda: src().shuffle(9).batch(10),
    "extra_shuffle": lambda: src().shuffle(8).batch(10),
    "sampler": lambda: ds.NumpySlicesDataset({"x": list(range(100)), "y": [i * 10 for i in range(100)]},
                                             shuffle=True).batch(10),
    "num_samples": lambda: ds.NumpySlicesDataset({"x": list(range(100)), "y": [i * 10 for i in range(100)]},
                                                 shuffle=False, num_samples=90).batch(10),
    "source_rows": lambda: src(101).batch(10),
    "columns": lambda: src().project(["y", "x"]).batch(10),
    "repeat": lambda: src().repeat(2).batch(10),
    "take": lambda: src().take(50).batch(10),
    "map_outputs": lambda: src().map(lambda x: (x, x), input_columns="x", output_columns=["a", "b"]).batch(10),
}


@pytest.mark.parametrize("name", sorted(OTHERS))
def test_state_is_refused_by_a_pipeline_of_another_structure(name):
    ds.config.set_seed(3)
    state = state_after(src().batch(10), 2)
    with pytest.raises(ValueError, match="^" + FP_MISMATCH):
        restore(OTHERS[name](), state)


def test_shuffle_made_under_another_config_seed_is_another_pipeline():
    ds.config.set_seed(3)
    state = state_after(src().shuffle(8).batch(10), 2)
    ds.config.set_seed(5489)  # unseeded: this shuffle's order is not the saved one's
    with pytest.raises(ValueError, match="^" + FP_MISMATCH):
        restore(src().shuffle(8).batch(10), state)
    ds.config.set_seed(3)
    restore(src().shuffle(8).batch(10), state)


def test_same_structure_with_another_function_or_worker_count_restores():
    """Functions and execution settings are not structure: editing a map or changing its workers
    keeps the checkpoint usable (the rows' positions do not move)."""
    ds.config.set_seed(3)
    state = state_after(src().map(lambda x: x + 1, input_columns="x").shuffle(8).batch(10), 3)
    other = src().map(lambda x: x + 2, input_columns="x", num_parallel_workers=2).shuffle(8).batch(10)
    it = other.create_tuple_iterator(output_numpy=True)
    it.set_state(state)
    got = [plain(r[1]) for r in it]
    it.stop()
    full = src().map(lambda x: x + 2, input_columns="x").shuffle(8).batch(10).create_tuple_iterator(
        output_numpy=True, num_epochs=1)
    assert got == [plain(r[1]) for r in full][3:]


def test_fingerprint_is_the_same_in_another_process():
    code = ("import headrace.dataset as ds; ds.config.set_seed(3)\n"
            "d = ds.NumpySlicesDataset({'x': list(range(100)), 'y': [i * 10 for i in range(100)]}, "
            "shuffle=False).shuffle(8).batch(10)\n"
            "print(d.create_tuple_iterator().get_state()['fingerprint'])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    ds.config.set_seed(3)
    assert out.stdout.strip() == state_after(src().shuffle(8).batch(10), 0)["fingerprint"]


def test_state_without_fingerprint_from_an_older_version_is_refused():
    state = state_after(src().batch(10), 2)
    del state["fingerprint"]
    with pytest.raises(ValueError) as e:
        restore(src().batch(10), state)
    assert str(e.value) == (
        "set_state: the state has no 'fingerprint': it was saved by an older headrace that did not "
        "record the pipeline's structure, so it cannot be checked against this pipeline and is "
        "refused. Save a new state with get_state().")


# ---- item 11: corrupted states ----------------------------------------------------------------

def shuffled():
    return src().shuffle(8).batch(10)


def uninterrupted_rest(state):
    """The rows of the uninterrupted 2-epoch run of ``shuffled()`` (seed 5) from ``state``'s epoch and step."""
    ds.config.set_seed(5)
    full = shuffled().create_tuple_iterator(num_epochs=2, output_numpy=True)
    epochs = [[[plain(v) for v in r] for r in full] for _ in range(2)]
    full.stop()
    return epochs[state["epoch"]][state["step"]:]


def good_state():
    ds.config.set_seed(5)
    return state_after(shuffled(), 2)


RANGE = {
    "seed": "an int in [0, 4294967295]",
    "epoch": "an int in [0, 1048576] (an iterator with num_epochs=-1; give num_epochs to restore a later epoch)",
    "step": "an int in [0, 9007199254740992]",
}

CORRUPT = [
    # (path, value, error type, exact message)
    (("epoch",), 10**9, ValueError, f"set_state: state['epoch'] must be {RANGE['epoch']}, but got 1000000000."),
    (("epoch",), -1, ValueError, f"set_state: state['epoch'] must be {RANGE['epoch']}, but got -1."),
    (("epoch",), 1.0, TypeError, f"set_state: state['epoch'] must be {RANGE['epoch']}, but got 1.0 of type float."),
    (("epoch",), True, TypeError, f"set_state: state['epoch'] must be {RANGE['epoch']}, but got True of type bool."),
    (("step",), -3, ValueError, f"set_state: state['step'] must be {RANGE['step']}, but got -3."),
    (("step",), 2.5, TypeError, f"set_state: state['step'] must be {RANGE['step']}, but got 2.5 of type float."),
    (("step",), "2", TypeError, f"set_state: state['step'] must be {RANGE['step']}, but got '2' of type str."),
    (("seed",), None, TypeError, f"set_state: state['seed'] must be {RANGE['seed']}, but got None of type NoneType."),
    (("seed",), 2**40, ValueError, f"set_state: state['seed'] must be {RANGE['seed']}, but got {2**40}."),
    (("seed_globals",), 1, TypeError, "set_state: state['seed_globals'] must be True or False, but got 1."),
    (("seed_globals",), None, TypeError, "set_state: state['seed_globals'] must be True or False, but got None."),
    (("ops",), None, TypeError, "set_state: state['ops'] must be a dict from plan path to that op's state, but got "
                                "None of type NoneType."),
    (("ops",), [], TypeError, "set_state: state['ops'] must be a dict from plan path to that op's state, but got "
                              "[] of type list."),
    (("fingerprint",), 7, TypeError, "set_state: state['fingerprint'] must be a str from get_state(), but got 7."),
    (("ops", "Batch/Shuffle", "pass"), -1, ValueError,
     "set_state: state['ops']['Batch/Shuffle']['pass'] must be an int in [0, 1] (passes the state's epoch allows), but got -1."),
    (("ops", "Batch/Shuffle", "pass"), 10**9, ValueError,
     "set_state: state['ops']['Batch/Shuffle']['pass'] must be an int in [0, 1] (passes the state's epoch allows), "
     "but got 1000000000."),
    (("ops", "Batch/Shuffle", "rng", "draws"), 10**12, ValueError,
     "set_state: state['ops']['Batch/Shuffle']['rng']['draws'] must be an int in [0, 0] (100 rows per pass x 0 pass(es) "
     "before), but got 1000000000000."),
    (("ops", "Batch/Shuffle", "rng", "draws"), 0.0, TypeError,
     "set_state: state['ops']['Batch/Shuffle']['rng']['draws'] must be an int in [0, 0] (100 rows per pass x 0 pass(es) "
     "before), but got 0.0 of type float."),
    (("ops", "Batch/Shuffle", "rng", "seed"), 6, ValueError,
     "set_state: state['ops']['Batch/Shuffle']['rng']['seed'] must be an int in [5, 5] (this shuffle's seed), but got 6."),
    (("ops", "Batch/Shuffle", "rng"), None, TypeError,
     "set_state: state['ops']['Batch/Shuffle']['rng'] must be a dict with keys 'seed', 'draws', but got None of type NoneType."),
    (("ops", "Batch/Shuffle"), "x", TypeError,
     "set_state: state['ops']['Batch/Shuffle'] must be a dict with keys 'pass', 'rng', 'next', but got 'x' of type str."),
]


def _set(state, path, value):
    d = state
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value


@pytest.mark.parametrize("path,value,etype,message", CORRUPT, ids=[f"{'.'.join(c[0])}={c[1]!r}" for c in CORRUPT])
def test_corrupted_field_is_refused_with_its_path_and_accepted_values(path, value, etype, message):
    state = good_state()
    _set(state, path, value)
    with pytest.raises(etype) as e:
        restore(shuffled(), state)
    assert str(e.value) == message


@pytest.mark.parametrize("path,message", [
    ((), "set_state: state has no key 'step'; it must have the keys 'version', 'fingerprint', 'seed', "
         "'seed_globals', 'epoch', 'step', 'ops'."),
    (("ops", "Batch/Shuffle"), "set_state: state['ops']['Batch/Shuffle'] has no key 'step'; it must have the keys 'pass', 'rng', 'next'."),
    (("ops", "Batch/Shuffle", "rng"), "set_state: state['ops']['Batch/Shuffle']['rng'] has no key 'step'; it must have the keys "
                          "'seed', 'draws'."),
])
def test_missing_and_unknown_keys_are_named(path, message):
    state = good_state()
    d = state
    for k in path:
        d = d[k]
    missing = {"": "step", "Batch/Shuffle": "pass", "rng": "draws"}[path[-1] if path else ""]
    del d[missing]
    with pytest.raises(ValueError) as e:
        restore(shuffled(), state)
    assert str(e.value) == message.replace("'step';", f"{missing!r};")
    state = good_state()
    d = state
    for k in path:
        d = d[k]
    d["extra"] = 1
    with pytest.raises(ValueError, match=r"has an unknown key 'extra'; the accepted keys are "):
        restore(shuffled(), state)


def test_ops_entry_for_an_op_without_state_is_refused():
    state = good_state()
    state["ops"]["Batch"] = {"pass": 0}
    with pytest.raises(ValueError) as e:
        restore(shuffled(), state)
    assert str(e.value) == ("set_state: state['ops'] names op 'Batch', but this pipeline's ops that keep a state "
                            "are ['Batch/Shuffle']: the state comes from a different pipeline.")


def test_epoch_is_bounded_by_num_epochs():
    ds.config.set_seed(5)
    state = state_after(shuffled(), 2, num_epochs=3)
    state["epoch"] = 4
    with pytest.raises(ValueError) as e:
        restore(shuffled(), state, num_epochs=3)
    assert str(e.value) == ("set_state: state['epoch'] must be an int in [0, 3] (the iterator's num_epochs), "
                            "but got 4.")


def test_refused_state_leaves_the_iterator_as_it_was():
    ds.config.set_seed(5)
    it = shuffled().create_tuple_iterator(num_epochs=1, output_numpy=True)
    first = [plain(v) for v in next(it)]
    bad = it.get_state()
    bad["epoch"] = 10**9
    with pytest.raises(ValueError):
        it.set_state(bad)
    rest = [[plain(v) for v in r] for r in it]
    ds.config.set_seed(5)
    full = [[plain(v) for v in r] for r in shuffled().create_tuple_iterator(num_epochs=1, output_numpy=True)]
    assert [first] + rest == full


def _mutations():
    leaves = [("version",), ("seed",), ("seed_globals",), ("epoch",), ("step",), ("ops",), ("fingerprint",),
              ("ops", "Batch/Shuffle"), ("ops", "Batch/Shuffle", "pass"), ("ops", "Batch/Shuffle", "rng"), ("ops", "Batch/Shuffle", "rng", "seed"),
              ("ops", "Batch/Shuffle", "rng", "draws")]
    values = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                       st.text(max_size=5), st.lists(st.integers(), max_size=2),
                       st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
    return st.tuples(st.sampled_from(leaves), values)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutation=_mutations())
def test_any_corruption_is_refused_cleanly_or_restores_exactly(mutation):
    """Whatever a field is replaced with: a TypeError / ValueError naming a field of the state, or,
    when the value happens to be valid, a restore giving the uninterrupted run's rows."""
    path, value = mutation
    state = good_state()
    _set(state, path, value)
    ds.config.set_seed(5)
    it = shuffled().create_tuple_iterator(output_numpy=True, num_epochs=2)
    try:
        it.set_state(state)
    except (TypeError, ValueError) as e:
        it.stop()
        assert str(e).startswith("set_state: ")
        return
    got = [[plain(v) for v in r] for r in it]
    it.stop()
    assert got == uninterrupted_rest(state)


def test_sampler_parameters_are_part_of_the_fingerprint():
    def fp(sampler):
        d = ds.NumpySlicesDataset({"x": list(range(20))}, sampler=sampler)
        return state_after(d, 0)["fingerprint"]

    ds.config.set_seed(3)
    assert fp(ds.SubsetRandomSampler([1, 2, 3])) == fp(ds.SubsetRandomSampler([1, 2, 3]))
    assert fp(ds.SubsetRandomSampler([1, 2, 3])) != fp(ds.SubsetRandomSampler([1, 2, 4]))
    assert fp(ds.WeightedRandomSampler([0.5, 0.5], 2)) != fp(ds.WeightedRandomSampler([0.4, 0.6], 2))
    assert fp(ds.DistributedSampler(2, 0)) != fp(ds.DistributedSampler(2, 1))
    assert fp(ds.SequentialSampler()) != fp(ds.RandomSampler())


def test_draw_count_of_a_shuffle_with_unknown_rows_per_pass_is_bounded():
    ds.config.set_seed(5)
    d = lambda: src().filter(lambda x, y: x % 3 != 0).shuffle(4)  # noqa: E731 - rows per pass unknown
    state = state_after(d(), 3)
    assert state["ops"]["Shuffle"]["rng"] == {"seed": 5, "draws": 0}
    restore(d(), state)
    state["ops"]["Shuffle"]["rng"]["draws"] = 10**12
    with pytest.raises(ValueError) as e:
        restore(d(), state)
    assert str(e.value) == ("set_state: state['ops']['Shuffle']['rng']['draws'] must be an int in [0, 4294967296], "
                            "but got 1000000000000.")


# ---- state v2: entries keyed by plan path, one shape at every step -------------------------------

def shape(value):
    """The keys and value kinds of a state, without the values."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    return type(value).__name__


def test_state_has_one_entry_per_stateful_op_keyed_by_plan_path():
    ds.config.set_seed(5)
    left = src(10).shuffle(3)
    right = ds.NumpySlicesDataset({"z": list(range(10))}, shuffle=False).shuffle(4)
    state = state_after(ds.zip((left, right)).batch(2), 0)
    assert state["version"] == 2
    assert state["ops"] == {
        "Batch/Zip[0]/Shuffle": {"pass": 0, "rng": {"seed": 5, "draws": 0}, "next": None},
        "Batch/Zip[1]/Shuffle": {"pass": 0, "rng": {"seed": 5, "draws": 0}, "next": None},
    }


def test_state_keeps_its_shape_at_every_step_and_epoch_boundary():
    ds.config.set_seed(5)
    it = shuffled().create_tuple_iterator(num_epochs=2, output_numpy=True)
    shapes = set()
    for _ in range(2):
        while True:
            shapes.add(json.dumps(shape(it.get_state()), sort_keys=True))
            try:
                next(it)
            except StopIteration:
                break
    shapes.add(json.dumps(shape(it.get_state()), sort_keys=True))
    it.stop()
    # "next" is None until a pass has ended, then a dict: the keys never change
    keys = {json.dumps(json.loads(s)["ops"]["Batch/Shuffle"].keys().__len__()) for s in shapes}
    assert keys == {"3"}
    assert {frozenset(json.loads(s)) for s in shapes} == {frozenset(
        ["version", "fingerprint", "seed", "seed_globals", "epoch", "step", "ops"])}
    assert {tuple(json.loads(s)["ops"]) for s in shapes} == {("Batch/Shuffle",)}


def test_a_missing_entry_is_refused():
    state = good_state()
    del state["ops"]["Batch/Shuffle"]
    with pytest.raises(ValueError) as e:
        restore(shuffled(), state)
    assert str(e.value) == ("set_state: state['ops'] has no entry for the op at 'Batch/Shuffle'; a state holds one "
                            "for each of ['Batch/Shuffle'].")


def _as_v1(state, op_id):
    """The version-1 form of a state: the entry keyed by the op's build-order id, without "next"
    while it is None, and no entry before the op's first pass."""
    entry = dict(state["ops"]["Batch/Shuffle"])
    if entry["next"] is None:
        del entry["next"]
    return dict(state, version=1, ops={str(op_id): entry})


@pytest.mark.parametrize("steps", [0, 3, 9, 10, 12])
def test_a_version_1_state_is_read(steps):
    """Saved at any step of two epochs (10 batches each), as version 1, restores the rest."""
    ds.config.set_seed(5)
    it = shuffled().create_tuple_iterator(num_epochs=2, output_numpy=True)
    for _ in range(min(steps, 10)):
        next(it)
    if steps >= 10:
        assert next(it, None) is None
        for _ in range(steps - 10):
            next(it)
    state = json.loads(json.dumps(it.get_state()))
    it.stop()
    ds.config.set_seed(5)
    it = shuffled().create_tuple_iterator(num_epochs=2, output_numpy=True)
    it.set_state(_as_v1(state, 2))
    got = [[plain(v) for v in r] for r in it]
    it.stop()
    assert got == uninterrupted_rest(state)
    assert (state["epoch"], state["step"]) == divmod(steps, 10)


def test_a_version_1_state_naming_an_unknown_op_is_refused():
    with pytest.raises(ValueError) as e:
        restore(shuffled(), _as_v1(good_state(), 7))
    assert str(e.value) == ("set_state: the version-1 state['ops'] names op '7', which is not an op of this "
                            "pipeline that keeps a state: the state comes from a different pipeline.")
