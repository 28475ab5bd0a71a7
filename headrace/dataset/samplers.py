"""Samplers: which rows of a random-access source a pass reads, and in what order.

MindSpore's public sampler classes, with its signatures, defaults, checks and messages. Each
sampler turns into an engine plan (``plan()``, from ``headrace._engine.samplers``); sources call
:func:`select_sampler` to turn their ``num_samples`` / ``shuffle`` / ``sampler`` / ``num_shards`` /
``shard_id`` arguments into one plan. Under ``ds.config.set_seed(s)`` the orders equal MindSpore's.

Differences from MindSpore 2.10, all on inputs it accepts but mishandles:

* values MindSpore checks only when a pipeline starts (a negative ``start_index``, negative or
  all-zero weights, ``num_val`` < 1, ``offset`` > ``num_shards``) are refused by the constructor,
  with ``ValueError`` and MindSpore's wording (``DistributedSampler``'s ``num_shards`` and
  ``shard_id`` are taken, as MindSpore takes them, and refused where the sampler is used);
* booleans are not accepted where an integer or a number is expected, and an ``offset`` below -1
  is refused;
* ``WeightedRandomSampler`` refuses infinite or NaN weights;
* an empty ``SubsetSampler`` yields nothing (MindSpore crashes).
"""
from __future__ import annotations

import collections.abc
import copy
import numbers

import numpy as np

from headrace._engine.samplers import builtin as _plans
from headrace._engine.samplers.user import user_items
from headrace._util import checks
from headrace._util.errors import EarlyValueError
from headrace.dataset.core import config as _config
from headrace.dataset._shuffle import Shuffle, _as_shuffle, is_shuffle, shuffle_mode
from headrace.dataset._sampler_base import BuiltinSampler, _check_bool, _check_int, _check_num_samples, _is_int

__all__ = [
    "BuiltinSampler", "DistributedSampler", "IterSampler", "PKSampler", "RandomSampler", "Sampler",
    "SequentialSampler", "Shuffle", "SubsetRandomSampler", "SubsetSampler", "WeightedRandomSampler",
    "is_shuffle", "shuffle_mode",
]

_INT64_MAX = checks.INT64_MAX


class _UnshardedSampler(BuiltinSampler):
    """A sampler that does not shard itself (every sampler but ``DistributedSampler``): sharded only
    where its child is."""

    def is_sharded(self):
        return self._child_is("is_sharded", False)


class Sampler(_UnshardedSampler):
    """Base of user-defined samplers: implement ``__iter__`` (and optionally ``__len__``, ``reset``).

    ``__iter__`` yields source indices (or lists of them, which are flattened). Before the first
    pass the engine sets ``dataset_size`` (the rows it samples from); ``reset()`` runs between
    passes. Each iterator works on its own copy of the sampler.

    Args:
        num_samples (int, optional): Most indices to take per pass. Default: None (``len(self)`` if
            the class defines ``__len__``, else all that ``__iter__`` yields).

    Examples:
        >>> class ReverseSampler(Sampler):
        ...     def __iter__(self):
        ...         return iter(range(self.dataset_size - 1, -1, -1))
        >>> s = ReverseSampler()
        >>> s._handshake(4)
        >>> s.get_indices().tolist()
        [3, 2, 1, 0]
    """

    def __init__(self, num_samples=None):
        super().__init__(_check_num_samples(num_samples))
        self.dataset_size = 0
        if self.num_samples is None and hasattr(self, "__len__"):
            self.num_samples = len(self)
        self.batch_sizes = []

    def __iter__(self):
        raise NotImplementedError

    def reset(self):
        """Called between passes; override to change state per pass."""

    def _handshake(self, ds_size):
        self.dataset_size = ds_size

    def get_indices(self):
        """One pass of indices as a NumPy array (list items are flattened). Do not override."""
        indices, sizes = user_items(self)
        self.batch_sizes.append(sizes)
        return indices

    def _get_batch_sizes(self):
        return self.batch_sizes.pop(0) if self.batch_sizes else []

    def _own_plan(self) -> _plans.SamplerPlan:
        return _plans.UserPlan(self)

    def plan(self) -> _plans.SamplerPlan:
        child = getattr(self, "child_sampler", None)  # a subclass may skip Sampler.__init__
        self.child_sampler = None  # the plan's copy of the user object need not carry the child
        try:
            own = self._own_plan()
        finally:
            self.child_sampler = child
        return own if child is None else _plans.ChainedPlan(own, child.plan())

    def add_child(self, sampler):
        if sampler is not None and not isinstance(sampler, BuiltinSampler):
            raise TypeError("Input sampler is not an instance of a sampler.")
        self.child_sampler = sampler

    def is_shuffled(self):
        return self._child_is("is_shuffled", False)

    def get_num_samples(self):
        if self.num_samples is not None:
            return self.num_samples
        probe = copy.deepcopy(self)
        probe.get_indices()
        return len(probe.batch_sizes[-1])


