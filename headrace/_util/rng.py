"""Randomness keyed by position, not by time.

Every random choice in a pipeline draws from a generator keyed by (seed, op id, pass, sample
index). The engine sets the key for the sample it is processing (thread-locally) before calling
an operation; a random transform asks :func:`sample_rng` for its generator. So the result does
not depend on worker count, thread timing or process boundaries, and resuming needs no RNG dump.

Outside a pipeline (an eager ``op(image)`` call) :func:`sample_rng` returns a module-private
generator, reseeded by ``ds.config.set_seed``. Library code never draws from NumPy's or Python's
global random state.

User functions (map, filter, per_batch_map, flat_map, a user source's ``__getitem__``) often
draw from ``np.random`` or ``random``. In a run
with a seed set by the user, the engine seeds both global generators before each call from the
same kind of key (:class:`GlobalSeeds`), under a process-wide lock so that thread workers cannot
reseed the shared generators under one another: a user function's draws are then a pure function
of (seed, op, pass, sample), whatever the worker mode, worker count or resume point. The
generators are not put back afterwards: they are left where the last seeded call ended (see
:class:`GlobalSeeds` for why).
"""
from __future__ import annotations

import os
import random
import threading
import warnings
from typing import Any

import _random
import numpy as np
from numpy.random.bit_generator import ISpawnableSeedSequence

from headrace._util.forksafe import fork_safe

_local = threading.local()
_eager_lock = fork_safe(threading.Lock())
_eager = np.random.default_rng()


def new_seed() -> int:
    """A fresh 32-bit seed from the OS, for pipelines run without ``set_seed``."""
    return int.from_bytes(os.urandom(4), "little")


def key_rng(*key: int) -> np.random.Generator:
    """A generator that is a pure function of ``key`` (non-negative ints):
    ``Generator(PCG64(SeedSequence(key)))``, each part taken modulo 2**64.

    A key of four parts below 2**32 (a sample's key) is hashed here (:func:`_sample_words`), not
    by a ``SeedSequence``: the same numbers at a third to half of the cost (a new SeedSequence
    and its state took 15-18 of the ~26 us a keyed generator cost, once per sample and op).
    """
    if len(key) == 4:
        k0, k1, k2, k3 = int(key[0]), int(key[1]), int(key[2]), int(key[3])
        if 0 <= k0 <= _M32 and 0 <= k1 <= _M32 and 0 <= k2 <= _M32 and 0 <= k3 <= _M32:
            return np.random.Generator(np.random.PCG64(_Hashed(_sample_words(k0, k1, k2, k3), (k0, k1, k2, k3))))
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(k) & _M64 for k in key])))


# NumPy's SeedSequence of a key of four 32-bit words, done here (its algorithm is fixed: NumPy
# promises the same streams from the same seeds). It hashes the words into a pool of four, mixes
# every pool word into every other, and hashes the pool into the output; each hash step multiplies
# by the next of a fixed sequence of constants. Three words of a sample's key (seed, op, pass) stay
# the same over a pass, and so does everything computed from them alone, which is kept per prefix.
_HASH_A, _HASH_B = (0x43B0D7E5, 0x931E8875), (0x8B51F9DD, 0x58F38DED)  # (first constant, factor)
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_M32, _M64 = (1 << 32) - 1, (1 << 64) - 1


def _constants(first: int, factor: int, n: int) -> list[int]:
    out = [first]
    for _ in range(n):
        out.append(out[-1] * factor & _M32)
    return out


_KA = _constants(*_HASH_A, 16)  # the pool's hash steps (16: 4 words in, 12 mixes)
_KB = _constants(*_HASH_B, 8)   # the output's (8 words out: four 64-bit ones)


def _hash(v: int, step: int) -> int:
    v = ((v ^ _KA[step]) * _KA[step + 1]) & _M32
    return v ^ (v >> 16)


def _mix(x: int, y: int) -> int:
    r = (_MIX_L * x - _MIX_R * y) & _M32
    return r ^ (r >> 16)


_PREFIXES: dict[tuple[int, int, int], tuple[int, ...]] = {}
_PREFIXES_MAX = 1024


