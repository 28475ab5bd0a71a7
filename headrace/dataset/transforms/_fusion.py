"""Fusing adjacent operations of a map into one (``fuse_ops``), through a registry of pair rules.

``transforms`` cannot import ``vision``, so the vision package registers its rules here when it is
imported (a list holding vision ops means vision is loaded). A rule looks at two adjacent ops and
returns one op doing the work of both, or None. The fused op must give the same result; where a
rule trades exactness for speed (reduced-scale JPEG decoding) it says so and can be turned off.

Randomness: a fused op draws the same numbers, in the same order, as the ops it replaces. Its
``source_ops`` attribute lists them; the engine should run it under the sample key it would have
given the last random op among them, so keyed generators see the same stream.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

Rule = Callable[[Any, Any, dict], Any]
_RULES: list[Rule] = []


def register_fusion(rule: Rule) -> Rule:
    """Adds a pair rule ``rule(first, second, options) -> fused op or None``; returns it."""
    if rule not in _RULES:
        _RULES.append(rule)
    return rule


def fuse_ops(ops: Sequence[Any], *, reduced_decode: bool = True) -> list[Any]:
    """Returns an equivalent op list with adjacent pairs fused where a rule applies.

    Rules registered by ``headrace.dataset.vision``:

    * ``[Decode(), RandomResizedCrop(...)]`` -> ``DecodeRandomResizedCrop``: the crop box comes from
      the JPEG header, and with ``reduced_decode`` the JPEG is decoded at 1/2, 1/4 or 1/8 scale
      when the crop shrinks that much (pixels then differ slightly from the unfused result; the
      crop windows do not). Pass ``reduced_decode=False`` for bit-exact output.
    * ``[Normalize(..., is_hwc=True), HWC2CHW()]`` -> one op writing CHW float32 directly (exact).

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
        if out:
            for rule in _RULES:
                fused = rule(out[-1], op, options)
                if fused is not None:
                    out[-1] = fused
                    break
            else:
                out.append(op)
        else:
            out.append(op)
    return out


def _expand_compose(ops: Sequence[Any]) -> list[Any]:
    """``ops`` with each Compose replaced by its operations, user functions unwrapped."""
    from headrace.dataset.transforms.transforms import Compose, _Wrapped  # noqa: PLC0415 - cycle
    out: list[Any] = []
    for op in ops:
        if isinstance(op, Compose):
            out.extend(o.transform if type(o) is _Wrapped else o for o in op.transforms)
        else:
            out.append(op)
    return out
