"""Checkpoint states: what a state holds, the fingerprint that ties it to its pipeline, and the
checks a state passes before a run uses any of it.

A state (version 2) is ``{"version", "fingerprint", "seed", "seed_globals", "epoch", "step", "ops"}``
(``seed_globals``: whether user functions got ``np.random`` / ``random`` seeded per sample, which a
restored run keeps, as it keeps the seed). ``ops`` holds one entry for every op of the plan that
keeps a pass state (the buffer shuffles), keyed by its path in the plan (``stateful_paths``:
``"Batch/Shuffle"``, ``"Zip[1]/Shuffle"``), present at every step with the same keys: the state has
the same shape from the first step to the last. A version-1 state (entries keyed by the order in
which the ops were built, an entry only once its pass had started) is read by ``upgrade_v1``.
The fingerprint is a
hash of the plan's *structure*: the kind of every node, its columns and the parameters that decide
which rows come out where (source kind and length, sampler and its parameters, batch sizes and
``drop_remainder``, shuffle buffers and seeds, repeat/take/skip counts, column selections, pad
settings). Functions are not part of it (editing a map function does not move rows; renaming one
must not make a checkpoint unusable), nor worker counts or modes (they never change the output).
Object ids are never part of it, so a state saved by one process restores in another.

``check_state`` validates every field (type, range, and agreement with the pipeline) before the
run touches anything, so a corrupted or foreign state is refused with an error that names the field
and the values it accepts, instead of spinning on an absurd counter or failing half-restored.
"""
from __future__ import annotations

import dataclasses
import hashlib
import weakref
from typing import Any

import numpy as np

from headrace._engine import plan as P
from headrace._engine.ops.repeat import FOREVER_STRIDE

STATE_VERSION = 2
STATE_KEYS = ("version", "fingerprint", "seed", "seed_globals", "epoch", "step", "ops")
MAX_SEED = 2**32 - 1
# An iterator made with num_epochs=-1 restores epochs up to this: restoring epoch e replays what
# cannot be jumped (a sampler's chained shuffles, a buffer shuffle's stream) e times, so a corrupted
# epoch of 10**9 would otherwise spin for hours. Pass num_epochs to restore a later epoch.
MAX_OPEN_EPOCH = 2**20
MAX_COUNT = 2**53  # counters are exact in JSON (a double) up to here

_FINGERPRINTS: "weakref.WeakKeyDictionary[P.Node, str]" = weakref.WeakKeyDictionary()
_SKIP_FIELDS = {"children", "fn", "predicate", "num_workers", "processes", "labels", "source", "hooks"}


def fingerprint(plan: P.Node) -> str:
    """16 hex digits identifying the structure of ``plan`` (cached per plan node)."""
    fp = _FINGERPRINTS.get(plan)
    if fp is None:
        text = repr(_describe(plan)).encode()
        fp = _FINGERPRINTS[plan] = hashlib.blake2b(text, digest_size=8).hexdigest()
    return fp


def _describe(node: P.Node) -> tuple:
    kind = type(node)
    parts: list[Any] = [kind.__name__]
    for f in dataclasses.fields(node):
        if f.name in _SKIP_FIELDS or (kind is P.MapNode and f.name == "name"):
            continue
        value = getattr(node, f.name)
        if f.name in ("per_batch_map", "length_fn"):
            value = value is not None  # that there is one changes the rows' layout; which one does not
        parts.append((f.name, _canon(value)))
    if kind in (P.RandomAccessNode, P.StreamNode):
        src = node.source  # type: ignore[attr-defined]  # both kinds hold one
        parts.append(("source", _type_name(src)))
        if kind is P.RandomAccessNode:
            try:
                rows: Any = len(src)
            except Exception:  # noqa: BLE001 - get_state must not fail on a source that cannot tell
                rows = None
            parts.append(("rows", rows))
    parts.append(tuple(_describe(c) for c in node.children))
    return tuple(parts)


def _type_name(value: Any) -> str:
    return type(value).__qualname__  # not the module: moving a class must not orphan checkpoints


