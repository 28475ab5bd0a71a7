"""The MindSpore-exact random streams: Mersenne Twisters, std::shuffle, the buffer shuffle.

Literal sequences below guard determinism: they are MindSpore 2.10's orders (checked against it in
tests/compat) or values fixed by the C++ standard. Do not regenerate them.
"""
import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from headrace._util import mtshuffle as mt

M32 = 0xFFFFFFFF


# ---- reference: libstdc++ 9 std::shuffle written out step by step (slow, obviously right) ----

def ref_uniform(next_word, high):
    span = high + 1
    scaling = M32 // span
    past = span * scaling
    while True:
        w = next_word()
        if w < past:
            return w // scaling


def ref_shuffle(items, seed):
    gen = mt.MT19937(seed)
    a = list(items)
    n = len(a)
    if n <= 1:
        return a
    if M32 // n >= n:
        i = 1
        if n % 2 == 0:
            j = ref_uniform(gen.next, 1)
            a[1], a[j] = a[j], a[1]
            i = 2
        while i != n:
            r = i + 1
            x = ref_uniform(gen.next, r * (r + 1) - 1)
            p1, p2 = x // (r + 1), x % (r + 1)
            a[i], a[p1] = a[p1], a[i]
            a[i + 1], a[p2] = a[p2], a[i + 1]
            i += 2
        return a
    for i in range(1, n):
        j = ref_uniform(gen.next, i)
        a[i], a[j] = a[j], a[i]
    return a


# ---- the generators --------------------------------------------------------------------------

def test_mt19937_matches_the_cpp_standard_check_value():
    # [rand.predef]: the 10000th draw of a default-constructed std::mt19937 (seed 5489).
    gen = mt.MT19937(5489)
    words = gen.words(10000)
    assert int(words[-1]) == 4123659995


def test_mt19937_64_matches_the_cpp_standard_check_value():
    # [rand.predef]: the 10000th draw of a default-constructed std::mt19937_64.
    gen = mt.MT19937_64(5489)
    for _ in range(9999):
        gen.next()
    assert gen.next() == 9981545732273789042
    assert gen.draws == 10000


def test_mt19937_first_words_seed_1():
    # Guards determinism: std::mt19937(1)'s first draws.
    gen = mt.MT19937(1)
    assert [gen.next() for _ in range(3)] == [1791095845, 4282876139, 3093770124]


def test_mt19937_next_and_words_share_one_stream():
    a, b = mt.MT19937(9), mt.MT19937(9)
    first = [a.next() for _ in range(5)]
    bulk = a.words(2000).tolist()
    assert first + bulk == b.words(2005).tolist()
    assert a.next() == b.next()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, M32), high=st.one_of(st.integers(0, 50), st.integers(0, M32 - 1)),
       count=st.integers(0, 300))
def test_uniform_many_equals_repeated_uniform(seed, high, count):
    a, b = mt.MT19937(seed), mt.MT19937(seed)
    assert a.uniform_many(high, count).tolist() == [b.uniform(high) for _ in range(count)]
    assert a.next() == b.next()  # and both consumed the same words


def test_uniform_full_and_upscaled_ranges():
    a, b = mt.MT19937(3), mt.MT19937(3)
    assert a.uniform(M32) == b.next()
    # Upscaling (range above 32 bits): a high part times 2**32 plus a fresh word, rejected if too big.
    value = a.uniform(2**40)
    assert 0 <= value <= 2**40


def test_uniform_canonical_is_two_words_over_2_64():
    a, b = mt.MT19937(4), mt.MT19937(4)
    lo, hi = b.next(), b.next()
    assert mt.uniform_canonical(a) == (lo + hi * 2.0**32) / 2.0**64


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**64 - 1), pre=st.integers(0, 400), skip=st.integers(0, 1500))
def test_mt19937_64_skip_equals_drawing(seed, pre, skip):
    a, b = mt.MT19937_64(seed), mt.MT19937_64(seed)
    for _ in range(pre):
        a.next()
        b.next()
    a.skip(skip)
    for _ in range(skip):
        b.next()
    assert a.draws == b.draws == pre + skip
    assert a.next() == b.next()


def test_mt19937_64_state_round_trip_is_json():
    gen = mt.MT19937_64(77)
    for _ in range(1000):
        gen.next()
    state = json.loads(json.dumps(gen.get_state()))
    assert state == {"seed": 77, "draws": 1000}
    other = mt.MT19937_64(1)
    other.set_state(state)
    assert [other.next() for _ in range(5)] == [gen.next() for _ in range(5)]
    assert other.below(7) == gen.next() % 7


