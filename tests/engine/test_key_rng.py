"""Keyed generators (``rng.key_rng``): a sample's key of four 32-bit parts is hashed by headrace
itself, not by a NumPy ``SeedSequence``; the generator must be the one NumPy's
``Generator(PCG64(SeedSequence(key)))`` gives, state and draws, for every key."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headrace._util import rng

U32 = st.one_of(st.sampled_from([0, 1, 2 ** 32 - 1, 2 ** 31]), st.integers(0, 2 ** 32 - 1))
ANY = st.one_of(U32, st.integers(2 ** 32, 2 ** 64 - 1), st.integers(-(2 ** 40), -1))


def numpy_rng(*key):
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([k & (2 ** 64 - 1) for k in key])))


@settings(max_examples=400, deadline=None)
@given(st.tuples(U32, U32, U32, U32))
def test_a_sample_key_gives_numpys_generator(key):
    got, want = rng.key_rng(*key), numpy_rng(*key)
    assert got.bit_generator.state == want.bit_generator.state
    assert got.integers(0, 2 ** 62, 5).tolist() == want.integers(0, 2 ** 62, 5).tolist()
    assert got.random() == want.random()


@settings(max_examples=150, deadline=None)
@given(st.lists(ANY, min_size=1, max_size=6))
def test_any_other_key_gives_numpys_generator(key):
    assert rng.key_rng(*key).bit_generator.state == numpy_rng(*key).bit_generator.state


def test_numpy_ints_and_a_shared_prefix_key_as_python_ints():
    # the prefix (seed, op, pass) is kept: later keys with it must still hash their own index
    for i in range(5):
        key = (np.uint32(7), np.int64(3), 0, i)
        assert rng.key_rng(*key).bit_generator.state == numpy_rng(7, 3, 0, i).bit_generator.state


def test_the_seed_sequence_answers_as_numpys():
    got, want = rng.key_rng(5, 6, 7, 8), numpy_rng(5, 6, 7, 8)
    seq = got.bit_generator.seed_seq
    assert seq.entropy == [5, 6, 7, 8] and seq.spawn_key == () and seq.pool_size == 4
    assert seq.generate_state(3).tolist() == np.random.SeedSequence([5, 6, 7, 8]).generate_state(3).tolist()
    assert [g.random() for g in got.spawn(2)] == [g.random() for g in want.spawn(2)]
    with pytest.raises(AttributeError):
        seq._missing  # noqa: B018 - private names are not forwarded
