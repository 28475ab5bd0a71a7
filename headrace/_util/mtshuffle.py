"""Bit-exact reproductions of the random streams MindSpore's C++ data engine uses.

MindSpore 2.10's samplers and ``Dataset.shuffle`` draw from the C++ standard library's Mersenne
Twisters and distributions, compiled with GCC 9 (libstdc++ 9). Users who call
``ds.config.set_seed(s)`` get fixed orders, and this module gives the same orders:

* :class:`MT19937` -- the 32-bit ``std::mt19937`` stream (NumPy's MT19937 bit generator, seeded the
  way ``std::mt19937(seed)`` seeds itself).
* :meth:`MT19937.uniform` -- ``std::uniform_int_distribution<uint64_t>{0, high}`` as libstdc++ 9
  computes it: for a range below 2**32 it divides the range of the generator into equal buckets and
  rejects draws past the last full bucket (no multiply-shift).
* :func:`shuffle_permutation` -- ``std::shuffle`` over ``n`` items: while ``(2**32 - 1) // n >= n``
  it draws two swap positions from one number, otherwise one position per number.
* :func:`uniform_canonical` -- ``std::generate_canonical<double, 53>`` (two 32-bit words per double),
  used by ``std::discrete_distribution`` and ``std::exponential_distribution``.
* :class:`MT19937_64` -- ``std::mt19937_64``, with a vectorised twist so a draw costs a list lookup.
* :func:`buffer_take` / :func:`buffer_shuffle` -- the buffer shuffle of ``Dataset.shuffle(buffer_size)``
  and of file-based sources (the one kernel both use).
* :class:`MinStd0` / :func:`minstd_shuffle` -- ``std::minstd_rand0`` and ``std::shuffle`` over it,
  which MindSpore's MindRecord samplers use.

All functions here are pure: the same seed gives the same stream on every platform and NumPy
version. They never touch NumPy's or Python's global random state.
"""
from __future__ import annotations

import itertools
import math
import operator
from typing import Any, Iterator

import numpy as np

M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF

__all__ = [
    "MT19937", "MT19937_64", "MinStd0", "buffer_shuffle", "buffer_take", "chained_shuffle",
    "minstd_shuffle", "shuffle_permutation", "shuffle_permutation_with", "uniform_canonical",
]


# --------------------------------------------------------------------------------------------
# 32-bit Mersenne Twister
# --------------------------------------------------------------------------------------------

def _mt19937_key(seed: int) -> np.ndarray:
    """The 624-word state ``std::mt19937(seed)`` starts from (Knuth's initialisation)."""
    key = [seed & M32]
    prev = key[0]
    for i in range(1, 624):
        prev = (1812433253 * (prev ^ (prev >> 30)) + i) & M32
        key.append(prev)
    return np.array(key, dtype=np.uint32)