def _prefix(k0: int, k1: int, k2: int) -> tuple[int, ...]:
    """What the pool holds from the first three words: pool words 0-2 before the last word mixes
    into them, and the three hashes of them that mix into pool word 3 (steps 6, 9, 12)."""
    m0, m1, m2 = _hash(k0, 0), _hash(k1, 1), _hash(k2, 2)
    m1, m2, h6 = _mix(m1, _hash(m0, 4)), _mix(m2, _hash(m0, 5)), _hash(m0, 6)
    m0, m2, h9 = _mix(m0, _hash(m1, 7)), _mix(m2, _hash(m1, 8)), _hash(m1, 9)
    m0, m1, h12 = _mix(m0, _hash(m2, 10)), _mix(m1, _hash(m2, 11)), _hash(m2, 12)
    out = (m0, m1, m2, h6, h9, h12)
    if len(_PREFIXES) >= _PREFIXES_MAX:
        _PREFIXES.clear()
    _PREFIXES[(k0, k1, k2)] = out
    return out


def _sample_words(k0: int, k1: int, k2: int, k3: int) -> list[int]:
    """``SeedSequence([k0, k1, k2, k3]).generate_state(4, np.uint64)`` as ints (each < 2**32).
    One expression per hash step, as the per-sample cost is the point."""
    p = _PREFIXES.get((k0, k1, k2)) or _prefix(k0, k1, k2)
    m0, m1, m2, h6, h9, h12 = p
    a, b, mask, ml, mr = _KA, _KB, _M32, _MIX_L, _MIX_R
    v = ((k3 ^ a[3]) * a[4]) & mask
    v ^= v >> 16
    v = (ml * v - mr * h6) & mask
    v ^= v >> 16
    v = (ml * v - mr * h9) & mask
    v ^= v >> 16
    v = (ml * v - mr * h12) & mask
    m3 = v ^ (v >> 16)
    v = ((m3 ^ a[13]) * a[14]) & mask
    v = (ml * m0 - mr * (v ^ (v >> 16))) & mask
    m0 = v ^ (v >> 16)
    v = ((m3 ^ a[14]) * a[15]) & mask
    v = (ml * m1 - mr * (v ^ (v >> 16))) & mask
    m1 = v ^ (v >> 16)
    v = ((m3 ^ a[15]) * a[16]) & mask
    v = (ml * m2 - mr * (v ^ (v >> 16))) & mask
    m2 = v ^ (v >> 16)
    w0, w1 = ((m0 ^ b[0]) * b[1]) & mask, ((m1 ^ b[1]) * b[2]) & mask
    w2, w3 = ((m2 ^ b[2]) * b[3]) & mask, ((m3 ^ b[3]) * b[4]) & mask
    w4, w5 = ((m0 ^ b[4]) * b[5]) & mask, ((m1 ^ b[5]) * b[6]) & mask
    w6, w7 = ((m2 ^ b[6]) * b[7]) & mask, ((m3 ^ b[7]) * b[8]) & mask
    return [w0 ^ (w0 >> 16) | (w1 ^ (w1 >> 16)) << 32, w2 ^ (w2 >> 16) | (w3 ^ (w3 >> 16)) << 32,
            w4 ^ (w4 >> 16) | (w5 ^ (w5 >> 16)) << 32, w6 ^ (w6 >> 16) | (w7 ^ (w7 >> 16)) << 32]


class _Hashed(ISpawnableSeedSequence):
    """The seed sequence of a sample's key for ``PCG64``, which asks it for four 64-bit words:
    those are the ones :func:`_sample_words` computed. Anything else (``spawn``, ``entropy``, other
    sizes) is asked of NumPy's own ``SeedSequence`` of the key, made then."""

    def __init__(self, words: list[int], key: tuple[int, ...]) -> None:
        self._words = words
        self._key = key
        self._seq: np.random.SeedSequence | None = None

    def _real(self) -> np.random.SeedSequence:
        if self._seq is None:
            self._seq = np.random.SeedSequence(list(self._key))
        return self._seq

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        if n_words == 4 and dtype is np.uint64:
            return np.array(self._words, np.uint64)
        return self._real().generate_state(n_words, dtype)

    def spawn(self, n_children: int) -> list[np.random.SeedSequence]:  # type: ignore[override]  # NumPy's own children
        return self._real().spawn(n_children)

    def __getattr__(self, name: str) -> Any:  # entropy, spawn_key, pool, ... as NumPy's has them
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._real(), name)