def test_mt19937_64_skip_rejects_negative():
    with pytest.raises(ValueError, match="count must be non-negative, but got -1."):
        mt.MT19937_64(1).skip(-1)


# ---- std::shuffle ----------------------------------------------------------------------------

def test_shuffle_permutation_literal_seed_1():
    # Guards determinism: MindSpore's RandomSampler order for 10 rows under set_seed(1).
    assert mt.shuffle_permutation(10, 1).tolist() == [9, 0, 2, 5, 7, 4, 6, 3, 1, 8]


def test_chained_shuffle_literal_passes():
    # Guards determinism: passes 0..2 of RandomSampler over 10 rows under set_seed(3) (MindSpore).
    assert mt.chained_shuffle(10, 3, 1).tolist() == [3, 1, 8, 5, 2, 6, 9, 7, 0, 4]
    assert mt.chained_shuffle(10, 3, 2).tolist() == [3, 7, 2, 8, 6, 5, 1, 4, 0, 9]
    assert mt.chained_shuffle(10, 3, 3).tolist() == [8, 0, 5, 2, 6, 1, 4, 7, 9, 3]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 7, 64, 65534, 65535, 65536, 65537, 200003])
@pytest.mark.parametrize("seed", [0, 1, M32])
def test_shuffle_permutation_equals_step_by_step_reference(n, seed):
    # 65535 is the last size for which libstdc++ draws two positions per number.
    assert mt.shuffle_permutation(n, seed).tolist() == ref_shuffle(range(n), seed)


def test_shuffle_seed_wraps_at_32_bits():
    assert mt.shuffle_permutation(50, 2**32 + 5).tolist() == mt.shuffle_permutation(50, 5).tolist()


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 400), seed=st.integers(0, M32))
def test_shuffle_is_a_permutation_and_matches_reference(n, seed):
    perm = mt.shuffle_permutation(n, seed)
    assert perm.dtype == np.int64
    assert sorted(perm.tolist()) == list(range(n))
    assert perm.tolist() == ref_shuffle(range(n), seed)


@settings(max_examples=80, deadline=None)
@given(data=st.data(), n=st.integers(1, 300))
def test_apply_swaps_equals_a_loop_of_swaps(data, n):
    j = [0] + [data.draw(st.integers(0, i)) for i in range(1, n)]
    a = list(range(n))
    for i in range(1, n):
        a[i], a[j[i]] = a[j[i]], a[i]
    assert mt._apply_swaps(np.array(j, dtype=np.int64)).tolist() == a


def test_shuffle_permutation_with_continues_the_generator():
    gen = mt.MT19937(5)
    first = mt.shuffle_permutation_with(gen, 4)
    assert first.tolist() == mt.shuffle_permutation(4, 5).tolist()
    ref = mt.MT19937(5)
    mt.shuffle_permutation_with(ref, 4)
    assert gen.next() == ref.next()


# ---- Dataset.shuffle(buffer_size) ------------------------------------------------------------

def run_buffer(size, seed, epochs, reshuffle_each_epoch=True):
    """Epochs of MindSpore's buffer shuffle through the one kernel: the stream continues across
    epochs, or restarts from the seed each epoch."""
    rng = mt.MT19937_64(seed)
    out = []
    for items in epochs:
        if not reshuffle_each_epoch:
            rng = mt.MT19937_64(seed)
        out.append(mt.buffer_shuffle(list(items), size, rng))
    return out


def test_buffer_shuffle_literal_epochs_continue_the_stream():
    # Guards determinism: MindSpore's .shuffle(4) over 10 rows, set_seed(1), three epochs.
    out = run_buffer(4, 1, [range(10)] * 3)
    assert out == [[0, 2, 4, 5, 3, 1, 7, 9, 6, 8], [0, 4, 1, 6, 3, 5, 8, 7, 9, 2],
                   [3, 4, 0, 6, 7, 2, 9, 1, 5, 8]]


def test_buffer_shuffle_larger_buffer_than_input():
    # Guards determinism: MindSpore's .shuffle(100) over 10 rows, set_seed(1).
    out = run_buffer(100, 1, [range(10)] * 2)
    assert out == [[8, 6, 2, 5, 0, 4, 9, 3, 7, 1], [6, 5, 8, 3, 2, 9, 1, 0, 4, 7]]


def test_buffer_shuffle_without_reshuffle_restarts_each_epoch():
    out = run_buffer(4, 1, [range(10)] * 2, reshuffle_each_epoch=False)
    assert out[0] == out[1] == [0, 2, 4, 5, 3, 1, 7, 9, 6, 8]