def _canon(v: Any) -> Any:
    """A plain, process-independent rendering of a parameter value."""
    if v is None or isinstance(v, (bool, int, float, str, bytes)):
        return v
    if isinstance(v, np.generic):
        return (str(v.dtype), v.item())
    if isinstance(v, np.ndarray):
        return ("ndarray", str(v.dtype), v.shape, hashlib.blake2b(np.ascontiguousarray(v).tobytes(),
                                                                   digest_size=8).hexdigest())
    if isinstance(v, (list, tuple)):
        return tuple(_canon(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted(((repr(_canon(k)), _canon(x)) for k, x in v.items())))
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return (_type_name(v),) + tuple((f.name, _canon(getattr(v, f.name))) for f in dataclasses.fields(v))
    if callable(v):
        return "<callable>"
    parent, child = getattr(v, "parent", None), getattr(v, "child", None)
    if parent is not None and child is not None:  # a chained sampler plan
        return (_type_name(v), _canon(parent), _canon(child))
    inner = getattr(v, "_pristine", None)  # a user sampler plan: the sampler's class
    return (_type_name(v), _type_name(inner)) if inner is not None else _type_name(v)


def pass_factor(plan: P.Node) -> int:
    """An upper bound on how many passes of an op one epoch of ``plan`` starts (repeats multiply)."""
    f = 1
    if isinstance(plan, P.RepeatNode):
        f = plan.count if plan.count is not None else FOREVER_STRIDE
    return f * max([pass_factor(c) for c in plan.children], default=1)


# ---- paths ----------------------------------------------------------------------------------

def _segment(node: P.Node) -> str:
    name = type(node).__name__
    return name[:-4] if name.endswith("Node") else name


def stateful_paths(plan: P.Node) -> list[tuple[str, P.Node]]:
    """``(path, node)`` for every occurrence of a node whose op keeps a pass state, children before
    parents and left to right (the order the ops are built in). A path names the nodes from the
    root, with the child index where a node has several: ``"Batch/Shuffle"``, ``"Zip[1]/Shuffle"``."""
    out: list[tuple[str, P.Node]] = []

    def walk(node: P.Node, prefix: str) -> None:
        here = prefix + _segment(node)
        many = len(node.children) > 1
        for i, child in enumerate(node.children):
            walk(child, f"{here}[{i}]/" if many else f"{here}/")
        if isinstance(node, P.ShuffleNode):
            out.append((here, node))

    walk(plan, "")
    return out


def ops_by_path(plan: P.Node, ops: list[Any]) -> dict[str, Any]:
    """The ops that keep a pass state, by plan path. Ops are matched to the occurrences of their
    plan node in build order; ops whose node is not in ``plan`` (pipelines a flat_map builds per row)
    have no path and are not part of a checkpoint."""
    paths: dict[int, list[str]] = {}
    for path, node in stateful_paths(plan):
        paths.setdefault(id(node), []).append(path)
    out = {}
    for op in sorted((o for o in ops if o.keeps_pass_state), key=lambda o: o.op_id):
        free = paths.get(id(op.plan_node))
        if free:
            out[free.pop(0)] = op
    return out


def upgrade_v1(state: dict, ops: list[Any], by_path: dict[str, Any]) -> dict:
    """A version-1 state as version 2: entries move from op ids (build order, which the same plan
    reproduces) to plan paths; ops without an entry (their first pass had not started) get the
    entry of an op that has not started. Raises ValueError for an op id this pipeline lacks."""
    path_of_op = {id(op): path for path, op in by_path.items()}
    by_id = {str(op.op_id): op for op in ops}
    entries = state.get("ops")
    if not isinstance(entries, dict):
        return dict(state, version=STATE_VERSION)  # check_state reports the field
    moved: dict[str, Any] = {}
    for key, entry in entries.items():
        op = by_id.get(key) if type(key) is str else None
        if op is None or id(op) not in path_of_op:
            raise ValueError(f"set_state: the version-1 state['ops'] names op {key!r:.40}, which is not an op of "
                             "this pipeline that keeps a state: the state comes from a different pipeline.")
        moved[path_of_op[id(op)]] = dict(entry, next=entry.get("next")) if isinstance(entry, dict) else entry
    for path, op in by_path.items():
        moved.setdefault(path, op.pass_state())
    return dict(state, version=STATE_VERSION, ops=moved)


# ---- validation -----------------------------------------------------------------------------

def path_of(*keys: Any) -> str:
    return "state" + "".join(f"[{k!r}]" for k in keys)


def check_int(value: Any, path: str, lo: int, hi: int, what: str = "") -> int:
    """``value`` as an int in [lo, hi]; TypeError / ValueError naming ``path`` otherwise."""
    accepted = f"an int in [{lo}, {hi}]{what}"
    if type(value) is not int:
        raise TypeError(f"set_state: {path} must be {accepted}, but got {value!r:.80} "
                        f"of type {type(value).__name__}.")
    if not lo <= value <= hi:
        raise ValueError(f"set_state: {path} must be {accepted}, but got {value}.")
    return value


def check_dict(value: Any, path: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict:
    """``value`` as a dict with exactly the ``required`` keys (plus any of ``optional``)."""
    accepted = ", ".join(repr(k) for k in required + optional)
    if not isinstance(value, dict):
        raise TypeError(f"set_state: {path} must be a dict with keys {accepted}, but got {value!r:.80} "
                        f"of type {type(value).__name__}.")
    for k in required:
        if k not in value:
            raise ValueError(f"set_state: {path} has no key {k!r}; it must have the keys {accepted}.")
    for k in value:
        if k not in required and k not in optional:
            raise ValueError(f"set_state: {path} has an unknown key {k!r:.40}; the accepted keys are {accepted}.")
    return value


def check_state(state: Any, fp: str, num_epochs: int, ops: dict[str, Any], plan: P.Node,
                seed_setting: str = "the seed") -> dict:
    """Validates ``state`` against the pipeline (fingerprint ``fp``, ``num_epochs``, ``ops``: the
    ops that keep a pass state, by plan path); returns the values to restore. Raises before anything
    is used. ``seed_setting`` names, for messages, how the user sets the seed (the engine does not
    know the public API's words)."""
    if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
        raise ValueError(f"set_state: state must be a dict from get_state() with version {STATE_VERSION} "
                         f"(or 1), but got {state!r:.200}.")
    if "fingerprint" not in state:
        raise ValueError("set_state: the state has no 'fingerprint': it was saved by an older headrace "
                         "that did not record the pipeline's structure, so it cannot be checked against "
                         "this pipeline and is refused. Save a new state with get_state().")
    check_dict(state, "state", STATE_KEYS)
    got = state["fingerprint"]
    if type(got) is not str:
        raise TypeError(f"set_state: state['fingerprint'] must be a str from get_state(), but got {got!r:.80}.")
    if got != fp:
        raise ValueError(f"set_state: the state comes from a different pipeline: its fingerprint is {got!r:.40}, "
                         f"this pipeline's is {fp!r}. A state restores only into a pipeline of the same "
                         "structure (the same ops, sources and their sizes, samplers, batch sizes, "
                         f"drop_remainder, shuffle buffers and seeds ({seed_setting} when the pipeline was "
                         "made), repeat/take/skip counts and columns).")
    seed = check_int(state["seed"], "state['seed']", 0, MAX_SEED)
    seed_globals = state["seed_globals"]
    if type(seed_globals) is not bool:
        raise TypeError(f"set_state: state['seed_globals'] must be True or False, but got {seed_globals!r:.80}.")
    if num_epochs == -1:
        epoch = check_int(state["epoch"], "state['epoch']", 0, MAX_OPEN_EPOCH,
                          " (an iterator with num_epochs=-1; give num_epochs to restore a later epoch)")
    else:
        epoch = check_int(state["epoch"], "state['epoch']", 0, num_epochs, " (the iterator's num_epochs)")
    step = check_int(state["step"], "state['step']", 0, MAX_COUNT)
    entries = state["ops"]
    if not isinstance(entries, dict):
        raise TypeError(f"set_state: state['ops'] must be a dict from plan path to that op's state, but got "
                        f"{entries!r:.80} of type {type(entries).__name__}.")
    max_pass = (epoch + 1) * pass_factor(plan)
    for key in entries:
        if key not in ops:
            raise ValueError(f"set_state: state['ops'] names op {key!r:.40}, but this pipeline's ops that keep "
                             f"a state are {list(ops)}: the state comes from a different pipeline.")
    for key, op in ops.items():
        if key not in entries:
            raise ValueError(f"set_state: state['ops'] has no entry for the op at {key!r}; a state holds one for "
                             f"each of {list(ops)}.")
        op.check_pass_state(entries[key], path_of("ops", key), seed, max_pass)
    return {"seed": seed, "seed_globals": seed_globals, "epoch": epoch, "step": step, "ops": entries}