def set_sample_key(key: tuple[int, ...] | None) -> None:
    """Engine side: the key of the sample about to be processed on this thread (None: eager mode)."""
    _local.key = key
    _local.gen = None


class SampleCursor:
    """The key of the sample being processed, as parts the engine updates in place.

    :func:`set_sample_key` builds a tuple and writes two thread-local attributes per sample; a
    loop over many samples instead enters a cursor once (:func:`enter_cursor`) and writes
    ``cursor.index`` (and ``cursor.op`` when several ops take turns) per sample. The key
    ``(seed, op, pass_index, index)`` is only assembled when an operation asks for randomness,
    so ops that draw none pay nothing for it. A cursor starts with fresh streams, and a key's
    stream continues only while the cursor stays on that key (as after ``set_sample_key``).
    """

    __slots__ = ("seed", "op", "pass_index", "index", "gen", "gen_key")

    def __init__(self, seed: int, op: int, pass_index: int) -> None:
        self.seed, self.op, self.pass_index, self.index = seed, op, pass_index, 0
        self.gen: np.random.Generator | None = None
        self.gen_key: tuple[int, ...] | None = None

    def key(self) -> tuple[int, int, int, int]:
        return (self.seed, self.op, self.pass_index, self.index)


_CURSOR = object()  # _local.key while this thread's samples are keyed by _local.cursor


def enter_cursor(seed: int, op: int, pass_index: int) -> tuple[SampleCursor, tuple]:
    """Engine side: keys this thread's samples by a new cursor, set to ``(seed, op, pass_index,
    index=0)``, until :func:`leave_cursor` (pass it the second item returned) restores the key
    that was there before (so a pipeline run inside an op leaves the op's key as it found it)."""
    prev = (getattr(_local, "key", None), getattr(_local, "gen", None), getattr(_local, "cursor", None))
    c = _local.cursor = SampleCursor(seed, op, pass_index)
    _local.key = _CURSOR
    _local.gen = None
    return c, prev


def leave_cursor(prev: tuple) -> None:
    _local.key, _local.gen, _local.cursor = prev


def save_key() -> tuple:
    """This thread's sample key as it is now, for :func:`restore_key`. A pipeline run in the
    calling thread (a serial stage) sets keys as it goes; the iterator puts the caller's back after
    each row, so that later eager calls draw from the eager stream and name no stale sample."""
    return getattr(_local, "key", None), getattr(_local, "gen", None), getattr(_local, "cursor", None)


restore_key = leave_cursor


def get_sample_key() -> tuple[int, ...] | None:
    key = getattr(_local, "key", None)
    if key is _CURSOR:
        return _local.cursor.key()
    return key


def sample_rng() -> np.random.Generator:
    """The generator random operations draw from for the current sample.

    Inside a pipeline it is keyed by (seed, op, pass, sample index); successive draws within one
    sample continue the same stream. Eagerly, it is the eager stream (see :func:`seed_eager`).
    """
    key = getattr(_local, "key", None)
    if key is None:
        return _eager
    if key is _CURSOR:
        c = _local.cursor
        key = c.key()
        gen = c.gen
        if gen is None or c.gen_key != key:
            gen = c.gen = key_rng(*key)
            c.gen_key = key
        return gen
    gen = _local.gen
    if gen is None:
        gen = _local.gen = key_rng(*key)
    return gen


def seed_eager(seed: int | None) -> None:
    """Reseeds the stream used by eager calls of random operations (None: from the OS)."""
    global _eager
    with _eager_lock:
        _eager = np.random.default_rng(seed)


class sample_key:
    """Context manager form of :func:`set_sample_key` that restores the previous key."""

    __slots__ = ("_key", "_prev")

    def __init__(self, key: tuple[int, ...] | None) -> None:
        self._key = key

    def __enter__(self) -> None:
        self._prev = (getattr(_local, "key", None), getattr(_local, "gen", None))
        set_sample_key(self._key)

    def __exit__(self, *exc: object) -> None:
        _local.key, _local.gen = self._prev