def is_index_sequence(obj) -> bool:
    """Whether ``obj`` can be a sampler of indices: an iterable (not a str or bytes), or an object
    with ``__getitem__`` and ``__len__`` (iterated by index, as Python iterates sequences)."""
    if isinstance(obj, (str, bytes)):
        return False
    return isinstance(obj, collections.abc.Iterable) or (hasattr(obj, "__getitem__") and hasattr(obj, "__len__"))


class IterSampler(Sampler):
    """Wraps any iterable of indices as a sampler (what a plain iterable ``sampler=`` becomes).

    Args:
        sampler (Iterable): Yields source indices; iterated once per pass. An object with
            ``__getitem__`` and ``__len__`` is read at 0, 1, ... up to its length.
        num_samples (int, optional): Most indices per pass. Default: None (``len(sampler)`` when it
            has a length, else all).

    Examples:
        >>> IterSampler([4, 1, 3]).get_indices().tolist()
        [4, 1, 3]
    """

    def __init__(self, sampler, num_samples=None):
        if not is_index_sequence(sampler):
            raise TypeError("sampler should be either iterable or from mindspore.dataset.samplers.")
        if num_samples is None and hasattr(sampler, "__len__"):
            num_samples = len(sampler)
        super().__init__(num_samples=num_samples)
        self.sampler = sampler

    def __iter__(self):
        return iter(self.sampler)


