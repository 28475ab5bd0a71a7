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
* :class:`BufferShuffler` -- the buffer shuffle of ``Dataset.shuffle(buffer_size)``.

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
    "BufferShuffler", "MT19937", "MT19937_64", "chained_shuffle", "shuffle_permutation",
    "shuffle_permutation_with", "uniform_canonical",
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
# Dataset.shuffle(buffer_size)
# --------------------------------------------------------------------------------------------

class BufferShuffler:
    """MindSpore's buffer shuffle, driven one item at a time.

    The buffer takes the first ``buffer_size`` items of an epoch. After that each new item first
    makes the shuffler emit one: a slot is drawn as ``mt19937_64() % live_items``, its item is
    emitted, the last item moves into the hole and the new item goes to the end. When the epoch's
    input ends, the rest is drained the same way, the buffer shrinking by one per draw. Epochs
    continue the same generator (MindSpore reshuffles each epoch that way), or restart it from the
    seed when ``reshuffle_each_epoch`` is False.

    Drive it like this (``parent_epoch`` yields one epoch of input)::

        for item in parent_epoch:
            if shuffler.full:
                yield shuffler.pop()
            shuffler.push(item)
        while shuffler:
            yield shuffler.pop()
        shuffler.end_epoch()

    State: :meth:`get_state` is small and JSON-able (seed, draws, and the epoch position as
    counts). Buffered items are not part of it: :meth:`set_state` puts the shuffler at the start
    of the saved epoch, and :meth:`fast_forward` replays that epoch's input (from its start) up
    to the saved position, discarding what was already emitted.

    Example:
        >>> sh = BufferShuffler(4, seed=1)
        >>> out = []
        >>> for x in range(10):
        ...     if sh.full:
        ...         out.append(sh.pop())
        ...     sh.push(x)
        >>> while sh:
        ...     out.append(sh.pop())
        >>> out
        [0, 2, 4, 5, 3, 1, 7, 9, 6, 8]
    """

    STATE_VERSION = 1

    __slots__ = ("buffer_size", "reshuffle_each_epoch", "_rng", "_buf", "_pushed", "_emitted",
                 "_epoch_draws", "_target")

    def __init__(self, buffer_size: int, seed: int, *, reshuffle_each_epoch: bool = True) -> None:
        if buffer_size < 1:
            raise ValueError(f"buffer_size must be positive, but got {buffer_size}.")
        self.buffer_size = int(buffer_size)
        self.reshuffle_each_epoch = bool(reshuffle_each_epoch)
        self._rng = MT19937_64(seed)
        self._buf: list[Any] = []
        self._pushed = 0
        self._emitted = 0
        self._epoch_draws = 0
        self._target: tuple[int, int] | None = None

    @property
    def seed(self) -> int:
        return self._rng.seed

    @property
    def full(self) -> bool:
        """True when the next input item must wait for an item to be emitted."""
        return len(self._buf) >= self.buffer_size

    def __len__(self) -> int:
        return len(self._buf)

    def __bool__(self) -> bool:
        return bool(self._buf)

    def push(self, item: Any) -> None:
        """Adds one input item (the buffer must not be full)."""
        if len(self._buf) >= self.buffer_size:
            raise RuntimeError("BufferShuffler.push: the buffer is full; pop() an item first.")
        self._buf.append(item)
        self._pushed += 1

    def pop(self) -> Any:
        """Emits one buffered item, chosen by the next draw."""
        buf = self._buf
        if not buf:
            raise IndexError("BufferShuffler.pop: the buffer is empty.")
        slot = self._rng.next() % len(buf)
        item = buf[slot]
        last = buf.pop()
        if slot < len(buf):
            buf[slot] = last
        self._emitted += 1
        return item

    def end_epoch(self) -> None:
        """Starts the next epoch (call it after draining the buffer)."""
        if self._buf:
            raise RuntimeError(f"BufferShuffler.end_epoch: {len(self._buf)} items are still buffered.")
        if not self.reshuffle_each_epoch:
            self._rng = MT19937_64(self._rng.seed)
        self._pushed = 0
        self._emitted = 0
        self._epoch_draws = self._rng.draws

    def get_state(self) -> dict[str, Any]:
        """A JSON-able snapshot: the generator position and the position in the epoch."""
        return {"version": self.STATE_VERSION, "buffer_size": self.buffer_size,
                "seed": self._rng.seed, "epoch_draws": self._epoch_draws,
                "pushed": self._pushed, "emitted": self._emitted}

    def set_state(self, state: dict[str, Any]) -> None:
        """Restores a snapshot at the start of its epoch; call :meth:`fast_forward` next.

        Until the replay is done, :attr:`pending` is True.
        """
        if state.get("version") != self.STATE_VERSION:
            raise ValueError(f"Unsupported BufferShuffler state version: {state.get('version')!r}.")
        if int(state["buffer_size"]) != self.buffer_size:
            raise ValueError(f"The state was saved with buffer_size {state['buffer_size']}, "
                             f"but this shuffler has buffer_size {self.buffer_size}.")
        self._rng = MT19937_64(int(state["seed"]))
        self._rng.skip(int(state["epoch_draws"]))
        self._epoch_draws = int(state["epoch_draws"])
        self._buf = []
        self._pushed = 0
        self._emitted = 0
        self._target = (int(state["pushed"]), int(state["emitted"]))

    @property
    def pending(self) -> bool:
        """True after :meth:`set_state` until :meth:`fast_forward` has replayed the epoch."""
        return self._target is not None

    def fast_forward(self, epoch_items: Iterator[Any]) -> None:
        """Replays the restored epoch's input from its start up to the saved position.

        Reads exactly as many items from ``epoch_items`` as the saved shuffler had read, and
        discards the items it had emitted; afterwards the caller goes on reading the same
        iterator as usual.
        """
        target = self._target
        if target is None:
            return
        pushed, emitted = target
        while self._pushed < pushed or self._emitted < emitted:
            if self._pushed < pushed and not self.full:
                try:
                    item = next(epoch_items)
                except StopIteration:
                    raise RuntimeError(
                        f"BufferShuffler.fast_forward: the input ended after {self._pushed} items, "
                        f"but the saved state had read {pushed}.") from None
                self.push(item)
            elif self._emitted < emitted and self._buf:
                self.pop()
            else:
                raise RuntimeError("BufferShuffler.fast_forward: the saved state is inconsistent "
                                   f"(pushed={pushed}, emitted={emitted}, buffer_size={self.buffer_size}).")
        self._target = None
