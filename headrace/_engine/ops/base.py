"""The contract every operation's iterator follows.

An ``OpIter`` produces the rows of one *pass* over its input. The owner calls ``reset(p)`` to
start pass ``p`` (pass numbers are explicit, so a pass's rows are a pure function of ``p`` and
the seed), then ``next()`` until ``StopIteration``. ``skip(n)`` moves past ``n`` rows as cheaply
as the op allows (a random-access source just advances a counter) and returns how many it
skipped: this is how a checkpoint is restored (``reset(epoch)`` + ``skip(step)``), so the output
after a restore is exactly the rest of the uninterrupted run.

Ops whose next pass depends on more than the pass number (the buffer shuffle's random stream)
report that through ``pass_state()`` / ``restore_pass_state()``: small JSON-able dicts that a
checkpoint keys by the op's path in the plan (``state.stateful_paths``), found through
``plan_node``.

The index-domain ops (a source read by index, map, filter, batch) are no ``OpIter``: each is a
:class:`Step`, a record of the op (id, name, plan node, per-pass plan) holding the picklable
function a task calls (``spec``: ``ReadFn``, ``MapFn``, ``FilterFn``, ``BatchFn``). Only a stage
(``exec/stage.py``) runs them, serially, on threads or in worker processes.
"""
from __future__ import annotations

import weakref
from typing import Any, Iterator

from headrace._util.types import Row


class BuildContext:
    """What building an iterator tree hands every op: the seed, the options, fresh op ids, and
    whether user functions get ``np.random`` / ``random`` seeded per sample (``seed_globals``:
    runs with a seed set by the user).

    Every op holds its context, so the context refers to the ops weakly (``ops`` lists those
    alive, in build order): a tree dropped by its owner is freed at once, with its source and
    rows, not left in a reference cycle for the garbage collector.
    """

    def __init__(self, seed: int, options: Any, seed_globals: bool = False) -> None:
        self.seed = seed
        self.options = options
        self.seed_globals = seed_globals
        self._next_id = 0
        self._ops: list[weakref.ref] = []

    def register(self, op: object) -> int:
        self._next_id += 1
        self._ops.append(weakref.ref(op))
        return self._next_id

    @property
    def ops(self) -> list[Any]:
        """The op iterators and stage steps alive, in build order."""
        return [op for op in (r() for r in self._ops) if op is not None]


class Step:
    """One index-domain op of a stage: its op id (taken in build order, as an ``OpIter`` takes
    one: every op keys its randomness with it), name, plan node and ``spec``, the picklable
    function a stage's task calls. Not an iterator: ``exec/stage.py`` runs it. ``reset(p)``
    readies what the op plans per pass (a source's indices, a batch's numbering)."""

    keeps_pass_state = False  # a step's position is the stage's counter
    plan_node: Any = None
    name = "Op"
    spec: Any

    def __init__(self, ctx: BuildContext, node: Any) -> None:
        self.ctx = ctx
        self.node = node
        self.op_id = ctx.register(self)
        self.pass_index = -1

    def reset(self, pass_index: int) -> None:
        self.pass_index = pass_index

    def __str__(self) -> str:
        return self.name


class OpIter:
    """Base of all op iterators. Subclasses implement ``_reset``, ``__next__`` and may override
    ``skip``, ``pass_state`` and ``restore_pass_state``."""

    name = "Op"
    keeps_pass_state = False  # True for ops whose pass_state() can be other than None
    plan_node: Any = None     # the plan node an op that keeps a pass state runs

    def __init__(self, ctx: BuildContext, parents: tuple["OpIter", ...] = ()) -> None:
        self.ctx = ctx
        self.parents = parents
        self.op_id = ctx.register(self)
        self.pass_index = -1
        self._closed = False

    @property
    def parent(self) -> "OpIter":
        return self.parents[0]

    def reset(self, pass_index: int) -> None:
        self.pass_index = pass_index
        self._reset(pass_index)

    def _reset(self, pass_index: int) -> None:
        for p in self.parents:
            p.reset(pass_index)

    def __iter__(self) -> Iterator[Row]:
        return self

    def __next__(self) -> Row:
        raise NotImplementedError

    def skip(self, n: int) -> int:
        """Moves past up to ``n`` rows of this pass; returns how many were skipped."""
        done = 0
        while done < n:
            try:
                self.__next__()
            except StopIteration:
                break
            done += 1
        return done

    def pass_state(self) -> dict | None:
        return None

    def restore_pass_state(self, state: dict) -> None:
        pass

    def check_pass_state(self, state: Any, path: str, seed: int, max_pass: int) -> None:
        """Raises TypeError / ValueError naming ``path`` unless ``state`` is one this op can restore
        (``seed``: the run's seed; ``max_pass``: the highest pass number the state's epoch allows)."""
        raise ValueError(f"set_state: {path}: op {self.op_id} ({self.name}) keeps no state.")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for p in self.parents:
            p.close()

    def __str__(self) -> str:
        return self.name