class DistributedSampler(BuiltinSampler):
    """One shard of the rows, for data-parallel training.

    Rows are dealt out in turn (shard ``s`` gets rows ``s, s + num_shards, ...``) and the last
    ones wrap to the start so every shard gets ``ceil(rows / num_shards)`` rows. With ``shuffle``
    the rows are permuted first, the same way in every shard: the seed is the one configured when
    the sampler is made (``ds.config.get_seed()``, 5489 if never set), plus one, plus the pass.

    Args:
        num_shards (int): Number of shards.
        shard_id (int): This shard, in [0, num_shards - 1].
        shuffle (Union[bool, Shuffle], optional): Permute the rows first. Default: True
            (``Shuffle.GLOBAL``).
        num_samples (int, optional): Most rows per shard. Default: None (all of the shard).
        offset (int, optional): The shard that receives row 0 (for concatenated datasets);
            -1 deals evenly. Default: -1.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If offset is not in [-1, num_shards]; when the sampler is used (given to a
            source, sized, iterated): if num_shards < 1 or shard_id is out of range (also a
            RuntimeError, as in MindSpore).

    Examples:
        >>> from headrace._util.types import SampleContext
        >>> DistributedSampler(3, 1, shuffle=False).plan().indices(SampleContext(10, 0, 0)).tolist()
        [1, 4, 7, 0]
    """

    def __init__(self, num_shards, shard_id, shuffle=True, num_samples=None, offset=-1):
        num_shards = _check_int(num_shards, "num_shards")
        shard_id = _check_int(shard_id, "shard_id")
        mode = shuffle if isinstance(shuffle, bool) else _as_shuffle(shuffle)
        if mode is None:
            raise TypeError(f"shuffle must be a boolean value or valid shuffle mode but was: {shuffle}.")
        num_samples = _check_num_samples(num_samples)
        offset = _check_int(offset, "offset")
        if num_shards > 0:  # (else refused where the sampler is used, as num_shards < 1 itself)
            self._check_offset(offset, num_shards)
        self.num_shards = num_shards
        self.shard_id = shard_id
        if isinstance(mode, bool):
            mode = Shuffle.GLOBAL if mode else Shuffle.FALSE
        self.shuffle = mode
        self.seed = _config.get_seed()
        self.offset = offset
        super().__init__(num_samples)

    def check_num_shards(self) -> None:
        """Refuses ``num_shards`` < 1 (MindSpore's check where the sampler is used)."""
        if self.num_shards <= 0:
            raise EarlyValueError(f"DistributedSampler: num_shards must be greater than 0, but got: {self.num_shards}")

    @staticmethod
    def _check_offset(offset: int, num_shards: int) -> None:
        if offset > num_shards:  # MindSpore raises it as a RuntimeError when the sampler is parsed
            raise EarlyValueError(f"DistributedSampler: offset must be no more than num_shards({num_shards}), "
                                  f"but got: {offset}")
        if offset < -1:
            raise ValueError(f"DistributedSampler: offset must be -1 or in [0, num_shards({num_shards})], "
                             f"but got: {offset}")

    def _own_plan(self) -> _plans.SamplerPlan:
        # MindSpore takes these values in the constructor and refuses them where the sampler is used
        # (a source given it, get_dataset_size, an iterator): so does this plan, which all of those make
        self.check_num_shards()
        if not 0 <= self.shard_id < self.num_shards:
            raise EarlyValueError(f"DistributedSampler: shard_id must be in range [0, {self.num_shards}), "
                                  f"but got: {self.shard_id}")
        self._check_offset(self.offset, self.num_shards)
        if self.shuffle not in (Shuffle.FALSE, Shuffle.GLOBAL):
            raise RuntimeError(f"The shuffle mode: {self.shuffle} is not supported with current dataset.")
        return _plans.DistributedPlan(self.num_shards, self.shard_id, self.shuffle == Shuffle.GLOBAL,
                                      self.num_samples or 0, self.offset, (self.seed + 1) & 0xFFFFFFFF)

    def set_offset(self, offset):
        """Sets ``offset`` and returns this sampler."""
        offset = _check_int(offset, "offset")
        self._check_offset(offset, self.num_shards)
        self.offset = offset
        return self

    def is_shuffled(self):
        if self.child_sampler is None:
            return self.shuffle != Shuffle.FALSE
        return self.child_sampler.is_shuffled()

    def is_sharded(self):
        if self.child_sampler is None:
            return self.num_shards > 1
        return self.child_sampler.is_sharded()

    def get_shuffle_mode(self):
        return self.shuffle


class PKSampler(_UnshardedSampler):
    """``num_val`` rows of every class, drawn at random within the class (with replacement).

    Needs a source that knows each row's class (folder and labelled-file sources).

    Args:
        num_val (int): Rows per class.
        num_class (int, optional): Not supported; must be None. Default: None.
        shuffle (bool, optional): Visit the classes in random order. Default: False.
        class_column (str, optional): Label column (MindRecord sources). Default: 'label'.
        num_samples (int, optional): Most rows per pass. Default: None (all).

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If num_val < 1.
        NotImplementedError: If num_class is given.

    Examples:
        >>> import numpy as np
        >>> from headrace._util.types import SampleContext
        >>> labels = lambda: np.array([0, 0, 1, 1, 1])
        >>> PKSampler(1).plan().indices(SampleContext(5, 0, 1, labels)).tolist()
        [0, 4]
    """

    def __init__(self, num_val, num_class=None, shuffle=False, class_column='label', num_samples=None):
        num_val = _check_int(num_val, "num_val")
        if num_class is not None:
            raise NotImplementedError("Not supported to specify num_class for PKSampler.")
        _check_bool(shuffle, "shuffle")
        if not isinstance(class_column, str):
            raise TypeError(f"class_column must be a str value but was: {class_column}.")
        num_samples = _check_num_samples(num_samples)
        if num_val <= 0:
            raise ValueError(f"PKSampler: num_val must be greater than 0, but got: {num_val}")
        self.num_val = num_val
        self.shuffle = shuffle
        self.class_column = class_column
        super().__init__(num_samples)

    def _own_plan(self) -> _plans.SamplerPlan:
        return _plans.PKPlan(self.num_val, self.shuffle, self.num_samples or 0)

    def is_shuffled(self):
        return self._child_is("is_shuffled", self.shuffle)