class MT19937:
    """The ``std::mt19937`` stream of 32-bit words for ``seed``.

    Words are produced in blocks by NumPy's MT19937 bit generator (same recurrence), so bulk
    draws are cheap; :meth:`next` hands them out one at a time.
    """

    __slots__ = ("_bits", "_buf", "_pos")

    _BLOCK = 1024

    def __init__(self, seed: int) -> None:
        self._bits = np.random.MT19937()
        self._bits.state = {"bit_generator": "MT19937",
                            "state": {"key": _mt19937_key(int(seed)), "pos": 624}}
        self._buf: list[int] = []
        self._pos = 0

    def next(self) -> int:
        """The next 32-bit word."""
        if self._pos >= len(self._buf):
            self._buf = self._bits.random_raw(self._BLOCK).tolist()
            self._pos = 0
        word = self._buf[self._pos]
        self._pos += 1
        return word

    def words(self, count: int) -> np.ndarray:
        """The next ``count`` words as a uint64 array (consumed from the stream)."""
        cached = self._buf[self._pos:self._pos + count]
        self._pos += len(cached)
        rest = count - len(cached)
        if rest <= 0:
            return np.array(cached, dtype=np.uint64)
        fresh = self._bits.random_raw(rest).astype(np.uint64)
        if not cached:
            return fresh
        return np.concatenate([np.array(cached, dtype=np.uint64), fresh])

    def uniform_many(self, high: int, count: int) -> np.ndarray:
        """``count`` successive draws of :meth:`uniform` ``(high)``, for ``high < 2**32 - 1``."""
        span = high + 1
        scaling = M32 // span
        past = span * scaling
        parts = []
        need = count
        while need > 0:
            words = self.words(need + need // 64 + 16)
            keep = np.flatnonzero(words < past)
            if len(keep) >= need:
                self._unread(words[int(keep[need - 1]) + 1:])
                keep = keep[:need]
            parts.append(words[keep] // np.uint64(scaling))
            need -= len(keep)
        out = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
        return out.astype(np.int64)

    def _unread(self, words: np.ndarray) -> None:
        self._buf = words.tolist() + self._buf[self._pos:]
        self._pos = 0

    def uniform(self, high: int) -> int:
        """A draw of ``std::uniform_int_distribution<uint64_t>(0, high)`` (libstdc++ 9)."""
        if high == M32:
            return self.next()
        if high < M32:
            span = high + 1
            scaling = M32 // span
            past = span * scaling
            while True:
                word = self.next()
                if word < past:
                    return word // scaling
        # Upscaling: combine a draw of the high part with one more word (only for ranges >= 2**32).
        while True:
            tmp = (M32 + 1) * self.uniform(high // (M32 + 1))
            ret = tmp + self.next()
            if tmp <= ret <= high:
                return ret


def uniform_canonical(gen: MT19937) -> float:
    """``std::generate_canonical<double, 53>``: a double in [0, 1) from two 32-bit words."""
    low = gen.next()
    high = gen.next()
    value = (low + high * 4294967296.0) / 18446744073709551616.0
    return value if value < 1.0 else math.nextafter(1.0, 0.0)


# --------------------------------------------------------------------------------------------
# std::shuffle
# --------------------------------------------------------------------------------------------

_CHUNK = 16384


def _single_positions(gen: MT19937, n: int) -> np.ndarray:
    """Swap partners j[i] (i = 1..n-1; j[0] = 0), each uniform in [0, i], one word per draw.

    Vectorised: a draw is rejected (and its word skipped) only when the word falls past the last
    full bucket, which is rare for n < 2**32; each rejection re-examines at most one chunk.
    """
    count = n - 1
    span = np.arange(2, n + 1, dtype=np.uint64)  # i + 1
    scaling = np.uint64(M32) // span
    past = span * scaling
    out = np.zeros(n, dtype=np.uint64)
    words = gen.words(count + 64)
    shift = 0  # words skipped by rejections so far
    t = 0
    while t < count:
        end = min(t + _CHUNK, count)
        if end + shift > len(words):
            words = np.concatenate([words, gen.words(end + shift - len(words) + 1024)])
        w = words[t + shift:end + shift]
        bad = w >= past[t:end]
        if not bad.any():
            out[t + 1:end + 1] = w // scaling[t:end]
            t = end
            continue
        k = int(bad.argmax())
        out[t + 1:t + k + 1] = w[:k] // scaling[t:t + k]
        t += k
        shift += 1
    return out.astype(np.int64)


def _paired_positions(gen: MT19937, n: int) -> np.ndarray:
    """Swap partners when one number yields two positions (libstdc++'s small-range path)."""
    j = [0] * n
    i = 1
    if n % 2 == 0:
        j[1] = gen.uniform(1)
        i = 2
    uniform = gen.uniform
    while i < n:
        b1 = i + 2
        x = uniform((i + 1) * b1 - 1)
        j[i] = x // b1
        j[i + 1] = x % b1
        i += 2
    return np.array(j, dtype=np.int64)


def _apply_swaps(j: np.ndarray) -> np.ndarray:
    """The array that swapping a[i] with a[j[i]] for i = 1..n-1, in order, makes of arange(n).

    Vectorised instead of a Python loop over n swaps. Since j[i] <= i, position i holds element i
    until step i. Step i puts element i at j[i] and brings the item there to position i. So the
    final item at position p is element i for the last step i > p with j[i] == p, if any; else
    it is A[p], the item step p brought. A[q] is q when j[q] == q; else the item sitting at j[q]
    just before step q: element i of the latest earlier step i with j[i] == j[q], if any, or else
    A[j[q]] -- resolved for all q at once by pointer jumping (j[q] < q, so it ends).
    """
    n = len(j)
    idx = np.arange(n, dtype=np.int64)
    keys = j.astype(np.int32) if n < 2**31 else j  # int32 sorts faster
    order = np.argsort(keys, kind="stable")  # groups steps by partner, steps ascending in a group
    sj = j[order]
    same_as_prev = sj[1:] == sj[:-1]
    prev = np.full(n, -1, dtype=np.int64)  # the previous step with the same partner
    prev[order[1:][same_as_prev]] = order[:-1][same_as_prev]
    is_last = np.ones(n, dtype=bool)
    is_last[:-1] = ~same_as_prev
    last = np.full(n, -1, dtype=np.int64)  # the last step with partner p
    last[sj[is_last]] = order[is_last]
    val = np.where(prev >= 0, prev, np.where(j == idx, idx, -1))
    ptr = j.copy()
    while True:
        todo = np.flatnonzero(val < 0)
        if todo.size == 0:
            break
        p = ptr[todo]
        pv = val[p]
        done = pv >= 0
        val[todo[done]] = pv[done]
        ptr[todo[~done]] = ptr[p[~done]]
    return np.where(last > idx, last, val)


def shuffle_permutation(n: int, seed: int) -> np.ndarray:
    """The permutation ``std::shuffle`` applies with ``std::mt19937(seed)``.

    ``std::shuffle(a, mt19937(seed))`` leaves ``a`` equal to ``a[shuffle_permutation(len(a), seed)]``.

    Args:
        n: number of items.
        seed: the generator's seed (taken modulo 2**32, as ``std::mt19937`` does).

    Returns:
        An int64 array holding a permutation of ``range(n)``.
    """
    if n <= 1:
        return np.arange(n, dtype=np.int64)
    return shuffle_permutation_with(MT19937(seed), n)


def shuffle_permutation_with(gen: MT19937, n: int) -> np.ndarray:
    """Like :func:`shuffle_permutation`, drawing from ``gen`` (which goes on from there)."""
    if n <= 1:
        return np.arange(max(n, 0), dtype=np.int64)
    if M32 // n >= n:
        return _apply_swaps(_paired_positions(gen, n))
    return _apply_swaps(_single_positions(gen, n))


def chained_shuffle(n: int, seed: int, passes: int, start: np.ndarray | None = None) -> np.ndarray:
    """Shuffles ``start`` (default ``arange(n)``) ``passes`` times, pass k with seed ``seed + k``.

    This is how MindSpore's RandomSampler and DistributedSampler reshuffle each epoch: epoch k's
    order is epoch k-1's order shuffled again with the seed incremented.
    """
    perm = np.arange(n, dtype=np.int64) if start is None else np.asarray(start, dtype=np.int64)
    for k in range(passes):
        perm = perm[shuffle_permutation(n, (seed + k) & M32)]
    return perm


# --------------------------------------------------------------------------------------------
# 64-bit Mersenne Twister
# --------------------------------------------------------------------------------------------

_N64, _M64 = 312, 156
_UPPER = np.uint64(0xFFFFFFFF80000000)
_LOWER = np.uint64(0x7FFFFFFF)
_MATRIX = np.uint64(0xB5026F5AA96619E9)
_ONE = np.uint64(1)


def _twist64(mt: np.ndarray) -> np.ndarray:
    """The next 312-word state of mt19937_64, in three vectorised steps.

    Word i needs words i and i+1 of the old state and word i+156 (mod 312); for i >= 156 that
    last word is already new, so the state splits into [0, 156), [156, 311) and word 311.
    """
    new = np.empty_like(mt)
    x = (mt[0:156] & _UPPER) | (mt[1:157] & _LOWER)
    new[0:156] = mt[156:312] ^ (x >> _ONE) ^ ((x & _ONE) * _MATRIX)
    x = (mt[156:311] & _UPPER) | (mt[157:312] & _LOWER)
    new[156:311] = new[0:155] ^ (x >> _ONE) ^ ((x & _ONE) * _MATRIX)
    x = (mt[311:312] & _UPPER) | (new[0:1] & _LOWER)
    new[311:312] = new[155:156] ^ (x >> _ONE) ^ ((x & _ONE) * _MATRIX)
    return new


def _temper64(mt: np.ndarray) -> list[int]:
    y = mt.copy()
    y ^= (y >> np.uint64(29)) & np.uint64(0x5555555555555555)
    y ^= (y << np.uint64(17)) & np.uint64(0x71D67FFFEDA60000)
    y ^= (y << np.uint64(37)) & np.uint64(0xFFF7EEE000000000)
    y ^= y >> np.uint64(43)
    return y.tolist()


class MT19937_64:
    """The ``std::mt19937_64`` stream of 64-bit words for ``seed``.

    Knows how many words were drawn (:attr:`draws`), and :meth:`skip` jumps ahead cheaply
    (a vectorised twist per 312 words, no tempering), so a position can be saved as
    ``(seed, draws)`` and restored. A draw is one step of a list iterator (about 0.1 us).
    """

    __slots__ = ("seed", "_state", "_it", "_blocks")

    def __init__(self, seed: int) -> None:
        self.seed = int(seed) & M64
        words = [self.seed]
        prev = self.seed
        for i in range(1, _N64):
            prev = (6364136223846793005 * (prev ^ (prev >> 62)) + i) & M64
            words.append(prev)
        self._state = np.array(words, dtype=np.uint64)
        self._it: Iterator[int] = iter(())
        self._blocks = 0  # tempered blocks handed out so far

    def _refill(self) -> None:
        self._state = _twist64(self._state)
        self._it = iter(_temper64(self._state))
        self._blocks += 1

    def next(self) -> int:
        """The next 64-bit word."""
        try:
            return next(self._it)
        except StopIteration:
            self._refill()
            return next(self._it)

    def below(self, n: int) -> int:
        """``next() % n``: how MindSpore's buffer shuffle picks a slot among ``n`` live rows."""
        return self.next() % n

    @property
    def draws(self) -> int:
        """Words drawn (or skipped) since seeding."""
        return self._blocks * _N64 - operator.length_hint(self._it)

    def get_state(self) -> dict[str, int]:
        """The position as ``{"seed", "draws"}`` (JSON-able); :meth:`set_state` restores it."""
        return {"seed": self.seed, "draws": self.draws}

    def set_state(self, state: dict[str, int]) -> None:
        fresh = MT19937_64(int(state["seed"]))
        fresh.skip(int(state["draws"]))
        self.seed, self._state, self._it, self._blocks = fresh.seed, fresh._state, fresh._it, fresh._blocks

    def skip(self, count: int) -> None:
        """Discards the next ``count`` words."""
        if count < 0:
            raise ValueError(f"count must be non-negative, but got {count}.")
        left = operator.length_hint(self._it)
        if count <= left:
            for _ in itertools.islice(self._it, count):
                pass
            return
        count -= left
        while count > _N64:
            self._state = _twist64(self._state)
            self._blocks += 1
            count -= _N64
        self._refill()
        for _ in itertools.islice(self._it, count):
            pass


# --------------------------------------------------------------------------------------------
# Dataset.shuffle(buffer_size) and the buffer shuffle of file-based sources
# --------------------------------------------------------------------------------------------

def buffer_take(buf: list[Any], rng: MT19937_64) -> Any:
    """One step of MindSpore's buffer shuffle: draws a slot as ``mt19937_64() % len(buf)``, takes
    its item out and moves the last item into the hole (the caller then appends the next input).

    Example:
        >>> buf = [0, 1, 2, 3]
        >>> buffer_take(buf, MT19937_64(1)), buf
        (0, [3, 1, 2])
    """
    slot = rng.below(len(buf))
    item = buf[slot]
    last = buf.pop()
    if slot < len(buf):
        buf[slot] = last
    return item


def buffer_shuffle(rows: list[Any], size: int, rng: MT19937_64) -> list[Any]:
    """MindSpore's buffer shuffle of ``rows`` with a buffer of ``size`` rows, drawing from ``rng``:
    the buffer takes the first ``size`` rows, then each draw emits one and takes in the next row.

    Example:
        >>> buffer_shuffle(list(range(10)), 4, MT19937_64(1))
        [0, 2, 4, 5, 3, 1, 7, 9, 6, 8]
    """
    n = len(rows)
    buf = rows[:size]
    nxt = len(buf)
    out: list[Any] = []
    append = out.append
    while buf:
        append(buffer_take(buf, rng))
        if nxt < n:
            buf.append(rows[nxt])
            nxt += 1
    return out


# ---------------------------------------------------------------------------------------------
# minstd_rand0 and libstdc++'s std::shuffle over it
# ---------------------------------------------------------------------------------------------

_M = 2147483647          # 2**31 - 1
_A = 16807
_RANGE = _M - 2          # g.max() - g.min() = (2**31 - 2) - 1


class MinStd0:
    """``std::minstd_rand0`` (``std::default_random_engine`` of libstdc++): x <- 16807 x mod (2**31 - 1)."""

    _BLOCK = 4096

    def __init__(self, seed: int) -> None:
        s = int(seed) % _M
        self._x = 1 if s == 0 else s
        self._buf = np.zeros(0, dtype=np.int64)
        self._pos = 0

    def _fill(self, count: int) -> np.ndarray:
        """The next ``count`` outputs minus ``g.min()`` (i.e. in [0, _RANGE]), vectorised by blocks."""
        out = np.empty(count, dtype=np.int64)
        x = self._x
        first = min(count, self._BLOCK)
        for k in range(first):
            x = (x * _A) % _M
            out[k] = x
        if count > first:
            step = pow(_A, self._BLOCK, _M)
            for start in range(self._BLOCK, count, self._BLOCK):
                end = min(start + self._BLOCK, count)
                out[start:end] = (out[start - self._BLOCK:end - self._BLOCK] * step) % _M
        self._x = int(out[-1]) if count else x
        return out - 1

    def words(self, count: int) -> np.ndarray:
        have = self._buf[self._pos:self._pos + count]
        self._pos += len(have)
        if len(have) == count:
            return have
        return np.concatenate([have, self._fill(count - len(have))])

    def unread(self, words: np.ndarray) -> None:
        self._buf = np.concatenate([words, self._buf[self._pos:]])
        self._pos = 0

    def uniform(self, high: int) -> int:
        """``std::uniform_int_distribution(0, high)`` over this engine (libstdc++ 9, down-scaling)."""
        span = high + 1
        scaling = _RANGE // span
        past = span * scaling
        while True:
            w = int(self.words(1)[0])
            if w < past:
                return w // scaling


def minstd_shuffle(n: int, seed: int) -> np.ndarray:
    """The permutation ``std::shuffle`` of ``n`` items applies with ``std::default_random_engine(seed)``.

    ``std::shuffle(a, engine)`` leaves ``a`` equal to ``a[minstd_shuffle(len(a), seed)]``.
    """
    if n <= 1:
        return np.arange(max(n, 0), dtype=np.int64)
    gen = MinStd0(seed)
    if _RANGE // n >= n:           # libstdc++ draws two positions from one number
        # for i = first, first + 2, ... < n: x = uniform(0, (i + 1) * (i + 2) - 1), then
        # j[i] = x // (i + 2), j[i + 1] = x % (i + 2); vectorised with rejections re-done chunk by chunk
        j = np.zeros(n, dtype=np.int64)
        first = 1
        if n % 2 == 0:
            j[1] = gen.uniform(1)
            first = 2
        pos = np.arange(first, n, 2, dtype=np.int64)
        b1 = pos + 2
        span = (pos + 1) * b1
        scaling = _RANGE // span
        past = span * scaling
        x = _uniform_draws(gen, past, scaling)
        j[pos] = x // b1
        j[pos + 1] = x % b1
        return _apply_swaps(j)
    # one position per number
    span = np.arange(2, n + 1, dtype=np.int64)
    scaling = _RANGE // span
    past = span * scaling
    j = np.zeros(n, dtype=np.int64)
    j[1:] = _uniform_draws(gen, past, scaling)
    return _apply_swaps(j)


def _uniform_draws(gen: MinStd0, past: np.ndarray, scaling: np.ndarray) -> np.ndarray:
    """One ``uniform`` draw per entry, in order: entry i takes the next word below ``past[i]``,
    divided by ``scaling[i]``; a rejected word is dropped and the entry draws again. Vectorised
    by chunks: the words after a rejection are put back and re-drawn."""
    count = len(past)
    x = np.empty(count, dtype=np.int64)
    t = 0
    chunk = 1 << 16
    while t < count:
        end = min(t + chunk, count)
        w = gen.words(end - t)
        bad = w >= past[t:end]
        if not bad.any():
            x[t:end] = w // scaling[t:end]
            t = end
            continue
        k = int(bad.argmax())
        x[t:t + k] = w[:k] // scaling[t:t + k]
        gen.unread(w[k + 1:])
        t += k
    return x
