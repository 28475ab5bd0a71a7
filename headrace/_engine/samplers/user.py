"""A user's sampler object as an index plan (:class:`UserPlan`): the one plan that runs user code,
and so is only as pure as that object."""
from __future__ import annotations

import copy
import numbers
import threading
from typing import Any

import numpy as np

from headrace._engine.samplers.base import LabelsFn, SamplerPlan, _readonly
from headrace._util.forksafe import fork_safe
from headrace._util.types import SampleContext

__all__ = ["UserPlan", "user_items"]


class UserPlan(SamplerPlan):
    """Runs a user's sampler object (``get_indices()``/``reset()``/``_handshake()``) pass by pass.

    Every run starts from a copy of the object as it was when the plan was made (MindSpore copies
    the pipeline for each iterator), so two iterators and a restarted one see the same sequence;
    ``reset()`` runs between passes. Passes are cached, so asking for the same pass twice does
    not advance the user's object.
    """

    #: when True, a pass that yields fewer indices than the sampler's declared ``num_samples`` is an
    #: error (MindSpore's generator sources check it; its other sources read what there is)
    check_count = False

    def __init__(self, sampler: Any) -> None:
        self._pristine = self._copy(sampler)
        self._lock = fork_safe(threading.Lock())
        self._live: Any = None
        self._live_pass = -1
        self._live_rows = -1
        self._cache: dict[int, tuple[np.ndarray, list[int]]] = {}

    @staticmethod
    def _copy(sampler: Any) -> Any:
        try:
            return copy.deepcopy(sampler)
        except Exception:  # noqa: BLE001 - not copyable (holds a generator, a lock...): share the object
            return sampler

    @property
    def pure(self) -> bool:
        return False

    @property
    def sampler(self) -> Any:
        return self._pristine

    def num_samples(self, num_rows: int, labels: LabelsFn | None = None) -> int:
        """The declared ``num_samples`` (not capped), else the length of one pass of a copy.

        Returns -1 (unknown) when there is no declared count and the object cannot be copied.
        """
        declared = getattr(self._pristine, "num_samples", None)
        if declared is not None:
            return int(declared)
        try:
            probe = copy.deepcopy(self._pristine)
        except Exception:  # noqa: BLE001 - any failure to copy means "unknown"
            return -1
        probe._handshake(num_rows)
        return len(_user_indices(probe)[0])

    def rows_for_parent(self, ctx: SampleContext) -> int:
        # MindSpore hands a parent the user sampler's own count (declared, or one pass counted).
        return self.num_samples(ctx.num_rows)

    def _advance(self, ctx: SampleContext) -> tuple[np.ndarray, list[int]]:
        if self._live is None or ctx.pass_index < self._live_pass or ctx.num_rows != self._live_rows:
            self._live = self._copy(self._pristine)
            self._live._handshake(ctx.num_rows)
            self._live_pass = -1
            self._live_rows = ctx.num_rows
            self._cache.clear()
        while self._live_pass < ctx.pass_index:
            if self._live_pass >= 0:
                self._live.reset()
            self._live_pass += 1
            self._cache = {self._live_pass: _user_indices(self._live)}
        got = self._cache[ctx.pass_index]
        declared = getattr(self._pristine, "num_samples", None)
        if self.check_count and declared is not None and len(got[0]) < declared:
            raise RuntimeError(f"The actual amount of data read from generator {len(got[0])} is different from "
                               f"generator.len {declared}, you should adjust generator.len to make them match.")
        return got

    def indices(self, ctx: SampleContext) -> np.ndarray:
        with self._lock:
            hit = self._cache.get(ctx.pass_index) if ctx.num_rows == self._live_rows else None
            return (hit or self._advance(ctx))[0]

    def batch_sizes(self, ctx: SampleContext) -> list[int]:
        """Per item the sampler yielded in that pass: 0 for a single index, else the list's length."""
        with self._lock:
            hit = self._cache.get(ctx.pass_index) if ctx.num_rows == self._live_rows else None
            return list((hit or self._advance(ctx))[1])

    def with_count_check(self) -> "UserPlan":
        """This plan, made to check the count of every pass (see ``check_count``); returns self."""
        self.check_count = True
        return self

    def __repr__(self) -> str:
        return f"UserPlan({type(self._pristine).__name__})"


def user_items(sampler: Any) -> tuple[np.ndarray, list[int]]:
    """One pass of a user sampler as MindSpore's ``get_indices`` makes it: a flat array, batch sizes."""
    limit = getattr(sampler, "num_samples", None)
    flat: list[Any] = []
    sizes: list[int] = []
    for count, item in enumerate(sampler):
        if isinstance(item, numbers.Number) or (isinstance(item, np.ndarray) and item.ndim == 0):
            flat.append(item)
            sizes.append(0)
        else:
            item = list(item)
            flat.extend(item)
            sizes.append(len(item))
        # Like MindSpore, the limit is checked after an item is taken (so 0 still takes one).
        if limit is not None and count + 1 >= limit:
            break
    try:
        arr = np.array(flat)
    except (ValueError, TypeError):  # ragged nesting
        arr = np.array(None, dtype=object)
    if arr.dtype == object:
        raise RuntimeError("Fetched indices can not be converted to a valid ndarray.")
    return arr, sizes


def _user_indices(sampler: Any) -> tuple[np.ndarray, list[int]]:
    """One pass of a user sampler as the engine takes it: int64 indices (else an error), batch sizes."""
    arr, sizes = user_items(sampler)
    if arr.dtype.kind not in "iu":
        raise RuntimeError(f"Python sampler should return index of type integer, but got: {arr.dtype}")
    return _readonly(arr.astype(np.int64).reshape(-1)), sizes