class RandomSampler(_UnshardedSampler):
    """All rows in a random order, reshuffled every pass; or draws with replacement.

    Under ``ds.config.set_seed(s)`` the order is MindSpore's: pass 0 is ``std::shuffle`` of the
    row ids with ``mt19937(s)``, pass k shuffles pass k-1's order with ``mt19937(s + k)``.

    Args:
        replacement (bool, optional): Draw with replacement. Default: False.
        num_samples (int, optional): Rows per pass (at most the row count). Default: None (all).
        shuffle (Shuffle, optional): Shuffle mode; random-access sources support
            ``Shuffle.GLOBAL`` only. Default: ``Shuffle.GLOBAL``.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If num_samples is negative.

    Examples:
        >>> from headrace._util.types import SampleContext
        >>> RandomSampler().plan().indices(SampleContext(10, 0, 1)).tolist()
        [9, 0, 2, 5, 7, 4, 6, 3, 1, 8]
    """

    def __init__(self, replacement=False, num_samples=None, shuffle=Shuffle.GLOBAL):
        _check_bool(replacement, "replacement")
        num_samples = _check_num_samples(num_samples)
        mode = _as_shuffle(shuffle)
        if mode is None or mode == Shuffle.FALSE:
            raise TypeError(f"shuffle must be valid shuffle mode but was: {shuffle}.")
        self.shuffle = mode
        self.deterministic = False
        self.replacement = replacement
        self.reshuffle_each_epoch = True
        super().__init__(num_samples)

    def _own_plan(self) -> _plans.SamplerPlan:
        if self.shuffle is not Shuffle.GLOBAL:
            raise RuntimeError(f"The shuffle mode: {self.shuffle} is not supported with current dataset.")
        return _plans.RandomPlan(self.replacement, self.num_samples or 0)

    def is_shuffled(self):
        return True

    def get_shuffle_mode(self):
        return self.shuffle


class SequentialSampler(_UnshardedSampler):
    """Rows in order, from ``start_index``.

    Args:
        start_index (int, optional): First row. Default: None (0).
        num_samples (int, optional): Most rows per pass. Default: None (all).

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If start_index or num_samples is negative.

    Examples:
        >>> from headrace._util.types import SampleContext
        >>> SequentialSampler(2, 3).plan().indices(SampleContext(10, 0, 0)).tolist()
        [2, 3, 4]
    """

    def __init__(self, start_index=None, num_samples=None):
        if start_index is not None:
            if not _is_int(start_index):
                raise TypeError(f"start_index must be integer but was: {start_index}.")
            if start_index < 0:
                raise EarlyValueError("SequentialSampler: start_index_ must be greater than or equal to 0, "
                                      f"but got: {start_index}")
        num_samples = _check_num_samples(num_samples)
        self.start_index = start_index
        super().__init__(num_samples)

    def _own_plan(self) -> _plans.SamplerPlan:
        return _plans.SequentialPlan(self.start_index or 0, self.num_samples or 0)

    def is_shuffled(self):
        return self._child_is("is_shuffled", False)

    def get_shuffle_mode(self):
        return Shuffle.FALSE


class SubsetSampler(_UnshardedSampler):
    """The given row ids, in the given order.

    Args:
        indices (Iterable[int]): Row ids (any iterable but a string; a single int is one id).
        num_samples (int, optional): Take only the first ``num_samples`` ids. Default: None.

    Raises:
        TypeError: If indices is not an iterable of ints, or num_samples is not an int.
        ValueError: If num_samples is negative.

    Examples:
        >>> from headrace._util.types import SampleContext
        >>> SubsetSampler([4, 0, 2]).plan().indices(SampleContext(5, 0, 0)).tolist()
        [4, 0, 2]
    """

    def __init__(self, indices, num_samples=None):
        num_samples = _check_num_samples(num_samples)
        if _is_int(indices):
            indices = [indices]
        elif isinstance(indices, str) or not isinstance(indices, collections.abc.Iterable):
            raise TypeError(f"Unsupported sampler object of type ({type(indices)})")
        elif num_samples is None:
            indices = list(indices)
        elif isinstance(indices, list):
            indices = indices[:num_samples]
        else:
            indices = [i for i, _ in zip(indices, range(num_samples))]
        for i, item in enumerate(indices):
            if not _is_int(item):
                raise TypeError("SubsetSampler: Type of indices element must be int, "
                                f"but got list[{i}]: {item}, type: {type(item)}.")
        self.indices = indices
        super().__init__(num_samples)

    _shuffled = False

    def _own_plan(self) -> _plans.SamplerPlan:
        return _plans.SubsetPlan(tuple(int(i) for i in self.indices), self.num_samples or 0, self._shuffled)

    def is_shuffled(self):
        return self._shuffled

    def get_num_samples(self):
        num_samples = super().get_num_samples()
        return len(self.indices) if num_samples is None else min(len(self.indices), num_samples)

    def get_shuffle_mode(self):
        return Shuffle.GLOBAL if self._shuffled else Shuffle.FALSE


