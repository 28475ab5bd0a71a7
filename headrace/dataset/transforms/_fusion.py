"""Fusing adjacent operations of a map into one (``fuse_ops``).

Each op knows what it fuses with: ``op.fuse_next(next_op, options)`` returns one op doing the work
of both, or None (``TensorOperation.fuse_next`` says None). So ``transforms`` needs no knowledge of
``vision`` and nothing is registered at import time. The fused op must give the same result; where
a fusion trades exactness for speed (reduced-scale JPEG decoding) it says so and can be turned off.
Rules for plain callables (which have no ``fuse_next``) can be added with ``register_fusion``.

Randomness: a fused op draws the same numbers, in the same order, as the ops it replaces. Its
``source_ops`` attribute lists them; the engine should run it under the sample key it would have
given the last random op among them, so keyed generators see the same stream.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from headrace.dataset.transforms._compound import Compose, _Wrapped

Rule = Callable[[Any, Any, dict], Any]
_RULES: list[Rule] = []


def register_fusion(rule: Rule) -> Rule:
    """Adds a pair rule ``rule(first, second, options) -> fused op or None``; returns it.

    Asked after ``first.fuse_next(second, options)`` declines (or ``first`` has no ``fuse_next``).
    """
    if rule not in _RULES:
        _RULES.append(rule)
    return rule


def fuse_ops(ops: Sequence[Any], *, reduced_decode: bool = True) -> list[Any]:
    """Returns an equivalent op list with adjacent pairs fused where a rule applies.

    The vision ops fuse as follows (see their ``fuse_next``):

    * ``[Decode(), RandomResizedCrop(...)]`` -> ``DecodeRandomResizedCrop``: the crop box comes from
      the JPEG header, and with ``reduced_decode`` the JPEG is decoded at 1/2, 1/4 or 1/8 scale
      when the crop shrinks that much (pixels then differ slightly from the unfused result; the
      crop windows do not). Pass ``reduced_decode=False`` for bit-exact output.
    * ``[Normalize(..., is_hwc=True), HWC2CHW()]`` -> one op writing CHW float32 directly (exact).
    * ``[a flip (random or not), Normalize+HWC2CHW]`` -> that op flipping on the way (exact): after
      a pair fuses, the fused op is offered to the op before it.

    A ``Compose`` in the list is first replaced by its operations (its Python functions unwrapped),
    as MindSpore's map runs it: a function's output then reaches the next function as it is (a PIL
    image stays an image), where an eager ``Compose(...)(x)`` converts it to an array.

    Args:
        ops (Sequence): the operations of one map, in order (ops or plain callables).
        reduced_decode (bool, optional): allow reduced-scale JPEG decoding. Default: True.

    Returns:
        list, the operations to run instead (the input list itself is not changed).

    Examples:
        >>> fuse_ops([abs, abs]) == [abs, abs]
        True
    """
    options = {"reduced_decode": reduced_decode}
    out: list[Any] = []
    for op in _expand_compose(ops):
        out.append(op)
        # A fused op may fuse with the op before it in turn: [flip, Normalize, HWC2CHW] becomes
        # [flip, Normalize+HWC2CHW], then one op.
        while len(out) > 1:
            fused = _fuse_pair(out[-2], out[-1], options)
            if fused is None:
                break
            out[-2:] = [fused]
    return out


def _fuse_pair(first: Any, second: Any, options: dict) -> Any:
    """The op's own ``fuse_next``, then the registered rules; None when nothing fuses."""
    fuse_next = getattr(first, "fuse_next", None)
    fused = fuse_next(second, options) if fuse_next is not None else None
    for rule in _RULES:
        if fused is not None:
            break
        fused = rule(first, second, options)
    return fused


def _expand_compose(ops: Sequence[Any]) -> list[Any]:
    """``ops`` with each Compose replaced by its operations, user functions unwrapped."""
    out: list[Any] = []
    for op in ops:
        if isinstance(op, Compose):
            out.extend(o.transform if type(o) is _Wrapped else o for o in op.transforms)
        else:
            out.append(op)
    return out