# ---- the global generators inside user functions --------------------------------------------

_SALT_GLOBALS = 0x6C0BA15
_ODD32, _ODD64 = 0x9E3779B1, 0x9E3779B97F4A7C15  # odd: index -> seed is one-to-one per pass
_np_seed = np.random.seed            # the global RandomState's seed(): also drops its cached gauss
_py_inst = random.seed.__self__  # type: ignore[attr-defined]     # the Random instance behind random.random() & co.
_py_seed = _random.Random.seed       # its C seeding, without Random.seed's Python wrapper
LOCK_WAIT_S = 10.0
_globals_lock = fork_safe(threading.RLock())
_unlocked_warned: set[int] = set()


class GlobalSeeds:
    """Seeds ``np.random`` and ``random`` for one op's user function, per sample.

    ``enter(seed, pass, index)`` takes the process-wide lock (re-entrant: a user function may read
    another pipeline inline), then seeds NumPy's global generator with a 32-bit and Python's with a
    64-bit value: ``base + index * odd`` where the bases are drawn once per (seed, op, pass) from
    :func:`key_rng`, so no two samples of a pass share a stream. ``leave`` releases the lock.
    Cost: about 5 us per call (NumPy's legacy seeding ~1.5 us, Python's ~3.5 us), paid only by
    user functions of runs with a seed set, and not by functions marked ``not_random``.

    The generators are not restored after the call: saving and restoring them costs ~100 us (they
    hold 2.5 KB each), twenty times the seeding. Outside the pipeline they are left where the last
    seeded call ended, which depends on which sample ran last in that thread; code that needs its
    own reproducible stream should own a generator (``np.random.default_rng(s)``,
    ``random.Random(s)``). Before this, user functions advanced the shared streams at
    timing-dependent points anyway.

    If the lock is not free within ``LOCK_WAIT_S`` (a user function holding it waits on a thread
    worker of another pipeline that needs it too), the call runs without it, once warned: no hang,
    but that op's draws are then only as reproducible as the thread timing.
    """

    __slots__ = ("op", "base")

    def __init__(self, op: int) -> None:
        self.op = op
        self.base: tuple[int, int, int, int] | None = None  # (seed, pass, base32, base64)

    def _bases(self, seed: int, pass_index: int) -> tuple[int, int, int, int]:
        b = self.base
        if b is None or b[0] != seed or b[1] != pass_index:
            g = key_rng(seed, self.op, pass_index, _SALT_GLOBALS)
            b = self.base = (seed, pass_index, int(g.integers(0, 1 << 32)),
                             int(g.integers(0, 1 << 64, dtype=np.uint64)))
        return b

    def enter(self, seed: int, pass_index: int, index: int) -> tuple:
        """Sets this thread's sample key to ``(seed, op, pass_index, index)`` and seeds the globals
        from it; returns what :meth:`leave` needs to release the lock and put back the key that
        was there before (so a pipeline run inside a user function leaves the outer keys alone)."""
        _, _, b32, b64 = self._bases(seed, pass_index)
        prev = (getattr(_local, "key", None), getattr(_local, "gen", None))
        _local.key = (seed, self.op, pass_index, index)
        _local.gen = None
        locked = _globals_lock.acquire(timeout=LOCK_WAIT_S)
        if not locked and self.op not in _unlocked_warned:
            _unlocked_warned.add(self.op)
            warnings.warn(f"headrace: a user function of op {self.op} waited {LOCK_WAIT_S:g} s for the lock "
                          "that keeps np.random / random reproducible across worker threads; it runs "
                          "without it from now on, so its draws from them may depend on thread timing "
                          "(does a user function read another pipeline that runs on threads?).",
                          RuntimeWarning, stacklevel=2)
        _np_seed((b32 + index * _ODD32) & _M32)
        _py_seed(_py_inst, (b64 + index * _ODD64) & _M64)
        _py_inst.gauss_next = None
        return locked, prev

    @staticmethod
    def leave(token: tuple) -> None:
        locked, (_local.key, _local.gen) = token
        if locked:
            _globals_lock.release()
