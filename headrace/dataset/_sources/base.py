"""Bases of source datasets.

``MappableDataset`` is the base of every source that reads rows by index. A subclass checks its
own arguments, passes the common ones (num_samples, num_parallel_workers, shuffle, sampler,
num_shards, shard_id) to ``MappableDataset.__init__``, and implements ``_make_source()``, which
returns an object following ``headrace._util.types.RandomAccessSource``. The source is made
lazily, when the plan is first needed. Subclasses may also override ``_class_indexing`` /
``_num_classes`` / ``_labels`` (class id per row, for PKSampler) and ``_default_workers``.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any

import numpy as np

from headrace._engine import plan as P
from headrace._engine import options as _options
from headrace._engine.samplers import ChainedPlan
from headrace._util import checks, rng
from headrace._util.types import RandomAccessSource, SampleContext
from headrace.dataset import _cache_plan, _provided
from headrace.dataset._datasets import Dataset, resolve_workers
from headrace.dataset._sampler_args import resolve_sampler, select_sampler
from headrace.dataset.samplers import BuiltinSampler, Shuffle, is_shuffle


class SourceDataset(Dataset):
    """A dataset with no input datasets."""

    def _source_name(self) -> str:
        return type(self).__name__


class MappableDataset(SourceDataset):
    """A source read by index: samplers, shuffling and sharding work on its row indices."""

    reads_by_index = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__ = _recording_init(cls.__dict__["__init__"])

    def __init__(self, num_samples=None, num_parallel_workers=None, shuffle=None, sampler=None,
                 num_shards=None, shard_id=None, cache=None):
        super().__init__((), num_parallel_workers)
        num_samples = checks.check_num_samples(num_samples)
        if shuffle is not None and not isinstance(shuffle, bool) and not is_shuffle(shuffle):
            raise TypeError(f"Argument shuffle with value {shuffle!r} is not of type [bool, Shuffle], "
                            f"but got {type(shuffle)}.")
        self.num_samples = num_samples
        self.shuffle_flag = shuffle
        self.sampler = sampler
        self.num_shards, self.shard_id = checks.check_shard(num_shards, shard_id)
        self._sampler_plan = self._select_plan(num_samples, shuffle, sampler, num_shards, shard_id)
        self._workers = resolve_workers(num_parallel_workers) if num_parallel_workers is not None else self._default_workers()
        self.cache = _cache_plan.check_cache(cache)

    def _default_workers(self) -> int:
        return resolve_workers(None)

    def _select_plan(self, num_samples, shuffle, sampler, num_shards, shard_id):
        """The index plan for these sampling arguments (a source with orders of its own overrides it)."""
        return select_sampler(num_samples, shuffle, sampler, num_shards, shard_id)

    def _make_source(self) -> RandomAccessSource:
        raise NotImplementedError(f"{type(self).__name__} must implement _make_source()")

    def _labels(self) -> np.ndarray:
        raise ValueError(f"{type(self).__name__} cannot name the class of each row, which PKSampler needs.")

    def _source(self) -> RandomAccessSource:
        src = self.__dict__.get("_src")
        if src is None:
            src = self.__dict__["_src"] = self._make_source()
        return src

    def _make_plan(self) -> P.Node:
        src = self._source()
        node = P.RandomAccessNode((), tuple(src.column_names), src, self._sampler_plan,
                                  self._source_name(), self._workers, self._detached_labels(), self._processes())
        if self.__dict__.get("cache") is not None:
            return _cache_plan.cache_source(self, node)
        return node

    def _detached_labels(self):
        """``_labels`` of a shallow twin of this dataset that does not cache the plan: the plan
        (which this dataset caches) then holds no reference back to the dataset, and dropping
        both frees the source at once instead of leaving a cycle for the garbage collector."""
        twin = object.__new__(type(self))
        twin.__dict__.update((k, v) for k, v in self.__dict__.items() if k != "_plan_node")
        return twin._labels

    def _processes(self) -> bool | None:
        """Whether reads should run in worker processes (None: the engine picks threads)."""
        return None

    def _access_index(self, index: Any) -> int:
        """The source index that position ``index`` of a first pass reads: what ``dataset[index]``
        returns in MindSpore (the sampler's order, drawn once with the configured seed, or a fresh
        one when none is set, and kept until the sampler changes).

        Raises:
            TypeError: ``index`` is not an int or a NumPy integer.
            RuntimeError: ``index`` is negative or not below the number of samples.
        """
        checks.check_type(index, (int, np.number), "index")
        if not isinstance(index, (int, np.integer)):
            raise TypeError(f"Argument index with value {index} is not an integer, but got {type(index)}.")
        order = self.__dict__.get("_access_order")
        if order is None:
            order = self.__dict__["_access_order"] = self._first_pass_order()
        i = int(index)
        if not 0 <= i < len(order):
            raise RuntimeError(f"{self._source_name()}: Index [{i}] exceeded the number of data samples.")
        return int(order[i])

    def _first_pass_order(self) -> np.ndarray:
        seed = _options.snapshot().seed
        ctx = SampleContext(len(self._source()), 0, seed if seed is not None else rng.new_seed(),
                            self._detached_labels(), seed is not None)
        return np.asarray(self._sampler_plan.indices(ctx), dtype=np.int64)

    def use_sampler(self, new_sampler):
        """Makes this dataset read through ``new_sampler`` (in place, as in MindSpore; returns None).

        Datasets already built on top of this one keep the sampler they were built with.

        Raises:
            TypeError: If ``new_sampler`` is None or not a sampler.
        """
        _check_sampler_object(new_sampler)
        _check_input_mode(new_sampler)
        self._set_sampler(new_sampler)

    def add_sampler(self, new_sampler):
        """Makes ``new_sampler`` sample from the current sampler's output (in place; returns None).

        Raises:
            TypeError: If ``new_sampler`` is None or not a sampler.
            RuntimeError: If the current sampler (the one ``shuffle``/``num_shards`` imply when no
                sampler was given) shuffles with ``Shuffle.PARTIAL``, or ``new_sampler``'s mode is
                neither ``Shuffle.FALSE`` nor ``Shuffle.GLOBAL``.
        """
        _check_sampler_object(new_sampler)
        current = self.sampler
        if current is None:
            current = resolve_sampler(self.num_samples, self.shuffle_flag, None, self.num_shards, self.shard_id)
        if current.get_shuffle_mode() == Shuffle.PARTIAL:
            raise RuntimeError("When multiple samplers are used, ensure that the shuffle of the current sampler "
                               "must not be Shuffle.PARTIAL.")
        _check_input_mode(new_sampler)
        if self.sampler is not None:
            new_sampler.add_child(self.sampler)
        self._set_sampler(new_sampler)

    def _set_sampler(self, sampler: Any) -> None:
        split = self.__dict__.get("_split_plan")
        if split is not None:  # a part of a split: the new sampler samples the part's rows, as in MindSpore
            plan = self._plan_over_split(sampler, split)
        else:
            plan = self._select_plan(self.num_samples, None, sampler, None, None)
        self.sampler, self.shuffle_flag, self.num_shards, self.shard_id = sampler, None, None, None
        self._sampler_plan = plan
        for cached in ("_plan_node", "_counted_size", "_first", "_access_order"):
            self.__dict__.pop(cached, None)

    def _with_sampler(self, sampler: Any) -> "MappableDataset":
        """A copy of this dataset reading through ``sampler`` (this one is unchanged)."""
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._set_sampler(sampler)
        return clone

    def _plan_over_split(self, sampler: Any, split: Any) -> Any:
        """The plan of ``sampler`` sampling the rows of the split part ``split`` reads."""
        return ChainedPlan(self._select_plan(None, None, sampler, None, None), split)

    def _split_base_plan(self) -> Any:
        """The plan whose order ``Dataset.split`` deals out (this dataset's current one)."""
        return self._sampler_plan

    def _with_split_plan(self, plan: Any) -> "MappableDataset":
        """A copy of this dataset reading the rows of ``plan`` (a ``SplitPlan``), on which
        ``use_sampler`` / ``add_sampler`` then sample from the part's rows."""
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone.sampler, clone.shuffle_flag, clone.num_shards, clone.shard_id = None, None, None, None
        clone.num_samples = None
        clone.__dict__["_split_plan"] = plan
        clone._sampler_plan = plan
        for cached in ("_plan_node", "_counted_size", "_first", "_access_order"):
            clone.__dict__.pop(cached, None)
        return clone

    def is_shuffled(self):
        return bool(getattr(self._sampler_plan, "is_shuffled", lambda: False)())

    def is_sharded(self):
        return bool(getattr(self._sampler_plan, "is_sharded", lambda: False)())


def _recording_init(init: Any) -> Any:
    """``init`` that first keeps the arguments of the outermost constructor call as
    ``_ctor_args`` (name -> value), which ``ds.serialize`` writes out."""
    sig = inspect.signature(init)

    @functools.wraps(init)
    def wrapper(self, *args: Any, **kwargs: Any) -> None:
        if "_ctor_args" not in self.__dict__:
            try:
                bound = sig.bind(self, *args, **kwargs)
            except TypeError:
                bound = None  # init itself reports the bad call
            if bound is not None:
                bound.apply_defaults()
                self.__dict__["_ctor_args"] = {k: v for k, v in list(bound.arguments.items())[1:]
                                               if sig.parameters[k].kind not in (inspect.Parameter.VAR_POSITIONAL,
                                                                                 inspect.Parameter.VAR_KEYWORD)}
        init(self, *args, **kwargs)

    return wrapper


def _check_input_mode(sampler: BuiltinSampler) -> None:
    """MindSpore's check of a sampler given to ``use_sampler`` / ``add_sampler``."""
    mode = sampler.get_shuffle_mode()
    if mode not in (Shuffle.FALSE, Shuffle.GLOBAL):
        raise RuntimeError("When multiple samplers are used, ensure that the shuffle of the input sampler must be "
                           f"Shuffle.FALSE or Shuffle.GLOBAL, but got: {mode}.")


def _check_sampler_object(sampler: Any) -> None:
    if sampler is None:
        raise TypeError("Input sampler can not be None.")
    if not isinstance(sampler, BuiltinSampler):
        raise TypeError(f"Input sampler is not an instance of a sampler: got {type(sampler).__name__}.")


# For _cache_plan, which sits below Dataset and its sources.
_provided.provide(MappableDataset=MappableDataset)
