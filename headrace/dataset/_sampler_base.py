"""What every MindSpore sampler shares (``BuiltinSampler``: children, num_samples, the plan it gives) and the
argument checks the samplers use."""
from __future__ import annotations
import numbers
from typing import Any
from headrace._engine.samplers import builtin as _plans
from headrace._util import checks
from headrace.dataset._shuffle import Shuffle


__all__ = ["BuiltinSampler"]

_INT64_MAX = checks.INT64_MAX


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_num_samples(num_samples: Any) -> int | None:
    if num_samples is None:
        return None
    if not _is_int(num_samples):
        raise TypeError(f"num_samples must be integer but was: {num_samples}.")
    if num_samples < 0 or num_samples > _INT64_MAX:
        raise ValueError(f"num_samples exceeds the boundary between 0 and {_INT64_MAX}(INT64_MAX)!")
    return int(num_samples)


def _check_int(value: Any, name: str) -> int:
    if not _is_int(value):
        raise TypeError(f"{name} must be integer but was: {value}.")
    return int(value)


def _check_bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a boolean value but was: {value}.")
    return value


class BuiltinSampler:
    """Base of the built-in samplers (not meant to be subclassed by users; see :class:`Sampler`).

    Args:
        num_samples (int, optional): Most rows to yield per pass. Default: None (all).
    """

    def __init__(self, num_samples=None):
        self.child_sampler = None
        self.num_samples = num_samples

    # -- engine side -------------------------------------------------------------------------
    def _own_plan(self) -> _plans.SamplerPlan:
        raise NotImplementedError(f"{type(self).__name__} must implement _own_plan().")

    def plan(self) -> _plans.SamplerPlan:
        """The engine plan of this sampler, its child samplers included."""
        own = self._own_plan()
        if self.child_sampler is None:
            return own
        return _plans.ChainedPlan(own, self.child_sampler.plan())

    def parse(self):
        """Same as :meth:`plan` (MindSpore returns its C++ sampler object here)."""
        return self.plan()

    # -- MindSpore's methods -----------------------------------------------------------------
    def add_child(self, sampler):
        """Makes this sampler sample from ``sampler``'s output instead of the whole source.

        The parent sees as many rows as the child yields and picks positions among them.

        Args:
            sampler (BuiltinSampler): The child sampler, or None.

        Raises:
            RuntimeError: If a child is already set, the child's shuffle mode is
                ``Shuffle.PARTIAL``, or this sampler's mode is not ``Shuffle.FALSE``/``GLOBAL``.

        Examples:
            >>> from headrace.dataset.samplers import RandomSampler, SequentialSampler
            >>> sampler = SequentialSampler(start_index=0, num_samples=3)
            >>> sampler.add_child(RandomSampler(num_samples=4))
            >>> sampler.get_num_samples()
            3
        """
        if sampler is not None and not isinstance(sampler, BuiltinSampler):
            raise TypeError("Input sampler is not an instance of a sampler.")
        if self.child_sampler is not None:
            raise RuntimeError("Cannot add child sampler, this sampler already has a child.")
        if sampler is not None and sampler.get_shuffle_mode() == Shuffle.PARTIAL:
            raise RuntimeError("When multiple samplers are used, ensure that the shuffle of the input sampler "
                               "must not be Shuffle.PARTIAL.")
        mode = self.get_shuffle_mode()
        if mode not in (Shuffle.GLOBAL, Shuffle.FALSE):
            raise RuntimeError("When multiple samplers are used, ensure that the shuffle of the current sampler "
                               f"must be Shuffle.FALSE or Shuffle.GLOBAL, but got: {mode}.")
        self.child_sampler = sampler

    def get_child(self):
        """The child sampler, or None."""
        return self.child_sampler

    def parse_child(self):
        """The child sampler's plan, or None."""
        return None if self.child_sampler is None else self.child_sampler.plan()

    def is_shuffled(self):
        raise NotImplementedError("Sampler must implement is_shuffled.")

    def is_sharded(self):
        raise NotImplementedError("Sampler must implement is_sharded.")

    def get_num_samples(self):
        """``num_samples``, combined with the child's: the smaller of the two, or whichever is set.

        Returns:
            int or None.
        """
        if self.child_sampler is not None:
            child_samples = self.child_sampler.get_num_samples()
            if self.num_samples is not None:
                return self.num_samples if child_samples is None else min(self.num_samples, child_samples)
            return child_samples
        return self.num_samples

    def get_shuffle_mode(self):
        """The sampler's shuffle mode (``Shuffle.FALSE`` unless it shuffles)."""
        return Shuffle.FALSE

    def _child_is(self, attr: str, default: bool) -> bool:
        return default if self.child_sampler is None else getattr(self.child_sampler, attr)()

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if k != "child_sampler")
        return f"{type(self).__name__}({fields})"