class SubsetRandomSampler(SubsetSampler):
    """The given row ids in a random order, reshuffled every pass.

    Under ``set_seed(s)``, as in MindSpore, every pass shuffles the previous pass's order again
    with ``mt19937(s)``.

    Args:
        indices (Iterable[int]): Row ids.
        num_samples (int, optional): Keep only the first ``num_samples`` ids (before shuffling).
            Default: None.

    Examples:
        >>> from headrace._util.types import SampleContext
        >>> sorted(SubsetRandomSampler([4, 0, 2]).plan().indices(SampleContext(5, 0, 7)).tolist())
        [0, 2, 4]
    """

    _shuffled = True


class WeightedRandomSampler(_UnshardedSampler):
    """Rows ``0 .. len(weights) - 1`` drawn with probability proportional to their weight.

    Under ``set_seed(s)`` every pass draws the same rows (MindSpore reseeds each pass).

    Args:
        weights (list[float]): One weight per row; need not sum to 1. A single number is one
            weight; a tuple or an array is refused, as in MindSpore.
        num_samples (int, optional): Draws per pass (at most the row count). Default: None (the
            row count).
        replacement (bool, optional): Draw with replacement. Default: True.

    Raises:
        TypeError: If an argument has the wrong type.
        ValueError: If weights is empty, all zero, has a negative or non-finite weight, or (without
            replacement) fewer weights than num_samples.

    Examples:
        >>> from headrace._util.types import SampleContext
        >>> plan = WeightedRandomSampler([0, 0, 1], num_samples=3).plan()
        >>> plan.indices(SampleContext(3, 0, 5)).tolist()
        [2, 2, 2]
    """

    def __init__(self, weights, num_samples=None, replacement=True):
        if not isinstance(weights, list):  # as in MindSpore: a tuple or an array is one (bad) weight
            weights = [weights]
        for ind, w in enumerate(weights):
            if not isinstance(w, numbers.Real) or isinstance(w, bool):
                raise TypeError("type of weights element must be number, "
                                f"but got w[{ind}]: {w}, type: {type(w)}.")
        num_samples = _check_num_samples(num_samples)
        _check_bool(replacement, "replacement")
        if not weights:
            raise EarlyValueError("WeightedRandomSampler: weights vector must not be empty")
        for ind, w in enumerate(weights):
            if w < 0:
                raise EarlyValueError("WeightedRandomSampler: weights vector must not contain negative numbers, "
                                      f"got: weights[{ind}] = {float(w):f}")
            if not np.isfinite(w):
                raise EarlyValueError("WeightedRandomSampler: weights vector must not contain inf or nan, "
                                      f"got: weights[{ind}] = {float(w)}")
        if all(w == 0 for w in weights):
            raise EarlyValueError("WeightedRandomSampler: elements of weights vector must not be all zero")
        if not replacement and num_samples and num_samples > len(weights):
            raise ValueError("Invalid parameter, without replacement, weight size must be greater than or equal "
                             f"to num_samples, but got weight size: {len(weights)}, num_samples: {num_samples}")
        self.weights = weights
        self.replacement = replacement
        super().__init__(num_samples)

    def _own_plan(self) -> _plans.SamplerPlan:
        return _plans.WeightedRandomPlan(tuple(float(w) for w in self.weights), self.num_samples or 0,
                                         self.replacement)

    def is_shuffled(self):
        return True

    def get_shuffle_mode(self):
        return Shuffle.GLOBAL


# --------------------------------------------------------------------------------------------
# From a source's arguments to one sampler
# --------------------------------------------------------------------------------------------
