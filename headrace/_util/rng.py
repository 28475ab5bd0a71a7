"""Randomness keyed by position, not by time.

Every random choice in a pipeline draws from a generator keyed by (seed, op id, pass, sample
index). The engine sets the key for the sample it is processing (thread-locally) before calling
an operation; a random transform asks :func:`sample_rng` for its generator. So the result does
not depend on worker count, thread timing or process boundaries, and resuming needs no RNG dump.

Outside a pipeline (an eager ``op(image)`` call) :func:`sample_rng` returns a module-private
generator, reseeded by ``ds.config.set_seed``. Library code never touches NumPy's or Python's
global random state.
"""
from __future__ import annotations

import os
import threading

import numpy as np

_local = threading.local()
_eager_lock = threading.Lock()
_eager = np.random.default_rng()


def new_seed() -> int:
    """A fresh 32-bit seed from the OS, for pipelines run without ``set_seed``."""
    return int.from_bytes(os.urandom(4), "little")


def key_rng(*key: int) -> np.random.Generator:
    """A generator that is a pure function of ``key`` (non-negative ints)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(k) & 0xFFFFFFFFFFFFFFFF for k in key])))


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
